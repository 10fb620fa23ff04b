/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "macro.h"

/* Every failure a client can act on has its own code; the daemon maps each to one
 * D-Bus error name and the CLI to one exit status, so the three never drift apart. */
typedef enum FsgErrorCode {
        FSG_OK = 0,
        FSG_ERR_FAILED,            /* generic fault: I/O, memory */
        FSG_ERR_INVALID_ARGS,
        FSG_ERR_INVALID_NAME,
        FSG_ERR_NO_SUCH_FILESYSTEM,
        FSG_ERR_NOT_A_FILESYSTEM,
        FSG_ERR_BUILTIN,
        FSG_ERR_IN_USE,
        FSG_ERR_FOREIGN_CONFIG,
        FSG_ERR_OVERRIDDEN,
        FSG_ERR_READ_ONLY,
        FSG_ERR_LOAD_FAILED,
        FSG_ERR_CONCURRENT_CHANGE,
        FSG_ERR_BUSY,              /* another writer kept the lock too long */
        FSG_ERR_HARD_DENIED,       /* a load the configuration refuses (an install command) */
        FSG_ERR_NO_SUCH_PROFILE,   /* not a profile in the profile directory */
        FSG_ERR_PROFILE_CONFLICT,  /* some modules of a profile cannot change: none was changed */
        FSG_ERR_ACCESS_DENIED,     /* polkit said no (clients only) */
        FSG_ERR_AUTH_CANCELLED,    /* the person dismissed polkit's dialog: nobody said no */
        FSG_ERR_UNREACHABLE,       /* the service could not be reached (clients only) */
        FSG_ERR_NO_KERNEL,         /* no (usable) module tree: nothing can be judged against it */
        FSG_ERR_HARD_DENY_IGNORED, /* kmod would ignore the install command a hard deny writes */
        FSG_ERR_NEEDED_FOR_BOOT,   /* a deny of what /, /usr, /boot or the ESP is on */
        FSG_ERR_DEPENDENCY_DENIED, /* a grant would load a denied module along with its own */
        FSG_ERR_NO_ROUTE,          /* Open safely: no userspace driver for what the medium holds */
        FSG_ERR_OPEN_FAILED,       /* Open safely: the driver could not read the medium */
        FSG_ERR_NOT_OPEN,          /* Close: nothing opened safely by that name */
        FSG_ERR_OBSERVED_USE,      /* fsgatectl apply: an observation recorded use of what it would block */
        _FSG_ERR_MAX,
} FsgErrorCode;

typedef struct FsgError {
        FsgErrorCode code;
        char message[512];
} FsgError;

/* The convention, one rule: a function that fills an FsgError returns a negative errno, the
 * one fsg_error() or fsg_error_errno() returned, passed up unchanged; never a bare -1, which
 * reads as -EPERM. A caller tests r < 0 and acts on e->code; the errno is for code that speaks
 * errno (a log line, sd-bus). */

/* Records the error (if e is non-NULL) and returns the negative errno that stands for code
 * (fsg-error.c's table: -EIO for Failed, -EINVAL for InvalidArgs, ...), never 0, so that
 * callers can `return fsg_error(...)`. */
int fsg_error(FsgError *e, FsgErrorCode code, const char *fmt, ...) _printf_(3, 4);
/* Like fsg_error() but picks ReadOnly for errno values that mean the directory cannot be
 * written, and returns -err: the cause is more exact than the code's errno. */
int fsg_error_errno(FsgError *e, int err, const char *fmt, ...) _printf_(3, 4);

const char *fsg_error_dbus_name(FsgErrorCode code);
/* The reverse, for clients: unknown names map to FSG_ERR_FAILED. */
FsgErrorCode fsg_error_from_dbus_name(const char *name);
int fsg_error_exit_status(FsgErrorCode code);
