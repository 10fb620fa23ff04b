/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the notifier says after a click: the progress note of Open safely, the outcome of a
 * choice (where each drive is now, or why nothing changed), an Open safely error in words. */
#define _GNU_SOURCE
#include <stdio.h>

#include "fsg-error.h"
#include "macro.h"
#include "notify-text.h"
#include "notify-text-util.h"

int notify_text_progress(const NotifyBlocked *b, char **ret_summary, char **ret_body) {
        _cleanup_free_ char *name = notify_device_name_inline(b), *summary = NULL, *body = NULL;

        if (!name)
                return -ENOMEM;
        /* TRANSLATORS: a note while Open safely works; %s is how a person knows the drive. */
        if (notify_format(&summary, _("Opening %s safely…"), name) < 0 ||
            /* TRANSLATORS: %s the filesystem type. */
            notify_format(&body, _("Read-only, without turning %s on."), b->type) < 0)
                return -ENOMEM;
        *ret_summary = TAKE_PTR(summary);
        *ret_body = TAKE_PTR(body);
        return 0;
}

const char *notify_open_error_text(const char *name) {
        FsgErrorCode code = fsg_error_from_dbus_name(name ?: "");

        /* By name, as notify_classify_error(): fsgated's messages are English and technical. */
        if (code == FSG_ERR_IN_USE)
                return _("It is in use: mounted, or held by another program.");
        if (code == FSG_ERR_NO_ROUTE)
                return _("No program that reads its filesystem safely is installed.");
        if (code == FSG_ERR_OPEN_FAILED)
                return _("The program that reads it safely could not read it; it may be damaged.");
        if (streq_ptr(name, "org.freedesktop.DBus.Error.LimitsExceeded"))
                return _("Too many drives are open safely; close one first.");
        return NULL;
}

/* Several drives of one question, all mounted: the summary names each of two (issue 41: the
 * second stick was left to the body), the first and how many more beyond that. */
static int summary_mounted_several(const NotifyBlocked *b, size_t n, NotifyRequest req, char **ret) {
        bool read_only = req == NOTIFY_REQUEST_OPEN_READ_ONLY;

        /* "The drive /dev/sdb1 and /dev/sdc1": the second without "The drive" again. */
        _cleanup_free_ char *first = notify_device_name(&b[0]), *second = notify_device_name_inline(&b[1]);

        if (!first || !second)
                return -ENOMEM;
        if (n == 2 && req == NOTIFY_REQUEST_OPEN_SAFELY)
                /* TRANSLATORS: %1$s and %2$s are how a person knows the drives (“BACKUP”, "SanDisk Cruzer"). */
                return notify_format(ret, _("%1$s and %2$s are open safely"), first, second);
        if (req == NOTIFY_REQUEST_OPEN_SAFELY)
                /* TRANSLATORS: %1$s is how a person knows the first drive; the plural follows %2$zu, the others. */
                return notify_format(ret, ngettext("%1$s and %2$zu other drive are open safely",
                                            "%1$s and %2$zu other drives are open safely", n - 1), first, n - 1);
        if (n == 2)
                /* TRANSLATORS: %1$s and %2$s are how a person knows the drives (“BACKUP”, "SanDisk Cruzer"). */
                return notify_format(ret, read_only ? _("%1$s and %2$s are open, read-only") : _("%1$s and %2$s are mounted"),
                              first, second);
        /* TRANSLATORS: %1$s is how a person knows the first drive; the plural follows %2$zu, the others. */
        return notify_format(ret, read_only ? ngettext("%1$s and %2$zu other drive are open, read-only",
                                                "%1$s and %2$zu other drives are open, read-only", n - 1) :
                                       ngettext("%1$s and %2$zu other drive are mounted",
                                                "%1$s and %2$zu other drives are mounted", n - 1),
                      first, n - 1);
}

/* What an Allow did, in a summary: where the drives are if all of them are, else what was allowed. */
static int summary_allowed(const NotifyBlocked *b, NotifyRequest req, const char *first, size_t n_mounted,
                           size_t n_mounts, char **ret) {
        bool load = req == NOTIFY_REQUEST_LOAD, read_only = req == NOTIFY_REQUEST_OPEN_READ_ONLY,
             safely = req == NOTIFY_REQUEST_OPEN_SAFELY;

        if (n_mounts > 1 && n_mounted == n_mounts)
                return summary_mounted_several(b, n_mounts, req, ret);
        else if (n_mounts > 0 && n_mounted == n_mounts && safely)
                /* TRANSLATORS: %s is how a person knows the drive (“BACKUP”, "SanDisk Cruzer"). */
                return notify_format(ret, _("%s is open safely"), first);
        else if (n_mounts > 0 && n_mounted == n_mounts && read_only)
                /* TRANSLATORS: %s is how a person knows the drive (“BACKUP”, "SanDisk Cruzer"). */
                return notify_format(ret, _("%s is open, read-only"), first);
        else if (n_mounts > 0 && n_mounted == n_mounts)
                /* TRANSLATORS: %s is how a person knows the drive (“BACKUP”, "SanDisk Cruzer"). */
                return notify_format(ret, _("%s is mounted"), first);
        else if (read_only)
                /* TRANSLATORS: %s is a filesystem type such as hfs. */
                return notify_format(ret, _("%s allowed for this drive"), b->type);
        else if (load)
                /* TRANSLATORS: %s is a filesystem type such as hfs. */
                return notify_format(ret, _("%s allowed until the computer restarts"), b->type);
        /* TRANSLATORS: %s is a filesystem type such as hfs. */
        return notify_format(ret, _("%s allowed"), b->type);
}

/* Where each drive is now, a line each (with the command that closes an open one). */
static int put_where_each(FILE *f, const NotifyBlocked *b, NotifyRequest req, const NotifyMount *mounts,
                          size_t n_mounts) {
        bool read_only = req == NOTIFY_REQUEST_OPEN_READ_ONLY, safely = req == NOTIFY_REQUEST_OPEN_SAFELY;
        int r;

        for (size_t k = 0; k < n_mounts; k++) {
                _cleanup_free_ char *name = notify_device_name(&b[k]);

                if (!name)
                        return -ENOMEM;
                fputc('\n', f);
                if (mounts[k].where && safely) {
                        /* TRANSLATORS: %1$s the drive, %2$s the directory its files are in; the
                         * command that closes it follows on the next line. */
                        fprintf(f, _("%1$s is open at %2$s. To close it:"), name, mounts[k].where);
                        r = notify_put_command(f, "close", NULL, NULL, b[k].device);
                        if (r < 0)
                                return r;
                } else if (mounts[k].where && read_only)
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
        return 0;
}

/* What an Allow did, then where each drive is now. */
static int outcome_allowed(const NotifyBlocked *b, NotifyRequest req, const NotifyMount *mounts, size_t n_mounts,
                           char **ret_summary, char **ret_body) {
        bool load = req == NOTIFY_REQUEST_LOAD, read_only = req == NOTIFY_REQUEST_OPEN_READ_ONLY,
             safely = req == NOTIFY_REQUEST_OPEN_SAFELY;
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
        r = summary_allowed(b, req, first, n_mounted, n_mounts, &summary);
        if (r < 0)
                return r;

        OPEN_MEMSTREAM(f, body, size);
        if (safely)
                /* TRANSLATORS: %s the filesystem type; where each drive is follows. */
                fprintf(f, _("Read-only; %s stays turned off."), b->type);
        else if (read_only)
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
        r = put_where_each(f, b, req, mounts, n_mounts);
        r = notify_finish(f, &body, r, ret_body);
        if (r < 0)
                return r;
        *ret_summary = TAKE_PTR(summary);
        return 0;
}

int notify_text_outcome(const NotifyBlocked *b, NotifyRequest req, NotifyOutcome outcome, const char *message,
                        const NotifyMount *mounts, size_t n_mounts, char **ret_summary, char **ret_body) {
        _cleanup_free_ char *summary = NULL, *body = NULL, *name = NULL, *inline_name = NULL;
        bool load = req == NOTIFY_REQUEST_LOAD, safely = req == NOTIFY_REQUEST_OPEN_SAFELY;
        int r;

        if (outcome == NOTIFY_OUTCOME_ALLOWED)
                return outcome_allowed(b, req, mounts, n_mounts, ret_summary, ret_body);
        /* Open safely is about the drive, the others about its filesystem. */
        name = safely ? notify_device_name(b) : strdup(b->type);
        inline_name = safely ? notify_device_name_inline(b) : strdup(b->type);
        if (!name || !inline_name)
                return -ENOMEM;
        message = message && *message ? message : _("no reason given");
        switch (outcome) {
        case NOTIFY_OUTCOME_REFUSED:
                /* TRANSLATORS: %s is how a person knows the drive (“BACKUP”). */
                r = notify_format(&summary, safely ? _("%s was not opened safely") :
                                     /* TRANSLATORS: %s is a filesystem type such as hfs. */
                                     _("%s not allowed"), name);
                /* In words, once, in the person's language: polkit's or the service's reason is
                 * English and repeats it (the log has it, notify-call.c). */
                if (r >= 0)
                        r = notify_format(&body, "%s", _("Not authorized; nothing was changed."));
                break;
        case NOTIFY_OUTCOME_CANCELLED:
                /* Said once (issue 41 read "cancelled" in the summary and again in the body). */
                r = notify_format(&summary, "%s", _("Cancelled; nothing was changed"));
                if (r >= 0)
                        /* TRANSLATORS: %s is a filesystem type (hfs) or how a person knows the drive (“BACKUP”). */
                        r = notify_format(&body, _("The password dialog for %s was closed."), inline_name);
                break;
        default:
                r = notify_format(&summary, safely ? _("%s could not be opened safely") :
                                     req == NOTIFY_REQUEST_OPEN_READ_ONLY ? _("%s could not be opened") :
                                     load ? _("%s could not be loaded") : _("%s could not be allowed"), name);
                if (r >= 0)
                        r = notify_format(&body, "%s", message);
                break;
        }
        if (r < 0)
                return -ENOMEM;
        *ret_summary = TAKE_PTR(summary);
        *ret_body = TAKE_PTR(body);
        return 0;
}
