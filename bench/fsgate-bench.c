/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fsgate-bench: the measuring half of bench/run-bench. An sd-bus client that talks to a
 * running fsgated on $DBUS_SYSTEM_BUS_ADDRESS (or the system bus), plus two process timers
 * (cold start of the daemon, wall time of any command), so that every figure of the report
 * comes from the same clock and the same fork/exec path.
 *
 * Every command prints exactly one JSON object on one line on stdout; diagnostics go to
 * stderr. See --help.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "fsgate-api.h"
#include "macro.h"


#define CALL_TIMEOUT_USEC (10 * 1000000ULL)
#define WAIT_NAME_USEC    (10 * 1000000ULL)
#define MAX_CLIENTS       256
#define MAX_ROUNDS        20
#define WARMUP_CALLS      20
#define MAX_FLOOD_CALLS   16

typedef enum Method {
        METHOD_PING,
        METHOD_LIST,
        METHOD_GET,
        METHOD_MIX,     /* List and Get, alternating: what the service itself works for */
        _METHOD_MAX,
} Method;

static const char * const method_names[_METHOD_MAX] = {
        [METHOD_PING] = "ping",
        [METHOD_LIST] = "list",
        [METHOD_GET]  = "get",
        [METHOD_MIX]  = "mix",
};

typedef struct FloodCall {
        const char *method, *name;
        uint64_t flags;
        bool with_flags;        /* METHOD:NAME:FLAGS ("st"), else METHOD:NAME ("s", a read) */
} FloodCall;

typedef struct Options {
        unsigned clients;
        uint64_t calls;         /* per method, all clients and rounds together */
        double seconds;         /* per method, all rounds together: a bound, not a target */
        unsigned rounds;
        unsigned reps;
        bool methods[_METHOD_MAX];
        const char *get_name;
        const char *chroot_dir;
        const char *touch_file;
        const char *child_log;
        pid_t service_pid;      /* for CPU time per call; 0: not measured */
        pid_t bus_pid;
        unsigned interval_ms;   /* during: pause between two calls */
        uid_t uid;              /* flood: the caller's uid; 0: stay root */
        unsigned in_flight;     /* flood: unanswered calls per connection, at most */
        FloodCall flood_calls[MAX_FLOOD_CALLS];
        unsigned n_flood_calls;
        const char *expect;     /* flood: the error every call must get */
} Options;

_printf_(1, 2)
static int fail(const char *fmt, ...) {
        va_list ap;

        fputs("fsgate-bench: error: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        return -1;
}

static uint64_t now_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

/* ---- Samples ------------------------------------------------------------------------- */

typedef struct Samples {
        uint64_t *ns;
        size_t n, cap;
} Samples;

static void samples_done(Samples *s) {
        free(s->ns);
        *s = (Samples) {};
}

static int samples_add(Samples *s, uint64_t v) {
        if (s->n == s->cap) {
                size_t cap = s->cap ? s->cap * 2 : 1024;
                uint64_t *t = realloc(s->ns, cap * sizeof(uint64_t));
                if (!t)
                        return -ENOMEM;
                s->ns = t;
                s->cap = cap;
        }
        s->ns[s->n++] = v;
        return 0;
}

static int samples_merge(Samples *into, const Samples *from) {
        for (size_t i = 0; i < from->n; i++)
                if (samples_add(into, from->ns[i]) < 0)
                        return -ENOMEM;
        return 0;
}

static int cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
        return x < y ? -1 : x > y;
}

static void samples_sort(Samples *s) {
        if (s->n > 0)
                qsort(s->ns, s->n, sizeof(uint64_t), cmp_u64);
}

/* Nearest rank on sorted samples: the smallest value with at least p% of samples at or below. */
static double samples_pct(const Samples *s, double p) {
        size_t rank;

        if (s->n == 0)
                return 0;
        rank = (size_t) ((p / 100.0) * (double) s->n + 0.999999);
        if (rank < 1)
                rank = 1;
        if (rank > s->n)
                rank = s->n;
        return (double) s->ns[rank - 1];
}

static double samples_mean(const Samples *s) {
        double sum = 0;

        for (size_t i = 0; i < s->n; i++)
                sum += (double) s->ns[i];
        return s->n ? sum / (double) s->n : 0;
}

/* ---- CPU time ----------------------------------------------------------------------- */

/* Time on CPU of a (single-threaded) process, from the scheduler's own accounting, in ns;
 * UINT64_MAX if unknown. fsgated and dbus-daemon each run one thread. */
static uint64_t cpu_ns_of(pid_t pid) {
        _cleanup_fclose_ FILE *f = NULL;
        char path[64];
        unsigned long long v;

        if (pid <= 0)
                return UINT64_MAX;
        snprintf(path, sizeof(path), "/proc/%d/schedstat", (int) pid);
        f = fopen(path, "re");
        if (!f || fscanf(f, "%llu", &v) != 1)
                return UINT64_MAX;
        return v;
}

static uint64_t cpu_ns_self(void) {
        struct timespec ts;

        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

typedef struct CpuSnap {
        uint64_t service, bus, client;
} CpuSnap;

static CpuSnap cpu_snap(const Options *o) {
        return (CpuSnap) { cpu_ns_of(o->service_pid), cpu_ns_of(o->bus_pid), cpu_ns_self() };
}

static uint64_t cpu_delta(uint64_t a, uint64_t b) {
        return a == UINT64_MAX || b == UINT64_MAX || b < a ? UINT64_MAX : b - a;
}

/* ---- Calls --------------------------------------------------------------------------- */

static int open_bus(sd_bus **ret) {
        int r = sd_bus_open_system(ret);
        if (r < 0)
                return fail("cannot connect to the bus (DBUS_SYSTEM_BUS_ADDRESS=%s): %s",
                            getenv("DBUS_SYSTEM_BUS_ADDRESS") ?: "unset", strerror(-r));
        return 0;
}

/* One call, the way any client makes it: build, send, wait for the reply. On failure the
 * D-Bus error name (or errno text) is copied into errbuf. */
static int do_call(sd_bus *bus, Method method, const char *get_name, sd_bus_message **ret_reply,
                   char *errbuf, size_t errlen) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        switch (method) {
        case METHOD_PING:
                r = sd_bus_message_new_method_call(bus, &m, FSGATE_BUS_NAME, FSGATE_BUS_PATH, "org.freedesktop.DBus.Peer", "Ping");
                break;
        case METHOD_LIST:
                r = sd_bus_message_new_method_call(bus, &m, FSGATE_BUS_NAME, FSGATE_BUS_PATH, FSGATE_BUS_IFACE, "ListFilesystems");
                break;
        case METHOD_GET:
                r = sd_bus_message_new_method_call(bus, &m, FSGATE_BUS_NAME, FSGATE_BUS_PATH, FSGATE_BUS_IFACE, "GetFilesystem");
                if (r >= 0)
                        r = sd_bus_message_append(m, "s", get_name);
                break;
        default:
                r = -EINVAL;
        }
        if (r >= 0)
                r = sd_bus_call(bus, m, CALL_TIMEOUT_USEC, &error, ret_reply);
        if (r < 0 && errbuf)
                snprintf(errbuf, errlen, "%s: %s", method_names[method],
                         sd_bus_error_is_set(&error) ? error.name : strerror(-r));
        sd_bus_error_free(&error);
        return r;
}

/* Checks once, outside any timing, that the answers are what they should be. */
static int check_reply(sd_bus *bus, Method method, const char *get_name, size_t *ret_entries) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        char err[256];
        size_t n = 0;
        int r;

        if (do_call(bus, method, get_name, &reply, err, sizeof(err)) < 0)
                return fail("%s", err);
        if (method == METHOD_LIST) {
                r = sd_bus_message_enter_container(reply, 'a', "(sassssbbbb)");
                while (r > 0 && (r = sd_bus_message_skip(reply, "(sassssbbbb)")) > 0)
                        n++;
                if (r < 0)
                        return fail("ListFilesystems: unexpected reply: %s", strerror(-r));
        } else if (method == METHOD_GET) {
                const char *module;
                r = sd_bus_message_enter_container(reply, 'r', "sassssbbbb");
                if (r > 0)
                        r = sd_bus_message_read(reply, "s", &module);
                if (r <= 0)
                        return fail("GetFilesystem %s: unexpected reply: %s", get_name, strerror(r < 0 ? -r : EBADMSG));
                n = 1;
        }
        if (ret_entries)
                *ret_entries = n;
        return 0;
}

typedef struct Phase {
        const Options *o;
        Method method;
        uint64_t calls_per_client;
        uint64_t deadline_ns;   /* set by the main thread after the barrier, read after it too */
        pthread_barrier_t start, ready;
} Phase;

typedef struct Worker {
        pthread_t thread;
        Phase *phase;
        unsigned index;
        Samples samples;
        uint64_t errors;
        char first_error[256];
        int setup_failed;
} Worker;

static void *worker_run(void *userdata) {
        Worker *w = userdata;
        Phase *p = w->phase;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;

        if (open_bus(&bus) < 0)
                w->setup_failed = 1;
        for (unsigned i = 0; !w->setup_failed && i < WARMUP_CALLS; i++) {
                Method m = p->method == METHOD_MIX ? (i % 2 ? METHOD_GET : METHOD_LIST) : p->method;
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
                if (do_call(bus, m, p->o->get_name, &reply, w->first_error, sizeof(w->first_error)) < 0)
                        w->setup_failed = 1;
        }
        /* Everyone connected and warm: the main thread sets the deadline, then all start. */
        pthread_barrier_wait(&p->ready);
        pthread_barrier_wait(&p->start);
        if (w->setup_failed)
                return NULL;

        for (uint64_t i = 0; i < p->calls_per_client; i++) {
                Method m = p->method == METHOD_MIX ? ((i + w->index) % 2 ? METHOD_GET : METHOD_LIST) : p->method;
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
                uint64_t t0 = now_ns(), t1;
                int r;

                r = do_call(bus, m, p->o->get_name, &reply, w->errors ? NULL : w->first_error, sizeof(w->first_error));
                t1 = now_ns();
                if (r < 0)
                        w->errors++;
                else if (samples_add(&w->samples, t1 - t0) < 0) {
                        w->errors++;
                        break;
                }
                if (t1 >= p->deadline_ns)
                        break;
        }
        return NULL;
}

typedef struct PhaseResult {
        Samples samples;
        uint64_t errors;
        uint64_t wall_ns;
        CpuSnap cpu;            /* spent during the timed part, UINT64_MAX where unknown */
        char first_error[256];
} PhaseResult;

/* N clients (threads, one connection each) make calls until each made its share or the
 * deadline passed. Latency per call, throughput over the wall time of the whole phase. */
static int run_phase(const Options *o, Method method, unsigned clients, uint64_t calls, double seconds, PhaseResult *res) {
        Worker *workers = calloc(clients, sizeof(Worker));
        Phase p = { .o = o, .method = method };
        unsigned started = 0;
        uint64_t t0, t1;
        CpuSnap c0, c1;
        int r = 0;

        if (!workers)
                return fail("out of memory");
        p.calls_per_client = (calls + clients - 1) / clients;
        if (p.calls_per_client == 0)
                p.calls_per_client = 1;
        pthread_barrier_init(&p.ready, NULL, clients + 1);
        pthread_barrier_init(&p.start, NULL, clients + 1);
        for (unsigned i = 0; i < clients; i++) {
                workers[i].phase = &p;
                workers[i].index = i;
                r = pthread_create(&workers[i].thread, NULL, worker_run, &workers[i]);
                if (r != 0) {
                        /* The barriers count on every thread: give up the whole run. */
                        fail("cannot start client thread %u: %s", i, strerror(r));
                        exit(EXIT_FAILURE);
                }
                started++;
        }
        pthread_barrier_wait(&p.ready);
        c0 = cpu_snap(o);
        t0 = now_ns();
        p.deadline_ns = t0 + (uint64_t) (seconds * 1e9);
        pthread_barrier_wait(&p.start);
        for (unsigned i = 0; i < started; i++)
                pthread_join(workers[i].thread, NULL);
        t1 = now_ns();
        c1 = cpu_snap(o);

        res->wall_ns = t1 - t0;
        res->cpu = (CpuSnap) { cpu_delta(c0.service, c1.service), cpu_delta(c0.bus, c1.bus),
                               cpu_delta(c0.client, c1.client) };
        for (unsigned i = 0; i < started; i++) {
                Worker *w = &workers[i];
                if (w->setup_failed) {
                        r = fail("client %u could not start: %s", i, w->first_error[0] ? w->first_error : "no connection");
                } else if (samples_merge(&res->samples, &w->samples) < 0)
                        r = fail("out of memory");
                res->errors += w->errors;
                if (!res->first_error[0] && w->first_error[0])
                        snprintf(res->first_error, sizeof(res->first_error), "%s", w->first_error);
                samples_done(&w->samples);
        }
        pthread_barrier_destroy(&p.ready);
        pthread_barrier_destroy(&p.start);
        free(workers);
        return r;
}

static void print_json_string(const char *s) {
        putchar('"');
        for (; *s; s++) {
                if (*s == '"' || *s == '\\')
                        printf("\\%c", *s);
                else if ((unsigned char) *s < 0x20)
                        printf("\\u%04x", (unsigned char) *s);
                else
                        putchar(*s);
        }
        putchar('"');
}

static void print_latency_fields(const Samples *s) {
        printf("\"samples\":%zu,\"min_us\":%.1f,\"p50_us\":%.1f,\"p90_us\":%.1f,\"p99_us\":%.1f,\"max_us\":%.1f,\"mean_us\":%.1f",
               s->n, s->n ? s->ns[0] / 1e3 : 0, samples_pct(s, 50) / 1e3, samples_pct(s, 90) / 1e3,
               samples_pct(s, 99) / 1e3, s->n ? s->ns[s->n - 1] / 1e3 : 0, samples_mean(s) / 1e3);
}

static void print_cpu_per_call(const char *key, uint64_t ns, size_t calls, bool comma) {
        if (ns == UINT64_MAX || calls == 0)
                printf("\"%s\":null%s", key, comma ? "," : "");
        else
                printf("\"%s\":%.1f%s", key, ns / 1e3 / (double) calls, comma ? "," : "");
}

/* ---- Commands ------------------------------------------------------------------------ */

/* The methods are measured in rounds, each round running every method in turn, so that a
 * slow moment of a shared machine hits all of them alike. */
/* One method's figures over every round of cmd_latency. */
typedef struct LatencyTotals {
        PhaseResult res;
        uint64_t wall;
        CpuSnap cpu;
        /* The quietest round: on a shared machine the least disturbed figure; -1 until seen. */
        double best_p50, best_cpu[3];
} LatencyTotals;

static uint64_t cpu_sum(uint64_t a, uint64_t b) {
        return a == UINT64_MAX || b == UINT64_MAX ? UINT64_MAX : a + b;
}

/* Adds one round's phase to t (r: how the phase ended; its errors count either way). The
 * caller frees one's samples. */
static int latency_add_round(LatencyTotals *t, PhaseResult *one, int r) {
        uint64_t per[3] = { one->cpu.service, one->cpu.bus, one->cpu.client };

        if (r >= 0 && samples_merge(&t->res.samples, &one->samples) < 0)
                r = fail("out of memory");
        t->res.errors += one->errors;
        t->wall += one->wall_ns;
        t->cpu.service = cpu_sum(t->cpu.service, one->cpu.service);
        t->cpu.bus = cpu_sum(t->cpu.bus, one->cpu.bus);
        t->cpu.client += one->cpu.client;
        if (r >= 0 && one->samples.n > 0) {
                double p50;
                samples_sort(&one->samples);
                p50 = samples_pct(&one->samples, 50);
                if (t->best_p50 < 0 || p50 < t->best_p50)
                        t->best_p50 = p50;
                for (int k = 0; k < 3; k++) {
                        double v = per[k] == UINT64_MAX ? -1 : per[k] / 1e3 / (double) one->samples.n;
                        if (v >= 0 && (t->best_cpu[k] < 0 || v < t->best_cpu[k]))
                                t->best_cpu[k] = v;
                }
        }
        if (!t->res.first_error[0])
                memcpy(t->res.first_error, one->first_error, sizeof(one->first_error));
        return r;
}

static void latency_print_method(const Options *o, Method m, LatencyTotals *t, bool first) {
        static const char * const names[3] = { "service", "bus", "client" };

        samples_sort(&t->res.samples);
        printf("%s{\"method\":\"%s\",\"clients\":%u,", first ? "" : ",", method_names[m], o->clients);
        print_latency_fields(&t->res.samples);
        printf(",\"seconds\":%.3f,\"calls_per_s\":%.0f,\"errors\":%" PRIu64 ",\"first_error\":",
               t->wall / 1e9, t->wall ? t->res.samples.n / (t->wall / 1e9) : 0.0, t->res.errors);
        print_json_string(t->res.first_error);
        printf(",\"best_round_p50_us\":%.1f", t->best_p50 / 1e3);
        for (int k = 0; k < 3; k++)
                if (t->best_cpu[k] < 0)
                        printf(",\"best_round_cpu_%s_us\":null", names[k]);
                else
                        printf(",\"best_round_cpu_%s_us\":%.1f", names[k], t->best_cpu[k]);
        printf(",\"cpu_us_per_call\":{");
        print_cpu_per_call("service", t->cpu.service, t->res.samples.n, true);
        print_cpu_per_call("bus", t->cpu.bus, t->res.samples.n, true);
        print_cpu_per_call("client", t->cpu.client, t->res.samples.n, false);
        printf("}}");
        if (t->res.errors)
                fprintf(stderr, "fsgate-bench: %s: %" PRIu64 " failed calls, first: %s\n", method_names[m],
                        t->res.errors, t->res.first_error);
}

/* Each method's reply checked once before measuring; *entries: ListFilesystems' length. */
static int latency_check_replies(const Options *o, size_t *entries) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;

        if (open_bus(&bus) < 0)
                return -1;
        for (Method m = 0; m < _METHOD_MAX; m++) {
                size_t n = 0;
                if (o->methods[m] && m != METHOD_MIX && check_reply(bus, m, o->get_name, &n) < 0)
                        return -1;
                if (m == METHOD_LIST && o->methods[m])
                        *entries = n;
        }
        return 0;
}

static int cmd_latency(const Options *o) {
        LatencyTotals t[_METHOD_MAX] = {};
        size_t entries = 0;
        bool first = true;
        int r = 0;

        if (latency_check_replies(o, &entries) < 0)
                return -1;
        for (Method m = 0; m < _METHOD_MAX; m++)
                t[m].best_p50 = t[m].best_cpu[0] = t[m].best_cpu[1] = t[m].best_cpu[2] = -1;
        for (unsigned round = 0; round < o->rounds && r >= 0; round++)
                for (Method m = 0; m < _METHOD_MAX && r >= 0; m++) {
                        PhaseResult one = {};
                        if (!o->methods[m])
                                continue;
                        r = run_phase(o, m, o->clients, o->calls / o->rounds, o->seconds / o->rounds, &one);
                        r = latency_add_round(&t[m], &one, r);
                        samples_done(&one.samples);
                }

        printf("{\"command\":\"latency\",\"clients\":%u,\"rounds\":%u,\"list_entries\":%zu,\"results\":[",
               o->clients, o->rounds, entries);
        for (Method m = 0; m < _METHOD_MAX; m++) {
                if (!o->methods[m])
                        continue;
                latency_print_method(o, m, &t[m], first);
                first = false;
                samples_done(&t[m].res.samples);
        }
        printf("]}\n");
        return r;
}

/* Just makes calls (for the memory figures): --calls in total, over --clients connections. */
static int cmd_calls(const Options *o) {
        PhaseResult res = {};
        Method method = METHOD_MIX;
        unsigned n = 0;
        int r;

        for (Method m = 0; m < _METHOD_MAX; m++)
                if (o->methods[m]) {
                        method = m;
                        n++;
                }
        if (n != 1)
                method = METHOD_MIX;
        r = run_phase(o, method, o->clients, o->calls, o->seconds, &res);
        printf("{\"command\":\"calls\",\"method\":\"%s\",\"clients\":%u,\"calls\":%zu,\"warmup_calls\":%u,\"errors\":%" PRIu64
               ",\"seconds\":%.3f}\n", method_names[method], o->clients, res.samples.n, WARMUP_CALLS * o->clients, res.errors,
               res.wall_ns / 1e9);
        samples_done(&res.samples);
        return r < 0 || res.errors ? -1 : 0;
}

/* Writes the file (same content each time): one inotify event, hence one rebuild. */
static int touch_file(const char *path) {
        static const char text[] = "# fsgate-bench: rewritten to make fsgated rebuild its state\n";
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        if (fd < 0)
                return fail("cannot write %s: %s", path, strerror(errno));
        if (write(fd, text, sizeof(text) - 1) != (ssize_t) sizeof(text) - 1)
                return fail("cannot write %s: %s", path, strerror(errno));
        return 0;
}

/* List right after a change in a modprobe.d directory (the service must rebuild before it
 * answers) beside List with nothing changed (answered from the cached state). */
static int cmd_rebuild(const Options *o) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        Samples changed = {}, cached = {};
        uint64_t start, deadline;
        char err[256];
        int r = 0;

        if (!o->touch_file)
                return fail("rebuild needs --touch=FILE");
        if (open_bus(&bus) < 0 || check_reply(bus, METHOD_LIST, NULL, NULL) < 0)
                return -1;
        start = now_ns();
        deadline = start + (uint64_t) (o->seconds * 1e9);
        for (unsigned i = 0; i < o->reps && r >= 0; i++) {
                for (int pass = 0; pass < 2 && r >= 0; pass++) {
                        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
                        uint64_t t0;
                        if (pass == 0 && touch_file(o->touch_file) < 0)
                                return -1;
                        t0 = now_ns();
                        r = do_call(bus, METHOD_LIST, NULL, &reply, err, sizeof(err));
                        if (r < 0)
                                return fail("%s", err);
                        r = samples_add(pass == 0 ? &changed : &cached, now_ns() - t0);
                }
                if (now_ns() >= deadline && i >= 2)
                        break;
        }
        if (r < 0)
                return fail("out of memory");
        samples_sort(&changed);
        samples_sort(&cached);
        printf("{\"command\":\"rebuild\",\"after_change\":{");
        print_latency_fields(&changed);
        printf("},\"cached\":{");
        print_latency_fields(&cached);
        printf("},\"rebuild_p50_us\":%.1f,\"seconds\":%.3f}\n",
               (samples_pct(&changed, 50) - samples_pct(&cached, 50)) / 1e3, (now_ns() - start) / 1e9);
        samples_done(&changed);
        samples_done(&cached);
        return 0;
}

static int open_child_log(const char *path) {
        int fd = open(path ?: "/dev/null", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0)
                return fail("cannot open %s: %s", path ?: "/dev/null", strerror(errno));
        return fd;
}

/* fork + exec with stdin from /dev/null, stdout to /dev/null, stderr to the child log. */
static pid_t spawn(char **argv, const char *chroot_dir, int log_fd) {
        pid_t pid = fork();

        if (pid < 0)
                return fail("fork: %s", strerror(errno)), -1;
        if (pid == 0) {
                int null = open("/dev/null", O_RDWR);
                if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(null, STDOUT_FILENO) < 0 ||
                    dup2(log_fd, STDERR_FILENO) < 0)
                        _exit(126);
                if (chroot_dir && (chroot(chroot_dir) < 0 || chdir("/") < 0)) {
                        fprintf(stderr, "fsgate-bench: chroot %s: %s\n", chroot_dir, strerror(errno));
                        _exit(126);
                }
                execvp(argv[0], argv);
                fprintf(stderr, "fsgate-bench: cannot run %s: %s\n", argv[0], strerror(errno));
                _exit(127);
        }
        return pid;
}

static void print_ms_summary(const char *key, Samples *s) {
        samples_sort(s);
        printf("\"%s\":{\"reps\":%zu,\"median_ms\":%.3f,\"min_ms\":%.3f,\"p90_ms\":%.3f,\"max_ms\":%.3f}", key, s->n,
               samples_pct(s, 50) / 1e6, s->n ? s->ns[0] / 1e6 : 0, samples_pct(s, 90) / 1e6,
               s->n ? s->ns[s->n - 1] / 1e6 : 0);
}

/* Wall time of a command, from fork to its exit (optionally inside a chroot). */
static int cmd_exec(const Options *o, char **argv) {
        _cleanup_close_ int log_fd = -1;
        Samples s = {};
        uint64_t start = now_ns();
        unsigned failures = 0;
        int last_status = 0;

        if (!argv[0])
                return fail("exec needs a command after --");
        log_fd = open_child_log(o->child_log);
        if (log_fd < 0)
                return -1;
        for (unsigned i = 0; i < o->reps; i++) {
                uint64_t t0 = now_ns();
                int status;
                pid_t pid = spawn(argv, o->chroot_dir, log_fd);

                if (pid < 0 || waitpid(pid, &status, 0) < 0)
                        return fail("cannot run %s", argv[0]);
                if (samples_add(&s, now_ns() - t0) < 0)
                        return fail("out of memory");
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                        failures++;
                        last_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
                }
                if ((now_ns() - start) / 1e9 >= o->seconds && i >= 2)
                        break;
        }
        printf("{\"command\":\"exec\",\"failures\":%u,\"last_failed_status\":%d,", failures, last_status);
        print_ms_summary("wall", &s);
        printf("}\n");
        samples_done(&s);
        if (failures)
                fprintf(stderr, "fsgate-bench: %s failed %u times (last status %d)\n", argv[0], failures, last_status);
        return failures ? -1 : 0;
}

typedef struct NameWatch {
        int owned;      /* -1 unknown, 0 free, 1 owned */
} NameWatch;

static int on_name_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        NameWatch *w = userdata;
        const char *name, *old_owner, *new_owner;

        if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) >= 0 && streq(name, FSGATE_BUS_NAME))
                w->owned = new_owner[0] != 0;
        return 0;
}

static int name_has_owner(sd_bus *bus) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        int has = 0, r;

        r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                               "NameHasOwner", &error, &reply, "s", FSGATE_BUS_NAME);
        if (r >= 0)
                r = sd_bus_message_read(reply, "b", &has);
        sd_bus_error_free(&error);
        return r < 0 ? r : has;
}

/* Processes bus traffic until the name reaches the wanted state, the child dies or time runs out. */
static int wait_name(sd_bus *bus, NameWatch *w, int want, pid_t child) {
        uint64_t deadline = now_ns() + WAIT_NAME_USEC * 1000;

        while (w->owned != want) {
                int r = sd_bus_process(bus, NULL);
                if (r < 0)
                        return fail("bus: %s", strerror(-r));
                if (r > 0)
                        continue;
                if (child > 0 && want == 1 && waitpid(child, NULL, WNOHANG) == child)
                        return fail("the service exited before taking %s (see its log)", FSGATE_BUS_NAME);
                if (now_ns() >= deadline)
                        return fail("timed out waiting for %s to be %s", FSGATE_BUS_NAME, want ? "taken" : "released");
                r = sd_bus_wait(bus, 100 * 1000);
                if (r < 0)
                        return fail("bus: %s", strerror(-r));
        }
        return 0;
}

/* From fork of the service to its first ListFilesystems reply, repeated: every start builds
 * the state from scratch. The service must not be running already. */
static int cmd_cold_start(const Options *o, char **argv) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
        _cleanup_close_ int log_fd = -1;
        Samples to_name = {}, to_reply = {};
        NameWatch w = { .owned = -1 };
        size_t entries = 0;
        int r;

        if (!argv[0])
                return fail("cold-start needs the service command after --");
        log_fd = open_child_log(o->child_log);
        if (log_fd < 0 || open_bus(&bus) < 0)
                return -1;
        r = sd_bus_add_match(bus, &slot,
                             "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
                             "interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='" FSGATE_BUS_NAME "'",
                             on_name_owner_changed, &w);
        if (r < 0)
                return fail("cannot watch %s: %s", FSGATE_BUS_NAME, strerror(-r));
        r = name_has_owner(bus);
        if (r < 0)
                return fail("NameHasOwner: %s", strerror(-r));
        if (r > 0)
                return fail("%s is already owned: stop the running service first", FSGATE_BUS_NAME);

        for (unsigned i = 0; i < o->reps; i++) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
                char err[256];
                uint64_t t0, t1, t2;
                pid_t pid;

                w.owned = 0;
                t0 = now_ns();
                pid = spawn(argv, NULL, log_fd);
                if (pid < 0)
                        return -1;
                r = wait_name(bus, &w, 1, pid);
                t1 = now_ns();
                if (r >= 0) {
                        r = do_call(bus, METHOD_LIST, NULL, &reply, err, sizeof(err));
                        if (r < 0)
                                fail("%s", err);
                }
                t2 = now_ns();
                if (r >= 0 && i == 0) {
                        sd_bus_message_unref(reply);
                        reply = NULL;
                        r = check_reply(bus, METHOD_LIST, NULL, &entries);
                }
                (void) kill(pid, SIGTERM);
                (void) waitpid(pid, NULL, 0);
                if (r < 0)
                        return -1;
                /* The bus drops the name when the connection goes: wait, or the next start races it. */
                if (wait_name(bus, &w, 0, 0) < 0)
                        return -1;
                if (samples_add(&to_name, t1 - t0) < 0 || samples_add(&to_reply, t2 - t0) < 0)
                        return fail("out of memory");
        }
        printf("{\"command\":\"cold-start\",\"list_entries\":%zu,", entries);
        print_ms_summary("to_name", &to_name);
        putchar(',');
        print_ms_summary("to_first_list_reply", &to_reply);
        printf("}\n");
        samples_done(&to_name);
        samples_done(&to_reply);
        return 0;
}

/* ---- Load from other callers ----------------------------------------------------------- */

typedef struct Flood Flood;

typedef struct FloodConn {
        Flood *flood;
        sd_bus *bus;
        uint64_t sent, answered, share;
} FloodConn;

struct Flood {
        const Options *o;
        sd_event *event;
        FloodConn conns[MAX_CLIENTS];
        unsigned n_conns, done;
        uint64_t ok, expected, other;
        char first_other[256];
};

static int flood_send(FloodConn *c);

static int on_flood_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        FloodConn *c = userdata;
        Flood *f = c->flood;
        const sd_bus_error *e = sd_bus_message_get_error(m);

        if (!e)
                f->ok++;
        else if (f->o->expect && sd_bus_error_has_name(e, f->o->expect))
                f->expected++;
        else if (f->other++ == 0)
                snprintf(f->first_other, sizeof(f->first_other), "%s: %s", e->name, e->message ?: "");
        c->answered++;
        if (c->answered == c->share) {
                if (++f->done == f->n_conns)
                        return sd_event_exit(f->event, 0);
                return 0;
        }
        return flood_send(c);
}

/* Keeps up to --in-flight calls unanswered on this connection, cycling over --call. */
static int flood_send(FloodConn *c) {
        const Options *o = c->flood->o;

        while (c->sent < c->share && c->sent - c->answered < o->in_flight) {
                const FloodCall *k = &o->flood_calls[c->sent % o->n_flood_calls];
                int r = k->with_flags ?
                        sd_bus_call_method_async(c->bus, NULL, FSGATE_BUS_NAME, FSGATE_BUS_PATH, FSGATE_BUS_IFACE, k->method,
                                                 on_flood_reply, c, "st", k->name, k->flags) :
                        sd_bus_call_method_async(c->bus, NULL, FSGATE_BUS_NAME, FSGATE_BUS_PATH, FSGATE_BUS_IFACE, k->method,
                                                 on_flood_reply, c, "s", k->name);
                if (r < 0)
                        return fail("%s %s: %s", k->method, k->name, strerror(-r));
                c->sent++;
        }
        return 0;
}

/* Change requests as another user (--uid), pipelined over --clients connections at once:
 * the load a local user can put on the service without being allowed anything. One event
 * loop, so that every connection floods from the first millisecond (no interpreter start
 * in the way of the figure measured beside it). */
static int cmd_flood(const Options *o) {
        Flood f = { .o = o, .n_conns = o->clients };
        uint64_t per = o->calls / o->clients, t0, t1;
        int r;

        if (o->n_flood_calls == 0)
                return fail("flood needs at least one --call=METHOD:NAME:FLAGS");
        if (per == 0)
                return fail("flood: --calls must be at least --clients");
        if (o->uid != 0 && (setgroups(0, NULL) < 0 || setresgid(o->uid, o->uid, o->uid) < 0 ||
                            setresuid(o->uid, o->uid, o->uid) < 0))
                return fail("cannot become uid %u: %s", (unsigned) o->uid, strerror(errno));
        r = sd_event_new(&f.event);
        if (r < 0)
                return fail("sd_event_new: %s", strerror(-r));
        for (unsigned i = 0; i < f.n_conns; i++) {
                FloodConn *c = &f.conns[i];
                c->flood = &f;
                c->share = per + (i < o->calls % o->clients);
                if (open_bus(&c->bus) < 0)
                        return -1;
                (void) sd_bus_set_method_call_timeout(c->bus, 120 * 1000000ULL);
                r = sd_bus_attach_event(c->bus, f.event, SD_EVENT_PRIORITY_NORMAL);
                if (r < 0)
                        return fail("sd_bus_attach_event: %s", strerror(-r));
        }
        t0 = now_ns();
        for (unsigned i = 0; i < f.n_conns; i++)
                if (flood_send(&f.conns[i]) < 0)
                        return -1;
        r = sd_event_loop(f.event);
        t1 = now_ns();
        for (unsigned i = 0; i < f.n_conns; i++)
                sd_bus_flush_close_unref(f.conns[i].bus);
        sd_event_unref(f.event);
        if (r < 0)
                return fail("event loop: %s", strerror(-r));
        printf("{\"command\":\"flood\",\"uid\":%u,\"clients\":%u,\"calls\":%" PRIu64 ",\"ok\":%" PRIu64
               ",\"expected_errors\":%" PRIu64 ",\"other_errors\":%" PRIu64 ",\"first_other_error\":",
               (unsigned) o->uid, o->clients, o->calls, f.ok, f.expected, f.other);
        print_json_string(f.first_other);
        printf(",\"seconds\":%.3f,\"calls_per_s\":%.0f}\n", (t1 - t0) / 1e9, o->calls / ((t1 - t0) / 1e9));
        if (f.other || (o->expect && f.ok)) {
                fprintf(stderr, "fsgate-bench: flood: %" PRIu64 " calls succeeded and %" PRIu64
                        " got another error than %s (first: %s)\n", f.ok, f.other, o->expect ?: "none",
                        f.first_other[0] ? f.first_other : "-");
                return -1;
        }
        return 0;
}

static void sleep_ms(unsigned ms) {
        struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long) (ms % 1000) * 1000000L };

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

/* One GetFilesystem (--get), timed. A failed call is counted (the first error kept), not
 * timed; only running out of memory is an error. */
static int timed_get(sd_bus *bus, const Options *o, Samples *s, uint64_t *errors, char *first_error, size_t len) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        uint64_t t0 = now_ns();

        if (do_call(bus, METHOD_GET, o->get_name, &reply, *errors ? NULL : first_error, len) < 0) {
                (*errors)++;
                return 0;
        }
        return samples_add(s, now_ns() - t0) < 0 ? fail("out of memory") : 0;
}

/* GetFilesystem (--get) from one client, a call every --interval-ms: with nothing else
 * going on (--calls calls: "idle"), then for as long as the command after -- runs (a load
 * made by other callers: "busy"); --reps times in turn, so that a slow moment of a shared
 * machine hits both alike. The pause keeps this client from being a load of its own. */
static int cmd_during(const Options *o, char **argv) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_close_ int log_fd = -1;
        Samples idle = {}, busy = {}, load = {};
        uint64_t errors = 0;
        unsigned failures = 0;
        int last_status = 0;
        char first_error[256] = "";

        if (!argv[0])
                return fail("during needs the load command after --");
        log_fd = open_child_log(o->child_log);
        if (log_fd < 0 || open_bus(&bus) < 0 || check_reply(bus, METHOD_GET, o->get_name, NULL) < 0)
                return -1;
        for (unsigned rep = 0; rep < o->reps; rep++) {
                uint64_t t0;
                int status;
                pid_t pid;

                for (uint64_t i = 0; i < o->calls; i++) {
                        if (timed_get(bus, o, &idle, &errors, first_error, sizeof(first_error)) < 0)
                                return -1;
                        sleep_ms(o->interval_ms);
                }
                t0 = now_ns();
                pid = spawn(argv, NULL, log_fd);
                if (pid < 0)
                        return -1;
                /* Every timed call starts while the load runs: the pause first gives it time
                 * to connect, and an exited load ends the phase before the next call. */
                for (;;) {
                        pid_t w;
                        sleep_ms(o->interval_ms);
                        w = waitpid(pid, &status, WNOHANG);
                        if (w == pid)
                                break;
                        if (w < 0)
                                return fail("waitpid: %s", strerror(errno));
                        if (timed_get(bus, o, &busy, &errors, first_error, sizeof(first_error)) < 0)
                                return -1;
                }
                if (samples_add(&load, now_ns() - t0) < 0)
                        return fail("out of memory");
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                        failures++;
                        last_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
                }
        }
        samples_sort(&idle);
        samples_sort(&busy);
        printf("{\"command\":\"during\",\"get\":");
        print_json_string(o->get_name);
        printf(",\"interval_ms\":%u,\"reps\":%u,\"idle\":{", o->interval_ms, o->reps);
        print_latency_fields(&idle);
        printf("},\"busy\":{");
        print_latency_fields(&busy);
        printf("},\"errors\":%" PRIu64 ",\"first_error\":", errors);
        print_json_string(first_error);
        printf(",\"load_failures\":%u,\"load_last_failed_status\":%d,", failures, last_status);
        print_ms_summary("load", &load);
        printf("}\n");
        samples_done(&idle);
        samples_done(&busy);
        samples_done(&load);
        if (failures)
                fprintf(stderr, "fsgate-bench: the load command %s failed %u times (last status %d)\n", argv[0],
                        failures, last_status);
        if (errors)
                fprintf(stderr, "fsgate-bench: %" PRIu64 " GetFilesystem calls failed, first: %s\n", errors, first_error);
        return failures || errors ? -1 : 0;
}

/* ---- Main ---------------------------------------------------------------------------- */

static void help(void) {
        printf("fsgate-bench [OPTIONS...] COMMAND [-- ARGV...]\n\n"
               "Measures a running fsgated on $DBUS_SYSTEM_BUS_ADDRESS. Prints one JSON object.\n\n"
               "Commands:\n"
               "  latency              Latency and throughput of --methods with --clients clients\n"
               "  calls                Just make --calls calls: one of --methods, else List and Get alternating\n"
               "  rebuild              List after rewriting --touch=FILE, beside List with no change\n"
               "  cold-start -- CMD    Start the service --reps times: fork to first List reply\n"
               "  exec -- CMD          Wall time of CMD (stdout to /dev/null), --reps times\n"
               "  during -- CMD        Get latency, one call every --interval-ms: --calls calls idle,\n"
               "                       then while CMD runs; --reps times\n"
               "  flood                --calls change requests (--call) over --clients connections,\n"
               "                       at most --in-flight unanswered on each, as --uid\n\n"
               "Options:\n"
               "  -h --help            Show this help\n"
               "     --clients=N       Concurrent clients, one thread and connection each (1)\n"
               "     --calls=N         Calls per method over all clients and rounds (10000)\n"
               "     --seconds=S       Time bound per method (latency, calls) or command (10)\n"
               "     --rounds=N        Alternate the methods this many times (3)\n"
               "     --methods=LIST    Comma-separated: ping,list,get,mix (ping,list,get)\n"
               "     --get=NAME        Name asked by GetFilesystem (vxfs)\n"
               "     --reps=N          Repetitions for rebuild, cold-start, exec (20)\n"
               "     --touch=FILE      File rewritten before each timed List (rebuild)\n"
               "     --chroot=DIR      Run the exec command chrooted into DIR\n"
               "     --child-log=FILE  Where started commands' stderr goes (/dev/null)\n"
               "     --service-pid=PID With latency: report the service's CPU time per call\n"
               "     --bus-pid=PID     With latency: report the bus daemon's CPU time per call\n"
               "     --interval-ms=N   With during: pause between two calls (10)\n"
               "     --uid=UID         With flood: make the calls as this user (root)\n"
               "     --in-flight=N     With flood: unanswered calls per connection, at most (50)\n"
               "     --call=M:NAME:FL  With flood: METHOD:NAME:FLAGS, e.g. Allow:hfs:0; repeat to cycle\n"
               "     --expect=ERROR    With flood: every call must fail with this D-Bus error\n");
}

static int parse_methods(const char *s, bool methods[_METHOD_MAX]) {
        _cleanup_free_ char *copy = strdup(s);
        char *save = NULL;

        if (!copy)
                return -ENOMEM;
        memset(methods, 0, sizeof(bool) * _METHOD_MAX);
        for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
                Method m;
                for (m = 0; m < _METHOD_MAX; m++)
                        if (streq(w, method_names[m]))
                                break;
                if (m == _METHOD_MAX)
                        return fail("unknown method '%s' (ping, list, get, mix)", w);
                methods[m] = true;
        }
        return 0;
}

static int parse_uint(const char *opt, const char *s, uint64_t max, uint64_t *ret) {
        char *end;
        unsigned long long v;

        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno || *end || !*s || s[0] == '-' || v < 1 || v > max)
                return fail("invalid --%s: '%s' (1..%" PRIu64 ")", opt, s, max);
        *ret = v;
        return 0;
}

/* parse_uint() into an unsigned option. */
static int parse_unsigned(const char *opt, const char *s, unsigned max, unsigned *ret) {
        uint64_t v;

        if (parse_uint(opt, s, max, &v) < 0)
                return -EINVAL;
        *ret = (unsigned) v;
        return 0;
}

/* --call METHOD:NAME[:FLAGS]; ARG is optarg, split in place. */
static int parse_flood_call(char *arg, Options *o) {
        FloodCall *k = &o->flood_calls[o->n_flood_calls];
        char *method = arg, *name, *flags, *end;

        if (o->n_flood_calls == MAX_FLOOD_CALLS)
                return fail("at most %d --call options", MAX_FLOOD_CALLS);
        name = strchr(method, ':');
        flags = name ? strchr(name + 1, ':') : NULL;
        if (!name || name == method || name[1] == 0 || (flags && flags == name + 1))
                return fail("invalid --call: '%s' (METHOD:NAME[:FLAGS])", arg);
        *name++ = 0;
        k->with_flags = flags;
        if (flags) {
                *flags++ = 0;
                errno = 0;
                k->flags = strtoull(flags, &end, 0);
                if (errno || *end || !*flags)
                        return fail("invalid flags in --call: '%s'", flags);
        }
        k->method = method;
        k->name = name;
        o->n_flood_calls++;
        return 0;
}

/* The commands; those that start a child take the words after "--". *known: whether CMD is one. */
static int run_command(const char *cmd, const Options *o, char **child, bool *known) {
        *known = true;
        if (streq(cmd, "latency"))
                return cmd_latency(o);
        if (streq(cmd, "calls"))
                return cmd_calls(o);
        if (streq(cmd, "rebuild"))
                return cmd_rebuild(o);
        if (streq(cmd, "cold-start"))
                return cmd_cold_start(o, child);
        if (streq(cmd, "exec"))
                return cmd_exec(o, child);
        if (streq(cmd, "during"))
                return cmd_during(o, child);
        if (streq(cmd, "flood"))
                return cmd_flood(o);
        *known = false;
        return 0;
}

enum { ARG_CLIENTS = 0x100, ARG_CALLS, ARG_SECONDS, ARG_ROUNDS, ARG_METHODS, ARG_GET, ARG_REPS,
       ARG_TOUCH, ARG_CHROOT, ARG_CHILD_LOG, ARG_SERVICE_PID, ARG_BUS_PID, ARG_INTERVAL_MS, ARG_UID,
       ARG_IN_FLIGHT, ARG_CALL, ARG_EXPECT };

/* One option of the command line; ARG is its argument, C what getopt_long() returned. */
static int parse_option(int c, char *arg, Options *o) {
        uint64_t v;
        char *end;

        switch (c) {
        case 'h': help(); exit(0);
        case ARG_CLIENTS:
                return parse_unsigned("clients", arg, MAX_CLIENTS, &o->clients);
        case ARG_CALLS:
                if (parse_uint("calls", arg, UINT32_MAX, &o->calls) < 0)
                        return -EINVAL;
                break;
        case ARG_SECONDS:
                errno = 0;
                o->seconds = strtod(arg, &end);
                if (errno || *end || !*arg || !(o->seconds > 0 && o->seconds <= 3600)) {
                        fail("invalid --seconds: '%s' (0 < S <= 3600)", arg);
                        return -EINVAL;
                }
                break;
        case ARG_ROUNDS:
                return parse_unsigned("rounds", arg, MAX_ROUNDS, &o->rounds);
        case ARG_METHODS:
                if (parse_methods(arg, o->methods) < 0)
                        return -EINVAL;
                break;
        case ARG_GET: o->get_name = arg; break;
        case ARG_REPS:
                return parse_unsigned("reps", arg, 1000000, &o->reps);
        case ARG_TOUCH: o->touch_file = arg; break;
        case ARG_CHROOT: o->chroot_dir = arg; break;
        case ARG_CHILD_LOG: o->child_log = arg; break;
        case ARG_SERVICE_PID:
        case ARG_BUS_PID:
                if (parse_uint(c == ARG_BUS_PID ? "bus-pid" : "service-pid", arg, INT_MAX, &v) < 0)
                        return -EINVAL;
                *(c == ARG_BUS_PID ? &o->bus_pid : &o->service_pid) = (pid_t) v;
                break;
        case ARG_INTERVAL_MS:
                /* 0 is a valid pause: parse_uint wants 1 or more. */
                if (!streq(arg, "0"))
                        return parse_unsigned("interval-ms", arg, 10000, &o->interval_ms);
                o->interval_ms = 0;
                break;
        case ARG_UID:
                if (!streq(arg, "0")) {
                        if (parse_uint("uid", arg, UINT32_MAX - 1, &v) < 0)
                                return -EINVAL;
                        o->uid = (uid_t) v;
                }
                break;
        case ARG_IN_FLIGHT:
                return parse_unsigned("in-flight", arg, 100000, &o->in_flight);
        case ARG_CALL:
                if (parse_flood_call(arg, o) < 0)
                        return -EINVAL;
                break;
        case ARG_EXPECT: o->expect = arg; break;
        default: return -EINVAL;
        }
        return 0;
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "help",        no_argument,       NULL, 'h'             },
                { "clients",     required_argument, NULL, ARG_CLIENTS     },
                { "calls",       required_argument, NULL, ARG_CALLS       },
                { "seconds",     required_argument, NULL, ARG_SECONDS     },
                { "rounds",      required_argument, NULL, ARG_ROUNDS      },
                { "methods",     required_argument, NULL, ARG_METHODS     },
                { "get",         required_argument, NULL, ARG_GET         },
                { "reps",        required_argument, NULL, ARG_REPS        },
                { "touch",       required_argument, NULL, ARG_TOUCH       },
                { "chroot",      required_argument, NULL, ARG_CHROOT      },
                { "child-log",   required_argument, NULL, ARG_CHILD_LOG   },
                { "service-pid", required_argument, NULL, ARG_SERVICE_PID },
                { "bus-pid",     required_argument, NULL, ARG_BUS_PID     },
                { "interval-ms", required_argument, NULL, ARG_INTERVAL_MS },
                { "uid",         required_argument, NULL, ARG_UID         },
                { "in-flight",   required_argument, NULL, ARG_IN_FLIGHT   },
                { "call",        required_argument, NULL, ARG_CALL        },
                { "expect",      required_argument, NULL, ARG_EXPECT      },
                {}
        };
        Options o = {
                .clients = 1, .calls = 10000, .seconds = 10, .rounds = 3, .reps = 20, .get_name = "vxfs",
                .interval_ms = 10, .in_flight = 50,
                .methods = { [METHOD_PING] = true, [METHOD_LIST] = true, [METHOD_GET] = true },
        };
        const char *cmd;
        bool known;
        int c, r;

        /* Options may come before or after the command; everything after "--" is the child's. */
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                if (parse_option(c, optarg, &o) < 0)
                        return 2;
        if (optind >= argc) {
                fail("no command given (latency, calls, rebuild, cold-start, exec, during, flood); see --help");
                return 2;
        }
        cmd = argv[optind++];
        if (optind < argc && streq(argv[optind], "--"))
                optind++;
        (void) signal(SIGPIPE, SIG_IGN);

        r = run_command(cmd, &o, argv + optind, &known);
        if (!known) {
                fail("unknown command '%s'; see --help", cmd);
                return 2;
        }
        fflush(stdout);
        return r < 0 ? 1 : 0;
}
