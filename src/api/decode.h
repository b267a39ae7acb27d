/*
 * decode.h - pure helpers for JSON request body decoders.
 *
 * A body decoder is a pure function from a parsed body (cJSON object) to
 * a request struct or an error message, so that it can be unit-tested and
 * fuzzed without a server.  These helpers apply API.md §1.2: a field is
 * "present" when JavaScript would call it truthy (absent, null, false, 0
 * and "" are missing); a present field of the wrong JSON type is an error
 * ("<field> must be a string", ...).  Strings must be valid UTF-8 without
 * NUL and at most `max` bytes ("<field> is too long").
 *
 * Each returns DEC_PRESENT (1), DEC_MISSING (0) or DEC_WRONG (-1); on
 * DEC_WRONG err receives the message.  Returned pointers borrow from obj.
 */
#ifndef GP_API_DECODE_H
#define GP_API_DECODE_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

enum { DEC_WRONG = -1, DEC_MISSING = 0, DEC_PRESENT = 1 };

/* Default cap for string fields (bytes). */
#define DEC_STR_MAX 2048

int dec_str(const cJSON *obj, const char *field, size_t max, const char **out, char *err,
            size_t errlen);
int dec_num(const cJSON *obj, const char *field, double *out, char *err, size_t errlen);
int dec_bool(const cJSON *obj, const char *field, bool *out, char *err, size_t errlen);
/* Objects/arrays: present even when empty ({} and [] are truthy in JS). */
int dec_obj(const cJSON *obj, const char *field, const cJSON **out, char *err, size_t errlen);
int dec_arr(const cJSON *obj, const char *field, const cJSON **out, char *err, size_t errlen);
/* Array of strings (each valid, <= max bytes), at most max_items items. */
int dec_str_arr(const cJSON *obj, const char *field, size_t max_items, size_t max,
                const cJSON **out, char *err, size_t errlen);
/* True when s[0..n) is valid UTF-8 without NUL bytes. */
bool dec_utf8_ok(const char *s, size_t n);
/* Parses a request body: must be a JSON object of valid UTF-8 (no NUL);
 * NULL otherwise.  Nesting deeper than 64 levels is refused. */
cJSON *dec_parse_body(const char *body, size_t len);

#endif
