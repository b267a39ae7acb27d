/*
 * test_brand_decode.c - the POST /api/brands and /api/threats/resolve
 * body decoders: presence (JavaScript truthiness), types, sizes, ids and
 * the order in which errors are reported.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/brand_decode.h"
#include "util/err.h"

static char err[160];

/* Decodes a create body; returns the rc and leaves the message in err. */
static int create(const char *json, struct brand_create_req *out)
{
    cJSON *body = cJSON_Parse(json);
    int rc;

    err[0] = '\0';
    rc = brand_decode_create(body, out, err, sizeof err);
    cJSON_Delete(body);
    return rc;
}

static int resolve(const char *json, struct threat_resolve_req *out)
{
    cJSON *body = cJSON_Parse(json);
    int rc;

    err[0] = '\0';
    rc = brand_decode_resolve(body, out, err, sizeof err);
    cJSON_Delete(body);
    return rc;
}

static void test_create_ok(void **state)
{
    (void)state;
    cJSON *body = cJSON_Parse("{\"name\":\"Luxe\",\"domain\":\"luxe.com\",\"industry\":\"fashion\","
                              "\"logoUrl\":\"https://x/l.png\",\"extra\":1}");
    struct brand_create_req in;

    assert_int_equal(brand_decode_create(body, &in, err, sizeof err), 0);
    assert_string_equal(in.name, "Luxe");
    assert_string_equal(in.domain, "luxe.com");
    assert_string_equal(in.industry, "fashion");
    assert_string_equal(in.logo_url, "https://x/l.png");
    cJSON_Delete(body);

    /* Optional logoUrl: absent, null, "" and false all mean none. */
    const char *opt[] = {"", ",\"logoUrl\":null", ",\"logoUrl\":\"\"", ",\"logoUrl\":false",
                         ",\"logoUrl\":0"};
    for (size_t i = 0; i < sizeof opt / sizeof opt[0]; i++) {
        char json[256];
        snprintf(json, sizeof json, "{\"name\":\"n\",\"domain\":\"d\",\"industry\":\"i\"%s}",
                 opt[i]);
        body = cJSON_Parse(json);
        in.logo_url = "stale";
        assert_int_equal(brand_decode_create(body, &in, err, sizeof err), 0);
        assert_null(in.logo_url);
        cJSON_Delete(body);
    }
}

static void test_create_missing(void **state)
{
    (void)state;
    struct brand_create_req in;
    const char *bodies[] = {
        "{}",
        "{\"domain\":\"d\",\"industry\":\"i\"}",
        "{\"name\":\"n\",\"industry\":\"i\"}",
        "{\"name\":\"n\",\"domain\":\"d\"}",
        "{\"name\":\"\",\"domain\":\"d\",\"industry\":\"i\"}",
        "{\"name\":null,\"domain\":\"d\",\"industry\":\"i\"}",
        "{\"name\":\"n\",\"domain\":false,\"industry\":\"i\"}",
        "{\"name\":\"n\",\"domain\":\"d\",\"industry\":0}",
    };
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
        assert_int_equal(create(bodies[i], &in), ERR_INVALID);
        assert_string_equal(err, "name, domain, and industry are required");
    }
}

static void test_create_types_first(void **state)
{
    (void)state;
    struct brand_create_req in;

    /* A wrong type is reported even when another field is missing. */
    assert_int_equal(create("{\"name\":5}", &in), ERR_INVALID);
    assert_string_equal(err, "name must be a string");
    assert_int_equal(create("{\"name\":\"n\",\"domain\":{\"a\":1},\"industry\":\"i\"}", &in),
                     ERR_INVALID);
    assert_string_equal(err, "domain must be a string");
    assert_int_equal(create("{\"name\":\"n\",\"domain\":\"d\",\"industry\":[\"x\"]}", &in),
                     ERR_INVALID);
    assert_string_equal(err, "industry must be a string");
    assert_int_equal(
        create("{\"name\":\"n\",\"domain\":\"d\",\"industry\":\"i\",\"logoUrl\":true}", &in),
        ERR_INVALID);
    assert_string_equal(err, "logoUrl must be a string");
    /* Fields are checked in API order. */
    assert_int_equal(create("{\"industry\":1,\"name\":2}", &in), ERR_INVALID);
    assert_string_equal(err, "name must be a string");
    /* Not an object. */
    assert_int_equal(brand_decode_create(NULL, &in, err, sizeof err), ERR_INVALID);
    assert_string_equal(err, "Invalid JSON body");
    assert_int_equal(create("[1]", &in), ERR_INVALID);
    assert_string_equal(err, "Invalid JSON body");
}

static void test_create_sizes(void **state)
{
    (void)state;
    struct brand_create_req in;
    char *json = malloc(8192), *big = malloc(4096);

    memset(big, 'a', BRAND_NAME_MAX);
    big[BRAND_NAME_MAX] = '\0';
    snprintf(json, 8192, "{\"name\":\"%s\",\"domain\":\"d\",\"industry\":\"i\"}", big);
    cJSON *body = cJSON_Parse(json);
    assert_int_equal(brand_decode_create(body, &in, err, sizeof err), 0);
    assert_int_equal(strlen(in.name), BRAND_NAME_MAX);
    cJSON_Delete(body);
    big[BRAND_NAME_MAX] = 'a';
    big[BRAND_NAME_MAX + 1] = '\0';
    snprintf(json, 8192, "{\"name\":\"%s\",\"domain\":\"d\",\"industry\":\"i\"}", big);
    assert_int_equal(create(json, &in), ERR_INVALID);
    assert_string_equal(err, "name is too long");

    memset(big, 'u', BRAND_LOGO_URL_MAX + 1);
    big[BRAND_LOGO_URL_MAX + 1] = '\0';
    snprintf(json, 8192, "{\"name\":\"n\",\"domain\":\"d\",\"industry\":\"i\",\"logoUrl\":\"%s\"}",
             big);
    assert_int_equal(create(json, &in), ERR_INVALID);
    assert_string_equal(err, "logoUrl is too long");
    free(json);
    free(big);
}

static void test_resolve(void **state)
{
    (void)state;
    struct threat_resolve_req in;
    cJSON *body = cJSON_Parse("{\"brandId\":\"5019622c-9860-4b83-a5c6-adb82ebd0412\","
                              "\"alertId\":\"0123456789abcdef0123456789abcdef\"}");

    assert_int_equal(brand_decode_resolve(body, &in, err, sizeof err), 0);
    assert_string_equal(in.brand_id, "5019622c-9860-4b83-a5c6-adb82ebd0412");
    assert_string_equal(in.alert_id, "0123456789abcdef0123456789abcdef");
    cJSON_Delete(body);

    assert_int_equal(resolve("{\"brandId\":\"b\"}", &in), ERR_INVALID);
    assert_string_equal(err, "brandId and alertId are required");
    assert_int_equal(resolve("{\"alertId\":\"a\",\"brandId\":\"\"}", &in), ERR_INVALID);
    assert_string_equal(err, "brandId and alertId are required");
    assert_int_equal(resolve("{\"alertId\":7}", &in), ERR_INVALID);
    assert_string_equal(err, "alertId must be a string");
    assert_int_equal(resolve("{\"brandId\":[],\"alertId\":\"a\"}", &in), ERR_INVALID);
    assert_string_equal(err, "brandId must be a string");
    /* Ids that could alias other keys. */
    assert_int_equal(resolve("{\"brandId\":\"b#2026-01\",\"alertId\":\"a\"}", &in), ERR_INVALID);
    assert_string_equal(err, "Invalid brandId");
    assert_int_equal(resolve("{\"brandId\":\"b\\u0001\",\"alertId\":\"a\"}", &in), ERR_INVALID);
    assert_string_equal(err, "Invalid brandId");
    assert_int_equal(
        resolve("{\"brandId\":\"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
                "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
                "bbbbbbbbbbbbbbbb\",\"alertId\":\"a\"}",
                &in),
        ERR_INVALID);
    assert_string_equal(err, "brandId is too long");
    assert_int_equal(brand_decode_resolve(NULL, &in, err, sizeof err), ERR_INVALID);
    assert_string_equal(err, "Invalid JSON body");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_ok),
        cmocka_unit_test(test_create_missing),
        cmocka_unit_test(test_create_types_first),
        cmocka_unit_test(test_create_sizes),
        cmocka_unit_test(test_resolve),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
