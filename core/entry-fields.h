/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "state.h"

/* The facts of an entry as every reader outside fsgated sees them, each under one name: the
 * key of Describe's a{sv} (org.fsgate.fsgate1(5), a contract), which fsgatectl --json uses
 * too. The service's description, fsgatectl's reader of it and fsgatectl's JSON all walk
 * fsg_entry_fields[]: a fact added in one row reaches all three. No bus code here: the
 * D-Bus type is data for those that speak D-Bus. */

typedef enum FsgEntryFieldFlags {
        /* A member of the entry (sassssbbbb), in the table's order; the others are the
         * description's only. */
        FSG_FIELD_ENTRY    = 1 << 0,
        /* Sent only when set (NULL: not asked for, as allow_refused outside Describe). */
        FSG_FIELD_OPTIONAL = 1 << 1,
        /* Of the dependency whose hard deny refuses a load now ("" when none does): offset is
         * into that FsgHardDep. */
        FSG_FIELD_HARD_DEP = 1 << 2,
        /* Known to every reader from the module's name alone (compiled in): in fsgatectl's
         * list --json too, which has no description. */
        FSG_FIELD_STATIC   = 1 << 3,
} FsgEntryFieldFlags;

typedef struct FsgEntryField {
        const char *key;
        /* Its D-Bus type: "s", "b", "as" (a list), or "a(ss)" (pairs: file, line). */
        const char *signature;
        FsgEntryFieldFlags flags;
        /* A fact the entry holds as it is sent: where, in FsgEntry (a char *, bool or char **). */
        size_t offset;
        /* A fact computed from others (state, origin, what the load chain refuses): read and
         * stored through these instead (offset unused). */
        const char *(*get_string)(const FsgEntry *x);
        int (*set_string)(FsgEntry *x, const char *value);
        bool (*get_bool)(const FsgEntry *x);
        void (*set_bool)(FsgEntry *x, bool value);
} FsgEntryField;

extern const FsgEntryField fsg_entry_fields[];
extern const size_t fsg_entry_fields_n;

/* The row of key, NULL for a key this build does not know (a newer service's: skipped). */
const FsgEntryField *fsg_entry_field_find(const char *key);

/* The value of f in x. A string is never NULL ("" for none) unless f is FSG_FIELD_OPTIONAL
 * and x does not have it. */
const char *fsg_entry_field_string(const FsgEntry *x, const FsgEntryField *f);
bool fsg_entry_field_bool(const FsgEntry *x, const FsgEntryField *f);
char **fsg_entry_field_strv(const FsgEntry *x, const FsgEntryField *f);

/* Stores a value read from a description or an entry: a string copied (-ENOMEM), a list
 * taken over (freed on the next store). */
int fsg_entry_field_set_string(FsgEntry *x, const FsgEntryField *f, const char *value);
void fsg_entry_field_set_bool(FsgEntry *x, const FsgEntryField *f, bool value);
void fsg_entry_field_take_strv(FsgEntry *x, const FsgEntryField *f, char **value);

/* After a reader stored what a description had: -EBADMSG without a module or a deciding file
 * (every fsgated sends both); the strings printers rely on made "" where the service sent
 * none; a dependency named "" (none refuses the load) dropped. */
int fsg_entry_fields_complete(FsgEntry *x);
