/*
 * test_wset.c - packing a detector batch's writes into DynamoDB-sized
 * transactions: at most 100 writes per group, no item twice in a group,
 * increments of one item folded into one update, atomic units never
 * split, FREE writes first and the LAST unit in the final group.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detect/wset.h"
#include "util/err.h"

static cJSON *item(const char *pk, const char *sk)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "PK", pk);
    cJSON_AddStringToObject(o, "SK", sk);
    return o;
}

static const char *w_pk(const struct store_write *w)
{
    return w->kind == STORE_W_PUT ? cJSON_GetObjectItem(w->item, "PK")->valuestring : w->pk;
}

static const char *w_sk(const struct store_write *w)
{
    return w->kind == STORE_W_PUT ? cJSON_GetObjectItem(w->item, "SK")->valuestring : w->sk;
}

/* Asserts no group holds an item twice and none exceeds max writes. */
static void check_groups(const struct wset_plan *p, size_t max)
{
    for (size_t g = 0; g < p->ngroups; g++) {
        size_t n;
        const struct store_write *w = wset_plan_group(p, g, &n);
        assert_true(n >= 1 && n <= max);
        for (size_t i = 0; i < n; i++)
            for (size_t j = i + 1; j < n; j++)
                assert_false(strcmp(w_pk(&w[i]), w_pk(&w[j])) == 0 &&
                             strcmp(w_sk(&w[i]), w_sk(&w[j])) == 0);
    }
}

static void t_fold_counters(void **state)
{
    struct wset *ws = wset_new();
    struct wset_plan p;
    size_t n;
    const struct store_write *w;
    (void)state;

    /* Three products of one brand, each its own atomic unit. */
    for (int i = 0; i < 3; i++) {
        char pk[32];
        snprintf(pk, sizeof(pk), "PRODUCT#p%d", i);
        wset_unit(ws, WSET_ATOMIC);
        assert_int_equal(wset_put(ws, item(pk, "DETSTATE"), NULL), 0);
        wset_add(ws, "BRAND#b", "STATS", "threatCount", 1 + i);
    }
    wset_unit(ws, WSET_ATOMIC);
    wset_add(ws, "BRAND#b", "STATS", "otherCount", 5);
    assert_int_equal(wset_count(ws), 7);
    assert_int_equal(wset_plan(ws, 100, 0, &p), 0);
    assert_int_equal(p.ngroups, 1);
    w = wset_plan_group(&p, 0, &n);
    assert_int_equal(n, 4); /* 3 states + 1 folded update */
    check_groups(&p, 100);
    for (size_t i = 0; i < n; i++) {
        if (w[i].kind != STORE_W_UPDATE)
            continue;
        assert_string_equal(w[i].pk, "BRAND#b");
        assert_int_equal(w[i].nacts, 2);
        assert_string_equal(w[i].acts[0].attr, "threatCount");
        assert_true(w[i].acts[0].delta == 6);
        assert_int_equal(w[i].acts[0].kind, STORE_ACT_ADD);
        assert_string_equal(w[i].acts[1].attr, "otherCount");
        assert_true(w[i].acts[1].delta == 5);
    }
    wset_plan_free(&p);
    wset_free(ws);
}

static void t_split_100(void **state)
{
    struct wset *ws = wset_new();
    struct wset_plan p;
    size_t total = 0, n;
    const struct store_write *w;
    (void)state;

    /* 250 idempotent log entries, 60 products of 3 writes + brand
     * increment, and the checkpoint with a lease check. */
    for (int i = 0; i < 250; i++) {
        char sk[32];
        snprintf(sk, sizeof(sk), "log-%03d", i);
        wset_unit(ws, WSET_FREE);
        assert_int_equal(wset_put(ws, item("OPS_LOG#d", sk), NULL), 0);
    }
    for (int i = 0; i < 60; i++) {
        char pk[32];
        snprintf(pk, sizeof(pk), "PRODUCT#p%02d", i);
        wset_unit(ws, WSET_ATOMIC);
        assert_int_equal(wset_put(ws, item(pk, "DETSTATE"), NULL), 0);
        assert_int_equal(wset_put(ws, item(pk, "ALERTKEY#x"), NULL), 0);
        assert_int_equal(wset_put(ws, item("THREAT#b#2026-06", pk), NULL), 0);
        wset_add(ws, "BRAND#b", "STATS", "threatCount", 1);
    }
    wset_unit(ws, WSET_LAST);
    assert_int_equal(wset_put(ws, item("CHECKPOINT#streams", "shard-1"), NULL), 0);
    wset_check(ws, "LEASE#shard-1", "META", NULL);
    assert_int_equal(wset_plan(ws, 100, 0, &p), 0);
    check_groups(&p, 100);
    assert_true(p.ngroups >= 5);
    /* FREE first: the first two groups are full of log entries. */
    w = wset_plan_group(&p, 0, &n);
    assert_int_equal(n, 100);
    assert_string_equal(w_pk(&w[0]), "OPS_LOG#d");
    /* Product units are whole: every DETSTATE is followed by its alert
     * key and alert in the same group. */
    for (size_t g = 0; g < p.ngroups; g++) {
        w = wset_plan_group(&p, g, &n);
        total += n;
        for (size_t i = 0; i < n; i++) {
            if (w[i].kind == STORE_W_PUT && strcmp(w_sk(&w[i]), "DETSTATE") == 0) {
                assert_true(i + 2 < n);
                assert_string_equal(w_sk(&w[i + 1]), "ALERTKEY#x");
                assert_string_equal(w_sk(&w[i + 2]), w_pk(&w[i]));
            }
        }
    }
    /* The last group ends with the checkpoint and the lease check. */
    w = wset_plan_group(&p, p.ngroups - 1, &n);
    assert_string_equal(w_pk(&w[n - 2]), "CHECKPOINT#streams");
    assert_int_equal(w[n - 1].kind, STORE_W_CHECK);
    /* Everything once, the brand increments once per group. */
    assert_true(total >= 250 + 180 + 2 && total <= 250 + 180 + 2 + p.ngroups);
    wset_plan_free(&p);
    wset_free(ws);
}

static void t_duplicate_item_new_group(void **state)
{
    struct wset *ws = wset_new();
    struct wset_plan p;
    (void)state;

    /* The same item put by two units: they must not share a group. */
    wset_unit(ws, WSET_ATOMIC);
    assert_int_equal(wset_put(ws, item("A", "1"), NULL), 0);
    wset_unit(ws, WSET_ATOMIC);
    assert_int_equal(wset_put(ws, item("A", "1"), NULL), 0);
    assert_int_equal(wset_put(ws, item("A", "2"), NULL), 0);
    assert_int_equal(wset_plan(ws, 100, 0, &p), 0);
    assert_int_equal(p.ngroups, 2);
    check_groups(&p, 100);
    wset_plan_free(&p);
    wset_free(ws);
}

static void t_limits(void **state)
{
    struct wset *ws = wset_new();
    struct wset_plan p;
    cJSON *big;
    char *blob = malloc(300 * 1024);
    (void)state;

    /* One unit larger than a transaction may be. */
    wset_unit(ws, WSET_ATOMIC);
    for (int i = 0; i < 5; i++) {
        char sk[16];
        snprintf(sk, sizeof(sk), "%d", i);
        assert_int_equal(wset_put(ws, item("P", sk), NULL), 0);
    }
    assert_int_equal(wset_plan(ws, 4, 0, &p), ERR_TOOBIG);
    assert_int_equal(p.ngroups, 0);
    assert_int_equal(wset_plan(ws, 5, 0, &p), 0);
    assert_int_equal(p.ngroups, 1);
    wset_plan_free(&p);
    wset_free(ws);

    /* Bytes: 20 items of 300 KB go 13 per 4 MB group at most. */
    memset(blob, 'x', 300 * 1024 - 1);
    blob[300 * 1024 - 1] = '\0';
    ws = wset_new();
    for (int i = 0; i < 20; i++) {
        char sk[16];
        snprintf(sk, sizeof(sk), "%d", i);
        big = item("BIG", sk);
        cJSON_AddStringToObject(big, "blob", blob);
        wset_unit(ws, WSET_FREE);
        assert_int_equal(wset_put(ws, big, NULL), 0);
    }
    assert_int_equal(wset_plan(ws, 100, 0, &p), 0);
    assert_int_equal(p.ngroups, 2);
    {
        size_t n0, n1;
        wset_plan_group(&p, 0, &n0);
        wset_plan_group(&p, 1, &n1);
        assert_int_equal(n0 + n1, 20);
        assert_true(n0 <= 13);
    }
    wset_plan_free(&p);
    wset_free(ws);
    free(blob);

    /* An item without keys is refused. */
    ws = wset_new();
    assert_int_equal(wset_put(ws, cJSON_CreateObject(), NULL), ERR_INVALID);
    assert_int_equal(wset_count(ws), 0);
    assert_int_equal(wset_plan(ws, 100, 0, &p), 0);
    assert_int_equal(p.ngroups, 0);
    wset_plan_free(&p);
    wset_free(ws);
}

static void t_conditions_copied(void **state)
{
    struct wset *ws = wset_new();
    struct wset_plan p;
    cJSON *v = cJSON_CreateString("old");
    struct store_cond c = {.kind = STORE_COND_ATTR_EQ, .attr = "detPos", .value = v};
    size_t n;
    const struct store_write *w;
    (void)state;

    wset_unit(ws, WSET_ATOMIC);
    assert_int_equal(wset_put(ws, item("P", "DETSTATE"), &c), 0);
    cJSON_Delete(v); /* the set keeps its own copy */
    assert_int_equal(wset_plan(ws, 100, 0, &p), 0);
    w = wset_plan_group(&p, 0, &n);
    assert_int_equal(n, 1);
    assert_int_equal(w[0].cond.kind, STORE_COND_ATTR_EQ);
    assert_string_equal(w[0].cond.attr, "detPos");
    assert_string_equal(w[0].cond.value->valuestring, "old");
    wset_plan_free(&p);
    wset_free(ws);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_fold_counters),
        cmocka_unit_test(t_split_100),
        cmocka_unit_test(t_duplicate_item_new_group),
        cmocka_unit_test(t_limits),
        cmocka_unit_test(t_conditions_copied),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
