/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "alloc-util.h"
#include "conffile.h"
#include "ctl.h"
#include "json-writer.h"
#include "shell-quote.h"
#include "strv.h"

/* fsgatectl initramfs: does the initramfs of this kernel deny what the system denies? It is
 * unpacked (by the generator's own tool, read-only for the image) into a private directory
 * and judged by fsgate's own model, as an image with --root is: the modules it holds, the
 * modprobe.d files it copied. Only modules it holds can be loaded before the real root is
 * mounted, so only those can disagree. Nothing is regenerated: the command that would is
 * printed. */

#define UNPACK_TIMEOUT_SEC 120
/* An image is the system's or an image's (--root): what it unpacks to is bounded, as its
 * time is. A Debian initramfs unpacks to some 100 MB. */
#define UNPACK_MAX_BYTES (UINT64_C(1) << 30)

typedef enum Generator {
        GEN_NONE,
        GEN_INITRAMFS_TOOLS,
        GEN_DRACUT,
} Generator;

typedef CtlInitramfsDisagreement Disagreement;

struct CtlInitramfs {
        Generator generator;
        char *image;
        char *command;                 /* what would make it again: printed, never run (shell-quoted) */
        FsgContext *context, *inside_context;
        FsgState *here, *inside;        /* inside: NULL when it holds no module tree for this kernel */
        Disagreement *d;
        size_t n;
};

static bool exists_in(const FsgContext *c, const char *abs) {
        char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s%s", c->root, abs);
        return access(path, F_OK) == 0;
}

static Generator detect_generator(const FsgContext *c) {
        if (exists_in(c, "/usr/sbin/update-initramfs") || exists_in(c, "/sbin/update-initramfs"))
                return GEN_INITRAMFS_TOOLS;
        if (exists_in(c, "/usr/bin/dracut") || exists_in(c, "/usr/sbin/dracut"))
                return GEN_DRACUT;
        return GEN_NONE;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st;
        (void) ftw;
        (void) (flag == FTW_DP ? rmdir(path) : unlink(path));
        return 0;
}

static void remove_tree(char **dir) {
        if (*dir) {
                (void) nftw(*dir, remove_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
                free(*dir);
        }
}

static uint64_t tree_bytes;
/* A signal that ends fsgatectl while it unpacks (Cockpit closes its channel: SIGTERM) must not
 * leave the unpacked tree behind: it is noted, the unpack ended and the tree removed, and
 * then the signal does what it would have done. */
static volatile sig_atomic_t ending_signal;

static void note_signal(int sig) {
        ending_signal = sig;
}

static int add_size(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) path;
        (void) flag;
        (void) ftw;
        tree_bytes += (uint64_t) st->st_blocks * 512;
        return 0;
}

/* UNPACK_MAX_BYTES, or the lower FSGATE_INITRAMFS_UNPACK_MAX (docs/ENVIRONMENT.md). */
static uint64_t unpack_max(void) {
        const char *v = secure_getenv("FSGATE_INITRAMFS_UNPACK_MAX");
        char *end;
        unsigned long long n;

        if (!v || !*v)
                return UNPACK_MAX_BYTES;
        errno = 0;
        n = strtoull(v, &end, 10);
        return errno || *end || n == 0 || n > UNPACK_MAX_BYTES ? UNPACK_MAX_BYTES : (uint64_t) n;
}

/* What the tree at dir takes on disk now. */
static uint64_t disk_usage(const char *dir) {
        tree_bytes = 0;
        (void) nftw(dir, add_size, 16, FTW_PHYS | FTW_MOUNT);
        return tree_bytes;
}

/* argv in cwd with its output to /dev/null, at most UNPACK_TIMEOUT_SEC and UNPACK_MAX_BYTES
 * in cwd: 0, or a negative errno (-ETIMEDOUT, -EFBIG, -ENOEXEC for a non-zero exit). The
 * tools are scripts: the whole process group they start is ended, not only the script. */
static int run_quietly(const char *cwd, char * const argv[]) {
        struct timespec pause = { 0, 50 * 1000 * 1000 };
        int status, r = 0;
        uint64_t max = unpack_max();
        pid_t pid = fork();

        if (pid < 0)
                return -errno;
        if (pid == 0) {
                (void) setpgid(0, 0);
                int null = open("/dev/null", O_RDWR | O_CLOEXEC);
                if (null >= 0) {
                        (void) dup2(null, STDIN_FILENO);
                        (void) dup2(null, STDOUT_FILENO);
                        (void) dup2(null, STDERR_FILENO);
                }
                if (chdir(cwd) < 0)
                        _exit(127);
                execv(argv[0], argv);
                _exit(127);
        }
        (void) setpgid(pid, pid);      /* either side may come first */
        for (unsigned waited = 0;; waited++) {
                siginfo_t si = {};

                /* Not reaped yet (WNOWAIT): while it is a zombie, its pid, the group's id,
                 * cannot be anyone else's. */
                if (waitid(P_PID, (id_t) pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0 && errno != EINTR)
                        return -errno;
                if (si.si_pid == pid)
                        break;
                if (ending_signal)
                        r = -EINTR;
                else if (waited >= UNPACK_TIMEOUT_SEC * 20)
                        r = -ETIMEDOUT;
                else if (waited % 5 == 4 && disk_usage(cwd) > max)
                        r = -EFBIG;
                if (r < 0)
                        break;
                (void) nanosleep(&pause, NULL);
        }
        /* The tool's children too (a decompressor writing on after its script ended). */
        (void) kill(-pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        if (r < 0)
                return r;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -ENOEXEC;
}

/* The image and the tool that unpacks it, for this generator: 0, or an error in e. */
static int find_image(const FsgContext *c, Generator g, char **ret_image, char **ret_tool, FsgError *e) {
        /* Fedora's name, then openSUSE's. */
        static const char * const dracut_names[][2] = { { "/boot/initramfs-", ".img" }, { "/boot/initrd-", "" } };
        char path[PATH_MAX];

        if (g == GEN_INITRAMFS_TOOLS) {
                snprintf(path, sizeof(path), "%s/boot/initrd.img-%s", c->root, c->kver);
                *ret_tool = strdup("/usr/bin/unmkinitramfs");
        } else {
                path[0] = 0;
                for (size_t i = 0; i < ELEMENTSOF(dracut_names) && (!*path || access(path, F_OK) < 0); i++)
                        snprintf(path, sizeof(path), "%s%s%s%s", c->root, dracut_names[i][0], c->kver,
                                 dracut_names[i][1]);
                *ret_tool = strdup("/usr/bin/lsinitrd");
        }
        *ret_image = strdup(path);
        if (!*ret_image || !*ret_tool)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        if (access(*ret_image, R_OK) < 0)
                return fsg_error_errno(e, errno, _("Cannot read the initramfs %s"), *ret_image);
        if (access(*ret_tool, X_OK) < 0)
                return fsg_error(e, FSG_ERR_FAILED, _("%s is needed to look into the initramfs and is not installed"),
                                 *ret_tool);
        return 0;
}

/* Unpacked into a new directory; its root (initramfs-tools puts an early microcode archive
 * beside the main one: then "main") in *ret_root. */
static int unpack(Generator g, const char *tool, const char *image, char **ret_dir, char **ret_root, FsgError *e) {
        char tmpl[] = "/tmp/fsgate-initramfs.XXXXXX", path[PATH_MAX];
        int r;

        if (!mkdtemp(tmpl))
                return fsg_error_errno(e, errno, "Failed to make a temporary directory");
        *ret_dir = strdup(tmpl);
        if (!*ret_dir)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        /* dracut's lsinitrd unpacks into the working directory; unmkinitramfs into tmpl,
         * which is also where the size is watched. */
        if (g == GEN_INITRAMFS_TOOLS)
                r = run_quietly(tmpl, (char * const[]) { (char *) tool, (char *) image, tmpl, NULL });
        else
                r = run_quietly(tmpl, (char * const[]) { (char *) tool, (char *) "--unpack", (char *) image, NULL });
        if (r < 0)
                return fsg_error(e, FSG_ERR_FAILED, _("%s could not unpack %s (%s)"), tool, image,
                                 r == -ETIMEDOUT ? _("it took too long") :
                                 r == -EFBIG ? _("it unpacks to too much") : strerror(-r));
        snprintf(path, sizeof(path), "%s/main", tmpl);
        *ret_root = strdup(access(path, F_OK) == 0 ? path : tmpl);
        return *ret_root ? 0 : fsg_error(e, FSG_ERR_FAILED, "Out of memory");
}

static bool allowed_by_mask(const FsgContext *c, const FsgEntry *x) {
        char path[PATH_MAX];

        if (x->denied || !*x->deciding_file)
                return false;
        snprintf(path, sizeof(path), "%s%s", c->root, x->deciding_file);
        return fsg_file_classify(path, x->module) == FSG_FILE_MASK;
}

static size_t compare(const FsgContext *c, const FsgState *here, const FsgState *inside, Disagreement *out,
                      size_t max) {
        size_t n = 0;

        for (size_t i = 0; i < inside->n && n < max; i++) {
                const FsgEntry *y = &inside->entries[i], *x;

                /* Only what the initramfs holds can be loaded from it. */
                if (!y->available || y->builtin || !(x = fsg_state_find_module(here, y->module)) || x->builtin)
                        continue;
                if (x->denied != y->denied)
                        out[n++] = (Disagreement) { .here = x, .inside = y, .mask = allowed_by_mask(c, x) };
        }
        return n;
}

/* For an image (--root), run inside it: the bare command would make the host's. Each word
 * quoted for the shell it is pasted into: the root is any path, and the release, though
 * checked (fsg_kernel_release_is_valid()), is the image's. NULL: out of memory. */
static char *fix_command(Generator g, const FsgContext *c) {
        const char *tools[] = { "update-initramfs", "-u", "-k", c->kver, NULL };
        const char *dracut[] = { "dracut", "-f", "--kver", c->kver, NULL };
        const char **cmd = g == GEN_INITRAMFS_TOOLS ? tools : dracut;
        const char *words[8] = { "chroot", c->root };
        size_t n = *c->root ? 2 : 0;

        for (const char **w = cmd; *w; w++)
                words[n++] = *w;
        words[n] = NULL;
        return fsg_shell_join(words);
}

/* Only initramfs-tools is known to leave a /dev/null mask out (its copy_file). */
static bool mask_not_copied(Generator g, const Disagreement *d) {
        return d->mask && g == GEN_INITRAMFS_TOOLS;
}

/* How many of the disagreements making the initramfs again would end: not an allow by a mask,
 * which initramfs-tools never copies. Only those make the answer a failure and print the
 * command; the others are information. */
static size_t regenerable(Generator g, const Disagreement *d, size_t n) {
        size_t k = 0;

        for (size_t i = 0; i < n; i++)
                k += !mask_not_copied(g, &d[i]);
        return k;
}

static void json_disagreement(JsonWriter *w, Generator g, const Disagreement *d) {
        json_object_begin(w);
        json_field_string(w, "module", d->here->module);
        json_field_string(w, "state", fsg_entry_state_string(d->here));
        json_field_string(w, "deciding_file", d->here->deciding_file);
        json_field_string(w, "state_inside", fsg_entry_state_string(d->inside));
        json_field_string(w, "deciding_file_inside", d->inside->deciding_file);
        json_field_bool(w, "mask_not_copied", mask_not_copied(g, d));
        json_object_end(w);
}

void ctl_initramfs_print_disagreement(const CtlInitramfsDisagreement *d) {
        /* TRANSLATORS: %1$s a module, %2$s/%4$s "allowed" or "denied", %3$s/%5$s files. */
        printf(_("  %1$s: %2$s here (%3$s), %4$s in the initramfs (%5$s)\n"), d->here->module, ctl_state_word(d->here),
               ctl_esc(*d->here->deciding_file ? d->here->deciding_file : "default"), ctl_state_word(d->inside),
               ctl_esc(*d->inside->deciding_file ? d->inside->deciding_file : "default"));
}

static void print_json(Generator g, const char *image, const Disagreement *d, size_t n, const char *command) {
        JsonWriter w = JSON_WRITER(stdout);

        json_object_begin(&w);
        json_field_string(&w, "generator", g == GEN_INITRAMFS_TOOLS ? "initramfs-tools" : g == GEN_DRACUT ? "dracut" : "");
        json_field_string(&w, "image", image);
        json_field_bool(&w, "agrees", n == 0);
        json_key(&w, "disagreements");
        json_array_begin(&w);
        for (size_t i = 0; i < n; i++)
                json_disagreement(&w, g, &d[i]);
        json_array_end(&w);
        json_field_bool(&w, "regenerating_helps", regenerable(g, d, n) > 0);
        json_field_string(&w, "command", regenerable(g, d, n) > 0 ? command : "");
        json_object_end(&w);
        putchar('\n');
}

static void print_text(Generator g, const char *image, const Disagreement *d, size_t n, const char *command) {
        bool masks = false;

        /* TRANSLATORS: %1$s a file, %2$s initramfs-tools or dracut. */
        printf(_("Initramfs: %1$s (%2$s)\n"), ctl_esc(image), g == GEN_INITRAMFS_TOOLS ? "initramfs-tools" : "dracut");
        if (n == 0) {
                puts(_("It agrees: every filesystem module it holds is denied or allowed there as here."));
                return;
        }
        for (size_t i = 0; i < n; i++) {
                ctl_initramfs_print_disagreement(&d[i]);
                masks = masks || mask_not_copied(g, &d[i]);
        }
        if (masks)
                puts(_("An allow by a /dev/null mask never reaches it: initramfs-tools copies only regular files "
                       "of modprobe.d, so the deny the mask hides stays in the initramfs. Regenerating does not change "
                       "that; the module autoloads once the real root is mounted."));
        if (regenerable(g, d, n) > 0)
                /* TRANSLATORS: %s is a command (update-initramfs -u -k KVER). */
                printf(_("To make it again from the configuration as it is now: %s\n"), ctl_esc(command));
}

void ctl_initramfs_freep(CtlInitramfs **k) {
        ctl_initramfs_free(*k);
}

CtlInitramfs *ctl_initramfs_free(CtlInitramfs *k) {
        if (!k)
                return NULL;
        free_many(k->image, k->command, k->d);
        fsg_state_unref(k->here);
        fsg_state_unref(k->inside);
        fsg_context_free(k->context);
        fsg_context_free(k->inside_context);
        free(k);
        return NULL;
}

static const int ending_signals[] = { SIGTERM, SIGINT, SIGHUP, SIGPIPE };

static void catch_ending_signals(struct sigaction old[static ELEMENTSOF(ending_signals)]) {
        struct sigaction sa = { .sa_handler = note_signal };

        ending_signal = 0;
        sigemptyset(&sa.sa_mask);
        for (size_t i = 0; i < ELEMENTSOF(ending_signals); i++)
                (void) sigaction(ending_signals[i], &sa, &old[i]);
}

/* After the tree is gone: the handlers as they were, and a noted signal delivered again. */
static void restore_ending_signals(const struct sigaction old[static ELEMENTSOF(ending_signals)]) {
        for (size_t i = 0; i < ELEMENTSOF(ending_signals); i++)
                (void) sigaction(ending_signals[i], &old[i], NULL);
        if (ending_signal)
                (void) raise(ending_signal);
}

static int check(const CtlOptions *o, CtlInitramfs **ret, FsgError *e);

int ctl_initramfs_check(const CtlOptions *o, CtlInitramfs **ret, FsgError *e) {
        struct sigaction old[ELEMENTSOF(ending_signals)];
        int r;

        catch_ending_signals(old);
        r = check(o, ret, e);
        restore_ending_signals(old);
        return r;
}

static int check(const CtlOptions *o, CtlInitramfs **ret, FsgError *e) {
        _cleanup_(ctl_initramfs_freep) CtlInitramfs *k = NULL;
        _cleanup_(remove_tree) char *dir = NULL;
        _cleanup_free_ char *tool = NULL, *inside_root = NULL;
        FsgError inside_error = {};
        int r;

        *ret = NULL;
        k = calloc(1, sizeof(*k));
        if (!k)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        r = fsg_context_new(o->root, o->kernel_release, &k->context, e);
        if (r < 0)
                return r;
        if (!k->context->kver)
                return fsg_error(e, FSG_ERR_NO_KERNEL, "%s", _("No kernel module tree: no initramfs to compare with"));
        k->generator = detect_generator(k->context);
        if (k->generator == GEN_NONE)
                return 0;
        if ((r = find_image(k->context, k->generator, &k->image, &tool, e)) < 0 ||
            (r = unpack(k->generator, tool, k->image, &dir, &inside_root, e)) < 0 ||
            (r = fsg_state_build(k->context, NULL, &k->here, e)) < 0)
                return r;
        /* What the initramfs holds is judged as an image is. One without a module tree for
         * this kernel (or without /etc and /usr at all) holds no module to load. */
        if (fsg_context_new(inside_root, k->context->kver, &k->inside_context, &inside_error) < 0 ||
            fsg_state_build(k->inside_context, NULL, &k->inside, &inside_error) < 0) {
                if (inside_error.code != FSG_ERR_NO_KERNEL && inside_error.code != FSG_ERR_INVALID_ARGS) {
                        *e = inside_error;
                        return -EINVAL;
                }
                k->inside = fsg_state_unref(k->inside);
        }
        k->d = calloc(k->inside ? k->inside->n + 1 : 1, sizeof(Disagreement));
        if (!k->d)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        k->n = k->inside ? compare(k->context, k->here, k->inside, k->d, k->inside->n) : 0;
        k->command = fix_command(k->generator, k->context);
        if (!k->command)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        *ret = TAKE_PTR(k);
        return 0;
}

const CtlInitramfsDisagreement *ctl_initramfs_disagreement(const CtlInitramfs *k, const char *module) {
        for (size_t i = 0; k && i < k->n; i++)
                if (streq(k->d[i].here->module, module))
                        return &k->d[i];
        return NULL;
}

const char *ctl_initramfs_image(const CtlInitramfs *k) {
        return k->image;
}

const char *ctl_initramfs_command(const CtlInitramfs *k) {
        return k->command;
}

bool ctl_initramfs_mask_not_copied(const CtlInitramfs *k, const CtlInitramfsDisagreement *d) {
        return mask_not_copied(k->generator, d);
}

void ctl_initramfs_json_disagreement(JsonWriter *w, const CtlInitramfs *k, const CtlInitramfsDisagreement *d) {
        json_disagreement(w, k->generator, d);
}

/* The entry of module inside, if the initramfs holds its module file (only then can it load
 * from there). */
static const FsgEntry *held_inside(const CtlInitramfs *k, const char *module) {
        const FsgEntry *y = k->inside ? fsg_state_find_module(k->inside, module) : NULL;
        return y && y->available && !y->builtin ? y : NULL;
}

int ctl_initramfs_status(const CtlOptions *o, const char *module, char **ret_row, char **ret_advice) {
        _cleanup_(ctl_initramfs_freep) CtlInitramfs *k = NULL;
        const Disagreement *d;
        const FsgEntry *y;
        FsgError e = {};
        int r = 0;

        *ret_row = *ret_advice = NULL;
        if (ctl_initramfs_check(o, &k, &e) < 0) {
                /* Without a module tree there is no initramfs of it either: nothing to say. */
                if (e.code == FSG_ERR_NO_KERNEL)
                        return 0;
                /* TRANSLATORS: the initramfs row of status; %s says why (an error message). */
                r = asprintf(ret_row, _("not checked: %s"), ctl_esc(e.message));
        } else if (!k)
                return 0;
        else if ((d = ctl_initramfs_disagreement(k, module))) {
                /* TRANSLATORS: %1$s "allowed" or "denied", %2$s a file, %3$s the image. */
                r = asprintf(ret_row, _("%1$s there (%2$s), unlike here   (%3$s)"), ctl_state_word(d->inside),
                             ctl_esc(*d->inside->deciding_file ? d->inside->deciding_file : "default"),
                             ctl_esc(k->image));
                if (r >= 0 && ctl_initramfs_mask_not_copied(k, d))
                        r = asprintf(ret_advice, "%s", _("An allow by a /dev/null mask never reaches the initramfs: "
                                     "initramfs-tools copies only regular files of modprobe.d. Regenerating does not "
                                     "change that; the module autoloads once the real root is mounted."));
                else if (r >= 0)
                        /* TRANSLATORS: %s is a command (update-initramfs -u -k KVER). */
                        r = asprintf(ret_advice, _("To make the initramfs again from the configuration as it is now: %s"),
                                     ctl_esc(k->command));
        } else if ((y = held_inside(k, module)))
                /* TRANSLATORS: %1$s "allowed" or "denied", %2$s the image. */
                r = asprintf(ret_row, _("%1$s there too   (%2$s)"), ctl_state_word(y), ctl_esc(k->image));
        else
                /* TRANSLATORS: %s the image. */
                r = asprintf(ret_row, _("does not hold it   (%s)"), ctl_esc(k->image));
        return r < 0 ? -ENOMEM : 0;
}

int ctl_initramfs(const CtlOptions *o) {
        _cleanup_(ctl_initramfs_freep) CtlInitramfs *k = NULL;
        FsgError e = {};

        if (ctl_initramfs_check(o, &k, &e) < 0)
                return ctl_fail(o, &e);
        if (!k) {
                if (o->json)
                        /* "generator": "" says it for scripts (and Cockpit, which then shows no card). */
                        print_json(GEN_NONE, "", NULL, 0, "");
                else
                        puts(_("No initramfs generator (initramfs-tools, dracut) is installed: nothing to compare."));
                return 0;
        }
        if (o->json)
                print_json(k->generator, k->image, k->d, k->n, k->command);
        else
                print_text(k->generator, k->image, k->d, k->n, k->command);
        return regenerable(k->generator, k->d, k->n) > 0 ? 9 : 0;
}
