/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Grant: a load that ends by itself, after a time or with its medium. Its records, timers and
 * end are grants.c's; this is the method: the scope read and checked, the medium's filesystem
 * and the load's dependencies judged before polkit is asked and again after it. */
#include <inttypes.h>
#include <syslog.h>

#include "bus-grant.h"
#include "bus-reply.h"
#include "bus-request.h"
#include "fsg-i18n.h"
#include "grants.h"
#include "load.h"
#include "log.h"
#include "state-cache.h"
#include "strv.h"
#include "utf8.h"

static const char grant_message[] =
        N_("Authentication is required to load the $(module) filesystem module for a while.");

/* What a grant of module loads with it, as its record's deps= ("" for nothing): refused with
 * DependencyDenied when a deny keeps one of them out. */
static int grant_dependencies(Manager *m, const char *module, char deps[static FSG_GRANT_DEPS_MAX], FsgError *e) {
        _cleanup_strv_free_ char **l = NULL;
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        size_t n = 0;
        int r;

        r = fsg_load_new_dependencies(m->ctx, module, &l, e);
        if (r >= 0)
                r = manager_state(m, &s, e);
        if (r >= 0)
                r = fsg_load_refuse_denied_dependencies(s, module, l, e);
        if (r < 0)
                return r;
        deps[0] = 0;
        for (char **d = l; d && *d; d++) {
                int k = snprintf(deps + n, FSG_GRANT_DEPS_MAX - n, "%s%s", n ? " " : "", *d);

                if (k < 0 || (size_t) k >= FSG_GRANT_DEPS_MAX - n)
                        return fsg_error(e, FSG_ERR_FAILED, "%s has more dependencies than a grant records", module);
                n += k;
        }
        return 0;
}

static int grant_authorized(Manager *m, sd_bus_message *call, Request *req) {
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        const FsgEntry *x;
        char until[32];
        uid_t uid = 0;
        FsgGrant g;
        FsgError e = {};
        int r;

        if (sd_bus_query_sender_creds(call, SD_BUS_CREDS_EUID | SD_BUS_CREDS_AUGMENT, &creds) >= 0)
                (void) sd_bus_creds_get_euid(creds, &uid);
        if (manager_grants_of_uid(m, uid) >= FSG_GRANTS_PER_UID_MAX)
                return sd_bus_reply_method_errorf(call, SD_BUS_ERROR_LIMITS_EXCEEDED,
                                                  "uid %u has %u grants already, the most one user may have",
                                                  (unsigned) uid, FSG_GRANTS_PER_UID_MAX);
        /* Loaded meanwhile (a Load, an admin's modprobe) while polkit asked: a grant would
         * unload at its end what was there before it. */
        if (manager_state(m, &s, &e) >= 0 && (x = fsg_state_find_module(s, req->module)) && x->loaded &&
            !manager_module_granted(m, req->module))
                return sd_bus_reply_method_return(call, "s", "");
        r = fsg_grant_new(req->module, uid, fsg_realtime_usec(), fsg_boottime_usec(), req->grant.seconds, &g, &e);
        /* Again: a deny of a dependency may have come while polkit asked. Recorded before the
         * load, as the grant itself, so that its end unloads them. */
        if (r >= 0 && !manager_module_granted(m, req->module))
                r = grant_dependencies(m, req->module, g.deps, &e);
        /* The medium again: another one may have taken its place while polkit asked. */
        if (r >= 0 && *req->grant.medium.device) {
                r = fsg_grant_set_medium(&g, req->grant.medium.device, &e);
                if (r >= 0 && (g.diskseq != req->grant.medium.diskseq || g.major != req->grant.medium.major ||
                               g.minor != req->grant.medium.minor))
                        r = fsg_error(&e, FSG_ERR_CONCURRENT_CHANGE,
                                      "%s holds another medium than when the grant was asked for; nothing was granted",
                                      req->grant.medium.device);
        }
        /* The record first: a crash between it and the load leaves a grant whose end finds
         * nothing to unload, never a load without an end. */
        if (r >= 0)
                r = manager_grant_add(m, &g, &e);
        if (r >= 0 && (r = fsg_load(m->ctx, req->module, NULL, &e)) < 0)
                manager_grant_end_id(m, g.id, "failed");
        if (r < 0) {
                log_request(call, FSGATE_MESSAGE_REFUSED, LOG_WARNING, req->module, "Grant of %s failed: %s",
                            req->module, e.message);
                return manager_reply_error(call, &e);
        }
        log_request(call, FSGATE_MESSAGE_MODULE_LOADED, LOG_NOTICE, req->module,
                    "Loaded %s until %s%s%s%s (grant %s): then unloaded once unused", req->module,
                    fsg_grant_time_string(g.until_usec, until), *g.device ? " or until " : "", g.device,
                    *g.device ? " is removed" : "", g.id);
        return sd_bus_reply_method_return(call, "s", g.id);
}

/* The scope a{sv}: "seconds" (t) and "device" (s), at least one; any other key is refused by
 * name, so that a caller asking for a scope this service does not know never gets a wider
 * grant. > 0 read, 0 refused (*e says why), < 0 a malformed call. */
static int read_grant_scope(sd_bus_message *call, uint64_t *ret_seconds, FsgGrant *ret_medium, FsgError *e) {
        const char *device = NULL;
        uint64_t seconds = 0;
        bool has_seconds = false;
        int r;

        r = sd_bus_message_enter_container(call, 'a', "{sv}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(call, 'e', "sv")) > 0) {
                const char *key;

                r = sd_bus_message_read(call, "s", &key);
                if (r < 0)
                        return r;
                if (streq(key, "seconds")) {
                        r = sd_bus_message_read(call, "v", "t", &seconds);
                        has_seconds = true;
                } else if (streq(key, "device"))
                        r = sd_bus_message_read(call, "v", "s", &device);
                else {
                        _cleanup_free_ char *k = fsg_utf8_escape(key);
                        fsg_error(e, FSG_ERR_INVALID_ARGS, "Unknown scope of a grant: \"%.64s\" (known: seconds, device)",
                                  k ?: "?");
                        return 0;
                }
                if (r < 0) {
                        fsg_error(e, FSG_ERR_INVALID_ARGS, "The scope \"%s\" of a grant is of type %s", key,
                                  streq(key, "seconds") ? "t" : "s");
                        return 0;
                }
                r = sd_bus_message_exit_container(call);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        r = sd_bus_message_exit_container(call);
        if (r < 0)
                return r;
        if (!has_seconds && !device) {
                fsg_error(e, FSG_ERR_INVALID_ARGS, "A grant needs a scope: seconds, device, or both");
                return 0;
        }
        if (!has_seconds)
                seconds = FSG_GRANT_DEVICE_SECONDS_DEFAULT;
        if (seconds < 1 || seconds > FSG_GRANT_SECONDS_MAX) {
                fsg_error(e, FSG_ERR_INVALID_ARGS, "A grant lasts from 1 to %" PRIu64 " seconds (7 days); asked: %" PRIu64,
                          FSG_GRANT_SECONDS_MAX, seconds);
                return 0;
        }
        if (device) {
                _cleanup_free_ char *d = fsg_utf8_escape(device);

                if (!d || fsg_grant_set_medium(ret_medium, d, e) < 0)
                        return d ? 0 : -ENOMEM;
        }
        *ret_seconds = seconds;
        return 1;
}

int method_grant(sd_bus_message *call, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        Request req = { .authorized = grant_authorized, .kind = REQUEST_GRANT };
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        const FsgEntry *x;
        uint64_t flags;
        FsgError e = {};
        int r;

        r = request_read_entry(m, call, &s, &x, &e);
        if (r < 0)
                return r;
        /* The rest of the call is read whether the name was found or not: a malformed call
         * is a malformed call. */
        if (r == 0) {
                FsgError name_error = e;
                FsgGrant ignored_medium = {};
                uint64_t ignored;

                r = read_grant_scope(call, &ignored, &ignored_medium, &e);
                return r < 0 ? r : manager_reply_error(call, &name_error);
        }
        snprintf(req.module, sizeof(req.module), "%s", x->module);
        r = read_grant_scope(call, &req.grant.seconds, &req.grant.medium, &e);
        if (r <= 0)
                return r < 0 ? r : manager_reply_error(call, &e);
        if (*req.grant.medium.device && fsg_grant_check_medium(m->ctx, &req.grant.medium, x->types, x->module, &e) < 0)
                return manager_reply_error(call, &e);
        r = sd_bus_message_read(call, "t", &flags);
        if (r < 0)
                return r;
        if (fsg_flags_check(FSG_FLAGS_GRANT, flags, &e) < 0)
                return manager_reply_error(call, &e);
        /* Nothing to grant: the kernel has it or may load it already. An empty id says so;
         * no grant is made, so none ends (and unloads) what was there before. */
        if (x->builtin || !x->denied || (x->loaded && !manager_module_granted(m, x->module)))
                return sd_bus_reply_method_return(call, "s", "");
        if (!x->available) {
                fsg_error(&e, FSG_ERR_LOAD_FAILED, "No module file for %s in kernel %s", x->module, m->ctx->kver ?: "(none)");
                return manager_reply_error(call, &e);
        }
        if (fsg_load_refused(x, &e) < 0)
                return manager_reply_error(call, &e);
        /* Refused before polkit is asked, by name: a dependency another deny keeps out. */
        if (!x->loaded) {
                char deps[FSG_GRANT_DEPS_MAX];

                if (grant_dependencies(m, req.module, deps, &e) < 0)
                        return manager_reply_error(call, &e);
        }
        if (m->n_grants >= FSG_GRANTS_MAX)
                return sd_bus_reply_method_errorf(call, SD_BUS_ERROR_LIMITS_EXCEEDED,
                                                  "There are %u grants already, the most fsgated keeps", FSG_GRANTS_MAX);
        request_need(&req, FSG_ACTION_GRANT, grant_message);
        return request_start(m, call, &req);
}

