/*
 * test_store_bulk.c - store_set_bulk() on the SQLite driver: normally the
 * WAL is checkpointed every 1,000 pages, so under a stream of writes it
 * never holds many more frames; in bulk mode it holds up to 10,000 before
 * a checkpoint; turning bulk off again brings the normal threshold back.
 * Every write stays readable and the file passes an integrity check.
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
#include <sqlite3.h>

#include "sqlite_check.h"

#include "store/store.h"
#include "store/store_sqlite.h"
#include "tmpdir.h"

struct fx {
    char dir[64], path[96];
    struct store *s;
    int next;
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    struct store_options o = {0};
    char err[256];
    snprintf(f->dir, sizeof f->dir, "/tmp/gp-bulk-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof f->path, "%s/t.db", f->dir);
    o.path = f->path;
    o.durability = STORE_DURABILITY_NORMAL;
    f->s = store_open_sqlite(&o, err, sizeof err);
    assert_non_null(f->s);
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

/* Frames in the WAL now (mxFrame), asked through a second connection
 * with a passive checkpoint, which also copies them, so that the next
 * phase starts with a WAL that may restart from its beginning. */
static long wal_frames(const struct fx *f)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    long frames = -1;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA wal_checkpoint(PASSIVE)", -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    frames = sqlite3_column_int(st, 1);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return frames;
}

/* Writes n items of ~3 KB, 50 per commit; returns the WAL frames at the
 * end. */
static long write_items(struct fx *f, int n)
{
    char pk[32], sk[32];
    char *val = malloc(3001);
    memset(val, 'x', 3000);
    val[3000] = '\0';
    for (int i = 0; i < n; i++) {
        if (i % 50 == 0)
            assert_int_equal(store_batch_begin(f->s), 0);
        cJSON *it = cJSON_CreateObject();
        snprintf(pk, sizeof pk, "P#%d", f->next / 20);
        snprintf(sk, sizeof sk, "S#%08d", f->next++);
        cJSON_AddStringToObject(it, "PK", pk);
        cJSON_AddStringToObject(it, "SK", sk);
        cJSON_AddStringToObject(it, "v", val);
        assert_int_equal(store_put(f->s, it, NULL), 0);
        cJSON_Delete(it);
        if (i % 50 == 49 || i == n - 1)
            assert_int_equal(store_batch_commit(f->s), 0);
    }
    free(val);
    return wal_frames(f);
}

static void t_bulk_threshold(void **state)
{
    struct fx *f = *state;
    long normal, bulk, after;

    /* ~3 pages per item with its stream record: 3,000 items ~ 9,000 pages. */
    normal = write_items(f, 3000);
    assert_true(normal > 0 && normal < 1500);

    store_set_bulk(f->s, true);
    bulk = write_items(f, 3000);
    assert_true(bulk > 3000);
    assert_true(bulk < STORE_SQLITE_BULK_CHECKPOINT + 2000);

    /* Back to normal: the next checkpoint comes at 1,000 pages again, so
     * the WAL restarts from its beginning and stops growing. */
    store_set_bulk(f->s, false);
    after = write_items(f, 3000);
    print_message("wal frames at the end: normal %ld bulk %ld after %ld\n", normal, bulk, after);
    assert_true(after > 0 && after < 1500);

    /* Everything is there. */
    {
        cJSON *it = NULL;
        assert_int_equal(store_get(f->s, "P#0", "S#00000000", true, &it), 0);
        cJSON_Delete(it);
        it = NULL;
        assert_int_equal(store_get(f->s, "P#449", "S#00008999", true, &it), 0);
        cJSON_Delete(it);
    }
    sqlite_check_file(f->path, "SELECT count(*) FROM items", 9000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(t_bulk_threshold, setup, teardown),
    };
    return cmocka_run_group_tests_name("store_bulk", tests, NULL, NULL);
}
