/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <syslog.h>
#include <systemd/sd-journal.h>

#include "log.h"

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

void log_request(sd_bus_message *call, const char *message_id, int priority, const char *module,
                 const char *fmt, ...) {
        sd_bus_creds *creds = NULL;
        uid_t uid = (uid_t) -1;
        pid_t pid = 0;
        char buf[1024];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        if (sd_bus_query_sender_creds(call, SD_BUS_CREDS_EUID | SD_BUS_CREDS_PID | SD_BUS_CREDS_AUGMENT, &creds) >= 0) {
                (void) sd_bus_creds_get_euid(creds, &uid);
                (void) sd_bus_creds_get_pid(creds, &pid);
                sd_bus_creds_unref(creds);
        }
        /* FSGATE_MODULE= comes last: for a request about no single module (ExemptLoaded as a
         * whole) the list ends before it, as an empty value would only match searches for "". */
        (void) sd_journal_send("MESSAGE=%s (requested by uid %d, pid %d, %s)", buf, (int) uid, (int) pid,
                               sd_bus_message_get_sender(call) ?: "?",
                               "MESSAGE_ID=%s", message_id,
                               "PRIORITY=%i", priority,
                               "SYSLOG_IDENTIFIER=fsgated",
                               "FSGATE_REQUEST_UID=%d", (int) uid,
                               "FSGATE_REQUEST_PID=%d", (int) pid,
                               module && *module ? "FSGATE_MODULE=%s" : NULL, module,
                               NULL);
        if (also_stderr())
                fprintf(stderr, "fsgated: %s (requested by uid %d, pid %d)\n", buf, (int) uid, (int) pid);
}
