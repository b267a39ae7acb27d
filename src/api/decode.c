/*
 * decode.c - body decoding helpers (see decode.h).
 *
 * dec_parse_body() screens the raw text before cJSON sees it: it must be
 * valid UTF-8 without NUL bytes, must not nest deeper than DEC_DEPTH_MAX,
 * and must not hide a NUL behind a "\u0000" escape (cJSON would cut the
 * string there, so the stored value would differ from what was sent).
 * The dec_* field getters implement API.md §1.2's JavaScript-truthiness
 * presence rule plus the Reimpl type checks.
 */
#include "api/decode.h"

#include <math.h>
#include <stdio.h>
#include "util/utf8.h"
#include <string.h>

#define DEC_DEPTH_MAX 64

bool dec_utf8_ok(const char *s, size_t n)
{
    return utf8_valid(s, n, false);
}

/* Depth and "\u0000" screening over JSON text that is already known to be
 * valid UTF-8 without raw NULs.  Syntax errors are left to cJSON. */
static bool dec_screen(const char *s, size_t n)
{
    int depth = 0;
    bool in_str = false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (in_str) {
            if (c == '\\') {
                if (i + 1 < n && s[i + 1] == 'u' && n - i >= 6 && s[i + 2] == '0' &&
                    s[i + 3] == '0' && s[i + 4] == '0' && s[i + 5] == '0')
                    return false;
                i++; /* skip the escaped character */
            } else if (c == '"') {
                in_str = false;
            }
            continue;
        }
        if (c == '"') {
            in_str = true;
        } else if (c == '{' || c == '[') {
            if (++depth > DEC_DEPTH_MAX)
                return false;
        } else if (c == '}' || c == ']') {
            depth--;
        }
    }
    return true;
}

cJSON *dec_parse_body(const char *body, size_t len)
{
    if (!body || len == 0)
        return NULL;
    if (!dec_utf8_ok(body, len) || !dec_screen(body, len))
        return NULL;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(body, len, &end, false);
    if (!root)
        return NULL;
    /* only whitespace may follow the value */
    size_t off = end ? (size_t)(end - body) : len;
    for (; off < len; off++) {
        char c = body[off];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
            cJSON_Delete(root);
            return NULL;
        }
    }
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

/* JavaScript truthiness of a JSON value. */
static bool dec_truthy(const cJSON *v)
{
    if (!v || cJSON_IsNull(v) || cJSON_IsFalse(v))
        return false;
    if (cJSON_IsNumber(v))
        return v->valuedouble != 0 && !isnan(v->valuedouble);
    if (cJSON_IsString(v))
        return v->valuestring && v->valuestring[0];
    return !cJSON_IsInvalid(v);
}

static const cJSON *dec_field(const cJSON *obj, const char *field)
{
    if (!obj || !field || !cJSON_IsObject(obj))
        return NULL;
    return cJSON_GetObjectItemCaseSensitive(obj, field);
}

static int dec_wrong(const char *field, const char *what, char *err, size_t errlen)
{
    if (err && errlen)
        snprintf(err, errlen, "%s %s", field, what);
    return DEC_WRONG;
}

/* Checks one string value: valid UTF-8, no NUL, at most max bytes. */
static int dec_check_str(const char *field, const char *s, size_t max, char *err, size_t errlen)
{
    size_t n = strlen(s);
    if (!dec_utf8_ok(s, n))
        return dec_wrong(field, "must be valid UTF-8", err, errlen);
    if (n > max)
        return dec_wrong(field, "is too long", err, errlen);
    return DEC_PRESENT;
}

int dec_str(const cJSON *obj, const char *field, size_t max, const char **out, char *err,
            size_t errlen)
{
    const cJSON *v = dec_field(obj, field);
    if (out)
        *out = NULL;
    if (!dec_truthy(v))
        return DEC_MISSING;
    if (!cJSON_IsString(v))
        return dec_wrong(field, "must be a string", err, errlen);
    int rc = dec_check_str(field, v->valuestring, max, err, errlen);
    if (rc == DEC_PRESENT && out)
        *out = v->valuestring;
    return rc;
}

int dec_num(const cJSON *obj, const char *field, double *out, char *err, size_t errlen)
{
    const cJSON *v = dec_field(obj, field);
    if (!dec_truthy(v))
        return DEC_MISSING;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return dec_wrong(field, "must be a number", err, errlen);
    if (out)
        *out = v->valuedouble;
    return DEC_PRESENT;
}

int dec_bool(const cJSON *obj, const char *field, bool *out, char *err, size_t errlen)
{
    const cJSON *v = dec_field(obj, field);
    if (!dec_truthy(v))
        return DEC_MISSING;
    if (!cJSON_IsTrue(v))
        return dec_wrong(field, "must be a boolean", err, errlen);
    if (out)
        *out = true;
    return DEC_PRESENT;
}

int dec_obj(const cJSON *obj, const char *field, const cJSON **out, char *err, size_t errlen)
{
    const cJSON *v = dec_field(obj, field);
    if (out)
        *out = NULL;
    if (!dec_truthy(v))
        return DEC_MISSING;
    if (!cJSON_IsObject(v))
        return dec_wrong(field, "must be an object", err, errlen);
    if (out)
        *out = v;
    return DEC_PRESENT;
}

int dec_arr(const cJSON *obj, const char *field, const cJSON **out, char *err, size_t errlen)
{
    const cJSON *v = dec_field(obj, field);
    if (out)
        *out = NULL;
    if (!dec_truthy(v))
        return DEC_MISSING;
    if (!cJSON_IsArray(v))
        return dec_wrong(field, "must be an array", err, errlen);
    if (out)
        *out = v;
    return DEC_PRESENT;
}

int dec_str_arr(const cJSON *obj, const char *field, size_t max_items, size_t max,
                const cJSON **out, char *err, size_t errlen)
{
    const cJSON *arr = NULL;
    if (out)
        *out = NULL;
    int rc = dec_arr(obj, field, &arr, NULL, 0);
    if (rc == DEC_MISSING)
        return DEC_MISSING;
    if (rc == DEC_WRONG)
        return dec_wrong(field, "must be an array of strings", err, errlen);
    size_t n = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, arr)
    {
        if (++n > max_items)
            return dec_wrong(field, "has too many items", err, errlen);
        if (!cJSON_IsString(it) || !it->valuestring)
            return dec_wrong(field, "must be an array of strings", err, errlen);
        rc = dec_check_str(field, it->valuestring, max, err, errlen);
        if (rc != DEC_PRESENT)
            return rc;
    }
    if (out)
        *out = arr;
    return DEC_PRESENT;
}
