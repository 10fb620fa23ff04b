/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fsgate-notify: the desktop side of a blocked filesystem. One per graphical session.
 *
 * It listens on the system bus for fsgated's Blocked signal and tells the person at the
 * desktop through org.freedesktop.Notifications on the session bus: which device, which
 * filesystem, why, and two buttons. A click calls fsgated with interactive authorization
 * allowed, so the session's polkit agent asks for a password; the answer comes back as a
 * second notification. Nothing is ever changed without a click.
 *
 * One sd-event loop, two sd-bus connections, everything asynchronous: a password dialog
 * left open for minutes must not stop the next Blocked signal from being shown.
 *
 * Only a block this session's person caused asks anything: a medium that appeared at this
 * session's seat while the session was the active one there. A mount request (Blocked's
 * cause "kernel") may be any local user's, from a user namespace too, and fsgated cannot
 * tell whose: it is shown as information, without Allow or Allow once, whatever the server
 * sends back. Another seat's medium is not shown at all.
 *
 * One file a job: notify-blocked.c takes the signal in, notify-item.c keeps one item per
 * stick, notify-post.c shows it, notify-call.c sends a click's Allow or Load, notify-mount.c
 * has udisks2 mount the stick after an Allow, notify-text.c words it all; this file parses
 * the arguments, connects the buses and runs the loop. */
#define _GNU_SOURCE
#include <getopt.h>
#include <signal.h>
#include <systemd/sd-daemon.h>

#include "config.h"
#include "fsgate-api.h"
#include "notify.h"

/* Held on the session bus: the user unit and the XDG autostart file must not both run us. */
#define INSTANCE_BUS_NAME "org.fsgate.fsgate1.Notify"

/* While no notification server runs, blocks wait for one; one that could not be shown
 * within this long is history, not news, and is dropped ("late"). */
#define LATE_USEC_DEFAULT (60 * 1000000ULL)

static int on_disconnected(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Context *ctx = userdata;
        const char *description = "a";

        (void) sd_bus_get_description(sd_bus_message_get_bus(m), &description);
        /* Reconnecting by hand would need every match again; the user unit restarts us.
         * ctx->event, not the bus's: a closed bus is already detached from the loop. */
        log_error("Lost the connection to the %s bus; exiting", description);
        return sd_event_exit(ctx->event, EXIT_FAILURE);
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        return sd_event_exit(sd_event_source_get_event(s), EXIT_SUCCESS);
}

static int bus_connect(const char *address, bool system, const char *description, sd_bus **ret) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        /* Without an address, the usual places: $DBUS_SYSTEM_BUS_ADDRESS / $DBUS_SESSION_BUS_ADDRESS,
         * else the well-known sockets. */
        if (!address)
                return system ? sd_bus_open_system_with_description(ret, description)
                              : sd_bus_open_user_with_description(ret, description);
        r = sd_bus_new(&bus);
        if (r >= 0)
                r = sd_bus_set_address(bus, address);
        if (r >= 0)
                r = sd_bus_set_bus_client(bus, 1);
        if (r >= 0)
                r = sd_bus_set_description(bus, description);
        if (r >= 0)
                r = sd_bus_start(bus);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(bus);
        return 0;
}

static int add_disconnect_match(sd_bus *bus, Context *ctx) {
        /* Delivered locally by sd-bus when the connection goes away. */
        return sd_bus_add_match(bus, NULL,
                                "type='signal',path='/org/freedesktop/DBus/Local',"
                                "interface='org.freedesktop.DBus.Local',member='Disconnected'",
                                on_disconnected, ctx);
}

/* 1: ready; 0: another instance serves this session; < 0: failed (logged). */
static int setup(Context *ctx, const char *system_address, const char *session_address) {
        int r;

        r = bus_connect(system_address, true, "system", &ctx->system_bus);
        if (r < 0)
                return log_error("Failed to connect to the system bus: %s", strerror(-r)), r;
        r = bus_connect(session_address, false, "session", &ctx->session_bus);
        if (r < 0)
                return log_error("Failed to connect to the session bus: %s", strerror(-r)), r;

        r = sd_bus_attach_event(ctx->system_bus, ctx->event, SD_EVENT_PRIORITY_NORMAL);
        if (r >= 0)
                r = sd_bus_attach_event(ctx->session_bus, ctx->event, SD_EVENT_PRIORITY_NORMAL);
        if (r >= 0)
                r = add_disconnect_match(ctx->system_bus, ctx);
        if (r >= 0)
                r = add_disconnect_match(ctx->session_bus, ctx);
        if (r < 0)
                return log_error("Failed to set up the event loop: %s", strerror(-r)), r;

        /* Synchronous on purpose: once we say we are ready, no Blocked can slip by. */
        r = blocked_watch(ctx);
        if (r < 0)
                return log_error("Failed to subscribe to %s.Blocked: %s", FSGATE_BUS_IFACE, strerror(-r)), r;
        r = posts_watch_server(ctx);
        if (r < 0)
                return log_error("Failed to subscribe to the notification server's signals: %s", strerror(-r)), r;

        /* Last, so that the name means "ready". Not queued: a second instance just leaves. */
        r = sd_bus_request_name(ctx->session_bus, INSTANCE_BUS_NAME, 0);
        if (r == -EEXIST)
                return log_info("Already running in this session (%s is taken); exiting", INSTANCE_BUS_NAME), 0;
        if (r < 0)
                return log_error("Failed to acquire %s: %s", INSTANCE_BUS_NAME, strerror(-r)), r;
        return 1;
}

static void context_done(Context *ctx) {
        items_free(ctx);
        ctx->caps_slot = sd_bus_slot_unref(ctx->caps_slot);
        ctx->flush_timer = sd_event_source_disable_unref(ctx->flush_timer);
        blocked_watch_done(ctx);
        ctx->system_bus = sd_bus_flush_close_unref(ctx->system_bus);
        ctx->session_bus = sd_bus_flush_close_unref(ctx->session_bus);
}

static void help(void) {
        printf("fsgate-notify [OPTIONS...]\n\n"
               "Show a desktop notification when fsgate blocks a filesystem, with buttons to allow it.\n"
               "Started with the graphical session (user unit fsgate-notify.service or XDG autostart).\n\n"
               "  -h --help                       Show this help\n"
               "     --version                    Show the version\n"
               "     --system-bus-address=ADDRESS Watch fsgated on this bus instead of the system bus\n"
               "     --session-bus-address=ADDRESS Post notifications on this bus instead of the session bus\n"
               "     --late-after=SECONDS         While no notification server runs, drop blocks older than\n"
               "                                  this instead of showing them late (default 60)\n\n"
               "Set SYSTEMD_LOG_LEVEL=debug for more messages. See fsgate-notify(1).\n");
}

/* 1: run; 0: done (--help, --version); < 0: wrong usage (said). */
static int parse_argv(int argc, char *argv[], const char **ret_system_address, const char **ret_session_address,
                      uint64_t *ret_late_usec) {
        enum { ARG_VERSION = 0x100, ARG_SYSTEM_ADDRESS, ARG_SESSION_ADDRESS, ARG_LATE_AFTER };
        static const struct option options[] = {
                { "help",                no_argument,       NULL, 'h'                 },
                { "version",             no_argument,       NULL, ARG_VERSION         },
                { "system-bus-address",  required_argument, NULL, ARG_SYSTEM_ADDRESS  },
                { "session-bus-address", required_argument, NULL, ARG_SESSION_ADDRESS },
                { "late-after",          required_argument, NULL, ARG_LATE_AFTER      },
                {}
        };
        unsigned long late;
        char *end;
        int c;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h': help(); return 0;
                case ARG_VERSION: printf("fsgate-notify %s\n", FSGATE_VERSION); return 0;
                case ARG_SYSTEM_ADDRESS: *ret_system_address = optarg; break;
                case ARG_SESSION_ADDRESS: *ret_session_address = optarg; break;
                case ARG_LATE_AFTER:
                        errno = 0;
                        late = strtoul(optarg, &end, 10);
                        if (errno || end == optarg || *end || *optarg == '-' || late > 86400) {
                                fprintf(stderr, "fsgate-notify: --late-after wants seconds (0..86400)\n");
                                return -EINVAL;
                        }
                        *ret_late_usec = late * 1000000ULL;
                        break;
                default: return -EINVAL;
                }
        if (optind < argc) {
                fprintf(stderr, "fsgate-notify takes no arguments\n");
                return -EINVAL;
        }
        return 1;
}

int main(int argc, char *argv[]) {
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        const char *system_address = NULL, *session_address = NULL;
        Context ctx = { .late_usec = LATE_USEC_DEFAULT, .request = call_start };
        sigset_t ss;
        int r;

        r = parse_argv(argc, argv, &system_address, &session_address, &ctx.late_usec);
        if (r <= 0)
                return r < 0 ? 2 : 0;
        /* The texts follow the session's language; the log stays English for whoever reads it. */
        fsg_i18n_init();
        log_parse_environment();

        /* sd-event wants the signals blocked before it takes them over. */
        sigemptyset(&ss);
        sigaddset(&ss, SIGTERM);
        sigaddset(&ss, SIGINT);
        sigprocmask(SIG_BLOCK, &ss, NULL);

        r = sd_event_default(&event);
        if (r < 0) {
                log_error("Failed to create the event loop: %s", strerror(-r));
                return EXIT_FAILURE;
        }
        ctx.event = event;
        r = sd_event_add_signal(event, NULL, SIGTERM, on_signal, NULL);
        if (r >= 0)
                r = sd_event_add_signal(event, NULL, SIGINT, on_signal, NULL);
        if (r < 0) {
                log_error("Failed to handle signals: %s", strerror(-r));
                return EXIT_FAILURE;
        }

        r = setup(&ctx, system_address, session_address);
        if (r <= 0) {
                context_done(&ctx);
                return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        }
        (void) sd_notify(0, "READY=1\nSTATUS=Watching for blocked filesystems");
        log_info("Watching for blocked filesystems");

        r = sd_event_loop(event);
        if (r < 0)
                log_error("Event loop failed: %s", strerror(-r));
        context_done(&ctx);
        return r < 0 ? EXIT_FAILURE : r;
}
