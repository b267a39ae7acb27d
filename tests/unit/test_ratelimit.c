/*
 * test_ratelimit.c - token buckets per client (api/ratelimit.h) driven by
 * an explicit clock: burst, refill, Retry-After, independence of clients,
 * LRU eviction at the table bound, clocks going backwards.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "api/ratelimit.h"

#define T0 1000000

static void test_bad_args(void **state)
{
    (void)state;
    assert_null(rl_new(0, 10, 10));
    assert_null(rl_new(-1, 10, 10));
    assert_null(rl_new(1, 0.5, 10));
    assert_null(rl_new(1, 2, 0));
}

static void test_burst_then_refuse(void **state)
{
    (void)state;
    struct ratelimit *rl = rl_new(2, 4, 16);
    int retry = -1;
    for (int i = 0; i < 4; i++)
        assert_true(rl_take(rl, "10.0.0.1", T0, &retry));
    assert_false(rl_take(rl, "10.0.0.1", T0, &retry));
    /* one token takes 0.5 s at 2/s: rounded up to 1 s */
    assert_int_equal(retry, 1);
    rl_free(rl);
}

static void test_refill_rate(void **state)
{
    (void)state;
    struct ratelimit *rl = rl_new(2, 4, 16);
    for (int i = 0; i < 4; i++)
        assert_true(rl_take(rl, "c", T0, NULL));
    assert_false(rl_take(rl, "c", T0 + 100, NULL)); /* 0.2 token */
    assert_true(rl_take(rl, "c", T0 + 500, NULL));  /* 1.0 token */
    assert_false(rl_take(rl, "c", T0 + 500, NULL));
    /* a long pause refills to the burst, not beyond */
    int ok = 0;
    for (int i = 0; i < 10; i++)
        ok += rl_take(rl, "c", T0 + 60000, NULL);
    assert_int_equal(ok, 4);
    rl_free(rl);
}

static void test_retry_after_slow_rate(void **state)
{
    (void)state;
    /* 0.1 req/s: an empty bucket needs 10 s for the next token */
    struct ratelimit *rl = rl_new(0.1, 1, 4);
    int retry = 0;
    assert_true(rl_take(rl, "x", T0, &retry));
    assert_false(rl_take(rl, "x", T0, &retry));
    assert_int_equal(retry, 10);
    assert_false(rl_take(rl, "x", T0 + 4000, &retry));
    assert_int_equal(retry, 6);
    assert_true(rl_take(rl, "x", T0 + 10000, &retry));
    rl_free(rl);
}

static void test_clients_independent(void **state)
{
    (void)state;
    struct ratelimit *rl = rl_new(1, 2, 16);
    assert_true(rl_take(rl, "a", T0, NULL));
    assert_true(rl_take(rl, "a", T0, NULL));
    assert_false(rl_take(rl, "a", T0, NULL));
    assert_true(rl_take(rl, "b", T0, NULL));
    assert_true(rl_take(rl, "::1", T0, NULL));
    assert_int_equal(rl_clients(rl), 3);
    rl_free(rl);
}

static void test_lru_eviction(void **state)
{
    (void)state;
    struct ratelimit *rl = rl_new(1, 1, 3);
    char ip[32];
    /* exhaust a, b, c */
    assert_true(rl_take(rl, "a", T0, NULL));
    assert_true(rl_take(rl, "b", T0, NULL));
    assert_true(rl_take(rl, "c", T0, NULL));
    /* touch a so b becomes the least recently used */
    assert_false(rl_take(rl, "a", T0, NULL));
    /* d evicts b */
    assert_true(rl_take(rl, "d", T0, NULL));
    assert_int_equal(rl_clients(rl), 3);
    /* a and c are still exhausted (remembered) ... */
    assert_false(rl_take(rl, "a", T0, NULL));
    assert_false(rl_take(rl, "c", T0, NULL));
    /* ... b was forgotten: full bucket again (and evicts d, the LRU now) */
    assert_true(rl_take(rl, "b", T0, NULL));
    assert_true(rl_take(rl, "d", T0, NULL));
    /* many distinct clients never exceed the bound */
    for (int i = 0; i < 1000; i++) {
        snprintf(ip, sizeof ip, "10.1.%d.%d", i / 256, i % 256);
        assert_true(rl_take(rl, ip, T0, NULL));
    }
    assert_int_equal(rl_clients(rl), 3);
    rl_free(rl);
}

static void test_large_table(void **state)
{
    (void)state;
    struct ratelimit *rl = rl_new(50, 100, RL_DEFAULT_CLIENTS);
    char ip[64];
    for (int i = 0; i < 70000; i++) {
        snprintf(ip, sizeof ip, "2001:db8::%x", i);
        assert_true(rl_take(rl, ip, T0, NULL));
    }
    assert_int_equal(rl_clients(rl), RL_DEFAULT_CLIENTS);
    /* the most recent clients are remembered */
    for (int i = 69990; i < 70000; i++) {
        snprintf(ip, sizeof ip, "2001:db8::%x", i);
        for (int k = 0; k < 99; k++)
            assert_true(rl_take(rl, ip, T0, NULL));
        assert_false(rl_take(rl, ip, T0, NULL));
    }
    rl_free(rl);
}

static void test_clock_backwards(void **state)
{
    (void)state;
    struct ratelimit *rl = rl_new(1, 1, 4);
    assert_true(rl_take(rl, "a", T0, NULL));
    /* going back in time must not create tokens ... */
    assert_false(rl_take(rl, "a", T0 - 5000, NULL));
    /* ... nor delay the refill beyond the real elapsed time */
    assert_true(rl_take(rl, "a", T0 + 1000, NULL));
    rl_free(rl);
}

static void test_long_keys(void **state)
{
    (void)state;
    struct ratelimit *rl = rl_new(1, 1, 4);
    char a[200], b[200];
    memset(a, 'x', sizeof a - 1);
    a[sizeof a - 1] = '\0';
    memcpy(b, a, sizeof b);
    b[150] = 'y'; /* differs only past RL_KEY_MAX: same bucket */
    assert_true(rl_take(rl, a, T0, NULL));
    assert_false(rl_take(rl, b, T0, NULL));
    assert_true(rl_take(rl, NULL, T0, NULL));
    rl_free(rl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_args),
        cmocka_unit_test(test_burst_then_refuse),
        cmocka_unit_test(test_refill_rate),
        cmocka_unit_test(test_retry_after_slow_rate),
        cmocka_unit_test(test_clients_independent),
        cmocka_unit_test(test_lru_eviction),
        cmocka_unit_test(test_large_table),
        cmocka_unit_test(test_clock_backwards),
        cmocka_unit_test(test_long_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
