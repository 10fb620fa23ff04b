/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdint.h>

#include "macro.h"
#include "usage.h"

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
