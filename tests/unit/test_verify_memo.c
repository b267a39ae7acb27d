/*
 * test_verify_memo.c - the verify memo (api/verify_memo.h) against a real
 * SQLite store: entries survive the writes a counted scan makes (scan
 * items, the window state, scanCount ADDs, which update the copy), and
 * are dropped by any other write to their partition, by a rolled-back
 * batch, and by another connection's commit.  A store without a data
 * version gets no usable memo.  A snapshot's scan window survives the
 * scans verify announces and adds, and is dropped (the snapshot kept) by
 * a scan written any other way, and with the snapshot by a rollback.
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

#include <cJSON.h>

#include "api/verify_memo.h"
#include "detect/state.h"
#include "store/store.h"
#include "util/err.h"
#include "util/xalloc.h"
#include "tmpdir.h"

#define PID  "0123456789abcdef0123456789abcdef"
#define PPK  "PRODUCT#" PID
#define CODE "AbCdEfGhIjKl"

struct fx {
    char dir[64], path[96];
    struct store *s;
    struct verify_memo *m;
};

static struct store *open_store(const char *path)
{
    struct store_options o = {0};
    char err[256];
    o.path = path;
    o.durability = STORE_DURABILITY_NORMAL;
    struct store *s = store_open_sqlite(&o, err, sizeof err);
    assert_non_null(s);
    return s;
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/gp-memo-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof f->path, "%s/t.db", f->dir);
    f->s = open_store(f->path);
    f->m = verify_memo_new(f->s);
    assert_non_null(f->m);
    assert_true(verify_memo_usable(f->m));
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    verify_memo_free(f->m);
    store_close(f->s);
    assert_int_equal(ut_rmtree(f->dir), 0);
    free(f);
    return 0;
}

static void put(struct store *s, const char *pk, const char *sk)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "PK", pk);
    cJSON_AddStringToObject(o, "SK", sk);
    cJSON_AddStringToObject(o, "x", "y");
    assert_int_equal(store_put(s, o, NULL), 0);
    cJSON_Delete(o);
}

static void add(struct store *s, const char *pk, const char *sk, const char *attr, double d)
{
    struct store_action a = {.kind = STORE_ACT_ADD, .attr = attr, .delta = d};
    assert_int_equal(store_update(s, pk, sk, &a, 1, NULL, NULL), 0);
}

/* Stores a snapshot with a stored scanCount of 5; returns nothing. */
static void memo_fill(struct fx *f)
{
    struct verify_snap *s = verify_snap_new();
    s->pid = xstrdup(PID);
    s->pk = xstrdup(PPK);
    s->product_json = xstrdup("{}");
    s->events_json = xstrdup("[]");
    s->scan_count = 5;
    verify_memo_put(f->m, PID, s);
    verify_snap_unref(s);
    verify_memo_put_code(f->m, CODE, PID);
}

static bool has_snap(struct fx *f, double *count)
{
    struct verify_snap *s = verify_memo_get(f->m, PID);
    if (!s)
        return false;
    if (count)
        *count = s->scan_count;
    verify_snap_unref(s);
    return true;
}

static void t_scan_writes_keep_entries(void **state)
{
    struct fx *f = *state;
    double n = 0;
    memo_fill(f);
    put(f->s, PPK, "SCAN#2026-12-03T10:00:00.000Z#abcd1234");
    put(f->s, PPK, "DETSTATE");
    add(f->s, PPK, "META", "scanCount", 3);
    add(f->s, "BRAND#b1", "STATS", "scanCount", 3); /* another partition */
    assert_true(verify_memo_usable(f->m));
    assert_true(has_snap(f, &n));
    assert_true(n == 8.0); /* 5 + the folded ADD */
    assert_string_equal(verify_memo_code(f->m, CODE), PID);
}

static void t_other_writes_drop(void **state)
{
    struct fx *f = *state;
    /* a new provenance event */
    memo_fill(f);
    put(f->s, PPK, "EVENT#0002");
    assert_false(has_snap(f, NULL));
    assert_non_null(verify_memo_code(f->m, CODE)); /* the code's entry is its own */
    /* a claim */
    memo_fill(f);
    put(f->s, PPK, "CLAIM");
    assert_false(has_snap(f, NULL));
    /* META changed otherwise (recall, transfer): SET, or ADD to another attribute */
    memo_fill(f);
    struct store_action set = {.kind = STORE_ACT_SET, .attr = "status"};
    cJSON *v = cJSON_CreateString("recalled");
    set.value = v;
    assert_int_equal(store_update(f->s, PPK, "META", &set, 1, NULL, NULL), 0);
    cJSON_Delete(v);
    assert_false(has_snap(f, NULL));
    memo_fill(f);
    add(f->s, PPK, "META", "otherCount", 1);
    assert_false(has_snap(f, NULL));
    /* a delete, and a transaction */
    memo_fill(f);
    assert_int_equal(store_delete(f->s, PPK, "EVENT#0002", NULL), 0);
    assert_false(has_snap(f, NULL));
    memo_fill(f);
    struct store_write w = {.kind = STORE_W_DELETE, .pk = "VERIFY#" CODE, .sk = "META"};
    assert_int_equal(store_transact(f->s, &w, 1, NULL), 0);
    assert_null(verify_memo_code(f->m, CODE));
    assert_true(has_snap(f, NULL));
}

static void t_failed_condition_keeps(void **state)
{
    struct fx *f = *state;
    put(f->s, PPK, "CLAIM");
    memo_fill(f);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "PK", PPK);
    cJSON_AddStringToObject(o, "SK", "CLAIM");
    struct store_cond c = {.kind = STORE_COND_NOT_EXISTS};
    assert_int_equal(store_put(f->s, o, &c), ERR_CONDITION); /* nothing written */
    cJSON_Delete(o);
    assert_true(has_snap(f, NULL));
}

static void t_rollback_resets(void **state)
{
    struct fx *f = *state;
    assert_int_equal(store_batch_begin(f->s), 0);
    memo_fill(f); /* filled from the batch's (uncommitted) view */
    store_batch_abort(f->s);
    assert_false(has_snap(f, NULL));
    assert_null(verify_memo_code(f->m, CODE));
    /* a sub-batch rolled back inside a batch that commits */
    assert_int_equal(store_batch_begin(f->s), 0);
    assert_int_equal(store_subbatch_enter(f->s), 0);
    assert_int_equal(store_batch_begin(f->s), 0);
    memo_fill(f);
    store_batch_abort(f->s);
    store_subbatch_leave(f->s);
    assert_false(has_snap(f, NULL));
    assert_int_equal(store_batch_commit(f->s), 0);
}

static void t_other_connection_resets(void **state)
{
    struct fx *f = *state;
    memo_fill(f);
    put(f->s, "OTHER#1", "META"); /* our own commit: no reset */
    assert_true(verify_memo_usable(f->m));
    assert_true(has_snap(f, NULL));
    struct store *other = open_store(f->path);
    put(other, "OTHER#2", "META"); /* any commit by another connection */
    store_close(other);
    assert_true(verify_memo_usable(f->m));
    assert_false(has_snap(f, NULL));
    assert_null(verify_memo_code(f->m, CODE));
    struct verify_memo_stats st;
    verify_memo_get_stats(f->m, &st);
    assert_true(st.resets >= 1);
    assert_true(st.entries == 0);
}

static void t_dropped_snapshot_stays_alive(void **state)
{
    struct fx *f = *state;
    memo_fill(f);
    struct verify_snap *s = verify_memo_get(f->m, PID);
    assert_non_null(s);
    put(f->s, PPK, "EVENT#0003"); /* drops the entry while we hold it */
    assert_false(has_snap(f, NULL));
    assert_string_equal(s->product_json, "{}"); /* still readable (ASan would tell) */
    verify_snap_unref(s);
}

static void t_bounded(void **state)
{
    struct fx *f = *state;
    char pid[40];
    for (int i = 0; i < VERIFY_MEMO_MAX + 10; i++) {
        snprintf(pid, sizeof pid, "%032x", i);
        struct verify_snap *s = verify_snap_new();
        s->pid = xstrdup(pid);
        verify_memo_put(f->m, pid, s);
        verify_snap_unref(s);
    }
    struct verify_memo_stats st;
    verify_memo_get_stats(f->m, &st);
    assert_true(st.entries <= VERIFY_MEMO_MAX);
    assert_true(st.entries >= 10);
}

/* The window of the memo's current snapshot (a copy), false when none. */
static bool window_of(struct fx *f, struct det_state *out)
{
    struct verify_snap *s = verify_memo_get(f->m, PID);
    bool have = s && s->win;
    if (have)
        *out = *s->win;
    verify_snap_unref(s);
    return have;
}

static void t_scan_window(void **state)
{
    struct fx *f = *state;
    struct det_state st, got;
    struct verify_snap *s;
    const int64_t t0 = 1796292000000; /* 2026-12-03T10:00:00Z */

    memo_fill(f);
    assert_false(window_of(f, &got)); /* none until one is set */
    det_state_init(&st);
    det_state_add_scan(&st, t0, "US");
    det_state_add_scan(&st, t0 + 1000, "FR");
    s = verify_memo_get(f->m, PID);
    verify_memo_window_set(s, &st);
    verify_snap_unref(s);

    /* verify's own scans: announced, written, added */
    for (int i = 0; i < 3; i++) {
        char sk[64];
        snprintf(sk, sizeof sk, "SCAN#2026-12-03T10:00:0%d.000Z#0000000%d", 2 + i, i);
        verify_memo_expect_scan(f->m, PPK);
        put(f->s, PPK, sk);
        verify_memo_expect_scan(f->m, NULL);
        s = verify_memo_get(f->m, PID);
        verify_memo_window_add(s, t0 + 2000 + 1000 * i, "JP");
        verify_snap_unref(s);
    }
    assert_true(verify_memo_usable(f->m));
    assert_true(window_of(f, &got));
    assert_int_equal((int)got.scans, 5);
    assert_int_equal((int)det_state_scans_between(&got, t0, t0 + 10000), 5);
    {
        const char *names[DET_COUNTRIES_MAX];
        assert_int_equal((int)det_state_countries_between(&got, t0, t0 + 10000, names), 3);
    }
    /* an announced scan of another product does not cover this one */
    verify_memo_expect_scan(f->m, "PRODUCT#ffffffffffffffffffffffffffffffff");
    put(f->s, PPK, "SCAN#2026-12-03T10:00:09.000Z#00000009");
    verify_memo_expect_scan(f->m, NULL);
    assert_false(window_of(f, &got));
    assert_true(has_snap(f, NULL)); /* the snapshot itself stays */

    /* a scan nobody announced (an import, another code path) */
    s = verify_memo_get(f->m, PID);
    verify_memo_window_set(s, &st);
    verify_snap_unref(s);
    assert_true(window_of(f, &got));
    put(f->s, PPK, "SCAN#2026-12-03T10:00:10.000Z#0000000a");
    assert_false(window_of(f, &got));

    /* a rolled-back batch takes the snapshot and its window */
    s = verify_memo_get(f->m, PID);
    verify_memo_window_set(s, &st);
    verify_snap_unref(s);
    assert_int_equal(store_batch_begin(f->s), 0);
    verify_memo_expect_scan(f->m, PPK);
    put(f->s, PPK, "SCAN#2026-12-03T10:00:11.000Z#0000000b");
    verify_memo_expect_scan(f->m, NULL);
    assert_true(window_of(f, &got));
    store_batch_abort(f->s);
    assert_false(has_snap(f, NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(t_scan_writes_keep_entries, setup, teardown),
        cmocka_unit_test_setup_teardown(t_other_writes_drop, setup, teardown),
        cmocka_unit_test_setup_teardown(t_failed_condition_keeps, setup, teardown),
        cmocka_unit_test_setup_teardown(t_rollback_resets, setup, teardown),
        cmocka_unit_test_setup_teardown(t_other_connection_resets, setup, teardown),
        cmocka_unit_test_setup_teardown(t_dropped_snapshot_stays_alive, setup, teardown),
        cmocka_unit_test_setup_teardown(t_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(t_scan_window, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
