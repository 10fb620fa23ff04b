/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>

#include "context.h"

/* How kmod reads one modprobe.d file: the rules fsgate needs from it, nothing about which
 * files count (confscan.h). */

typedef enum FsgRuleKind {
        FSG_RULE_BLACKLIST,
        FSG_RULE_INSTALL,
        FSG_RULE_ALIAS,
} FsgRuleKind;

typedef struct FsgRule {
        FsgRuleKind kind;
        char *name;        /* normalized module name (or alias for FSG_RULE_ALIAS) */
        char *value;       /* alias target (normalized) or install command */
        size_t file;       /* index into FsgConfig.files */
} FsgRule;

/* The rules of one file, parsed the way kmod parses it (continuations, '#' at column 0),
 * appended to *rules. Only a regular file is read (never blocking on a FIFO), at most
 * FSG_CONF_MAX bytes (-EFBIG past it, also when the file grew after the open), lines of at
 * most FSG_LINE_MAX (-EMSGSIZE); a missing file has no rules. _at opens abs inside c's root,
 * _file a path on the host. Return a negative errno. */
int fsg_conf_parse_at(const FsgContext *c, const char *abs, size_t file_index, FsgRule **rules, size_t *n_rules);
/* fsg_conf_parse_at(), telling too whether the first line starts with prefix: what a file
 * says of itself in its header, at no second read. */
int fsg_conf_parse_at_peek(const FsgContext *c, const char *abs, size_t file_index, FsgRule **rules,
                           size_t *n_rules, const char *prefix, bool *ret_prefix);
int fsg_conf_parse_file(const char *fullpath, size_t file_index, FsgRule **rules, size_t *n_rules);
int fsg_conf_parse(FILE *f, size_t file_index, FsgRule **rules, size_t *n_rules);
/* fsg_conf_parse_at_peek() over a file's bytes already read (buf need not end in NUL;
 * prefix may be NULL). */
int fsg_conf_parse_buf(const char *buf, size_t len, size_t file_index, FsgRule **rules, size_t *n_rules,
                       const char *prefix, bool *ret_prefix);
/* Writes one file's bytes to out, the files kmod reads in order made one: kmod then reads the
 * same lines from it as from the files one by one. Returns a negative errno. */
int fsg_conf_write_for_kmod(FILE *out, const char *buf, size_t len);
/* One logical line (continuations joined, no newline), changed in place: its rule, if any,
 * appended. Returns a negative errno. */
int fsg_conf_parse_line(char *line, size_t file_index, FsgRule **rules, size_t *n_rules);
void fsg_rules_free(FsgRule *rules, size_t n);
