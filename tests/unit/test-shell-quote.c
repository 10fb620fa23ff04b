/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include "alloc-util.h"
#include "shell-quote.h"
#include "test-util.h"

/* Words that must come back from sh as they went in. */
static const char * const hostile[] = {
        "9.9.9-amd64 ;touch PWNED;#", "it's a root", "'", "''", "a'b'c", "$(touch PWNED)", "`id`", "a b\tc",
        "*", "~root", "-n", "\\", "\"q\"", "a\nb", "!x", "${HOME}", "&&", "|", "<>", "é",
};

TEST(plain_words_stay_as_they_are) {
        /* Today's advice, compared by tests and the README, reads as it did. */
        static const char * const plain[] = { "fsgatectl", "hfs", "usb-storage", "/tmp/fsgate-root.x1_Y",
                                              "6.1.0-18-amd64", "--root=/srv/img", "5.14.21-150500.55.39-default",
                                              "6.5.6-300.fc39.x86_64", "a+b@c:d,e" };

        for (size_t i = 0; i < ELEMENTSOF(plain); i++) {
                _cleanup_free_ char *q = fsg_shell_quote(plain[i]);
                ASSERT_STREQ(q, plain[i]);
        }
}

TEST(quoted) {
        _cleanup_free_ char *a = fsg_shell_quote("it's a root"), *b = fsg_shell_quote(""),
                            *c = fsg_shell_quote("9.9.9-amd64 ;touch PWNED;#");

        ASSERT_STREQ(a, "'it'\\''s a root'");
        ASSERT_STREQ(b, "''");
        ASSERT_STREQ(c, "'9.9.9-amd64 ;touch PWNED;#'");
}

TEST(join) {
        const char *words[] = { "chroot", "/srv/it's here", "update-initramfs", "-u", "-k", "6.1.0-amd64", NULL };
        const char *none[] = { NULL };
        _cleanup_free_ char *j = fsg_shell_join(words), *e = fsg_shell_join(none);

        ASSERT_STREQ(j, "chroot '/srv/it'\\''s here' update-initramfs -u -k 6.1.0-amd64");
        ASSERT_STREQ(e, "");
}

/* sh itself reads each quoted word back: printf gets exactly one argument, the word. */
TEST(sh_reads_the_words_back) {
        for (size_t i = 0; i < ELEMENTSOF(hostile); i++) {
                _cleanup_free_ char *q = fsg_shell_quote(hostile[i]), *cmd = NULL;
                char out[256] = "";
                size_t n;
                FILE *f;

                ASSERT(q);
                ASSERT(asprintf(&cmd, "set -- %s; printf '%%s|%%s' \"$#\" \"$1\"", q) >= 0);
                f = popen(cmd, "r");
                ASSERT(f);
                n = fread(out, 1, sizeof(out) - 1, f);
                out[n] = 0;
                ASSERT(pclose(f) == 0);
                ASSERT(strncmp(out, "1|", 2) == 0);
                ASSERT_STREQ(out + 2, hostile[i]);
        }
}

TEST(kernel_release) {
        static const char * const good[] = { "6.1.0-18-amd64", "5.14.21-150500.55.39-default", "6.5.6-300.fc39.x86_64",
                                             "6.1.0+deb12", "0.0-fuzz", "a" };
        static const char * const bad[] = { "", ".", "..", "9.9.9-amd64 ;touch PWNED;#", "a/b", "6.1 ", "$(id)",
                                            "a'b", "6.1\n", "~rc1", "é" };

        for (size_t i = 0; i < ELEMENTSOF(good); i++)
                ASSERT(fsg_kernel_release_is_valid(good[i]));
        assert_refuses(fsg_kernel_release_is_valid, bad, ELEMENTSOF(bad), '1', 65);
}
