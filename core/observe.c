/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc-util.h"
#include "conffile.h"
#include "macro.h"
#include "name.h"
#include "observe.h"
#include "strv.h"

/* The two comment lines that say what the file observes: kmod skips them, fsgate reads them. */
#define KEY_PROFILE "# observe-profile "
#define KEY_SINCE   "# observe-since "

static bool has_prefix(const char *s, const char *prefix) {
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

FsgObservation *fsg_observation_free(FsgObservation *o) {
        if (!o)
                return NULL;
        strv_free(o->modules);
        free(o);
        return NULL;
}

/* Whether a request for x's types can ever load something worth observing. */
static bool observable(const FsgEntry *x) {
        return x && !x->builtin && x->available && fsg_name_is_valid(x->module);
}

char *fsg_observation_content(const FsgState *s, const char *profile, char * const *modules, uint64_t since_usec,
                              const char *hook, size_t *ret_n) {
        assert(s);
        assert(profile);
        assert(hook);

        _cleanup_free_ char *text = NULL;
        size_t len = 0, n = 0;
        FILE *f = open_memstream(&text, &len);

        if (!f)
                return NULL;
        fprintf(f, FSG_HEADER ": observing profile %s. Nothing is denied: each request of the kernel for a\n"
                   "# type of its modules runs fsgate's hook, which records \"would block\" in the journal and\n"
                   "# loads the module as kmod would have. `fsgatectl audit %s` shows what was recorded;\n"
                   "# `fsgatectl apply %s` enforces the profile, `fsgatectl stop-observing` ends this.\n"
                   KEY_PROFILE "%s\n" KEY_SINCE "%" PRIu64 "\n",
                profile, profile, profile, profile, since_usec);
        for (char * const *m = modules; m && *m; m++) {
                const FsgEntry *x = fsg_state_find_module(s, *m);

                if (!observable(x))
                        continue;
                n++;
                for (char **t = x->types; t && *t; t++)
                        if (fsg_name_is_valid(*t))
                                (void) fsg_hook_lines_write(f, hook, &(FsgHookArgs) {
                                        .kind = FSG_HOOK_LINE_OBSERVE, .type = *t, .module = x->module,
                                        .profile = profile });
        }
        if (fclose(f) == EOF)
                return NULL;
        if (ret_n)
                *ret_n = n;
        return TAKE_PTR(text);
}

/* One line of the file into o: the two keys, and the modules of the install lines. */
static int parse_line(FsgObservation *o, char *line) {
        char *w[8] = {}, *save = NULL;
        size_t n = 0;

        if (has_prefix(line, KEY_PROFILE)) {
                const char *p = line + strlen(KEY_PROFILE);
                if (fsg_name_is_valid(p))
                        snprintf(o->profile, sizeof(o->profile), "%s", p);
                return 0;
        }
        if (has_prefix(line, KEY_SINCE)) {
                o->since_usec = strtoull(line + strlen(KEY_SINCE), NULL, 10);
                return 0;
        }
        for (char *t = strtok_r(line, " \t", &save); t && n < ELEMENTSOF(w); t = strtok_r(NULL, " \t", &save))
                w[n++] = t;
        /* install NAME HOOK --observe TYPE MODULE PROFILE */
        if (n == 7 && streq(w[0], "install") && streq(w[3], FSG_HOOK_OBSERVE_OPTION) && fsg_name_is_valid(w[5]))
                return strv_extend_unique(&o->modules, w[5]);
        return 0;
}

int fsg_observation_read(const FsgContext *c, FsgObservation **ret, FsgError *e) {
        assert(c);
        assert(ret);

        _cleanup_(fsg_observation_freep) FsgObservation *o = NULL;
        _cleanup_free_ char *text = NULL;
        FsgFileKind kind;
        int r;

        *ret = NULL;
        kind = fsg_target_classify(c, FSG_OBSERVE_PATH, NULL, NULL);
        if (kind == FSG_FILE_ABSENT || kind == FSG_FILE_MASK)
                return 0;
        if (kind != FSG_FILE_FSGATE)
                return fsg_error(e, FSG_ERR_FOREIGN_CONFIG, "%s%s was not written by fsgate; left alone", c->root,
                                 FSG_OBSERVE_PATH);
        r = fsg_read_regular(c, FSG_OBSERVE_PATH, FSG_CONF_MAX, &text, NULL);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return fsg_error_errno(e, -r, "Failed to read %s%s", c->root, FSG_OBSERVE_PATH);
        o = calloc(1, sizeof(*o));
        if (!o)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
                if (parse_line(o, l) < 0)
                        return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        if (!*o->profile)
                return fsg_error(e, FSG_ERR_FAILED, "%s%s names no profile", c->root, FSG_OBSERVE_PATH);
        strv_sort(o->modules);
        *ret = TAKE_PTR(o);
        return 1;
}

static int observe_dir_open(const FsgContext *c, bool create, char **ret_dir, int *ret_fd, FsgError *e) {
        if (asprintf(ret_dir, "%s" FSG_OBSERVE_DIR, c->root) < 0)
                return fsg_error(e, FSG_ERR_FAILED, "Out of memory");
        *ret_fd = fsg_open_dir(c, FSG_OBSERVE_DIR, create);
        if (*ret_fd == -ENOENT && !create)
                return 0;
        if (*ret_fd < 0)
                return fsg_error_errno(e, -*ret_fd, "Failed to open %s", *ret_dir);
        return 1;
}

int fsg_observation_write_locked(const FsgContext *c, const char *content, FsgError *e) {
        assert(c);
        assert(content);

        _cleanup_free_ char *dir = NULL;
        _cleanup_close_ int dfd = -1;
        FsgFileId id = {};
        FsgFileKind kind;
        int r;

        r = observe_dir_open(c, true, &dir, &dfd, e);
        if (r < 0)
                return r;
        kind = fsg_file_classify_at(dfd, FSG_OBSERVE_NAME, NULL, &id);
        if (kind != FSG_FILE_ABSENT && kind != FSG_FILE_FSGATE)
                return fsg_error(e, FSG_ERR_FOREIGN_CONFIG, "%s/%s was not written by fsgate; left alone", dir,
                                 FSG_OBSERVE_NAME);
        return fsg_atomic_write(dfd, dir, FSG_OBSERVE_NAME, content, &id, e);
}

int fsg_observation_end_locked(const FsgContext *c, const char *profile, bool *ret_ended, FsgError *e) {
        assert(c);

        _cleanup_(fsg_observation_freep) FsgObservation *o = NULL;
        _cleanup_free_ char *dir = NULL;
        _cleanup_close_ int dfd = -1;
        FsgFileId id = {};
        int r;

        if (ret_ended)
                *ret_ended = false;
        r = fsg_observation_read(c, &o, e);
        if (r <= 0 || (profile && !streq(o->profile, profile)))
                return r < 0 ? r : 0;
        r = observe_dir_open(c, false, &dir, &dfd, e);
        if (r <= 0)
                return r;
        if (fsg_file_classify_at(dfd, FSG_OBSERVE_NAME, NULL, &id) != FSG_FILE_FSGATE)
                return 0;
        r = fsg_durable_unlink(dfd, dir, FSG_OBSERVE_NAME, &id, e);
        if (r >= 0 && ret_ended)
                *ret_ended = true;
        return r;
}
