/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include "fsg-error.h"
#include "state.h"

/* Observing a profile before enforcing it: nothing is denied; the kernel's request for each
 * type of the profile's modules goes to fsgate's hook (FSG_HOOK_LINE_OBSERVE), which records
 * "would block" in the journal and loads the module as kmod would have, when it is still
 * allowed then (a module denied meanwhile is left to its deny, and quiet: the deny's own line
 * or a route reports it). The observation is one file in /etc/modprobe.d, so that it lasts
 * across reboots and upgrades with no service to rebuild it, and kmod sees it at once; the
 * model skips it (confscan.c), as it skips the routes file: it decides nothing. Its lines name
 * every module of the profile that has a module file, allowed now or not, so that one a
 * vendor file stops denying during the observation is observed from then on. Its path is
 * confscan.h's (FSG_OBSERVE_PATH), which skips it. */

typedef struct FsgObservation {
        char profile[64];
        uint64_t since_usec;    /* CLOCK_REALTIME when it began */
        char **modules;         /* sorted: the ones its lines name */
} FsgObservation;

FsgObservation *fsg_observation_free(FsgObservation *o);
static inline void fsg_observation_freep(FsgObservation **o) {
        fsg_observation_free(*o);
}

/* The file's content for observing profile's modules against s, from since_usec. NULL: out
 * of memory. *ret_n (may be NULL): how many modules its lines name. */
char *fsg_observation_content(const FsgState *s, const char *profile, char * const *modules, uint64_t since_usec,
                              const char *hook, size_t *ret_n);

/* The observation in effect under c's root: 1 and *ret, or 0 and NULL when there is none (no
 * file, or a mask). A file of that name fsgate did not write is FSG_ERR_FOREIGN_CONFIG. */
int fsg_observation_read(const FsgContext *c, FsgObservation **ret, FsgError *e);

/* With fsgate's lock held: writes content (fsg_observation_content()) as the observation,
 * replacing any other; or, with content NULL, ends the observation of profile (NULL: of any),
 * *ret_ended (may be NULL) saying whether one ended. Atomic and durable (conffile.h). */
int fsg_observation_write_locked(const FsgContext *c, const char *content, FsgError *e);
int fsg_observation_end_locked(const FsgContext *c, const char *profile, bool *ret_ended, FsgError *e);
