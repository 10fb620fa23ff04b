/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "conffile.h"
#include "ctl.h"
#include "json-writer.h"
#include "strv.h"

/* fsgatectl initramfs: does the initramfs of this kernel deny what the system denies? It is
 * unpacked (by the generator's own tool, read-only for the image) into a private directory
 * and judged by fsgate's own model, as an image with --root is: the modules it holds, the
 * modprobe.d files it copied. Only modules it holds can be loaded before the real root is
 * mounted, so only those can disagree. Nothing is regenerated: the command that would is
 * printed. */

#define UNPACK_TIMEOUT_SEC 120

typedef enum Generator {
        GEN_NONE,
        GEN_INITRAMFS_TOOLS,
        GEN_DRACUT,
} Generator;

typedef struct Disagreement {
        const FsgEntry *here, *inside;
        bool mask;      /* allowed here by a /dev/null mask, which initramfs-tools does not copy */
} Disagreement;

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

/* argv in cwd with its output to /dev/null, at most UNPACK_TIMEOUT_SEC: 0, or a negative
 * errno (-ETIMEDOUT, -ENOEXEC for a non-zero exit). */
static int run_quietly(const char *cwd, char * const argv[]) {
        struct timespec pause = { 0, 50 * 1000 * 1000 };
        int status;
        pid_t pid = fork();

        if (pid < 0)
                return -errno;
        if (pid == 0) {
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
        for (unsigned waited = 0;; waited++) {
                pid_t r = waitpid(pid, &status, WNOHANG);
                if (r == pid)
                        break;
                if (r < 0 && errno != EINTR)
                        return -errno;
                if (waited >= UNPACK_TIMEOUT_SEC * 20) {
                        (void) kill(pid, SIGKILL);
                        (void) waitpid(pid, &status, 0);
                        return -ETIMEDOUT;
                }
                (void) nanosleep(&pause, NULL);
        }
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
        /* dracut's lsinitrd unpacks into the working directory. */
        if (g == GEN_INITRAMFS_TOOLS)
                r = run_quietly("/", (char * const[]) { (char *) tool, (char *) image, tmpl, NULL });
        else
                r = run_quietly(tmpl, (char * const[]) { (char *) tool, (char *) "--unpack", (char *) image, NULL });
        if (r < 0)
                return fsg_error(e, FSG_ERR_FAILED, _("%s could not unpack %s (%s)"), tool, image,
                                 r == -ETIMEDOUT ? _("it took too long") : strerror(-r));
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

static const char *fix_command(Generator g, const FsgContext *c, char buf[static 128]) {
        if (g == GEN_INITRAMFS_TOOLS)
                snprintf(buf, 128, "update-initramfs -u -k %s", c->kver);
        else
                snprintf(buf, 128, "dracut -f --kver %s", c->kver);
        return buf;
}

static void print_json(Generator g, const char *image, const Disagreement *d, size_t n, const char *command) {
        JsonWriter w = JSON_WRITER(stdout);

        json_object_begin(&w);
        json_field_string(&w, "generator", g == GEN_INITRAMFS_TOOLS ? "initramfs-tools" : "dracut");
        json_field_string(&w, "image", image);
        json_field_bool(&w, "agrees", n == 0);
        json_key(&w, "disagreements");
        json_array_begin(&w);
        for (size_t i = 0; i < n; i++) {
                json_object_begin(&w);
                json_field_string(&w, "module", d[i].here->module);
                json_field_string(&w, "state", fsg_entry_state_string(d[i].here));
                json_field_string(&w, "deciding_file", d[i].here->deciding_file);
                json_field_string(&w, "state_inside", fsg_entry_state_string(d[i].inside));
                json_field_string(&w, "deciding_file_inside", d[i].inside->deciding_file);
                json_field_bool(&w, "mask_not_copied", d[i].mask);
                json_object_end(&w);
        }
        json_array_end(&w);
        json_field_string(&w, "command", n ? command : "");
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
                const Disagreement *x = &d[i];

                /* TRANSLATORS: %1$s a module, %2$s/%4$s "allowed" or "denied", %3$s/%5$s files. */
                printf(_("  %1$s: %2$s here (%3$s), %4$s in the initramfs (%5$s)\n"), x->here->module,
                       ctl_state_word(x->here), ctl_esc(*x->here->deciding_file ? x->here->deciding_file : "default"),
                       ctl_state_word(x->inside),
                       ctl_esc(*x->inside->deciding_file ? x->inside->deciding_file : "default"));
                masks = masks || x->mask;
        }
        if (masks && g == GEN_INITRAMFS_TOOLS)
                puts(_("An allow by a /dev/null mask never reaches it: initramfs-tools copies only regular files "
                       "of modprobe.d, so the deny the mask hides stays in the initramfs. Regenerating does not change "
                       "that; the module autoloads once the real root is mounted."));
        /* TRANSLATORS: %s is a command (update-initramfs -u -k KVER). */
        printf(_("To make it again from the configuration as it is now: %s\n"), command);
}

int ctl_initramfs(const CtlOptions *o) {
        _cleanup_(fsg_context_freep) FsgContext *c = NULL, *ci = NULL;
        _cleanup_(fsg_state_freep) FsgState *here = NULL, *inside = NULL;
        _cleanup_(remove_tree) char *dir = NULL;
        _cleanup_free_ char *image = NULL, *tool = NULL, *inside_root = NULL;
        _cleanup_free_ Disagreement *d = NULL;
        char command[128];
        FsgError e = {};
        Generator g;
        size_t n;

        if (fsg_context_new(o->root, o->kernel_release, &c, &e) < 0)
                return ctl_fail(o, &e);
        if (!c->kver) {
                fsg_error(&e, FSG_ERR_NO_KERNEL, "%s", _("No kernel module tree: no initramfs to compare with"));
                return ctl_fail(o, &e);
        }
        g = detect_generator(c);
        if (g == GEN_NONE) {
                puts(_("No initramfs generator (initramfs-tools, dracut) is installed: nothing to compare."));
                return 0;
        }
        if (find_image(c, g, &image, &tool, &e) < 0 || unpack(g, tool, image, &dir, &inside_root, &e) < 0 ||
            fsg_state_build(c, NULL, &here, &e) < 0)
                return ctl_fail(o, &e);
        /* What the initramfs holds is judged as an image is. One without a module tree for
         * this kernel (or without /etc and /usr at all) holds no module to load. */
        if (fsg_context_new(inside_root, c->kver, &ci, &e) < 0 || fsg_state_build(ci, NULL, &inside, &e) < 0) {
                if (e.code != FSG_ERR_NO_KERNEL && e.code != FSG_ERR_INVALID_ARGS)
                        return ctl_fail(o, &e);
                inside = fsg_state_free(inside);
        }
        d = calloc(inside ? inside->n + 1 : 1, sizeof(Disagreement));
        if (!d) {
                fsg_error(&e, FSG_ERR_FAILED, "Out of memory");
                return ctl_fail(o, &e);
        }
        n = inside ? compare(c, here, inside, d, inside->n) : 0;
        fix_command(g, c, command);
        if (o->json)
                print_json(g, image, d, n, command);
        else
                print_text(g, image, d, n, command);
        return n ? 9 : 0;
}
