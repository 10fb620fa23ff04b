/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>

#include "fsg-error.h"

/* One row per error, so that adding one is one line: its D-Bus name, the exit status
 * fsgatectl(1) documents for it, and the errno fsg_error() returns for it. EPERM only where
 * fsgate itself refuses (a file it did not write), so that a failure never reads as a
 * permission problem it was not. */
static const struct {
        const char *dbus_name;
        int exit_status;
        int errno_value;
} errors[_FSG_ERR_MAX] = {
        [FSG_OK]                     = { NULL,                                         0, 0             },
        [FSG_ERR_FAILED]             = { "org.freedesktop.DBus.Error.Failed",          1, EIO           },
        [FSG_ERR_INVALID_ARGS]       = { "org.freedesktop.DBus.Error.InvalidArgs",     2, EINVAL        },
        [FSG_ERR_INVALID_NAME]       = { "org.fsgate.fsgate1.Error.InvalidName",       2, EINVAL        },
        [FSG_ERR_NO_SUCH_FILESYSTEM] = { "org.fsgate.fsgate1.Error.NoSuchFilesystem",  3, ENOENT        },
        [FSG_ERR_NOT_A_FILESYSTEM]   = { "org.fsgate.fsgate1.Error.NotAFilesystem",    3, EMEDIUMTYPE   },
        [FSG_ERR_BUILTIN]            = { "org.fsgate.fsgate1.Error.Builtin",           5, EOPNOTSUPP    },
        [FSG_ERR_IN_USE]             = { "org.fsgate.fsgate1.Error.InUse",             5, EBUSY         },
        [FSG_ERR_FOREIGN_CONFIG]     = { "org.fsgate.fsgate1.Error.ForeignConfig",     5, EPERM         },
        [FSG_ERR_OVERRIDDEN]         = { "org.fsgate.fsgate1.Error.Overridden",        5, EEXIST        },
        [FSG_ERR_READ_ONLY]          = { "org.fsgate.fsgate1.Error.ReadOnly",          6, EROFS         },
        [FSG_ERR_LOAD_FAILED]        = { "org.fsgate.fsgate1.Error.LoadFailed",        7, EIO           },
        [FSG_ERR_CONCURRENT_CHANGE]  = { "org.fsgate.fsgate1.Error.ConcurrentChange",  1, EAGAIN        },
        [FSG_ERR_BUSY]               = { "org.fsgate.fsgate1.Error.Busy",              1, EBUSY         },
        [FSG_ERR_HARD_DENIED]        = { "org.fsgate.fsgate1.Error.HardDenied",        5, EPERM         },
        [FSG_ERR_NO_SUCH_PROFILE]    = { "org.fsgate.fsgate1.Error.NoSuchProfile",     3, ENOENT        },
        [FSG_ERR_PROFILE_CONFLICT]   = { "org.fsgate.fsgate1.Error.ProfileConflict",   5, EPERM         },
        [FSG_ERR_ACCESS_DENIED]      = { "org.freedesktop.DBus.Error.AccessDenied",    4, EACCES        },
        /* Exit status 4 as AccessDenied, which a dismissed dialog was before it had a name:
         * to a script nothing was changed either way. */
        [FSG_ERR_AUTH_CANCELLED]     = { "org.fsgate.fsgate1.Error.AuthenticationCancelled", 4, ECANCELED },
        [FSG_ERR_UNREACHABLE]        = { "org.freedesktop.DBus.Error.ServiceUnknown",  8, EHOSTUNREACH  },
        [FSG_ERR_NO_KERNEL]          = { "org.fsgate.fsgate1.Error.NoKernel",          10, ENOPKG       },
        [FSG_ERR_HARD_DENY_IGNORED]  = { "org.fsgate.fsgate1.Error.HardDenyIgnored",   5, EOPNOTSUPP    },
        [FSG_ERR_NEEDED_FOR_BOOT]    = { "org.fsgate.fsgate1.Error.NeededForBoot",     5, EBUSY         },
        [FSG_ERR_DEPENDENCY_DENIED]  = { "org.fsgate.fsgate1.Error.DependencyDenied",  5, EPERM         },
        [FSG_ERR_NO_ROUTE]           = { "org.fsgate.fsgate1.Error.NoRoute",           3, ENOPKG        },
        [FSG_ERR_OPEN_FAILED]        = { "org.fsgate.fsgate1.Error.OpenFailed",        12, EIO          },
        [FSG_ERR_NOT_OPEN]           = { "org.fsgate.fsgate1.Error.NotOpen",           3, ENOENT        },
        /* fsgatectl's own (the evidence is the journal, read with the caller's rights): a
         * conflict, lifted by --force as an in-use one is. */
        [FSG_ERR_OBSERVED_USE]       = { "org.fsgate.fsgate1.Error.ObservedUse",       5, EBUSY         },
};

static int error_to_errno(FsgErrorCode code) {
        if (code <= FSG_OK || code >= _FSG_ERR_MAX)
                return -EIO;
        return -errors[code].errno_value;
}

int fsg_error(FsgError *e, FsgErrorCode code, const char *fmt, ...) {
        va_list ap;

        if (e) {
                e->code = code;
                va_start(ap, fmt);
                vsnprintf(e->message, sizeof(e->message), fmt, ap);
                va_end(ap);
        }
        return error_to_errno(code);
}

int fsg_error_errno(FsgError *e, int err, const char *fmt, ...) {
        FsgErrorCode code = (err == EROFS || err == EACCES || err == EPERM) ? FSG_ERR_READ_ONLY : FSG_ERR_FAILED;
        char buf[400];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        (void) fsg_error(e, code, "%s: %s", buf, strerror(err));
        return err > 0 ? -err : error_to_errno(code);
}

const char *fsg_error_dbus_name(FsgErrorCode code) {
        if (code <= FSG_OK || code >= _FSG_ERR_MAX)
                return errors[FSG_ERR_FAILED].dbus_name;
        return errors[code].dbus_name;
}

int fsg_error_exit_status(FsgErrorCode code) {
        if (code < FSG_OK || code >= _FSG_ERR_MAX)
                return 1;
        return errors[code].exit_status;
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
                if (streq(name, errors[c].dbus_name))
                        return c;
        return FSG_ERR_FAILED;
}
