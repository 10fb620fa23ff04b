/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <syslog.h>
#include <systemd/sd-device.h>
#include <systemd/sd-journal.h>
#include <systemd/sd-login.h>

#include "block-fields.h"
#include "block-reports.h"
#include "bus-reply.h"
#include "log.h"
#include "name.h"
#include "state-cache.h"
#include "strv.h"
#include "utf8.h"

/* The records of reported_before(), on disk and in memory: the newest ones, the oldest
 * dropped first. Real systems see a handful of media per boot, but anyone who may set up a
 * loop device (udisks lets a desktop user) makes a new medium each time, and the records
 * must not fill /run. A medium whose record was dropped may be reported once more. */
#define REPORTED_MAX 256

/* udev replaces spaces and other unsafe characters by "_" in ID_FS_LABEL, ID_VENDOR and
 * ID_MODEL; the *_ENC variants keep them as \xHH. A person wants "My Stick", not
 * "My_Stick". Trailing blanks (padded SCSI vendor strings) go. */
static char *udev_decode(const char *enc) {
        char *out = malloc(strlen(enc) + 1), *o = out;

        if (!out)
                return NULL;
        for (const char *p = enc; *p; p++) {
                unsigned v;
                if (p[0] == '\\' && p[1] == 'x' && sscanf(p + 2, "%2x", &v) == 1 &&
                    isxdigit((unsigned char) p[2]) && isxdigit((unsigned char) p[3]) && v != 0) {
                        *o++ = (char) v;
                        p += 3;
                } else
                        *o++ = *p;
        }
        while (o > out && (o[-1] == ' ' || o[-1] == '\t'))
                o--;
        *o = 0;
        return out;
}

/* The decoded KEY_ENC property, else KEY itself; "" when udev has neither, or nothing a
 * client could show (not UTF-8). NULL only when out of memory. */
static char *udev_prop(sd_device *d, const char *prop) {
        _cleanup_free_ char *enc_name = NULL;
        const char *v = NULL;
        char *s;

        if (!d || asprintf(&enc_name, "%s_ENC", prop) < 0)
                return strdup("");
        if (sd_device_get_property_value(d, enc_name, &v) >= 0)
                s = udev_decode(v);
        else
                s = strdup(sd_device_get_property_value(d, prop, &v) >= 0 ? v : "");
        if (s && !fsg_utf8_is_valid(s))
                s[0] = 0;
        return s;
}

/* Where the request came from, as far as fsgated can tell (cause, seat, and who was at the
 * seat; see Blocked in org.fsgate.fsgate1(5)). A report with a device comes from udev: a
 * medium appeared at a seat, the one udev says (ID_SEAT, which 73-seat-late.rules copies from
 * the parent a seat was assigned to), else seat0, as logind and udisks2 read a device without
 * it. A report without one comes from the kernel's request_module(): the helper runs in the
 * kernel's context, so nothing says who mounted; any user may have, from a user namespace
 * too. Clients must not take such a block as a person's wish to allow. */
static void fill_cause(FsgBlockReport *r, sd_device *d) {
        const char *seat = NULL;
        uid_t uid = (uid_t) -1;

        r->session_uid = -1;
        if (!*r->device) {
                r->cause = strdup("kernel");
                return;
        }
        r->cause = strdup("device");
        if (!d || sd_device_get_property_value(d, "ID_SEAT", &seat) < 0 || !seat || !*seat ||
            !fsg_utf8_is_valid(seat))
                seat = "seat0";
        r->seat = strdup(seat);
        if (sd_seat_get_active(seat, &r->session, &uid) < 0)
                r->session = NULL;
        else
                r->session_uid = (int) uid;
}

/* Everything a block report says, derived once. Out of memory, a field stays NULL: it is
 * then left out of the signal and written as "" to the journal. */
static void block_report_fill(FsgBlockReport *r, const FsgEntry *x, const char *type, const char *device,
                              sd_device *d) {
        const char *size = NULL;

        *r = (FsgBlockReport) {
                .type = strdup(type), .module = strdup(x->module), .device = strdup(device),
                .source = strdup(x->deciding_file), .origin = strdup(fsg_origin_to_string(x->origin)),
                /* Loaded although denied (a grant for another medium, an "allow once"): this
                 * medium was not what it was loaded for, and the client may say so. */
                .loaded = x->loaded,
        };
        fill_cause(r, d);
        /* What udev knows about the device: enough for a person to recognize the stick. */
        r->label = udev_prop(d, "ID_FS_LABEL");
        r->uuid = udev_prop(d, "ID_FS_UUID");
        r->vendor = udev_prop(d, "ID_VENDOR");
        r->model = udev_prop(d, "ID_MODEL");
        if (d && sd_device_get_sysattr_value(d, "size", &size) >= 0)
                r->size = (uint64_t) strtoull(size, NULL, 10) * 512;
}

/* Blocked's details, from the table: each detail that says something. */
static int append_details(sd_bus_message *m, const FsgBlockReport *r) {
        int r2 = sd_bus_message_open_container(m, 'a', "{sv}");

        for (size_t i = 0; r2 >= 0 && i < FSG_BLOCK_FIELDS_N; i++) {
                const FsgBlockField *f = &fsg_block_fields[i];
                const void *p = fsg_block_field_cptr(r, f);

                if (!f->key)
                        continue;
                if (f->type == 's') {
                        const char *s = *(char * const *) p;
                        if (s && *s && fsg_utf8_is_valid(s))
                                r2 = sd_bus_message_append(m, "{sv}", f->key, "s", s);
                } else if (f->type == 't' && *(const uint64_t *) p)
                        r2 = sd_bus_message_append(m, "{sv}", f->key, "t", *(const uint64_t *) p);
                else if (f->type == 'b' && *(const bool *) p)
                        r2 = sd_bus_message_append(m, "{sv}", f->key, "b", 1);
        }
        return r2 < 0 ? r2 : sd_bus_message_close_container(m);
}

static char *strf(const char *fmt, ...) _printf_(1, 2);
static char *strf(const char *fmt, ...) {
        char *s = NULL;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&s, fmt, ap);
        va_end(ap);
        return r < 0 ? NULL : s;
}

/* One journal field NAME=VALUE of the table. NULL: out of memory. */
static char *journal_field(const FsgBlockReport *r, const FsgBlockField *f) {
        const void *p = fsg_block_field_cptr(r, f);

        switch (f->type) {
        case 's':
                return strf("%s=%s", f->journal, *(char * const *) p ?: "");
        case 'i':
                return strf("%s=%d", f->journal, *(const int *) p);
        case 't':
                return strf("%s=%" PRIu64, f->journal, *(const uint64_t *) p);
        default:
                return strf("%s=%d", f->journal, *(const bool *) p);
        }
}

/* The journal entry `fsgatectl log` reads: the message, then every journal field of the
 * table. A line that did not fit in memory is left out. */
static void journal_blocked(const FsgBlockReport *r) {
        char *lines[4 + FSG_BLOCK_FIELDS_N] = {};
        struct iovec iov[ELEMENTSOF(lines)];
        size_t n = 0, k = 0;

        /* As the kernel log line: why offers the safest way out first, the allow last. */
        lines[n++] = strf("MESSAGE=Blocked autoload of filesystem %s (module %s%s%s), denied by %s; "
                          "see: fsgatectl why %s", r->type ?: "", r->module ?: "",
                          r->device && *r->device ? ", device " : "", r->device ?: "",
                          r->source && *r->source ? r->source : r->origin ?: "",
                          r->device && *r->device ? r->device : r->type ?: "");
        lines[n++] = strdup("MESSAGE_ID=" FSGATE_MESSAGE_BLOCKED);
        lines[n++] = strf("PRIORITY=%i", LOG_WARNING);
        lines[n++] = strdup("SYSLOG_IDENTIFIER=fsgated");
        for (size_t i = 0; i < FSG_BLOCK_FIELDS_N; i++)
                if (fsg_block_fields[i].journal)
                        lines[n++] = journal_field(r, &fsg_block_fields[i]);
        for (size_t i = 0; i < n; i++)
                if (lines[i])
                        iov[k++] = (struct iovec) { .iov_base = lines[i], .iov_len = strlen(lines[i]) };
        (void) sd_journal_sendv(iov, (int) k);
        for (size_t i = 0; i < n; i++)
                free(lines[i]);
}

static int emit_blocked(Manager *m, const FsgEntry *x, const char *type, const char *device, sd_device *d) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *sig = NULL;
        _cleanup_(fsg_block_report_clear) FsgBlockReport rep = {};
        int r;

        block_report_fill(&rep, x, type, device, d);
        r = sd_bus_message_new_signal(m->bus, &sig, FSGATE_BUS_PATH, FSGATE_BUS_IFACE, "Blocked");
        if (r >= 0)
                r = sd_bus_message_append(sig, "sss", type, x->module, device);
        if (r >= 0)
                r = append_details(sig, &rep);
        if (r >= 0)
                r = sd_bus_send(m->bus, sig, NULL);
        /* Out of memory for the details, the entry is written all the same, without them. */
        journal_blocked(&rep);
        return r;
}

/* udev sets DISKSEQ (the kernel's per-boot number of a medium) on disks and partitions;
 * without it the node alone names the medium. */
static const char *medium_seq(sd_device *d) {
        const char *v = NULL;

        if (!d || sd_device_get_property_value(d, "DISKSEQ", &v) < 0 || !*v || strspn(v, "0123456789") != strlen(v) ||
            strlen(v) > 20)
                return "0";
        return v;
}

typedef struct ReportedRecord {
        struct timespec made;
        char *name;
} ReportedRecord;

static int reported_record_cmp(const void *a, const void *b) {
        const ReportedRecord *x = a, *y = b;

        if (x->made.tv_sec != y->made.tv_sec)
                return x->made.tv_sec < y->made.tv_sec ? -1 : 1;
        if (x->made.tv_nsec != y->made.tv_nsec)
                return x->made.tv_nsec < y->made.tv_nsec ? -1 : 1;
        return strcmp(x->name, y->name);
}

/* Drops the oldest records in DIR (by their mtime, which reported_before() sets to the
 * nanosecond) until REPORTED_MAX are left, KEEP (the record just made) among them. */
static void reported_trim(const char *dir, const char *keep) {
        _cleanup_closedir_ DIR *d = opendir(dir);
        ReportedRecord *v = NULL;
        size_t n = 0, size = 0;
        struct dirent *de;

        if (!d)
                return;
        while ((de = readdir(d))) {
                struct stat st;

                if (de->d_name[0] == '.' || streq(de->d_name, keep) ||
                    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if (n == size) {
                        ReportedRecord *w = reallocarray(v, size ? size * 2 : REPORTED_MAX + 1, sizeof(*v));
                        if (!w)
                                break;
                        v = w;
                        size = size ? size * 2 : REPORTED_MAX + 1;
                }
                v[n].made = st.st_mtim;
                v[n].name = strdup(de->d_name);
                if (v[n].name)
                        n++;
        }
        if (n >= REPORTED_MAX) {
                qsort(v, n, sizeof(*v), reported_record_cmp);
                for (size_t i = 0; i < n - (REPORTED_MAX - 1); i++)
                        (void) unlinkat(dirfd(d), v[i].name, 0);
        }
        for (size_t i = 0; i < n; i++)
                free(v[i].name);
        free(v);
}

/* The in-memory list, oldest first. */
static void reported_remember(Manager *m, const char *key) {
        size_t n = strv_length(m->reported);

        if (n >= REPORTED_MAX) {
                free(m->reported[0]);
                memmove(m->reported, m->reported + 1, n * sizeof(char *)); /* with the NULL */
        }
        (void) strv_extend(&m->reported, key);
}

/* Whether this medium was already reported with this type, remembering it if not. The
 * service exits when idle and udev replays "add" (udevadm trigger, a re-plug of the same
 * card), so the record lives for the boot in ROOT/run/fsgate (RuntimeDirectory=); a new
 * medium at the same node has a new DISKSEQ. When /run/fsgate cannot be written, a list in
 * memory still stops a storm while the service runs. */
static bool reported_before(Manager *m, const char *devnode, sd_device *d, const char *type) {
        _cleanup_free_ char *key = NULL, *dir = NULL, *file = NULL;

        if (asprintf(&key, "%s!%s!%s", strrchr(devnode, '/') + 1, type, medium_seq(d)) < 0)
                return false;
        dir = fsg_path(m->ctx, "/run/fsgate/reported");
        if (dir && asprintf(&file, "%s/%s", dir, key) >= 0) {
                int fd;

                /* /run/fsgate exists under systemd; a scratch root or a plain start has none. */
                (void) mkdir(dirname(strdupa(dir)), 0755);
                (void) mkdir(dir, 0755);
                fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
                if (fd >= 0) {
                        struct timespec now[2];

                        /* The file system's own timestamps are only as fine as a clock
                         * tick: too coarse to tell which of a burst of records came first. */
                        (void) clock_gettime(CLOCK_REALTIME, &now[0]);
                        now[1] = now[0];
                        (void) futimens(fd, now);
                        close(fd);
                        reported_trim(dir, key);
                        return false;
                }
                if (errno == EEXIST)
                        return true;
        }
        if (strv_contains(m->reported, key))
                return true;
        reported_remember(m, key);
        return false;
}

static int report(sd_bus_message *call, Manager *m, const char *type, const char *device) {
        _cleanup_(sd_device_unrefp) sd_device *d = NULL;
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        const FsgEntry *x;
        FsgError e = {};

        if (!fsg_name_is_valid(type)) {
                fsg_error(&e, FSG_ERR_INVALID_NAME, "Invalid type");
                return manager_reply_error(call, &e);
        }
        if (manager_state(m, &s, &e) < 0)
                return manager_reply_error(call, &e);
        x = fsg_state_find(s, type);
        /* The hook only runs for a deny; a type that is allowed now was allowed meanwhile. */
        if (!x || !x->denied)
                return sd_bus_reply_method_return(call, NULL);
        /* By sysname, not by node: the service has no /dev of its own (PrivateDevices=). A
         * device udev does not know is still reported, without details. */
        if (*device)
                (void) sd_device_new_from_subsystem_sysname(&d, "block", strrchr(device, '/') + 1);
        if (*device && reported_before(m, device, d, type))
                return sd_bus_reply_method_return(call, NULL);
        (void) emit_blocked(m, x, type, device, d);
        return sd_bus_reply_method_return(call, NULL);
}

/* module is read and ignored: the signal names the module fsgated's own state finds for
 * type (the entry the deny is about, aliases resolved), not one a report says. The argument
 * stays, as the method's signature is a contract (org.fsgate.fsgate1(5)). */
int method_report_blocked(sd_bus_message *call, void *userdata, sd_bus_error *error) {
        const char *type, *module;
        int r = sd_bus_message_read(call, "ss", &type, &module);
        if (r < 0)
                return r;
        return report(call, userdata, type, "");
}

int method_report_device(sd_bus_message *call, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        const char *device, *type;
        FsgError e = {};
        int r;

        r = sd_bus_message_read(call, "ss", &device, &type);
        if (r < 0)
                return r;
        if (strncmp(device, "/dev/", 5) != 0 || strstr(device, "/..") || !fsg_name_is_valid(strrchr(device, '/') + 1)) {
                fsg_error(&e, FSG_ERR_INVALID_ARGS, "Not a device node: %s", device);
                return manager_reply_error(call, &e);
        }
        return report(call, m, type, device);
}
