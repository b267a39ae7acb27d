/*
 * test_capacity.c - the per-second capacity ring on its own: charging and
 * the top-N report, the per-slot key bound and the <other> bucket, key
 * truncation, ring wrap-around and slot reuse, the throttle probe, and the
 * per-minute partition heat ring.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/keys.h"
#include "store/capacity.h"

#define S0 1700000000LL

static void t_charge_and_top(void **state)
{
    (void)state;
    struct capacity *c = capacity_new();
    struct store_capacity_entry e[4];
    size_t n = 99;
    assert_int_equal(capacity_top(c, S0, 60, 4, e, &n), 0);
    assert_int_equal(n, 0);
    capacity_charge(c, S0, "a", 1, 0);
    capacity_charge(c, S0, "b", 0, 5);
    capacity_charge(c, S0 + 1, "a", 2, 0.5);
    capacity_charge(c, S0 + 1, "c", 1, 0);
    assert_int_equal(capacity_top(c, S0 + 1, 60, 4, e, &n), 0);
    assert_int_equal(n, 3);
    assert_string_equal(e[0].pk, "b");
    assert_true(e[0].rcu == 5 && e[0].wcu == 0);
    assert_string_equal(e[1].pk, "a");
    assert_true(e[1].wcu == 3 && e[1].rcu == 0.5);
    assert_string_equal(e[2].pk, "c");
    /* The last second only. */
    assert_int_equal(capacity_top(c, S0 + 1, 1, 4, e, &n), 0);
    assert_int_equal(n, 2);
    assert_string_equal(e[0].pk, "a");
    assert_true(e[0].wcu == 2);
    double w, r;
    capacity_totals(c, S0 + 1, 60, &w, &r);
    assert_true(w == 4 && r == 5.5);
    capacity_totals(c, S0 + 1, 0, &w, &r); /* clamped to 1 s */
    assert_true(w == 3 && r == 0.5);
    capacity_totals(c, S0 + 1, 1000, &w, &r); /* clamped to 60 s */
    assert_true(w == 4);
    capacity_free(c);
}

static void t_slot_bound_and_other(void **state)
{
    (void)state;
    struct capacity *c = capacity_new();
    struct store_capacity_entry *e = calloc(CAPACITY_SLOT_KEYS + 10, sizeof(*e));
    size_t n = 0;
    char k[32];
    for (int i = 0; i < CAPACITY_SLOT_KEYS + 900; i++) {
        snprintf(k, sizeof(k), "key%05d", i);
        capacity_charge(c, S0, k, 1, 0);
    }
    /* A known key still lands on its own entry after the slot is full. */
    capacity_charge(c, S0, "key00000", 1, 0);
    assert_int_equal(capacity_top(c, S0, 60, CAPACITY_SLOT_KEYS + 10, e, &n), 0);
    assert_int_equal(n, CAPACITY_SLOT_KEYS + 1);
    assert_string_equal(e[0].pk, CAPACITY_OTHER);
    assert_true(e[0].wcu == 900);
    assert_string_equal(e[1].pk, "key00000");
    assert_true(e[1].wcu == 2);
    double w;
    capacity_totals(c, S0, 60, &w, NULL);
    assert_true(w == CAPACITY_SLOT_KEYS + 901);
    /* The next second starts empty, and the grown table is reused. */
    capacity_charge(c, S0 + 1, "fresh", 1, 0);
    assert_int_equal(capacity_top(c, S0 + 1, 1, 10, e, &n), 0);
    assert_int_equal(n, 1);
    assert_string_equal(e[0].pk, "fresh");
    /* 60 s later the full slot is reused for a new second: only new keys. */
    capacity_charge(c, S0 + 60, "later", 1, 0);
    assert_int_equal(capacity_top(c, S0 + 60, 60, 10, e, &n), 0);
    assert_int_equal(n, 2);
    assert_string_equal(e[0].pk, "fresh");
    assert_string_equal(e[1].pk, "later");
    free(e);
    capacity_free(c);
}

static void t_long_keys(void **state)
{
    (void)state;
    struct capacity *c = capacity_new();
    struct store_capacity_entry e[4];
    size_t n = 0;
    char a[400], b[400];
    memset(a, 'x', 399);
    a[399] = '\0';
    memcpy(b, a, sizeof(a));
    b[398] = 'y'; /* differs after the 255 kept bytes */
    capacity_charge(c, S0, a, 1, 0);
    capacity_charge(c, S0, a, 1, 0);
    capacity_charge(c, S0, b, 1, 0);
    assert_int_equal(capacity_top(c, S0, 60, 4, e, &n), 0);
    /* Two entries (the hash covers the whole key), shown truncated. */
    assert_int_equal(n, 2);
    assert_int_equal(strlen(e[0].pk), 255);
    assert_int_equal(strncmp(e[0].pk, a, 255), 0);
    assert_true(e[0].wcu == 2 && e[1].wcu == 1);
    capacity_free(c);
}

static void t_would_exceed(void **state)
{
    (void)state;
    struct capacity *c = capacity_new();
    assert_false(capacity_would_exceed(c, S0, "k", 1000, 0, 1000, 3000));
    assert_true(capacity_would_exceed(c, S0, "k", 1001, 0, 1000, 3000));
    capacity_charge(c, S0, "k", 999, 2999.5);
    assert_false(capacity_would_exceed(c, S0, "k", 1, 0, 1000, 3000));
    assert_true(capacity_would_exceed(c, S0, "k", 2, 0, 1000, 3000));
    assert_false(capacity_would_exceed(c, S0, "k", 0, 0.5, 1000, 3000));
    assert_true(capacity_would_exceed(c, S0, "k", 0, 1, 1000, 3000));
    /* Reads are not refused for write consumption and vice versa. */
    capacity_charge(c, S0, "k", 5, 0);
    assert_false(capacity_would_exceed(c, S0, "k", 0, 0.5, 1000, 3000));
    /* Other keys and other seconds are independent. */
    assert_false(capacity_would_exceed(c, S0, "j", 1000, 3000, 1000, 3000));
    assert_false(capacity_would_exceed(c, S0 + 1, "k", 1000, 3000, 1000, 3000));
    capacity_free(c);
}

static void t_negative_and_far_seconds(void **state)
{
    (void)state;
    struct capacity *c = capacity_new();
    struct store_capacity_entry e[2];
    size_t n = 0;
    capacity_charge(c, -5, "neg", 1, 0);
    assert_int_equal(capacity_top(c, -5, 60, 2, e, &n), 0);
    assert_int_equal(n, 1);
    /* A jump forward by exactly 60 s does not show the old second. */
    assert_int_equal(capacity_top(c, 55, 60, 2, e, &n), 0);
    assert_int_equal(n, 0);
    capacity_free(c);
}

static void t_heat(void **state)
{
    (void)state;
    struct capacity *c = capacity_new();
    struct store_heat_minute h[CAPACITY_HEAT_MINUTES + 2];
    int64_t m0 = (S0 / 60) * 60; /* start of a minute */
    /* Minute 0: PRODUCT#a reaches 3 WCU in one second, PRODUCT#b 5 RCU. */
    for (int i = 0; i < 3; i++)
        capacity_charge(c, m0 + 1, "PRODUCT#a", 1, 0);
    capacity_charge(c, m0 + 2, "PRODUCT#a", 2, 0); /* another second: max stays 3 */
    capacity_charge(c, m0 + 2, "PRODUCT#b", 0, 5);
    capacity_charge(c, m0 + 3, "VERIFY#x", 1, 0);
    /* Minute 1: BRAND#z. */
    capacity_charge(c, m0 + 61, "BRAND#z", 4, 0);
    size_t n = capacity_heat(c, m0 + 61, h, CAPACITY_HEAT_MINUTES);
    assert_int_equal(n, 2);
    assert_int_equal(h[0].minute_ms, (m0 + 60) * 1000);
    assert_true(h[0].wcu_max[KF_BRAND] == 4);
    assert_true(h[0].wcu_max[KF_PRODUCT] == 0);
    assert_int_equal(h[1].minute_ms, m0 * 1000);
    assert_true(h[1].wcu_max[KF_PRODUCT] == 3);
    assert_true(h[1].rcu_max[KF_PRODUCT] == 5);
    assert_true(h[1].wcu_max[KF_VERIFY] == 1);
    /* n bounds the output. */
    assert_int_equal(capacity_heat(c, m0 + 61, h, 1), 1);
    /* 30 minutes on, minute 0 has left the ring. */
    n = capacity_heat(c, m0 + 30 * 60, h, CAPACITY_HEAT_MINUTES);
    assert_int_equal(n, 1);
    assert_true(h[0].wcu_max[KF_BRAND] == 4);
    capacity_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_charge_and_top),
        cmocka_unit_test(t_slot_bound_and_other),
        cmocka_unit_test(t_long_keys),
        cmocka_unit_test(t_would_exceed),
        cmocka_unit_test(t_negative_and_far_seconds),
        cmocka_unit_test(t_heat),
    };
    return cmocka_run_group_tests_name("capacity", tests, NULL, NULL);
}
