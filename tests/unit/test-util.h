/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

#include "fsg-error.h"
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

/* The core call expr, given the FsgError e it fills, returns 0; otherwise the error it filled
 * is printed with the expression (a test that fails says why the core refused). */
#define ASSERT_OK_E(expr, e)                                                                    \
        do {                                                                                    \
                const FsgError *_e = (e);                                                       \
                int _r = (expr);                                                                \
                if (_r != 0) {                                                                  \
                        fprintf(stderr, "%s:%d: %s returned %d: %s: %s\n", __FILE__, __LINE__, #expr, \
                                _r, fsg_error_dbus_name(_e->code), _e->message);               \
                        abort();                                                                \
                }                                                                               \
        } while (0)

/* The core call expr fails with code in e (an unexpected success or another error is printed). */
#define ASSERT_ERR_E(expr, e, error_code)                                                       \
        do {                                                                                    \
                const FsgError *_e = (e);                                                       \
                int _r = (expr);                                                                \
                if (_r >= 0 || _e->code != (error_code)) {                                      \
                        fprintf(stderr, "%s:%d: %s returned %d, %s: %s (expected %s)\n", __FILE__, __LINE__, \
                                #expr, _r, fsg_error_dbus_name(_e->code), _e->message,          \
                                fsg_error_dbus_name(error_code));                               \
                        abort();                                                                \
                }                                                                               \
        } while (0)

/* Tests register themselves: TEST(name) defines test_name() and, before main() runs, adds it
 * to the list test-runner.c's main() runs in the order of the file (a test cannot be left out
 * of a list). A test fails by aborting, so the first failure ends the run. */
typedef struct TestCase {
        const char *name;
        void (*run)(void);
        unsigned line;
        struct TestCase *next;
} TestCase;

void test_register(TestCase *t);
/* At most one of each a file: run before its first test, and after its last. */
void test_register_setup(void (*setup)(void));
void test_register_teardown(void (*teardown)(void));

#define TEST(name)                                                                              \
        static void test_##name(void);                                                          \
        __attribute__((constructor)) static void test_register_##name(void) {                   \
                static TestCase t = { "test_" #name, test_##name, __LINE__, NULL };             \
                test_register(&t);                                                              \
        }                                                                                       \
        static void test_##name(void)

#define TEST_FIXTURE_(register_fixture, name)                                                 \
        static void name(void);                                                                 \
        __attribute__((constructor)) static void test_register_##name(void) {                   \
                register_fixture(name);                                                         \
        }                                                                                       \
        static void name(void)
#define TEST_SETUP(name) TEST_FIXTURE_(test_register_setup, name)
#define TEST_TEARDOWN(name) TEST_FIXTURE_(test_register_teardown, name)

/* Scratch roots: a fresh temp dir with the modprobe.d layout, optionally with the cached
 * Debian kernel's module tree (made by tests/kernel/make-scratch-root.sh). */
char *scratch_root_new(bool with_kernel);
void scratch_root_free(char *root);
void write_file(const char *root, const char *rel, const char *content);
void make_symlink(const char *root, const char *rel, const char *target);
/* A scratch root with the module tree and its context (which must know the kernel): what the
 * tests of one file share, opened in its TEST_SETUP and closed in its TEST_TEARDOWN. */
void kernel_root_open(char **ret_root, FsgContext **ret_ctx);
void kernel_root_close(char *root, FsgContext *ctx);

/* The entry name resolves to in a state built now over c (the previous *s is freed). */
const FsgEntry *state_entry(FsgContext *c, FsgState **s, const char *name);
/* What fsgated and fsgatectl do for op: plan, then apply under the lock. */
int store_change(FsgContext *c, FsgOp op, const char *name, uint64_t flags, FsgError *e);

/* A check of names (fsg_name_is_valid(), ...) refuses each of bad, NULL, and a string of
 * too_long copies of c (longer than any it takes). */
void assert_refuses(bool (*valid)(const char *s), const char * const *bad, size_t n_bad, char c, size_t too_long);

/* A child that exchanges a and b (RENAME_EXCHANGE), pausing pause_us after each exchange
 * (0: as fast as it can), until stop_swapping(), or until this process dies. */
pid_t start_swapping(const char *a, const char *b, useconds_t pause_us);
void stop_swapping(pid_t pid);
