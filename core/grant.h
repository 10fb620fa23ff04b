/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "context.h"
#include "fsg-error.h"
#include "name.h"
#include "time-util.h"

/* A grant: a load that ends by itself, after a time or with its medium. Nothing is allowed
 * by it: fsgated loads the module past the deny (as Load does) and unloads it at the end, once
 * unused; the deny stays in force for every other medium. The grant is a record of it in
 * ROOT/run/fsgate/grants, one file named by its id, so that a restarted
 * fsgated (idle exit, crash) arms it again, every reader of the state can show its end, and a
 * reboot ends it (/run is gone; a record of another boot, where /run is no tmpfs, is
 * ignored). fsgated alone writes them; offline readers only read. */
#define FSG_GRANTS_DIR "/run/fsgate/grants"
/* In all, not per module: each is a file and a timer, and only an authorized caller makes
 * one. */
#define FSG_GRANTS_MAX 64
/* Of one user: a site rule that lets users grant freely must not let one of them fill the
 * table for everyone. */
#define FSG_GRANTS_PER_UID_MAX 16
#define FSG_GRANT_SECONDS_MAX (UINT64_C(7) * 24 * 3600)
/* A grant for a medium without a time of its own: it ends when the medium goes, or after
 * this, whichever comes first (a medium that is never removed must not make a grant that
 * never ends). */
#define FSG_GRANT_DEVICE_SECONDS_DEFAULT (UINT64_C(24) * 3600)
#define FSG_GRANT_DEVICE_MAX 64
#define FSG_GRANT_ID_LEN 32
#define FSG_GRANT_DEPS_MAX 256

typedef struct FsgGrant {
        char id[FSG_GRANT_ID_LEN + 1];  /* 128 random bits in hex: the record's file name */
        char module[FSG_NAME_MAX + 1];  /* normalized */
        uint32_t uid;                   /* who asked */
        uint64_t since_usec;            /* CLOCK_REALTIME, for people */
        uint64_t until_usec;            /* CLOCK_REALTIME, for people: the end as it was asked */
        /* CLOCK_BOOTTIME: the end that counts, which setting the wall clock back cannot
         * delay (records are of one boot). Records of older versions have none: filled in
         * from until_usec when read (fsg_grants_read()). */
        uint64_t ends_usec;
        /* The modules the grant's load inserted before the module, in kmod's order, space-
         * separated ("" for none): unloaded after it at the end, in reverse, so that nothing a
         * grant loaded outlives it. */
        char deps[FSG_GRANT_DEPS_MAX];
        /* For one medium only ("" and 0 when not): its node as asked, its device number, and
         * the kernel's sequence number of the medium (diskseq: a new medium in the same port,
         * or a loop device set up again, has a new one). The grant ends when it is gone. */
        char device[FSG_GRANT_DEVICE_MAX];
        uint32_t major, minor;
        uint64_t diskseq;
        /* What the medium holds and whether it is removable (fsg_grant_check_medium()): for
         * polkit's rules and the dialog, not recorded. */
        char fstype[32];
        bool removable;
        bool other_boot;                /* a record a past boot left behind: no grant */
} FsgGrant;

/* A new grant of module (normalized) for seconds (1 to FSG_GRANT_SECONDS_MAX) from now:
 * now_usec (CLOCK_REALTIME) and boot_usec (CLOCK_BOOTTIME), with a fresh id. */
int fsg_grant_new(const char *module, uint32_t uid, uint64_t now_usec, uint64_t boot_usec, uint64_t seconds,
                  FsgGrant *ret, FsgError *e);
/* The medium at node ("/dev/NAME", NAME a block device of the running kernel, as /sys names
 * it) into g's device fields: -EINVAL (InvalidArgs) for anything else, or a device the kernel
 * gives no diskseq. */
int fsg_grant_set_medium(FsgGrant *g, const char *node, FsgError *e);
/* That g's medium (set above) holds a filesystem of one of types, the types of the module
 * granted, as udev's probe found it (ROOT/run/udev/data: ID_FS_TYPE); fills g->fstype and
 * g->removable. InvalidArgs otherwise, unknown type included: a grant for a medium is for what
 * is on it, and a mistyped node must not load a module for 24 hours on another disk. */
/* The filesystem type udev's probe found on g's medium (its record's ID_FS_TYPE): 0 and ret
 * filled, -ENODATA if it found none, or the error reading the record. */
int fsg_grant_medium_fs_type(const FsgContext *c, const FsgGrant *g, char ret[static 32]);
int fsg_grant_check_medium(const FsgContext *c, FsgGrant *g, char * const *types, const char *module, FsgError *e);
/* Whether g's medium is still there: the same device number with the same diskseq (always
 * for a grant without one). Read from the running kernel's /sys. */
bool fsg_grant_medium_present(const FsgGrant *g);
/* Every record in ROOT/run/fsgate/grants (none when the directory is missing), sorted by end;
 * records that are not fsgate's well-formed ones are skipped (counted in *ret_skipped if
 * set); at most FSG_GRANTS_MAX * 2 files are looked at. */
int fsg_grants_read(const FsgContext *c, FsgGrant **ret, size_t *ret_n, unsigned *ret_skipped, FsgError *e);
/* Durable: written atomically, the directory made if missing. */
int fsg_grant_write(const FsgContext *c, const FsgGrant *g, FsgError *e);
/* ROOT/run/fsgate/grants itself, when no record is left in it (best effort). */
void fsg_grants_dir_remove_if_empty(const FsgContext *c);
/* Whether g is still in force at boot_usec (CLOCK_BOOTTIME): of this boot, not past its end,
 * its medium (if any) still there. What readers other than fsgated trust. */
bool fsg_grant_in_force(const FsgGrant *g, uint64_t boot_usec);
/* Removes the record of id (already gone is success). */
int fsg_grant_remove(const FsgContext *c, const char *id, FsgError *e);
/* A record's text, and back: key=value lines. Exported for the unit test and the fuzzer. */
char *fsg_grant_format(const FsgGrant *g);
int fsg_grant_parse(const char *text, const char *id, const char *boot_id, FsgGrant *ret);
/* usec (CLOCK_REALTIME) as "2026-12-07T01:02:03Z" into buf. */
const char *fsg_grant_time_string(uint64_t usec, char buf[static 32]);
