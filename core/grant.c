/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "conffile.h"
#include "grant.h"
#include "macro.h"

#define GRANT_RECORD_MAX 1024

/* The running kernel's, whatever the root: a grant is of this boot of this machine. */
static void current_boot_id(char buf[static FSG_GRANT_ID_LEN + 1]) {
        char raw[64] = "";
        size_t l = 0;
        FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");

        if (f) {
                if (!fgets(raw, sizeof(raw), f))
                        raw[0] = 0;
                fclose(f);
        }
        for (char *p = raw; *p && l < FSG_GRANT_ID_LEN; p++)
                if (*p != '-' && *p != '\n')
                        buf[l++] = *p;
        buf[l] = 0;
}

static bool is_id(const char *s) {
        return strlen(s) == FSG_GRANT_ID_LEN && strspn(s, "0123456789abcdef") == FSG_GRANT_ID_LEN;
}

int fsg_grant_new(const char *module, uint32_t uid, uint64_t now_usec, uint64_t boot_usec, uint64_t seconds,
                  FsgGrant *ret, FsgError *e) {
        assert(module);
        assert(ret);

        uint8_t r[FSG_GRANT_ID_LEN / 2];

        if (seconds < 1 || seconds > FSG_GRANT_SECONDS_MAX)
                return fsg_error(e, FSG_ERR_INVALID_ARGS, "A grant lasts from 1 second to %" PRIu64 " seconds (7 days), not %" PRIu64,
                                 FSG_GRANT_SECONDS_MAX, seconds);
        if (strlen(module) > FSG_NAME_MAX)
                return fsg_error(e, FSG_ERR_INVALID_NAME, "Not a valid module name: %s", module);
        /* The id names a file and a grant to end: it must not be guessable or repeat. */
        if (getrandom(r, sizeof(r), 0) != sizeof(r))
                return fsg_error(e, FSG_ERR_FAILED, "No random bytes for a grant's id: %m");
        *ret = (FsgGrant) { .uid = uid, .since_usec = now_usec, .until_usec = now_usec + seconds * UINT64_C(1000000),
                            .ends_usec = boot_usec + seconds * UINT64_C(1000000) };
        for (size_t i = 0; i < sizeof(r); i++)
                sprintf(ret->id + 2 * i, "%02x", r[i]);
        snprintf(ret->module, sizeof(ret->module), "%s", module);
        return 0;
}

char *fsg_grant_format(const FsgGrant *g) {
        assert(g);

        char boot[FSG_GRANT_ID_LEN + 1];
        char *s;

        current_boot_id(boot);
        if (asprintf(&s, "# fsgate's grant: a load that ends by itself (fsgatectl status %s)\n"
                         "module=%s\nuid=%" PRIu32 "\nsince=%" PRIu64 "\nuntil=%" PRIu64 "\nends=%" PRIu64 "\nboot=%s\n",
                     g->module, g->module, g->uid, g->since_usec, g->until_usec, g->ends_usec, boot) < 0)
                return NULL;
        if (*g->deps) {
                char *t;

                if (asprintf(&t, "%sdeps=%s\n", s, g->deps) < 0)
                        t = NULL;
                free(s);
                s = t;
        }
        if (s && *g->device) {
                char *t;

                if (asprintf(&t, "%sdevice=%s\ndevnum=%" PRIu32 ":%" PRIu32 "\ndiskseq=%" PRIu64 "\n", s, g->device,
                             g->major, g->minor, g->diskseq) < 0)
                        t = NULL;
                free(s);
                s = t;
        }
        return s;
}

/* "/dev/" and a plain name below it: what a record or a caller may name. */
static bool device_node_is_valid(const char *s) {
        size_t l = strlen(s);

        return l > 5 && l < FSG_GRANT_DEVICE_MAX && strncmp(s, "/dev/", 5) == 0 && !strstr(s, "..") &&
               !strstr(s, "//") && s[l - 1] != '/' &&
               strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/_-.:+") == l;
}

/* The diskseq of device number major:minor now: a partition's is its disk's. 0 if none. */
static uint64_t diskseq_of(uint32_t major, uint32_t minor) {
        char path[96], buf[32] = "";
        uint64_t v = 0;
        FILE *f;

        snprintf(path, sizeof(path), "/sys/dev/block/%" PRIu32 ":%" PRIu32 "/partition", major, minor);
        snprintf(path, sizeof(path), access(path, F_OK) == 0 ? "/sys/dev/block/%" PRIu32 ":%" PRIu32 "/../diskseq" :
                                     "/sys/dev/block/%" PRIu32 ":%" PRIu32 "/diskseq", major, minor);
        f = fopen(path, "re");
        if (!f)
                return 0;
        if (fgets(buf, sizeof(buf), f))
                v = strtoull(buf, NULL, 10);
        fclose(f);
        return v;
}

int fsg_grant_set_medium(FsgGrant *g, const char *node, FsgError *e) {
        assert(g);
        assert(node);

        char path[FSG_GRANT_DEVICE_MAX + 32], buf[32] = "";
        unsigned ma, mi;
        FILE *f;
        int n = -1;

        /* By the kernel's name, from /sys: fsgated has no /dev of its own (PrivateDevices=),
         * and a name is what udisks2 and udev hand out. */
        if (!device_node_is_valid(node) || strchr(node + 5, '/'))
                return fsg_error(e, FSG_ERR_INVALID_ARGS, "Not a device below /dev: \"%.64s\"", node);
        snprintf(path, sizeof(path), "/sys/class/block/%s/dev", node + 5);
        f = fopen(path, "re");
        if (!f)
                return fsg_error(e, FSG_ERR_INVALID_ARGS, "%s is not a block device of this kernel", node);
        if (!fgets(buf, sizeof(buf), f))
                buf[0] = 0;
        fclose(f);
        if (sscanf(buf, "%u:%u%n", &ma, &mi, &n) != 2)
                return fsg_error(e, FSG_ERR_INVALID_ARGS, "%s is not a block device of this kernel", node);
        snprintf(g->device, sizeof(g->device), "%s", node);
        g->major = ma;
        g->minor = mi;
        g->diskseq = diskseq_of(g->major, g->minor);
        if (g->diskseq == 0)
                return fsg_error(e, FSG_ERR_INVALID_ARGS,
                                 "%s has no diskseq: the kernel cannot tell that medium from the next one there", node);
        return 0;
}

/* udev's record of a block device: "E:KEY=VALUE" lines, the probe's among them. */
#define UDEV_RECORD_MAX (64 * 1024)

int fsg_grant_medium_fs_type(const FsgContext *c, const FsgGrant *g, char ret[static 32]) {
        _cleanup_fclose_ FILE *f = NULL;
        char path[64], line[256];
        int r;

        snprintf(path, sizeof(path), "/run/udev/data/b%" PRIu32 ":%" PRIu32, g->major, g->minor);
        r = fsg_fopen_regular(c, path, UDEV_RECORD_MAX, &f);
        if (r < 0)
                return r;
        while (fgets(line, sizeof(line), f))
                if (strncmp(line, "E:ID_FS_TYPE=", 13) == 0) {
                        line[strcspn(line, "\n")] = 0;
                        if (!line[13] || strlen(line + 13) >= 32)
                                return -ENODATA;
                        snprintf(ret, 32, "%s", line + 13);
                        return 0;
                }
        return -ENODATA;
}

/* The disk's "removable" (a partition has none of its own: its disk's), from the kernel. */
static bool removable_of(const FsgGrant *g) {
        char path[96], c = '0';
        FILE *f;

        for (int up = 0; up < 2; up++) {
                snprintf(path, sizeof(path), "/sys/dev/block/%" PRIu32 ":%" PRIu32 "%s/removable", g->major, g->minor,
                         up ? "/.." : "");
                f = fopen(path, "re");
                if (!f)
                        continue;
                if (fread(&c, 1, 1, f) != 1)
                        c = '0';
                fclose(f);
                return c == '1';
        }
        return false;
}

int fsg_grant_check_medium(const FsgContext *c, FsgGrant *g, char * const *types, const char *module, FsgError *e) {
        assert(c);
        assert(g);
        assert(module);

        char type[32] = "";
        int r;

        r = fsg_grant_medium_fs_type(c, g, type);
        if (r < 0)
                return fsg_error(e, FSG_ERR_INVALID_ARGS,
                                 "Cannot tell which filesystem %s holds (udev has no ID_FS_TYPE for it): a grant "
                                 "for a medium is for a filesystem %s reads; nothing was granted", g->device, module);
        for (char * const *t = types; t && *t; t++)
                if (streq(*t, type)) {
                        snprintf(g->fstype, sizeof(g->fstype), "%s", type);
                        g->removable = removable_of(g);
                        return 0;
                }
        return fsg_error(e, FSG_ERR_INVALID_ARGS, "%s holds a %s filesystem, which %s does not read; nothing was granted",
                         g->device, type, module);
}

bool fsg_grant_medium_present(const FsgGrant *g) {
        assert(g);

        return !*g->device || diskseq_of(g->major, g->minor) == g->diskseq;
}

/* Module names, one space between each: what fsg_grant_format() writes, nothing else. */
static bool deps_are_valid(const char *v) {
        char name[FSG_NAME_MAX + 1];

        for (const char *p = v;; p++) {
                size_t n = strcspn(p, " ");

                if (n == 0 || n > FSG_NAME_MAX)
                        return false;
                memcpy(name, p, n);
                name[n] = 0;
                if (!fsg_name_is_valid(name))
                        return false;
                p += n;
                if (!*p)
                        return true;
        }
}

static int parse_u64(const char *v, uint64_t *ret) {
        char *end;

        if (!*v || *v < '0' || *v > '9')
                return -EINVAL;
        errno = 0;
        *ret = strtoull(v, &end, 10);
        return errno || *end ? -EINVAL : 0;
}

/* Strict: every key once, nothing else, values checked; a record is fsgate's or nothing. */
/* Each key of a record, one bit, for "once each" and "these together". */
enum {
        KEY_MODULE = 1 << 0, KEY_BOOT = 1 << 1, KEY_UID = 1 << 2, KEY_SINCE = 1 << 3, KEY_UNTIL = 1 << 4,
        KEY_DEVICE = 1 << 5, KEY_DEVNUM = 1 << 6, KEY_DISKSEQ = 1 << 7, KEY_ENDS = 1 << 8, KEY_DEPS = 1 << 9,
        KEYS_NEEDED = KEY_MODULE | KEY_BOOT | KEY_UID | KEY_SINCE | KEY_UNTIL,
        KEYS_MEDIUM = KEY_DEVICE | KEY_DEVNUM | KEY_DISKSEQ,
};

static int parse_devnum(const char *v, FsgGrant *g) {
        unsigned ma, mi;
        int n = -1;

        if (sscanf(v, "%u:%u%n", &ma, &mi, &n) != 2 || n < 0 || v[n] || *v < '0' || *v > '9')
                return -EINVAL;
        g->major = ma;
        g->minor = mi;
        return 0;
}

/* One key=value line into g: the key's bit, or -EINVAL for an unknown key or a bad value. */
static int parse_field(const char *key, const char *v, const char *boot_id, FsgGrant *g, bool *same_boot) {
        uint64_t u;

        if (streq(key, "module")) {
                if (!fsg_name_is_valid(v) || strlen(v) > FSG_NAME_MAX)
                        return -EINVAL;
                snprintf(g->module, sizeof(g->module), "%s", v);
                fsg_name_normalize(g->module);
                return KEY_MODULE;
        }
        if (streq(key, "boot")) {
                *same_boot = *boot_id && streq(v, boot_id);
                return KEY_BOOT;
        }
        if (streq(key, "device")) {
                if (!device_node_is_valid(v))
                        return -EINVAL;
                snprintf(g->device, sizeof(g->device), "%s", v);
                return KEY_DEVICE;
        }
        if (streq(key, "devnum"))
                return parse_devnum(v, g) < 0 ? -EINVAL : KEY_DEVNUM;
        if (streq(key, "deps")) {
                if (!deps_are_valid(v) || strlen(v) >= sizeof(g->deps))
                        return -EINVAL;
                snprintf(g->deps, sizeof(g->deps), "%s", v);
                return KEY_DEPS;
        }
        if (streq(key, "ends"))
                return parse_u64(v, &g->ends_usec) < 0 || g->ends_usec == 0 ? -EINVAL : KEY_ENDS;
        if (streq(key, "diskseq"))
                return parse_u64(v, &g->diskseq) < 0 || g->diskseq == 0 ? -EINVAL : KEY_DISKSEQ;
        if (streq(key, "uid")) {
                if (parse_u64(v, &u) < 0 || u > UINT32_MAX)
                        return -EINVAL;
                g->uid = (uint32_t) u;
                return KEY_UID;
        }
        if (streq(key, "since"))
                return parse_u64(v, &g->since_usec) < 0 ? -EINVAL : KEY_SINCE;
        if (streq(key, "until"))
                return parse_u64(v, &g->until_usec) < 0 ? -EINVAL : KEY_UNTIL;
        return -EINVAL;
}

int fsg_grant_parse(const char *text, const char *id, const char *boot_id, FsgGrant *ret) {
        assert(text);
        assert(id);
        assert(boot_id);
        assert(ret);

        FsgGrant g = {};
        unsigned seen = 0;
        const char *p = text;
        bool same_boot = false;

        if (!is_id(id))
                return -EINVAL;
        snprintf(g.id, sizeof(g.id), "%s", id);
        while (*p) {
                size_t len = strcspn(p, "\n");
                char line[256], *eq;
                int bit;

                if (len >= sizeof(line))
                        return -EINVAL;
                memcpy(line, p, len);
                line[len] = 0;
                p += len + (p[len] == '\n');
                if (line[0] == '#' || !line[0])
                        continue;
                eq = strchr(line, '=');
                if (!eq)
                        return -EINVAL;
                *eq++ = 0;
                bit = parse_field(line, eq, boot_id, &g, &same_boot);
                if (bit < 0 || (seen & (unsigned) bit))
                        return -EINVAL;
                seen |= (unsigned) bit;
        }
        /* The medium's three keys come together or not at all. */
        if ((seen & KEYS_NEEDED) != KEYS_NEEDED || ((seen & KEYS_MEDIUM) && (seen & KEYS_MEDIUM) != KEYS_MEDIUM) ||
            g.until_usec <= g.since_usec)
                return -EINVAL;
        g.other_boot = !same_boot;
        *ret = g;
        return 0;
}

static int cmp_until(const void *a, const void *b) {
        const FsgGrant *x = a, *y = b;
        return x->ends_usec < y->ends_usec ? -1 : x->ends_usec > y->ends_usec ? 1 : strcmp(x->id, y->id);
}

/* A record without ends= (an older fsgated wrote it): its end from now on the boot clock is
 * what is left of it on the wall clock now. */
static void legacy_ends(FsgGrant *g) {
        uint64_t real = fsg_realtime_usec(), boot = fsg_boottime_usec();

        g->ends_usec = g->until_usec > real ? boot + (g->until_usec - real) : boot ? boot : 1;
}

int fsg_grants_read(const FsgContext *c, FsgGrant **ret, size_t *ret_n, unsigned *ret_skipped, FsgError *e) {
        assert(c);
        assert(ret);
        assert(ret_n);

        _cleanup_closedir_ DIR *d = NULL;
        _cleanup_free_ FsgGrant *v = NULL;
        char boot[FSG_GRANT_ID_LEN + 1];
        unsigned skipped = 0, looked = 0;
        size_t n = 0;
        struct dirent *de;
        int r;

        r = fsg_opendir(c, FSG_GRANTS_DIR, &d);
        if (r == -ENOENT || r == -ENOTDIR) {
                *ret = NULL;
                *ret_n = 0;
                if (ret_skipped)
                        *ret_skipped = 0;
                return 0;
        }
        if (r < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Cannot read %s%s: %s", c->root, FSG_GRANTS_DIR, fsg_strerror(-r));
        current_boot_id(boot);
        v = calloc(FSG_GRANTS_MAX * 2, sizeof(FsgGrant));
        if (!v)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        while ((de = readdir(d)) && looked < FSG_GRANTS_MAX * 2) {
                _cleanup_close_ int fd = -1;
                char text[GRANT_RECORD_MAX + 1];
                ssize_t l;

                if (de->d_name[0] == '.')
                        continue;
                looked++;
                fd = fsg_open_regular_at(dirfd(d), de->d_name, GRANT_RECORD_MAX);
                l = fd < 0 ? -1 : read(fd, text, GRANT_RECORD_MAX);
                if (l < 0) {
                        skipped++;
                        continue;
                }
                text[l] = 0;
                if (memchr(text, 0, l) || fsg_grant_parse(text, de->d_name, boot, &v[n]) < 0) {
                        skipped++;
                        continue;
                }
                if (!v[n].ends_usec)
                        legacy_ends(&v[n]);
                n++;
        }
        qsort(v, n, sizeof(FsgGrant), cmp_until);
        *ret = TAKE_PTR(v);
        *ret_n = n;
        if (ret_skipped)
                *ret_skipped = skipped;
        return 0;
}

int fsg_grant_write(const FsgContext *c, const FsgGrant *g, FsgError *e) {
        assert(c);
        assert(g);

        _cleanup_free_ char *text = fsg_grant_format(g);
        _cleanup_close_ int dfd = -1;

        if (!text)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        dfd = fsg_open_dir(c, FSG_GRANTS_DIR, true);
        if (dfd < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Cannot make %s%s: %s", c->root, FSG_GRANTS_DIR, fsg_strerror(-dfd));
        return fsg_atomic_write(dfd, FSG_GRANTS_DIR, g->id, text, NULL, e);
}

int fsg_grant_remove(const FsgContext *c, const char *id, FsgError *e) {
        assert(c);
        assert(id);

        _cleanup_close_ int dfd = -1;

        if (!is_id(id))
                return fsg_error(e, FSG_ERR_INVALID_ARGS, "Not a grant's id: %s", id);
        dfd = fsg_open_dir(c, FSG_GRANTS_DIR, false);
        if (dfd == -ENOENT)
                return 0;
        if (dfd < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Cannot open %s%s: %s", c->root, FSG_GRANTS_DIR, fsg_strerror(-dfd));
        if (unlinkat(dfd, id, 0) < 0 && errno != ENOENT)
                return fsg_error(e, FSG_ERR_FAILED, "Cannot remove %s%s/%s: %m", c->root, FSG_GRANTS_DIR, id);
        if (fsync(dfd) < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Cannot sync %s%s: %m", c->root, FSG_GRANTS_DIR);
        return 0;
}

void fsg_grants_dir_remove_if_empty(const FsgContext *c) {
        _cleanup_close_ int dfd = fsg_open_dir(c, "/run/fsgate", false);

        if (dfd >= 0)
                (void) unlinkat(dfd, "grants", AT_REMOVEDIR);
}

bool fsg_grant_in_force(const FsgGrant *g, uint64_t boot_usec) {
        assert(g);

        return !g->other_boot && g->ends_usec > boot_usec && fsg_grant_medium_present(g);
}

const char *fsg_grant_time_string(uint64_t usec, char buf[static 32]) {
        time_t t = (time_t) (usec / 1000000);
        struct tm tm;

        if (!gmtime_r(&t, &tm) || !strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm))
                snprintf(buf, 32, "@%" PRIu64, usec / 1000000);
        return buf;
}
