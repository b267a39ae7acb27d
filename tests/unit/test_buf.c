/*
 * test_buf.c - util/buf.c: growth, the hard cap (appends past it fail and
 * leave the content unchanged), NUL termination, consume/reset/steal.
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

#include "util/buf.h"
#include "util/err.h"

static void test_append_and_grow(void **state)
{
    (void)state;
    struct buf b;
    buf_init(&b, 0);
    assert_string_equal(buf_cstr(&b), "");
    for (int i = 0; i < 1000; i++)
        assert_int_equal(buf_append(&b, "abc", 3), 0);
    assert_int_equal(b.len, 3000);
    assert_true(b.cap > b.len);
    assert_int_equal(b.data[b.len], '\0');
    assert_memory_equal(b.data + 2997, "abc", 3);
    assert_int_equal(buf_putc(&b, 'z'), 0);
    assert_int_equal(buf_puts(&b, "yx"), 0);
    assert_string_equal(b.data + 3000, "zyx");
    assert_int_equal(buf_append(&b, NULL, 0), 0);
    assert_int_equal(b.len, 3003);
    buf_free(&b);
    assert_null(b.data);
    assert_int_equal(b.len, 0);
}

static void test_cap(void **state)
{
    (void)state;
    struct buf b = BUF_INIT(5);
    assert_int_equal(buf_puts(&b, "abcd"), 0);
    assert_int_equal(buf_puts(&b, "ef"), ERR_TOOBIG);
    assert_string_equal(buf_cstr(&b), "abcd"); /* unchanged */
    assert_int_equal(buf_putc(&b, 'e'), 0);
    assert_int_equal(buf_putc(&b, 'f'), ERR_TOOBIG);
    assert_string_equal(buf_cstr(&b), "abcde");
    assert_int_equal(buf_printf(&b, "%d", 1), ERR_TOOBIG);
    assert_int_equal(buf_reserve(&b, 1), ERR_TOOBIG);
    assert_int_equal(buf_reserve(&b, 0), 0);
    assert_int_equal(buf_reserve(&b, SIZE_MAX), ERR_TOOBIG);
    assert_int_equal(b.len, 5);
    buf_free(&b);
}

/* Decimal digits without printf, checked against printf over the range. */
static void test_u64(void **state)
{
    (void)state;
    char got[U64_DEC_MAX], want[32];
    uint64_t vals[] = {0, 1, 9, 10, 99, 100, 12345, 4294967295u, 18446744073709551615u};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        snprintf(want, sizeof want, "%llu", (unsigned long long)vals[i]);
        assert_int_equal(u64_to_dec(vals[i], got), strlen(want));
        assert_string_equal(got, want);
    }
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 10000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        uint64_t v = x >> (x % 64);
        snprintf(want, sizeof want, "%llu", (unsigned long long)v);
        u64_to_dec(v, got);
        assert_string_equal(got, want);
    }
    struct buf b = BUF_INIT(8);
    assert_int_equal(buf_puts(&b, "n="), 0);
    assert_int_equal(buf_put_u64(&b, 420), 0);
    assert_string_equal(buf_cstr(&b), "n=420");
    assert_int_equal(buf_put_u64(&b, 1234), ERR_TOOBIG); /* past the cap */
    buf_free(&b);
}

/* fmt_fixed against printf("%.*f"): exact values, ties (printf rounds
 * half to even), values a hair off a tie, random values of every
 * magnitude, and what the fast path leaves to printf. */
static void check_fixed(double x, int prec)
{
    char got[400], want[400];
    int gn = fmt_fixed(x, prec, got, sizeof got);
    int wn = snprintf(want, sizeof want, "%.*f", prec, x);
    if (gn != wn || strcmp(got, want) != 0)
        fail_msg("fmt_fixed(%.17g, %d) = \"%s\", printf \"%s\"", x, prec, got, want);
}

static void test_fixed(void **state)
{
    (void)state;
    const double vals[] = {0,    0.05,  0.15, 0.25, 0.35, 0.5,     1.5,          2.5,
                           2.45, 2.55,  9.95, 9.96, 99.5, 1e9 - 1, 999999999.95, 1e9,
                           1e15, 1e300, -0.0, -1.5, 3.0,  21.0,    1234.56};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
        for (int p = 0; p <= 1; p++)
            check_fixed(vals[i], p);
    check_fixed(NAN, 1);
    check_fixed(INFINITY, 0);
    for (int k = 0; k < 2000; k++) { /* around the ties of one decimal */
        double tie = (double)k / 10 + 0.05;
        check_fixed(tie, 1);
        check_fixed(nextafter(tie, 0), 1);
        check_fixed(nextafter(tie, 1e9), 1);
        check_fixed((double)k + 0.5, 0);
        check_fixed(nextafter((double)k + 0.5, 0), 0);
    }
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        double v = (double)(x >> 11) / (double)(1ull << 53) * pow(10, (double)(x % 12) - 2);
        check_fixed(v, (int)(x >> 60) & 1);
    }
    char small[4];
    assert_int_equal(fmt_fixed(1234.5, 1, small, sizeof small), 6); /* cut as snprintf cuts */
    assert_string_equal(small, "123");
}

static void test_printf(void **state)
{
    (void)state;
    struct buf b = BUF_INIT(4096);
    assert_int_equal(buf_printf(&b, "%s=%d;", "x", 42), 0);
    char long_s[1000];
    memset(long_s, 'q', sizeof long_s - 1);
    long_s[sizeof long_s - 1] = '\0';
    assert_int_equal(buf_printf(&b, "[%s]", long_s), 0); /* beyond the 256-byte fast path */
    assert_int_equal(b.len, 5 + 1001);
    assert_memory_equal(b.data, "x=42;[qqq", 9);
    assert_int_equal(b.data[b.len - 1], ']');
    assert_int_equal(b.data[b.len], '\0');
    buf_free(&b);
}

static void test_consume_reset_steal(void **state)
{
    (void)state;
    struct buf b = BUF_INIT(100);
    buf_puts(&b, "hello world");
    buf_consume(&b, 6);
    assert_string_equal(buf_cstr(&b), "world");
    buf_consume(&b, 100);
    assert_int_equal(b.len, 0);
    assert_string_equal(buf_cstr(&b), "");
    buf_puts(&b, "again");
    buf_reset(&b);
    assert_int_equal(b.len, 0);
    assert_string_equal(buf_cstr(&b), "");
    buf_puts(&b, "mine");
    char *s = buf_steal(&b);
    assert_string_equal(s, "mine");
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    free(s);
    s = buf_steal(&b); /* empty buffer: "" */
    assert_string_equal(s, "");
    free(s);
    assert_int_equal(b.max, 100); /* cap kept after steal */
    buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_append_and_grow), cmocka_unit_test(test_cap),
        cmocka_unit_test(test_printf),          cmocka_unit_test(test_u64),
        cmocka_unit_test(test_fixed),           cmocka_unit_test(test_consume_reset_steal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
