/*
 * test_ddb_marshal.c - JSON <-> AttributeValue round trips, number text,
 * the canonical companions of metadata/data, and malformed replies.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/ddb_marshal.h"

static char *print(const cJSON *v)
{
    char *s = cJSON_PrintUnformatted(v);
    assert_non_null(s);
    return s;
}

static void t_values(void **state)
{
    (void)state;
    cJSON *v =
        cJSON_Parse("{\"s\":\"x\",\"e\":\"\",\"n\":1.5,\"i\":42,\"big\":1e21,\"neg\":-0.000001,"
                    "\"t\":true,\"f\":false,\"z\":null,\"l\":[1,\"a\",[],{}],"
                    "\"m\":{\"k\":{\"deep\":[null]}}}");
    cJSON *av = ddb_marshal_value(v);
    char *text = print(av);
    assert_string_equal(
        text,
        "{\"M\":{\"s\":{\"S\":\"x\"},\"e\":{\"S\":\"\"},\"n\":{\"N\":\"1.5\"},\"i\":{\"N\":\"42\"},"
        "\"big\":{\"N\":\"1e+21\"},\"neg\":{\"N\":\"-0.000001\"},\"t\":{\"BOOL\":true},"
        "\"f\":{\"BOOL\":false},\"z\":{\"NULL\":true},\"l\":{\"L\":[{\"N\":\"1\"},{\"S\":\"a\"},"
        "{\"L\":[]},{\"M\":{}}]},\"m\":{\"M\":{\"k\":{\"M\":{\"deep\":{\"L\":[{\"NULL\":true}]}}}}}"
        "}}");
    cJSON *back = ddb_unmarshal_value(av);
    assert_true(cJSON_Compare(v, back, true));
    free(text);
    cJSON_Delete(back);
    cJSON_Delete(av);
    cJSON_Delete(v);
}

static void t_sets_and_binary(void **state)
{
    (void)state;
    cJSON *av = cJSON_Parse("{\"M\":{\"ss\":{\"SS\":[\"a\",\"b\"]},\"ns\":{\"NS\":[\"1\",\"2.5\"]},"
                            "\"b\":{\"B\":\"AAE=\"}}}");
    cJSON *v = ddb_unmarshal_value(av);
    char *text = print(v);
    assert_string_equal(text, "{\"ss\":[\"a\",\"b\"],\"ns\":[1,2.5],\"b\":\"AAE=\"}");
    free(text);
    cJSON_Delete(v);
    cJSON_Delete(av);
}

static void t_malformed(void **state)
{
    (void)state;
    const char *bad[] = {
        "{}",                        /* no type */
        "{\"S\":\"a\",\"N\":\"1\"}", /* two types */
        "{\"N\":\"abc\"}",           /* not a number */
        "{\"N\":\"\"}",
        "{\"N\":\"1e999\"}", /* not finite */
        "{\"S\":1}",
        "{\"BOOL\":\"true\"}",
        "{\"L\":{}}",
        "{\"M\":[]}",
        "{\"X\":\"?\"}",
        "{\"L\":[{\"N\":\"x\"}]}",
        "{\"NS\":[\"1\",\"q\"]}",
        "[]",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cJSON *av = cJSON_Parse(bad[i]);
        cJSON *v = ddb_unmarshal_value(av);
        if (v)
            print_error("accepted %s\n", bad[i]);
        assert_null(v);
        cJSON_Delete(av);
    }
    /* Nesting past DDB_DEPTH_MAX is refused. */
    char *deep = malloc(20 * (DDB_DEPTH_MAX + 10) + 32), *p = deep;
    for (int i = 0; i < DDB_DEPTH_MAX + 5; i++)
        p += sprintf(p, "{\"L\":[");
    p += sprintf(p, "{\"NULL\":true}");
    for (int i = 0; i < DDB_DEPTH_MAX + 5; i++)
        p += sprintf(p, "]}");
    cJSON *av = cJSON_Parse(deep);
    assert_non_null(av);
    assert_null(ddb_unmarshal_value(av));
    cJSON_Delete(av);
    free(deep);
    /* Non-finite numbers cannot be marshalled. */
    cJSON *inf = cJSON_CreateNumber(1.0 / 0.0);
    assert_null(ddb_marshal_value(inf));
    cJSON_Delete(inf);
}

static void t_item_companions(void **state)
{
    (void)state;
    cJSON *item = cJSON_Parse("{\"PK\":\"PRODUCT#1\",\"SK\":\"META\",\"metadata\":{\"z\":1,\"a\":"
                              "{\"y\":2,\"b\":3}},\"data\":{},\"name\":\"n\"}");
    cJSON *m = ddb_marshal_item(item);
    const cJSON *mc = cJSON_GetObjectItemCaseSensitive(m, "metadataCanonical");
    assert_non_null(mc);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(mc, "S")->valuestring,
                        "{\"z\":1,\"a\":{\"y\":2,\"b\":3}}");
    assert_non_null(cJSON_GetObjectItemCaseSensitive(m, "dataCanonical"));
    assert_null(cJSON_GetObjectItemCaseSensitive(m, "nameCanonical"));
    /* A map read back in another key order gets its order from the
     * companion, and the companion disappears. */
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(m, "metadata");
    cJSON *inner = cJSON_GetObjectItemCaseSensitive(meta, "M");
    cJSON *z = cJSON_DetachItemFromObjectCaseSensitive(inner, "z");
    cJSON_AddItemToObject(inner, "z", z); /* now a, z */
    cJSON *back = ddb_unmarshal_item(m);
    char *text = print(back);
    assert_string_equal(
        text, "{\"PK\":\"PRODUCT#1\",\"SK\":\"META\",\"metadata\":{\"z\":1,\"a\":{\"y\":2,"
              "\"b\":3}},\"data\":{},\"name\":\"n\"}");
    free(text);
    cJSON_Delete(back);
    /* Another writer changed the map alone: the map wins, the stale
     * companion is dropped. */
    cJSON_ReplaceItemInObjectCaseSensitive(inner, "z", cJSON_Parse("{\"N\":\"7\"}"));
    back = ddb_unmarshal_item(m);
    assert_int_equal(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(back, "metadata"), "z")
            ->valuedouble,
        7);
    assert_null(cJSON_GetObjectItemCaseSensitive(back, "metadataCanonical"));
    cJSON_Delete(back);
    cJSON_Delete(m);
    /* A caller-supplied companion is replaced by the computed one. */
    cJSON_AddStringToObject(item, "metadataCanonical", "{\"stale\":true}");
    m = ddb_marshal_item(item);
    mc = cJSON_GetObjectItemCaseSensitive(m, "metadataCanonical");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(mc, "S")->valuestring,
                        "{\"z\":1,\"a\":{\"y\":2,\"b\":3}}");
    cJSON_Delete(m);
    /* No companion for a non-object metadata. */
    cJSON_ReplaceItemInObjectCaseSensitive(item, "metadata", cJSON_CreateNull());
    cJSON_DeleteItemFromObjectCaseSensitive(item, "metadataCanonical");
    m = ddb_marshal_item(item);
    assert_null(cJSON_GetObjectItemCaseSensitive(m, "metadataCanonical"));
    cJSON_Delete(m);
    cJSON_Delete(item);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_values),
        cmocka_unit_test(t_sets_and_binary),
        cmocka_unit_test(t_malformed),
        cmocka_unit_test(t_item_companions),
    };
    return cmocka_run_group_tests_name("ddb_marshal", tests, NULL, NULL);
}
