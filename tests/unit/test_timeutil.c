/*
 * test_timeutil.c - timeutil.c: ISO formatting and strict parsing, the
 * year range 0000-9999, offsets, invalid dates, buckets and clocks.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "core/timeutil.h"
#include "util/err.h"

static int64_t parse_ok(const char *s)
{
    int64_t ms = -1;
    assert_int_equal(time_parse_iso(s, &ms), 0);
    return ms;
}

static void check_iso(int64_t ms, const char *want)
{
    char out[ISO_LEN + 1];
    time_iso(ms, out);
    assert_string_equal(out, want);
}

static void test_format(void **state)
{
    (void)state;
    check_iso(0, "1970-01-01T00:00:00.000Z");
    check_iso(1781967600000LL, "2026-06-20T15:00:00.000Z");
    check_iso(-1, "1969-12-31T23:59:59.999Z");
    check_iso(951782400000LL, "2000-02-29T00:00:00.000Z");
    check_iso(253402300799999LL, "9999-12-31T23:59:59.999Z");
    check_iso(-62167219200000LL, "0000-01-01T00:00:00.000Z");
    /* clamped outside 0000..9999 */
    check_iso(INT64_MAX, "9999-12-31T23:59:59.999Z");
    check_iso(INT64_MIN, "0000-01-01T00:00:00.000Z");
}

static void test_round_trip(void **state)
{
    (void)state;
    /* every ~37 days with odd ms over the full range */
    const int64_t step = 37LL * 86400000 + 12345678;
    for (int64_t ms = -62167219200000LL; ms <= 253402300799999LL; ms += step) {
        char out[ISO_LEN + 1];
        time_iso(ms, out);
        assert_true(time_is_iso(out));
        assert_int_equal(parse_ok(out), ms);
    }
}

static void test_parse_forms(void **state)
{
    (void)state;
    const int64_t t = 1781967600000LL; /* 2026-06-20T15:00:00.000Z */
    assert_int_equal(parse_ok("2026-06-20T15:00:00.000Z"), t);
    assert_int_equal(parse_ok("2026-06-20T15:00:00Z"), t);
    assert_int_equal(parse_ok("2026-06-20T15:00Z"), t);
    assert_int_equal(parse_ok("2026-06-20T17:00:00+02:00"), t);
    assert_int_equal(parse_ok("2026-06-20T17:00:00+0200"), t);
    assert_int_equal(parse_ok("2026-06-20T10:30:00.000-04:30"), t);
    assert_int_equal(parse_ok("2026-06-20"), t - 15 * 3600000LL);
    /* fractions: padded, truncated past ms */
    assert_int_equal(parse_ok("2026-06-20T15:00:00.5Z"), t + 500);
    assert_int_equal(parse_ok("2026-06-20T15:00:00.12Z"), t + 120);
    assert_int_equal(parse_ok("2026-06-20T15:00:00.123999999Z"), t + 123);
    /* offset across a day/year boundary */
    assert_int_equal(parse_ok("2027-01-01T01:00:00+02:00"), parse_ok("2026-12-31T23:00:00Z"));
    /* leap years */
    assert_int_equal(parse_ok("2024-02-29T00:00:00Z") + 86400000LL, parse_ok("2024-03-01"));
    assert_int_equal(parse_ok("2000-02-29"), 951782400000LL);
    assert_int_equal(parse_ok("0000-01-01T00:00:00.000Z"), -62167219200000LL);
    /* leap second 60 rolls into the next minute */
    assert_int_equal(parse_ok("2016-12-31T23:59:60Z"), parse_ok("2017-01-01T00:00:00Z"));
}

static void test_parse_invalid(void **state)
{
    (void)state;
    static const char *bad[] = {
        "",
        "2026",
        "2026-06",
        "2026-02-30",
        "2026-02-29T00:00Z", /* not a leap year */
        "1900-02-29",
        "2026-13-01",
        "2026-00-10",
        "2026-06-00",
        "2026-06-31",
        "2026-06-20T24:00:00Z",
        "2026-06-20T23:60:00Z",
        "2026-06-20T23:59:61Z",
        "2026-06-20T15:00:00",     /* no zone */
        "2026-06-20T15:00:00.000", /* no zone */
        "2026-06-20T15:00",        /* no zone */
        "2026-06-20 15:00:00Z",
        "2026-06-20t15:00:00Z",
        "2026-06-20T15:00:00z",
        "2026-06-20T15:00:00.Z",
        "2026-06-20T15:00:00.000Zjunk",
        "2026-06-20T15:00:00+2:00",
        "2026-06-20T15:00:00+24:00",
        "2026-06-20T15:00:00+02:60",
        "2026-06-20T15:00:00+02",
        "2026-6-20",
        "+02026-06-20",
        "2026-06-20T1:00Z",
        "2026-06-20Z",
        "abcd-ef-ghTij:kl:mnZ",
        " 2026-06-20",
        "2026-06-20 ",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t ms = 42;
        if (time_parse_iso(bad[i], &ms) != ERR_INVALID)
            fail_msg("accepted: \"%s\"", bad[i]);
        assert_int_equal(ms, 42);
    }
    int64_t ms;
    assert_int_equal(time_parse_iso(NULL, &ms), ERR_INVALID);
}

static void test_is_iso(void **state)
{
    (void)state;
    assert_true(time_is_iso("2026-06-20T15:00:00.000Z"));
    assert_false(time_is_iso("2026-06-20T15:00:00Z"));
    assert_false(time_is_iso("2026-06-20T15:00:00.000+00:00"));
    assert_false(time_is_iso("2026-02-30T15:00:00.000Z"));
    assert_false(time_is_iso("2016-12-31T23:59:60.000Z"));
    assert_false(time_is_iso("2026-06-20T15:00:00.0000"));
    assert_false(time_is_iso(NULL));
}

static void test_buckets_and_clocks(void **state)
{
    (void)state;
    char m[8], d[11];
    int64_t t = parse_ok("2026-06-30T23:59:59.999Z");
    time_month_bucket(t, m);
    time_day_bucket(t, d);
    assert_string_equal(m, "2026-06");
    assert_string_equal(d, "2026-06-30");
    time_month_bucket(t + 1, m);
    time_day_bucket(t + 1, d);
    assert_string_equal(m, "2026-07");
    assert_string_equal(d, "2026-07-01");

    int64_t now = time_now_ms();
    assert_true(now > parse_ok("2024-01-01"));
    int64_t a = time_mono_ms();
    int64_t au = time_mono_us();
    assert_true(time_mono_ms() >= a);
    assert_true(time_mono_us() >= au);
    assert_true(au / 1000 >= a - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format),      cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_parse_forms), cmocka_unit_test(test_parse_invalid),
        cmocka_unit_test(test_is_iso),      cmocka_unit_test(test_buckets_and_clocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
