/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* The mark ApplyProfile leaves in each deny file it writes, its last line:
 *
 *     # fsgate-profile: cis sha256=HEX
 *
 * HEX the checksum of every byte before that line. Undo (profile-undo.h) resets a file only
 * while its mark names the profile and the checksum still matches: a file an admin edited
 * since, or rewrote by hand (fsgatectl deny writes no mark), is left alone. In the file, not
 * in a record elsewhere: it is written in the same atomic rename as the deny, and an auditor
 * reading the file sees which profile put it there. */
#define FSG_PROFILE_MARK "# fsgate-profile: "

typedef enum FsgMark {
        FSG_MARK_NONE,     /* no mark: not written by a profile's apply */
        FSG_MARK_INTACT,   /* as the profile wrote it */
        FSG_MARK_CHANGED,  /* a profile's mark, but the file changed since */
} FsgMark;

/* content with the mark of profile appended (a new string), or NULL on OOM. */
char *fsg_profile_mark_append(const char *content, const char *profile);
/* What content (len bytes) says: its mark's profile into ret_profile (size 64; "" for none). */
FsgMark fsg_profile_mark_check(const char *content, size_t len, char ret_profile[static 64]);
