/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>

#include "fsg-error.h"
#include "macro.h"
#include "notify-text.h"
#include "risk.h"
#include "utf8.h"

void notify_blocked_done(NotifyBlocked *b) {
        fsg_block_report_clear(b);
}

NotifyScope notify_scope(const NotifyBlocked *b, const char *seat) {
        /* The kernel's request_module() runs its helper in the kernel's context: nothing in
         * it says who mounted. Anything but a device report is that, failing safe. */
        if (!streq_ptr(b->cause, "device") || !b->seat || !*b->seat || !b->device || !*b->device)
                return NOTIFY_SCOPE_INFO;
        return seat && streq(seat, b->seat) ? NOTIFY_SCOPE_ASK : NOTIFY_SCOPE_NONE;
}

NotifyOutcome notify_classify_error(const char *name) {
        name = name ?: "";

        /* fsgated's name for a dismissed dialog (polkit's detail polkit.dismissed), and polkit's
         * own, should a caller ever pass that on. By name: the message is for people, and
         * translated or reworded at will. */
        if (fsg_error_from_dbus_name(name) == FSG_ERR_AUTH_CANCELLED ||
            streq(name, "org.freedesktop.PolicyKit1.Error.Cancelled"))
                return NOTIFY_OUTCOME_CANCELLED;
        if (streq(name, "org.freedesktop.DBus.Error.AccessDenied") ||
            streq(name, "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired"))
                return NOTIFY_OUTCOME_REFUSED;
        return NOTIFY_OUTCOME_FAILED;
}

/* Unicode's format characters (category Cf, Unicode 15.0): invisible, among them the bidi
 * controls that reorder what follows them and the zero-width ones that hide a difference. A
 * label has no honest use for them on one line of a notification. */
static const struct {
        uint32_t first, last;
} format_chars[] = {
        { 0x00ad, 0x00ad },   { 0x0600, 0x0605 },   { 0x061c, 0x061c },   { 0x06dd, 0x06dd },
        { 0x070f, 0x070f },   { 0x0890, 0x0891 },   { 0x08e2, 0x08e2 },   { 0x180e, 0x180e },
        { 0x200b, 0x200f },   { 0x202a, 0x202e },   { 0x2060, 0x2064 },   { 0x2066, 0x206f },
        { 0xfeff, 0xfeff },   { 0xfff9, 0xfffb },   { 0x110bd, 0x110bd }, { 0x110cd, 0x110cd },
        { 0x13430, 0x1343f }, { 0x1bca0, 0x1bca3 }, { 0x1d173, 0x1d17a }, { 0xe0001, 0xe0001 },
        { 0xe0020, 0xe007f },
};

static bool is_format(uint32_t cp) {
        for (size_t i = 0; i < ELEMENTSOF(format_chars); i++)
                if (cp >= format_chars[i].first && cp <= format_chars[i].last)
                        return true;
        return false;
}

/* What ends a line somewhere: C0 and C1 controls (tab, newline, NEL), DEL, and Unicode's
 * line and paragraph separators. */
static bool is_break(uint32_t cp) {
        return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029;
}

/* Leading and trailing blanks only make the line look odd. */
static size_t trim_end(const char *t, size_t n) {
        while (n > 0 && t[n - 1] == ' ')
                n--;
        return n;
}

char *notify_clean(const char *s, size_t max) {
        static const char ellipsis[] = "…", replacement[] = "\xef\xbf\xbd"; /* U+FFFD */
        size_t o = 0, chars = 0, keep = 0;
        char *t;

        assert(max > 0);
        s = s ?: "";
        /* An invalid byte grows to the three of U+FFFD; nothing else grows. */
        t = malloc(strlen(s) * 3 + sizeof(ellipsis));
        if (!t)
                return NULL;
        /* A label read from a stick is the stick's to choose: it may break the line, reorder
         * it, hide characters or not be UTF-8 at all. What is left is one inert line. */
        while (*s) {
                uint32_t cp;
                size_t n = fsg_utf8_decode(s, &cp);
                const char *ch = s;
                size_t len = n;

                if (n == 0) {
                        ch = replacement;
                        len = strlen(replacement);
                        n = 1;
                } else if (is_format(cp)) {
                        s += n;
                        continue;
                } else if (is_break(cp)) {
                        ch = " ";
                        len = 1;
                }
                s += n;
                if (o == 0 && *ch == ' ')
                        continue;
                memcpy(t + o, ch, len);
                o += len;
        }
        o = trim_end(t, o);

        /* Past max characters, keep max - 1 and end with the ellipsis; cut only where a
         * character starts (t is valid UTF-8 by now). */
        for (size_t i = 0; i < o; i++)
                if (((unsigned char) t[i] & 0xc0) != 0x80 && chars++ == max - 1)
                        keep = i;
        if (chars > max) {
                o = trim_end(t, keep);
                memcpy(t + o, ellipsis, strlen(ellipsis));
                o += strlen(ellipsis);
        }
        t[o] = 0;
        return t;
}

const char *notify_format_size(uint64_t bytes, char buf[static 32]) {
        static const char * const units[] = { "kB", "MB", "GB", "TB", "PB", "EB" };
        double v = (double) bytes;
        size_t u = 0;

        if (bytes < 1000) {
                snprintf(buf, 32, "%" PRIu64 " B", bytes);
                return buf;
        }
        v /= 1000;
        while (v >= 999.95 && u + 1 < ELEMENTSOF(units)) {
                v /= 1000;
                u++;
        }
        snprintf(buf, 32, "%.1f %s", v, units[u]);
        return buf;
}

char *notify_markup_escape(const char *body) {
        char *out = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&out, &size);

        if (!f)
                return NULL;
        for (const char *p = body; *p; p++)
                switch (*p) {
                case '&': fputs("&amp;", f); break;
                case '<': fputs("&lt;", f); break;
                case '>': fputs("&gt;", f); break;
                default: fputc(*p, f);
                }
        if (fclose(f) != 0) {
                free(out);
                return NULL;
        }
        return out;
}

/* asprintf() leaves *ret undefined on failure; _cleanup_free_ needs NULL. */
_printf_(2, 3) static int format(char **ret, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(ret, fmt, ap);
        va_end(ap);
        if (r < 0) {
                *ret = NULL;
                return -ENOMEM;
        }
        return 0;
}

static const char *origin_phrase(const char *origin) {
        if (streq(origin, "vendor"))
                return _("distribution default");
        if (streq(origin, "admin"))
                return _("set by an administrator");
        if (streq(origin, "local"))
                return _("local configuration");
        if (streq(origin, "runtime"))
                return _("until the next reboot");
        return NULL;
}

/* "denied by FILE (distribution default)" and the like: the technical why, for Details. */
static void put_denied_by(FILE *f, const NotifyBlocked *b) {
        const char *phrase = origin_phrase(b->origin);

        if (*b->source) {
                fprintf(f, _("denied by %s"), b->source);
                if (phrase)
                        fprintf(f, " (%s)", phrase);
        } else if (streq(b->origin, "cmdline"))
                fputs(_("denied on the kernel command line (modprobe.blacklist=)"), f);
        else
                fputs(_("denied by this system's configuration"), f);
}

/* Why, for a person: the end of "… because its filesystem, hfs, ___." */
static const char *why_phrase(const NotifyBlocked *b) {
        /* TRANSLATORS: ends "… was not mounted because its filesystem, hfs, ___." */
        if (streq(b->origin, "admin"))
                return _("was turned off by an administrator");
        /* TRANSLATORS: ends "… was not mounted because its filesystem, hfs, ___." */
        if (streq(b->origin, "runtime"))
                return _("is turned off until the computer restarts");
        /* TRANSLATORS: ends "… was not mounted because its filesystem, hfs, ___." */
        if (streq(b->origin, "cmdline"))
                return _("is turned off on the kernel command line");
        /* TRANSLATORS: ends "… was not mounted because its filesystem, hfs, ___." */
        return _("is turned off on this computer");
}

const char *notify_label_details(void) {
        return _("Details");
}

const char *notify_label_dismiss(void) {
        return _("Not now");
}

const char *notify_label_allow(void) {
        return _("Allow");
}

const char *notify_label_allow_once(void) {
        return _("Allow once");
}

const char *notify_label_open_read_only(void) {
        return _("Open read-only");
}

char *notify_device_name(const NotifyBlocked *b) {
        char *s;
        int r;

        if (!*b->device)
                return strdup("");
        if (*b->label)
                /* TRANSLATORS: a drive's label, in your language's quotation marks: “BACKUP”. */
                r = asprintf(&s, _("“%s”"), b->label);
        else if (*b->vendor || *b->model)
                r = asprintf(&s, "%s%s%s", b->vendor, *b->vendor && *b->model ? " " : "", b->model);
        else
                /* TRANSLATORS: a drive without a label, vendor or model: "The drive /dev/sdb1". */
                r = asprintf(&s, _("The drive %s"), b->device);
        return r < 0 ? NULL : s;
}

/* The name a person knows, then what else identifies the drive:
 * “BACKUP” (SanDisk Cruzer, 16.0 GB, /dev/sdb1). */
static int put_device(FILE *f, const NotifyBlocked *b) {
        _cleanup_free_ char *name = notify_device_name(b);
        char size[32];
        const char *sep = " (";

        if (!name)
                return -ENOMEM;
        fputs(name, f);
        if (*b->label && (*b->vendor || *b->model)) {
                fprintf(f, "%s%s%s%s", sep, b->vendor, *b->vendor && *b->model ? " " : "", b->model);
                sep = ", ";
        }
        if (b->size > 0) {
                fprintf(f, "%s%s", sep, notify_format_size(b->size, size));
                sep = ", ";
        }
        /* The node is in the name already when nothing else names the drive. */
        if (*b->label || *b->vendor || *b->model) {
                fprintf(f, "%s%s", sep, b->device);
                sep = ", ";
        }
        if (!streq(sep, " ("))
                fputc(')', f);
        return 0;
}

/* open_memstream() sets *buf only at fclose(): pass its address, not its value. */
static int finish(FILE *f, char **buf, char **ret) {
        if (fclose(f) != 0) {
                free(*buf);
                *buf = NULL;
                return -ENOMEM;
        }
        *ret = TAKE_PTR(*buf);
        return 0;
}

/* One sentence of what the kernel source says of the module, when it says something worth a
 * second thought: the person deciding on Allow should know "orphaned upstream", in their
 * language. The title stays the kernel's own name for the module. */
static void put_risk(FILE *f, const NotifyBlocked *b, const char *before) {
        const FsgRisk *r = fsg_risk_find(b->module);
        char phrase[256];

        if (!fsg_risk_is_notable(r))
                return;
        fsg_risk_phrase(r, phrase, sizeof(phrase));
        /* TRANSLATORS: %1$s the module, %2$s its Kconfig title ("Apple Macintosh file system support"),
         * %3$s the notable facts, translated ("orphaned upstream; deprecated"). */
        fputs(before, f);
        fprintf(f, _("%1$s (%2$s): %3$s."), b->module, r->title, phrase);
        fputs(*before ? "" : "\n", f);
}

#define OPEN_MEMSTREAM(f, buf, size)                    \
        FILE *f = open_memstream(&(buf), &(size));      \
        if (!(f))                                       \
                return -ENOMEM

int notify_text_blocked(const NotifyBlocked *b, bool ask, bool server_has_actions, char **ret_summary,
                        char **ret_body) {
        _cleanup_free_ char *summary = NULL, *name = NULL;
        char *body = NULL;
        size_t size = 0;
        int r;

        name = notify_device_name(b);
        if (!name)
                return -ENOMEM;
        if (*b->device)
                /* TRANSLATORS: the summary; %s is how a person knows the drive: “BACKUP”,
                 * "SanDisk Cruzer" or "The drive /dev/sdb1". */
                r = format(&summary, _("%s was not mounted"), name);
        else
                /* TRANSLATORS: the summary when no drive is known (a failed mount); %s is a
                 * filesystem type such as hfs. */
                r = format(&summary, _("A filesystem of type %s was not mounted"), b->type);
        if (r < 0)
                return r;

        /* One sentence for why, one for what the actions do: the whole story, whatever the
         * server shows of the actions (buttons, a menu, nothing). */
        OPEN_MEMSTREAM(f, body, size);
        if (*b->device) {
                _cleanup_free_ char *drive = NULL;
                size_t drive_size = 0;
                FILE *g = open_memstream(&drive, &drive_size);

                if (!g) {
                        fclose(f);
                        free(body);
                        return -ENOMEM;
                }
                r = put_device(g, b);
                if (fclose(g) != 0 || r < 0) {
                        fclose(f);
                        free(body);
                        return -ENOMEM;
                }
                /* TRANSLATORS: %1$s the drive (“BACKUP” (SanDisk Cruzer, 16.0 GB, /dev/sdb1)),
                 * %2$s the filesystem type, %3$s why (e.g. "is turned off on this computer"). */
                fprintf(f, _("%1$s was not mounted because its filesystem, %2$s, %3$s."), drive, b->type,
                        why_phrase(b));
        } else
                /* TRANSLATORS: %1$s the filesystem type, %2$s why (e.g. "is turned off on this
                 * computer"). */
                fprintf(f, _("A filesystem of type %1$s could not be mounted because it %2$s."), b->type,
                        why_phrase(b));
        put_risk(f, b, " ");
        fputc('\n', f);
        if (!ask)
                /* TRANSLATORS: a block fsgate cannot attribute (a mount request, maybe from a
                 * user namespace); %1$s the filesystem type, %2$s the module name. */
                fprintf(f, _("It may have been caused by another user or by a program in a user namespace: fsgate "
                             "cannot tell who, so it offers no Allow here. If you need %1$s, an administrator can "
                             "turn it on with the command: fsgatectl allow %2$s"), b->type, b->module);
        else if (!server_has_actions)
                /* TRANSLATORS: the server shows no actions; %s is the module name. */
                fprintf(f, _("An administrator can turn it on with the command: fsgatectl allow %s"), b->module);
        else if (*b->device)
                /* TRANSLATORS: "Open read-only", "Allow" and "Allow once" are the actions' labels; %s the
                 * filesystem. */
                fprintf(f, _("Open read-only turns %1$s on for this drive only, until it is removed, and mounts it "
                             "read-only; Allow turns %1$s on from now on and mounts the drive; Allow once does the "
                             "same until the computer restarts. Each asks for an administrator's password."),
                        b->type);
        else
                /* TRANSLATORS: "Allow" and "Allow once" are the actions' labels; %s the filesystem. */
                fprintf(f, _("Allow turns %s on from now on, Allow once until the computer restarts; then mount it "
                             "again. Both ask for an administrator's password."), b->type);
        r = finish(f, &body, ret_body);
        if (r < 0)
                return r;
        *ret_summary = TAKE_PTR(summary);
        return 0;
}

int notify_text_details(const NotifyBlocked *b, size_t n, bool ask, char **ret_summary, char **ret_body) {
        _cleanup_free_ char *summary = NULL;
        char *body = NULL, size_buf[32];
        size_t size = 0;
        int r;

        /* TRANSLATORS: the summary of the details; %s is a filesystem type such as hfs. */
        if (format(&summary, _("Filesystem %s: details"), b->type) < 0)
                return -ENOMEM;
        OPEN_MEMSTREAM(f, body, size);
        if (*b->device)
                fprintf(f, _("Device: %s\n"), b->device);
        if (*b->label)
                fprintf(f, _("Label: %s\n"), b->label);
        if (*b->uuid)
                fprintf(f, _("UUID: %s\n"), b->uuid);
        if (*b->vendor || *b->model) {
                _cleanup_free_ char *drive = NULL;
                if (asprintf(&drive, "%s%s%s", b->vendor, *b->vendor && *b->model ? " " : "", b->model) < 0) {
                        fclose(f);
                        free(body);
                        return -ENOMEM;
                }
                fprintf(f, _("Drive: %s\n"), drive);
        }
        if (b->size > 0)
                fprintf(f, _("Size: %s\n"), notify_format_size(b->size, size_buf));
        for (size_t k = 1; k < n; k++)
                /* TRANSLATORS: another drive with the same filesystem, blocked meanwhile. */
                fprintf(f, _("Also not mounted: %s\n"), b[k].device);
        fprintf(f, _("Filesystem type: %s\n"), b->type);
        fprintf(f, _("Kernel module: %s\n"), b->module);
        put_risk(f, b, "");
        fputs(_("Why: "), f);
        put_denied_by(f, b);
        fputc('\n', f);
        if (notify_scope(b, NULL) == NOTIFY_SCOPE_INFO)
                fputs(_("Cause: a mount request; any user may have made it, also in a user namespace (fsgate "
                        "cannot tell who)\n"), f);
        else
                /* TRANSLATORS: %s is a seat name as logind knows it, such as seat0. */
                fprintf(f, _("Cause: a drive that appeared at %s\n"), b->seat);
        if (ask) {
                if (*b->device)
                        /* TRANSLATORS: %s is a module name. */
                        fprintf(f, _("Open read-only: load %s for this drive only and mount it read-only; once the "
                                     "drive is removed, %s is unloaded again.\n"), b->module, b->module);
                fprintf(f, _("Allow: the kernel may load %s whenever it is needed, from now on.\n"), b->module);
                fprintf(f, _("Allow once: load %s now, until the next reboot, changing no configuration.\n"),
                        b->module);
                fputs(*b->device ? _("Each asks for an administrator's password.\n") :
                           _("Both ask for an administrator's password.\n"), f);
        }
        fprintf(f, _("In a terminal: fsgatectl status %s; fsgatectl allow %s"), b->module, b->module);
        r = finish(f, &body, ret_body);
        if (r < 0)
                return r;
        *ret_summary = TAKE_PTR(summary);
        return 0;
}

/* Several drives of one question, all mounted: the summary names each of two (issue 41: the
 * second stick was left to the body), the first and how many more beyond that. */
static int summary_mounted_several(const NotifyBlocked *b, size_t n, bool read_only, char **ret) {
        /* "The drive /dev/sdb1 and /dev/sdc1": the second without "The drive" again. */
        _cleanup_free_ char *first = notify_device_name(&b[0]),
                            *second = *b[1].label || *b[1].vendor || *b[1].model ? notify_device_name(&b[1]) :
                                                                                    strdup(b[1].device);

        if (!first || !second)
                return -ENOMEM;
        if (n == 2)
                /* TRANSLATORS: %1$s and %2$s are how a person knows the drives (“BACKUP”, "SanDisk Cruzer"). */
                return format(ret, read_only ? _("%1$s and %2$s are open, read-only") : _("%1$s and %2$s are mounted"),
                              first, second);
        /* TRANSLATORS: %1$s is how a person knows the first drive; the plural follows %2$zu, the others. */
        return format(ret, read_only ? ngettext("%1$s and %2$zu other drive are open, read-only",
                                                "%1$s and %2$zu other drives are open, read-only", n - 1) :
                                       ngettext("%1$s and %2$zu other drive are mounted",
                                                "%1$s and %2$zu other drives are mounted", n - 1),
                      first, n - 1);
}

/* What an Allow did, then where each drive is now. */
static int outcome_allowed(const NotifyBlocked *b, NotifyRequest req, const NotifyMount *mounts, size_t n_mounts,
                           char **ret_summary, char **ret_body) {
        bool load = req == NOTIFY_REQUEST_LOAD, read_only = req == NOTIFY_REQUEST_READ_ONLY;
        _cleanup_free_ char *summary = NULL, *first = NULL;
        char *body = NULL;
        size_t size = 0, n_mounted = 0;
        int r;

        for (size_t k = 0; k < n_mounts; k++)
                if (mounts[k].where)
                        n_mounted++;
        first = notify_device_name(b);
        if (!first)
                return -ENOMEM;
        if (n_mounts > 1 && n_mounted == n_mounts)
                r = summary_mounted_several(b, n_mounts, read_only, &summary);
        else if (n_mounts > 0 && n_mounted == n_mounts && read_only)
                /* TRANSLATORS: %s is how a person knows the drive (“BACKUP”, "SanDisk Cruzer"). */
                r = format(&summary, _("%s is open, read-only"), first);
        else if (n_mounts > 0 && n_mounted == n_mounts)
                /* TRANSLATORS: %s is how a person knows the drive (“BACKUP”, "SanDisk Cruzer"). */
                r = format(&summary, _("%s is mounted"), first);
        else if (read_only)
                /* TRANSLATORS: %s is a filesystem type such as hfs. */
                r = format(&summary, _("%s allowed for this drive"), b->type);
        else if (load)
                /* TRANSLATORS: %s is a filesystem type such as hfs. */
                r = format(&summary, _("%s allowed until the computer restarts"), b->type);
        else
                /* TRANSLATORS: %s is a filesystem type such as hfs. */
                r = format(&summary, _("%s allowed"), b->type);
        if (r < 0)
                return r;

        OPEN_MEMSTREAM(f, body, size);
        if (read_only)
                fprintf(f, _("Module %s is loaded for this drive only; once it is removed, %s is unloaded again. "
                             "The configuration is unchanged."), b->module, b->module);
        else if (load)
                fprintf(f, _("Module %s is loaded until the next reboot; the configuration is unchanged."),
                        b->module);
        else
                fprintf(f, _("The kernel may now load module %s when a filesystem of type %s is mounted."),
                        b->module, b->type);
        if (n_mounts == 0)
                fprintf(f, " %s", *b->device ? _("Mount the drive again.") : _("Mount it again."));
        for (size_t k = 0; k < n_mounts; k++) {
                _cleanup_free_ char *name = notify_device_name(&b[k]);

                if (!name) {
                        fclose(f);
                        free(body);
                        return -ENOMEM;
                }
                fputc('\n', f);
                if (mounts[k].where && read_only)
                        /* TRANSLATORS: %1$s the drive, %2$s the directory it is mounted on. */
                        fprintf(f, _("%1$s is mounted read-only at %2$s."), name, mounts[k].where);
                else if (mounts[k].where)
                        /* TRANSLATORS: %1$s the drive, %2$s the directory it is mounted on. */
                        fprintf(f, _("%1$s is mounted at %2$s."), name, mounts[k].where);
                else if (mounts[k].error)
                        /* TRANSLATORS: %1$s the drive, %2$s udisks2's reason. */
                        fprintf(f, _("%1$s could not be mounted: %2$s"), name, mounts[k].error);
                else
                        /* TRANSLATORS: %s the drive (“BACKUP”, "The drive /dev/sdb1"); nothing
                         * mounted it for the person (no udisks2). */
                        fprintf(f, _("%s: mount it again."), name);
        }
        r = finish(f, &body, ret_body);
        if (r < 0)
                return r;
        *ret_summary = TAKE_PTR(summary);
        return 0;
}

int notify_text_outcome(const NotifyBlocked *b, NotifyRequest req, NotifyOutcome outcome, const char *message,
                        const NotifyMount *mounts, size_t n_mounts, char **ret_summary, char **ret_body) {
        _cleanup_free_ char *summary = NULL, *body = NULL;
        bool load = req == NOTIFY_REQUEST_LOAD;
        int r;

        message = message && *message ? message : _("no reason given");
        switch (outcome) {
        case NOTIFY_OUTCOME_ALLOWED:
                return outcome_allowed(b, req, mounts, n_mounts, ret_summary, ret_body);
        case NOTIFY_OUTCOME_REFUSED:
                r = format(&summary, _("%s not allowed"), b->type);
                /* In words, once, in the person's language: polkit's or the service's reason is
                 * English and repeats it (the log has it, notify-call.c). */
                if (r >= 0)
                        r = format(&body, "%s", _("Not authorized; nothing was changed."));
                break;
        case NOTIFY_OUTCOME_CANCELLED:
                r = format(&summary, _("%s: cancelled"), b->type);
                if (r >= 0)
                        r = format(&body, "%s", _("The password dialog was closed; nothing was changed."));
                break;
        default:
                r = format(&summary, req == NOTIFY_REQUEST_READ_ONLY ? _("%s could not be opened") :
                                     load ? _("%s could not be loaded") : _("%s could not be allowed"), b->type);
                if (r >= 0)
                        r = format(&body, "%s", message);
                break;
        }
        if (r < 0)
                return -ENOMEM;
        *ret_summary = TAKE_PTR(summary);
        *ret_body = TAKE_PTR(body);
        return 0;
}
