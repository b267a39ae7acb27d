/*
 * test_census.c - the hot-partition report: partition and write-second
 * walks of the SQLite store, folding into families, the hottest keys,
 * the verdict thresholds, and the JSON shape.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/census.h"
#include "store/store.h"
#include "store/store_int.h"
#include "util/err.h"
#include "tmpdir.h"

#define T0 1780000000000LL /* ms, a fixed store clock */

static int64_t clock_ms;
static int64_t fixed_clock(void *arg)
{
    (void)arg;
    return clock_ms;
}

struct fx {
    char dir[64], path[96];
    struct store *s;
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    struct store_options o = {0};
    char err[256];
    snprintf(f->dir, sizeof f->dir, "/tmp/gp-census-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof f->path, "%s/t.db", f->dir);
    o.path = f->path;
    o.durability = STORE_DURABILITY_NORMAL;
    f->s = store_open_sqlite(&o, err, sizeof err);
    assert_non_null(f->s);
    clock_ms = T0;
    store_set_clock(f->s, fixed_clock, NULL);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    store_close(f->s);
    assert_int_equal(ut_rmtree(f->dir), 0);
    free(f);
    return 0;
}

static void put(struct store *s, const char *pk, const char *sk, size_t pad)
{
    cJSON *it = cJSON_CreateObject();
    char *fill = malloc(pad + 1);
    memset(fill, 'x', pad);
    fill[pad] = '\0';
    cJSON_AddStringToObject(it, "PK", pk);
    cJSON_AddStringToObject(it, "SK", sk);
    cJSON_AddStringToObject(it, "pad", fill);
    assert_int_equal(store_put(s, it, NULL), 0);
    cJSON_Delete(it);
    free(fill);
}

static const struct census_family *fam(const struct census *c, const char *pk)
{
    return &c->fam[key_family_of(pk)];
}

static void t_walks_and_families(void **state)
{
    struct fx *f = *state;
    struct census *c = calloc(1, sizeof *c);
    char sk[32];
    /* Second T0: product A takes 30 scans, product B 2; the index 1. */
    for (int i = 0; i < 30; i++) {
        snprintf(sk, sizeof sk, "SCAN#%03d", i);
        put(f->s, "PRODUCT#A", sk, 10);
    }
    put(f->s, "PRODUCT#B", "SCAN#1", 10);
    put(f->s, "PRODUCT#B", "SCAN#2", 10);
    put(f->s, "PRODUCT_INDEX", "PRODUCT#x", 10);
    /* Two seconds later: B takes 5 writes of ~3 KB each (15 WCU). */
    clock_ms = T0 + 2000;
    for (int i = 0; i < 5; i++) {
        snprintf(sk, sizeof sk, "BIG#%d", i);
        put(f->s, "PRODUCT#B", sk, 3000);
    }
    assert_int_equal(census_collect(f->s, T0 - 1000, T0 + 3000, c), 0);
    assert_true(c->have_items && c->have_writes);
    const struct census_family *p = fam(c, "PRODUCT#A");
    assert_int_equal(p->keys, 2);
    assert_int_equal(p->items, 37);
    assert_string_equal(p->biggest_pk, "PRODUCT#A");
    assert_int_equal(p->biggest_items, 30);
    assert_int_equal(p->writes, 37);
    assert_int_equal(p->write_keys, 2);
    /* A: 30 small writes in one second -> 30 WCU; B: 5 x 3 KB -> 15. */
    assert_true(p->peak_wcu == 30.0);
    assert_string_equal(p->peak_pk, "PRODUCT#A");
    assert_int_equal(p->peak_second, T0 / 1000);
    assert_int_equal(c->ntop, 3);
    assert_string_equal(c->top[0].pk, "PRODUCT#A");
    assert_string_equal(c->top[1].pk, "PRODUCT#B");
    assert_true(c->top[1].peak_wcu >= 14.0 && c->top[1].peak_wcu <= 16.0);
    assert_int_equal(c->top[1].writes, 7);
    /* A single-key family is watched as soon as it is written. */
    assert_int_equal(fam(c, "PRODUCT_INDEX")->risk, RISK_WATCH);
    assert_int_equal(p->risk, RISK_LOW);
    assert_int_equal(fam(c, "VERIFY#x")->risk, RISK_NONE);
    /* A window after the first second sees only B's big writes. */
    assert_int_equal(census_collect(f->s, T0 + 1000, T0 + 3000, c), 0);
    assert_int_equal(fam(c, "PRODUCT#A")->writes, 5);
    assert_int_equal(fam(c, "PRODUCT#A")->items, 37); /* items are not windowed */
    free(c);
}

static void t_thresholds(void **state)
{
    (void)state;
    struct census c;
    memset(&c, 0, sizeof c);
    c.fam[KF_PRODUCT].writes = 1;
    c.fam[KF_PRODUCT].peak_wcu = 800;
    c.fam[KF_BRAND].writes = 1;
    c.fam[KF_BRAND].peak_wcu = 799;
    c.fam[KF_VERIFY].writes = 1;
    c.fam[KF_VERIFY].peak_wcu = 100;
    c.fam[KF_HASH].writes = 1;
    c.fam[KF_HASH].peak_wcu = 99;
    c.fam[KF_OPS_LOG].writes = 1;
    c.fam[KF_OPS_LOG].peak_wcu = 500;
    c.fam[KF_BRAND_INDEX].keys = 1; /* items but no writes */
    census_judge(&c);
    assert_int_equal(c.fam[KF_PRODUCT].risk, RISK_CRITICAL);
    assert_int_equal(c.fam[KF_BRAND].risk, RISK_HIGH);
    assert_int_equal(c.fam[KF_VERIFY].risk, RISK_WATCH);
    assert_int_equal(c.fam[KF_HASH].risk, RISK_LOW);
    assert_int_equal(c.fam[KF_OPS_LOG].risk, RISK_HIGH);
    assert_non_null(strstr(c.fam[KF_OPS_LOG].why, "period"));
    assert_int_equal(c.fam[KF_BRAND_INDEX].risk, RISK_LOW);
    assert_non_null(strstr(c.fam[KF_BRAND_INDEX].why, "no writes"));
    assert_int_equal(c.fam[KF_DLQ].risk, RISK_NONE);
    assert_string_equal(census_risk_name(RISK_CRITICAL), "critical");
}

static void t_json_and_text(void **state)
{
    struct fx *f = *state;
    struct census *c = calloc(1, sizeof *c);
    put(f->s, "OPS_LOG#2026-05-28", "a", 5);
    put(f->s, "OPS_LOG#2026-05-28", "b", 5);
    assert_int_equal(census_collect(f->s, T0 - 1000, T0 + 1000, c), 0);
    cJSON *j = census_json(c);
    cJSON *fams = cJSON_GetObjectItem(j, "families");
    assert_int_equal(cJSON_GetArraySize(fams), 1);
    cJSON *o = cJSON_GetArrayItem(fams, 0);
    assert_string_equal(cJSON_GetObjectItem(o, "pattern")->valuestring, "OPS_LOG#<YYYY-MM-DD>");
    assert_true(cJSON_GetObjectItem(o, "writes")->valuedouble == 2);
    assert_true(cJSON_GetObjectItem(o, "peakWcu")->valuedouble == 2);
    assert_string_equal(cJSON_GetObjectItem(o, "risk")->valuestring, "low");
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "hottest"), 0), "key")
            ->valuestring,
        "OPS_LOG#2026-05-28");
    cJSON_Delete(j);
    char *text = NULL;
    size_t len = 0;
    FILE *mf = open_memstream(&text, &len);
    census_print(mf, c);
    fclose(mf);
    assert_non_null(strstr(text, "OPS_LOG#<YYYY-MM-DD>"));
    assert_non_null(strstr(text, "OPS_LOG#2026-05-28"));
    free(text);
    free(c);
}

static int stop_after_one(void *arg, const char *pk, uint64_t items, uint64_t bytes)
{
    (void)pk;
    (void)items;
    (void)bytes;
    ++*(int *)arg;
    return 7;
}

static void t_callback_stops(void **state)
{
    struct fx *f = *state;
    int calls = 0;
    put(f->s, "A#1", "x", 1);
    put(f->s, "B#1", "x", 1);
    assert_int_equal(store_partitions(f->s, stop_after_one, &calls), 7);
    assert_int_equal(calls, 1);
    assert_int_equal(store_partitions(f->s, NULL, NULL), ERR_INVALID);
}

/* A driver offering only an unordered write walk (as DynamoDB's, which
 * reports in stream-time batches). */
static void fake_close(struct store *s)
{
    free(s);
}

static int fake_write_seconds(struct store *s, int64_t since_ms, store_write_second_cb cb,
                              void *arg)
{
    (void)s;
    (void)since_ms;
    int rc = cb(arg, "PRODUCT#B", 12, 1, 100);
    if (!rc)
        rc = cb(arg, "PRODUCT#A", 10, 3, 10);
    if (!rc)
        rc = cb(arg, "PRODUCT#B", 10, 1, 5000); /* 5 WCU: ties A's peak */
    if (!rc)
        rc = cb(arg, "PRODUCT#A", 11, 5, 0);
    if (!rc)
        rc = cb(arg, "OPS_LOG#2026-05-28", 11, 2, 0);
    return rc;
}

static const struct store_ops fake_ops = {
    .name = "fake",
    .close = fake_close,
    .write_seconds = fake_write_seconds,
};

static void t_unordered_walk(void **state)
{
    (void)state;
    struct store_options o = {0};
    struct store *s = calloc(1, sizeof *s);
    struct census *c = calloc(1, sizeof *c);
    store_base_init(s, &fake_ops, &o);
    assert_int_equal(census_collect(s, 0, 20000, c), 0);
    assert_false(c->have_items);
    assert_true(c->have_writes);
    const struct census_family *p = fam(c, "PRODUCT#A");
    assert_int_equal(p->writes, 10);
    assert_int_equal(p->write_keys, 2);
    assert_true(p->peak_wcu == 5.0);
    assert_string_equal(p->peak_pk, "PRODUCT#A"); /* tie: lower key */
    assert_int_equal(p->peak_second, 11);
    assert_int_equal(c->ntop, 3);
    assert_string_equal(c->top[0].pk, "PRODUCT#A");
    assert_int_equal(c->top[0].writes, 8);
    assert_int_equal(c->top[0].peak_second, 11);
    assert_string_equal(c->top[1].pk, "PRODUCT#B");
    assert_int_equal(c->top[1].writes, 2);
    assert_int_equal(c->top[1].peak_second, 10);
    assert_string_equal(c->top[2].pk, "OPS_LOG#2026-05-28");
    assert_false(c->keys_truncated);
    store_close(s);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(t_walks_and_families, setup, teardown),
        cmocka_unit_test(t_thresholds),
        cmocka_unit_test_setup_teardown(t_json_and_text, setup, teardown),
        cmocka_unit_test_setup_teardown(t_callback_stops, setup, teardown),
        cmocka_unit_test(t_unordered_walk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
