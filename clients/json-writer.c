/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>

#include "json-writer.h"
#include "utf8.h"

static void separate(JsonWriter *w) {
        if (w->comma)
                fputc(',', w->f);
        w->comma = false;
}

static void put_string(FILE *f, const char *s) {
        fputc('"', f);
        while (*s) {
                uint32_t cp;
                size_t n = fsg_utf8_decode(s, &cp);

                if (n == 0) {
                        /* JSON text is UTF-8: a stray byte has no character to name, so it
                         * gets the one that says so. */
                        fputs("\\ufffd", f);
                        s++;
                        continue;
                }
                if (cp == '"' || cp == '\\')
                        fprintf(f, "\\%c", (char) cp);
                else if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029)
                        fprintf(f, "\\u%04" PRIx32, cp);
                else
                        fwrite(s, 1, n, f);
                s += n;
        }
        fputc('"', f);
}

static void open_with(JsonWriter *w, char c) {
        separate(w);
        fputc(c, w->f);
}

static void close_with(JsonWriter *w, char c) {
        fputc(c, w->f);
        w->comma = true;
}

void json_object_begin(JsonWriter *w) {
        open_with(w, '{');
}

void json_object_end(JsonWriter *w) {
        close_with(w, '}');
}

void json_array_begin(JsonWriter *w) {
        open_with(w, '[');
}

void json_array_end(JsonWriter *w) {
        close_with(w, ']');
}

void json_key(JsonWriter *w, const char *key) {
        separate(w);
        put_string(w->f, key);
        fputc(':', w->f);
}

void json_string(JsonWriter *w, const char *s) {
        separate(w);
        put_string(w->f, s);
        w->comma = true;
}

void json_bool(JsonWriter *w, bool b) {
        separate(w);
        fputs(b ? "true" : "false", w->f);
        w->comma = true;
}

void json_int(JsonWriter *w, int64_t i) {
        separate(w);
        fprintf(w->f, "%" PRId64, i);
        w->comma = true;
}

void json_strv(JsonWriter *w, char **l) {
        json_array_begin(w);
        for (char **i = l; i && *i; i++)
                json_string(w, *i);
        json_array_end(w);
}

void json_field_string(JsonWriter *w, const char *key, const char *s) {
        json_key(w, key);
        json_string(w, s);
}

void json_field_bool(JsonWriter *w, const char *key, bool b) {
        json_key(w, key);
        json_bool(w, b);
}
