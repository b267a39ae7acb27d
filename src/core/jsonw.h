/*
 * jsonw.h - streaming JSON writer over struct buf, for responses and item
 * bodies, sharing canon.c's number and string rules.
 *
 * Commas are inserted automatically.  Usage:
 *   struct jsonw w; jsonw_init(&w, &buf);
 *   jsonw_obj(&w); jsonw_kstr(&w, "id", id); jsonw_knum(&w, "n", 3);
 *   jsonw_key(&w, "list"); jsonw_arr(&w); jsonw_str(&w, "a"); jsonw_end(&w);
 *   jsonw_end(&w);
 *   if (jsonw_error(&w)) ...
 * Errors (buffer cap, nesting deeper than JSONW_DEPTH) are sticky: later
 * calls do nothing and jsonw_error() returns the first error.
 * jsonw_kstr()/jsonw_str() with a NULL string write null.
 * Misuse (a key inside an array, a value in an object without a key,
 * jsonw_end() with nothing open) sets ERR_INVALID.  Several top-level
 * values are written one after the other without separators.
 * jsonw_int() writes |v| <= 2^53 exactly and larger values as the double
 * JavaScript would see (canon_number).
 */
#ifndef GP_CORE_JSONW_H
#define GP_CORE_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "util/buf.h"

#define JSONW_DEPTH 32

struct jsonw {
    struct buf *b;
    int depth;
    int err;
    bool need_comma[JSONW_DEPTH];
    bool after_key;
    char closer[JSONW_DEPTH]; /* '}' or ']' per open container */
};

void jsonw_init(struct jsonw *w, struct buf *b);
int jsonw_error(const struct jsonw *w);
void jsonw_obj(struct jsonw *w);
void jsonw_arr(struct jsonw *w);
void jsonw_end(struct jsonw *w);
void jsonw_key(struct jsonw *w, const char *k);
void jsonw_str(struct jsonw *w, const char *s);
void jsonw_strn(struct jsonw *w, const char *s, size_t n);
void jsonw_num(struct jsonw *w, double d);
void jsonw_int(struct jsonw *w, int64_t v);
void jsonw_bool(struct jsonw *w, bool v);
void jsonw_null(struct jsonw *w);
/* Writes a cJSON value (canon_write); NULL writes null. */
void jsonw_json(struct jsonw *w, const cJSON *v);
/* Writes pre-rendered JSON text verbatim as one value. */
void jsonw_raw(struct jsonw *w, const char *json, size_t n);

void jsonw_kstr(struct jsonw *w, const char *k, const char *s);
void jsonw_knum(struct jsonw *w, const char *k, double d);
void jsonw_kint(struct jsonw *w, const char *k, int64_t v);
void jsonw_kbool(struct jsonw *w, const char *k, bool v);
void jsonw_knull(struct jsonw *w, const char *k);
void jsonw_kjson(struct jsonw *w, const char *k, const cJSON *v);

#endif
