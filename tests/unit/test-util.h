/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

#include "macro.h"
#include "state.h"
#include "store.h"

/* Fails loudly with the expression and location; a unit test stops at the first failure. */
#define ASSERT(expr)                                                                            \
        do {                                                                                    \
                if (!(expr)) {                                                                  \
                        fprintf(stderr, "%s:%d: assertion failed: %s\n", __FILE__, __LINE__, #expr); \
                        abort();                                                                \
                }                                                                               \
        } while (0)

#define ASSERT_STREQ(a, b)                                                                      \
        do {                                                                                    \
                const char *_a = (a), *_b = (b);                                                \
                if (!streq_ptr(_a, _b)) {                                               \
                        fprintf(stderr, "%s:%d: \"%s\" != \"%s\"\n", __FILE__, __LINE__, _a ?: "(null)", _b ?: "(null)"); \
                        abort();                                                                \
                }                                                                               \
        } while (0)

#define TEST(name) static void name(void)
#define RUN(name) do { name(); printf("ok %s\n", #name); } while (0)

/* Scratch roots: a fresh temp dir with the modprobe.d layout, optionally with the cached
 * Debian kernel's module tree (made by tests/kernel/make-scratch-root.sh). */
char *scratch_root_new(bool with_kernel);
void scratch_root_free(char *root);
void write_file(const char *root, const char *rel, const char *content);
void make_symlink(const char *root, const char *rel, const char *target);

/* The entry name resolves to in a state built now over c (the previous *s is freed). */
const FsgEntry *state_entry(FsgContext *c, FsgState **s, const char *name);
/* What fsgated and fsgatectl do for op: plan, then apply under the lock. */
int store_change(FsgContext *c, FsgOp op, const char *name, uint64_t flags, FsgError *e);

/* A child that exchanges a and b (RENAME_EXCHANGE), pausing pause_us after each exchange
 * (0: as fast as it can), until stop_swapping(), or until this process dies. */
pid_t start_swapping(const char *a, const char *b, useconds_t pause_us);
void stop_swapping(pid_t pid);
