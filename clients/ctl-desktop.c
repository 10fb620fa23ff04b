/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include "context.h"
#include "ctl.h"
#include "strv.h"

/* Would a desktop mount a medium with this filesystem for its user without asking? That is
 * udisks2's question, and the answer is this machine's, not the kernel source's: udisks2
 * offers a mount only for what udev's blkid builtin recognized as a filesystem, and mounts
 * it for the active local user as its polkit action filesystem-mount says (Debian and
 * openSUSE ship allow_active yes). Polkit rules (JavaScript in rules.d) may decide otherwise;
 * they are not evaluated here, and the row says so. */

#define UDISKS_POLICY "/usr/share/polkit-1/actions/org.freedesktop.UDisks2.policy"
#define UDISKS_ACTION "org.freedesktop.udisks2.filesystem-mount"
#define POLICY_MAX (UINT64_C(1) << 20)
#define BLKID_LIST_MAX 16384

static bool udisks_installed(const FsgContext *c) {
        static const char * const daemons[] = { "/usr/libexec/udisks2/udisksd", "/usr/lib/udisks2/udisksd" };
        char path[PATH_MAX];

        for (size_t i = 0; i < ELEMENTSOF(daemons); i++) {
                snprintf(path, sizeof(path), "%s%s", c->root, daemons[i]);
                if (access(path, F_OK) == 0)
                        return true;
        }
        return false;
}

/* The filesystem types libblkid recognizes (blkid -k, util-linux 2.37 and later), one a line
 * in *ret; NULL when blkid cannot say. */
static int blkid_types(char ***ret) {
        /* util-linux's, by its path (merged /usr: /sbin is /usr/sbin): not whatever PATH finds. */
        char *argv[] = { (char *) "/sbin/blkid", (char *) "-k", NULL };
        char buf[BLKID_LIST_MAX];
        int status, r;

        *ret = NULL;
        r = ctl_spawn_output(argv, buf, sizeof(buf), &status);
        if (r < 0)
                return r;
        if (status != 0)
                return -ENOEXEC;
        for (char *save = NULL, *w = strtok_r(buf, "\n", &save); w; w = strtok_r(NULL, "\n", &save))
                if (strv_extend(ret, w) < 0)
                        return -ENOMEM;
        return 0;
}

/* allow_active of udisks2's filesystem-mount in its policy file: "yes", "auth_admin", ...
 * into buf; false when the file or the action is not there. */
static bool mount_allow_active(const FsgContext *c, char *buf, size_t size) {
        _cleanup_free_ char *xml = NULL;
        const char *action, *end, *v, *close_tag;

        if (fsg_read_regular(c, UDISKS_POLICY, POLICY_MAX, &xml, NULL) < 0)
                return false;
        action = strstr(xml, "<action id=\"" UDISKS_ACTION "\"");
        if (!action || !(end = strstr(action, "</action>")))
                return false;
        v = strstr(action, "<allow_active>");
        if (!v || v > end)
                return false;
        v += strlen("<allow_active>");
        close_tag = strstr(v, "</allow_active>");
        if (!close_tag || close_tag > end)
                return false;
        /* XML allows blanks around the word. */
        while (v < close_tag && strchr(" \t\r\n", *v))
                v++;
        while (close_tag > v && strchr(" \t\r\n", close_tag[-1]))
                close_tag--;
        if ((size_t) (close_tag - v) >= size)
                return false;
        snprintf(buf, size, "%.*s", (int) (close_tag - v), v);
        return true;
}

int ctl_desktop_mount_row(const CtlOptions *o, const FsgEntry *x, char **ret_row) {
        _cleanup_(fsg_context_freep) FsgContext *c = NULL;
        _cleanup_strv_free_ char **known = NULL;
        const char *type = NULL;
        char allow[64];
        FsgError e = {};
        int r;

        *ret_row = NULL;
        /* An image's udisks2 does not run, and blkid here is not the image's. */
        if (o->root)
                return 0;
        if (fsg_context_new(o->root, o->kernel_release, &c, &e) < 0 || !udisks_installed(c))
                return 0;       /* no udisks2: no desktop mounts media on its own */
        r = blkid_types(&known);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                r = asprintf(ret_row, "%s", _("not known: blkid -k gave no list of the types it recognizes"));
        else {
                for (char **t = x->types; t && *t && !type; t++)
                        if (strv_contains(known, *t))
                                type = *t;
                if (!type)
                        /* TRANSLATORS: the "Desktop mount" row of status. */
                        r = asprintf(ret_row, "%s", _("no: blkid does not recognize it, so udisks2 offers no mount"));
                else if (!mount_allow_active(c, allow, sizeof(allow)))
                        /* TRANSLATORS: %1$s a filesystem type, %2$s a polkit action id. */
                        r = asprintf(ret_row, _("blkid recognizes %1$s; udisks2's policy names no %2$s action"), type,
                                     UDISKS_ACTION);
                else if (streq(allow, "yes"))
                        /* TRANSLATORS: %1$s a filesystem type, %2$s a polkit action id. */
                        r = asprintf(ret_row, _("yes: udisks2 mounts a %1$s medium for the active local user without "
                                                "a password (%2$s: allow_active yes; polkit rules may say otherwise)"),
                                     type, UDISKS_ACTION);
                else
                        /* TRANSLATORS: %1$s a filesystem type, %2$s a polkit action id, %3$s its value
                         * (auth_admin, no, ...). */
                        r = asprintf(ret_row, _("only as polkit decides: udisks2 can mount a %1$s medium; %2$s is "
                                                "allow_active %3$s"),
                                     type, UDISKS_ACTION, ctl_esc(allow));
        }
        return r < 0 ? -ENOMEM : 0;
}
