/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <stdio.h>

#include "alloc-util.h"
#include "confparse.h"
#include "name.h"
#include "override.h"
#include "strv.h"

void fsg_override_header_done(FsgOverrideHeader *h) {
        free(h->vendor);
        strv_free(h->allows);
        *h = (FsgOverrideHeader) {};
}

static const char *after(const char *line, const char *prefix) {
        return strncmp(line, prefix, strlen(prefix)) == 0 ? line + strlen(prefix) : NULL;
}

int fsg_override_header_parse(const char *content, FsgOverrideHeader *ret) {
        _cleanup_free_ char *copy = NULL;
        FsgOverrideHeader h = {};
        char *save = NULL;
        const char *v;

        *ret = (FsgOverrideHeader) {};
        if (!after(content, FSG_OVERRIDE_HEADER))
                return 0;
        /* The header is the comment block at the top; what follows is the vendor's. */
        copy = strndup(content, strcspn(content, "\n") + 4096);
        if (!copy)
                return -ENOMEM;
        for (char *l = strtok_r(copy, "\n", &save); l && l[0] == '#'; l = strtok_r(NULL, "\n", &save)) {
                if ((v = after(l, FSG_OVERRIDE_OF)) && !h.vendor && !(h.vendor = strdup(v)))
                        goto oom;
                if ((v = after(l, FSG_OVERRIDE_SHA256)) && strlen(v) == FSG_SHA256_HEX_SIZE - 1)
                        memcpy(h.sha256, v, FSG_SHA256_HEX_SIZE);
                if ((v = after(l, FSG_OVERRIDE_ALLOWS)) && !h.allows) {
                        _cleanup_free_ char *list = strdup(v);
                        char *s2 = NULL;
                        if (!list)
                                goto oom;
                        for (char *m = strtok_r(list, " ", &s2); m; m = strtok_r(NULL, " ", &s2))
                                if (fsg_name_is_valid(m) && strv_extend_unique(&h.allows, m) < 0)
                                        goto oom;
                }
        }
        if (!h.vendor || !h.sha256[0] || !h.allows || !fsg_override_name_ok(h.vendor)) {
                fsg_override_header_done(&h);
                return 0;
        }
        *ret = h;
        return 1;
oom:
        fsg_override_header_done(&h);
        return -ENOMEM;
}

int fsg_override_read(const FsgContext *c, const char *abs, FsgOverrideHeader *ret) {
        _cleanup_free_ char *content = NULL;
        int r = fsg_read_regular(c, abs, FSG_CONF_MAX, &content, NULL);

        *ret = (FsgOverrideHeader) {};
        if (r == -ENOENT || r == -EBADFD)
                return 0;
        if (r < 0)
                return r;
        return fsg_override_header_parse(content, ret);
}

bool fsg_override_name_ok(const char *path) {
        for (const char *p = path; *p; p++)
                if (*p <= ' ' || *p > '~')
                        return false;
        return *path == '/';
}

/* Calls fn for each logical line of content: the physical text (with its newlines) and the
 * number of its first line. */
typedef int (*LineFn)(const char *text, size_t len, unsigned lineno, bool named, void *userdata);

static int names_any(const char *text, size_t len, char * const *strip, bool *ret) {
        _cleanup_free_ char *joined = malloc(len + 1);
        FsgRule *rules = NULL;
        size_t n = 0, j = 0;
        int r;

        if (!joined)
                return -ENOMEM;
        /* As kmod joins it: a backslash before the newline continues the line. */
        for (size_t i = 0; i < len; i++) {
                if (text[i] == '\\' && i + 1 < len && text[i + 1] == '\n') {
                        i++;
                        continue;
                }
                if (text[i] != '\n')
                        joined[j++] = text[i];
        }
        joined[j] = 0;
        r = fsg_conf_parse_line(joined, 0, &rules, &n);
        *ret = false;
        for (size_t i = 0; r >= 0 && i < n; i++)
                *ret = *ret || strv_contains(strip, rules[i].name);
        fsg_rules_free(rules, n);
        return r;
}

static int for_each_line(const char *content, char * const *strip, LineFn fn, void *userdata) {
        unsigned lineno = 1;

        for (const char *p = content; *p;) {
                const char *end = p;
                unsigned lines = 0;
                bool named;
                int r;

                /* One logical line: physical lines while each ends in a backslash. */
                for (;;) {
                        const char *nl = strchr(end, '\n');
                        lines++;
                        if (!nl) {
                                end += strlen(end);
                                break;
                        }
                        end = nl + 1;
                        if (nl == p || nl[-1] != '\\' || !*end)
                                break;
                }
                r = names_any(p, end - p, strip, &named);
                if (r >= 0)
                        r = fn(p, end - p, lineno, named, userdata);
                if (r < 0)
                        return r;
                lineno += lines;
                p = end;
        }
        return 0;
}

typedef struct Buf {
        char *s;
        size_t len;
} Buf;

static int copy_unnamed(const char *text, size_t len, unsigned lineno, bool named, void *userdata) {
        Buf *b = userdata;
        char *t;

        if (named)
                return 0;
        t = realloc(b->s, b->len + len + 2);
        if (!t)
                return -ENOMEM;
        b->s = t;
        memcpy(b->s + b->len, text, len);
        b->len += len;
        /* A last line without a newline gets one: nothing may run into what follows. */
        if (len > 0 && text[len - 1] != '\n')
                b->s[b->len++] = '\n';
        b->s[b->len] = 0;
        return 0;
}

static char *join(char * const *l) {
        size_t n = 1;
        char *s;

        for (char * const *i = l; i && *i; i++)
                n += strlen(*i) + 1;
        s = malloc(n);
        if (!s)
                return NULL;
        s[0] = 0;
        for (char * const *i = l; i && *i; i++) {
                if (i != l)
                        strcat(s, " ");
                strcat(s, *i);
        }
        return s;
}

char *fsg_override_content(const char *vendor, const char *vendor_content, char * const *allows,
                           char * const *strip) {
        _cleanup_free_ char *list = join(allows), *head = NULL;
        char sha[FSG_SHA256_HEX_SIZE];
        Buf b = {};

        if (!list || for_each_line(vendor_content, strip, copy_unnamed, &b) < 0) {
                free(b.s);
                return NULL;
        }
        if (asprintf(&head,
                     FSG_OVERRIDE_HEADER "%1$s\n"
                     "# (kmod reads this file instead of it), with the lines of the modules below left out;\n"
                     "# every other line is the vendor file's. If the vendor file changes, fsgate reports this\n"
                     "# file as stale. Undo with: fsgatectl reset MODULE (the file goes with the last module).\n"
                     FSG_OVERRIDE_OF "%1$s\n"
                     FSG_OVERRIDE_SHA256 "%2$s\n"
                     FSG_OVERRIDE_ALLOWS "%3$s\n"
                     "%4$s",
                     vendor, fsg_sha256_hex(vendor_content, strlen(vendor_content), sha), list, b.s ?: "") < 0)
                head = NULL;
        free(b.s);
        return TAKE_PTR(head);
}

static int collect_named(const char *text, size_t len, unsigned lineno, bool named, void *userdata) {
        char ***l = userdata;
        _cleanup_free_ char *t = NULL;
        char *line;

        if (!named)
                return 0;
        t = strndup(text, len);
        if (!t)
                return -ENOMEM;
        t[strcspn(t, "\n")] = 0; /* the first physical line names it well enough */
        if (asprintf(&line, "line %u: %s", lineno, t) < 0)
                return -ENOMEM;
        return strv_push(l, line);
}

int fsg_conf_lines_naming(const char *content, char * const *strip, char ***ret) {
        _cleanup_strv_free_ char **l = NULL;
        int r = for_each_line(content, strip, collect_named, &l);

        if (r < 0)
                return r;
        *ret = TAKE_PTR(l);
        return 0;
}

int fsg_override_strip_add(char ***strip, const char *module, char * const *types) {
        if (strv_extend_unique(strip, module) < 0)
                return -ENOMEM;
        for (char * const *t = types; t && *t; t++) {
                _cleanup_free_ char *alias = NULL;
                if (asprintf(&alias, "fs-%s", *t) < 0)
                        return -ENOMEM;
                fsg_name_normalize(alias);
                if (strv_extend_unique(strip, alias) < 0)
                        return -ENOMEM;
        }
        return 0;
}
