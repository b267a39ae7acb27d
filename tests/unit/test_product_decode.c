/*
 * test_product_decode.c - the product body decoders: API.md error texts
 * and their order, JS-truthiness, wrong types, event-type whitelist,
 * coordinates, batch/history bounds, size/depth limits, id validation.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "api/decode.h"
#include "api/product_decode.h"
#include "util/err.h"

static char err[256];

static cJSON *J(const char *text)
{
    cJSON *o = dec_parse_body(text, strlen(text));
    assert_non_null(o);
    return o;
}

/* Runs a decoder expected to fail and checks its message. */
#define EXPECT_ERR(fn, type, text, msg)                                                            \
    do {                                                                                           \
        cJSON *b_ = J(text);                                                                       \
        type *o_ = calloc(1, sizeof(type));                                                        \
        err[0] = '\0';                                                                             \
        assert_int_equal(fn(b_, o_, err, sizeof err), ERR_INVALID);                                \
        assert_string_equal(err, msg);                                                             \
        free(o_);                                                                                  \
        cJSON_Delete(b_);                                                                          \
    } while (0)

static void test_id_ok(void **state)
{
    char long_id[PD_ID_MAX + 2];
    (void)state;
    assert_true(pd_id_ok("e084595c97320cfcc85309943f345760"));
    assert_true(pd_id_ok("nonexistent-product-id-xyz"));
    assert_false(pd_id_ok(""));
    assert_false(pd_id_ok(NULL));
    assert_false(pd_id_ok("a#b"));
    assert_false(pd_id_ok("a\nb"));
    assert_false(pd_id_ok("a\x7f"));
    memset(long_id, 'a', sizeof long_id - 1);
    long_id[sizeof long_id - 1] = '\0';
    assert_false(pd_id_ok(long_id));
    long_id[PD_ID_MAX] = '\0';
    assert_true(pd_id_ok(long_id));
}

static void test_register(void **state)
{
    struct pd_register o;
    (void)state;
    cJSON *b = J("{\"brandId\":\"b1\",\"name\":\"Watch\",\"sku\":\"\",\"category\":\"watches\","
                 "\"metadata\":{\"z\":1,\"a\":[true]},\"manufacturingLocation\":\"Geneva\"}");
    assert_int_equal(pd_register(b, &o, err, sizeof err), 0);
    assert_string_equal(o.brand_id, "b1");
    assert_string_equal(o.name, "Watch");
    assert_null(o.sku); /* "" counts as absent */
    assert_string_equal(o.category, "watches");
    assert_null(o.description);
    assert_string_equal(o.location, "Geneva");
    assert_non_null(o.metadata);
    assert_string_equal(o.metadata->child->string, "z"); /* order kept */
    cJSON_Delete(b);

    EXPECT_ERR(pd_register, struct pd_register, "{}", "brandId and name are required");
    EXPECT_ERR(pd_register, struct pd_register, "{\"brandId\":\"b\",\"name\":\"\"}",
               "brandId and name are required");
    EXPECT_ERR(pd_register, struct pd_register, "{\"brandId\":\"b\",\"name\":null}",
               "brandId and name are required");
    EXPECT_ERR(pd_register, struct pd_register, "{\"brandId\":\"b\",\"name\":false}",
               "brandId and name are required");
    EXPECT_ERR(pd_register, struct pd_register, "{\"brandId\":\"b\",\"name\":42}",
               "name must be a string");
    EXPECT_ERR(pd_register, struct pd_register, "{\"brandId\":[1],\"name\":\"x\"}",
               "brandId must be a string");
    EXPECT_ERR(pd_register, struct pd_register,
               "{\"brandId\":\"b\",\"name\":\"x\",\"metadata\":\"str\"}",
               "metadata must be an object");
    EXPECT_ERR(pd_register, struct pd_register,
               "{\"brandId\":\"b\",\"name\":\"x\",\"metadata\":[1]}", "metadata must be an object");
    EXPECT_ERR(pd_register, struct pd_register,
               "{\"brandId\":\"b\",\"name\":\"x\",\"metadata\":{\"a\":[1,{\"n\":-1e999}]}}",
               "metadata holds a number out of range");
    EXPECT_ERR(pd_register, struct pd_register, "{\"brandId\":\"b\",\"name\":\"x\",\"sku\":1e999}",
               "sku must be a string");
}

static void test_register_bounds(void **state)
{
    struct pd_register o;
    (void)state;
    /* metadata nested deeper than PD_OBJ_DEPTH */
    char deep[256] = "{\"brandId\":\"b\",\"name\":\"x\",\"metadata\":";
    for (int i = 0; i < PD_OBJ_DEPTH + 1; i++)
        strcat(deep, "{\"a\":");
    strcat(deep, "1");
    for (int i = 0; i < PD_OBJ_DEPTH + 1; i++)
        strcat(deep, "}");
    strcat(deep, "}");
    EXPECT_ERR(pd_register, struct pd_register, deep, "metadata is too deeply nested");

    /* metadata larger than PD_OBJ_MAX */
    size_t n = PD_OBJ_MAX + 200;
    char *big = malloc(n + 100);
    strcpy(big, "{\"brandId\":\"b\",\"name\":\"x\",\"metadata\":{\"k\":\"");
    size_t l = strlen(big);
    memset(big + l, 'a', n);
    strcpy(big + l + n, "\"}}");
    EXPECT_ERR(pd_register, struct pd_register, big, "metadata is too large");

    /* a name longer than DEC_STR_MAX */
    strcpy(big, "{\"brandId\":\"b\",\"name\":\"");
    l = strlen(big);
    memset(big + l, 'n', DEC_STR_MAX + 1);
    strcpy(big + l + DEC_STR_MAX + 1, "\"}");
    cJSON *b = J(big);
    assert_int_equal(pd_register(b, &o, err, sizeof err), ERR_INVALID);
    assert_non_null(strstr(err, "name"));
    cJSON_Delete(b);
    free(big);
}

static void test_batch(void **state)
{
    struct pd_batch *o = calloc(1, sizeof *o);
    (void)state;
    cJSON *b = J("{\"brandId\":\"b\",\"products\":[{\"name\":\"A\",\"sku\":\"1\"},{\"sku\":\"2\"},"
                 "{\"name\":\"\",\"metadata\":{}}]}");
    assert_int_equal(pd_batch(b, o, err, sizeof err), 0);
    assert_int_equal(o->n, 3);
    assert_string_equal(o->items[0].name, "A");
    assert_null(o->items[1].name);
    assert_null(o->items[2].name);
    assert_non_null(o->items[2].metadata);
    cJSON_Delete(b);
    free(o);

    const char *req = "brandId and products array are required";
    EXPECT_ERR(pd_batch, struct pd_batch, "{\"brandId\":\"b\"}", req);
    EXPECT_ERR(pd_batch, struct pd_batch, "{\"brandId\":\"b\",\"products\":[]}", req);
    EXPECT_ERR(pd_batch, struct pd_batch, "{\"brandId\":\"b\",\"products\":{}}", req);
    EXPECT_ERR(pd_batch, struct pd_batch, "{\"products\":[{\"name\":\"a\"}]}", req);
    EXPECT_ERR(pd_batch, struct pd_batch, "{\"brandId\":\"b\",\"products\":[1]}",
               "products must be an array of objects");
    EXPECT_ERR(pd_batch, struct pd_batch, "{\"brandId\":\"b\",\"products\":[{\"name\":5}]}",
               "products[0]: name must be a string");

    char many[2048] = "{\"brandId\":\"b\",\"products\":[";
    for (int i = 0; i < PD_BATCH_MAX + 1; i++)
        strcat(many, i ? ",{}" : "{}");
    strcat(many, "]}");
    EXPECT_ERR(pd_batch, struct pd_batch, many, "Maximum 50 products per batch");
}

static void test_event(void **state)
{
    struct pd_event o;
    (void)state;
    cJSON *b = J("{\"productId\":\"p\",\"type\":\"shipped\",\"actor\":\"DHL\",\"location\":\"X\","
                 "\"coordinates\":{\"lat\":0,\"lng\":-122.5},\"data\":{\"k\":\"v\"}}");
    assert_int_equal(pd_event(b, &o, err, sizeof err), 0);
    assert_true(o.has_coordinates);
    assert_true(o.lat == 0);
    assert_true(o.lng == -122.5);
    assert_non_null(o.data);
    cJSON_Delete(b);

    const char *req = "productId, type, and actor are required";
    EXPECT_ERR(pd_event, struct pd_event, "{\"productId\":\"p\",\"type\":\"shipped\"}", req);
    EXPECT_ERR(pd_event, struct pd_event, "{\"productId\":\"p\",\"actor\":\"a\",\"type\":0}", req);
    EXPECT_ERR(pd_event, struct pd_event,
               "{\"productId\":\"p\",\"type\":\"teleported\",\"actor\":\"a\"}",
               "Invalid event type");
    EXPECT_ERR(pd_event, struct pd_event,
               "{\"productId\":\"p\",\"type\":\"shipped\",\"actor\":\"a\",\"data\":[1]}",
               "data must be an object");
    EXPECT_ERR(pd_event, struct pd_event,
               "{\"productId\":\"p\",\"type\":\"shipped\",\"actor\":\"a\",\"data\":{\"x\":1e999}}",
               "data holds a number out of range");
    EXPECT_ERR(pd_event, struct pd_event,
               "{\"productId\":\"p\",\"type\":\"shipped\",\"actor\":\"a\",\"coordinates\":\"1,2\"}",
               "coordinates must be an object");
    const char *cmsg = "coordinates must be {lat:number,lng:number} within -90..90 and -180..180";
    EXPECT_ERR(pd_event, struct pd_event,
               "{\"productId\":\"p\",\"type\":\"shipped\",\"actor\":\"a\",\"coordinates\":{\"lat\":"
               "\"1\",\"lng\":2}}",
               cmsg);
    EXPECT_ERR(pd_event, struct pd_event,
               "{\"productId\":\"p\",\"type\":\"shipped\",\"actor\":\"a\",\"coordinates\":{\"lat\":"
               "91,\"lng\":2}}",
               cmsg);
    EXPECT_ERR(pd_event, struct pd_event,
               "{\"productId\":\"p\",\"type\":\"shipped\",\"actor\":\"a\",\"coordinates\":{\"lat\":"
               "1e999,\"lng\":2}}",
               cmsg);
    EXPECT_ERR(pd_event, struct pd_event,
               "{\"productId\":\"p\",\"type\":\"shipped\",\"actor\":\"a\",\"coordinates\":{}}",
               cmsg);
}

static void test_history(void **state)
{
    struct pd_history o;
    (void)state;
    cJSON *b = J("{\"productIds\":[\"a\",\"b\"],\"type\":\"inspected\",\"actor\":\"QA\"}");
    assert_int_equal(pd_history(b, &o, err, sizeof err), 0);
    assert_int_equal(o.n, 2);
    assert_string_equal(o.product_ids[1], "b");
    assert_null(o.location);
    cJSON_Delete(b);

    EXPECT_ERR(pd_history, struct pd_history, "{\"type\":\"sold\",\"actor\":\"a\"}",
               "productIds array required");
    EXPECT_ERR(pd_history, struct pd_history,
               "{\"productIds\":[],\"type\":\"sold\",\"actor\":\"a\"}",
               "productIds array required");
    EXPECT_ERR(pd_history, struct pd_history, "{\"productIds\":[\"a\"],\"actor\":\"a\"}",
               "type and actor required");
    EXPECT_ERR(pd_history, struct pd_history,
               "{\"productIds\":[\"a\",7],\"type\":\"sold\",\"actor\":\"a\"}",
               "productIds must be an array of strings");
    EXPECT_ERR(pd_history, struct pd_history,
               "{\"productIds\":[\"a\"],\"type\":\"bogus\",\"actor\":\"a\"}", "Invalid event type");
    char many[2048] = "{\"type\":\"sold\",\"actor\":\"a\",\"productIds\":[";
    for (int i = 0; i < PD_BATCH_MAX + 1; i++)
        strcat(many, i ? ",\"x\"" : "\"x\"");
    strcat(many, "]}");
    EXPECT_ERR(pd_history, struct pd_history, many, "Maximum 50 products per batch");
}

static void test_transfer_recall(void **state)
{
    struct pd_transfer t;
    struct pd_recall rc;
    (void)state;
    cJSON *b = J("{\"productId\":\"p\",\"newOwner\":\"Bob\"}");
    assert_int_equal(pd_transfer(b, &t, err, sizeof err), 0);
    assert_null(t.reason);
    cJSON_Delete(b);
    EXPECT_ERR(pd_transfer, struct pd_transfer, "{\"productId\":\"p\"}",
               "productId and newOwner are required");
    EXPECT_ERR(pd_transfer, struct pd_transfer,
               "{\"productId\":\"p\",\"newOwner\":\"B\",\"reason\":{}}", "reason must be a string");

    b = J("{\"productId\":\"p\",\"reason\":\"defect\",\"issuedBy\":\"QA\"}");
    assert_int_equal(pd_recall(b, &rc, err, sizeof err), 0);
    assert_string_equal(rc.issued_by, "QA");
    cJSON_Delete(b);
    EXPECT_ERR(pd_recall, struct pd_recall, "{\"productId\":\"p\",\"reason\":0}",
               "productId and reason are required");
}

static void test_claim_dispute(void **state)
{
    struct pd_claim c;
    struct pd_dispute d;
    (void)state;
    cJSON *b = J("{\"productId\":\"p\",\"email\":\"a@b.c\"}");
    assert_int_equal(pd_claim(b, &c, err, sizeof err), 0);
    assert_null(c.consumer_name);
    assert_string_equal(c.email, "a@b.c");
    cJSON_Delete(b);
    EXPECT_ERR(pd_claim, struct pd_claim, "{\"consumerName\":\"x\"}", "productId required");
    EXPECT_ERR(pd_claim, struct pd_claim, "{\"productId\":\"p\",\"consumerName\":[\"x\"]}",
               "consumerName must be a string");

    b = J("{\"productId\":\"p\",\"orderNumber\":\"A-1\",\"notes\":\"n\"}");
    assert_int_equal(pd_dispute(b, &d, err, sizeof err), 0);
    assert_string_equal(d.order_number, "A-1");
    assert_string_equal(d.notes, "n");
    cJSON_Delete(b);
    EXPECT_ERR(pd_dispute, struct pd_dispute, "{\"productId\":true}", "productId must be a string");
    EXPECT_ERR(pd_dispute, struct pd_dispute, "{\"productId\":\"\"}", "productId required");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_id_ok),           cmocka_unit_test(test_register),
        cmocka_unit_test(test_register_bounds), cmocka_unit_test(test_batch),
        cmocka_unit_test(test_event),           cmocka_unit_test(test_history),
        cmocka_unit_test(test_transfer_recall), cmocka_unit_test(test_claim_dispute),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
