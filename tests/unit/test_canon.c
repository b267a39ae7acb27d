/*
 * test_canon.c - canon.c (JSON.stringify-exact text) and jsonw.c.
 *
 * Expected texts were produced with Node's JSON.stringify.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/canon.h"
#include "core/jsonw.h"
#include "util/err.h"

static void check_num(double d, const char *want)
{
    char out[CANON_NUM_MAX];
    size_t n = canon_number_str(d, out);
    assert_string_equal(out, want);
    assert_int_equal(n, strlen(want));
}

static void test_numbers_table(void **state)
{
    (void)state;
    check_num(0, "0");
    check_num(-0.0, "0");
    check_num(1, "1");
    check_num(-3, "-3");
    check_num(0.1, "0.1");
    check_num(2.5, "2.5");
    check_num(1e21, "1e+21");
    check_num(1e-7, "1e-7");
    check_num(123456789012345680000.0, "123456789012345680000");
    check_num(1e-6, "0.000001");
    check_num(123e-20, "1.23e-18");
    check_num(5e-324, "5e-324");
    check_num(1.7976931348623157e308, "1.7976931348623157e+308");
    check_num(0.000001, "0.000001");
    check_num(1234.5678, "1234.5678");
    check_num(100, "100");
    check_num(1e20, "100000000000000000000");
    check_num(-1e-7, "-1e-7");
    check_num(0.1 + 0.2, "0.30000000000000004");
    check_num(1.0 / 3, "0.3333333333333333");
    check_num(9007199254740992.0, "9007199254740992");
    check_num(9007199254740994.0, "9007199254740994");
    check_num(18446744073709551616.0, "18446744073709552000");
    check_num(1.5e300, "1.5e+300");
    check_num(4.35, "4.35");
    check_num(0.000123, "0.000123");
    check_num(123456789.0, "123456789");
    check_num(-2.5e-8, "-2.5e-8");
    check_num(1e100, "1e+100");
    check_num(2.2250738585072014e-308, "2.2250738585072014e-308");
    check_num(2.225073858507201e-308, "2.225073858507201e-308");
    check_num(1e23, "1e+23");
    check_num(5e-7, "5e-7");
    check_num(2.5e21, "2.5e+21");
    check_num(1.25, "1.25");
    check_num(-1234567.125, "-1234567.125");
    check_num(NAN, "null");
    check_num(INFINITY, "null");
    check_num(-INFINITY, "null");
}

/* Every finite output must read back as the same double. */
static void test_numbers_round_trip(void **state)
{
    (void)state;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        double d;
        memcpy(&d, &x, sizeof d);
        if (!isfinite(d))
            continue;
        char out[CANON_NUM_MAX];
        size_t n = canon_number_str(d, out);
        assert_true(n < CANON_NUM_MAX);
        assert_true(strtod(out, NULL) == d);
    }
}

/* ECMAScript Number::toString by brute force: the fewest significant
 * digits that read back as d (printf's correctly rounded %.*e, tried
 * from 1 to 17 digits), laid out by the spec's rules. */
static void js_number_ref(double d, char *out)
{
    char sci[64], digits[32];
    int k = 0, e = 0, n;
    char *p = out;
    if (d == 0) {
        strcpy(out, "0");
        return;
    }
    if (d < 0) {
        *p++ = '-';
        d = -d;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(sci, sizeof sci, "%.*e", prec - 1, d);
        if (strtod(sci, NULL) == d || prec == 17)
            break;
    }
    for (const char *c = sci; *c && *c != 'e'; c++)
        if (*c >= '0' && *c <= '9')
            digits[k++] = *c;
    while (k > 1 && digits[k - 1] == '0')
        k--;
    digits[k] = '\0';
    e = atoi(strchr(sci, 'e') + 1);
    n = e + 1;
    if (k <= n && n <= 21) {
        p += sprintf(p, "%s", digits);
        for (int i = 0; i < n - k; i++)
            *p++ = '0';
        *p = '\0';
    } else if (0 < n && n <= 21) {
        sprintf(p, "%.*s.%s", n, digits, digits + n);
    } else if (-6 < n && n <= 0) {
        p += sprintf(p, "0.");
        for (int i = 0; i < -n; i++)
            *p++ = '0';
        sprintf(p, "%s", digits);
    } else {
        sprintf(p, "%c%s%se%c%d", digits[0], k > 1 ? "." : "", digits + 1, e < 0 ? '-' : '+',
                e < 0 ? -e : e);
    }
}

/* The decimal fast path gives what the general algorithm gives: short
 * decimals (prices, latencies in ms), their neighbours one ulp away, and
 * random doubles of every magnitude. */
static void test_numbers_match_reference(void **state)
{
    (void)state;
    uint64_t x = 0x2545f4914f6cdd1dull;
    char got[CANON_NUM_MAX], want[64];
    for (int i = 0; i < 200000; i++) {
        double d;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        switch (i % 4) {
        case 0: /* m / 10^j */
            d = (double)(x % 100000000000ull) / pow(10, (double)((x >> 40) % 16));
            break;
        case 1: /* the same, one ulp up or down */
            d = (double)(x % 1000000ull) / pow(10, (double)((x >> 40) % 10));
            d = nextafter(d, (x >> 63) ? INFINITY : 0);
            break;
        case 2: /* microseconds as milliseconds, as the detector's latencies */
            d = (double)(x % 5000000ull) / 1000.0;
            break;
        default:
            memcpy(&d, &x, sizeof d);
            if (!isfinite(d))
                continue;
        }
        if ((x >> 20) & 1)
            d = -d;
        canon_number_str(d, got);
        js_number_ref(d, want);
        if (strcmp(got, want) != 0)
            fail_msg("%.17g: got %s, want %s", d, got, want);
    }
    /* The reference itself, on known Node outputs. */
    js_number_ref(0.000123, want);
    assert_string_equal(want, "0.000123");
    js_number_ref(1234.5678, want);
    assert_string_equal(want, "1234.5678");
    js_number_ref(1e21, want);
    assert_string_equal(want, "1e+21");
    js_number_ref(100, want);
    assert_string_equal(want, "100");
    js_number_ref(0.1 + 0.2, want);
    assert_string_equal(want, "0.30000000000000004");
}

static char *canon_of_bytes(const char *s, size_t n)
{
    struct buf b = BUF_INIT(0);
    assert_int_equal(canon_string(&b, s, n), 0);
    return buf_steal(&b);
}

static void check_str(const char *in, size_t n, const char *want)
{
    char *got = canon_of_bytes(in, n);
    assert_string_equal(got, want);
    free(got);
}

static void test_string_escapes(void **state)
{
    (void)state;
    check_str("plain", 5, "\"plain\"");
    check_str("", 0, "\"\"");
    check_str("q\"b\\s/", 6, "\"q\\\"b\\\\s/\"");
    check_str("\b\t\n\f\r", 5, "\"\\b\\t\\n\\f\\r\"");
    check_str("\x01\x1f\x7f", 3, "\"\\u0001\\u001f\x7f\"");
    check_str("a\0b", 3, "\"a\\u0000b\"");
    /* U+2028/2029, non-ASCII and 4-byte characters stay raw. */
    check_str("\xe2\x80\xa8\xe2\x80\xa9", 6, "\"\xe2\x80\xa8\xe2\x80\xa9\"");
    check_str("\xc3\xa9\xf0\x9f\x94\x92", 6, "\"\xc3\xa9\xf0\x9f\x94\x92\"");
    check_str("\xef\xbf\xbf", 3, "\"\xef\xbf\xbf\"");
}

static void test_string_surrogates_and_invalid(void **state)
{
    (void)state;
    /* WTF-8 lone surrogates. */
    check_str("\xed\xa0\x80x", 4, "\"\\ud800x\"");
    check_str("\xed\xb0\x80", 3, "\"\\udc00\"");
    check_str("\xed\xbf\xbf", 3, "\"\\udfff\"");
    /* low before high: two lone halves */
    check_str("\xed\xb0\x80\xed\xa0\x80", 6, "\"\\udc00\\ud800\"");
    /* a high+low pair is one character (U+1F600) */
    check_str("\xed\xa0\xbd\xed\xb8\x80", 6, "\"\xf0\x9f\x98\x80\"");
    /* invalid bytes -> U+FFFD */
    check_str("\xff", 1, "\"\xef\xbf\xbd\"");
    check_str("a\x80z", 3, "\"a\xef\xbf\xbdz\"");
    check_str("\xc0\x80", 2, "\"\xef\xbf\xbd\xef\xbf\xbd\"");
    /* truncated sequence: one replacement for the valid prefix */
    check_str("\xe2\x82", 2, "\"\xef\xbf\xbd\"");
    check_str("\xe2\x82x", 3, "\"\xef\xbf\xbdx\"");
    check_str("\xf0\x9f\x98", 3, "\"\xef\xbf\xbd\"");
    /* overlong 3-byte and beyond U+10FFFF */
    check_str("\xe0\x80\x80", 3, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
    check_str("\xf4\x90\x80\x80", 4, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
}

static void test_write_preserves_order(void **state)
{
    (void)state;
    const char *in = "{ \"z\": 1, \"a\": [true, false, null, 1.5e3, -0, \"x\"],"
                     " \"m\": {\"k2\": {}, \"k1\": []}, \"e\": \"\\u00e9\\n\" }";
    cJSON *j = cJSON_Parse(in);
    assert_non_null(j);
    char *out = canon_dup(j);
    assert_string_equal(out, "{\"z\":1,\"a\":[true,false,null,1500,0,\"x\"],"
                             "\"m\":{\"k2\":{},\"k1\":[]},\"e\":\"\xc3\xa9\\n\"}");
    free(out);
    cJSON_Delete(j);

    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "raw", cJSON_CreateRaw("{\"pre\":1}"));
    cJSON_AddNumberToObject(o, "nan", NAN);
    out = canon_dup(o);
    assert_string_equal(out, "{\"raw\":{\"pre\":1},\"nan\":null}");
    free(out);
    cJSON_Delete(o);

    out = canon_dup(NULL);
    assert_string_equal(out, "null");
    free(out);
}

static void test_cap(void **state)
{
    (void)state;
    struct buf b = BUF_INIT(8);
    cJSON *j = cJSON_Parse("{\"long\":\"abcdefghijklmnop\"}");
    assert_int_equal(canon_write(&b, j), ERR_TOOBIG);
    assert_true(b.len <= 8);
    buf_free(&b);
    cJSON_Delete(j);
}

static void test_product_and_event_text(void **state)
{
    (void)state;
    struct buf b = BUF_INIT(4096);
    assert_int_equal(
        canon_product_text(&b, "p1", "b1", "N\"ame", NULL, NULL, "2026-06-20T15:00:00.000Z"), 0);
    assert_string_equal(buf_cstr(&b), "{\"productId\":\"p1\",\"brandId\":\"b1\",\"name\":"
                                      "\"N\\\"ame\",\"sku\":\"\",\"metadata\":{},"
                                      "\"createdAt\":\"2026-06-20T15:00:00.000Z\"}");
    buf_reset(&b);
    cJSON *null = cJSON_CreateNull();
    cJSON *meta = cJSON_Parse("{\"b\":2,\"a\":1}");
    assert_int_equal(canon_product_text(&b, "p1", "b1", "n", "", null, "t"), 0);
    assert_string_equal(buf_cstr(&b), "{\"productId\":\"p1\",\"brandId\":\"b1\",\"name\":\"n\","
                                      "\"sku\":\"\",\"metadata\":{},\"createdAt\":\"t\"}");
    buf_reset(&b);
    assert_int_equal(canon_product_text(&b, "p1", "b1", "n", "S-1", meta, "t"), 0);
    assert_string_equal(buf_cstr(&b), "{\"productId\":\"p1\",\"brandId\":\"b1\",\"name\":\"n\","
                                      "\"sku\":\"S-1\",\"metadata\":{\"b\":2,\"a\":1},"
                                      "\"createdAt\":\"t\"}");
    buf_reset(&b);
    assert_int_equal(canon_event_text(&b, "p", "shipped", "A", "t", NULL, "h"), 0);
    assert_string_equal(buf_cstr(&b), "{\"productId\":\"p\",\"type\":\"shipped\",\"actor\":\"A\","
                                      "\"timestamp\":\"t\",\"data\":{},\"previousHash\":\"h\"}");
    buf_reset(&b);
    assert_int_equal(canon_event_text(&b, "p", "sold", "A", "t", meta, "h"), 0);
    assert_string_equal(buf_cstr(&b), "{\"productId\":\"p\",\"type\":\"sold\",\"actor\":\"A\","
                                      "\"timestamp\":\"t\",\"data\":{\"b\":2,\"a\":1},"
                                      "\"previousHash\":\"h\"}");
    cJSON_Delete(null);
    cJSON_Delete(meta);
    buf_free(&b);
}

static void test_jsonw(void **state)
{
    (void)state;
    struct buf b = BUF_INIT(4096);
    struct jsonw w;
    cJSON *v = cJSON_Parse("{\"x\":[1,2]}");

    jsonw_init(&w, &b);
    jsonw_obj(&w);
    jsonw_kstr(&w, "id", "a\"b");
    jsonw_kstr(&w, "none", NULL);
    jsonw_knum(&w, "n", 0.5);
    jsonw_kint(&w, "i", -42);
    jsonw_kint(&w, "big", INT64_MAX);
    jsonw_kbool(&w, "t", true);
    jsonw_knull(&w, "z");
    jsonw_kjson(&w, "j", v);
    jsonw_key(&w, "list");
    jsonw_arr(&w);
    jsonw_str(&w, "s");
    jsonw_num(&w, 1e21);
    jsonw_raw(&w, "{\"r\":0}", 7);
    jsonw_obj(&w);
    jsonw_end(&w);
    jsonw_arr(&w);
    jsonw_end(&w);
    jsonw_end(&w);
    jsonw_end(&w);
    assert_int_equal(jsonw_error(&w), 0);
    assert_string_equal(buf_cstr(&b),
                        "{\"id\":\"a\\\"b\",\"none\":null,\"n\":0.5,\"i\":-42,"
                        "\"big\":9223372036854776000,\"t\":true,\"z\":null,\"j\":{\"x\":[1,2]},"
                        "\"list\":[\"s\",1e+21,{\"r\":0},{},[]]}");
    cJSON_Delete(v);

    /* misuse is sticky */
    buf_reset(&b);
    jsonw_init(&w, &b);
    jsonw_arr(&w);
    jsonw_key(&w, "k");
    assert_int_equal(jsonw_error(&w), ERR_INVALID);
    jsonw_str(&w, "ignored");
    assert_string_equal(buf_cstr(&b), "[");

    buf_reset(&b);
    jsonw_init(&w, &b);
    jsonw_obj(&w);
    jsonw_str(&w, "value without key");
    assert_int_equal(jsonw_error(&w), ERR_INVALID);

    jsonw_init(&w, &b);
    jsonw_end(&w);
    assert_int_equal(jsonw_error(&w), ERR_INVALID);

    /* nesting limit */
    buf_reset(&b);
    jsonw_init(&w, &b);
    for (int i = 0; i < JSONW_DEPTH + 1; i++)
        jsonw_arr(&w);
    assert_int_equal(jsonw_error(&w), ERR_TOOBIG);
    buf_free(&b);

    /* buffer cap */
    struct buf small = BUF_INIT(10);
    jsonw_init(&w, &small);
    jsonw_obj(&w);
    jsonw_kstr(&w, "key", "a long value");
    assert_int_equal(jsonw_error(&w), ERR_TOOBIG);
    buf_free(&small);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numbers_table),
        cmocka_unit_test(test_numbers_round_trip),
        cmocka_unit_test(test_numbers_match_reference),
        cmocka_unit_test(test_string_escapes),
        cmocka_unit_test(test_string_surrogates_and_invalid),
        cmocka_unit_test(test_write_preserves_order),
        cmocka_unit_test(test_cap),
        cmocka_unit_test(test_product_and_event_text),
        cmocka_unit_test(test_jsonw),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
