/*
 * test_store_sqlite.c - runs the store conformance suite on the SQLite
 * driver, then checks what is specific to it: WAL mode and durability
 * pragmas, the schema version guard, two connections sharing one file,
 * that a file that is not a database is refused with a message, and how
 * stream seqs are given in both schema versions.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>
#include <cjson/cJSON.h>

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

static void put_json(struct store *s, const char *json)
{
    cJSON *it = cJSON_Parse(json);
    assert_non_null(it);
    assert_int_equal(store_put(s, it, NULL), 0);
    cJSON_Delete(it);
}

static uint64_t head_of(struct store *s)
{
    uint64_t h = 0;
    assert_int_equal(store_stream_head(s, &h), 0);
    return h;
}

/* The newest record's seq, read with a separate connection. */
static long long newest_seq(const char *path)
{
    char v[32];
    sql1(path, "SELECT coalesce(max(seq), 0) FROM stream", v, sizeof(v));
    return atoll(v);
}

/*
 * Schema 2: stream.seq is no AUTOINCREMENT (no sqlite_sequence row to
 * update on every insert); the driver gives seq itself, one past the
 * head, and a trim that removes the newest record leaves the head in
 * meta, so seq never goes back - also for a second connection that did
 * not see the trim.
 */
static void t_stream_seq_schema2(void **state)
{
    (void)state;
    char v[256], err[256];
    cleanup_db(&g_db);
    struct store_options o = {.path = g_db.path, .durability = STORE_DURABILITY_NORMAL};
    struct store *a = store_open_sqlite(&o, err, sizeof(err)), *b;
    assert_non_null(a);
    sql1(g_db.path, "SELECT sql FROM sqlite_master WHERE name = 'stream'", v, sizeof(v));
    assert_null(strstr(v, "AUTOINCREMENT"));
    sql1(g_db.path, "SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_sequence'", v,
         sizeof(v));
    assert_string_equal(v, "0");
    b = store_open_sqlite(&o, err, sizeof(err));
    assert_non_null(b);
    put_json(a, "{\"PK\":\"A\",\"SK\":\"1\"}");
    put_json(b, "{\"PK\":\"A\",\"SK\":\"2\"}");
    put_json(a, "{\"PK\":\"A\",\"SK\":\"3\"}");
    assert_int_equal(newest_seq(g_db.path), 3);
    assert_int_equal(head_of(a), 3);
    assert_int_equal(head_of(b), 3);
    /* a group commit of several writes: consecutive seqs */
    assert_int_equal(store_batch_begin(b), 0);
    put_json(b, "{\"PK\":\"A\",\"SK\":\"4\"}");
    put_json(b, "{\"PK\":\"A\",\"SK\":\"5\"}");
    assert_int_equal(store_batch_commit(b), 0);
    assert_int_equal(newest_seq(g_db.path), 5);
    /* everything trimmed: the head stays, the next write goes on from it */
    size_t trimmed = 0;
    assert_int_equal(store_stream_trim(a, INT64_MAX / 2, &trimmed), 0);
    assert_int_equal(trimmed, 5);
    assert_int_equal(newest_seq(g_db.path), 0);
    assert_int_equal(head_of(a), 5);
    sql1(g_db.path, "SELECT value FROM meta WHERE key = 'stream_floor'", v, sizeof(v));
    assert_string_equal(v, "5");
    put_json(b, "{\"PK\":\"A\",\"SK\":\"6\"}");
    assert_int_equal(newest_seq(g_db.path), 6);
    store_close(b);
    store_close(a);
    a = store_open_sqlite(&o, err, sizeof(err));
    assert_non_null(a);
    assert_int_equal(head_of(a), 6);
    struct stream_record *r = NULL;
    size_t n = 0;
    assert_int_equal(store_stream_read(a, 0, 10, &r, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(r[0].seq, 6);
    assert_string_equal(r[0].sk, "6");
    store_stream_free(r, n);
    store_close(a);
    cleanup_db(&g_db);
}

/*
 * A schema-1 file (stream.seq AUTOINCREMENT, written by earlier builds)
 * opens, keeps its layout and version, and its seq goes on from
 * sqlite_sequence, also after everything was trimmed.
 */
static void t_stream_seq_schema1(void **state)
{
    (void)state;
    char v[256], err[256];
    sqlite3 *db;
    cleanup_db(&g_db);
    assert_int_equal(sqlite3_open(g_db.path, &db), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(
            db,
            "PRAGMA journal_mode=WAL;"
            "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;"
            "CREATE TABLE items(pk TEXT NOT NULL, sk TEXT NOT NULL, gsi1pk TEXT, gsi1sk TEXT, "
            "  ttl REAL, size INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY(pk, sk)) "
            "  WITHOUT ROWID;"
            "CREATE INDEX items_gsi1 ON items(gsi1pk, gsi1sk, pk, sk) WHERE gsi1pk IS NOT NULL;"
            "CREATE INDEX items_ttl ON items(ttl) WHERE ttl IS NOT NULL;"
            "CREATE TABLE stream(seq INTEGER PRIMARY KEY AUTOINCREMENT, ts INTEGER NOT NULL, "
            "  kind INTEGER NOT NULL, pk TEXT NOT NULL, sk TEXT NOT NULL, image TEXT);"
            "CREATE TABLE checkpoints(reader TEXT PRIMARY KEY, seq INTEGER NOT NULL, "
            "  updated INTEGER NOT NULL) WITHOUT ROWID;"
            "INSERT INTO meta VALUES('schema_version', '1');"
            "INSERT INTO items VALUES('OLD', '1', NULL, NULL, NULL, 20, "
            "  '{\"PK\":\"OLD\",\"SK\":\"1\"}');"
            "INSERT INTO stream(seq, ts, kind, pk, sk, image) VALUES(41, 1, 0, 'OLD', '1', "
            "  '{\"PK\":\"OLD\",\"SK\":\"1\"}');",
            NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(db);

    struct store_options o = {.path = g_db.path, .durability = STORE_DURABILITY_NORMAL};
    struct store *s = store_open_sqlite(&o, err, sizeof(err));
    assert_non_null(s);
    assert_int_equal(head_of(s), 41);
    put_json(s, "{\"PK\":\"A\",\"SK\":\"1\"}");
    assert_int_equal(newest_seq(g_db.path), 42);
    assert_int_equal(head_of(s), 42);
    size_t trimmed = 0;
    assert_int_equal(store_stream_trim(s, INT64_MAX / 2, &trimmed), 0);
    assert_int_equal(trimmed, 2);
    assert_int_equal(head_of(s), 42);
    store_close(s);
    s = store_open_sqlite(&o, err, sizeof(err));
    assert_non_null(s);
    assert_int_equal(head_of(s), 42);
    put_json(s, "{\"PK\":\"A\",\"SK\":\"2\"}");
    assert_int_equal(newest_seq(g_db.path), 43);
    store_close(s);
    sql1(g_db.path, "SELECT value FROM meta WHERE key = 'schema_version'", v, sizeof(v));
    assert_string_equal(v, "1");
    sql1(g_db.path, "SELECT sql FROM sqlite_master WHERE name = 'stream'", v, sizeof(v));
    assert_non_null(strstr(v, "AUTOINCREMENT"));
    cleanup_db(&g_db);
}

/*
 * The synchronous level each durability runs at.  SQLite applies
 * "PRAGMA synchronous=X" when the statement is prepared, not when it is
 * stepped: the driver used to keep both levels among its prepared
 * statements, so every connection ran at OFF (the last one prepared) and
 * its switches to FULL around checkpoints did nothing.  No level is OFF
 * now: at OFF SQLite syncs neither checkpoints nor the WAL header.
 */
static void t_synchronous_levels(void **state)
{
    (void)state;
    char err[256];
    struct {
        enum store_durability d;
        bool deferred, bg;
        int level;
    } cases[] = {
        {STORE_DURABILITY_NORMAL, false, false, 1},
        {STORE_DURABILITY_NORMAL, true, true, 1}, /* deferred sync is for FULL only */
        {STORE_DURABILITY_FULL, false, false, 2},
        {STORE_DURABILITY_FULL, false, true, 2},
        /* the sync thread syncs each commit; NORMAL still syncs the WAL
         * header when the WAL starts over, and checkpoints */
        {STORE_DURABILITY_FULL, true, true, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cleanup_db(&g_db);
        struct store_options o = {.path = g_db.path,
                                  .durability = cases[i].d,
                                  .deferred_sync = cases[i].deferred,
                                  .background_checkpoint = cases[i].bg};
        struct store *s = store_open_sqlite(&o, err, sizeof(err));
        assert_non_null(s);
        assert_int_equal(store_sqlite_synchronous(s), cases[i].level);
        assert_int_equal(store_sqlite_sync(s) != NULL,
                         cases[i].deferred && cases[i].d == STORE_DURABILITY_FULL);
        if (store_sqlite_sync(s)) {
            /* the checkpoint after a commit syncs (NORMAL or FULL, not OFF) */
            int during = -1;
            cJSON *item = cJSON_Parse("{\"PK\":\"A\",\"SK\":\"B\",\"v\":1}");
            assert_int_equal(store_put(s, item, NULL), 0);
            cJSON_Delete(item);
            store_sqlite_inline_checkpoint(s, &during);
            assert_int_equal(during, 1);
            assert_int_equal(store_sqlite_synchronous(s), 1);
        }
        store_close(s);
    }
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

static bool present(struct store *s, const char *sk)
{
    cJSON *out = NULL;
    int rc = store_get(s, "F", sk, true, &out);
    cJSON_Delete(out);
    assert_true(rc == 0 || rc == ERR_NOTFOUND);
    return rc == 0;
}

/* Stream records of item F/sk. */
static int records_of(struct store *s, const char *sk)
{
    struct stream_record *r = NULL;
    size_t n = 0;
    int k = 0;
    assert_int_equal(store_stream_read(s, 0, 1000, &r, &n), 0);
    for (size_t i = 0; i < n; i++)
        k += !strcmp(r[i].pk, "F") && !strcmp(r[i].sk, sk);
    store_stream_free(r, n);
    return k;
}

static void put_f(struct store *s, const char *sk, int *rc)
{
    cJSON *it = cJSON_CreateObject();
    cJSON_AddStringToObject(it, "PK", "F");
    cJSON_AddStringToObject(it, "SK", sk);
    int r = store_put(s, it, NULL);
    if (!*rc)
        *rc = r;
    cJSON_Delete(it);
}

/*
 * Fault injection: for every N, the Nth statement fails.  Whatever
 * fails, each item is there exactly when its stream record is, a batch
 * and a transaction are all or nothing, and the store keeps working.
 */
static void t_faults(void **state)
{
    (void)state;
    char err[256], v[64];
    struct store_options o = {.path = g_db.path, .durability = STORE_DURABILITY_NORMAL};
    int failures = 0, doomed = 0, soft = 0;
    for (int nth = 1; nth <= 24; nth++) {
        cleanup_db(&g_db);
        struct store *s = store_open_sqlite(&o, err, sizeof(err));
        assert_non_null(s);
        store_sqlite_fault(s, nth);
        /* A: one put on its own. */
        int ra = 0;
        put_f(s, "a", &ra);
        /* B: a batch of two puts and an update; each call is atomic on
         * its own, the commit makes the successful ones durable. */
        int rb1 = 0, rb2 = 0, rb3 = 0, rbc = store_batch_begin(s);
        if (!rbc) {
            struct store_action inc = {.kind = STORE_ACT_ADD, .attr = "n", .delta = 1};
            put_f(s, "b1", &rb1);
            put_f(s, "b2", &rb2);
            rb3 = store_update(s, "F", "b3", &inc, 1, NULL, NULL);
            rbc = store_batch_commit(s);
        }
        int rb = rbc ? rbc : rb1 ? rb1 : rb2 ? rb2 : rb3;
        /* b1 failing after its item row was written dooms the batch;
         * failing before it leaves the batch going. */
        doomed += rb1 && rbc;
        soft += rb1 && !rbc;
        /* C: a transaction of three puts. */
        cJSON *items[3];
        struct store_write w[3];
        memset(w, 0, sizeof(w));
        for (int i = 0; i < 3; i++) {
            char sk[16];
            snprintf(sk, sizeof(sk), "c%d", i);
            items[i] = cJSON_CreateObject();
            cJSON_AddStringToObject(items[i], "PK", "F");
            cJSON_AddStringToObject(items[i], "SK", sk);
            w[i].kind = STORE_W_PUT;
            w[i].item = items[i];
        }
        int rcx = store_transact(s, w, 3, NULL);
        for (int i = 0; i < 3; i++)
            cJSON_Delete(items[i]);
        store_sqlite_fault(s, 0);
        failures += (ra != 0) + (rb != 0) + (rcx != 0);

        const char *keys[] = {"a", "b1", "b2", "b3", "c0", "c1", "c2"};
        bool p[7];
        for (int i = 0; i < 7; i++) {
            p[i] = present(s, keys[i]);
            assert_int_equal(records_of(s, keys[i]), p[i] ? 1 : 0);
        }
        assert_true(p[0] == (ra == 0));
        assert_true(p[1] == (rbc == 0 && rb1 == 0));
        assert_true(p[2] == (rbc == 0 && rb2 == 0));
        assert_true(p[3] == (rbc == 0 && rb3 == 0));
        assert_true(p[4] == (rcx == 0) && p[5] == (rcx == 0) && p[6] == (rcx == 0));
        /* Still usable. */
        int rz = 0;
        put_f(s, "z", &rz);
        assert_int_equal(rz, 0);
        assert_false(store_batch_active(s));
        store_close(s);
        sql1(g_db.path, "PRAGMA integrity_check", v, sizeof(v));
        assert_string_equal(v, "ok");
    }
    /* Every scenario met a fault somewhere in the sweep. */
    assert_true(failures >= 10);
    assert_true(doomed >= 1);
    assert_true(soft >= 1);
    cleanup_db(&g_db);
}

static int commits_seen;
static void count_commit(void *arg, uint64_t last_seq)
{
    (void)arg;
    (void)last_seq;
    commits_seen++;
}

/* Sequences of the stream records, in order, into seqs (at most max). */
static size_t stream_seqs(struct store *s, uint64_t *seqs, size_t max)
{
    struct stream_record *r = NULL;
    size_t n = 0, k = 0;
    assert_int_equal(store_stream_read(s, 0, 1000, &r, &n), 0);
    for (size_t i = 0; i < n && k < max; i++)
        seqs[k++] = r[i].seq;
    store_stream_free(r, n);
    return k;
}

/*
 * Sub-batches: a committed scope stays in the open batch and becomes
 * durable with it (one commit callback), an aborted scope and a scope
 * whose write failed leave no item and no stream record (sequences stay
 * dense), and the outer batch going away takes committed scopes along.
 */
static void t_subbatch(void **state)
{
    (void)state;
    char err[256];
    struct store_options o = {.path = g_db.path, .durability = STORE_DURABILITY_NORMAL};
    cleanup_db(&g_db);
    struct store *s = store_open_sqlite(&o, err, sizeof(err));
    assert_non_null(s);
    store_set_commit_cb(s, count_commit, NULL);
    commits_seen = 0;
    int rc = 0;

    /* not without an open batch */
    assert_int_equal(store_subbatch_enter(s), ERR_INVALID);
    assert_int_equal(store_batch_begin(s), 0);
    put_f(s, "outer1", &rc);
    assert_int_equal(store_subbatch_enter(s), 0);
    assert_int_equal(store_subbatch_enter(s), ERR_INVALID); /* no nesting of modes */
    assert_false(store_batch_active(s));                    /* no scope open yet */
    assert_int_equal(store_batch_begin(s), 0);
    assert_true(store_batch_active(s));
    assert_int_equal(store_batch_begin(s), ERR_INVALID); /* one scope at a time */
    put_f(s, "kept", &rc);
    assert_int_equal(store_batch_commit(s), 0);
    assert_false(store_batch_active(s));
    assert_int_equal(commits_seen, 0); /* nothing durable yet */
    /* an aborted scope */
    assert_int_equal(store_batch_begin(s), 0);
    put_f(s, "dropped", &rc);
    store_batch_abort(s);
    /* a scope with a failed conditional write still commits the rest */
    assert_int_equal(store_batch_begin(s), 0);
    put_f(s, "kept2", &rc);
    cJSON *dup = cJSON_CreateObject();
    cJSON_AddStringToObject(dup, "PK", "F");
    cJSON_AddStringToObject(dup, "SK", "kept2");
    struct store_cond ne = {.kind = STORE_COND_NOT_EXISTS};
    assert_int_equal(store_put(s, dup, &ne), ERR_CONDITION);
    cJSON_Delete(dup);
    assert_int_equal(store_batch_commit(s), 0);
    /* a scope left open is aborted by leave */
    assert_int_equal(store_batch_begin(s), 0);
    put_f(s, "left", &rc);
    store_subbatch_leave(s);
    assert_true(store_batch_active(s)); /* the outer batch again */
    put_f(s, "outer2", &rc);
    assert_int_equal(rc, 0);
    assert_int_equal(store_batch_commit(s), 0);
    assert_int_equal(commits_seen, 1);

    assert_true(present(s, "outer1") && present(s, "kept") && present(s, "kept2") &&
                present(s, "outer2"));
    assert_false(present(s, "dropped") || present(s, "left"));
    assert_int_equal(records_of(s, "dropped") + records_of(s, "left"), 0);
    uint64_t seqs[16];
    size_t n = stream_seqs(s, seqs, 16);
    assert_int_equal(n, 4);
    for (size_t i = 1; i < n; i++)
        assert_int_equal(seqs[i], seqs[i - 1] + 1);

    /* the outer batch aborted: its committed scope goes too */
    assert_int_equal(store_batch_begin(s), 0);
    assert_int_equal(store_subbatch_enter(s), 0);
    assert_int_equal(store_batch_begin(s), 0);
    put_f(s, "lost", &rc);
    assert_int_equal(store_batch_commit(s), 0);
    store_subbatch_leave(s);
    store_batch_abort(s);
    assert_false(present(s, "lost"));
    assert_int_equal(records_of(s, "lost"), 0);

    /* faults inside a scope: each Nth statement fails; the outer batch's
     * own writes always survive unless the backend lost the whole
     * transaction (then the outer commit reports it). */
    int scope_failed = 0;
    for (int nth = 1; nth <= 12; nth++) {
        char sk1[16], sk2[16], sko[16];
        snprintf(sk1, sizeof sk1, "s%da", nth);
        snprintf(sk2, sizeof sk2, "s%db", nth);
        snprintf(sko, sizeof sko, "o%d", nth);
        int ro = 0, r1 = 0, r2 = 0;
        assert_int_equal(store_batch_begin(s), 0);
        put_f(s, sko, &ro);
        assert_int_equal(ro, 0);
        assert_int_equal(store_subbatch_enter(s), 0);
        store_sqlite_fault(s, nth);
        int rs = store_batch_begin(s);
        if (!rs) {
            put_f(s, sk1, &r1);
            put_f(s, sk2, &r2);
            rs = (r1 || r2) ? (store_batch_abort(s), r1 ? r1 : r2) : store_batch_commit(s);
        }
        store_sqlite_fault(s, 0);
        store_subbatch_leave(s);
        int rcommit = store_batch_commit(s);
        scope_failed += rs != 0;
        assert_int_equal(rcommit, 0);
        assert_true(present(s, sko));
        assert_true(present(s, sk1) == (rs == 0));
        assert_true(present(s, sk2) == (rs == 0));
        assert_int_equal(records_of(s, sk1), rs == 0);
        assert_int_equal(records_of(s, sk2), rs == 0);
    }
    assert_true(scope_failed >= 3);
    store_close(s);
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
        cmocka_unit_test(t_faults),
        cmocka_unit_test(t_subbatch),
        cmocka_unit_test(t_synchronous_levels),
        cmocka_unit_test(t_stream_seq_schema2),
        cmocka_unit_test(t_stream_seq_schema1),
    };
    fails += cmocka_run_group_tests_name("store_sqlite", tests, NULL, NULL);
    cleanup_db(&g_db);
    rmdir(g_db.dir);
    return fails ? 1 : 0;
}
