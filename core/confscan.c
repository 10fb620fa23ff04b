/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "alloc-util.h"
#include "confscan.h"
#include "override.h"
#include "name.h"
#include "strv.h"
#include "utf8.h"

const FsgConfDir fsg_conf_dirs[] = {
        { "/etc/modprobe.d",           FSG_ORIGIN_ADMIN   },
        { "/run/modprobe.d",           FSG_ORIGIN_RUNTIME },
        { "/usr/local/lib/modprobe.d", FSG_ORIGIN_LOCAL   },
        { "/usr/lib/modprobe.d",       FSG_ORIGIN_VENDOR  },
        { "/lib/modprobe.d",           FSG_ORIGIN_VENDOR  },
};
const size_t fsg_n_conf_dirs = ELEMENTSOF(fsg_conf_dirs);

static const char * const origin_names[_FSG_ORIGIN_MAX] = {
        [FSG_ORIGIN_DEFAULT] = "default",
        [FSG_ORIGIN_VENDOR]  = "vendor",
        [FSG_ORIGIN_LOCAL]   = "local",
        [FSG_ORIGIN_RUNTIME] = "runtime",
        [FSG_ORIGIN_ADMIN]   = "admin",
        [FSG_ORIGIN_CMDLINE] = "cmdline",
};

const char *fsg_origin_to_string(FsgOrigin o) {
        return o < _FSG_ORIGIN_MAX ? origin_names[o] : "default";
}

FsgOrigin fsg_origin_from_string(const char *s) {
        for (FsgOrigin o = 0; o < _FSG_ORIGIN_MAX; o++)
                if (streq(s, origin_names[o]))
                        return o;
        return FSG_ORIGIN_DEFAULT;
}

/* kmod reads *.conf and *.alias, skipping hidden files (our temp files start with '.'). */
bool fsg_routes_target_is(const char *target, const char *type) {
        _cleanup_free_ char *want = NULL;

        if (asprintf(&want, FSG_ROUTED_PREFIX "%s", type) < 0)
                return false;
        fsg_name_normalize(want);
        return streq(target, want);
}

static bool conf_name_wanted(const char *fn) {
        size_t l = strlen(fn);
        if (fn[0] == '.')
                return false;
        return (l >= 6 && streq(fn + l - 5, ".conf")) || (l >= 7 && streq(fn + l - 6, ".alias"));
}

static int cmp_files(const void *a, const void *b) {
        return strcmp(((const FsgConfFile *) a)->name, ((const FsgConfFile *) b)->name);
}

/* The files seen so far by basename, while the directories are scanned: a lookup per file
 * name must not cost a walk over all earlier ones (10 000 files would take 50 million). Open
 * addressing; a slot holds a file index + 1, 0 is empty. */
typedef struct NameIndex {
        size_t *slots;
        size_t cap;     /* a power of two, at least twice the number of files */
} NameIndex;

static size_t hash_name(const char *s) {
        uint64_t h = 14695981039346656037ULL; /* FNV-1a */
        for (; *s; s++)
                h = (h ^ (unsigned char) *s) * 1099511628211ULL;
        return (size_t) h;
}

static FsgConfFile *find_file(const FsgConfig *cfg, const NameIndex *ix, const char *name) {
        for (size_t i = ix->cap ? hash_name(name) & (ix->cap - 1) : 0; ix->cap && ix->slots[i]; i = (i + 1) & (ix->cap - 1))
                if (streq(cfg->files[ix->slots[i] - 1].name, name))
                        return &cfg->files[ix->slots[i] - 1];
        return NULL;
}

static void name_index_done(NameIndex *ix) {
        free(ix->slots);
}

static void index_put(NameIndex *ix, const char *name, size_t file) {
        size_t i = hash_name(name) & (ix->cap - 1);
        while (ix->slots[i])
                i = (i + 1) & (ix->cap - 1);
        ix->slots[i] = file + 1;
}

/* Indexes cfg->files[file], the newest file. */
static int index_add(NameIndex *ix, const FsgConfig *cfg, size_t file) {
        if (2 * (file + 1) > ix->cap) {
                size_t cap = ix->cap ? 2 * ix->cap : 64;
                size_t *slots = calloc(cap, sizeof(size_t));
                if (!slots)
                        return -ENOMEM;
                free(ix->slots);
                *ix = (NameIndex) { .slots = slots, .cap = cap };
                for (size_t i = 0; i < file; i++)
                        index_put(ix, cfg->files[i].name, i);
        }
        index_put(ix, cfg->files[file].name, file);
        return 0;
}

static void conf_file_done(FsgConfFile *f) {
        free_many(f->name, f->path, f->fullpath, f->syspath, f->shadowed, f->override_of);
        strv_free(f->override_allows);
}

/* fulldir: dir as found on the host when name is known to be no symlink, else NULL. */
static int file_add(FsgConfig *cfg, NameIndex *ix, const FsgContext *c, const char *dir, const char *fulldir,
                    const char *name, FsgOrigin origin, bool mask) {
        FsgConfFile *t = fsg_grow_one(cfg->files, cfg->n_files, sizeof(FsgConfFile));
        FsgConfFile *f;
        int r;

        if (!t)
                return -ENOMEM;
        cfg->files = t;
        f = &t[cfg->n_files];
        *f = (FsgConfFile) { .origin = origin, .mask = mask };
        _cleanup_free_ char *sys = NULL;
        if (asprintf(&sys, "%s/%s", dir, name) < 0)
                return -ENOMEM;
        f->name = strdup(name);
        f->path = fsg_utf8_escape(sys); /* a file name is any bytes; D-Bus strings are UTF-8 */
        if (!fulldir)
                f->fullpath = fsg_path(c, sys);
        else if (asprintf(&f->fullpath, "%s/%s", fulldir, name) < 0)
                f->fullpath = NULL;
        r = f->fullpath ? 0 : errno > 0 ? -errno : -ENOMEM; /* fsg_path() fails on a loop, too */
        f->syspath = TAKE_PTR(sys);
        if (r == 0 && (!f->name || !f->path || index_add(ix, cfg, cfg->n_files) < 0))
                r = -ENOMEM;
        if (r < 0) {
                conf_file_done(f);
                return r;
        }
        cfg->n_files++;
        return 0;
}

static int note_named_module(FsgConfig *cfg, const char *fn) {
        size_t pl = strlen(FSG_FILE_PREFIX), sl = strlen(FSG_FILE_SUFFIX), l = strlen(fn);
        _cleanup_free_ char *m = NULL;

        if (l <= pl + sl || strncmp(fn, FSG_FILE_PREFIX, pl) != 0 || !streq(fn + l - sl, FSG_FILE_SUFFIX))
                return 0;
        m = strndup(fn + pl, l - pl - sl);
        if (!m)
                return -ENOMEM;
        if (!fsg_name_is_valid(m))
                return 0;
        fsg_name_normalize(m);
        return strv_push(&cfg->named_modules, TAKE_PTR(m)); /* made a set once all are in */
}

static bool is_dev_null_link(int dfd, const char *name) {
        char target[16];
        ssize_t n = readlinkat(dfd, name, target, sizeof(target) - 1);
        if (n < 0)
                return false;
        target[n] = 0;
        return streq(target, "/dev/null");
}

/* Records a file or directory that could not be read for lack of permission: skipped, so
 * one 0600 file of another user does not make every answer fail, and named, so that callers
 * can say the answer may be incomplete. */
static int note_unreadable(FsgConfig *cfg, const char *sys) {
        _cleanup_free_ char *p = fsg_utf8_escape(sys);
        return p ? strv_push(&cfg->unreadable, TAKE_PTR(p)) : -ENOMEM;
}

/* The routes file (routes.h) in effect: the types it sends to the hook. kmod would read it,
 * but the model must not, or a route fsgate wrote would decide the very state it reports. */
static int note_routes(FsgConfig *cfg, const FsgContext *c, const char *sys) {
        FsgRule *rules = NULL;
        size_t n = 0;
        int r;

        r = fsg_conf_parse_at(c, sys, 0, &rules, &n);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                const char *t;
                /* Names as kmod keeps them, '-' made '_': fs_TYPE, and TYPE so normalized. */
                if (rules[i].kind != FSG_RULE_ALIAS || strncmp(rules[i].name, "fs_", 3) != 0)
                        continue;
                t = rules[i].name + 3;
                if (fsg_routes_target_is(rules[i].value, t))
                        r = strv_extend_unique(&cfg->routed_types, t);
        }
        fsg_rules_free(rules, n);
        return r == -ENOENT ? 0 : r;
}

/* fsgate's own files that the model keeps out (not yet seen under that name): 1 when name is
 * one of them, handled; 0 for any other file. */
static int note_own_file(FsgConfig *cfg, const FsgContext *c, const FsgConfDir *d, const char *name, const char *sys,
                         bool mask) {
        int r;

        /* An observation (observe.h) decides nothing: the hook it runs loads what is allowed.
         * Kept out, as the routes file; a file of its name below is not fsgate's concern. */
        if (d->origin == FSG_ORIGIN_ADMIN && streq(name, FSG_OBSERVE_NAME))
                return 1;
        if (!streq(name, FSG_ROUTES_NAME))
                return 0;
        /* Kept out of the files, yet it hides the same name further down, as for kmod. */
        if (cfg->routes_seen)
                return 1;
        if (d->origin != FSG_ORIGIN_RUNTIME)
                return 0;
        cfg->routes_seen = true;
        r = mask ? 0 : note_routes(cfg, c, sys);
        if (r == -EACCES || r == -EPERM)
                r = note_unreadable(cfg, sys);
        return r < 0 ? r : 1;
}

/* dfd: the directory, resolved inside the root. */
static int scan_dir(FsgConfig *cfg, NameIndex *ix, const FsgContext *c, const FsgConfDir *d, int dfd,
                    const FsgOverride *ov) {
        _cleanup_free_ char *full = fsg_path(c, d->path);
        _cleanup_closedir_ DIR *dir = NULL;
        struct dirent *de;
        int fd, r;

        if (!full)
                return -errno;
        fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        dir = fdopendir(fd);
        if (!dir) {
                close(fd);
                return -errno;
        }

        while ((errno = 0, de = readdir(dir))) {
                _cleanup_free_ char *sys = NULL;
                FsgConfFile *seen;
                struct stat st;
                bool mask, plain = false;

                if (!conf_name_wanted(de->d_name))
                        continue;
                if (asprintf(&sys, "%s/%s", d->path, de->d_name) < 0)
                        return -ENOMEM;
                /* Not a symlink (most files): nothing to chase, and chasing every file below a
                 * root was most of the cost of a scan. */
                if (de->d_type != DT_LNK && de->d_type != DT_UNKNOWN &&
                    fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISLNK(st.st_mode)) {
                        if (S_ISDIR(st.st_mode))
                                continue;
                        mask = !S_ISREG(st.st_mode) || st.st_size == 0;
                        plain = true;
                /* Follow symlinks the way the system under the root would, never onto the host. */
                } else if (is_dev_null_link(dirfd(dir), de->d_name))
                        mask = true;
                else {
                        _cleanup_close_ int target = fsg_open_in_root(c, sys, O_PATH);
                        if (target < 0 || fstat(target, &st) < 0 || S_ISDIR(st.st_mode))
                                continue;
                        mask = !S_ISREG(st.st_mode) || st.st_size == 0;
                }
                r = note_named_module(cfg, de->d_name);
                if (r < 0)
                        return r;

                if (ov && ov->path && streq(ov->path, sys)) {
                        if (ov->content)
                                mask = false;
                        else if (!ov->as_mask)
                                continue;
                        else
                                mask = true;
                }

                seen = find_file(cfg, ix, de->d_name);
                r = seen ? 0 : note_own_file(cfg, c, d, de->d_name, sys, mask);
                if (r < 0)
                        return r;
                if (r > 0)
                        continue;
                if (seen) {
                        if (!seen->shadowed && !(seen->shadowed = fsg_path(c, sys)))
                                return -errno;
                        continue;
                }
                r = file_add(cfg, ix, c, d->path, plain ? full : NULL, de->d_name, d->origin, mask);
                if (r < 0)
                        return r;
        }
        return errno > 0 ? -errno : 0;
}

/* The override may name a file that does not exist yet (a mask we are about to write). */
static int inject_override(FsgConfig *cfg, NameIndex *ix, const FsgContext *c, const FsgOverride *ov, const FsgConfDir *d) {
        size_t dl = strlen(d->path);
        const char *name;

        if (!ov || !ov->path || !(ov->as_mask || ov->content) || strncmp(ov->path, d->path, dl) != 0 ||
            ov->path[dl] != '/')
                return 0;
        name = ov->path + dl + 1;
        if (find_file(cfg, ix, name))
                return 0;
        return file_add(cfg, ix, c, d->path, NULL, name, d->origin, !ov->content);
}

static int parse_cmdline(FsgConfig *cfg, const FsgContext *c) {
        _cleanup_free_ char *buf = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        size_t cap = 0;
        char *save = NULL;
        ssize_t n;
        int r = fsg_fopen_regular(c, "/proc/cmdline", FSG_CONF_MAX, &f);

        if (r == -ENOENT)
                return 0;
        if (r == -EACCES || r == -EPERM)
                return note_unreadable(cfg, "/proc/cmdline");
        if (r < 0)
                return r;
        /* One line; a longer one than any kernel takes is an error like any other. */
        n = fsg_read_line(f, '\n', FSG_LINE_MAX, &buf, &cap);
        if (n <= 0)
                return (int) n;
        for (char *w = strtok_r(buf, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save)) {
                char *s2 = NULL;
                if (strncmp(w, "modprobe.blacklist=", 19) != 0)
                        continue;
                for (char *m = strtok_r(w + 19, ",", &s2); m; m = strtok_r(NULL, ",", &s2)) {
                        /* kmod 30 compares these as written: "ib-qib" does not match ib_qib. */
                        if (!fsg_name_is_valid(m))
                                continue;
                        if (strv_extend_unique(&cfg->cmdline_blacklist, m) < 0)
                                return -ENOMEM;
                }
        }
        return 0;
}

static int cmp_rule_names(const void *a, const void *b, void *userdata) {
        const FsgRule *rules = userdata;
        size_t i = *(const size_t *) a, j = *(const size_t *) b;
        int d = strcmp(rules[i].name, rules[j].name);
        return d != 0 ? d : (i > j) - (i < j);
}

static int index_rules(FsgConfig *cfg) {
        if (cfg->n_rules == 0)
                return 0;
        cfg->by_name = malloc(sizeof(size_t) * cfg->n_rules);
        if (!cfg->by_name)
                return -ENOMEM;
        for (size_t i = 0; i < cfg->n_rules; i++)
                cfg->by_name[i] = i;
        qsort_r(cfg->by_name, cfg->n_rules, sizeof(size_t), cmp_rule_names, cfg->rules);
        return 0;
}

size_t fsg_config_rules_named(const FsgConfig *cfg, const char *name, const size_t **ret) {
        size_t lo = 0, hi = cfg->by_name ? cfg->n_rules : 0, end;

        /* The first rule not smaller than name, then the run of equal ones. */
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (strcmp(cfg->rules[cfg->by_name[mid]].name, name) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        for (end = lo; cfg->by_name && end < cfg->n_rules && streq(cfg->rules[cfg->by_name[end]].name, name); end++)
                ;
        *ret = cfg->by_name ? cfg->by_name + lo : NULL;
        return end - lo;
}

/* In an image, one file read once: parsed (*ret_override: whether it starts with fsgate's
 * override header), and its bytes kept for kmod (see kmod_text). */
static int parse_and_keep(const FsgContext *c, FsgConfig *cfg, size_t i, FILE *kmod_text, bool *ret_override) {
        _cleanup_free_ char *buf = NULL;
        size_t len;
        int r = fsg_read_regular(c, cfg->files[i].syspath, FSG_CONF_MAX, &buf, &len);

        *ret_override = false;
        if (r < 0)
                return r;
        r = fsg_conf_parse_buf(buf, len, i, &cfg->rules, &cfg->n_rules, FSG_OVERRIDE_HEADER, ret_override);
        return r < 0 ? r : fsg_conf_write_for_kmod(kmod_text, buf, len);
}

/* The running system's kmod opens files by name: the "what if" content as a memfd of ours. */
static int content_to_memfd(FsgConfig *cfg, FsgConfFile *f, const char *content, size_t len) {
        int fd = memfd_create("fsgate-what-if", MFD_CLOEXEC);

        if (fd < 0)
                return -errno;
        cfg->content_fd = fd + 1;
        if (write(fd, content, len) != (ssize_t) len)
                return errno > 0 ? -errno : -EIO;
        free(f->fullpath);
        if (asprintf(&f->fullpath, "/proc/self/fd/%d", fd) < 0) {
                f->fullpath = NULL;
                return -ENOMEM;
        }
        return 0;
}

/* The "what if" content of an override not yet written: parsed here, and handed to kmod in
 * the file's place, in kmod_text in an image (kmod_text set) like every file there. */
static int parse_content(FsgConfig *cfg, FsgConfFile *f, size_t i, const char *content, FILE *kmod_text) {
        FsgOverrideHeader h;
        size_t len = strlen(content);
        int r = fsg_conf_parse_buf(content, len, i, &cfg->rules, &cfg->n_rules, NULL, NULL);

        if (r < 0)
                return r;
        r = fsg_override_header_parse(content, &h);
        if (r < 0)
                return r;
        if (r > 0) {
                f->override_of = TAKE_PTR(h.vendor);
                f->override_allows = TAKE_PTR(h.allows);
                fsg_override_header_done(&h);
        }
        return kmod_text ? fsg_conf_write_for_kmod(kmod_text, content, len) : content_to_memfd(cfg, f, content, len);
}

/* A file in /etc or /run that says it is fsgate's override of a vendor file: which, of which
 * modules, and whether the vendor file still is what was copied. */
static int note_override(const FsgContext *c, FsgConfFile *f) {
        _cleanup_(fsg_override_header_done) FsgOverrideHeader h = {};
        _cleanup_free_ char *vendor = NULL;
        char sha[FSG_SHA256_HEX_SIZE];
        const char *base;
        bool in_vendor_dir = false;
        int r;

        if (f->origin != FSG_ORIGIN_ADMIN && f->origin != FSG_ORIGIN_RUNTIME)
                return 0;
        r = fsg_override_read(c, f->syspath, &h);
        if (r <= 0)
                return r == -ENOMEM ? r : 0; /* gone or changed since: not one now */
        base = strrchr(h.vendor, '/');
        for (size_t i = 0; i < fsg_n_conf_dirs; i++) {
                size_t l = strlen(fsg_conf_dirs[i].path);
                in_vendor_dir = in_vendor_dir ||
                        ((fsg_conf_dirs[i].origin == FSG_ORIGIN_VENDOR || fsg_conf_dirs[i].origin == FSG_ORIGIN_LOCAL) &&
                         strncmp(h.vendor, fsg_conf_dirs[i].path, l) == 0 && h.vendor + l == base);
        }
        if (!in_vendor_dir || !streq(base + 1, f->name))
                return 0;
        r = fsg_read_regular(c, h.vendor, FSG_CONF_MAX, &vendor, NULL);
        if (r < 0 && r != -ENOENT && r != -EBADFD)
                return r == -ENOMEM ? r : 0;
        f->override_stale = !vendor || !streq(fsg_sha256_hex(vendor, strlen(vendor), sha), h.sha256);
        f->override_of = TAKE_PTR(h.vendor);
        f->override_allows = TAKE_PTR(h.allows);
        return 0;
}

/* Every modprobe.d directory's files into cfg, by precedence: a name seen in an earlier
 * directory shadows the same name in the later ones. */
static int scan_dirs(FsgConfig *cfg, const FsgContext *c, const FsgOverride *ov, FsgError *e) {
        _cleanup_(name_index_done) NameIndex ix = {};
        struct stat seen_dirs[8];
        size_t n_seen = 0;
        int r;

        for (size_t i = 0; i < fsg_n_conf_dirs; i++) {
                const FsgConfDir *d = &fsg_conf_dirs[i];
                _cleanup_close_ int dfd = fsg_open_in_root(c, d->path, O_RDONLY | O_DIRECTORY);
                struct stat st;
                bool dup = false;

                r = 0;
                if (dfd == -EACCES || dfd == -EPERM)
                        r = note_unreadable(cfg, d->path);
                else if (dfd < 0 && dfd != -ENOENT && dfd != -ENOTDIR)
                        r = dfd;
                else if (dfd >= 0) {
                        /* /lib is a symlink to /usr/lib on merged systems: read each directory once. */
                        if (fstat(dfd, &st) == 0) {
                                for (size_t j = 0; j < n_seen; j++)
                                        dup = dup || (seen_dirs[j].st_dev == st.st_dev && seen_dirs[j].st_ino == st.st_ino);
                                if (dup)
                                        continue;
                                seen_dirs[n_seen++] = st;
                        }
                        r = scan_dir(cfg, &ix, c, d, dfd, ov);
                }
                if (r >= 0)
                        r = inject_override(cfg, &ix, c, ov, d);
                if (r < 0)
                        return fsg_error(e, FSG_ERR_FAILED, "Failed to read %s%s: %s", c->root, d->path, fsg_strerror(-r));
        }
        return 0;
}

/* Every file but the masks, in kmod's order (by name). In an image (kmod_text set) their bytes
 * go there, and where modules.softdep falls among them is noted. Returns -EAGAIN, with e
 * untouched, when a file changed between the directory listing and its parse. */
static int parse_files(const FsgContext *c, FsgConfig *cfg, const FsgOverride *ov, FILE *kmod_text, FsgError *e) {
        bool softdep_placed = false;
        int r;

        for (size_t i = 0; i < cfg->n_files; i++) {
                FsgConfFile *f = &cfg->files[i];
                bool override = false;

                if (kmod_text && !softdep_placed && strcmp(f->name, FSG_KMOD_SOFTDEP) > 0) {
                        cfg->kmod_softdep_at = ftell(kmod_text);
                        softdep_placed = true;
                }
                if (f->mask)
                        continue;
                if (ov && ov->content && streq(f->syspath, ov->path))
                        r = parse_content(cfg, f, i, ov->content, kmod_text);
                else if (kmod_text)
                        r = parse_and_keep(c, cfg, i, kmod_text, &override);
                else
                        r = fsg_conf_parse_at_peek(c, f->syspath, i, &cfg->rules, &cfg->n_rules,
                                                   FSG_OVERRIDE_HEADER, &override);
                if (r >= 0 && override)
                        r = note_override(c, f);
                if (r == -EBADFD || r == -ENOENT)
                        return -EAGAIN;
                if (r == -EACCES || r == -EPERM)
                        r = note_unreadable(cfg, f->syspath);
                if (r < 0)
                        return fsg_error(e, FSG_ERR_FAILED, "Failed to read %s%s: %s", c->root, f->path, fsg_strerror(-r));
        }
        if (kmod_text && !softdep_placed)
                cfg->kmod_softdep_at = ftell(kmod_text);
        return 0;
}

/* Returns -EAGAIN, with e untouched, when a file changed between the directory listing and
 * its parse (a writer replaced it with a mask or removed it): the caller reads again. */
static int config_load_once(const FsgContext *c, const FsgOverride *ov, FsgConfig **ret, FsgError *e) {
        _cleanup_(fsg_config_freep) FsgConfig *cfg = calloc(1, sizeof(FsgConfig));
        _cleanup_fclose_ FILE *kmod_text = NULL; /* closed before cfg is freed: it writes there */
        int r;

        if (!cfg || (c->root_fd >= 0 && !(kmod_text = open_memstream(&cfg->kmod_text, &cfg->kmod_len))))
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        r = scan_dirs(cfg, c, ov, e);
        if (r < 0)
                return r;
        if (cfg->n_files > 0)
                qsort(cfg->files, cfg->n_files, sizeof(FsgConfFile), cmp_files);
        strv_sort_unique(cfg->named_modules);
        r = parse_files(c, cfg, ov, kmod_text, e);
        if (r < 0)
                return r;
        if (kmod_text && fclose(TAKE_PTR(kmod_text)) == EOF)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        r = parse_cmdline(cfg, c);
        if (r < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Failed to read %s/proc/cmdline: %s", c->root, fsg_strerror(-r));
        r = index_rules(cfg);
        if (r < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");

        *ret = TAKE_PTR(cfg);
        return 0;
}

int fsg_config_load(const FsgContext *c, const FsgOverride *ov, FsgConfig **ret, FsgError *e) {
        /* Readers take no lock (the service must answer while an offline writer works), so a
         * listing can race an atomic rename. A few fresh reads settle it; a root that keeps
         * changing under us is reported rather than read forever. */
        for (unsigned attempt = 0; attempt < 32; attempt++) {
                int r = config_load_once(c, ov, ret, e);
                if (r != -EAGAIN)
                        return r;
        }
        return fsg_error(e, FSG_ERR_FAILED, "The configuration below %s/ kept changing while it was read; try again",
                         c->root);
}

FsgConfig *fsg_config_free(FsgConfig *cfg) {
        if (!cfg)
                return NULL;
        for (size_t i = 0; i < cfg->n_files; i++)
                conf_file_done(&cfg->files[i]);
        if (cfg->content_fd > 0)
                close(cfg->content_fd - 1);
        fsg_rules_free(cfg->rules, cfg->n_rules);
        strv_free_many(cfg->cmdline_blacklist, cfg->named_modules, cfg->routed_types, cfg->unreadable);
        free_many(cfg->files, cfg->kmod_text, cfg->by_name, cfg);
        return NULL;
}
