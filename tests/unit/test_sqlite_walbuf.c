/*
 * test_sqlite_walbuf.c - the WAL-coalescing VFS (store/sqlite_walbuf.c):
 * a connection writing through it makes far fewer writes than SQLite asks
 * for, every commit is visible to another connection (default VFS) the
 * moment it returns, and the file holds exactly what a plain connection
 * doing the same work writes: with transactions that spill pages before
 * their commit, roll back, roll back to savepoints, restart the WAL after
 * a checkpoint, fail a write, or are killed (kill -9) mid-stream.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store/sqlite_walbuf.h"
#include "sql_util.h"
#include "tmpdir.h"

struct fx {
    char dir[64], path[128], ref[160];
    sqlite3 *w;      /* through the shim */
    sqlite3 *ref_db; /* the same work, default VFS, another file */
    sqlite3 *r;      /* a reader of path, default VFS */
};

static int exec_rc(sqlite3 *db, const char *sql)
{
    return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

static const char SCHEMA[] = "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                             "CREATE TABLE IF NOT EXISTS t(k TEXT PRIMARY KEY, v TEXT NOT NULL) "
                             "WITHOUT ROWID;"
                             "CREATE INDEX IF NOT EXISTS t_v ON t(v, k);";

static sqlite3 *open_db(const char *path, const char *vfs)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, vfs),
                     SQLITE_OK);
    ut_sql_ok(db, SCHEMA);
    return db;
}

/* Runs sql on both the shim's connection and the reference. */
static void both(struct fx *f, const char *sql)
{
    ut_sql_ok(f->w, sql);
    ut_sql_ok(f->ref_db, sql);
}

/* n rows with pseudo-random keys and values of varied length. */
static void insert_random(sqlite3 *a, sqlite3 *b, int n, unsigned *seed)
{
    char sql[700], val[500];
    for (int i = 0; i < n; i++) {
        *seed = *seed * 1103515245u + 12345u;
        size_t len = 50 + *seed % 400;
        memset(val, 'a' + (int)(*seed % 26), len);
        val[len] = '\0';
        snprintf(sql, sizeof sql, "INSERT OR REPLACE INTO t(k, v) VALUES('k%010u', '%s')", *seed,
                 val);
        ut_sql_ok(a, sql);
        if (b)
            ut_sql_ok(b, sql);
    }
}

/* The shim's file and the reference hold the same rows. */
static void same_content(struct fx *f)
{
    char sql[400];
    snprintf(sql, sizeof sql, "ATTACH '%s' AS ref", f->ref);
    ut_sql_ok(f->r, sql);
    assert_int_equal(ut_sql_int(f->r, "SELECT count(*) FROM (SELECT k, v FROM main.t EXCEPT "
                                      "SELECT k, v FROM ref.t)"),
                     0);
    assert_int_equal(ut_sql_int(f->r, "SELECT count(*) FROM (SELECT k, v FROM ref.t EXCEPT "
                                      "SELECT k, v FROM main.t)"),
                     0);
    assert_int_equal(ut_sql_int(f->r, "SELECT count(*) FROM main.t"),
                     ut_sql_int(f->r, "SELECT count(*) FROM ref.t"));
    ut_sql_ok(f->r, "DETACH ref");
    ut_sql_integrity(f->r);
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    if (!f || !sqlite_walbuf_register())
        return -1;
    ut_db_dir("walbuf", f->dir, f->path);
    snprintf(f->ref, sizeof f->ref, "%s/ref.db", f->dir);
    f->w = open_db(f->path, WALBUF_VFS_NAME);
    f->ref_db = open_db(f->ref, NULL);
    f->r = open_db(f->path, NULL);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    sqlite3_close(f->w);
    sqlite3_close(f->ref_db);
    sqlite3_close(f->r);
    if (ut_rmtree(f->dir) != 0)
        return -1;
    free(f);
    return 0;
}

static void t_registered(void **state)
{
    (void)state;
    const char *name = sqlite_walbuf_register();
    assert_non_null(name);
    assert_string_equal(name, WALBUF_VFS_NAME);
    assert_ptr_equal(sqlite_walbuf_register(), name); /* idempotent */
    assert_non_null(sqlite3_vfs_find(WALBUF_VFS_NAME));
    assert_ptr_not_equal(sqlite3_vfs_find(NULL), sqlite3_vfs_find(WALBUF_VFS_NAME));
}

/* Each commit is one write (or a few, for a large one), and the reader
 * sees it as soon as COMMIT returns. */
static void t_coalesces_and_visible(void **state)
{
    struct fx *f = *state;
    unsigned seed = 7;
    struct sqlite_walbuf_stats a, b;
    sqlite_walbuf_stats(&a);
    int64_t want = ut_sql_int(f->r, "SELECT count(*) FROM t");
    for (int c = 0; c < 60; c++) {
        both(f, "BEGIN IMMEDIATE");
        insert_random(f->w, f->ref_db, 40, &seed);
        both(f, "COMMIT");
        want = ut_sql_int(f->ref_db, "SELECT count(*) FROM t");
        assert_int_equal(ut_sql_int(f->r, "SELECT count(*) FROM t"), want);
    }
    sqlite_walbuf_stats(&b);
    uint64_t in = b.writes_in - a.writes_in, out = b.writes_out - a.writes_out;
    print_message("# %llu WAL writes asked, %llu made, %llu commits flushed\n",
                  (unsigned long long)in, (unsigned long long)out,
                  (unsigned long long)(b.commit_flushes - a.commit_flushes));
    assert_true(in >= 60 * 4);
    assert_true(out * 4 <= in);
    assert_true(b.commit_flushes - a.commit_flushes >= 60);
    assert_int_equal(b.errors, a.errors);
    same_content(f);
}

/* A transaction larger than the page cache writes frames before its
 * commit; rolled back, and with savepoints rolled back inside. */
static void t_spill_rollback_savepoints(void **state)
{
    struct fx *f = *state;
    unsigned seed = 99;
    both(f, "PRAGMA cache_size=8"); /* pages: spills early */
    both(f, "BEGIN IMMEDIATE");
    insert_random(f->w, f->ref_db, 50, &seed);
    both(f, "COMMIT");

    ut_sql_ok(f->w, "BEGIN IMMEDIATE");
    insert_random(f->w, NULL, 1500, &seed); /* spills, then goes away */
    ut_sql_ok(f->w, "ROLLBACK");
    assert_int_equal(ut_sql_int(f->r, "SELECT count(*) FROM t"), 50);

    for (int c = 0; c < 5; c++) {
        both(f, "BEGIN IMMEDIATE");
        insert_random(f->w, f->ref_db, 300, &seed);
        both(f, "SAVEPOINT s");
        insert_random(f->w, NULL, 800, &seed);
        ut_sql_ok(f->w, "ROLLBACK TO s");
        ut_sql_ok(f->ref_db, "ROLLBACK TO s");
        both(f, "RELEASE s");
        insert_random(f->w, f->ref_db, 200, &seed);
        both(f, "COMMIT");
        assert_int_equal(ut_sql_int(f->r, "SELECT count(*) FROM t"),
                         ut_sql_int(f->ref_db, "SELECT count(*) FROM t"));
    }
    same_content(f);
}

/* Checkpoints from the other connection let the writer start the WAL over
 * at offset 0 (a new header); the content stays right. */
static void t_wal_restart(void **state)
{
    struct fx *f = *state;
    unsigned seed = 5;
    for (int c = 0; c < 30; c++) {
        both(f, "BEGIN IMMEDIATE");
        insert_random(f->w, f->ref_db, 20, &seed);
        both(f, "COMMIT");
        if (c % 3 == 2)
            ut_sql_ok(f->r,
                      c % 2 ? "PRAGMA wal_checkpoint(TRUNCATE)" : "PRAGMA wal_checkpoint(RESTART)");
        assert_int_equal(ut_sql_int(f->r, "SELECT count(*) FROM t"),
                         ut_sql_int(f->ref_db, "SELECT count(*) FROM t"));
    }
    ut_sql_ok(f->w, "PRAGMA wal_checkpoint(TRUNCATE)");
    same_content(f);
}

/* A failed write fails the commit it belongs to (nothing of it becomes
 * visible), and the next transactions work. */
static void t_write_error(void **state)
{
    struct fx *f = *state;
    unsigned seed = 11;
    both(f, "BEGIN IMMEDIATE");
    insert_random(f->w, f->ref_db, 30, &seed);
    both(f, "COMMIT");
    int64_t before = ut_sql_int(f->r, "SELECT count(*) FROM t");
    struct sqlite_walbuf_stats a, b;
    sqlite_walbuf_stats(&a);

    for (int e = 0; e < 2; e++) {
        ut_sql_ok(f->w, "BEGIN IMMEDIATE");
        insert_random(f->w, NULL, 30, &seed);
        sqlite_walbuf_test_fail_writes(1, e ? ENOSPC : EIO);
        int rc = exec_rc(f->w, "COMMIT");
        assert_int_not_equal(rc, SQLITE_OK);
        if (sqlite3_get_autocommit(f->w) == 0)
            exec_rc(f->w, "ROLLBACK");
        assert_int_equal(ut_sql_int(f->r, "SELECT count(*) FROM t"), before);
    }
    sqlite_walbuf_stats(&b);
    assert_int_equal(b.errors - a.errors, 2);

    both(f, "BEGIN IMMEDIATE");
    insert_random(f->w, f->ref_db, 30, &seed);
    both(f, "COMMIT");
    assert_int_equal(ut_sql_int(f->r, "SELECT count(*) FROM t"), before + 30);
    same_content(f);
}

/* kill -9 of a process committing through the shim: every commit it
 * reported is in the file, which passes integrity_check. */
static void t_killed_writer(void **state)
{
    struct fx *f = *state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        sqlite3 *db = NULL;
        if (sqlite3_open_v2(f->path, &db, SQLITE_OPEN_READWRITE, WALBUF_VFS_NAME) != SQLITE_OK)
            _exit(2);
        char sql[200];
        for (uint32_t i = 1;; i++) {
            snprintf(sql, sizeof sql,
                     "BEGIN IMMEDIATE; INSERT INTO t(k, v) VALUES('kill%08u', printf('%%.*c', %u, "
                     "'x')); COMMIT;",
                     i, 100 + i % 900);
            if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
                _exit(3);
            if (write(fds[1], &i, sizeof i) != sizeof i)
                _exit(4);
        }
    }
    close(fds[1]);
    uint32_t last = 0, v;
    while (last < 400 && read(fds[0], &v, sizeof v) == sizeof v)
        last = v;
    kill(pid, SIGKILL);
    int st;
    waitpid(pid, &st, 0);
    while (read(fds[0], &v, sizeof v) == sizeof v)
        last = v; /* reported before the kill landed */
    close(fds[0]);
    assert_true(WIFSIGNALED(st));
    assert_true(last >= 400);

    sqlite3 *db = open_db(f->path, NULL);
    int64_t n = ut_sql_int(db, "SELECT count(*) FROM t WHERE k LIKE 'kill%'");
    print_message("# %u commits reported before the kill, %lld stored\n", last, (long long)n);
    assert_true(n >= (int64_t)last);
    assert_int_equal(ut_sql_int(db,
                                "SELECT max(k) = printf('kill%08d', count(*)) FROM t WHERE k LIKE "
                                "'kill%'"),
                     1); /* no gap: commits are ordered */
    ut_sql_integrity(db);
    sqlite3_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_registered),
        cmocka_unit_test_setup_teardown(t_coalesces_and_visible, setup, teardown),
        cmocka_unit_test_setup_teardown(t_spill_rollback_savepoints, setup, teardown),
        cmocka_unit_test_setup_teardown(t_wal_restart, setup, teardown),
        cmocka_unit_test_setup_teardown(t_write_error, setup, teardown),
        cmocka_unit_test_setup_teardown(t_killed_writer, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
