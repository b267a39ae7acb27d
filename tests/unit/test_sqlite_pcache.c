/*
 * test_sqlite_pcache.c - the page-cache wrapper (store/sqlite_pcache.c):
 * commits after page splits skip SQLite's full-cache truncation walk, and
 * the truncations that matter (a rollback of a transaction that grew the
 * file, a savepoint rolled back) are still forwarded, leaving a database
 * that reads back exactly and passes PRAGMA integrity_check.
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

#include <sqlite3.h>

#include "store/sqlite_pcache.h"
#include "sql_util.h"
#include "tmpdir.h"

struct fx {
    char dir[64], path[96];
    sqlite3 *db;
};

/* Inserts n rows with pseudo-random keys (so pages split in the middle of
 * the B-tree, which is what parks a page at the locking-page number). */
static void insert_random(sqlite3 *db, int n, unsigned *seed)
{
    sqlite3_stmt *st = NULL;
    char key[40], val[300];
    assert_int_equal(
        sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO t(k, v) VALUES(?1, ?2)", -1, &st, NULL),
        SQLITE_OK);
    for (int i = 0; i < n; i++) {
        *seed = *seed * 1103515245u + 12345u;
        snprintf(key, sizeof key, "k%010u", *seed);
        memset(val, 'a' + (int)(*seed % 26), sizeof val - 1);
        val[sizeof val - 1] = '\0';
        sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 2, val, -1, SQLITE_TRANSIENT);
        assert_int_equal(sqlite3_step(st), SQLITE_DONE);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/gp-pcache.XXXXXX");
    if (!f || !mkdtemp(f->dir))
        return -1;
    snprintf(f->path, sizeof f->path, "%s/t.db", f->dir);
    if (sqlite3_open(f->path, &f->db) != SQLITE_OK)
        return -1;
    ut_sql_ok(f->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
                     "PRAGMA cache_size=-32768;"
                     "CREATE TABLE t(k TEXT PRIMARY KEY, v TEXT NOT NULL) WITHOUT ROWID;"
                     "CREATE INDEX t_v ON t(v, k);");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    sqlite3_close(f->db);
    if (ut_rmtree(f->dir) != 0)
        return -1;
    free(f);
    return 0;
}

/* Installed before SQLite initialized (main calls it first). */
static void t_installed(void **state)
{
    (void)state;
    assert_true(sqlite_pcache_install());
    assert_true(sqlite_pcache_install()); /* idempotent */
}

/* Many small commits that split pages: most commit-time truncations are
 * skipped (without the wrapper every one after a split walks the cache). */
static void t_commits_skip(void **state)
{
    struct fx *f = *state;
    struct sqlite_pcache_stats a, b;
    unsigned seed = 7;

    sqlite_pcache_stats(&a);
    for (int txn = 0; txn < 200; txn++) {
        ut_sql_ok(f->db, "BEGIN IMMEDIATE");
        insert_random(f->db, 20, &seed);
        ut_sql_ok(f->db, "COMMIT");
    }
    sqlite_pcache_stats(&b);
    assert_true(b.truncs_skipped - a.truncs_skipped >= 150);
    assert_int_equal(ut_sql_int(f->db, "SELECT count(*) FROM t"), 4000);
    ut_sql_integrity(f->db);
}

/* A transaction that grows the file and rolls back must drop the pages
 * past the old end: that truncation is forwarded, and the data after it
 * is the data before it. */
static void t_rollback_forwarded(void **state)
{
    struct fx *f = *state;
    struct sqlite_pcache_stats a, b;
    unsigned seed = 11, seed2;
    int64_t pages, n;

    ut_sql_ok(f->db, "BEGIN IMMEDIATE");
    insert_random(f->db, 1000, &seed);
    ut_sql_ok(f->db, "COMMIT");
    pages = ut_sql_int(f->db, "PRAGMA page_count");
    n = ut_sql_int(f->db, "SELECT count(*) FROM t");
    assert_int_equal(n, 1000);

    sqlite_pcache_stats(&a);
    seed2 = seed;
    ut_sql_ok(f->db, "BEGIN IMMEDIATE");
    insert_random(f->db, 3000, &seed2);
    assert_true(ut_sql_int(f->db, "PRAGMA page_count") > pages + 50);
    ut_sql_ok(f->db, "ROLLBACK");
    sqlite_pcache_stats(&b);
    assert_true(b.truncs_forwarded > a.truncs_forwarded);
    assert_int_equal(ut_sql_int(f->db, "PRAGMA page_count"), pages);
    assert_int_equal(ut_sql_int(f->db, "SELECT count(*) FROM t"), n);
    ut_sql_integrity(f->db);

    /* The same rows again, committed this time: the pages reused past the
     * old end hold the new content, not what the rollback threw away. */
    seed2 = seed;
    ut_sql_ok(f->db, "BEGIN IMMEDIATE");
    insert_random(f->db, 3000, &seed2);
    ut_sql_ok(f->db, "COMMIT");
    assert_int_equal(ut_sql_int(f->db, "SELECT count(*) FROM t"), 4000);
    ut_sql_integrity(f->db);
}

/* Savepoints rolled back inside a committed transaction (the store's
 * sub-batches): only the released work survives. */
static void t_savepoint_rollback(void **state)
{
    struct fx *f = *state;
    unsigned seed = 23;

    ut_sql_ok(f->db, "BEGIN IMMEDIATE");
    insert_random(f->db, 500, &seed);
    for (int i = 0; i < 20; i++) {
        ut_sql_ok(f->db, "SAVEPOINT s");
        insert_random(f->db, 200, &seed);
        ut_sql_ok(f->db, (i % 2) ? "RELEASE s" : "ROLLBACK TO s; RELEASE s");
    }
    ut_sql_ok(f->db, "COMMIT");
    assert_int_equal(ut_sql_int(f->db, "SELECT count(*) FROM t"), 500 + 10 * 200);
    ut_sql_integrity(f->db);

    /* A fresh connection (cold cache) reads the same. */
    {
        sqlite3 *db2 = NULL;
        assert_int_equal(sqlite3_open(f->path, &db2), SQLITE_OK);
        assert_int_equal(ut_sql_int(db2, "SELECT count(*) FROM t"), 500 + 10 * 200);
        ut_sql_integrity(db2);
        sqlite3_close(db2);
    }
}

int main(void)
{
    /* Before anything initializes SQLite. */
    if (!sqlite_pcache_install()) {
        fprintf(stderr, "sqlite_pcache_install failed\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_installed),
        cmocka_unit_test_setup_teardown(t_commits_skip, setup, teardown),
        cmocka_unit_test_setup_teardown(t_rollback_forwarded, setup, teardown),
        cmocka_unit_test_setup_teardown(t_savepoint_rollback, setup, teardown),
    };
    return cmocka_run_group_tests_name("sqlite_pcache", tests, NULL, NULL);
}
