/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <string.h>

#include "bootfs.h"
#include "name.h"

static const char * const boot_mount_points[] = { "/", "/usr", "/boot", "/efi", "/boot/efi" };

static bool is_boot_mount_point(char *path) {
        size_t l = strlen(path);

        /* fstab may say "/boot/"; the kernel never does. */
        while (l > 1 && path[l - 1] == '/')
                path[--l] = 0;
        for (size_t i = 0; i < ELEMENTSOF(boot_mount_points); i++)
                if (streq(path, boot_mount_points[i]))
                        return true;
        return false;
}

typedef struct ServedBy {
        const FsgState *s;
        const FsgEntry *x;
} ServedBy;

static int type_served_by(const char *type, void *userdata) {
        const ServedBy *sb = userdata;
        const FsgEntry *y = fsg_state_find_type(sb->s, type);

        return y && streq(y->module, sb->x->module);
}

/* 1 when x's module serves a type the field names (fsg_name_foreach_type_in_field()), 0, -ENOMEM. */
static int types_served_by(const FsgState *s, const FsgEntry *x, const char *types) {
        return fsg_name_foreach_type_in_field(types, type_served_by, &(ServedBy) { .s = s, .x = x });
}

/* fstab(5) and /proc/mounts share their first columns: "SPEC FILE TYPE ...". */
static int scan_table(const FsgContext *c, const FsgState *s, const FsgEntry *x, const char *abs, FsgBootFs *ret) {
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        ssize_t n;
        int r = fsg_fopen_regular(c, abs, FSG_TABLE_MAX, &f);

        /* An image has no /proc/mounts (fstab says what it boots from); the running system
         * without one cannot say what / is on. */
        if (r == -ENOENT && (streq(abs, "/etc/fstab") || c->root_fd >= 0))
                return 0;
        if (r < 0)
                return r;
        while ((n = fsg_read_line(f, '\n', FSG_LINE_MAX, &line, &cap)) > 0) {
                char *save = NULL, *spec = strtok_r(line, " \t\n", &save), *file, *type;

                if (!spec || *spec == '#')
                        continue;
                file = strtok_r(NULL, " \t\n", &save);
                type = file ? strtok_r(NULL, " \t\n", &save) : NULL;
                if (!type || !is_boot_mount_point(file))
                        continue;
                r = types_served_by(s, x, type);
                if (r < 0)
                        return r;
                if (r == 0)
                        continue;
                *ret = (FsgBootFs) {};
                snprintf(ret->mount_point, sizeof(ret->mount_point), "%s", file);
                snprintf(ret->type, sizeof(ret->type), "%s", type);
                snprintf(ret->table, sizeof(ret->table), "%s", abs);
                return 1;
        }
        return (int) n;
}

int fsg_boot_filesystem_of(const FsgContext *c, const FsgState *s, const FsgEntry *x, FsgBootFs *ret) {
        int r = scan_table(c, s, x, "/proc/mounts", ret);

        if (r != 0)
                return r;
        return scan_table(c, s, x, "/etc/fstab", ret);
}
