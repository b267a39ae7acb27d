/*
 * test_decode.c - body decoding rules (api/decode.h): JSON object only,
 * UTF-8 and NUL screening, nesting bound, JavaScript truthiness for
 * presence, wrong types and lengths; plus the query-string decoder of
 * api_req.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_req.h"
#include "api/decode.h"
#include "util/err.h"

static cJSON *parse(const char *s)
{
    return dec_parse_body(s, strlen(s));
}

static void test_parse_objects_only(void **state)
{
    (void)state;
    cJSON *o = parse("{\"a\":1}");
    assert_non_null(o);
    cJSON_Delete(o);
    o = parse("  {\"a\":[1,2,{\"b\":null}]}\r\n\t ");
    assert_non_null(o);
    cJSON_Delete(o);
    assert_null(parse(""));
    assert_null(parse("null"));
    assert_null(parse("[]"));
    assert_null(parse("[{\"a\":1}]"));
    assert_null(parse("\"text\""));
    assert_null(parse("42"));
    assert_null(parse("true"));
    assert_null(parse("{\"a\":1"));
    assert_null(parse("{\"a\":1}}"));
    assert_null(parse("{\"a\":1} x"));
    assert_null(parse("{'a':1}"));
    assert_null(parse("{\"a\":undefined}"));
    assert_null(dec_parse_body(NULL, 0));
}

static void test_parse_length_bound(void **state)
{
    (void)state;
    /* the parser must stop at len even when more text follows */
    const char *s = "{\"a\":1}GARBAGE";
    cJSON *o = dec_parse_body(s, 7);
    assert_non_null(o);
    cJSON_Delete(o);
    assert_null(dec_parse_body(s, 6));
}

static void test_parse_utf8_and_nul(void **state)
{
    (void)state;
    cJSON *o = parse("{\"name\":\"Caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"}");
    assert_non_null(o);
    cJSON_Delete(o);
    /* invalid UTF-8: lone continuation, truncated sequence, overlong, surrogate, > U+10FFFF */
    assert_null(parse("{\"name\":\"\x80\"}"));
    assert_null(parse("{\"name\":\"\xc3\"}"));
    assert_null(parse("{\"name\":\"\xc0\xaf\"}"));
    assert_null(parse("{\"name\":\"\xe0\x80\xaf\"}"));
    assert_null(parse("{\"name\":\"\xed\xa0\x80\"}"));
    assert_null(parse("{\"name\":\"\xf4\x90\x80\x80\"}"));
    assert_null(parse("{\"name\":\"\xff\"}"));
    /* raw NUL inside the body */
    const char nul[] = "{\"name\":\"a\0b\"}";
    assert_null(dec_parse_body(nul, sizeof nul - 1));
    /* escaped NUL would truncate the C string: refused */
    assert_null(parse("{\"name\":\"a\\u0000b\"}"));
    /* an escaped backslash followed by u0000 text is fine */
    o = parse("{\"name\":\"a\\\\u0000b\"}");
    assert_non_null(o);
    assert_string_equal(cJSON_GetObjectItem(o, "name")->valuestring, "a\\u0000b");
    cJSON_Delete(o);
    /* lone surrogate escapes are refused by the JSON parser */
    assert_null(parse("{\"name\":\"\\udc00\"}"));
    assert_null(parse("{\"name\":\"\\ud800x\"}"));
    o = parse("{\"name\":\"\\ud83d\\ude00\"}");
    assert_non_null(o);
    cJSON_Delete(o);
}

static void test_parse_depth(void **state)
{
    (void)state;
    char buf[512];
    size_t n = 0;
    /* {"a": [[[ ... 63 levels ... ]]] } = 64 levels: accepted */
    n += (size_t)sprintf(buf + n, "{\"a\":");
    for (int i = 0; i < 63; i++)
        buf[n++] = '[';
    for (int i = 0; i < 63; i++)
        buf[n++] = ']';
    buf[n++] = '}';
    cJSON *o = dec_parse_body(buf, n);
    assert_non_null(o);
    cJSON_Delete(o);
    /* 65 levels: refused */
    n = 0;
    n += (size_t)sprintf(buf + n, "{\"a\":");
    for (int i = 0; i < 64; i++)
        buf[n++] = '[';
    for (int i = 0; i < 64; i++)
        buf[n++] = ']';
    buf[n++] = '}';
    assert_null(dec_parse_body(buf, n));
    /* brackets inside strings do not count */
    n = (size_t)sprintf(buf, "{\"a\":\"");
    for (int i = 0; i < 100; i++)
        buf[n++] = '[';
    n += (size_t)sprintf(buf + n, "\"}");
    o = dec_parse_body(buf, n);
    assert_non_null(o);
    cJSON_Delete(o);
}

static void test_utf8_ok(void **state)
{
    (void)state;
    assert_true(dec_utf8_ok("", 0));
    assert_true(dec_utf8_ok("abc", 3));
    assert_true(dec_utf8_ok("\xef\xbf\xbf", 3));
    assert_true(dec_utf8_ok("\xf4\x8f\xbf\xbf", 4));
    assert_false(dec_utf8_ok("a\0b", 3));
    assert_false(dec_utf8_ok("\xe2\x82", 2));
    assert_false(dec_utf8_ok("\xf8\x88\x80\x80\x80", 5));
}

/* The presence rule: absent, null, false, 0, "" are missing. */
static void test_str_truthiness(void **state)
{
    (void)state;
    cJSON *o = parse("{\"s\":\"x\",\"e\":\"\",\"n\":null,\"f\":false,\"z\":0,\"t\":true,"
                     "\"one\":1,\"o\":{},\"a\":[],\"neg\":-0}");
    assert_non_null(o);
    const char *out = "junk";
    char err[128];
    assert_int_equal(dec_str(o, "s", 10, &out, err, sizeof err), DEC_PRESENT);
    assert_string_equal(out, "x");
    assert_int_equal(dec_str(o, "missing", 10, &out, err, sizeof err), DEC_MISSING);
    assert_null(out);
    assert_int_equal(dec_str(o, "e", 10, &out, err, sizeof err), DEC_MISSING);
    assert_int_equal(dec_str(o, "n", 10, &out, err, sizeof err), DEC_MISSING);
    assert_int_equal(dec_str(o, "f", 10, &out, err, sizeof err), DEC_MISSING);
    assert_int_equal(dec_str(o, "z", 10, &out, err, sizeof err), DEC_MISSING);
    assert_int_equal(dec_str(o, "neg", 10, &out, err, sizeof err), DEC_MISSING);
    /* truthy values of the wrong type */
    assert_int_equal(dec_str(o, "t", 10, &out, err, sizeof err), DEC_WRONG);
    assert_string_equal(err, "t must be a string");
    assert_int_equal(dec_str(o, "one", 10, &out, err, sizeof err), DEC_WRONG);
    assert_string_equal(err, "one must be a string");
    assert_int_equal(dec_str(o, "o", 10, &out, err, sizeof err), DEC_WRONG);
    assert_int_equal(dec_str(o, "a", 10, &out, err, sizeof err), DEC_WRONG);
    /* case-sensitive field names */
    assert_int_equal(dec_str(o, "S", 10, &out, err, sizeof err), DEC_MISSING);
    /* not an object at all */
    assert_int_equal(dec_str(NULL, "s", 10, &out, err, sizeof err), DEC_MISSING);
    cJSON_Delete(o);
}

static void test_str_length(void **state)
{
    (void)state;
    cJSON *o = parse("{\"name\":\"abcdef\",\"u\":\"\xc3\xa9\xc3\xa9\"}");
    const char *out;
    char err[128];
    assert_int_equal(dec_str(o, "name", 6, &out, err, sizeof err), DEC_PRESENT);
    assert_int_equal(dec_str(o, "name", 5, &out, err, sizeof err), DEC_WRONG);
    assert_string_equal(err, "name is too long");
    /* the limit is in bytes */
    assert_int_equal(dec_str(o, "u", 4, &out, err, sizeof err), DEC_PRESENT);
    assert_int_equal(dec_str(o, "u", 3, &out, err, sizeof err), DEC_WRONG);
    cJSON_Delete(o);
}

static void test_str_invalid_utf8_in_tree(void **state)
{
    (void)state;
    /* a tree built elsewhere (not from dec_parse_body) is still checked */
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "bad", "\xff\xfe");
    const char *out;
    char err[128];
    assert_int_equal(dec_str(o, "bad", 100, &out, err, sizeof err), DEC_WRONG);
    assert_string_equal(err, "bad must be valid UTF-8");
    cJSON_Delete(o);
}

static void test_num_bool(void **state)
{
    (void)state;
    cJSON *o = parse("{\"n\":2.5,\"z\":0,\"s\":\"5\",\"t\":true,\"f\":false,\"nul\":null,"
                     "\"o\":{},\"big\":1e400}");
    double d = 0;
    bool b = false;
    char err[128];
    assert_int_equal(dec_num(o, "n", &d, err, sizeof err), DEC_PRESENT);
    assert_true(d == 2.5);
    assert_int_equal(dec_num(o, "z", &d, err, sizeof err), DEC_MISSING);
    assert_int_equal(dec_num(o, "nul", &d, err, sizeof err), DEC_MISSING);
    assert_int_equal(dec_num(o, "f", &d, err, sizeof err), DEC_MISSING);
    assert_int_equal(dec_num(o, "s", &d, err, sizeof err), DEC_WRONG);
    assert_string_equal(err, "s must be a number");
    assert_int_equal(dec_num(o, "t", &d, err, sizeof err), DEC_WRONG);
    assert_int_equal(dec_num(o, "o", &d, err, sizeof err), DEC_WRONG);
    assert_int_equal(dec_num(o, "big", &d, err, sizeof err), DEC_WRONG);

    assert_int_equal(dec_bool(o, "t", &b, err, sizeof err), DEC_PRESENT);
    assert_true(b);
    assert_int_equal(dec_bool(o, "f", &b, err, sizeof err), DEC_MISSING);
    assert_int_equal(dec_bool(o, "z", &b, err, sizeof err), DEC_MISSING);
    assert_int_equal(dec_bool(o, "n", &b, err, sizeof err), DEC_WRONG);
    assert_string_equal(err, "n must be a boolean");
    assert_int_equal(dec_bool(o, "s", &b, err, sizeof err), DEC_WRONG);
    cJSON_Delete(o);
}

static void test_obj_arr(void **state)
{
    (void)state;
    cJSON *o = parse("{\"o\":{},\"a\":[],\"s\":\"x\",\"e\":\"\",\"n\":null,\"one\":1,"
                     "\"t\":true}");
    const cJSON *v;
    char err[128];
    /* empty objects and arrays are truthy in JavaScript */
    assert_int_equal(dec_obj(o, "o", &v, err, sizeof err), DEC_PRESENT);
    assert_true(cJSON_IsObject(v));
    assert_int_equal(dec_arr(o, "a", &v, err, sizeof err), DEC_PRESENT);
    assert_true(cJSON_IsArray(v));
    assert_int_equal(dec_obj(o, "e", &v, err, sizeof err), DEC_MISSING);
    assert_null(v);
    assert_int_equal(dec_obj(o, "n", &v, err, sizeof err), DEC_MISSING);
    assert_int_equal(dec_obj(o, "a", &v, err, sizeof err), DEC_WRONG);
    assert_string_equal(err, "a must be an object");
    assert_int_equal(dec_obj(o, "s", &v, err, sizeof err), DEC_WRONG);
    assert_int_equal(dec_obj(o, "t", &v, err, sizeof err), DEC_WRONG);
    assert_int_equal(dec_arr(o, "o", &v, err, sizeof err), DEC_WRONG);
    assert_string_equal(err, "o must be an array");
    assert_int_equal(dec_arr(o, "one", &v, err, sizeof err), DEC_WRONG);
    assert_int_equal(dec_arr(o, "n", &v, err, sizeof err), DEC_MISSING);
    cJSON_Delete(o);
}

static void test_str_arr(void **state)
{
    (void)state;
    cJSON *o = parse("{\"ok\":[\"a\",\"bb\"],\"mixed\":[\"a\",1],\"long\":[\"abcd\"],"
                     "\"many\":[\"a\",\"b\",\"c\"],\"empty\":[],\"notarr\":\"a\",\"nul\":null}");
    const cJSON *v;
    char err[128];
    assert_int_equal(dec_str_arr(o, "ok", 5, 3, &v, err, sizeof err), DEC_PRESENT);
    assert_int_equal(cJSON_GetArraySize(v), 2);
    assert_int_equal(dec_str_arr(o, "empty", 5, 3, &v, err, sizeof err), DEC_PRESENT);
    assert_int_equal(dec_str_arr(o, "nul", 5, 3, &v, err, sizeof err), DEC_MISSING);
    assert_int_equal(dec_str_arr(o, "mixed", 5, 3, &v, err, sizeof err), DEC_WRONG);
    assert_string_equal(err, "mixed must be an array of strings");
    assert_null(v);
    assert_int_equal(dec_str_arr(o, "notarr", 5, 3, &v, err, sizeof err), DEC_WRONG);
    assert_string_equal(err, "notarr must be an array of strings");
    assert_int_equal(dec_str_arr(o, "long", 5, 3, &v, err, sizeof err), DEC_WRONG);
    assert_string_equal(err, "long is too long");
    assert_int_equal(dec_str_arr(o, "many", 2, 3, &v, err, sizeof err), DEC_WRONG);
    assert_string_equal(err, "many has too many items");
    assert_int_equal(dec_str_arr(o, "many", 3, 3, &v, err, sizeof err), DEC_PRESENT);
    cJSON_Delete(o);
}

static void test_query_decode(void **state)
{
    (void)state;
    char out[API_QUERY_MAX + 1];
    assert_int_equal(api_query_decode("a=1&b=two", "b", out, sizeof out), 1);
    assert_string_equal(out, "two");
    /* first occurrence wins */
    assert_int_equal(api_query_decode("x=1&x=2", "x", out, sizeof out), 1);
    assert_string_equal(out, "1");
    /* percent escapes and '+' */
    assert_int_equal(api_query_decode("q=a+b%20c%2Bd%c3%A9", "q", out, sizeof out), 1);
    assert_string_equal(out, "a b c+d\xc3\xa9");
    /* keys are decoded too */
    assert_int_equal(api_query_decode("product%49d=p1", "productId", out, sizeof out), 1);
    assert_string_equal(out, "p1");
    /* empty and bare keys are found with an empty value */
    assert_int_equal(api_query_decode("e=&f", "e", out, sizeof out), 1);
    assert_string_equal(out, "");
    assert_int_equal(api_query_decode("e=&f", "f", out, sizeof out), 1);
    assert_string_equal(out, "");
    assert_int_equal(api_query_decode("a=1", "b", out, sizeof out), 0);
    assert_int_equal(api_query_decode("", "b", out, sizeof out), 0);
    /* a prefix of a key does not match */
    assert_int_equal(api_query_decode("ab=1", "a", out, sizeof out), 0);
    /* invalid escapes, NUL, invalid UTF-8 */
    assert_int_equal(api_query_decode("a=%zz", "a", out, sizeof out), ERR_INVALID);
    assert_int_equal(api_query_decode("a=%4", "a", out, sizeof out), ERR_INVALID);
    assert_int_equal(api_query_decode("a=x%00y", "a", out, sizeof out), ERR_INVALID);
    assert_int_equal(api_query_decode("a=%ff", "a", out, sizeof out), ERR_INVALID);
    /* a bad unrelated parameter does not matter */
    assert_int_equal(api_query_decode("b=%zz&a=ok", "a", out, sizeof out), 1);
    assert_string_equal(out, "ok");
}

static void test_query_too_long(void **state)
{
    (void)state;
    size_t n = API_QUERY_MAX + 3;
    char *q = malloc(n + 1);
    char *out = malloc(API_QUERY_MAX + 1);
    memcpy(q, "a=", 2);
    memset(q + 2, 'x', API_QUERY_MAX);
    q[API_QUERY_MAX + 2] = '\0';
    assert_int_equal(api_query_decode(q, "a", out, API_QUERY_MAX + 1), 1);
    assert_int_equal(strlen(out), API_QUERY_MAX);
    q[API_QUERY_MAX + 2] = 'x';
    q[API_QUERY_MAX + 3] = '\0';
    assert_int_equal(api_query_decode(q, "a", out, API_QUERY_MAX + 1), ERR_INVALID);
    free(q);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_objects_only),
        cmocka_unit_test(test_parse_length_bound),
        cmocka_unit_test(test_parse_utf8_and_nul),
        cmocka_unit_test(test_parse_depth),
        cmocka_unit_test(test_utf8_ok),
        cmocka_unit_test(test_str_truthiness),
        cmocka_unit_test(test_str_length),
        cmocka_unit_test(test_str_invalid_utf8_in_tree),
        cmocka_unit_test(test_num_bool),
        cmocka_unit_test(test_obj_arr),
        cmocka_unit_test(test_str_arr),
        cmocka_unit_test(test_query_decode),
        cmocka_unit_test(test_query_too_long),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
