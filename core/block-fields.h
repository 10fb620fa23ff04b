/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a block report carries, each fact under its names: the key of the Blocked signal's
 * details a{sv} (org.fsgate.fsgate1(5), a contract), the journal field fsgated writes beside
 * it (read by fsgatectl log), and its D-Bus type. fsgated fills one FsgBlockReport and writes
 * both from fsg_block_fields[]; fsgate-notify reads the signal and fsgatectl log the journal
 * through the same rows, and tests/contract/check-contract.py checks the keys the Cockpit page
 * reads against it. No bus or journal code here. */

typedef struct FsgBlockReport {
        char *type, *module, *device;   /* the signal's arguments; device "" for the kernel's */
        char *source;                   /* the deciding file; "" when none (the command line) */
        char *origin;                   /* vendor, admin, local, runtime, cmdline, default */
        char *cause;                    /* "device" (a medium appeared at seat) or "kernel" */
        char *seat;                     /* the medium's seat; "" for the kernel's request */
        bool loaded;                    /* loaded although denied (a grant for another medium, Load) */
        char *label, *uuid, *vendor, *model;    /* what udev knows of the medium; "" when nothing */
        uint64_t size;                  /* bytes; 0: unknown */
        char *session;                  /* logind's active session at seat; "" when nobody */
        int session_uid;                /* its user; -1 with no session */
} FsgBlockReport;

typedef struct FsgBlockField {
        /* In Blocked's details; NULL: not there (an argument of the signal, or the journal's
         * only). A detail is sent only when it says something: a string when not empty, a
         * number when not 0, a boolean when true. */
        const char *key;
        /* fsgated's journal field; NULL: not written there. Every one is written, "" (or -1)
         * for what is not known. */
        const char *journal;
        /* Its D-Bus type: 's' (char *), 't' (uint64_t), 'b' (bool), 'i' (int, the journal's only). */
        char type;
        size_t offset;
} FsgBlockField;

/* The rows; core/block-fields.c defines the array without a size, so a row added or taken
 * away there without this number fails to compile. */
#define FSG_BLOCK_FIELDS_N 15
extern const FsgBlockField fsg_block_fields[FSG_BLOCK_FIELDS_N];

/* The row of a details key; NULL for a key this version does not know (clients skip it). */
const FsgBlockField *fsg_block_field_by_key(const char *key);

/* Where a row's value lives in r. */
static inline void *fsg_block_field_ptr(FsgBlockReport *r, const FsgBlockField *f) {
        return (char *) r + f->offset;
}
static inline const void *fsg_block_field_cptr(const FsgBlockReport *r, const FsgBlockField *f) {
        return (const char *) r + f->offset;
}

/* Stores VALUE as written in the journal (text) into r's field f: a string copied, a number
 * parsed (a malformed one: 0, or -1 for 'i'). Returns -ENOMEM, else 0. */
int fsg_block_field_parse(FsgBlockReport *r, const FsgBlockField *f, const char *value);

/* Sets every string of r that is still NULL to "". Returns -ENOMEM, else 0. */
int fsg_block_report_fill_empty(FsgBlockReport *r);
/* Frees r's strings and zeroes it. */
void fsg_block_report_clear(FsgBlockReport *r);
