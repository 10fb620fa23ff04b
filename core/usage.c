/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdint.h>

#include "name.h"
#include "usage.h"

typedef struct LoadedScan {
        FsgState *s;
        FsgEntry *line;         /* the entry the current line of /proc/modules names, if any */
        FsgHardDep **deps;      /* the hard-denied dependencies it names, if any */
        size_t n_deps;
        bool transient;
} LoadedScan;

/* /proc/modules: "NAME SIZE REFS DEPS STATE ADDRESS"; STATE is Live, Loading or Unloading. */
static void loaded_word(void *userdata, unsigned column, char *word) {
        LoadedScan *ls = userdata;

        if (column == 0) {
                fsg_name_normalize(word);
                ls->line = fsg_state_find_module(ls->s, word);
                if (ls->line)
                        ls->line->loaded = true;
                ls->n_deps = fsg_state_find_hard_deps(ls->s, word, &ls->deps);
        } else if (column == 4 && (ls->line || ls->n_deps > 0)) {
                bool live = streq(word, "Live");

                if (!live)
                        ls->transient = true;
                /* Only a live dependency is left alone by kmod (module_is_inkernel()): one
                 * half loaded or half unloaded would be inserted again. */
                for (size_t i = 0; live && i < ls->n_deps; i++)
                        ls->deps[i]->loaded = true;
                /* Said of this line only (a next one whose name is skipped must not inherit it). */
                ls->line = NULL;
                ls->n_deps = 0;
        }
}

int fsg_state_update_loaded(const FsgContext *c, FsgState *s) {
        LoadedScan ls = { .s = s };
        int r;

        for (size_t i = 0; i < s->n; i++)
                s->entries[i].loaded = false;
        for (size_t i = 0; i < s->n_hard_deps; i++)
                s->hard_deps[i]->loaded = false;
        r = fsg_read_table(c, "/proc/modules", loaded_word, &ls);
        if (r < 0)
                return r;
        s->loaded_transient = ls.transient;
        return ls.transient;
}

/* /proc/mounts: "SOURCE TARGET TYPE OPTIONS 0 0". */
static void mounted_word(void *userdata, unsigned column, char *word) {
        FsgEntry *x;

        if (column == 2 && (x = fsg_state_find_type(userdata, word)))
                x->mounted = true;
}

int fsg_state_update_mounted(const FsgContext *c, FsgState *s) {
        for (size_t i = 0; i < s->n; i++)
                s->entries[i].mounted = false;
        return fsg_read_table(c, "/proc/mounts", mounted_word, s);
}

int fsg_read_table(const FsgContext *c, const char *abs, FsgWordFn fn, void *userdata) {
        _cleanup_close_ int fd = -1;
        char buf[4096], word[256];
        size_t wl = 0;
        uint64_t total = 0;
        unsigned col = 0;
        bool in_word = false, too_long = false;
        ssize_t n;

        /* Checked before it is read (an image's "proc/modules" may be a FIFO or a link to
         * /dev/zero); for the running system one open and no allocation. */
        fd = fsg_open_regular(c, abs, FSG_TABLE_MAX);
        if (fd == -ENOENT)
                return 0;
        if (fd < 0)
                return fd;
        for (;;) {
                n = read(fd, buf, sizeof(buf));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                /* procfs files say size 0: what is read is capped instead. */
                total += (uint64_t) n;
                if (total > FSG_TABLE_MAX)
                        return -EFBIG;
                /* At the end, one newline more ends a last line that lacks its own. */
                for (ssize_t i = 0; i < (n > 0 ? n : 1); i++) {
                        char ch = n > 0 ? buf[i] : '\n';

                        if (ch == '\n' || ch == ' ' || ch == '\t') {
                                if (in_word) {
                                        word[wl] = 0;
                                        /* A word longer than any name cannot be one: skipped, counted. */
                                        if (!too_long)
                                                fn(userdata, col, word);
                                        col++;
                                        in_word = false;
                                }
                                if (ch == '\n')
                                        col = 0;
                                continue;
                        }
                        if (!in_word) {
                                in_word = true;
                                too_long = false;
                                wl = 0;
                        }
                        if (wl < sizeof(word) - 1)
                                word[wl++] = ch;
                        else
                                too_long = true;
                }
                if (n == 0)
                        return 0;
        }
}
