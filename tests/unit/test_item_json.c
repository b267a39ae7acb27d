/*
 * test_item_json.c - item_json_parse must build exactly the tree cJSON
 * builds: same types, keys, values (valueint too), order and list links,
 * for canonical item bodies and for every odd input it hands to cJSON.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/canon.h"
#include "store/item_json.h"

/* Same shape as cJSON_Compare plus valueint and the prev links. */
static void assert_same(const cJSON *a, const cJSON *b)
{
    /* item_json interns common keys (cJSON_StringIsConst); cJSON does not. */
    assert_int_equal(a->type & ~cJSON_StringIsConst, b->type & ~cJSON_StringIsConst);
    if (a->string || b->string) {
        assert_non_null(a->string);
        assert_non_null(b->string);
        assert_string_equal(a->string, b->string);
    }
    if (cJSON_IsString(a))
        assert_string_equal(a->valuestring, b->valuestring);
    if (cJSON_IsNumber(a)) {
        assert_memory_equal(&a->valuedouble, &b->valuedouble, sizeof(double));
        assert_int_equal(a->valueint, b->valueint);
    }
    const cJSON *x = a->child, *y = b->child;
    if (x) {
        assert_non_null(y);
        /* cJSON keeps the last child in the first child's prev. */
        const cJSON *lx = x, *ly = y;
        while (lx->next)
            lx = lx->next;
        while (ly->next)
            ly = ly->next;
        assert_ptr_equal(x->prev, lx);
        assert_ptr_equal(y->prev, ly);
    }
    for (; x && y; x = x->next, y = y->next) {
        if (x != a->child)
            assert_ptr_equal(x->prev->next, x);
        assert_same(x, y);
    }
    assert_null(x);
    assert_null(y);
}

static void same_as_cjson(const char *text)
{
    cJSON *mine = item_json_parse(text, strlen(text));
    cJSON *ref = cJSON_ParseWithLength(text, strlen(text));
    if (!ref) {
        assert_null(mine);
        return;
    }
    assert_non_null(mine);
    assert_same(mine, ref);
    cJSON_Delete(mine);
    cJSON_Delete(ref);
}

static void t_canonical_items(void **state)
{
    (void)state;
    static const char *items[] = {
        "{\"PK\":\"PRODUCT#1\",\"SK\":\"META\",\"name\":\"Bag\",\"n\":12,\"ok\":true,"
        "\"no\":false,\"x\":null}",
        "{\"a\":[],\"b\":{},\"c\":[[],[{}],{\"d\":[1,2,3]}],\"e\":\"\"}",
        "{\"esc\":\"q\\\" b\\\\ s/ \\b\\f\\n\\r\\t \\u0001\\u001f\"}",
        "{\"u\":\"\\u00e9\\u4e2d\\ud83d\\ude00\",\"raw\":\"\xc3\xa9\xe4\xb8\xad\"}",
        "{\"n\":[0,-0,1,-1,123456789012345,-123456789012345,1234567890123456,"
        "9007199254740993,1e+21,1.5e-7,0.1,-2.5,2147483647,2147483648,-2147483649,1e308,"
        "5e-324,12.000,1E5,1e-5,3.14159265358979]}",
        "[1,\"two\",[3],{\"four\":4}]",
        "\"just a string\"",
        "42",
        "true",
        "null",
    };
    for (size_t i = 0; i < sizeof(items) / sizeof(items[0]); i++)
        same_as_cjson(items[i]);
}

static void t_odd_inputs(void **state)
{
    (void)state;
    /* Everything the fast path refuses goes to cJSON: same result. */
    static const char *odd[] = {
        "",
        "{",
        "}",
        "{\"a\":}",
        "{\"a\" : 1}",
        " {}",
        "{}x",
        "{} ",
        "[1,]",
        "[01]",
        "[1.]",
        "[.5]",
        "[-]",
        "[1e]",
        "[+1]",
        "tru",
        "nul",
        "\"abc",
        "\"\\x\"",
        "\"\\u12\"",
        "\"\\ud800\"",
        "\"\\udc00\"",
        "\"\\ud800\\u0041\"",
        "\"a\\u0000b\"",
        "\"tab\there\"",
        "[1 ,2]",
        "{\"a\":1,}",
        "{1:2}",
        "[\"\\/\"]",
        "[1e999]",
        "[-1e999]",
        "[123456789012345678901234567890]",
    };
    for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++)
        same_as_cjson(odd[i]);
    /* Length is honoured: no read past len. */
    const char *t = "{\"a\":1}trailing";
    cJSON *v = item_json_parse(t, 7);
    assert_non_null(v);
    assert_int_equal(cJSON_GetObjectItem(v, "a")->valueint, 1);
    cJSON_Delete(v);
    assert_null(item_json_parse("{\"a\":1}", 5));
}

static void t_depth_limit(void **state)
{
    (void)state;
    size_t n = CJSON_NESTING_LIMIT + 5;
    char *deep = malloc(2 * n + 1);
    for (size_t depth = CJSON_NESTING_LIMIT - 1; depth <= CJSON_NESTING_LIMIT + 1; depth++) {
        memset(deep, '[', depth);
        memset(deep + depth, ']', depth);
        deep[2 * depth] = '\0';
        same_as_cjson(deep);
    }
    free(deep);
}

static void t_roundtrip_canon(void **state)
{
    (void)state;
    /* Items built in memory, written by canon_write, read back. */
    cJSON *it = cJSON_CreateObject();
    cJSON_AddStringToObject(it, "PK", "SCAN#x");
    cJSON_AddStringToObject(it, "ctl", "\x01\x02\x1f\x7f \"\\ \xe2\x80\xa8");
    cJSON_AddNumberToObject(it, "big", 1e21);
    cJSON_AddNumberToObject(it, "small", 1e-7);
    cJSON_AddNumberToObject(it, "neg", -123.456);
    cJSON_AddItemToObject(it, "arr", cJSON_CreateIntArray((const int[]){1, 2, 3}, 3));
    char *text = canon_dup(it);
    assert_non_null(text);
    cJSON *back = item_json_parse(text, strlen(text));
    assert_non_null(back);
    assert_true(cJSON_Compare(it, back, true));
    same_as_cjson(text);
    cJSON_Delete(back);
    free(text);
    cJSON_Delete(it);
}

/* item_json_project keeps PK, SK and the named attributes, skipping the
 * rest without building it; the result equals a full parse with the other
 * members removed. */
static void t_project(void **state)
{
    (void)state;
    static const char *texts[] = {
        "{\"PK\":\"PRODUCT#p\",\"SK\":\"SCAN#t#1\",\"ip\":\"1.2.3.4\",\"country\":\"US\","
        "\"result\":\"authentic\"}",
        "{\"PK\":\"a\",\"SK\":\"b\",\"data\":{\"x\":[1,{\"y\":\"},]\\\"\"}],\"z\":null},"
        "\"n\":-1.5e+21,\"country\":\"F\\u00e9\",\"t\":true,\"l\":[\"[\",\"{\"]}",
        "{\"PK\":\"a\",\"SK\":\"b\"}",
        "{\"country\":{\"nested\":[1,2,3]},\"PK\":\"a\",\"SK\":\"b\",\"zz\":\"q\"}",
        "{}",
        /* not canonical (spaces): the slow path must give the same answer */
        "{ \"PK\" : \"a\", \"country\" : \"DE\", \"other\" : [ 1 ] }",
    };
    const char *attrs[] = {"country", "zz"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        cJSON *p = item_json_project(texts[i], strlen(texts[i]), attrs, 2);
        cJSON *full = cJSON_Parse(texts[i]);
        assert_non_null(p);
        assert_non_null(full);
        for (cJSON *m = full->child, *next; m; m = next) {
            next = m->next;
            if (strcmp(m->string, "PK") && strcmp(m->string, "SK") &&
                strcmp(m->string, "country") && strcmp(m->string, "zz"))
                cJSON_Delete(cJSON_DetachItemViaPointer(full, m));
        }
        assert_true(cJSON_Compare(p, full, true));
        cJSON_Delete(p);
        cJSON_Delete(full);
    }
    /* not an object, truncated, garbage */
    static const char *bad[] = {"[1]", "{\"PK\":\"a\"", "{\"PK\":}", "x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_null(item_json_project(bad[i], strlen(bad[i]), attrs, 2));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_canonical_items), cmocka_unit_test(t_odd_inputs),
        cmocka_unit_test(t_depth_limit),     cmocka_unit_test(t_roundtrip_canon),
        cmocka_unit_test(t_project),
    };
    return cmocka_run_group_tests_name("item_json", tests, NULL, NULL);
}
