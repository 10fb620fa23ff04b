/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>

#include "fsg-error.h"
#include "macro.h"
#include "notify-text.h"
#include "notify-text-util.h"
#include "risk.h"
#include "shell-quote.h"
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

/* asprintf() leaves *ret undefined on failure; _cleanup_free_ needs NULL. */
int notify_format(char **ret, const char *fmt, ...) {
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

typedef enum Label {
        LABEL_DETAILS,
        LABEL_CHOICES,
        LABEL_OPEN_SAFELY,
        LABEL_ALLOW,
        LABEL_ALLOW_ONCE,
        LABEL_OPEN_READ_ONLY,
        _LABEL_MAX,
} Label;

/* The actions' labels; the texts name them, in the words of these. */
static const char * const labels[_LABEL_MAX] = {
        [LABEL_DETAILS]        = N_("Details"),
        [LABEL_CHOICES]        = N_("Other choices…"),
        [LABEL_OPEN_SAFELY]    = N_("Open safely"),
        [LABEL_ALLOW]          = N_("Allow"),
        [LABEL_ALLOW_ONCE]     = N_("Allow once"),
        [LABEL_OPEN_READ_ONLY] = N_("Open read-only"),
};

/* One action at a[*n]: its id and its label, translated. */
static void put_action(const char **a, size_t *n, const char *id, Label label) {
        a[(*n)++] = id;
        a[(*n)++] = _(labels[label]);
}

/* The question: Open safely (nothing loaded; a driver of its own reads the stick) when the
 * stick's type has a route, then Open read-only (its module for this stick only), then the
 * way to the rest. The changes of the configuration are behind "Other choices…", which is
 * also the default action. The safest first: a server may take the first on Enter, and a
 * person the first that fits. Without a drive (not asked in practice: only a stick asks),
 * the choices about the filesystem, the smaller first. */
static size_t actions_blocked(bool device, bool open_safely, const char **a) {
        size_t n = 0;

        put_action(a, &n, "default", LABEL_CHOICES);
        if (!device) {
                put_action(a, &n, "allow-once", LABEL_ALLOW_ONCE);
                put_action(a, &n, "allow", LABEL_ALLOW);
                return n;
        }
        if (open_safely)
                put_action(a, &n, "open-safely", LABEL_OPEN_SAFELY);
        put_action(a, &n, "open-read-only", LABEL_OPEN_READ_ONLY);
        put_action(a, &n, "choices", LABEL_CHOICES);
        return n;
}

/* The choices' buttons: the question's first (the safest: Open safely, else Open read-only),
 * then Allow once and Allow; its body names every choice and the commands. */
static size_t actions_choices(bool device, bool open_safely, const char **a) {
        size_t n = 0;

        if (open_safely)
                put_action(a, &n, "open-safely", LABEL_OPEN_SAFELY);
        else if (device)
                put_action(a, &n, "open-read-only", LABEL_OPEN_READ_ONLY);
        put_action(a, &n, "allow-once", LABEL_ALLOW_ONCE);
        put_action(a, &n, "allow", LABEL_ALLOW);
        return n;
}

void notify_actions(NoteKind kind, bool ask, bool device, bool open_safely, NotifyRequest request,
                    NotifyOutcome outcome, const char *ret[static NOTIFY_ACTIONS_MAX]) {
        size_t n = 0;

        open_safely = open_safely && device;
        if (kind == NOTE_BLOCKED && !ask) {
                /* Information: nothing that changes anything, not even a way to ask for it. */
                put_action(ret, &n, "default", LABEL_DETAILS);
        } else if (kind == NOTE_BLOCKED)
                n = actions_blocked(device, open_safely, ret);
        else if (kind == NOTE_CHOICES && ask)
                n = actions_choices(device, open_safely, ret);
        else if (kind == NOTE_OUTCOME && ask && (outcome == NOTIFY_OUTCOME_CANCELLED || outcome == NOTIFY_OUTCOME_REFUSED))
                /* Dismissing the password dialog by mistake should not cost the choices. Not
                 * every agent tells polkit that its dialog was closed (lxpolkit 0.5 answers a
                 * closed dialog as a finished authentication: no polkit.dismissed, so fsgated
                 * sees a plain refusal), so a refusal keeps them too: another try only asks for
                 * the password again. Those of the notification the click came from. */
                n = request == NOTIFY_REQUEST_OPEN_SAFELY ? actions_blocked(device, open_safely, ret) :
                                                            actions_choices(device, open_safely, ret);
        else if (kind == NOTE_OUTCOME && ask && outcome == NOTIFY_OUTCOME_FAILED &&
                 request == NOTIFY_REQUEST_OPEN_SAFELY && device) {
                /* The driver could not read it: the other ways to its files stay. */
                put_action(ret, &n, "open-read-only", LABEL_OPEN_READ_ONLY);
                put_action(ret, &n, "choices", LABEL_CHOICES);
        }
        assert(n < NOTIFY_ACTIONS_MAX);
        ret[n] = NULL;
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

/* The drive in the middle of a sentence: its label, vendor or model, else its node alone
 * ("Choices for /dev/sdb1", never "Choices for The drive /dev/sdb1"). */
char *notify_device_name_inline(const NotifyBlocked *b) {
        return *b->label || *b->vendor || *b->model ? notify_device_name(b) : strdup(b->device);
}

/* open_memstream() sets *buf only at fclose(): pass its address, not its value. */
int notify_finish(FILE *f, char **buf, int r, char **ret) {
        if (fclose(f) != 0 || r < 0) {
                free(*buf);
                *buf = NULL;
                return r < 0 ? r : -ENOMEM;
        }
        *ret = TAKE_PTR(*buf);
        return 0;
}

/* One sentence of what the kernel source says of the module, when it says something worth a
 * second thought: the person deciding to turn it on should know "orphaned upstream", in their
 * language. Long, with the module's Kconfig title, for the choices; short, without it, for
 * the first notification, whose six lines GNOME Shell shows (issue 41). */
static void put_risk(FILE *f, const NotifyBlocked *b, bool title) {
        const FsgRisk *r = fsg_risk_find(b->module);
        char phrase[256];

        if (!fsg_risk_is_notable(r))
                return;
        fsg_risk_phrase(r, phrase, sizeof(phrase));
        if (ftell(f) > 0)
                fputc('\n', f);
        if (title)
                /* TRANSLATORS: %1$s the module, %2$s its Kconfig title ("Apple Macintosh file system support"),
                 * %3$s the notable facts, translated ("orphaned upstream; deprecated"). */
                fprintf(f, _("%1$s (%2$s): %3$s."), b->module, r->title, phrase);
        else
                /* TRANSLATORS: %1$s the module, %2$s the notable facts, translated ("orphaned upstream; deprecated"). */
                fprintf(f, _("%1$s: %2$s."), b->module, phrase);
}

/* A command for the person, on a line of its own (so that it can be copied whole), every word
 * that comes from the signal quoted for the shell. */
int notify_put_command(FILE *f, const char *verb, const char *option, const char *value, const char *arg) {
        _cleanup_free_ char *opt = NULL, *line = NULL;
        const char *words[5] = { "fsgatectl", verb };
        size_t n = 2;

        if (option) {
                if (notify_format(&opt, "%s=%s", option, value) < 0)
                        return -ENOMEM;
                words[n++] = opt;
        }
        if (arg)
                words[n++] = arg;
        line = fsg_shell_join(words);
        if (!line)
                return -ENOMEM;
        fprintf(f, "\n%s", line);
        return 0;
}

/* The drive's own line, last: what names it beyond the summary ("SanDisk Cruzer, 16.0 GB,
 * /dev/sdb1" under “BACKUP”); nothing where the summary said it all ("The drive /dev/sdb1"). */
static void put_drive_line(FILE *f, const NotifyBlocked *b) {
        const char *sep = "\n";

        if (!*b->device)
                return;
        if (*b->label && (*b->vendor || *b->model)) {
                fprintf(f, "%s%s%s%s", sep, b->vendor, *b->vendor && *b->model ? " " : "", b->model);
                sep = ", ";
        }
        if (b->size > 0) {
                char size[32];
                fprintf(f, "%s%s", sep, notify_format_size(b->size, size));
                sep = ", ";
        }
        /* The node is in the summary already when nothing else names the drive. */
        if (*b->label || *b->vendor || *b->model)
                fprintf(f, "%s%s", sep, b->device);
}

/* The way to the files a person has first: the safe one the first button takes or, where the
 * server shows no actions, the one command that does it; for a block nobody can be asked
 * about, the administrator's command. */
static int put_way_out(FILE *f, const NotifyBlocked *b, bool ask, bool server_has_actions, bool open_safely) {
        int r = 0;

        if (!ask) {
                /* TRANSLATORS: a block fsgate cannot attribute (a mount request, maybe from a
                 * user namespace), so nothing is offered; the command follows on the next line. */
                fputs(_("Anyone may have asked for it. An administrator can turn it on with:"), f);
                r = notify_put_command(f, "allow", NULL, NULL, b->module);
        } else if (open_safely && server_has_actions)
                /* TRANSLATORS: "Open safely" is the first action's label; %s the filesystem type. */
                fprintf(f, _("Open safely still shows its files, read-only, without turning %s on."), b->type);
        else if (open_safely) {
                /* TRANSLATORS: the server shows no actions; the command follows on the next line. */
                fputs(_("Its files can still be read safely, without it, with:"), f);
                r = notify_put_command(f, "open", NULL, NULL, b->device);
        } else if (*b->device && server_has_actions)
                /* TRANSLATORS: "Open read-only" is the first action's label. */
                fputs(_("Open read-only turns it on for this drive only, until it is removed."), f);
        else if (*b->device) {
                /* TRANSLATORS: the server shows no actions; the command follows on the next line. */
                fputs(_("To turn it on for this drive only, until it is removed, then open it again:"), f);
                r = notify_put_command(f, "allow", "--device", b->device, b->module);
        } else if (server_has_actions)
                /* TRANSLATORS: "Allow once" and "Allow" are the actions' labels. */
                fputs(_("Allow once turns it on until the computer restarts, Allow from now on; then mount it "
                        "again."), f);
        else {
                /* TRANSLATORS: the server shows no actions; the command follows on the next line. */
                fputs(_("An administrator can turn it on with:"), f);
                r = notify_put_command(f, "allow", NULL, NULL, b->module);
        }
        return r;
}

int notify_text_blocked(const NotifyBlocked *b, bool ask, bool server_has_actions, bool open_safely,
                        char **ret_summary, char **ret_body) {
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
                r = notify_format(&summary, _("%s was not mounted"), name);
        else
                /* TRANSLATORS: the summary when no drive is known (a failed mount); %s is a
                 * filesystem type such as hfs. */
                r = notify_format(&summary, _("A filesystem of type %s was not mounted"), b->type);
        if (r < 0)
                return r;
        open_safely = open_safely && ask && *b->device;

        /* What matters first, in at most six lines of about 50 characters (GNOME Shell cuts the
         * rest, and shows one line collapsed): why, and the safe way to the files, the one
         * the first button takes or, where the server shows no actions, the one command that
         * does it; then the module's risk, then what else names the drive. The other choices
         * are behind "Other choices…", which shows all of it. */
        OPEN_MEMSTREAM(f, body, size);
        if (*b->device)
                /* TRANSLATORS: %1$s the filesystem type, %2$s why (e.g. "is turned off on this computer"). */
                fprintf(f, _("Its filesystem, %1$s, %2$s."), b->type, why_phrase(b));
        else
                /* TRANSLATORS: %1$s the filesystem type, %2$s why (e.g. "is turned off on this
                 * computer"); the summary said that it was not mounted. */
                fprintf(f, _("Filesystem %1$s %2$s."), b->type, why_phrase(b));
        fputc(' ', f);
        r = put_way_out(f, b, ask, server_has_actions, open_safely);
        /* The risk is for whoever decides to turn it on: information decides nothing here
         * (Details has it). */
        if (ask)
                put_risk(f, b, false);
        /* What else names the drive, where no command names its node. */
        if (server_has_actions && ask)
                put_drive_line(f, b);
        r = notify_finish(f, &body, r, ret_body);
        if (r < 0)
                return r;
        *ret_summary = TAKE_PTR(summary);
        return 0;
}

/* What "Other choices…" shows: every choice in a line each (those not among its buttons
 * too), then the commands that do them in a terminal, then everything known. */
static void put_choices(FILE *f, const NotifyBlocked *b, bool open_safely) {
        if (open_safely) {
                /* TRANSLATORS: "Open safely" is an action's label; %s the filesystem type. */
                fprintf(f, _("Open safely: read-only, %s stays off."), b->type);
                fputc('\n', f);
        }
        if (*b->device) {
                /* TRANSLATORS: "Open read-only" is an action's label; %s the filesystem type. */
                fprintf(f, _("Open read-only: %s for this drive only."), b->type);
                fputc('\n', f);
        }
        /* TRANSLATORS: "Allow once" is an action's label; %s the filesystem type. */
        fprintf(f, _("Allow once: %s until the computer restarts."), b->type);
        fputc('\n', f);
        /* TRANSLATORS: "Allow" is an action's label; %s the filesystem type. */
        fprintf(f, _("Allow: %s from now on."), b->type);
        fputc('\n', f);
        fputs(open_safely ? _("All but Open safely ask for an administrator's password.") :
                            _("Each asks for an administrator's password."), f);
}

int notify_text_choices(const NotifyBlocked *b, size_t n, bool ask, bool open_safely, char **ret_summary,
                        char **ret_body) {
        _cleanup_free_ char *summary = NULL, *name = NULL;
        char *body = NULL, size_buf[32];
        size_t size = 0;
        int r = 0;

        name = notify_device_name_inline(b);
        if (!name)
                return -ENOMEM;
        open_safely = open_safely && ask && *b->device;
        if (ask && *b->device)
                /* TRANSLATORS: the summary of the choices; %s is how a person knows the drive. */
                r = notify_format(&summary, _("Choices for %s"), name);
        else
                /* TRANSLATORS: the summary of the details; %s is a filesystem type such as hfs. */
                r = notify_format(&summary, _("Filesystem %s: details"), b->type);
        if (r < 0)
                return r;
        OPEN_MEMSTREAM(f, body, size);
        if (ask)
                put_choices(f, b, open_safely);
        put_risk(f, b, true);
        if (ftell(f) > 0)
                fputc('\n', f);
        /* TRANSLATORS: the commands follow, one a line. */
        fputs(_("In a terminal:"), f);
        if (open_safely)
                r = notify_put_command(f, "open", NULL, NULL, b->device);
        if (r >= 0 && ask && *b->device)
                r = notify_put_command(f, "allow", "--device", b->device, b->module);
        if (r >= 0)
                r = notify_put_command(f, "allow", NULL, NULL, b->module);
        if (r < 0)
                return notify_finish(f, &body, r, ret_body);
        fputc('\n', f);
        if (*b->device)
                fprintf(f, _("Device: %s\n"), b->device);
        if (*b->label)
                fprintf(f, _("Label: %s\n"), b->label);
        if (*b->uuid)
                fprintf(f, _("UUID: %s\n"), b->uuid);
        if (*b->vendor || *b->model) {
                _cleanup_free_ char *drive = NULL;
                if (notify_format(&drive, "%s%s%s", b->vendor, *b->vendor && *b->model ? " " : "", b->model) < 0)
                        return notify_finish(f, &body, -ENOMEM, ret_body);
                fprintf(f, _("Drive: %s\n"), drive);
        }
        if (b->size > 0)
                fprintf(f, _("Size: %s\n"), notify_format_size(b->size, size_buf));
        for (size_t k = 1; k < n; k++)
                /* TRANSLATORS: another drive with the same filesystem, blocked meanwhile. */
                fprintf(f, _("Also not mounted: %s\n"), b[k].device);
        fprintf(f, _("Filesystem type: %s\n"), b->type);
        fprintf(f, _("Kernel module: %s\n"), b->module);
        fputs(_("Why: "), f);
        put_denied_by(f, b);
        fputc('\n', f);
        if (notify_scope(b, NULL) == NOTIFY_SCOPE_INFO)
                fputs(_("Cause: a mount request; any user may have made it, also in a user namespace (fsgate "
                        "cannot tell who)"), f);
        else
                /* TRANSLATORS: %s is a seat name as logind knows it, such as seat0. */
                fprintf(f, _("Cause: a drive that appeared at %s"), b->seat);
        r = notify_finish(f, &body, 0, ret_body);
        if (r < 0)
                return r;
        *ret_summary = TAKE_PTR(summary);
        return 0;
}
