/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>
#include <sys/uio.h>
#include <syslog.h>
#include <systemd/sd-journal.h>

#include "log.h"
#include "refusal-ratelimit.h"

/* Under systemd stderr already goes to the journal; elsewhere (tests, by hand) it is the only
 * place a person looks. */
static bool also_stderr(void) {
        return !getenv("INVOCATION_ID");
}

void log_plain(int priority, const char *fmt, ...) {
        char buf[1024];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        (void) sd_journal_send("MESSAGE=%s", buf, "PRIORITY=%i", priority, "SYSLOG_IDENTIFIER=fsgated", NULL);
        if (also_stderr())
                fprintf(stderr, "fsgated: %s\n", buf);
}

static void caller_of(sd_bus_message *call, uid_t *ret_uid, pid_t *ret_pid) {
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;

        *ret_uid = (uid_t) -1;
        *ret_pid = 0;
        if (sd_bus_query_sender_creds(call, SD_BUS_CREDS_EUID | SD_BUS_CREDS_PID | SD_BUS_CREDS_AUGMENT, &creds) >= 0) {
                (void) sd_bus_creds_get_euid(creds, ret_uid);
                (void) sd_bus_creds_get_pid(creds, ret_pid);
        }
}

static void send_request_line(sd_bus_message *call, uid_t uid, pid_t pid, const char *message_id, int priority,
                              const char *module, const char *text) {
        /* FSGATE_MODULE= comes last: for a request about no single module (ExemptLoaded as a
         * whole) the list ends before it, as an empty value would only match searches for "". */
        (void) sd_journal_send("MESSAGE=%s (requested by uid %d, pid %d, %s)", text, (int) uid, (int) pid,
                               sd_bus_message_get_sender(call) ?: "?",
                               "MESSAGE_ID=%s", message_id,
                               "PRIORITY=%i", priority,
                               "SYSLOG_IDENTIFIER=fsgated",
                               "FSGATE_REQUEST_UID=%d", (int) uid,
                               "FSGATE_REQUEST_PID=%d", (int) pid,
                               module && *module ? "FSGATE_MODULE=%s" : NULL, module,
                               NULL);
        if (also_stderr())
                fprintf(stderr, "fsgated: %s (requested by uid %d, pid %d)\n", text, (int) uid, (int) pid);
}

void log_request(sd_bus_message *call, const char *message_id, int priority, const char *module,
                 const char *fmt, ...) {
        char buf[1024];
        va_list ap;
        uid_t uid;
        pid_t pid;

        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        caller_of(call, &uid, &pid);
        send_request_line(call, uid, pid, message_id, priority, module, buf);
}

void log_refusal(sd_bus_message *call, const char *module, const char *fmt, ...) {
        RefusalVerdict v;
        char buf[1024];
        va_list ap;
        uid_t uid;
        pid_t pid;
        int n;

        caller_of(call, &uid, &pid);
        if (!refusal_log_admit(uid, &v))
                return;
        va_start(ap, fmt);
        n = vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        if (v.unlogged > 0 && n >= 0 && (size_t) n < sizeof(buf))
                (void) snprintf(buf + n, sizeof(buf) - (size_t) n, "; %u earlier refusals of %s were not logged",
                                v.unlogged, v.shared ? "this and other users" : "this user");
        send_request_line(call, uid, pid, FSGATE_MESSAGE_REFUSED, LOG_INFO, module, buf);
}

void log_grant(const char *message_id, int priority, const char *module, uint32_t uid, const char *grant_id,
               const char *fmt, ...) {
        char buf[1024], f_message[1100], f_id[64], f_priority[32], f_uid[48], f_grant[64], f_module[80];
        struct iovec iov[7];
        size_t n = 0;
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
#define FIELD(var, ...) (snprintf(var, sizeof(var), __VA_ARGS__), iov[n++] = (struct iovec) { var, strlen(var) })
        FIELD(f_message, "MESSAGE=%s", buf);
        FIELD(f_id, "MESSAGE_ID=%s", message_id);
        FIELD(f_priority, "PRIORITY=%i", priority);
        iov[n++] = (struct iovec) { (char *) "SYSLOG_IDENTIFIER=fsgated", strlen("SYSLOG_IDENTIFIER=fsgated") };
        FIELD(f_module, "FSGATE_MODULE=%s", module);
        /* Who asked and which grant: only where the line is about one grant (an unload that
         * waited is about the module). */
        if (uid != UINT32_MAX)
                FIELD(f_uid, "FSGATE_REQUEST_UID=%" PRIu32, uid);
        if (grant_id && *grant_id)
                FIELD(f_grant, "FSGATE_GRANT=%s", grant_id);
#undef FIELD
        (void) sd_journal_sendv(iov, (int) n);
        if (also_stderr())
                fprintf(stderr, "fsgated: %s\n", buf);
}
