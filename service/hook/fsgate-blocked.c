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
 *   fsgate-blocked --refresh-routes       from fsgate-routes.service: rebuilds that file
 */
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/time.h>
#include <time.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-device.h>

#include "device-check.h"
#include "fsgate-api.h"
#include "hook-ratelimit.h"
#include "macro.h"
#include "name.h"
#include "routes.h"
#include "state.h"
#include "strv.h"
#include "time-util.h"
#include "unit-name.h"
#include "utf8.h"

static void kmsg(const char *fmt, ...) _printf_(1, 2);
static void kmsg(const char *fmt, ...) {
        char line[512];
        va_list ap;
        int fd, n;

        va_start(ap, fmt);
        n = vsnprintf(line, sizeof(line), fmt, ap);
        va_end(ap);
        /* FSGATE_KMSG lets host tests capture the line instead of logging to the host kernel. */
        fd = open(secure_getenv("FSGATE_KMSG") ?: "/dev/kmsg", O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return;
        if (n > 0)
                (void) !write(fd, line, (size_t) n < sizeof(line) ? (size_t) n : sizeof(line) - 1);
        close(fd);
}

/* A connection to the system bus, or to ADDRESS, whose calls give up after timeout_usec. */
static int bus_open(const char *address, uint64_t timeout_usec, sd_bus **ret) {
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

static int call(const char *method, const char *a, const char *b, uint64_t timeout_usec) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        r = bus_open(NULL, timeout_usec, &bus);
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
        call(method, a, b, 14 * 1000000ULL);
        _exit(0);
}

/* The device path's whole budget, in a udev worker, bus calls included; the call to fsgated
 * gets at most DEVICE_CALL_USEC of what the state build left, the hand-over to systemd the
 * rest. */
#define DEVICE_BUDGET_USEC 2500000ULL
#define DEVICE_CALL_USEC 1500000ULL
#define DEVICE_CALL_MIN_USEC 200000ULL
#define HANDOVER_CALL_USEC 800000ULL

/* When the device path started (main()). */
static uint64_t device_start_usec;

static uint64_t device_call_timeout_usec(void) {
        uint64_t spent = fsg_now_usec() - device_start_usec, t;

        t = spent + HANDOVER_CALL_USEC < DEVICE_BUDGET_USEC ? DEVICE_BUDGET_USEC - HANDOVER_CALL_USEC - spent : 0;
        if (t > DEVICE_CALL_USEC)
                t = DEVICE_CALL_USEC;
        return t < DEVICE_CALL_MIN_USEC ? DEVICE_CALL_MIN_USEC : t;
}

#define REPORT_UNIT_TEMPLATE "fsgate-report-device@.service"
/* PID 1's own socket (root only): it answers while dbus-daemon waits for fsgated to start. */
#define SYSTEMD_PRIVATE_ADDRESS "unix:path=/run/systemd/private"

/* fsgated did not take the report in time: on a slow machine its bus activation can take
 * longer than the budget, and dbus-daemon drops a queued call whose sender has gone. A unit
 * may wait as long as activation takes, so systemd is asked to start the device's instance
 * of fsgate-report-device@.service, without waiting for it. A unit rather than a child:
 * udevd kills what a RUN program leaves in its cgroup. */
static int hand_over(const char *devnode) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        char unit[FSG_UNIT_NAME_MAX + 1];
        int r;

        r = fsg_unit_name_from_path(REPORT_UNIT_TEMPLATE, devnode, unit, sizeof(unit));
        if (r < 0)
                return r;
        r = bus_open(SYSTEMD_PRIVATE_ADDRESS, HANDOVER_CALL_USEC, &bus);
        if (r < 0)
                return r;
        /* "replace": an instance already starting for this device takes this start as its own. */
        return sd_bus_call_method(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                  "org.freedesktop.systemd1.Manager", "StartUnit", NULL, NULL, "ss", unit, "replace");
}

/* A new block device: report it only if its filesystem type may not autoload, so that
 * ordinary disks do not start the service at every boot. */
static int device_mode(const char *devnode) {
        _cleanup_(fsg_context_freep) FsgContext *c = NULL;
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        const char *type = getenv("ID_FS_TYPE"), *root = secure_getenv("FSGATE_ROOT");
        const FsgEntry *x;

        if (!type || !fsg_name_is_valid(type) || !fsg_utf8_is_valid(devnode) || strncmp(devnode, "/dev/", 5) != 0)
                return 0;
        /* FSGATE_ROOT: tests judge against a scratch root; udev never sets it. A type a grant
         * for another medium loaded is registered, yet this medium must be reported:
         * --udev-import said so (FSGATE_GRANTED_ELSEWHERE). */
        if (fsg_context_new(root, NULL, &c, NULL) < 0 ||
            (!streq_ptr(getenv("FSGATE_GRANTED_ELSEWHERE"), "1") && !device_type_may_be_denied(c, type)) ||
            fsg_state_build(c, NULL, &s, NULL) < 0)
                return 0;
        x = fsg_state_find(s, type);
        if (!x || !x->denied || x->builtin)
                return 0;
        /* Synchronous, unlike the kernel's path: udevd kills what a RUN program leaves
         * behind in its cgroup once the event is done, and it can wait a few seconds. The
         * timer set in main() bounds the whole path: during boot the bus socket accepts
         * before dbus-daemon answers (sd-bus's own wait for the bus to start has no timeout),
         * and fsgate-boot-report.service reports such a disk once the bus is up. A scratch
         * root is no booted system: no hand-over there. */
        if (call("ReportDevice", devnode, type, device_call_timeout_usec()) < 0 && !root)
                (void) hand_over(devnode);
        return 0;
}

/* udev's IMPORT{program}: a medium of a type that a grant for another medium loaded is
 * hidden from udisks2 (UDISKS_IGNORE: desktops neither show nor mount it on their own), and
 * --device then reports it, so that someone is asked. Root can still mount it by hand. */
static int udev_import_mode(const char *devnode) {
        _cleanup_(fsg_context_freep) FsgContext *c = NULL;
        const char *type = getenv("ID_FS_TYPE");

        if (!type || !fsg_name_is_valid(type) || !fsg_utf8_is_valid(devnode) || strncmp(devnode, "/dev/", 5) != 0 ||
            fsg_context_new(secure_getenv("FSGATE_ROOT"), NULL, &c, NULL) < 0)
                return 0;
        if (device_granted_elsewhere(c, type, devnode))
                printf("UDISKS_IGNORE=1\nFSGATE_GRANTED_ELSEWHERE=1\n");
        return 0;
}

/* One counted block (v): past the burst nothing but the summary, when a window ends; within
 * it the kernel log line and, with a reporter free, the report. */
static int report_block(int dir_fd, const HookVerdict *v, const char *type, const char *module, const char *source) {
        int locks[2];

        /* <4> = warning: visible in dmesg and the journal, and not alarming. */
        if (v->summary > 0)
                kmsg("<4>fsgate: %u more blocked autoloads of filesystem %s (module %s) suppressed; "
                     "at most %u are logged per %u s\n", v->summary, type, module, v->burst, v->window_sec);
        if (!v->log)
                return 0;
        kmsg("<4>fsgate: blocked autoload of filesystem %s (module %s, denied by %s); allow with: fsgatectl allow %s\n",
             type, module, source, module);
        if (!v->report || hook_claim_reporter(dir_fd, type, locks) < 0)
                return 0;
        post("ReportBlocked", type, module);
        close(locks[0]);
        close(locks[1]);
        return 0;
}

/* A module request the deny routed here. Past the burst of its type this is all an
 * attempt costs: the state opened, counted, closed; no fork, no bus. */
static int blocked_mode(const char *type, const char *module, const char *source) {
        _cleanup_close_ int dir_fd = hook_state_open();
        HookVerdict v;

        hook_account(dir_fd, type, &v);
        return report_block(dir_fd, &v, type, module, source);
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

static int route_load(const char *type, const char *module) {
        const char *modprobe = secure_getenv("FSGATE_MODPROBE") ?: "/sbin/modprobe";

        /* exec keeps a pending alarm: modprobe gets the time it needs. */
        alarm(0);
        execl(modprobe, "modprobe", "-q", "--", module, (char *) NULL);
        kmsg("<4>fsgate: could not run %s for filesystem %s (module %s): %m\n", modprobe, type, module);
        return 0;
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
static int route_mode(const char *type, const char *module) {
        _cleanup_close_ int dir_fd = hook_state_open();
        _cleanup_(fsg_context_freep) FsgContext *c = NULL;
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        const FsgEntry *x;
        RouteVerdict verdict;
        HookVerdict v;
        uint64_t key = 0;
        int kept = -ENOENT;

        hook_account_route(dir_fd, type, &v);
        if (fsg_context_new(secure_getenv("FSGATE_ROOT"), NULL, &c, NULL) >= 0) {
                key = route_key(c, module);
                if (!v.log)
                        kept = hook_route_verdict_get(dir_fd, type, key);
        }
        if (kept == ROUTE_LOAD)
                return route_load(type, module);
        if (kept > 0)
                return 0;       /* blocked, as the last build found: quiet past the burst */
        if (!c || fsg_state_build_one(c, module, &s, NULL) < 0 || !(x = fsg_state_find(s, module))) {
                if (v.log)
                        kmsg("<4>fsgate: blocked autoload of filesystem %s (module %s): the configuration could not "
                             "be read\n", type, module);
                return 0;
        }
        verdict = strv_contains(x->silent_types, type) ? ROUTE_SILENT : x->denied ? ROUTE_DENIED : ROUTE_LOAD;
        hook_route_verdict_put(dir_fd, type, key, verdict);
        if (verdict == ROUTE_SILENT)
                return report_block(dir_fd, &v, type, module,
                                    *x->deciding_file ? x->deciding_file : "the kernel command line");
        return verdict == ROUTE_LOAD ? route_load(type, module) : 0;
}

static int refresh_routes_mode(void) {
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

/* The report of one device, from a unit: it may wait for fsgated's activation. The
 * configuration is read again (it may have changed since udev's event), and built once for
 * all of a boot's disks (*s). */
static void report_device(const FsgContext *c, FsgState **s, sd_device *d) {
        const char *devnode = NULL, *type = NULL;
        const FsgEntry *x;

        if (sd_device_get_devname(d, &devnode) < 0 || sd_device_get_property_value(d, "ID_FS_TYPE", &type) < 0 ||
            !fsg_name_is_valid(type) || !fsg_utf8_is_valid(devnode) || strncmp(devnode, "/dev/", 5) != 0 ||
            !device_type_may_be_denied(c, type))
                return;
        if (!*s && fsg_state_build(c, NULL, s, NULL) < 0)
                return;
        x = fsg_state_find(*s, type);
        if (x && x->denied && !x->builtin)
                (void) call("ReportDevice", devnode, type, 25000000ULL);
}

/* One device the udev hook could not report in time (hand_over()), from
 * fsgate-report-device@.service. What udev knows of it comes from udev's database. */
static int report_mode(const char *devnode) {
        _cleanup_(sd_device_unrefp) sd_device *d = NULL;
        _cleanup_(fsg_context_freep) FsgContext *c = NULL;
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;

        alarm(60);
        if (strncmp(devnode, "/dev/", 5) != 0 || sd_device_new_from_devname(&d, devnode) < 0 ||
            fsg_context_new(secure_getenv("FSGATE_ROOT"), NULL, &c, NULL) < 0)
                return 0;
        report_device(c, &s, d);
        return 0;
}

/* Disks that were there before the system bus (at boot, or plugged in before dbus.service
 * ran): their udev "add" found no one to tell. fsgate-boot-report.service runs this once the
 * bus is up; the service reports each medium only once, so a disk udev did report is not
 * reported again. Not in a udev worker: it may wait for bus activation. */
static int boot_mode(void) {
        _cleanup_(sd_device_enumerator_unrefp) sd_device_enumerator *e = NULL;
        _cleanup_(fsg_context_freep) FsgContext *c = NULL;
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;

        alarm(120);
        if (sd_device_enumerator_new(&e) < 0 || sd_device_enumerator_add_match_subsystem(e, "block", true) < 0 ||
            sd_device_enumerator_add_match_property(e, "ID_FS_TYPE", "*") < 0 ||
            fsg_context_new(secure_getenv("FSGATE_ROOT"), NULL, &c, NULL) < 0)
                return 0;
        for (sd_device *d = sd_device_enumerator_get_device_first(e); d; d = sd_device_enumerator_get_device_next(e))
                report_device(c, &s, d);
        return 0;
}

/* The timer ends the hook quietly: killed by a signal, it would make udevd log the
 * device event as failed, which it is not. */
static void on_alarm(int sig) {
        (void) sig;
        _exit(0);
}

int main(int argc, char *argv[]) {
        stdio_fill();
        /* Never hold up the kernel (or udev) for long, whatever the bus does. */
        signal(SIGALRM, on_alarm);
        alarm(3);

        if (argc == 3 && streq(argv[1], "--device")) {
                struct itimerval budget = { .it_value = { .tv_sec = DEVICE_BUDGET_USEC / 1000000,
                                                          .tv_usec = DEVICE_BUDGET_USEC % 1000000 } };
                device_start_usec = fsg_now_usec();
                (void) setitimer(ITIMER_REAL, &budget, NULL);
                return device_mode(argv[2]);
        }
        if (argc == 3 && streq(argv[1], "--udev-import"))
                return udev_import_mode(argv[2]);
        if (argc == 2 && streq(argv[1], "--refresh-routes")) {
                alarm(0); /* a unit's job, with the unit's timeout; it may wait for the lock */
                return refresh_routes_mode();
        }
        if (argc == 4 && streq(argv[1], "--route") && fsg_name_is_valid(argv[2]) && fsg_name_is_valid(argv[3]))
                return route_mode(argv[2], argv[3]);
        if (argc == 3 && streq(argv[1], "--report"))
                return report_mode(argv[2]);
        if (argc == 2 && streq(argv[1], "--boot"))
                return boot_mode();
        if (argc != 4 || !fsg_name_is_valid(argv[1]) || !fsg_name_is_valid(argv[2])) {
                fprintf(stderr, "usage: fsgate-blocked TYPE MODULE SOURCE | --device DEVNODE | --udev-import DEVNODE |\n"
                                "                      --report DEVNODE | --boot | --route TYPE MODULE | --refresh-routes\n");
                return 0; /* still a block: modprobe must not load anything either way */
        }
        return blocked_mode(argv[1], argv[2], argv[3]);
}
