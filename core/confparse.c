/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE

#include "alloc-util.h"
#include "confparse.h"
#include "name.h"

void fsg_rules_free(FsgRule *rules, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(rules[i].name);
                free(rules[i].value);
        }
        free(rules);
}

static int rule_add(FsgRule **rules, size_t *n, FsgRuleKind kind, const char *name, const char *value, size_t file) {
        FsgRule *t = fsg_grow_one(*rules, *n, sizeof(FsgRule));
        if (!t)
                return -ENOMEM;
        *rules = t;
        t[*n] = (FsgRule) { .kind = kind, .name = strdup(name), .value = value ? strdup(value) : NULL, .file = file };
        if (!t[*n].name || (value && !t[*n].value)) {
                free(t[*n].name);
                free(t[*n].value);
                return -ENOMEM;
        }
        fsg_name_normalize(t[*n].name);
        if (kind == FSG_RULE_ALIAS)
                fsg_name_normalize(t[*n].value);
        (*n)++;
        return 0;
}

int fsg_conf_parse_line(char *line, size_t file, FsgRule **rules, size_t *n) {
        char *save = NULL, *cmd, *a, *b;

        if (line[0] == '\0' || line[0] == '#')
                return 0;
        cmd = strtok_r(line, "\t ", &save);
        if (!cmd)
                return 0;
        a = strtok_r(NULL, "\t ", &save);
        if (!a)
                return 0; /* kmod logs a syntax error and goes on */
        if (streq(cmd, "blacklist"))
                return rule_add(rules, n, FSG_RULE_BLACKLIST, a, NULL, file);
        if (streq(cmd, "install")) {
                b = strtok_r(NULL, "", &save);
                return b ? rule_add(rules, n, FSG_RULE_INSTALL, a, b, file) : 0;
        }
        if (streq(cmd, "alias")) {
                b = strtok_r(NULL, "\t ", &save);
                return b ? rule_add(rules, n, FSG_RULE_ALIAS, a, b, file) : 0;
        }
        return 0;
}

static int parse_stream(FILE *f, size_t file_index, FsgRule **rules, size_t *n_rules, const char *prefix,
                        bool *ret_prefix) {
        _cleanup_free_ char *line = NULL, *joined = NULL;
        size_t cap = 0, jl = 0;
        ssize_t l;
        bool first = true;

        /* A line ending in a backslash continues on the next one, joined without the newline;
         * the joined line is held to FSG_LINE_MAX like each of its parts. */
        while ((l = fsg_read_line(f, '\n', FSG_LINE_MAX, &line, &cap)) > 0) {
                bool cont;
                char *t;

                if (line[l - 1] == '\n')
                        line[--l] = 0;
                if (first && prefix)
                        *ret_prefix = strncmp(line, prefix, strlen(prefix)) == 0;
                first = false;
                cont = l > 0 && line[l - 1] == '\\';
                if (cont)
                        line[--l] = 0;
                if (jl + (size_t) l > FSG_LINE_MAX)
                        return -EMSGSIZE;
                t = realloc(joined, jl + l + 1);
                if (!t)
                        return -ENOMEM;
                joined = t;
                memcpy(joined + jl, line, l + 1);
                jl += l;
                if (cont)
                        continue;
                if (fsg_conf_parse_line(joined, file_index, rules, n_rules) < 0)
                        return -ENOMEM;
                jl = 0;
        }
        if (l < 0)
                return (int) l;
        if (jl > 0 && fsg_conf_parse_line(joined, file_index, rules, n_rules) < 0)
                return -ENOMEM;
        return 0;
}

int fsg_conf_parse(FILE *f, size_t file_index, FsgRule **rules, size_t *n_rules) {
        return parse_stream(f, file_index, rules, n_rules, NULL, NULL);
}

int fsg_conf_parse_at_peek(const FsgContext *c, const char *abs, size_t file_index, FsgRule **rules,
                           size_t *n_rules, const char *prefix, bool *ret_prefix) {
        _cleanup_fclose_ FILE *f = NULL;
        int r = fsg_fopen_regular(c, abs, FSG_CONF_MAX, &f);

        *ret_prefix = false;
        if (r < 0)
                return r;
        return parse_stream(f, file_index, rules, n_rules, prefix, ret_prefix);
}

int fsg_conf_parse_at(const FsgContext *c, const char *abs, size_t file_index, FsgRule **rules, size_t *n_rules) {
        _cleanup_fclose_ FILE *f = NULL;
        /* Opened and checked first: a FIFO or a huge file swapped in since the directory was
         * scanned is an error, not a hang. */
        int r = fsg_fopen_regular(c, abs, FSG_CONF_MAX, &f);

        if (r < 0)
                return r;
        return fsg_conf_parse(f, file_index, rules, n_rules);
}

int fsg_conf_parse_buf(const char *buf, size_t len, size_t file_index, FsgRule **rules, size_t *n_rules,
                       const char *prefix, bool *ret_prefix) {
        _cleanup_fclose_ FILE *f = NULL;

        if (ret_prefix)
                *ret_prefix = false;
        if (len == 0)
                return 0; /* fmemopen() refuses an empty buffer */
        f = fmemopen((void *) buf, len, "r");
        if (!f)
                return -errno;
        return parse_stream(f, file_index, rules, n_rules, prefix, ret_prefix);
}

int fsg_conf_write_for_kmod(FILE *out, const char *buf, size_t len) {
        size_t slashes = 0;

        /* kmod reads each file on its own, lines joined at a backslash before a newline, and
         * at the end of a file a lone backslash takes the EOF (-1) for the next character:
         * its line ends in byte 0xff. A newline after each file ends its last line as the
         * end of the file did (at worst an empty line, which kmod skips); after a lone
         * backslash, 0xff first. Whether a backslash is lone: backslashes pair off from the
         * first of a run, so an odd run at the end leaves one. */
        while (slashes < len && buf[len - 1 - slashes] == '\\')
                slashes++;
        if (fwrite(buf, 1, len, out) != len || fputs(slashes % 2 ? "\xff\n" : "\n", out) == EOF)
                return -EIO;
        return 0;
}

int fsg_conf_parse_file(const char *fullpath, size_t file_index, FsgRule **rules, size_t *n_rules) {
        static const FsgContext host = { .root = (char *) "", .root_fd = -1 };
        return fsg_conf_parse_at(&host, fullpath, file_index, rules, n_rules);
}
