/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <systemd/sd-id128.h>
#include <systemd/sd-journal.h>
#include <time.h>

#include "alloc-util.h"
#include "block-fields.h"
#include "ctl-journal.h"
#include "ctl.h"
#include "journal-ids.h"
#include "json-writer.h"
#include "strv.h"
#include "time-util.h"

/* fsgatectl log: the blocks fsgated wrote to the journal (MESSAGE_ID BLOCKED), newest last, and
 * what fsgate changed or loaded for the module afterwards. Read from the system journal with
 * the reader's own rights, as journalctl would. */

/* What one run reads at most, whatever the journal holds: the blocks shown, and the entries
 * walked to find them (changes included), so that a journal full of fsgate's lines costs a
 * bounded time. */
#define LOG_WALK_MAX      200000
/* Modules remembered for "afterwards": more than any kernel has filesystem modules. */
#define LOG_MODULES_MAX   1024

typedef struct Block {
        uint64_t usec;
        /* What fsgated wrote of the block: the journal fields of core/block-fields.c (the
         * signal's details that are not in the journal stay empty). */
        FsgBlockReport r;
        /* The first change or load of the module fsgate logged after the block, if any. */
        uint64_t after_usec;
        const char *after_what;         /* "changed" or "loaded" */
        int after_uid;
        /* A would-block of an observation (FSGATE_MESSAGE_WOULD_BLOCK): the profile observed,
         * who asked (-1: unknown), how many requests the entry counts. NULL for a block. */
        char *profile;
        char *asked_user, *asked_command;
        int asked_uid;
        unsigned long long count;
} Block;

static void block_clear(Block *b) {
        fsg_block_report_clear(&b->r);
        free_many(b->profile, b->asked_user, b->asked_command);
}

static int field_int(sd_journal *j, const char *name, int fallback) {
        _cleanup_free_ char *v = ctl_journal_field(j, name);
        char *end;
        long n;

        if (!v || !*v)
                return fallback;
        n = strtol(v, &end, 10);
        return *end || n < -1 || n > INT32_MAX ? fallback : (int) n;
}

/* The module's latest change seen so far, walking back from the newest entry: for a block,
 * the first one after it. */
typedef struct Later {
        char *module;
        uint64_t usec;
        const char *what;
        int uid;
} Later;

typedef struct LogRun {
        Block *blocks;          /* newest first while walking */
        size_t n_blocks, size_blocks, max_blocks;
        Later *later;
        size_t n_later;
        size_t walked;
        bool cut;               /* more blocks than max_blocks */
        bool walk_limit;        /* the walk stopped at LOG_WALK_MAX */
        bool only_would_block;  /* --would-block */
} LogRun;

static void log_run_clear(LogRun *run) {
        for (size_t i = 0; i < run->n_blocks; i++)
                block_clear(&run->blocks[i]);
        free(run->blocks);
        for (size_t i = 0; i < run->n_later; i++)
                free(run->later[i].module);
        free(run->later);
}

static Later *later_find(LogRun *run, const char *module) {
        for (size_t i = 0; i < run->n_later; i++)
                if (streq(run->later[i].module, module))
                        return &run->later[i];
        return NULL;
}

static int note_change(LogRun *run, sd_journal *j, uint64_t usec, const char *what) {
        _cleanup_free_ char *module = ctl_journal_field(j, "FSGATE_MODULE");
        Later *l;

        if (!module)
                return -ENOMEM;
        if (!*module)
                return 0;
        l = later_find(run, module);
        if (!l) {
                if (run->n_later >= LOG_MODULES_MAX)
                        return 0;
                Later *v = reallocarray(run->later, run->n_later + 1, sizeof(Later));
                if (!v)
                        return -ENOMEM;
                run->later = v;
                l = &run->later[run->n_later++];
                l->module = TAKE_PTR(module);
        }
        l->usec = usec;
        l->what = what;
        l->uid = field_int(j, "FSGATE_REQUEST_UID", -1);
        return 0;
}

/* What a would-block adds to a block's fields. */
static int note_would_block(Block *b, sd_journal *j) {
        _cleanup_free_ char *count = ctl_journal_field(j, "FSGATE_COUNT");

        b->profile = ctl_journal_field(j, "FSGATE_PROFILE");
        b->asked_user = ctl_journal_field(j, "FSGATE_USER");
        b->asked_command = ctl_journal_field(j, "FSGATE_REQUEST_COMM");
        b->asked_uid = field_int(j, "FSGATE_REQUEST_UID", -1);
        b->count = count ? strtoull(count, NULL, 10) : 0;
        if (b->count == 0)
                b->count = 1;
        return b->profile && b->asked_user && b->asked_command && count ? 0 : -ENOMEM;
}

static int note_block(LogRun *run, sd_journal *j, uint64_t usec, bool would_block) {
        Block b = { .usec = usec, .after_uid = -1 };
        const Later *l;

        if (run->n_blocks == run->max_blocks) {
                run->cut = true;
                return 0;
        }
        for (size_t i = 0; i < FSG_BLOCK_FIELDS_N; i++) {
                const FsgBlockField *f = &fsg_block_fields[i];
                _cleanup_free_ char *v = NULL;

                if (!f->journal)
                        continue;
                v = ctl_journal_field(j, f->journal);
                if (!v || fsg_block_field_parse(&b.r, f, v) < 0) {
                        block_clear(&b);
                        return -ENOMEM;
                }
        }
        if ((would_block && note_would_block(&b, j) < 0) || fsg_block_report_fill_empty(&b.r) < 0) {
                block_clear(&b);
                return -ENOMEM;
        }
        if ((l = later_find(run, b.r.module))) {
                b.after_usec = l->usec;
                b.after_what = l->what;
                b.after_uid = l->uid;
        }
        if (run->n_blocks == run->size_blocks) {
                size_t size = run->size_blocks ? run->size_blocks * 2 : 16;
                Block *v = reallocarray(run->blocks, size, sizeof(Block));
                if (!v) {
                        block_clear(&b);
                        return -ENOMEM;
                }
                run->blocks = v;
                run->size_blocks = size;
        }
        run->blocks[run->n_blocks++] = b;
        return 0;
}

static int walk(sd_journal *j, uint64_t since_usec, LogRun *run, FsgError *e) {
        int r;

        /* Any process may send these message ids: only root's entries are fsgated's (_UID is
         * journald's own, not the sender's word). One id or another, and root's. */
        if ((r = sd_journal_add_match(j, "MESSAGE_ID=" FSGATE_MESSAGE_WOULD_BLOCK, 0)) < 0 ||
            (!run->only_would_block && (r = sd_journal_add_match(j, "MESSAGE_ID=" FSGATE_MESSAGE_BLOCKED, 0)) < 0) ||
            (r = sd_journal_add_match(j, "MESSAGE_ID=" FSGATE_MESSAGE_CONFIG_CHANGED, 0)) < 0 ||
            (r = sd_journal_add_match(j, "MESSAGE_ID=" FSGATE_MESSAGE_MODULE_LOADED, 0)) < 0 ||
            (r = sd_journal_add_match(j, "_UID=0", 0)) < 0 ||
            (r = sd_journal_seek_tail(j)) < 0)
                return fsg_error(e, FSG_ERR_FAILED, _("Failed to read the journal: %s"), strerror(-r));
        while ((r = sd_journal_previous(j)) > 0) {
                _cleanup_free_ char *id = NULL;
                uint64_t usec;

                if (run->cut)
                        break;
                if (++run->walked > LOG_WALK_MAX) {
                        run->walk_limit = true;
                        break;
                }
                /* Not a break: a clock set back (no RTC before NTP) leaves older times between
                 * newer ones, and the walk is bounded anyway. */
                if (sd_journal_get_realtime_usec(j, &usec) < 0 || usec < since_usec)
                        continue;
                id = ctl_journal_field(j, "MESSAGE_ID");
                if (!id)
                        return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
                r = streq(id, FSGATE_MESSAGE_BLOCKED) || streq(id, FSGATE_MESSAGE_WOULD_BLOCK) ?
                            note_block(run, j, usec, streq(id, FSGATE_MESSAGE_WOULD_BLOCK)) :
                    note_change(run, j, usec, streq(id, FSGATE_MESSAGE_MODULE_LOADED) ? "loaded" : "changed");
                if (r < 0)
                        return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        }
        if (r < 0)
                return fsg_error(e, FSG_ERR_FAILED, _("Failed to read the journal: %s"), strerror(-r));
        return 0;
}

static void print_json(const LogRun *run) {
        JsonWriter w = JSON_WRITER(stdout);

        json_array_begin(&w);
        for (size_t i = run->n_blocks; i-- > 0;) {
                const Block *b = &run->blocks[i];

                json_object_begin(&w);
                json_key(&w, "realtime_usec");
                json_int(&w, (int64_t) b->usec);
                json_field_string(&w, "type", b->r.type);
                json_field_string(&w, "module", b->r.module);
                json_field_string(&w, "device", b->r.device);
                json_field_string(&w, "label", b->r.label);
                json_field_string(&w, "deciding_file", b->r.source);
                json_field_string(&w, "cause", b->r.cause);
                json_field_string(&w, "seat", b->r.seat);
                json_field_string(&w, "session", b->r.session);
                json_key(&w, "session_uid");
                json_int(&w, b->r.session_uid);
                json_field_bool(&w, "would_block", b->profile);
                json_field_string(&w, "profile", b->profile ?: "");
                json_key(&w, "asked_uid");
                json_int(&w, b->profile ? b->asked_uid : -1);
                json_field_string(&w, "asked_user", b->asked_user ?: "");
                json_field_string(&w, "asked_command", b->asked_command ?: "");
                json_key(&w, "count");
                json_int(&w, b->profile ? (int64_t) b->count : 1);
                json_field_string(&w, "afterwards", b->after_what ?: "");
                json_key(&w, "afterwards_usec");
                json_int(&w, (int64_t) b->after_usec);
                json_key(&w, "afterwards_uid");
                json_int(&w, b->after_uid);
                json_object_end(&w);
        }
        json_array_end(&w);
        putchar('\n');
}

/* A would-block: nothing was blocked, the observed profile would have. */
static void print_would_block(const Block *b, const char *when) {
        /* TRANSLATORS: %1$s a time, %2$s a filesystem type, %3$s its module, %4$s a profile. */
        printf(_("%1$s  %2$s (module %3$s) WOULD be blocked by profile %4$s (observing: it was loaded)"), when,
               ctl_esc(b->r.type), ctl_esc(b->r.module), ctl_esc(b->profile));
        if (b->count > 1)
                /* TRANSLATORS: a number of requests one line stands for. */
                printf(_(", %llu times"), b->count);
        if (*b->r.device)
                printf(_(" on %s"), ctl_esc(b->r.device));
        if (b->asked_uid >= 0)
                /* TRANSLATORS: %1$d a user id, %2$s its name (may be empty), %3$s a command. */
                printf(_(", asked by uid %1$d %2$s(%3$s)"), b->asked_uid, *b->asked_user ? ctl_esc(b->asked_user) : "",
                       ctl_esc(b->asked_command));
        putchar('\n');
}

static void print_text(const LogRun *run) {
        for (size_t i = run->n_blocks; i-- > 0;) {
                const Block *b = &run->blocks[i];
                char when[32], after[32];

                ctl_format_time(b->usec, true, when);
                if (b->profile) {
                        print_would_block(b, when);
                        continue;
                }
                /* TRANSLATORS: %1$s a time, %2$s a filesystem type, %3$s its module. */
                printf(_("%1$s  %2$s (module %3$s) blocked"), when, ctl_esc(b->r.type), ctl_esc(b->r.module));
                if (*b->r.device)
                        /* TRANSLATORS: %s is a device node such as /dev/sdb1. */
                        printf(_(" on %s"), ctl_esc(b->r.device));
                if (*b->r.label)
                        printf(" “%s”", ctl_esc(b->r.label));
                if (*b->r.session)
                        /* TRANSLATORS: %1$s a seat, %2$d a user id, %3$s a logind session. */
                        printf(_(", at %1$s (uid %2$d, session %3$s)"), ctl_esc(b->r.seat), b->r.session_uid,
                               ctl_esc(b->r.session));
                else if (streq(b->r.cause, "kernel"))
                        fputs(_(", a mount request (any user, fsgate cannot tell who)"), stdout);
                putchar('\n');
                /* TRANSLATORS: %s is the file (or origin) that denies the module. */
                printf(_("    denied by %s\n"), ctl_esc(*b->r.source ? b->r.source : _("the configuration")));
                if (b->after_what) {
                        ctl_format_time(b->after_usec, true, after);
                        /* TRANSLATORS: %1$s "changed" or "loaded" (in English), %2$s a time, %3$d a user id. */
                        printf(_("    afterwards: %1$s by fsgate at %2$s (requested by uid %3$d)\n"), b->after_what,
                               after, b->after_uid);
                }
        }
}

/* A span: a whole number with a unit, "90s", "90min", "12h", "7d" (a bare number: seconds
 * when bare_seconds), at most 100 years. */
/* The unit words systemd's time spans take (systemd.time(7)), longest first within a unit. */
static uint64_t span_unit_usec(const char *w, size_t n) {
        static const struct {
                const char *word;
                uint64_t usec;
        } units[] = {
                { "seconds", 1 }, { "second", 1 }, { "secs", 1 }, { "sec", 1 }, { "s", 1 },
                { "minutes", 60 }, { "minute", 60 }, { "mins", 60 }, { "min", 60 }, { "m", 60 },
                { "hours", 3600 }, { "hour", 3600 }, { "hrs", 3600 }, { "hr", 3600 }, { "h", 3600 },
                { "days", 86400 }, { "day", 86400 }, { "d", 86400 },
                { "weeks", 604800 }, { "week", 604800 }, { "w", 604800 },
        };

        for (size_t i = 0; i < ELEMENTSOF(units); i++)
                if (strlen(units[i].word) == n && strncmp(w, units[i].word, n) == 0)
                        return units[i].usec * UINT64_C(1000000);
        return 0;
}

int ctl_parse_span(const char *s, bool bare_seconds, uint64_t *ret_usec) {
        uint64_t total = 0;
        unsigned parts = 0;

        /* "90s", "10 min", "1h 30min", "2 hours": numbers each with a unit, as systemd
         * takes spans; a bare number is seconds where bare_seconds says so, alone. */
        for (const char *p = s;;) {
                unsigned long long n;
                uint64_t unit;
                char *end;
                size_t l;

                p += strspn(p, " ");
                if (!*p)
                        break;
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                errno = 0;
                n = strtoull(p, &end, 10);
                if (errno)
                        return -ERANGE;
                p = end + strspn(end, " ");
                l = strspn(p, "abcdefghijklmnopqrstuvwxyz");
                unit = l ? span_unit_usec(p, l) : bare_seconds && parts == 0 && !p[strspn(p, " ")] ? UINT64_C(1000000) : 0;
                if (!unit)
                        return -EINVAL;
                if (n > 36500ULL * 86400 * 1000000 / unit || total + n * unit < total)
                        return -ERANGE;
                total += n * unit;
                parts++;
                p += l;
        }
        if (parts == 0)
                return -EINVAL;
        *ret_usec = total;
        return 0;
}

/* Midnight, local time, days_back days before today. */
static int local_midnight(unsigned days_back, uint64_t *ret) {
        time_t now = time(NULL);
        struct tm tm;
        time_t t;

        if (!localtime_r(&now, &tm))
                return -EINVAL;
        tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
        tm.tm_mday -= (int) days_back;
        tm.tm_isdst = -1;
        t = mktime(&tm);
        if (t < 0)
                return -EINVAL;
        *ret = (uint64_t) t * 1000000;
        return 0;
}

int ctl_parse_since(const char *s, uint64_t *ret) {
        static const char * const formats[] = { "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d" };
        _cleanup_free_ char *ago = NULL;
        uint64_t span, now = fsg_realtime_usec();
        size_t l = strlen(s);

        /* journalctl's words: now, today, yesterday; "-1h" and "1h ago" as well as "1h". */
        if (streq(s, "now")) {
                *ret = now;
                return 0;
        }
        if (streq(s, "today") || streq(s, "yesterday"))
                return local_midnight(streq(s, "yesterday"), ret);
        if (l > 4 && streq(s + l - 4, " ago"))
                ago = strndup(s, l - 4);
        if (ctl_parse_span(ago ?: s + (*s == '-'), false, &span) == 0) {
                *ret = now > span ? now - span : 0;
                return 0;
        }
        for (size_t i = 0; i < ELEMENTSOF(formats); i++) {
                struct tm tm = { .tm_isdst = -1 };
                const char *end = strptime(s, formats[i], &tm);
                time_t t;

                if (!end || *end)
                        continue;
                t = mktime(&tm);
                if (t < 0)
                        return -EINVAL;
                *ret = (uint64_t) t * 1000000;
                return 0;
        }
        return -EINVAL;
}

int ctl_log(const CtlOptions *o, uint64_t since_usec, unsigned lines, bool only_would_block) {
        _cleanup_(log_run_clear) LogRun run = { .max_blocks = lines, .only_would_block = only_would_block };
        sd_journal *j = NULL;
        FsgError e = {};
        int r;

        if (o->root) {
                fsg_error(&e, FSG_ERR_INVALID_ARGS, "%s", _("log reads the running system's journal; --root does not apply"));
                return ctl_fail(o, &e);
        }
        if (ctl_journal_open(&j, &e) < 0)
                return ctl_fail(o, &e);
        r = walk(j, since_usec, &run, &e);
        sd_journal_close(j);
        if (r < 0)
                return ctl_fail(o, &e);
        if (o->json)
                print_json(&run);
        else
                print_text(&run);
        if (run.cut)
                /* TRANSLATORS: %zu blocks shown; --lines and --since are options. */
                fprintf(stderr, _("Only the newest %zu blocks are shown; more are in the journal (see --lines, --since).\n"),
                        run.n_blocks);
        else if (run.walk_limit)
                /* TRANSLATORS: %d entries read; --since is an option. */
                fprintf(stderr, _("Stopped after reading fsgate's newest %d journal entries; older blocks are not shown "
                                  "(see --since).\n"), LOG_WALK_MAX);
        else if (!o->json && run.n_blocks == 0)
                puts(_("No blocked filesystem in the journal."));
        return 0;
}
