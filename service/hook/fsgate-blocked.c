/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
/* The hook a deny routes the kernel's request to. It runs synchronously inside the kernel's
 * module request (as modprobe's install command, uid 0), so it must be quick and must never
 * wait for the service: it writes one kernel log line, hands the report to a detached
 * child, and exits 0 — the mount then fails with "unknown filesystem type". Any user who may
 * create a user namespace can make the kernel ask as often as it likes, so both are rate
 * limited per type (hook-ratelimit.h): past the burst an attempt costs a few system calls
 * and one line later sums them up. From udev it reports a new device itself, within the
 * 2.5 s it allows itself, or hands the report to systemd; that path is not limited here,
 * because udev runs it synchronously in a bounded number of workers and fsgated reports a
 * medium only once.
 *
 *   fsgate-blocked TYPE MODULE SOURCE     from the install line of a deny file
 *   fsgate-blocked --device DEVNODE       from the udev rule; the type is udev's ID_FS_TYPE
 *   fsgate-blocked --udev-import DEVNODE  from the udev rule (IMPORT): UDISKS_IGNORE=1 for a
 *                                         medium whose module a grant loaded for another one
 *   fsgate-blocked --report DEVNODE       from fsgate-report-device@.service; type from udev's database
 *   fsgate-blocked --boot                 from fsgate-boot-report.service
 *   fsgate-blocked --route TYPE MODULE    from fsgate's routes file (routes.h): a block by another's file
 *   fsgate-blocked --observe TYPE MODULE PROFILE
 *                                         from an observation (observe.h): PROFILE would block it
 *   fsgate-blocked --refresh-routes       from fsgate-routes.service: rebuilds that file
 *
 * One row of modes[] (at main()) each: its option, arguments, time budget and function. The
 * kernel's paths are here; the device paths (--device, --udev-import, --report, --boot and
 * the hand-over to systemd) in hook-device.c. The install lines' arguments are hook-line.h's.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/time.h>
#include <time.h>
#include <systemd/sd-bus.h>

#include "fsgate-api.h"
#include "hook-ratelimit.h"
#include "hook.h"
#include "macro.h"
#include "name.h"
#include "routes.h"
#include "state.h"
#include "strv.h"
#include "time-util.h"

uint64_t hook_start_usec;

int hook_bus_open(const char *address, uint64_t timeout_usec, sd_bus **ret) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        if (address) {
                r = sd_bus_new(&bus);
                if (r >= 0)
                        r = sd_bus_set_address(bus, address);
                if (r >= 0)
                        r = sd_bus_start(bus);
        } else
                r = sd_bus_open_system(&bus);
        if (r >= 0)
                r = sd_bus_set_method_call_timeout(bus, timeout_usec);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(bus);
        return 0;
}

int hook_call(const char *method, const char *a, const char *b, uint64_t timeout_usec) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        r = hook_bus_open(NULL, timeout_usec, &bus);
        if (r < 0)
                return r;
        return sd_bus_call_method(bus, FSGATE_BUS_NAME, FSGATE_BUS_PATH, FSGATE_BUS_IFACE, method, NULL, NULL, "ss", a, b);
}

/* The report must not hold up the kernel, yet fsgated only believes reports from root,
 * and it can check who sent one only while the sender is still connected. So a detached
 * child makes the call and waits for the answer (bus activation included); the parent
 * returns to modprobe at once. The child inherits the reporter locks of
 * hook_claim_reporter() and holds them until it exits. */
static void post(const char *method, const char *a, const char *b) {
        pid_t pid;
        int fd;

        pid = fork();
        if (pid != 0)
                return; /* parent (or fork failed): done */
        (void) setsid();
        fd = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (fd >= 0) {
                (void) dup2(fd, STDIN_FILENO);
                (void) dup2(fd, STDOUT_FILENO);
                (void) dup2(fd, STDERR_FILENO);
        }
        alarm(15);
        hook_call(method, a, b, 14 * 1000000ULL);
        _exit(0);
}

/* One counted block (v): past the burst nothing but the summary, when a window ends; within
 * it the kernel log line and, with a reporter free, the report. */
static int report_block(int dir_fd, const HookVerdict *v, const char *type, const char *module, const char *source) {
        int locks[2];

        /* <4> = warning: visible in dmesg and the journal, and not alarming. */
        if (v->summary > 0)
                hook_kmsg("<4>fsgate: %u more blocked autoloads of filesystem %s (module %s) suppressed; "
                     "at most %u are logged per %u s\n", v->summary, type, module, v->burst, v->window_sec);
        if (!v->log)
                return 0;
        /* The way out is why's: it offers the safest choice first (Open safely, this medium, a
         * while) and the permanent allow last; a line naming only the allow would make it the
         * first thing people try. */
        hook_kmsg("<4>fsgate: blocked autoload of filesystem %s (module %s, denied by %s); see: fsgatectl why %s\n",
             type, module, source, type);
        if (!v->report || hook_claim_reporter(dir_fd, type, locks) < 0)
                return 0;
        post("ReportBlocked", type, module);
        close(locks[0]);
        close(locks[1]);
        return 0;
}

/* A module request the deny routed here. Past the burst of its type this is all an
 * attempt costs: the state opened, counted, closed; no fork, no bus. */
static int blocked_mode(char **args, const FsgHookArgs *line) {
        _cleanup_close_ int dir_fd = hook_state_open();
        HookVerdict v;

        hook_account(dir_fd, line->type, &v);
        return report_block(dir_fd, &v, line->type, line->module, line->source);
}

/* What a routed request comes to (kept per type: hook_route_verdict_put()). */
typedef enum RouteVerdict {
        ROUTE_SILENT = 1,       /* still blocked without a word: reported as any block */
        ROUTE_DENIED,           /* denied in another way now: nothing more */
        ROUTE_LOAD,             /* not denied any more: loaded by name */
} RouteVerdict;

/* The configuration a verdict was reached for: the modprobe.d directories as they stand,
 * the module and the kernel (the command line is the boot's). */
static uint64_t route_key(const FsgContext *c, const char *module) {
        uint64_t h = fsg_routes_conf_fingerprint(c);

        for (const char *p = module; p; p = p == module ? c->kver : NULL)
                for (const unsigned char *b = (const unsigned char *) p; *b; b++)
                        h = (h ^ *b) * UINT64_C(1099511628211);
        return h;
}

/* The context to build the state in (*ret_c, NULL when none can be made) and the key of its
 * configuration (*ret_key); past the burst (v->log false) the verdict kept for that key, else
 * -ENOENT: then the caller builds. */
static int kept_verdict(int dir_fd, const char *type, const char *module, const HookVerdict *v, FsgContext **ret_c,
                        uint64_t *ret_key) {
        if (fsg_context_new(secure_getenv("FSGATE_ROOT"), NULL, ret_c, NULL) < 0)
                return -ENOENT;
        *ret_key = route_key(*ret_c, module);
        return v->log ? -ENOENT : hook_route_verdict_get(dir_fd, type, *ret_key);
}

static int route_load(const char *type, const char *module) {
        const char *modprobe = secure_getenv("FSGATE_MODPROBE") ?: "/sbin/modprobe";

        /* exec keeps a pending alarm: modprobe gets the time it needs. */
        alarm(0);
        execl(modprobe, "modprobe", "-q", "--", module, (char *) NULL);
        hook_kmsg("<4>fsgate: could not run %s for filesystem %s (module %s): %m\n", modprobe, type, module);
        return 0;
}

/* What a routed or observed request comes to: past the burst the verdict kept for this
 * configuration (kept_verdict()), *ret_kept true; else the state's, built now (*ret_s holds
 * *ret_x) and kept for the next request. A configuration that cannot be read comes to
 * unreadable (*ret_x NULL), kept as well; when that is 0, to -ENOENT, nothing kept. */
static int routed_verdict(int dir_fd, const char *type, const char *module, const HookVerdict *v,
                          RouteVerdict unreadable, bool *ret_kept, FsgState **ret_s, const FsgEntry **ret_x) {
        _cleanup_(fsg_context_freep) FsgContext *c = NULL;
        uint64_t key = 0;
        int verdict;

        *ret_x = NULL;
        verdict = kept_verdict(dir_fd, type, module, v, &c, &key);
        *ret_kept = verdict > 0;
        if (*ret_kept)
                return verdict;
        if (c && fsg_state_build_one(c, module, ret_s, NULL) >= 0 && (*ret_x = fsg_state_find(*ret_s, module)))
                verdict = strv_contains((*ret_x)->silent_types, type) ? ROUTE_SILENT :
                          (*ret_x)->denied ? ROUTE_DENIED : ROUTE_LOAD;
        else if (unreadable == 0)
                return -ENOENT;
        else
                verdict = unreadable;
        hook_route_verdict_put(dir_fd, type, key, verdict);
        return verdict;
}

/* A request the routes file sent here. The route was written when another file's deny
 * blocked the type and nothing reported it; the configuration may have changed since, and
 * fsgate-routes.path catches up only a moment later. So the state is read again: still
 * silently blocked, the block is reported as any other; denied in any other way (a deny of
 * fsgate's now, whose own line runs the hook as well; an alias some file added), nothing
 * more, and never a load: a load by name would pass the blacklist; not denied any more, the
 * module is loaded by name, as the request would have done without the route. A
 * configuration that cannot be read loads nothing: the route exists because the type was
 * denied.
 *
 * The request is counted first, as a blocked one is: the state costs some 17 ms of CPU, and
 * any user may ask as often as a user namespace lets them. Past the burst nothing is logged
 * or reported, but a request that may load must still load: so the verdict the last build
 * reached is kept with its configuration's fingerprint (readdir and fstatat, no file read),
 * and acted on while that is unchanged. A changed configuration is built once more. The
 * fingerprint misses only a change through a symlink to a file elsewhere; then the kept
 * verdict lasts until the next window's first request builds again. */
static int route_mode(char **args, const FsgHookArgs *line) {
        const char *type = line->type, *module = line->module;
        _cleanup_close_ int dir_fd = hook_state_open();
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        const FsgEntry *x;
        HookVerdict v;
        int verdict;
        bool kept;

        hook_account_route(dir_fd, type, &v);
        verdict = routed_verdict(dir_fd, type, module, &v, 0, &kept, &s, &x);
        if (verdict < 0) {
                if (v.log)
                        hook_kmsg("<4>fsgate: blocked autoload of filesystem %s (module %s): the configuration could not "
                             "be read\n", type, module);
                return 0;
        }
        if (verdict == ROUTE_LOAD)
                return route_load(type, module);
        if (kept)
                return 0;       /* blocked, as the last build found: quiet past the burst */
        if (verdict == ROUTE_SILENT)
                return report_block(dir_fd, &v, type, module,
                                    *x->deciding_file ? x->deciding_file : "the kernel command line");
        return 0;
}

/* A request an observation sent here (observe.h): the profile would deny the module, nothing
 * does yet. Counted first, as a route is (and apart from it: both may run for one request);
 * the verdict is the route's, kept the same way: not denied, the profile's would-block is
 * recorded (within the burst) and the module loaded by name, as the request would have done
 * without the observation; denied meanwhile (a vendor file came, the profile was enforced),
 * nothing: the deny's own line, or a route, reports the block. */
static int observe_mode(char **args, const FsgHookArgs *line) {
        _cleanup_close_ int dir_fd = hook_state_open();
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        const FsgEntry *x;
        HookVerdict v;
        bool kept;

        hook_account_observe(dir_fd, line->type, &v);
        /* Unreadable, the configuration is taken as it was when the observation began: the
         * module allowed. Observing must never block what the profile does not yet. */
        if (routed_verdict(dir_fd, line->type, line->module, &v, ROUTE_LOAD, &kept, &s, &x) != ROUTE_LOAD)
                return 0;
        if (!kept)
                hook_observe_record(line->type, line->module, line->profile, &v);
        return route_load(line->type, line->module);
}

static int refresh_routes_mode(char **args, const FsgHookArgs *line) {
        _cleanup_(fsg_context_freep) FsgContext *c = NULL;
        FsgError e = {};
        bool changed;

        if (fsg_context_new(secure_getenv("FSGATE_ROOT"), NULL, &c, &e) < 0 ||
            fsg_routes_refresh(c, &changed, &e) < 0) {
                fprintf(stderr, "fsgate-blocked: %s\n", e.message);
                return 1;
        }
        printf("%s%s %s\n", c->root, FSG_ROUTES_PATH, changed ? "rebuilt" : "unchanged");
        return 0;
}

/* The kernel starts modprobe, and so the hook, without standard input, output or error
 * (kernel/umh.c). Left free, those numbers would go to the files opened next, the reporter
 * locks among them, and the reporting child's dup2() of /dev/null onto them would close
 * the locks. */
static void stdio_fill(void) {
        int fd;

        do
                fd = open("/dev/null", O_RDWR | O_NOCTTY);
        while (fd >= 0 && fd <= STDERR_FILENO);
        if (fd > STDERR_FILENO)
                close(fd);
}

/* The timer ends the hook quietly: killed by a signal, it would make udevd log the
 * device event as failed, which it is not. */
static void on_alarm(int sig) {
        (void) sig;
        _exit(0);
}

/* The kernel's and udev's wait: the hook never holds them up for long, whatever the bus does. */
#define HOOK_BUDGET_USEC (3 * UINT64_C(1000000))

/* Each way the hook is run: the option that names it (NULL: a deny's install line, which has
 * none), the number of arguments after it, the time it may take in all (0: none, a unit's
 * job with the unit's timeout, which may wait for the lock) and what it does. The two modes
 * an install line runs take what fsg_hook_args_parse() read (hook-line.h). */
typedef struct HookMode {
        const char *option;
        int n_args;
        uint64_t budget_usec;
        HookModeRun run;
        bool install_line;
} HookMode;

static const HookMode modes[] = {
        { "--device",            1, HOOK_DEVICE_BUDGET_USEC,       hook_device_mode,      false },
        { "--udev-import",       1, HOOK_BUDGET_USEC,              hook_udev_import_mode, false },
        { "--refresh-routes",    0, 0,                             refresh_routes_mode,   false },
        { "--report",            1, 60 * UINT64_C(1000000),        hook_report_mode,      false },
        { "--boot",              0, 120 * UINT64_C(1000000),       hook_boot_mode,        false },
        { FSG_HOOK_ROUTE_OPTION, 2, HOOK_BUDGET_USEC,              route_mode,            true  },
        { FSG_HOOK_OBSERVE_OPTION, 3, HOOK_BUDGET_USEC,            observe_mode,          true  },
        { NULL,                  3, HOOK_BUDGET_USEC,              blocked_mode,          true  },
};

/* The option a kind of install line has (NULL: a deny's, which has none). */
static const char *kind_option(FsgHookLineKind kind) {
        return kind == FSG_HOOK_LINE_ROUTE   ? FSG_HOOK_ROUTE_OPTION :
               kind == FSG_HOOK_LINE_OBSERVE ? FSG_HOOK_OBSERVE_OPTION : NULL;
}

/* The row for argv; NULL: none (then the usage, and still no load). */
static const HookMode *mode_find(int argc, char **argv, FsgHookArgs *line) {
        bool parsed = fsg_hook_args_parse(argc - 1, argv + 1, line) >= 0;

        for (size_t i = 0; i < ELEMENTSOF(modes); i++) {
                const HookMode *m = &modes[i];

                if (m->install_line) {
                        if (parsed && streq_ptr(kind_option(line->kind), m->option))
                                return m;
                } else if (argc == 2 + m->n_args && streq(argv[1], m->option))
                        return m;
        }
        return NULL;
}

/* The budget's end ends the hook quietly (on_alarm()). setitimer(), not alarm(): the device
 * path's is not whole seconds. */
static void budget_arm(uint64_t usec) {
        struct itimerval budget = { .it_value = { .tv_sec = usec / 1000000, .tv_usec = usec % 1000000 } };

        hook_start_usec = fsg_now_usec();
        (void) setitimer(ITIMER_REAL, &budget, NULL);
}

int main(int argc, char *argv[]) {
        const HookMode *m;
        FsgHookArgs line;

        stdio_fill();
        signal(SIGALRM, on_alarm);
        budget_arm(HOOK_BUDGET_USEC);

        m = mode_find(argc, argv, &line);
        if (!m) {
                fprintf(stderr, "usage: fsgate-blocked TYPE MODULE SOURCE | --device DEVNODE | --udev-import DEVNODE |\n"
                                "                      --report DEVNODE | --boot | --route TYPE MODULE |\n"
                                "                      --observe TYPE MODULE PROFILE | --refresh-routes\n");
                return 0; /* still a block: modprobe must not load anything either way */
        }
        budget_arm(m->budget_usec);
        return m->run(m->option ? argv + 2 : argv + 1, m->install_line ? &line : NULL);
}
