/*
 * test_tui_kiosk.c - kiosk scheduling (tui/kiosk.c): rotation and brand
 * advance, critical takeover with banner and pause, queued takeovers,
 * Health while the server is down, burn-in shift.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "tui/kiosk.h"

#define T0 1764680000000LL

static void test_rotation(void **state)
{
    (void)state;
    struct kiosk k;
    struct ui_state s;
    ui_state_init(&s, 2, false, true);
    kiosk_init(&k, &s, "feed,map,health", 20000, 30000, 60000, 0, SEV_CRITICAL, T0);
    assert_int_equal(s.view, VIEW_FEED);
    assert_false(kiosk_tick(&k, &s, false, T0 + 19999));
    assert_true(kiosk_countdown(&k, T0 + 10000) > 9 && kiosk_countdown(&k, T0 + 10000) <= 10);
    assert_true(kiosk_tick(&k, &s, false, T0 + 20000));
    assert_int_equal(s.view, VIEW_MAP);
    kiosk_tick(&k, &s, false, T0 + 40000);
    assert_int_equal(s.view, VIEW_HEALTH);
    assert_int_equal(s.brand, 0);
    kiosk_tick(&k, &s, false, T0 + 60000);
    assert_int_equal(s.view, VIEW_FEED);
    assert_int_equal(s.brand, 1); /* brands advance each cycle */
    /* bad list: the default rotation */
    kiosk_init(&k, &s, "nope,,", 1000, 1, 1, 0, SEV_CRITICAL, T0);
    assert_int_equal(k.nviews, 4);
    assert_int_equal(s.view, VIEW_OVERVIEW);
}

static void test_takeover(void **state)
{
    (void)state;
    struct kiosk k;
    struct ui_state s;
    ui_state_init(&s, 1, false, true);
    kiosk_init(&k, &s, "overview,map,ops", 20000, 30000, 60000, 0, SEV_CRITICAL, T0);
    assert_false(kiosk_threat(&k, &s, SEV_HIGH, "high one", T0 + 1000));
    assert_int_equal(s.view, VIEW_OVERVIEW);
    assert_true(kiosk_threat(&k, &s, SEV_CRITICAL, "first", T0 + 2000));
    assert_int_equal(s.view, VIEW_FEED);
    assert_string_equal(kiosk_banner(&k, T0 + 2000), "first");
    assert_true(kiosk_threat(&k, &s, SEV_CRITICAL, "second", T0 + 3000)); /* queued */
    assert_string_equal(kiosk_banner(&k, T0 + 3000), "first");
    kiosk_tick(&k, &s, false, T0 + 32000);
    assert_string_equal(kiosk_banner(&k, T0 + 32000), "second");
    kiosk_tick(&k, &s, false, T0 + 62000);
    assert_null(kiosk_banner(&k, T0 + 62000));
    /* rotation stays paused: still on the feed */
    assert_int_equal(s.view, VIEW_FEED);
    kiosk_tick(&k, &s, false, T0 + 90000);
    assert_int_equal(s.view, VIEW_FEED);
    kiosk_tick(&k, &s, false, T0 + 93000);
    assert_int_not_equal(s.view, VIEW_FEED);
    /* --takeover high */
    kiosk_init(&k, &s, NULL, 20000, 30000, 60000, 0, SEV_HIGH, T0);
    assert_true(kiosk_threat(&k, &s, SEV_HIGH, "h", T0));
}

static void test_server_down_and_shift(void **state)
{
    (void)state;
    struct kiosk k;
    struct ui_state s;
    ui_state_init(&s, 1, false, true);
    kiosk_init(&k, &s, NULL, 20000, 30000, 60000, 900000, SEV_CRITICAL, T0);
    assert_true(kiosk_tick(&k, &s, true, T0 + 100));
    assert_int_equal(s.view, VIEW_HEALTH);
    kiosk_tick(&k, &s, true, T0 + 100000);
    assert_int_equal(s.view, VIEW_HEALTH); /* held while down */
    assert_int_equal(k.shift, 0);
    kiosk_tick(&k, &s, false, T0 + 900000);
    assert_int_equal(k.shift, 1);
    kiosk_tick(&k, &s, false, T0 + 1800000);
    assert_int_equal(k.shift, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rotation),
        cmocka_unit_test(test_takeover),
        cmocka_unit_test(test_server_down_and_shift),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
