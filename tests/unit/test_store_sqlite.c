/*
 * test_store_sqlite.c - runs the store conformance suite on the SQLite
 * driver, then checks what is specific to it: WAL mode and durability
 * pragmas, the schema version guard, two connections sharing one file,
 * and that a file that is not a database is refused with a message.
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

#include "store/store.h"
#include "store/store_sqlite.h"
#include "store_conformance.h"
#include "util/err.h"

struct tmpdb {
    char dir[64];
    char path[128];
};

static void rm_db(const char *path)
{
    char p[160];
    unlink(path);
    snprintf(p, sizeof(p), "%s-wal", path);
    unlink(p);
    snprintf(p, sizeof(p), "%s-shm", path);
    unlink(p);
}

static struct store *open_db(void *ctx)
{
    struct tmpdb *t = ctx;
    struct store_options o = {.path = t->path, .durability = STORE_DURABILITY_NORMAL};
    char err[256];
    struct store *s = store_open_sqlite(&o, err, sizeof(err));
    if (!s)
        fprintf(stderr, "open: %s\n", err);
    return s;
}

static void cleanup_db(void *ctx)
{
    rm_db(((struct tmpdb *)ctx)->path);
}

static struct tmpdb g_db; /* the one temp directory of this test binary */

/* Runs one SQL query on the file with a separate connection, returns the
 * first column of the first row as text in out. */
static void sql1(const char *path, const char *sql, char *out, size_t n)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    out[0] = '\0';
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        snprintf(out, n, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
}

static void t_pragmas(void **state)
{
    (void)state;
    char v[64], err[256];
    cleanup_db(&g_db);
    struct store_options o = {.path = g_db.path};
    struct store *s = store_open_sqlite(&o, err, sizeof(err));
    assert_non_null(s);
    assert_string_equal(store_driver_name(s), "sqlite");
    sql1(g_db.path, "PRAGMA journal_mode", v, sizeof(v));
    assert_string_equal(v, "wal");
    sql1(g_db.path, "SELECT value FROM meta WHERE key='schema_version'", v, sizeof(v));
    assert_int_equal(atoi(v), STORE_SQLITE_SCHEMA_VERSION);
    store_close(s);
    /* The schema guard: a newer file is refused. */
    sqlite3 *db;
    assert_int_equal(sqlite3_open(g_db.path, &db), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(db, "UPDATE meta SET value='99' WHERE key='schema_version'", NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(db);
    err[0] = '\0';
    assert_null(store_open_sqlite(&o, err, sizeof(err)));
    assert_non_null(strstr(err, "schema version"));
    cleanup_db(&g_db);
}

static void t_not_a_database(void **state)
{
    (void)state;
    char err[256] = "";
    FILE *f;
    cleanup_db(&g_db);
    f = fopen(g_db.path, "w");
    assert_non_null(f);
    for (int i = 0; i < 200; i++)
        fputs("this is not an sqlite database file at all\n", f);
    fclose(f);
    struct store_options o = {.path = g_db.path};
    assert_null(store_open_sqlite(&o, err, sizeof(err)));
    assert_true(strlen(err) > 0);
    cleanup_db(&g_db);
    struct store_options none = {0};
    assert_null(store_open_sqlite(&none, err, sizeof(err)));
    struct store_options bad = {.path = "/nonexistent-dir/x/y.db"};
    assert_null(store_open_sqlite(&bad, err, sizeof(err)));
    assert_true(strlen(err) > 0);
}

static void t_two_connections(void **state)
{
    (void)state;
    char err[256];
    cleanup_db(&g_db);
    struct store_options o = {.path = g_db.path};
    struct store *a = store_open_sqlite(&o, err, sizeof(err));
    struct store *b = store_open_sqlite(&o, err, sizeof(err));
    assert_non_null(a);
    assert_non_null(b);
    cJSON *it = cJSON_Parse("{\"PK\":\"X\",\"SK\":\"1\"}"), *out = NULL;
    assert_int_equal(store_put(a, it, NULL), 0);
    assert_int_equal(store_get(b, "X", "1", true, &out), 0);
    cJSON_Delete(out);
    /* b's conditional put sees a's item. */
    struct store_cond absent = {.kind = STORE_COND_NOT_EXISTS};
    assert_int_equal(store_put(b, it, &absent), ERR_CONDITION);
    uint64_t ha = 0, hb = 0;
    assert_int_equal(store_stream_head(a, &ha), 0);
    assert_int_equal(store_stream_head(b, &hb), 0);
    assert_int_equal(ha, hb);
    /* While a holds a batch, b's reads go on; its write would wait. */
    assert_int_equal(store_batch_begin(a), 0);
    cJSON_ReplaceItemInObject(it, "SK", cJSON_CreateString("2"));
    assert_int_equal(store_put(a, it, NULL), 0);
    assert_int_equal(store_get(b, "X", "2", true, &out), ERR_NOTFOUND);
    assert_int_equal(store_batch_commit(a), 0);
    assert_int_equal(store_get(b, "X", "2", true, &out), 0);
    cJSON_Delete(out);
    /* b's batch sees the head a committed. */
    assert_int_equal(store_stream_head(a, &ha), 0);
    assert_int_equal(store_batch_begin(b), 0);
    assert_int_equal(store_stream_head(b, &hb), 0);
    assert_int_equal(hb, ha);
    store_batch_abort(b);
    /* Snapshots: a strongly consistent read always sees the other
     * connection's commit; an eventually consistent one at the latest
     * after the snapshot window (1 ms). */
    assert_int_equal(store_get(b, "X", "3", false, &out), ERR_NOTFOUND);
    cJSON_ReplaceItemInObject(it, "SK", cJSON_CreateString("3"));
    assert_int_equal(store_put(a, it, NULL), 0);
    assert_int_equal(store_get(b, "X", "3", true, &out), 0);
    cJSON_Delete(out);
    assert_int_equal(store_get(b, "X", "4", false, &out), ERR_NOTFOUND);
    cJSON_ReplaceItemInObject(it, "SK", cJSON_CreateString("4"));
    assert_int_equal(store_put(a, it, NULL), 0);
    usleep(3000);
    assert_int_equal(store_get(b, "X", "4", false, &out), 0);
    cJSON_Delete(out);
    struct stream_record *r = NULL;
    size_t n = 0;
    assert_int_equal(store_stream_read(b, hb, 10, &r, &n), 0);
    assert_int_equal(n, 2);
    store_stream_free(r, n);
    /* A's own eventually consistent reads always see a's writes. */
    cJSON_ReplaceItemInObject(it, "SK", cJSON_CreateString("5"));
    assert_int_equal(store_get(a, "X", "5", false, &out), ERR_NOTFOUND);
    assert_int_equal(store_put(a, it, NULL), 0);
    assert_int_equal(store_get(a, "X", "5", false, &out), 0);
    cJSON_Delete(out);
    cJSON_Delete(it);
    store_close(a);
    store_close(b);
    char v[64];
    sql1(g_db.path, "PRAGMA integrity_check", v, sizeof(v));
    assert_string_equal(v, "ok");
    cleanup_db(&g_db);
}

int main(void)
{
    int fails;
    char tmpl[] = "/tmp/gp-store-XXXXXX";
    if (!mkdtemp(tmpl))
        return 1;
    snprintf(g_db.dir, sizeof(g_db.dir), "%s", tmpl);
    snprintf(g_db.path, sizeof(g_db.path), "%s/store.db", tmpl);
    fails = store_conformance_run("store_conformance_sqlite", open_db, cleanup_db, &g_db);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_pragmas),
        cmocka_unit_test(t_not_a_database),
        cmocka_unit_test(t_two_connections),
    };
    fails += cmocka_run_group_tests_name("store_sqlite", tests, NULL, NULL);
    cleanup_db(&g_db);
    rmdir(g_db.dir);
    return fails ? 1 : 0;
}
