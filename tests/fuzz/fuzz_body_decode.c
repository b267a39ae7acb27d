/*
 * fuzz_body_decode.c - raw bytes through dec_parse_body() and every dec_*
 * field getter (api/decode.h), plus the query-string decoder.  Checks the
 * invariants the handlers rely on: an accepted body is a JSON object; a
 * string reported PRESENT is valid UTF-8 within its cap; a WRONG result
 * always comes with a message.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_req.h"
#include "api/decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const fields[] = {"name", "brandId",    "metadata", "products", "count",
                                     "flag", "productIds", "a",        ""};

static void check_field(const cJSON *obj, const char *f)
{
    char err[160];
    const char *s;
    const cJSON *v;
    double d;
    bool b;
    int rc;

    err[0] = '\0';
    rc = dec_str(obj, f, 16, &s, err, sizeof err);
    if (rc == DEC_PRESENT && (!s || strlen(s) > 16 || !dec_utf8_ok(s, strlen(s))))
        abort();
    if (rc == DEC_WRONG && !err[0])
        abort();
    err[0] = '\0';
    rc = dec_num(obj, f, &d, err, sizeof err);
    if (rc == DEC_WRONG && !err[0])
        abort();
    rc = dec_bool(obj, f, &b, err, sizeof err);
    if (rc == DEC_PRESENT && !b)
        abort();
    rc = dec_obj(obj, f, &v, err, sizeof err);
    if (rc == DEC_PRESENT && !cJSON_IsObject(v))
        abort();
    rc = dec_arr(obj, f, &v, err, sizeof err);
    if (rc == DEC_PRESENT && !cJSON_IsArray(v))
        abort();
    rc = dec_str_arr(obj, f, 8, 16, &v, err, sizeof err);
    if (rc == DEC_PRESENT) {
        const cJSON *it;
        int n = 0;
        cJSON_ArrayForEach(it, v)
        {
            if (!cJSON_IsString(it) || strlen(it->valuestring) > 16)
                abort();
            n++;
        }
        if (n > 8)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cJSON *body = dec_parse_body((const char *)data, size);
    if (body) {
        if (!cJSON_IsObject(body))
            abort();
        for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
            check_field(body, fields[i]);
        /* the first member's own name, whatever it is */
        if (body->child && body->child->string)
            check_field(body, body->child->string);
        /* nested objects go through the same getters */
        const cJSON *it;
        cJSON_ArrayForEach(it, body)
        {
            if (cJSON_IsObject(it))
                check_field(it, "name");
        }
        cJSON_Delete(body);
    }

    /* the same bytes as a query string (NUL-terminated copy) */
    if (size <= 8192) {
        char *q = malloc(size + 1);
        char out[API_QUERY_MAX + 1];
        if (!q)
            return 0;
        memcpy(q, data, size);
        q[size] = '\0';
        int rc = api_query_decode(q, "a", out, sizeof out);
        if (rc == 1 && !dec_utf8_ok(out, strlen(out)))
            abort();
        free(q);
    }
    return 0;
}
