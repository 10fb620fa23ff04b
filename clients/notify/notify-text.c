/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>

#include "macro.h"
#include "notify-text.h"
#include "utf8.h"

void notify_blocked_done(NotifyBlocked *b) {
        char **fields[] = { &b->type, &b->module, &b->device, &b->source, &b->origin,
                            &b->label, &b->uuid, &b->vendor, &b->model };

        for (size_t i = 0; i < ELEMENTSOF(fields); i++) {
                free(*fields[i]);
                *fields[i] = NULL;
        }
        b->size = 0;
}

NotifyOutcome notify_classify_error(const char *name, const char *message) {
        name = name ?: "";
        message = message ?: "";

        /* polkit's own name for a dismissed dialog (and GLib-style "...Cancelled" names a
         * future fsgated might pass through). */
        if (strstr(name, "Cancelled") || strstr(name, "Canceled"))
                return NOTIFY_OUTCOME_CANCELLED;
        if (streq(name, "org.freedesktop.DBus.Error.AccessDenied") ||
            streq(name, "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired")) {
                /* polkit reports a dismissed dialog as "not authorized" plus the detail
                 * polkit.dismissed; a service that passes that on can only do so in the
                 * message of AccessDenied. */
                if (strcasestr(message, "cancel") || strcasestr(message, "dismiss"))
                        return NOTIFY_OUTCOME_CANCELLED;
                return NOTIFY_OUTCOME_REFUSED;
        }
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
                return "distribution default";
        if (streq(origin, "admin"))
                return "set by an administrator";
        if (streq(origin, "local"))
                return "local configuration";
        if (streq(origin, "runtime"))
                return "until the next reboot";
        return NULL;
}

/* "denied by FILE (distribution default)" and the like: why, in a person's words. */
static void put_denied_by(FILE *f, const NotifyBlocked *b) {
        const char *phrase = origin_phrase(b->origin);

        if (*b->source) {
                fprintf(f, "denied by %s", b->source);
                if (phrase)
                        fprintf(f, " (%s)", phrase);
        } else if (streq(b->origin, "cmdline"))
                fputs("denied on the kernel command line (modprobe.blacklist=)", f);
        else
                fputs("denied by this system's configuration", f);
}

/* /dev/sdb1 (“BACKUP”, SanDisk Cruzer, 16.0 GB) */
static void put_device(FILE *f, const NotifyBlocked *b) {
        char size[32];
        const char *sep = " (";

        fputs(b->device, f);
        if (*b->label) {
                fprintf(f, "%s“%s”", sep, b->label);
                sep = ", ";
        }
        if (*b->vendor || *b->model) {
                fprintf(f, "%s%s%s%s", sep, b->vendor, *b->vendor && *b->model ? " " : "", b->model);
                sep = ", ";
        }
        if (b->size > 0) {
                fprintf(f, "%s%s", sep, notify_format_size(b->size, size));
                sep = ", ";
        }
        if (!streq(sep, " ("))
                fputc(')', f);
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

#define OPEN_MEMSTREAM(f, buf, size)                    \
        FILE *f = open_memstream(&(buf), &(size));      \
        if (!(f))                                       \
                return -ENOMEM

int notify_text_blocked(const NotifyBlocked *b, bool server_has_actions, char **ret_summary, char **ret_body) {
        _cleanup_free_ char *summary = NULL;
        char *body = NULL;
        size_t size = 0;
        int r;

        if (format(&summary, "Filesystem blocked: %s", b->type) < 0)
                return -ENOMEM;
        OPEN_MEMSTREAM(f, body, size);
        if (*b->device) {
                put_device(f, b);
                fprintf(f, " holds a filesystem of type %s, which the kernel may not load on its own: module %s is ",
                        b->type, b->module);
        } else
                fprintf(f, "A filesystem of type %s could not be mounted: the kernel may not load module %s on its "
                        "own, it is ", b->type, b->module);
        put_denied_by(f, b);
        fputs(".\n", f);
        /* Without action buttons the person needs the way out in words. */
        if (server_has_actions)
                fputs("An administrator can allow it: Allow, or Allow once for this boot only.", f);
        else
                fprintf(f, "An administrator can allow it with: fsgatectl allow %s", b->module);
        r = finish(f, &body, ret_body);
        if (r < 0)
                return r;
        *ret_summary = TAKE_PTR(summary);
        return 0;
}

int notify_text_details(const NotifyBlocked *b, char **ret_summary, char **ret_body) {
        _cleanup_free_ char *summary = NULL;
        char *body = NULL, size_buf[32];
        size_t size = 0;
        int r;

        if (format(&summary, "Filesystem blocked: %s (details)", b->type) < 0)
                return -ENOMEM;
        OPEN_MEMSTREAM(f, body, size);
        if (*b->device)
                fprintf(f, "Device: %s\n", b->device);
        if (*b->label)
                fprintf(f, "Label: %s\n", b->label);
        if (*b->uuid)
                fprintf(f, "UUID: %s\n", b->uuid);
        if (*b->vendor || *b->model)
                fprintf(f, "Drive: %s%s%s\n", b->vendor, *b->vendor && *b->model ? " " : "", b->model);
        if (b->size > 0)
                fprintf(f, "Size: %s\n", notify_format_size(b->size, size_buf));
        fprintf(f, "Filesystem type: %s\n", b->type);
        fprintf(f, "Kernel module: %s\n", b->module);
        fputs("Why: ", f);
        put_denied_by(f, b);
        fputs("\n", f);
        fprintf(f, "Allow: the kernel may load %s whenever it is needed, from now on.\n", b->module);
        fprintf(f, "Allow once: load %s now, until the next reboot, changing no configuration.\n", b->module);
        fputs("Both ask for an administrator's password.\n", f);
        fprintf(f, "In a terminal: fsgatectl status %s; fsgatectl allow %s", b->module, b->module);
        r = finish(f, &body, ret_body);
        if (r < 0)
                return r;
        *ret_summary = TAKE_PTR(summary);
        return 0;
}

int notify_text_outcome(const NotifyBlocked *b, NotifyRequest req, NotifyOutcome outcome, const char *message,
                        char **ret_summary, char **ret_body) {
        _cleanup_free_ char *summary = NULL, *body = NULL;
        const char *again = *b->device ? b->device : "it";
        bool load = req == NOTIFY_REQUEST_LOAD;
        int r;

        message = message && *message ? message : "no reason given";
        switch (outcome) {
        case NOTIFY_OUTCOME_ALLOWED:
                r = format(&summary, "%s %s — mount the device again", b->type,
                             load ? "loaded for this boot" : "allowed");
                if (r >= 0 && load)
                        r = format(&body, "Module %s is loaded until the next reboot; the configuration is "
                                     "unchanged. Mount %s again.", b->module, again);
                else if (r >= 0)
                        r = format(&body, "The kernel may now load module %s when a filesystem of type %s is "
                                     "mounted. Mount %s again.", b->module, b->type, again);
                break;
        case NOTIFY_OUTCOME_REFUSED:
                r = format(&summary, "%s not %s", b->type, load ? "loaded" : "allowed");
                if (r >= 0)
                        r = format(&body, "Refused: %s", message);
                break;
        case NOTIFY_OUTCOME_CANCELLED:
                r = format(&summary, "%s: cancelled", b->type);
                if (r >= 0)
                        r = format(&body, "Authentication was cancelled; nothing was changed.");
                break;
        default:
                r = format(&summary, "%s could not be %s", b->type, load ? "loaded" : "allowed");
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
