/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "grant.h"
#include "manager.h"
#include "profile-apply.h"
#include "store.h"

typedef struct Request Request;
/* What a request does once authorized (and, if it writes, with the lock held). */
typedef int (*AuthorizedFn)(Manager *m, sd_bus_message *call, Request *req);

/* Which part of the union a request carries: what its polkit details are and what it owns. */
typedef enum RequestKind {
        REQUEST_MODULE,         /* Load, ExemptLoaded: the module ("" for none) */
        REQUEST_CHANGE,         /* Allow, Deny, Reset */
        REQUEST_GRANT,
        REQUEST_PROFILE,        /* ApplyProfile */
} RequestKind;

struct Request {
        AuthorizedFn authorized;
        RequestKind kind;
        char module[64];        /* "" when the request is not about one module */
        char subject[80];       /* what the logs name when module is "" */
        bool writes;            /* authorized runs with the writers' lock held, in lock_fd */
        int lock_fd;
        struct {
                FsgAction action;
                const char *message;
        } needs[2];             /* authorizations still to obtain, in order */
        size_t n_needs;
        size_t next;
        union {
                struct {
                        FsgPlan plan;
                        bool load;              /* a load was asked for and must follow */
                        bool end_grants;        /* a Deny or Reset of a granted module ends its grants */
                } change;
                struct {
                        uint64_t seconds;       /* how long */
                        FsgGrant medium;        /* the medium it is for (device fields only; "" for none) */
                } grant;
                struct {
                        FsgProfilePlan *plan;   /* the list authorized (owned) */
                } profile;
        };
};

/* One more polkit action the request needs, asked after the ones before it. */
void request_need(Request *req, FsgAction action, const char *message);
/* A copy of template on its way: each action asked in turn (a refusal replies it), then the
 * lock if it writes, then its authorized step, whose reply ends the call. 1, or -ENOMEM. */
int request_start(Manager *m, sd_bus_message *call, const Request *template);

/* The entry a method's name argument names, in the state *ret_state (the caller's reference,
 * which keeps the entry valid): > 0 found, 0 not (*e says why, for the caller), < 0 a
 * malformed call. */
int request_read_entry(Manager *m, sd_bus_message *call, FsgState **ret_state, const FsgEntry **ret, FsgError *e);
