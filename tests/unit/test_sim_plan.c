/*
 * test_sim_plan.c - the traffic simulator's attack schedule
 * (sim/sim_plan.h): every enabled kind in the first round, the first
 * attack early enough for a first alert within 5 s, all of them within
 * 30 s, then a calmer round robin; disabled kinds never scheduled.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "sim/sim_plan.h"

#define ALL_KINDS ((1u << SIM_ATK_COUNT) - 1)

static void test_first_round_covers_every_kind(void **state)
{
    (void)state;
    struct sim_plan p = {.mask = ALL_KINDS};
    unsigned seen = 0;
    enum sim_attack k;

    assert_int_equal(sim_plan_kinds(&p), SIM_ATK_COUNT);
    double t0 = sim_plan_at(&p, 0, &k);
    /* the first attack leaves the detector time to alert within 5 s */
    assert_true(t0 >= 0 && t0 <= 2.0);
    for (size_t n = 0; n < SIM_ATK_COUNT; n++) {
        double t = sim_plan_at(&p, n, &k);
        /* the last attack of the round still leaves ~10 s before 30 s */
        assert_true(t <= 20.0);
        assert_false(seen & (1u << k));
        seen |= 1u << k;
    }
    assert_int_equal(seen, ALL_KINDS);
}

static void test_calm_afterwards(void **state)
{
    (void)state;
    struct sim_plan p = {.mask = ALL_KINDS, .calm_s = 40};
    enum sim_attack k, k2;
    double prev = -1;

    for (size_t n = 0; n < 4 * SIM_ATK_COUNT; n++) {
        double t = sim_plan_at(&p, n, &k);
        assert_true(t >= prev); /* never goes back */
        if (n >= SIM_ATK_COUNT)
            assert_true(t - prev >= 40.0 - 1e-9);
        else if (n > 0)
            assert_true(t - prev <= SIM_PLAN_STEP_S + 1e-9);
        prev = t;
    }
    /* round robin: the same kind comes back after one cycle */
    sim_plan_at(&p, 2, &k);
    sim_plan_at(&p, 2 + SIM_ATK_COUNT, &k2);
    assert_int_equal(k, k2);
    /* default calm pace */
    struct sim_plan d = {.mask = ALL_KINDS};
    double a = sim_plan_at(&d, SIM_ATK_COUNT, &k);
    double b = sim_plan_at(&d, SIM_ATK_COUNT - 1, &k);
    assert_true(a - b > SIM_PLAN_CALM_S - 1e-9 && a - b < SIM_PLAN_CALM_S + 1e-9);
}

static void test_mask(void **state)
{
    (void)state;
    /* without tampering (a remote server) */
    struct sim_plan p = {.mask = ALL_KINDS & ~(1u << SIM_ATK_TAMPER)};
    enum sim_attack k;

    assert_int_equal(sim_plan_kinds(&p), SIM_ATK_COUNT - 1);
    for (size_t n = 0; n < 20; n++) {
        assert_true(sim_plan_at(&p, n, &k) >= 0);
        assert_int_not_equal(k, SIM_ATK_TAMPER);
    }
    /* one kind only: it repeats */
    struct sim_plan one = {.mask = 1u << SIM_ATK_GAP, .calm_s = 10};
    assert_true(sim_plan_at(&one, 0, &k) <= 2.0);
    assert_int_equal(k, SIM_ATK_GAP);
    assert_true(sim_plan_at(&one, 3, &k) > 29.0);
    assert_int_equal(k, SIM_ATK_GAP);
    /* nothing enabled */
    struct sim_plan none = {0};
    assert_true(sim_plan_at(&none, 0, &k) < 0);
    assert_int_equal(sim_plan_kinds(&none), 0);
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(sim_attack_name(SIM_ATK_CLONE), "clone");
    assert_string_equal(sim_attack_name(SIM_ATK_GAP), "gap");
    assert_string_equal(sim_attack_name(SIM_ATK_COUNT), "?");
    assert_string_equal(sim_attack_alerts(SIM_ATK_CLONE), "geographic_anomaly");
    assert_string_equal(sim_attack_alerts(SIM_ATK_BURST), "burst_scan,scan_velocity");
    assert_string_equal(sim_attack_alerts(SIM_ATK_CLAIM), "claimed_product_scan");
    assert_string_equal(sim_attack_alerts(SIM_ATK_TAMPER), "hash_tampering");
    assert_string_equal(sim_attack_alerts(SIM_ATK_GAP), "chain_gap");
    assert_string_equal(sim_attack_alerts((enum sim_attack) - 1), "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_round_covers_every_kind),
        cmocka_unit_test(test_calm_afterwards),
        cmocka_unit_test(test_mask),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
