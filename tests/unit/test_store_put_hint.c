/*
 * test_store_put_hint.c - the SQLite driver's "written lately" hint: a
 * blind put of an item this connection wrote before tries the UPDATE
 * first.  The hint must never change a result: the item and its stream
 * record kind (INSERT / MODIFY) are the same as without it, also when the
 * hinted row is gone (deleted here, deleted by another connection, or
 * written in a batch that was rolled back).
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

#include "store/store.h"
#include "util/err.h"

struct db {
    char dir[64], path[128];
};

static void db_open(struct db *d, struct store **s)
{
    struct store_options o = {.durability = STORE_DURABILITY_NORMAL};
    char tmpl[] = "/tmp/gp-puthint-XXXXXX", err[256];
    assert_non_null(mkdtemp(tmpl));
    snprintf(d->dir, sizeof(d->dir), "%s", tmpl);
    snprintf(d->path, sizeof(d->path), "%s/store.db", tmpl);
    o.path = d->path;
    *s = store_open_sqlite(&o, err, sizeof(err));
    assert_non_null(*s);
}

static struct store *db_second(const struct db *d)
{
    struct store_options o = {.path = d->path, .durability = STORE_DURABILITY_NORMAL};
    char err[256];
    struct store *s = store_open_sqlite(&o, err, sizeof(err));
    assert_non_null(s);
    return s;
}

static void db_close(struct db *d, struct store *s)
{
    char p[160];
    store_close(s);
    unlink(d->path);
    snprintf(p, sizeof(p), "%s-wal", d->path);
    unlink(p);
    snprintf(p, sizeof(p), "%s-shm", d->path);
    unlink(p);
    rmdir(d->dir);
}

/* Puts PK "H"/sk with attribute n = v. */
static int put(struct store *s, const char *sk, double v)
{
    cJSON *it = cJSON_CreateObject();
    int rc;
    cJSON_AddStringToObject(it, "PK", "H");
    cJSON_AddStringToObject(it, "SK", sk);
    cJSON_AddNumberToObject(it, "n", v);
    rc = store_put(s, it, NULL);
    cJSON_Delete(it);
    return rc;
}

/* n of H/sk, or -1 when absent. */
static double value(struct store *s, const char *sk)
{
    cJSON *it = NULL;
    double v = -1;
    if (store_get(s, "H", sk, true, &it) == 0)
        v = cJSON_GetObjectItemCaseSensitive(it, "n")->valuedouble;
    cJSON_Delete(it);
    return v;
}

/* Kind of the newest stream record. */
static enum store_change last_kind(struct store *s)
{
    struct stream_record *r = NULL;
    uint64_t head = 0;
    size_t n = 0;
    enum store_change k;
    assert_int_equal(store_stream_head(s, &head), 0);
    assert_int_equal(store_stream_read(s, head - 1, 1, &r, &n), 0);
    assert_int_equal(n, 1);
    k = r[0].kind;
    store_stream_free(r, n);
    return k;
}

static void t_rewrite_is_modify(void **state)
{
    (void)state;
    struct db d;
    struct store *s;
    db_open(&d, &s);
    assert_int_equal(put(s, "a", 1), 0);
    assert_int_equal(last_kind(s), STORE_INSERT);
    for (int i = 2; i < 5; i++) {
        assert_int_equal(put(s, "a", i), 0);
        assert_int_equal(last_kind(s), STORE_MODIFY);
        assert_true(value(s, "a") == i);
    }
    db_close(&d, s);
}

static void t_stale_hint_is_insert(void **state)
{
    (void)state;
    struct db d;
    struct store *s, *other;
    db_open(&d, &s);

    /* Deleted here. */
    assert_int_equal(put(s, "a", 1), 0);
    assert_int_equal(store_delete(s, "H", "a", NULL), 0);
    assert_int_equal(put(s, "a", 2), 0);
    assert_int_equal(last_kind(s), STORE_INSERT);
    assert_true(value(s, "a") == 2);

    /* Deleted by another connection. */
    assert_int_equal(put(s, "b", 1), 0);
    other = db_second(&d);
    assert_int_equal(store_delete(other, "H", "b", NULL), 0);
    store_close(other);
    assert_int_equal(put(s, "b", 2), 0);
    assert_int_equal(last_kind(s), STORE_INSERT);
    assert_true(value(s, "b") == 2);

    /* Written in a batch that was rolled back, inside a new batch. */
    assert_int_equal(store_batch_begin(s), 0);
    assert_int_equal(put(s, "c", 1), 0);
    store_batch_abort(s);
    assert_true(value(s, "c") == -1);
    assert_int_equal(store_batch_begin(s), 0);
    assert_int_equal(put(s, "c", 2), 0);
    assert_int_equal(put(s, "c", 3), 0);
    assert_int_equal(store_batch_commit(s), 0);
    assert_true(value(s, "c") == 3);
    {
        struct stream_record *r = NULL;
        uint64_t head = 0;
        size_t n = 0;
        assert_int_equal(store_stream_head(s, &head), 0);
        assert_int_equal(store_stream_read(s, head - 2, 2, &r, &n), 0);
        assert_int_equal(n, 2);
        assert_int_equal(r[0].kind, STORE_INSERT);
        assert_int_equal(r[1].kind, STORE_MODIFY);
        store_stream_free(r, n);
    }
    db_close(&d, s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_rewrite_is_modify),
        cmocka_unit_test(t_stale_hint_is_insert),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
