/*
 * test_ddb_census.c - the pure folds behind the DynamoDB partition
 * census (store/ddb_census.h): the run-length fold of a Scan segment and
 * the windowed (key, second) fold of stream records, including its
 * reports when time moves on or back, late records and a full window.
 * When GENUPROOF_DDB_ENDPOINT names a DynamoDB (Local) endpoint
 * (tests/e2e/ddb_audit.sh sets it), the walks also run against a table
 * made for the run: a paged, segmented Scan reports every key once with
 * its live items, and the stream walk counts every write once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "store/ddb_census.h"
#include "store/ddb_table.h"
#include "store/store.h"
#include "util/err.h"

/* Reports collected as "pk@sec:writes:bytes" (write walk) or
 * "pk:items:bytes" (partitions). */
struct got {
    char line[32][64];
    int n;
    int stop_at; /* return 7 from the report with this index (-1: never) */
};

static int on_part(void *arg, const char *pk, uint64_t items, uint64_t bytes)
{
    struct got *g = arg;
    if (g->n == g->stop_at)
        return 7;
    assert_true(g->n < 32);
    snprintf(g->line[g->n++], 64, "%s:%llu:%llu", pk, (unsigned long long)items,
             (unsigned long long)bytes);
    return 0;
}

static int on_sec(void *arg, const char *pk, int64_t second, uint64_t writes, uint64_t bytes)
{
    struct got *g = arg;
    if (g->n == g->stop_at)
        return 7;
    assert_true(g->n < 32);
    snprintf(g->line[g->n++], 64, "%s@%lld:%llu:%llu", pk, (long long)second,
             (unsigned long long)writes, (unsigned long long)bytes);
    return 0;
}

static void test_run_fold(void **state)
{
    (void)state;
    struct ddbc_run r = {0};
    struct got g = {.stop_at = -1};
    assert_int_equal(ddbc_run_flush(&r, on_part, &g), 0);
    assert_int_equal(g.n, 0); /* nothing running, nothing reported */
    assert_int_equal(ddbc_run_add(&r, "PRODUCT#a", 10, on_part, &g), 0);
    assert_int_equal(ddbc_run_add(&r, "PRODUCT#a", 5, on_part, &g), 0);
    assert_int_equal(g.n, 0);
    assert_int_equal(ddbc_run_add(&r, "BRAND#b", 7, on_part, &g), 0);
    assert_int_equal(g.n, 1);
    assert_string_equal(g.line[0], "PRODUCT#a:2:15");
    assert_int_equal(ddbc_run_flush(&r, on_part, &g), 0);
    assert_int_equal(g.n, 2);
    assert_string_equal(g.line[1], "BRAND#b:1:7");
    assert_null(r.pk);
}

static void test_run_callback_stops(void **state)
{
    (void)state;
    struct ddbc_run r = {0};
    struct got g = {.stop_at = 0};
    assert_int_equal(ddbc_run_add(&r, "A", 1, on_part, &g), 0);
    assert_int_equal(ddbc_run_add(&r, "B", 1, on_part, &g), 7);
    ddbc_run_clear(&r);
}

static void test_secs_window(void **state)
{
    (void)state;
    struct ddbc_secs *a = ddbc_secs_new(0);
    struct got g = {.stop_at = -1};
    assert_int_equal(ddbc_secs_add(a, "Y", 100, 10, on_sec, &g), 0);
    assert_int_equal(ddbc_secs_add(a, "X", 100, 20, on_sec, &g), 0);
    assert_int_equal(ddbc_secs_add(a, "X", 100, 30, on_sec, &g), 0);
    assert_int_equal(ddbc_secs_add(a, "X", 101, 1, on_sec, &g), 0);
    assert_int_equal(g.n, 0); /* 101 is within the slack of 100 */
    /* 102: second 100 is complete, reported sorted by key. */
    assert_int_equal(ddbc_secs_add(a, "X", 102, 1, on_sec, &g), 0);
    assert_int_equal(g.n, 2);
    assert_string_equal(g.line[0], "X@100:2:50");
    assert_string_equal(g.line[1], "Y@100:1:10");
    assert_int_equal(ddbc_secs_held(a), 2);
    /* 103: second 101 follows. */
    assert_int_equal(ddbc_secs_add(a, "Z", 103, 4, on_sec, &g), 0);
    assert_int_equal(g.n, 3);
    assert_string_equal(g.line[2], "X@101:1:1");
    assert_int_equal(ddbc_secs_held(a), 2);
    assert_int_equal(ddbc_secs_flush(a, on_sec, &g), 0);
    assert_int_equal(g.n, 5);
    assert_string_equal(g.line[3], "X@102:1:1");
    assert_string_equal(g.line[4], "Z@103:1:4");
    assert_int_equal(ddbc_secs_held(a), 0);
    assert_int_equal(ddbc_secs_split(a), 0);
    ddbc_secs_free(a);
}

static void test_secs_back_in_time(void **state)
{
    (void)state;
    struct ddbc_secs *a = ddbc_secs_new(0);
    struct got g = {.stop_at = -1};
    assert_int_equal(ddbc_secs_add(a, "A", 200, 1, on_sec, &g), 0);
    assert_int_equal(ddbc_secs_add(a, "A", 201, 1, on_sec, &g), 0);
    /* Another shard starts in the past: the window is emptied first. */
    assert_int_equal(ddbc_secs_add(a, "B", 50, 1, on_sec, &g), 0);
    assert_int_equal(g.n, 2);
    assert_string_equal(g.line[0], "A@200:1:1");
    assert_string_equal(g.line[1], "A@201:1:1");
    assert_int_equal(ddbc_secs_held(a), 1);
    assert_int_equal(ddbc_secs_split(a), 0);
    assert_int_equal(ddbc_secs_flush(a, on_sec, &g), 0);
    assert_string_equal(g.line[2], "B@50:1:1");
    ddbc_secs_free(a);
}

static void test_secs_late_and_full(void **state)
{
    (void)state;
    struct ddbc_secs *a = ddbc_secs_new(2);
    struct got g = {.stop_at = -1};
    assert_int_equal(ddbc_secs_add(a, "A", 10, 1, on_sec, &g), 0);
    assert_int_equal(ddbc_secs_add(a, "B", 10, 1, on_sec, &g), 0);
    /* Full: the two open entries go out early (split), C is held. */
    assert_int_equal(ddbc_secs_add(a, "C", 10, 1, on_sec, &g), 0);
    assert_int_equal(g.n, 2);
    assert_int_equal(ddbc_secs_split(a), 2);
    assert_int_equal(ddbc_secs_held(a), 1);
    /* Clock 12 reports second 10; a record for 10 afterwards is late. */
    assert_int_equal(ddbc_secs_add(a, "C", 12, 1, on_sec, &g), 0);
    assert_int_equal(g.n, 3);
    assert_string_equal(g.line[2], "C@10:1:1");
    assert_int_equal(ddbc_secs_add(a, "C", 10, 1, on_sec, &g), 0);
    assert_int_equal(ddbc_secs_split(a), 3);
    assert_int_equal(ddbc_secs_flush(a, on_sec, &g), 0);
    assert_int_equal(g.n, 5);
    assert_string_equal(g.line[3], "C@10:1:1");
    assert_string_equal(g.line[4], "C@12:1:1");
    ddbc_secs_free(a);
}

static void test_secs_callback_stops(void **state)
{
    (void)state;
    struct ddbc_secs *a = ddbc_secs_new(0);
    struct got g = {.stop_at = 1};
    char pk[16];
    for (int i = 0; i < 3; i++) {
        snprintf(pk, sizeof pk, "K%d", i);
        assert_int_equal(ddbc_secs_add(a, pk, 5, 1, on_sec, &g), 0);
    }
    assert_int_equal(ddbc_secs_flush(a, on_sec, &g), 7);
    assert_int_equal(g.n, 1);
    assert_int_equal(ddbc_secs_held(a), 0); /* dropped, not leaked */
    ddbc_secs_free(a);
}

static void test_secs_many_keys(void **state)
{
    (void)state;
    /* Enough keys to make the index grow several times. */
    struct ddbc_secs *a = ddbc_secs_new(0);
    struct got g = {.stop_at = -1};
    char pk[16];
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < 5000; i++) {
            snprintf(pk, sizeof pk, "P%d", i);
            assert_int_equal(ddbc_secs_add(a, pk, 7, 1, on_sec, &g), 0);
        }
    assert_int_equal(ddbc_secs_held(a), 5000);
    assert_int_equal(g.n, 0);
    ddbc_secs_free(a);
}

/* ---------- against DynamoDB (Local) ---------- */

#define LIVE_KEYS 10

struct live {
    struct ddb_http *h;
    struct store *s;
    char table[64];
    int64_t t0_ms;
};

/* Per key index: items/bytes reported by a partition walk (and how many
 * times the key came), writes summed by a write walk. */
struct tally {
    uint64_t items[LIVE_KEYS], bytes[LIVE_KEYS], writes[LIVE_KEYS];
    int seen[LIVE_KEYS];
    int others, dup_seconds;
    char secs[256][48];
    int nsecs;
};

static int key_index(const char *pk)
{
    int i;
    if (sscanf(pk, "PRODUCT#live%d", &i) != 1 || i < 0 || i >= LIVE_KEYS)
        return -1;
    return i;
}

static int tally_part(void *arg, const char *pk, uint64_t items, uint64_t bytes)
{
    struct tally *t = arg;
    int i = key_index(pk);
    if (i < 0) {
        t->others++;
        return 0;
    }
    t->seen[i]++;
    t->items[i] += items;
    t->bytes[i] += bytes;
    return 0;
}

static int tally_sec(void *arg, const char *pk, int64_t second, uint64_t writes, uint64_t bytes)
{
    struct tally *t = arg;
    int i = key_index(pk);
    char id[48];
    (void)bytes;
    if (i < 0) {
        t->others++;
        return 0;
    }
    t->writes[i] += writes;
    snprintf(id, sizeof id, "%d@%lld", i, (long long)second);
    for (int k = 0; k < t->nsecs; k++)
        if (!strcmp(t->secs[k], id))
            t->dup_seconds++;
    if (t->nsecs < 256)
        snprintf(t->secs[t->nsecs++], sizeof t->secs[0], "%s", id);
    return 0;
}

static int live_setup(void **state)
{
    const char *ep = getenv("GENUPROOF_DDB_ENDPOINT");
    struct live *l = calloc(1, sizeof *l);
    struct ddb_http_config cfg = {.endpoint = ep};
    struct store_dynamodb_options so = {.endpoint = ep};
    char err[256], sk[32];
    setenv("AWS_ACCESS_KEY_ID", "local", 0);
    setenv("AWS_SECRET_ACCESS_KEY", "local", 0);
    snprintf(l->table, sizeof l->table, "gp_census_%ld", (long)getpid());
    l->h = ddb_http_new(&cfg, err, sizeof err);
    assert_non_null(l->h);
    assert_int_equal(ddb_table_create(l->h, l->table, 60, NULL), 0);
    so.table = l->table;
    l->s = store_open_dynamodb(&so, err, sizeof err);
    assert_non_null(l->s);
    l->t0_ms = (int64_t)time(NULL) * 1000;
    /* Key i holds i + 1 live items; key 0 also an expired one. */
    for (int i = 0; i < LIVE_KEYS; i++)
        for (int j = 0; j <= i; j++) {
            cJSON *it = cJSON_CreateObject();
            char pk[32];
            snprintf(pk, sizeof pk, "PRODUCT#live%d", i);
            snprintf(sk, sizeof sk, "SCAN#%02d", j);
            cJSON_AddStringToObject(it, "PK", pk);
            cJSON_AddStringToObject(it, "SK", sk);
            cJSON_AddStringToObject(it, "pad", "0123456789");
            assert_int_equal(store_put(l->s, it, NULL), 0);
            cJSON_Delete(it);
        }
    cJSON *old = cJSON_CreateObject();
    cJSON_AddStringToObject(old, "PK", "PRODUCT#live0");
    cJSON_AddStringToObject(old, "SK", "OLD");
    cJSON_AddNumberToObject(old, "ttl", 1000);
    assert_int_equal(store_put(l->s, old, NULL), 0);
    cJSON_Delete(old);
    *state = l;
    return 0;
}

static int live_teardown(void **state)
{
    struct live *l = *state;
    store_close(l->s);
    ddb_table_delete(l->h, l->table, 60);
    ddb_http_free(l->h);
    free(l);
    return 0;
}

static void test_live_partitions(void **state)
{
    struct live *l = *state;
    struct tally *t = calloc(1, sizeof *t), *u = calloc(1, sizeof *u);
    /* 3 segments, 4 items a page: keys span pages but come once. */
    assert_int_equal(ddb_census_partitions(l->h, l->table, 3, 4, (double)time(NULL), tally_part, t),
                     0);
    for (int i = 0; i < LIVE_KEYS; i++) {
        assert_int_equal(t->seen[i], 1);
        assert_int_equal(t->items[i], i + 1); /* the expired item is left out */
        assert_true(t->bytes[i] > 0);
    }
    assert_int_equal(t->others, 0);
    /* The driver's store_partitions gives the same. */
    assert_int_equal(store_partitions(l->s, tally_part, u), 0);
    for (int i = 0; i < LIVE_KEYS; i++) {
        assert_int_equal(u->seen[i], 1);
        assert_int_equal(u->items[i], t->items[i]);
        assert_int_equal(u->bytes[i], t->bytes[i]);
    }
    free(t);
    free(u);
}

static void test_live_write_seconds(void **state)
{
    struct live *l = *state;
    struct tally *t = calloc(1, sizeof *t);
    /* DynamoDB Local stamps records to the minute: start 2 minutes back. */
    assert_int_equal(store_write_seconds(l->s, l->t0_ms - 120000, tally_sec, t), 0);
    for (int i = 0; i < LIVE_KEYS; i++)
        assert_int_equal(t->writes[i], i + 1 + (i == 0)); /* + the expired put */
    assert_int_equal(t->dup_seconds, 0);
    /* A window starting after the writes sees none of them. */
    memset(t, 0, sizeof *t);
    assert_int_equal(store_write_seconds(l->s, l->t0_ms + 3600000, tally_sec, t), 0);
    assert_int_equal(t->writes[LIVE_KEYS - 1], 0);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_fold),           cmocka_unit_test(test_run_callback_stops),
        cmocka_unit_test(test_secs_window),        cmocka_unit_test(test_secs_back_in_time),
        cmocka_unit_test(test_secs_late_and_full), cmocka_unit_test(test_secs_callback_stops),
        cmocka_unit_test(test_secs_many_keys),
    };
    int fails = cmocka_run_group_tests(tests, NULL, NULL);
    const char *ep = getenv("GENUPROOF_DDB_ENDPOINT");
    if (!ep || !*ep) {
        printf("ddb_census_live: skipped (GENUPROOF_DDB_ENDPOINT not set)\n");
        return fails ? 1 : 0;
    }
    const struct CMUnitTest live[] = {
        cmocka_unit_test(test_live_partitions),
        cmocka_unit_test(test_live_write_seconds),
    };
    fails += cmocka_run_group_tests_name("ddb_census_live", live, live_setup, live_teardown);
    return fails ? 1 : 0;
}
