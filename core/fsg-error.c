/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>

#include "fsg-error.h"

static const char * const dbus_names[_FSG_ERR_MAX] = {
        [FSG_OK]                     = NULL,
        [FSG_ERR_FAILED]             = "org.freedesktop.DBus.Error.Failed",
        [FSG_ERR_INVALID_ARGS]       = "org.freedesktop.DBus.Error.InvalidArgs",
        [FSG_ERR_INVALID_NAME]       = "org.fsgate.fsgate1.Error.InvalidName",
        [FSG_ERR_NO_SUCH_FILESYSTEM] = "org.fsgate.fsgate1.Error.NoSuchFilesystem",
        [FSG_ERR_NOT_A_FILESYSTEM]   = "org.fsgate.fsgate1.Error.NotAFilesystem",
        [FSG_ERR_BUILTIN]            = "org.fsgate.fsgate1.Error.Builtin",
        [FSG_ERR_IN_USE]             = "org.fsgate.fsgate1.Error.InUse",
        [FSG_ERR_FOREIGN_CONFIG]     = "org.fsgate.fsgate1.Error.ForeignConfig",
        [FSG_ERR_OVERRIDDEN]         = "org.fsgate.fsgate1.Error.Overridden",
        [FSG_ERR_READ_ONLY]          = "org.fsgate.fsgate1.Error.ReadOnly",
        [FSG_ERR_LOAD_FAILED]        = "org.fsgate.fsgate1.Error.LoadFailed",
        [FSG_ERR_CONCURRENT_CHANGE]  = "org.fsgate.fsgate1.Error.ConcurrentChange",
        [FSG_ERR_BUSY]               = "org.fsgate.fsgate1.Error.Busy",
        [FSG_ERR_ACCESS_DENIED]      = "org.freedesktop.DBus.Error.AccessDenied",
        [FSG_ERR_UNREACHABLE]        = "org.freedesktop.DBus.Error.ServiceUnknown",
};

/* Documented in fsgatectl(1). */
static const int exit_status[_FSG_ERR_MAX] = {
        [FSG_OK]                     = 0,
        [FSG_ERR_FAILED]             = 1,
        [FSG_ERR_INVALID_ARGS]       = 2,
        [FSG_ERR_INVALID_NAME]       = 2,
        [FSG_ERR_NO_SUCH_FILESYSTEM] = 3,
        [FSG_ERR_NOT_A_FILESYSTEM]   = 3,
        [FSG_ERR_BUILTIN]            = 5,
        [FSG_ERR_IN_USE]             = 5,
        [FSG_ERR_FOREIGN_CONFIG]     = 5,
        [FSG_ERR_OVERRIDDEN]         = 5,
        [FSG_ERR_READ_ONLY]          = 6,
        [FSG_ERR_LOAD_FAILED]        = 7,
        [FSG_ERR_CONCURRENT_CHANGE]  = 1,
        [FSG_ERR_BUSY]               = 1,
        [FSG_ERR_ACCESS_DENIED]      = 4,
        [FSG_ERR_UNREACHABLE]        = 8,
};

_printf_(3, 0) static int error_va(FsgError *e, FsgErrorCode code, const char *fmt, va_list ap) {
        if (e) {
                e->code = code;
                vsnprintf(e->message, sizeof(e->message), fmt, ap);
        }
        return -1;
}

int fsg_error(FsgError *e, FsgErrorCode code, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        error_va(e, code, fmt, ap);
        va_end(ap);
        return -1;
}

int fsg_error_errno(FsgError *e, int err, const char *fmt, ...) {
        FsgErrorCode code = (err == EROFS || err == EACCES || err == EPERM) ? FSG_ERR_READ_ONLY : FSG_ERR_FAILED;
        char buf[400];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        return fsg_error(e, code, "%s: %s", buf, strerror(err));
}

const char *fsg_error_dbus_name(FsgErrorCode code) {
        if (code <= FSG_OK || code >= _FSG_ERR_MAX)
                return dbus_names[FSG_ERR_FAILED];
        return dbus_names[code];
}

int fsg_error_exit_status(FsgErrorCode code) {
        if (code < FSG_OK || code >= _FSG_ERR_MAX)
                return 1;
        return exit_status[code];
}

FsgErrorCode fsg_error_from_dbus_name(const char *name) {
        if (!name)
                return FSG_ERR_FAILED;
        if (streq(name, "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired"))
                return FSG_ERR_ACCESS_DENIED;
        if (streq(name, "org.freedesktop.DBus.Error.NameHasNoOwner") ||
            streq(name, "org.freedesktop.DBus.Error.NoReply") ||
            streq(name, "org.freedesktop.DBus.Error.Spawn.ChildExited") ||
            streq(name, "org.freedesktop.DBus.Error.Spawn.ExecFailed"))
                return FSG_ERR_UNREACHABLE;
        for (int c = FSG_ERR_FAILED; c < _FSG_ERR_MAX; c++)
                if (streq(name, dbus_names[c]))
                        return c;
        return FSG_ERR_FAILED;
}
