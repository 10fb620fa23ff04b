/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* polkit_check_async() answers every failure, exactly once. The failures are injected with
 * the linker's --wrap (tests/meson.build): the call comes over a real sd-bus peer connection
 * (a socketpair, no bus daemon), fails at one step before polkit could be asked, and must
 * get one error reply, leaving no query waiting and nothing leaked (the sanitizer build
 * checks leaks). */
#include <stdlib.h>
#include <sys/socket.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-id128.h>

#include "fsgate-api.h"
#include "polkit-bridge.h"
#include "test-util.h"

typedef enum Step {
        STEP_NONE,
        STEP_ALLOC,             /* the query itself */
        STEP_NEW_CALL,          /* CheckAuthorization's message */
        STEP_SEND,              /* sending it */
} Step;

static Step failing;

void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);
int __real_sd_bus_message_new_method_call(sd_bus *bus, sd_bus_message **m, const char *destination,
                                          const char *path, const char *interface, const char *member);
int __wrap_sd_bus_message_new_method_call(sd_bus *bus, sd_bus_message **m, const char *destination,
                                          const char *path, const char *interface, const char *member);
int __real_sd_bus_call_async(sd_bus *bus, sd_bus_slot **slot, sd_bus_message *m, sd_bus_message_handler_t callback,
                             void *userdata, uint64_t usec);
int __wrap_sd_bus_call_async(sd_bus *bus, sd_bus_slot **slot, sd_bus_message *m, sd_bus_message_handler_t callback,
                             void *userdata, uint64_t usec);
int __wrap_sd_bus_query_sender_privilege(sd_bus_message *call, int capability);

void *__wrap_calloc(size_t n, size_t size) {
        return failing == STEP_ALLOC ? NULL : __real_calloc(n, size);
}

int __wrap_sd_bus_message_new_method_call(sd_bus *bus, sd_bus_message **m, const char *destination,
                                          const char *path, const char *interface, const char *member) {
        if (failing == STEP_NEW_CALL)
                return -ENOMEM;
        return __real_sd_bus_message_new_method_call(bus, m, destination, path, interface, member);
}

int __wrap_sd_bus_call_async(sd_bus *bus, sd_bus_slot **slot, sd_bus_message *m, sd_bus_message_handler_t callback,
                             void *userdata, uint64_t usec) {
        if (failing == STEP_SEND)
                return -ENOTCONN;
        return __real_sd_bus_call_async(bus, slot, m, callback, userdata, usec);
}

/* The peer is this process, root or not: a caller polkit has to be asked about. */
int __wrap_sd_bus_query_sender_privilege(sd_bus_message *call, int capability) {
        return 0;
}

static unsigned n_done, n_replies;
static char reply_error[128];

static void on_done(Manager *m, sd_bus_message *call, bool granted, const sd_bus_error *error, void *userdata) {
        n_done++;
        ASSERT(!granted && sd_bus_error_is_set(error));
        ASSERT(sd_bus_reply_method_error(call, error) >= 0);
}

static int on_call(sd_bus_message *call, void *userdata, sd_bus_error *ret_error) {
        static const char * const details[] = { "module", "hfs", NULL };

        polkit_check_async(userdata, call, FSGATE_ACTION_ALLOW, details, "test", on_done, NULL);
        return 1;
}

static int on_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        const sd_bus_error *e = sd_bus_message_get_error(reply);

        n_replies++;
        snprintf(reply_error, sizeof(reply_error), "%s", e ? e->name : "");
        return 0;
}

/* fsgated's end and a caller's, connected directly. */
static void connect_pair(sd_bus **ret_service, sd_bus **ret_caller) {
        sd_id128_t id;
        int fds[2];

        ASSERT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
        ASSERT(sd_id128_randomize(&id) >= 0);
        ASSERT(sd_bus_new(ret_service) >= 0 && sd_bus_set_fd(*ret_service, fds[0], fds[0]) >= 0);
        ASSERT(sd_bus_set_server(*ret_service, 1, id) >= 0 && sd_bus_start(*ret_service) >= 0);
        ASSERT(sd_bus_new(ret_caller) >= 0 && sd_bus_set_fd(*ret_caller, fds[1], fds[1]) >= 0);
        ASSERT(sd_bus_start(*ret_caller) >= 0);
}

static void check_failure_answered(Step step) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *service = NULL, *caller = NULL;
        Manager m = {};

        n_done = n_replies = 0;
        connect_pair(&service, &caller);
        m.bus = service;
        ASSERT(sd_bus_add_object(service, NULL, "/", on_call, &m) >= 0);
        ASSERT(sd_bus_call_method_async(caller, NULL, NULL, "/", "org.fsgate.Test", "Change", on_reply, NULL, "") >= 0);

        failing = step;
        /* Until the answer and a little after it (a second one would come in that time), for
         * at most some 5 s of quiet. */
        for (unsigned waits = 0, after = 0; waits < 500 && after < 20;) {
                int a = sd_bus_process(service, NULL), b = sd_bus_process(caller, NULL);

                ASSERT(a >= 0 && b >= 0);
                if (a == 0 && b == 0) {
                        waits++;
                        after += n_replies > 0;
                        (void) sd_bus_wait(caller, 10000);
                }
        }
        failing = STEP_NONE;

        ASSERT(n_done == 1 && n_replies == 1);
        ASSERT_STREQ(reply_error, SD_BUS_ERROR_ACCESS_DENIED);
        ASSERT(m.n_pending == 0 && !m.polkit_queries);
}

TEST(alloc_failure_answered) {
        check_failure_answered(STEP_ALLOC);
}

TEST(message_failure_answered) {
        check_failure_answered(STEP_NEW_CALL);
}

TEST(send_failure_answered) {
        check_failure_answered(STEP_SEND);
}
