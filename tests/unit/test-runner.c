/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The main() of every C unit test: runs the tests TEST() registered, in the order of their
 * file, between the file's TEST_SETUP and TEST_TEARDOWN. */
#include <stdio.h>
#include <stdlib.h>

#include "test-util.h"

static TestCase *tests;
static void (*setup)(void), (*teardown)(void);

/* Constructors run in no promised order: each test is put in its place by line. */
void test_register(TestCase *t) {
        TestCase **p = &tests;

        while (*p && (*p)->line < t->line)
                p = &(*p)->next;
        t->next = *p;
        *p = t;
}

void test_register_setup(void (*f)(void)) {
        ASSERT(!setup);
        setup = f;
}

void test_register_teardown(void (*f)(void)) {
        ASSERT(!teardown);
        teardown = f;
}

int main(void) {
        unsigned n = 0;

        ASSERT(tests);
        if (setup)
                setup();
        for (TestCase *t = tests; t; t = t->next, n++) {
                printf("== %s\n", t->name);
                fflush(stdout);
                t->run();
                printf("ok %s\n", t->name);
        }
        if (teardown)
                teardown();
        printf("%u tests passed\n", n);
        return EXIT_SUCCESS;
}
