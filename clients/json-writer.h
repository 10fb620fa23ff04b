/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The one place fsgatectl writes JSON (RFC 8259), so that a file name with a quote in it or
 * a byte that is not UTF-8 cannot make --json output that a script fails to parse. The
 * writer puts the commas: call the functions in document order. */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct JsonWriter {
        FILE *f;
        bool comma;     /* a value ended last: the next key or value needs a comma */
} JsonWriter;

#define JSON_WRITER(file) ((JsonWriter) { .f = (file) })

void json_object_begin(JsonWriter *w);
void json_object_end(JsonWriter *w);
void json_array_begin(JsonWriter *w);
void json_array_end(JsonWriter *w);
void json_key(JsonWriter *w, const char *key);

/* Escaped per RFC 8259: quote, backslash and control characters, and U+2028/U+2029 for
 * readers that embed JSON in JavaScript; a byte that is not valid UTF-8 becomes \ufffd. */
void json_string(JsonWriter *w, const char *s);
void json_bool(JsonWriter *w, bool b);
void json_int(JsonWriter *w, int64_t i);
void json_strv(JsonWriter *w, char **l);

void json_field_string(JsonWriter *w, const char *key, const char *s);
void json_field_bool(JsonWriter *w, const char *key, bool b);
