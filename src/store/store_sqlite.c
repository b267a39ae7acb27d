/*
 * store_sqlite.c - the SQLite driver: one WAL-mode database file holding
 * the item table, its change stream and the readers' checkpoints.
 *
 * Every item change appends its stream record inside the same SQLite
 * transaction, so an item write and its record commit or vanish together
 * (sqlite3_update_hook is no use here: it misses WITHOUT ROWID tables).
 * Outside a batch each operation is its own BEGIN IMMEDIATE ... COMMIT;
 * inside a batch (group commit) the batch holds one transaction, and a
 * failed condition undoes only its own operation (see wtx_begin).  Checkpoints and the meta table
 * live outside the item table and so never produce stream records.
 *
 * Query ranges: every sort-key condition becomes "lo <= key < hi".  Keys
 * are C strings (no NUL byte), so "key > x" is "key >= x\x01" and
 * "key <= x" is "key < x\x01".  A missing upper bound is bound as an empty
 * BLOB, which SQLite orders after every TEXT value, so one prepared
 * statement per index and direction serves every condition and still
 * runs as an index range scan.
 *
 * All statements are prepared once at open.  Several processes may share
 * the file: writers wait up to BUSY_TIMEOUT_MS for the write lock.
 */
#include "store/store_sqlite.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "core/canon.h"
#include "store/item_json.h"
#include "store/sqlite_ckpt.h"
#include "store/sqlite_sync.h"
#include "store/sqlite_pcache.h"
#include "store/sqlite_walbuf.h"
#include "store/store_int.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/hash.h"
#include "util/log.h"
#include "util/xalloc.h"

#define BUSY_TIMEOUT_MS 5000
/* WAL pages between automatic checkpoints, normally (SQLite's default)
 * and under store_set_bulk(). */
#define STORE_SQLITE_AUTOCHECKPOINT 1000
/* PRAGMA synchronous levels (set_synchronous). */
#define SYNC_LEVEL_NORMAL 1
#define SYNC_LEVEL_FULL   2
/* How long eventually consistent reads may share one read snapshot. */
#define READ_SNAPSHOT_US 1000
/* Canonical JSON of a 400 KB item: escapes can multiply string bytes. */
#define BODY_MAX (8 * 1024 * 1024)
/* Stream records deleted per transaction when trimming. */
#define TRIM_CHUNK 5000
/* Slots of the "written lately" hint of item_write (a power of two). */
#define PRESENT_SLOTS 4096

enum { KIND_INSERT = STORE_INSERT, KIND_MODIFY = STORE_MODIFY, KIND_REMOVE = STORE_REMOVE };

enum stmt_id {
    ST_BEGIN,
    ST_BEGIN_READ,
    ST_COMMIT,
    ST_ROLLBACK,
    ST_SAVEPOINT,
    ST_RELEASE,
    ST_ROLLBACK_TO,
    ST_SUB_SAVEPOINT,
    ST_SUB_RELEASE,
    ST_SUB_ROLLBACK_TO,
    ST_GET,
    ST_INSERT_NEW,
    ST_REPLACE,
    ST_DELETE,
    ST_STREAM_ADD,
    ST_Q_TABLE_ASC,
    ST_Q_TABLE_DESC,
    ST_Q_GSI_ASC,
    ST_Q_GSI_DESC,
    ST_Q_GSI_ASC_AFTER,
    ST_Q_GSI_DESC_BEFORE,
    ST_STREAM_READ,
    ST_HEAD,
    ST_FLOOR_SET,
    ST_CP_GET,
    ST_CP_SET,
    ST_TRIM_BOUNDARY,
    ST_TRIM_DELETE,
    ST_EXPIRED,
    ST_PING,
    ST_DATA_VERSION,
    ST_COUNT
};

#define Q_TTL " AND (ttl IS NULL OR ttl >= ?4)"
#define Q_TABLE                                                                                    \
    "SELECT pk, sk, NULL, size, body FROM items WHERE pk = ?1 AND sk >= ?2 AND sk < ?3" Q_TTL
#define Q_GSI                                                                                      \
    "SELECT pk, sk, gsi1sk, size, body FROM items WHERE gsi1pk = ?1 AND gsi1sk >= ?2 AND "         \
    "gsi1sk < ?3" Q_TTL
#define Q_GSI_ORDER_ASC  " ORDER BY gsi1sk, pk, sk LIMIT ?5"
#define Q_GSI_ORDER_DESC " ORDER BY gsi1sk DESC, pk DESC, sk DESC LIMIT ?5"

static const char *const SQL[ST_COUNT] = {
    [ST_BEGIN] = "BEGIN IMMEDIATE",
    [ST_BEGIN_READ] = "BEGIN",
    [ST_COMMIT] = "COMMIT",
    [ST_ROLLBACK] = "ROLLBACK",
    [ST_SAVEPOINT] = "SAVEPOINT op",
    [ST_RELEASE] = "RELEASE op",
    [ST_ROLLBACK_TO] = "ROLLBACK TO op",
    [ST_SUB_SAVEPOINT] = "SAVEPOINT sub",
    [ST_SUB_RELEASE] = "RELEASE sub",
    [ST_SUB_ROLLBACK_TO] = "ROLLBACK TO sub",
    [ST_GET] = "SELECT body, ttl, size FROM items WHERE pk = ?1 AND sk = ?2",
    /* Two statements instead of an upsert: whether the insert changed a
     * row tells INSERT from MODIFY without RETURNING, which would cost
     * more than the extra statement does. */
    [ST_INSERT_NEW] = "INSERT INTO items(pk, sk, gsi1pk, gsi1sk, ttl, size, body) "
                      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT(pk, sk) DO NOTHING",
    [ST_REPLACE] = "UPDATE items SET gsi1pk = ?3, gsi1sk = ?4, ttl = ?5, size = ?6, body = ?7 "
                   "WHERE pk = ?1 AND sk = ?2",
    [ST_DELETE] = "DELETE FROM items WHERE pk = ?1 AND sk = ?2 RETURNING size",
    /* seq (?6) is given by stream_add; NULL lets a schema-1 database's
     * AUTOINCREMENT choose it. */
    [ST_STREAM_ADD] = "INSERT INTO stream(seq, ts, kind, pk, sk, image) "
                      "VALUES(?6, ?1, ?2, ?3, ?4, ?5)",
    [ST_Q_TABLE_ASC] = Q_TABLE " ORDER BY sk LIMIT ?5",
    [ST_Q_TABLE_DESC] = Q_TABLE " ORDER BY sk DESC LIMIT ?5",
    [ST_Q_GSI_ASC] = Q_GSI Q_GSI_ORDER_ASC,
    [ST_Q_GSI_DESC] = Q_GSI Q_GSI_ORDER_DESC,
    [ST_Q_GSI_ASC_AFTER] = Q_GSI " AND (gsi1sk, pk, sk) > (?6, ?7, ?8)" Q_GSI_ORDER_ASC,
    [ST_Q_GSI_DESC_BEFORE] = Q_GSI " AND (gsi1sk, pk, sk) < (?6, ?7, ?8)" Q_GSI_ORDER_DESC,
    [ST_STREAM_READ] = "SELECT seq, ts, kind, pk, sk, image FROM stream "
                       "WHERE seq > ?1 AND seq <= ?2 ORDER BY seq LIMIT ?3",
    /* The highest seq ever given: the newest record, or the floor that
     * trimming left when it removed the newest (SQL_HEAD_SCHEMA1 for
     * schema-1 databases). */
    [ST_HEAD] =
        "SELECT max(coalesce((SELECT max(seq) FROM stream), 0), "
        "coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'stream_floor'), 0))",
    [ST_FLOOR_SET] = "INSERT INTO meta(key, value) VALUES('stream_floor', ?1) "
                     "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
    [ST_CP_GET] = "SELECT seq FROM checkpoints WHERE reader = ?1",
    [ST_CP_SET] =
        "INSERT INTO checkpoints(reader, seq, updated) VALUES(?1, ?2, ?3) "
        "ON CONFLICT(reader) DO UPDATE SET seq = excluded.seq, updated = excluded.updated",
    [ST_TRIM_BOUNDARY] = "SELECT seq FROM stream WHERE ts >= ?1 ORDER BY seq LIMIT 1",
    [ST_TRIM_DELETE] = "DELETE FROM stream WHERE seq IN "
                       "(SELECT seq FROM stream WHERE seq < ?1 ORDER BY seq LIMIT ?2)",
    [ST_EXPIRED] = "SELECT pk, sk FROM items WHERE ttl < ?1 LIMIT ?2",
    [ST_PING] = "SELECT 1",
    [ST_DATA_VERSION] = "PRAGMA data_version",
};

/* Schema 1 gave stream.seq AUTOINCREMENT, whose bookkeeping row in
 * sqlite_sequence cost a quarter of every stream insert; such databases
 * keep it (and this head) and are read and written as before. */
static const char SQL_HEAD_SCHEMA1[] = "SELECT seq FROM sqlite_sequence WHERE name = 'stream'";

static const char SCHEMA[] =
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS items(pk TEXT NOT NULL, sk TEXT NOT NULL, gsi1pk TEXT, "
    "  gsi1sk TEXT, ttl REAL, size INTEGER NOT NULL, body TEXT NOT NULL, "
    "  PRIMARY KEY(pk, sk)) WITHOUT ROWID;"
    "CREATE INDEX IF NOT EXISTS items_gsi1 ON items(gsi1pk, gsi1sk, pk, sk) "
    "  WHERE gsi1pk IS NOT NULL;"
    "CREATE INDEX IF NOT EXISTS items_ttl ON items(ttl) WHERE ttl IS NOT NULL;"
    "CREATE TABLE IF NOT EXISTS stream(seq INTEGER PRIMARY KEY, "
    "  ts INTEGER NOT NULL, kind INTEGER NOT NULL, pk TEXT NOT NULL, sk TEXT NOT NULL, image TEXT);"
    "CREATE TABLE IF NOT EXISTS checkpoints(reader TEXT PRIMARY KEY, seq INTEGER NOT NULL, "
    "  updated INTEGER NOT NULL) WITHOUT ROWID;"
    "INSERT OR IGNORE INTO meta(key, value) VALUES('schema_version', '2');";

/*
 * Process-wide SQLite settings, made once before SQLite initializes (the
 * first open):
 *   - no memory statistics: with them every allocation SQLite makes
 *     takes a global mutex to count it, and nothing here reads the
 *     counts (sqlite3_memory_used, soft heap limits);
 *   - the page-cache wrapper that skips commit-time cache walks
 *     (sqlite_pcache.h).
 */
static pthread_once_t sqlite_once = PTHREAD_ONCE_INIT;

static void sqlite_setup(void)
{
    (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    (void)sqlite_pcache_install();
}

/* Commits whose durability may be outstanding at once (more wait). */
#define SYNC_RING 4096

struct sq {
    struct store base; /* first: store.c sees the common part */
    sqlite3 *db;
    sqlite3_stmt *st[ST_COUNT];
    uint64_t committed_head;                           /* highest stream seq known committed */
    bool bulk;                                         /* store_set_bulk() in force */
    bool (*keys_only)(const char *pk, const char *sk); /* store_options.stream_keys_only */
    struct sqlite_ckpt *ckpt; /* background checkpoints, NULL: SQLite's automatic ones */
    /* Deferred sync (store/sqlite_sync.h): commits get tickets; the
     * commit callback fires when the thread has synced them.  ring holds
     * the committed head of each ticket not yet announced. */
    struct sqlite_sync *sync;
    uint64_t ticket, announced;
    uint64_t ring[SYNC_RING];
    bool wal_written;          /* the WAL hook ran in the commit just made */
    bool restart_due;          /* the WAL hook asks for an inline checkpoint */
    uint64_t txn_seq;          /* highest seq written in the open transaction */
    uint64_t batch_head;       /* the head read under the open batch's lock (0: unknown) */
    bool schema1;              /* stream.seq is AUTOINCREMENT (a schema-1 database) */
    uint64_t sub_seq;          /* txn_seq when the open sub-batch began */
    bool op_wrote;             /* the current write operation changed something */
    bool read_open;            /* a shared read snapshot is open (see read_prepare) */
    int64_t read_since_us;     /* when it was opened, monotonic */
    int fault_at, fault_count; /* test builds: fail the fault_at-th statement */
#ifdef UNITTEST
    int *probe_level; /* store_sqlite_inline_checkpoint(): the level its checkpoint ran at */
#endif
    struct buf body; /* scratch: canonical JSON of the item being written */
    /* Hashes of (pk, sk) this connection wrote lately, direct-mapped: a
     * blind put of one of them tries the UPDATE first.  Only a hint (a
     * stale entry costs one statement, never a wrong result). */
    uint64_t present[PRESENT_SLOTS];
    char last_pk[STORE_PK_MAX + 1], last_sk[STORE_SK_MAX + 1], last_gsk[STORE_SK_MAX + 1];
};

static struct sq *sq_of(struct store *s)
{
    return (struct sq *)s;
}

/*
 * Sets PRAGMA synchronous (SQLite takes it outside a transaction only).
 * Never through a kept prepared statement: SQLite applies this pragma when
 * the statement is *prepared*, and stepping it again changes nothing.
 * (Before, "synchronous=FULL" and "=OFF" sat among the statements prepared
 * at open, so every connection ran at OFF whatever the durability, and the
 * switches to FULL around checkpoints did nothing: a checkpoint synced
 * neither the WAL nor the database file, and a power cut after the WAL
 * started over could corrupt the database.  tests/e2e/powercut.sh.)
 * Deferred sync runs at NORMAL, not OFF: no sync at COMMIT either, but
 * SQLite then syncs the WAL header when the WAL starts over (at OFF it
 * does not, and a disk that writes the new frames before the new header
 * can replay stale frames of the old WAL) and its checkpoints sync.
 */
static void read_release(struct sq *q);

static int set_synchronous(struct sq *q, int level)
{
    static const char *const sql[] = {NULL, "PRAGMA synchronous=NORMAL", "PRAGMA synchronous=FULL"};
    if (level < SYNC_LEVEL_NORMAL || level > SYNC_LEVEL_FULL || q->base.batch_active)
        return ERR_INVALID;
    read_release(q); /* the shared read snapshot is a transaction too */
    return sqlite3_exec(q->db, sql[level], NULL, NULL, NULL) == SQLITE_OK ? 0 : ERR_IO;
}

/* A PASSIVE checkpoint on this connection, after the COMMIT that asked for
 * it (deferred sync).  The connection runs at NORMAL, so the checkpoint
 * syncs the WAL before copying and the database file after, as it must
 * before the WAL may start over. */
static void inline_checkpoint(struct sq *q)
{
#ifdef UNITTEST
    if (q->probe_level)
        *q->probe_level = store_sqlite_synchronous(&q->base);
#endif
    sqlite3_wal_checkpoint_v2(q->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
}

/* The sticky sync error: commits are refused once a sync failed. */
static bool sync_failed(struct sq *q)
{
    int err = 0;
    if (q->sync)
        sqlite_sync_done(q->sync, &err);
    return err != 0;
}

/* After a successful COMMIT: the head moves; without deferred sync the
 * commit is durable and announced now, with it the commit gets a ticket
 * and is announced by sq_sync_poll once synced. */
static void committed(struct sq *q)
{
    if (q->txn_seq > q->committed_head)
        q->committed_head = q->txn_seq;
    q->txn_seq = 0;
    if (!q->sync) {
        store_notify_commit(&q->base, q->committed_head);
        return;
    }
    if (q->wal_written) {
        q->wal_written = false;
        if (q->ticket - q->announced >= SYNC_RING)
            sqlite_sync_wait(q->sync, q->ticket - SYNC_RING + 1); /* backpressure */
        q->ticket++;
        q->ring[q->ticket % SYNC_RING] = q->committed_head;
        sqlite_sync_request(q->sync, q->ticket);
    }
    if (q->restart_due) {
        q->restart_due = false;
        inline_checkpoint(q);
    }
}

/* Maps a SQLite result code to ERR_*. */
static int map_rc(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_OK:
    case SQLITE_ROW:
    case SQLITE_DONE:
        return 0;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return ERR_UNAVAILABLE;
    case SQLITE_NOMEM:
        return ERR_NOMEM;
    case SQLITE_TOOBIG:
        return ERR_TOOBIG;
    default:
        return ERR_IO;
    }
}

/* Steps a statement that returns no rows we need, then resets it. */
static int run(struct sq *q, enum stmt_id id)
{
    sqlite3_stmt *st = q->st[id];
    int rc;
#ifdef UNITTEST
    /* Fault injection: the chosen statement fails as if the disk had;
     * rollbacks are spared, they are the way out. */
    if (q->fault_at && id != ST_ROLLBACK && id != ST_ROLLBACK_TO && id != ST_SUB_ROLLBACK_TO &&
        ++q->fault_count == q->fault_at) {
        sqlite3_clear_bindings(st);
        return ERR_IO;
    }
#endif
    rc = sqlite3_step(st);
    sqlite3_reset(st);
    return map_rc(rc);
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
    sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
}

static double now_s(struct sq *q)
{
    return (double)store_now_ms(&q->base) / 1000.0;
}

/* ---------- read snapshots ---------- */

static int64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Ends the shared read snapshot, if one is open. */
static void read_release(struct sq *q)
{
    if (!q->read_open)
        return;
    q->read_open = false;
    if (!sqlite3_get_autocommit(q->db))
        run(q, ST_COMMIT);
}

/*
 * Every SQLite read transaction in WAL mode takes and drops a shared lock
 * with fcntl(), which costs more than a point lookup.  So outside a batch,
 * eventually consistent reads share one read transaction for up to
 * READ_SNAPSHOT_US: they may miss what *other* connections committed in
 * that time (never this connection's writes: every write and every batch
 * ends the snapshot first).  Strongly consistent reads end it and run on a
 * fresh one.  Inside a batch, reads use the batch's transaction.  A store
 * that falls idle keeps its last snapshot until its next call; meanwhile
 * another process's WAL checkpoints cannot pass it (the WAL file grows,
 * nothing is lost).
 */
static int read_prepare(struct sq *q, bool consistent)
{
    int64_t now;
    int rc;
    if (q->base.batch_active)
        return 0;
    if (consistent) {
        read_release(q);
        return 0;
    }
    now = mono_us();
    if (q->read_open && now - q->read_since_us < READ_SNAPSHOT_US)
        return 0;
    read_release(q);
    rc = run(q, ST_BEGIN_READ);
    if (!rc) {
        q->read_open = true;
        q->read_since_us = now;
    }
    return rc;
}

/* ---------- transactions ---------- */

/* What wtx_end needs to close a scope. */
struct wtx {
    uint64_t saved_seq;
    bool savepoint;
};

/*
 * Opens a write scope.  Outside a batch: a transaction of its own.  Inside
 * a batch, a single operation needs no SAVEPOINT: everything that can make
 * it fail softly (a condition, an invalid update) is decided before its
 * first write, and a hard error after a write dooms the whole batch anyway.
 * multi (transactions: a later condition may fail after earlier writes)
 * gets a SAVEPOINT.
 */
static int wtx_begin(struct sq *q, bool multi, struct wtx *w)
{
    int rc;
    w->saved_seq = q->txn_seq;
    w->savepoint = false;
    q->op_wrote = false;
    if (q->base.batch_active) {
        if (q->base.batch_doomed || (q->base.sub_active && q->base.sub_doomed))
            return ERR_IO;
        if (!multi)
            return 0;
        rc = run(q, ST_SAVEPOINT);
        w->savepoint = !rc;
        return rc;
    }
    read_release(q);
    q->txn_seq = 0;
    return run(q, ST_BEGIN);
}

/* Gives up the open batch after a partial write or a backend rollback.
 * Inside a sub-batch whose transaction is still open only the sub-batch
 * is given up: its end rolls back to its savepoint. */
static void doom_batch(struct sq *q)
{
    if (q->base.sub_active && !sqlite3_get_autocommit(q->db)) {
        q->base.sub_doomed = true;
        return;
    }
    if (!sqlite3_get_autocommit(q->db))
        run(q, ST_ROLLBACK);
    q->base.batch_doomed = true;
    q->txn_seq = 0;
}

/* Closes the scope opened by wtx_begin: keeps it when rc is 0, undoes it
 * otherwise.  Returns rc, or the commit's error. */
static int wtx_end(struct sq *q, int rc, const struct wtx *w)
{
    if (q->base.batch_active) {
        /* SQLite rolls the whole transaction back on some errors (I/O,
         * full disk, OOM): the batch is gone and must not go on in
         * autocommit mode. */
        if (sqlite3_get_autocommit(q->db)) {
            doom_batch(q);
            return rc ? rc : ERR_IO;
        }
        if (w->savepoint) {
            if (!rc) {
                rc = run(q, ST_RELEASE);
                if (!rc)
                    return 0;
            }
            run(q, ST_ROLLBACK_TO);
            run(q, ST_RELEASE);
            q->txn_seq = w->saved_seq;
            if (sqlite3_get_autocommit(q->db))
                doom_batch(q);
        } else if (rc && q->op_wrote) {
            doom_batch(q);
        }
        return rc;
    }
    if (!rc && sync_failed(q))
        rc = ERR_IO;
    if (!rc) {
        rc = run(q, ST_COMMIT);
        if (!rc) {
            committed(q);
            return 0;
        }
    }
    if (!sqlite3_get_autocommit(q->db))
        run(q, ST_ROLLBACK);
    q->txn_seq = 0;
    return rc;
}

/* ---------- item access inside a scope ---------- */

/* Reads the stream head (ST_HEAD) inside the open write transaction. */
static int head_locked(struct sq *q, uint64_t *head)
{
    sqlite3_stmt *st = q->st[ST_HEAD];
    int rc = sqlite3_step(st);
    *head = rc == SQLITE_ROW ? (uint64_t)sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : map_rc(rc);
}

/* Appends a stream record (image NULL for REMOVE). */
static int stream_add(struct sq *q, int kind, const char *pk, const char *sk, const char *image,
                      size_t len)
{
    sqlite3_stmt *st = q->st[ST_STREAM_ADD];
    uint64_t base = q->txn_seq;
    int rc;
    /* The next seq: one past the highest this transaction wrote, or past
     * the head read under the write lock that the transaction holds (a
     * batch read it when it took the lock). */
    if (!q->schema1 && !base && q->base.batch_active)
        base = q->batch_head;
    if (!q->schema1 && !base) {
        rc = head_locked(q, &base);
        if (rc)
            return rc;
    }
    if (q->schema1)
        sqlite3_bind_null(st, 6);
    else
        sqlite3_bind_int64(st, 6, (int64_t)(base + 1));
    sqlite3_bind_int64(st, 1, store_now_ms(&q->base));
    sqlite3_bind_int(st, 2, kind);
    bind_text(st, 3, pk);
    bind_text(st, 4, sk);
    if (image && q->keys_only && q->keys_only(pk, sk))
        image = NULL; /* store_options.stream_keys_only */
    if (image)
        sqlite3_bind_text(st, 5, image, (int)len, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 5);
    rc = run(q, ST_STREAM_ADD);
    if (!rc) {
        /* The row's seq (the AUTOINCREMENT bookkeeping does not touch it). */
        uint64_t seq = (uint64_t)sqlite3_last_insert_rowid(q->db);
        q->op_wrote = true;
        if (seq > q->txn_seq)
            q->txn_seq = seq;
    }
    return rc;
}

/*
 * Loads the live item (pk, sk).  On success returns 0 with *cur the parsed
 * item, or NULL when absent or expired, and *size its stored size (0 when
 * NULL).  On error returns ERR_IO (also for an unparsable body).
 */
static int item_load(struct sq *q, const char *pk, const char *sk, cJSON **cur, size_t *size)
{
    sqlite3_stmt *st = q->st[ST_GET];
    int rc;
    *cur = NULL;
    *size = 0;
    bind_text(st, 1, pk);
    bind_text(st, 2, sk);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        bool expired =
            sqlite3_column_type(st, 1) != SQLITE_NULL && sqlite3_column_double(st, 1) < now_s(q);
        if (!expired) {
            const char *body = (const char *)sqlite3_column_text(st, 0);
            int len = sqlite3_column_bytes(st, 0);
            *cur = body ? item_json_parse(body, (size_t)len) : NULL;
            *size = (size_t)sqlite3_column_int64(st, 2);
            if (!*cur)
                rc = SQLITE_CORRUPT;
        }
    }
    sqlite3_reset(st);
    return map_rc(rc);
}

static const char *str_attr(const cJSON *item, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* What a writer knows about the row it is about to write. */
enum prior { PRIOR_UNKNOWN, PRIOR_ABSENT, PRIOR_PRESENT, PRIOR_INSERT_ONLY };

static void bind_item(sqlite3_stmt *st, const cJSON *item, size_t size, const struct buf *body)
{
    const char *gpk = str_attr(item, "GSI1PK"), *gsk = str_attr(item, "GSI1SK");
    const cJSON *ttl = cJSON_GetObjectItemCaseSensitive(item, "ttl");
    bind_text(st, 1, str_attr(item, "PK"));
    bind_text(st, 2, str_attr(item, "SK"));
    /* GSI1 is sparse: an item is in it only with both key attributes. */
    if (gpk && gsk) {
        bind_text(st, 3, gpk);
        bind_text(st, 4, gsk);
    } else {
        sqlite3_bind_null(st, 3);
        sqlite3_bind_null(st, 4);
    }
    if (cJSON_IsNumber(ttl))
        sqlite3_bind_double(st, 5, ttl->valuedouble);
    else
        sqlite3_bind_null(st, 5);
    sqlite3_bind_int64(st, 6, (int64_t)size);
    sqlite3_bind_text(st, 7, body->data, (int)body->len, SQLITE_STATIC);
}

/*
 * Writes a checked item and its stream record.  The record is INSERT when
 * the item did not exist, MODIFY when it replaced one.  prior says what
 * the caller saw: PRIOR_ABSENT (it read no live item; a row still there
 * is an expired one, so the write is an INSERT), PRIOR_PRESENT, or
 * PRIOR_UNKNOWN (a blind put: an expired row not yet purged counts as
 * existing, as it does in DynamoDB until TTL deletes it).
 * PRIOR_INSERT_ONLY: the caller read nothing and wants the item only if
 * no row is there; when one is (perhaps an expired one, which counts as
 * absent), nothing is written and ERR_CONDITION tells the caller to look.
 */
static uint64_t key_hash(const char *pk, const char *sk)
{
    return hash_pair(pk, sk) | 1; /* never 0, the empty slot */
}

/*
 * A blind put of an item this connection wrote lately (the detector's
 * window states and alerts, rewritten batch after batch) most likely
 * replaces it: the UPDATE goes first and the INSERT only when it changed
 * nothing.  Same outcome and stream record as item_write's usual order,
 * one statement less.  On success *done is true and *inserted tells the
 * kind; *done false means "go the usual way" (nothing was written).
 */
static int write_hinted(struct sq *q, const cJSON *item, size_t size, bool *done, bool *inserted)
{
    int rc;
    *done = *inserted = false;
    bind_item(q->st[ST_REPLACE], item, size, &q->body);
    rc = run(q, ST_REPLACE);
    if (rc || sqlite3_changes(q->db) == 1) {
        *done = !rc;
        return rc;
    }
    bind_item(q->st[ST_INSERT_NEW], item, size, &q->body);
    rc = run(q, ST_INSERT_NEW);
    if (!rc && sqlite3_changes(q->db) != 1)
        rc = ERR_INTERNAL; /* neither there nor insertable inside our transaction */
    *done = *inserted = !rc;
    return rc;
}

static int item_write(struct sq *q, const cJSON *item, size_t size, enum prior prior)
{
    bool inserted = false, done = false;
    uint64_t h = key_hash(str_attr(item, "PK"), str_attr(item, "SK"));
    uint64_t *slot = &q->present[h & (PRESENT_SLOTS - 1)];
    int rc = 0;
    buf_reset(&q->body);
    if (canon_write(&q->body, item))
        return ERR_TOOBIG;
    if (prior == PRIOR_UNKNOWN && *slot == h) {
        rc = write_hinted(q, item, size, &done, &inserted);
        if (rc)
            return rc;
    }
    if (!done && prior != PRIOR_PRESENT) {
        bind_item(q->st[ST_INSERT_NEW], item, size, &q->body);
        rc = run(q, ST_INSERT_NEW);
        inserted = !rc && sqlite3_changes(q->db) == 1;
    }
    if (!rc && !done && !inserted && prior == PRIOR_INSERT_ONLY)
        return ERR_CONDITION;
    if (!rc && !done && !inserted) {
        bind_item(q->st[ST_REPLACE], item, size, &q->body);
        rc = run(q, ST_REPLACE);
        if (!rc && sqlite3_changes(q->db) != 1)
            rc = ERR_INTERNAL; /* the row vanished inside our transaction */
    }
    if (rc)
        return rc;
    q->op_wrote = true;
    *slot = h;
    return stream_add(q, inserted || prior == PRIOR_ABSENT ? KIND_INSERT : KIND_MODIFY,
                      str_attr(item, "PK"), str_attr(item, "SK"), q->body.data, q->body.len);
}

/* Deletes (pk, sk) if present, with a REMOVE record; *size gets the
 * deleted item's size (0 when nothing was deleted). */
static int item_remove(struct sq *q, const char *pk, const char *sk, size_t *size)
{
    sqlite3_stmt *st = q->st[ST_DELETE];
    bool found = false;
    int rc;
    *size = 0;
    bind_text(st, 1, pk);
    bind_text(st, 2, sk);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        found = true;
        *size = (size_t)sqlite3_column_int64(st, 0);
    }
    sqlite3_reset(st);
    rc = map_rc(rc);
    if (!rc && found) {
        q->op_wrote = true;
        rc = stream_add(q, KIND_REMOVE, pk, sk, NULL, 0);
    }
    return rc;
}

/* Evaluates cond against the live item; *size gets its size and *prior
 * what was seen (PRIOR_UNKNOWN when cond needed no read). */
static int check_current(struct sq *q, const char *pk, const char *sk,
                         const struct store_cond *cond, size_t *size, enum prior *prior)
{
    cJSON *cur = NULL;
    int rc;
    *size = 0;
    *prior = PRIOR_UNKNOWN;
    if (!cond || cond->kind == STORE_COND_NONE)
        return 0;
    rc = item_load(q, pk, sk, &cur, size);
    if (!rc) {
        *prior = cur ? PRIOR_PRESENT : PRIOR_ABSENT;
        rc = store_cond_eval(cond, cur);
    }
    cJSON_Delete(cur);
    return rc;
}

static int do_put(struct sq *q, const cJSON *item, size_t size, const struct store_cond *cond,
                  size_t *bytes)
{
    size_t old = 0;
    enum prior prior;
    /* attribute_not_exists(PK): the INSERT itself tells whether a row is
     * there, without a read first; only when one is does the general way
     * below look at it */
    if (cond && cond->kind == STORE_COND_NOT_EXISTS) {
        int rc = item_write(q, item, size, PRIOR_INSERT_ONLY);
        if (rc != ERR_CONDITION) {
            *bytes = size;
            return rc;
        }
    }
    int rc = check_current(q, str_attr(item, "PK"), str_attr(item, "SK"), cond, &old, &prior);
    *bytes = old > size ? old : size;
    if (!rc)
        rc = item_write(q, item, size, prior);
    return rc;
}

static int do_del(struct sq *q, const char *pk, const char *sk, const struct store_cond *cond,
                  size_t *bytes)
{
    size_t old = 0;
    enum prior prior;
    int rc = check_current(q, pk, sk, cond, &old, &prior);
    if (!rc)
        rc = item_remove(q, pk, sk, &old);
    *bytes = old;
    return rc;
}

static int do_update(struct sq *q, const char *pk, const char *sk, const struct store_action *acts,
                     size_t nacts, const struct store_cond *cond, cJSON **new_image, size_t *bytes)
{
    cJSON *cur = NULL;
    size_t old = 0, size = 0;
    enum prior prior;
    int rc = item_load(q, pk, sk, &cur, &old);
    prior = cur ? PRIOR_PRESENT : PRIOR_ABSENT;
    if (!rc)
        rc = store_cond_eval(cond, cur);
    if (!rc && !cur) {
        cur = cJSON_CreateObject();
        if (!cJSON_AddStringToObject(cur, "PK", pk) || !cJSON_AddStringToObject(cur, "SK", sk))
            rc = ERR_NOMEM;
    }
    if (!rc)
        rc = store_apply_actions(cur, acts, nacts);
    if (!rc)
        rc = store_check_item(cur, &size);
    if (!rc)
        rc = item_write(q, cur, size, prior);
    *bytes = old > size ? old : size;
    if (!rc && new_image) {
        *new_image = cur;
        cur = NULL;
    }
    cJSON_Delete(cur);
    return rc;
}

static int do_checkpoint(struct sq *q, const char *reader, uint64_t seq)
{
    sqlite3_stmt *st = q->st[ST_CP_SET];
    bind_text(st, 1, reader);
    sqlite3_bind_int64(st, 2, (int64_t)seq);
    sqlite3_bind_int64(st, 3, store_now_ms(&q->base));
    int rc = run(q, ST_CP_SET);
    if (!rc)
        q->op_wrote = true;
    return rc;
}

/* ---------- driver operations ---------- */

static int sq_get(struct store *s, const char *pk, const char *sk, bool consistent, cJSON **out,
                  size_t *bytes)
{
    struct sq *q = sq_of(s);
    int rc = read_prepare(q, consistent);
    if (!rc)
        rc = item_load(q, pk, sk, out, bytes);
    if (!rc && !*out)
        rc = ERR_NOTFOUND;
    return rc;
}

static int sq_put(struct store *s, const cJSON *item, size_t item_size,
                  const struct store_cond *cond, size_t *bytes)
{
    struct sq *q = sq_of(s);
    struct wtx tx;
    int rc = wtx_begin(q, false, &tx);
    if (!rc)
        rc = do_put(q, item, item_size, cond, bytes);
    return wtx_end(q, rc, &tx);
}

static int sq_del(struct store *s, const char *pk, const char *sk, const struct store_cond *cond,
                  size_t *bytes)
{
    struct sq *q = sq_of(s);
    struct wtx tx;
    int rc = wtx_begin(q, false, &tx);
    if (!rc)
        rc = do_del(q, pk, sk, cond, bytes);
    return wtx_end(q, rc, &tx);
}

static int sq_update(struct store *s, const char *pk, const char *sk,
                     const struct store_action *acts, size_t nacts, const struct store_cond *cond,
                     cJSON **new_image, size_t *bytes)
{
    struct sq *q = sq_of(s);
    struct wtx tx;
    int rc = wtx_begin(q, false, &tx);
    if (!rc)
        rc = do_update(q, pk, sk, acts, nacts, cond, new_image, bytes);
    rc = wtx_end(q, rc, &tx);
    if (rc && new_image) {
        cJSON_Delete(*new_image);
        *new_image = NULL;
    }
    return rc;
}

static int sq_transact(struct store *s, const struct store_write *w, size_t n, int *failed,
                       size_t *bytes)
{
    struct sq *q = sq_of(s);
    struct wtx tx;
    size_t dummy;
    enum prior prior;
    int rc = wtx_begin(q, true, &tx);
    for (size_t i = 0; !rc && i < n; i++) {
        switch (w[i].kind) {
        case STORE_W_PUT:
            rc = do_put(q, w[i].item, store_item_size(w[i].item), &w[i].cond, &bytes[i]);
            break;
        case STORE_W_UPDATE:
            rc = do_update(q, w[i].pk, w[i].sk, w[i].acts, w[i].nacts, &w[i].cond, NULL, &bytes[i]);
            break;
        case STORE_W_DELETE:
            rc = do_del(q, w[i].pk, w[i].sk, &w[i].cond, &bytes[i]);
            break;
        case STORE_W_CHECK:
            rc = check_current(q, w[i].pk, w[i].sk, &w[i].cond, &dummy, &prior);
            break;
        case STORE_W_CHECKPOINT:
            rc = do_checkpoint(q, w[i].reader, w[i].seq);
            break;
        }
        if (rc)
            *failed = (int)i;
    }
    return wtx_end(q, rc, &tx);
}

/* Sort-key range [lo, hi) of a query; hi_set false means unbounded. */
struct range {
    char lo[STORE_SK_MAX + 2];
    char hi[STORE_SK_MAX + 2];
    bool hi_set;
};

/* dst = src followed by \x01: the least key greater than src. */
static void set_after(char *dst, const char *src)
{
    size_t n = strlen(src);
    memcpy(dst, src, n);
    dst[n] = '\x01';
    dst[n + 1] = '\0';
}

static void set_copy(char *dst, const char *src)
{
    size_t n = strlen(src);
    memcpy(dst, src, n + 1);
}

/* hi for begins_with: the prefix with trailing 0xff bytes dropped and the
 * last byte incremented; an empty result means "no upper bound". */
static bool set_prefix_end(char *dst, const char *prefix)
{
    size_t n = strlen(prefix);
    memcpy(dst, prefix, n + 1);
    while (n > 0 && (unsigned char)dst[n - 1] == 0xff)
        dst[--n] = '\0';
    if (n == 0)
        return false;
    dst[n - 1] = (char)((unsigned char)dst[n - 1] + 1);
    return true;
}

static void range_of(const struct store_query *qq, const struct store_cursor *cur, bool gsi,
                     struct range *r)
{
    r->lo[0] = '\0';
    r->hi_set = false;
    switch (qq->sk_op) {
    case STORE_SK_ANY:
        break;
    case STORE_SK_EQ:
        set_copy(r->lo, qq->sk);
        set_after(r->hi, qq->sk);
        r->hi_set = true;
        break;
    case STORE_SK_BEGINS:
        set_copy(r->lo, qq->sk);
        r->hi_set = set_prefix_end(r->hi, qq->sk);
        break;
    case STORE_SK_BETWEEN:
        set_copy(r->lo, qq->sk);
        set_after(r->hi, qq->sk2);
        r->hi_set = true;
        break;
    case STORE_SK_LT:
        set_copy(r->hi, qq->sk);
        r->hi_set = true;
        break;
    case STORE_SK_LE:
        set_after(r->hi, qq->sk);
        r->hi_set = true;
        break;
    case STORE_SK_GT:
        set_after(r->lo, qq->sk);
        break;
    case STORE_SK_GE:
        set_copy(r->lo, qq->sk);
        break;
    }
    /* A base-table cursor narrows the range; a GSI1 cursor needs the full
     * (gsi1sk, pk, sk) position and is bound separately. */
    if (cur && !gsi) {
        char tmp[STORE_SK_MAX + 2];
        if (qq->forward) {
            set_after(tmp, cur->sk);
            if (strcmp(tmp, r->lo) > 0)
                set_copy(r->lo, tmp);
        } else if (!r->hi_set || strcmp(cur->sk, r->hi) < 0) {
            set_copy(r->hi, cur->sk);
            r->hi_set = true;
        }
    }
}

/* Copies a key column into a fixed buffer; false when it does not fit. */
static bool col_copy(sqlite3_stmt *st, int col, char *dst, size_t cap)
{
    const unsigned char *t = sqlite3_column_text(st, col);
    size_t n = (size_t)sqlite3_column_bytes(st, col);
    if (!t || n >= cap)
        return false;
    memcpy(dst, t, n);
    dst[n] = '\0';
    return true;
}

static int sq_query(struct store *s, const struct store_query *qq, const struct store_cursor *cur,
                    struct store_result *res, size_t *bytes)
{
    struct sq *q = sq_of(s);
    bool gsi = qq->index == STORE_INDEX_GSI1, more = false;
    struct range r;
    enum stmt_id id;
    sqlite3_stmt *st;
    size_t total = 0;
    int count = 0, rc;

    rc = read_prepare(q, qq->consistent && !gsi);
    if (rc)
        return rc;
    range_of(qq, cur, gsi, &r);
    if (!gsi)
        id = qq->forward ? ST_Q_TABLE_ASC : ST_Q_TABLE_DESC;
    else if (cur)
        id = qq->forward ? ST_Q_GSI_ASC_AFTER : ST_Q_GSI_DESC_BEFORE;
    else
        id = qq->forward ? ST_Q_GSI_ASC : ST_Q_GSI_DESC;
    st = q->st[id];
    bind_text(st, 1, qq->pk);
    bind_text(st, 2, r.lo);
    if (r.hi_set)
        bind_text(st, 3, r.hi);
    else
        sqlite3_bind_zeroblob(st, 3, 0); /* a BLOB sorts after all TEXT */
    sqlite3_bind_double(st, 4, now_s(q));
    /* One row past the limit tells whether another page exists. */
    sqlite3_bind_int64(st, 5, qq->limit > 0 ? (int64_t)qq->limit + 1 : -1);
    if (gsi && cur) {
        bind_text(st, 6, cur->gsk);
        bind_text(st, 7, cur->pk);
        bind_text(st, 8, cur->sk);
    }
    if (!qq->count_only && !qq->visit)
        res->items = cJSON_CreateArray();
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        size_t size = (size_t)sqlite3_column_int64(st, 3);
        if ((qq->limit > 0 && count == qq->limit) ||
            (count > 0 && total + size > STORE_PAGE_BYTES)) {
            more = true;
            break;
        }
        if (qq->visit) {
            /* The visited attribute only: no tree, no allocation unless
             * the value has escapes. */
            const char *body = (const char *)sqlite3_column_text(st, 4);
            size_t blen = (size_t)sqlite3_column_bytes(st, 4);
            const char *val = NULL;
            size_t vlen = 0;
            char *scratch = NULL;
            int found =
                body ? item_json_attr_str(body, blen, qq->visit_attr, &val, &vlen, &scratch) : -1;
            if (found < 0) {
                rc = SQLITE_CORRUPT;
                break;
            }
            const char *sk = (const char *)sqlite3_column_text(st, 1);
            qq->visit(qq->visit_arg, sk ? sk : "", found ? val : NULL, found ? vlen : 0);
            cJSON_free(scratch);
        } else if (!qq->count_only) {
            const char *body = (const char *)sqlite3_column_text(st, 4);
            size_t blen = (size_t)sqlite3_column_bytes(st, 4);
            cJSON *item = !body          ? NULL
                          : qq->nproject ? item_json_project(body, blen, qq->project, qq->nproject)
                                         : item_json_parse(body, blen);
            if (!item) {
                rc = SQLITE_CORRUPT;
                break;
            }
            cJSON_AddItemToArray(res->items, item);
        }
        if (!col_copy(st, 0, q->last_pk, sizeof(q->last_pk)) ||
            !col_copy(st, 1, q->last_sk, sizeof(q->last_sk)) ||
            (gsi && !col_copy(st, 2, q->last_gsk, sizeof(q->last_gsk)))) {
            rc = SQLITE_CORRUPT;
            break;
        }
        total += size;
        count++;
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE && !more)
        return map_rc(rc) ? map_rc(rc) : ERR_IO;
    res->count = count;
    if (more) {
        res->next = store_cursor_encode(q->last_pk, q->last_sk, gsi ? qq->pk : NULL,
                                        gsi ? q->last_gsk : NULL);
        if (!res->next)
            return ERR_NOMEM;
    }
    *bytes = total;
    return 0;
}

static int sq_batch_begin(struct store *s)
{
    struct sq *q = sq_of(s);
    uint64_t head = 0;
    int rc;
    read_release(q);
    rc = run(q, ST_BEGIN);
    if (rc)
        return rc;
    q->txn_seq = 0;
    /* Another process may have committed since our last look.  Read
     * under the lock, it is also where the batch's first record goes on
     * from (stream_add); unknown (0) when the read failed. */
    q->batch_head = head_locked(q, &head) ? 0 : head;
    if (head > q->committed_head)
        q->committed_head = head;
    return 0;
}

static int sq_batch_commit(struct store *s)
{
    struct sq *q = sq_of(s);
    int rc;
    if (q->base.batch_doomed || sqlite3_get_autocommit(q->db) || sync_failed(q)) {
        rc = ERR_IO;
    } else {
        rc = run(q, ST_COMMIT);
        if (!rc) {
            /* The batch is over before anyone hears of it: a callback that
             * writes must get a transaction of its own. */
            q->base.batch_active = false;
            committed(q);
            return 0;
        }
    }
    if (!sqlite3_get_autocommit(q->db))
        run(q, ST_ROLLBACK);
    q->txn_seq = 0;
    return rc;
}

static void sq_batch_abort(struct store *s)
{
    struct sq *q = sq_of(s);
    if (!sqlite3_get_autocommit(q->db))
        run(q, ST_ROLLBACK);
    q->txn_seq = 0;
}

/* Sub-batches (store.h): a savepoint inside the open batch. */
static int sq_sub_begin(struct store *s)
{
    struct sq *q = sq_of(s);
    q->sub_seq = q->txn_seq;
    return run(q, ST_SUB_SAVEPOINT);
}

static void sq_sub_abort(struct store *s)
{
    struct sq *q = sq_of(s);
    if (sqlite3_get_autocommit(q->db)) {
        /* the backend dropped the whole transaction */
        q->base.batch_doomed = true;
        q->txn_seq = 0;
        return;
    }
    run(q, ST_SUB_ROLLBACK_TO);
    run(q, ST_SUB_RELEASE);
    q->txn_seq = q->sub_seq;
}

static int sq_sub_commit(struct store *s)
{
    struct sq *q = sq_of(s);
    int rc = ERR_IO;
    if (!q->base.sub_doomed && !q->base.batch_doomed && !sqlite3_get_autocommit(q->db)) {
        rc = run(q, ST_SUB_RELEASE);
        if (!rc)
            return 0;
    }
    sq_sub_abort(s);
    return rc;
}

/*
 * Reads up to max records after `after`; with a filter, records that do
 * not match are only counted (their key columns are compared in place,
 * nothing is copied or parsed).  The records array is sized once, for
 * the whole read: growing it after a batch of small frees sent glibc
 * into malloc_consolidate on every read.
 */
static int stream_read_impl(struct sq *q, uint64_t after, size_t max, const struct stream_filter *f,
                            struct stream_record **recs, size_t *n, uint64_t *last,
                            size_t *examined)
{
    sqlite3_stmt *st = q->st[ST_STREAM_READ];
    struct stream_record *v = NULL;
    size_t cap = 0, k = 0, seen = 0;
    uint64_t top = after;
    int rc = read_prepare(q, false);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, (int64_t)after);
    /* Inside a batch the connection sees its own uncommitted records. */
    sqlite3_bind_int64(st, 2, q->base.batch_active ? (int64_t)q->committed_head : INT64_MAX);
    sqlite3_bind_int64(st, 3, (int64_t)max);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct stream_record *r;
        const char *pk = (const char *)sqlite3_column_text(st, 3);
        const char *sk = (const char *)sqlite3_column_text(st, 4);
        enum store_change kind = (enum store_change)sqlite3_column_int(st, 2);
        seen++;
        top = (uint64_t)sqlite3_column_int64(st, 0);
        if (f && !store_stream_match(f, kind, pk ? pk : "", sk ? sk : ""))
            continue;
        if (k == cap) {
            cap = cap ? cap * 2 : (max < 256 ? max : 256);
            v = xrealloc(v, cap * sizeof(*v));
        }
        r = &v[k];
        memset(r, 0, sizeof(*r));
        r->seq = top;
        r->ts_ms = sqlite3_column_int64(st, 1);
        r->kind = kind;
        r->pk = xstrdup(pk ? pk : "");
        r->sk = xstrdup(sk ? sk : "");
        k++;
        if (sqlite3_column_type(st, 5) != SQLITE_NULL) {
            const char *img = (const char *)sqlite3_column_text(st, 5);
            r->image = item_json_parse(img, (size_t)sqlite3_column_bytes(st, 5));
            if (!r->image) {
                rc = SQLITE_CORRUPT;
                break;
            }
        }
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
        store_stream_free(v, k);
        return map_rc(rc) ? map_rc(rc) : ERR_IO;
    }
    if (!k) {
        free(v);
        v = NULL;
    }
    *recs = v;
    *n = k;
    if (last)
        *last = top;
    if (examined)
        *examined = seen;
    return 0;
}

static int sq_stream_read(struct store *s, uint64_t after, size_t max, struct stream_record **recs,
                          size_t *n)
{
    return stream_read_impl(sq_of(s), after, max, NULL, recs, n, NULL, NULL);
}

static int sq_stream_read_filtered(struct store *s, uint64_t after, size_t max,
                                   const struct stream_filter *f, struct stream_record **recs,
                                   size_t *n, uint64_t *last, size_t *examined)
{
    return stream_read_impl(sq_of(s), after, max, f, recs, n, last, examined);
}

/* store_set_bulk: the WAL autocheckpoint threshold (pages). */
static void sq_set_bulk(struct store *s, bool bulk)
{
    struct sq *q = sq_of(s);
    if (q->bulk == bulk)
        return;
    q->bulk = bulk;
    if (q->ckpt)
        sqlite_ckpt_set_frames(q->ckpt,
                               bulk ? STORE_SQLITE_BULK_CHECKPOINT : STORE_SQLITE_AUTOCHECKPOINT);
    else
        sqlite3_wal_autocheckpoint(q->db, bulk ? STORE_SQLITE_BULK_CHECKPOINT
                                               : STORE_SQLITE_AUTOCHECKPOINT);
}

/* With background checkpoints: the WAL hook only tells the thread. */
static int wal_hook(void *arg, sqlite3 *db, const char *name, int frames)
{
    struct sq *q = arg;
    q->wal_written = true;
    if (sqlite_ckpt_kick(q->ckpt, frames)) {
        if (q->sync)
            q->restart_due = true; /* after the COMMIT (inline_checkpoint) */
        else
            sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    }
    return SQLITE_OK;
}

/* ---------- deferred sync ---------- */

static uint64_t sq_sync_pending(struct store *s)
{
    struct sq *q = sq_of(s);
    if (!q->sync || q->ticket == 0)
        return 0;
    return sqlite_sync_done(q->sync, NULL) >= q->ticket ? 0 : q->ticket;
}

static int sq_sync_fd(struct store *s)
{
    struct sq *q = sq_of(s);
    return q->sync ? sqlite_sync_fd(q->sync) : -1;
}

static bool sq_set_durable_hook(struct store *s, void (*fn)(void *arg, uint64_t ticket), void *arg)
{
    struct sq *q = sq_of(s);
    if (!q->sync)
        return false;
    sqlite_sync_set_hook(q->sync, fn, arg);
    return true;
}

static uint64_t sq_sync_poll(struct store *s, int *err)
{
    struct sq *q = sq_of(s);
    if (!q->sync) {
        if (err)
            *err = 0;
        return 0;
    }
    sqlite_sync_clear_fd(q->sync);
    uint64_t done = sqlite_sync_done(q->sync, err);
    struct sqlite_sync_stats st;
    sqlite_sync_get_stats(q->sync, &st);
    q->base.stats.wal_syncs = st.syncs;
    if (done > q->ticket)
        done = q->ticket;
    if (done > q->announced) {
        q->announced = done;
        store_notify_commit(s, q->ring[done % SYNC_RING]);
    }
    return done;
}

static int sq_stream_head(struct store *s, uint64_t *seq)
{
    struct sq *q = sq_of(s);
    sqlite3_stmt *st = q->st[ST_HEAD];
    int rc;
    if (q->base.batch_active) {
        *seq = q->committed_head;
        return 0;
    }
    rc = read_prepare(q, false);
    if (rc)
        return rc;
    rc = sqlite3_step(st);
    *seq = rc == SQLITE_ROW ? (uint64_t)sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    if (*seq > q->committed_head)
        q->committed_head = *seq;
    return map_rc(rc);
}

/* PRAGMA data_version: changes when another connection committed.  In a
 * batch it runs in the batch's transaction (the write lock is held, so
 * nobody can commit between this and the batch's reads). */
static int sq_data_version(struct store *s, uint64_t *v)
{
    struct sq *q = sq_of(s);
    sqlite3_stmt *st = q->st[ST_DATA_VERSION];
    int rc;
    if (!q->base.batch_active)
        read_release(q);
    rc = sqlite3_step(st);
    *v = rc == SQLITE_ROW ? (uint64_t)sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    return map_rc(rc);
}

static int sq_checkpoint_get(struct store *s, const char *reader, uint64_t *seq)
{
    struct sq *q = sq_of(s);
    sqlite3_stmt *st = q->st[ST_CP_GET];
    int rc = read_prepare(q, false);
    if (rc)
        return rc;
    bind_text(st, 1, reader);
    rc = sqlite3_step(st);
    *seq = rc == SQLITE_ROW ? (uint64_t)sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    return map_rc(rc);
}

static int sq_checkpoint_set(struct store *s, const char *reader, uint64_t seq)
{
    struct sq *q = sq_of(s);
    struct wtx tx;
    int rc = wtx_begin(q, false, &tx);
    if (!rc)
        rc = do_checkpoint(q, reader, seq);
    return wtx_end(q, rc, &tx);
}

/*
 * Trimming assumes record timestamps grow with seq (they are taken inside
 * the write transaction that assigns seq): it deletes every record before
 * the first one still within retention.  Retention wins over checkpoints,
 * as with DynamoDB Streams: a reader that falls more than the retention
 * period behind loses records.
 */
static int sq_stream_trim(struct store *s, int64_t cutoff_ms, size_t *trimmed)
{
    struct sq *q = sq_of(s);
    sqlite3_stmt *st = q->st[ST_TRIM_BOUNDARY];
    int64_t boundary = INT64_MAX;
    struct wtx tx;
    int rc, changes;
    sqlite3_bind_int64(st, 1, cutoff_ms);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        boundary = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    rc = map_rc(rc);
    do {
        if (rc)
            break;
        rc = wtx_begin(q, false, &tx);
        changes = 0;
        if (!rc && !q->schema1) {
            /* The head survives the records: it becomes the floor, so that
             * seq goes on from it even when nothing is left. */
            uint64_t head = 0;
            rc = head_locked(q, &head);
            if (!rc) {
                sqlite3_bind_int64(q->st[ST_FLOOR_SET], 1, (int64_t)head);
                rc = run(q, ST_FLOOR_SET);
            }
        }
        if (!rc) {
            st = q->st[ST_TRIM_DELETE];
            sqlite3_bind_int64(st, 1, boundary);
            sqlite3_bind_int(st, 2, TRIM_CHUNK);
            rc = run(q, ST_TRIM_DELETE);
            changes = sqlite3_changes(q->db);
        }
        rc = wtx_end(q, rc, &tx);
        if (!rc)
            *trimmed += (size_t)changes;
    } while (!rc && changes == TRIM_CHUNK);
    return rc;
}

static int sq_purge_expired(struct store *s, int64_t now_ms, size_t max, size_t *purged)
{
    struct sq *q = sq_of(s);
    sqlite3_stmt *st = q->st[ST_EXPIRED];
    char **keys = xcalloc(2 * max, sizeof(char *));
    size_t k = 0, size, n = 0;
    struct wtx tx;
    int rc = wtx_begin(q, true, &tx);
    if (!rc) {
        sqlite3_bind_double(st, 1, (double)now_ms / 1000.0);
        sqlite3_bind_int64(st, 2, (int64_t)max);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW && k < max) {
            keys[2 * k] = xstrdup((const char *)sqlite3_column_text(st, 0));
            keys[2 * k + 1] = xstrdup((const char *)sqlite3_column_text(st, 1));
            k++;
        }
        sqlite3_reset(st);
        rc = map_rc(rc);
    }
    for (size_t i = 0; !rc && i < k; i++) {
        rc = item_remove(q, keys[2 * i], keys[2 * i + 1], &size);
        n++;
    }
    rc = wtx_end(q, rc, &tx);
    if (!rc)
        *purged = n;
    for (size_t i = 0; i < 2 * k; i++)
        free(keys[i]);
    free(keys);
    return rc;
}

static int sq_health(struct store *s)
{
    struct sq *q = sq_of(s);
    if (sync_failed(q))
        return ERR_IO; /* commits are refused: not ready (/api/ready) */
    read_release(q);
    return run(q, ST_PING);
}

/* Runs a one-off census statement (prepared here, not cached: these are
 * rare offline walks) on a fresh read transaction and hands each row to
 * row().  Returns 0, the callback's non-zero value, or ERR_*. */
static int census(struct sq *q, const char *sql, int64_t bind1,
                  int (*row)(sqlite3_stmt *st, void *ctx), void *ctx)
{
    sqlite3_stmt *st = NULL;
    int rc, ret = 0;
    if (q->base.batch_active)
        return ERR_CONFLICT;
    read_release(q);
    rc = sqlite3_prepare_v2(q->db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return map_rc(rc);
    sqlite3_bind_int64(st, 1, bind1);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        ret = row(st, ctx);
        if (ret)
            break;
    }
    if (!ret && rc != SQLITE_DONE)
        ret = map_rc(rc);
    sqlite3_finalize(st);
    return ret;
}

struct census_ctx {
    store_partition_cb pcb;
    store_write_second_cb wcb;
    void *arg;
};

static int partition_row(sqlite3_stmt *st, void *ctx)
{
    struct census_ctx *c = ctx;
    const char *pk = (const char *)sqlite3_column_text(st, 0);
    return c->pcb(c->arg, pk ? pk : "", (uint64_t)sqlite3_column_int64(st, 1),
                  (uint64_t)sqlite3_column_int64(st, 2));
}

static int sq_partitions(struct store *s, store_partition_cb cb, void *arg)
{
    struct census_ctx c = {.pcb = cb, .arg = arg};
    /* Expired items still on disk are left out, as for every read. */
    return census(sq_of(s),
                  "SELECT pk, count(*), sum(size) FROM items WHERE ttl IS NULL OR ttl >= ?1 "
                  "GROUP BY pk ORDER BY pk",
                  (int64_t)now_s(sq_of(s)), partition_row, &c);
}

static int write_second_row(sqlite3_stmt *st, void *ctx)
{
    struct census_ctx *c = ctx;
    const char *pk = (const char *)sqlite3_column_text(st, 0);
    return c->wcb(c->arg, pk ? pk : "", sqlite3_column_int64(st, 1),
                  (uint64_t)sqlite3_column_int64(st, 2), (uint64_t)sqlite3_column_int64(st, 3));
}

static int sq_write_seconds(struct store *s, int64_t since_ms, store_write_second_cb cb, void *arg)
{
    struct census_ctx c = {.wcb = cb, .arg = arg};
    return census(sq_of(s),
                  "SELECT pk, ts / 1000 AS sec, count(*), coalesce(sum(length(image)), 0) "
                  "FROM stream WHERE ts >= ?1 GROUP BY pk, sec ORDER BY pk, sec",
                  since_ms, write_second_row, &c);
}

static void sq_close(struct store *s)
{
    struct sq *q = sq_of(s);
    sqlite_ckpt_stop(q->ckpt); /* first: the last connection checkpoints on close */
    q->ckpt = NULL;
    if (q->sync) {
        /* what was committed gets synced; the close-time checkpoint then
         * syncs the database file before the WAL goes (NORMAL does) */
        sqlite_sync_wait(q->sync, q->ticket);
        sqlite_sync_stop(q->sync);
        q->sync = NULL;
    }
    if (q->db)
        read_release(q);
    for (int i = 0; i < ST_COUNT; i++)
        sqlite3_finalize(q->st[i]);
    sqlite3_close_v2(q->db);
    buf_free(&q->body);
    free(q);
}

static const struct store_ops sqlite_ops = {
    .name = "sqlite",
    .query_visits = true,
    .close = sq_close,
    .get = sq_get,
    .put = sq_put,
    .del = sq_del,
    .update = sq_update,
    .query = sq_query,
    .transact = sq_transact,
    .batch_begin = sq_batch_begin,
    .batch_commit = sq_batch_commit,
    .batch_abort = sq_batch_abort,
    .sub_begin = sq_sub_begin,
    .sub_commit = sq_sub_commit,
    .sub_abort = sq_sub_abort,
    .stream_read = sq_stream_read,
    .stream_head = sq_stream_head,
    .checkpoint_get = sq_checkpoint_get,
    .checkpoint_set = sq_checkpoint_set,
    .stream_trim = sq_stream_trim,
    .purge_expired = sq_purge_expired,
    .health = sq_health,
    .stream_read_filtered = sq_stream_read_filtered,
    .partitions = sq_partitions,
    .write_seconds = sq_write_seconds,
    .data_version = sq_data_version,
    .set_bulk = sq_set_bulk,
    .sync_pending = sq_sync_pending,
    .sync_fd = sq_sync_fd,
    .sync_poll = sq_sync_poll,
    .set_durable_hook = sq_set_durable_hook,
};

#ifdef UNITTEST
void store_sqlite_fault(struct store *s, int nth)
{
    struct sq *q = sq_of(s);
    q->fault_at = nth;
    q->fault_count = 0;
}

struct sqlite_sync *store_sqlite_sync(struct store *s)
{
    return sq_of(s)->sync;
}

int store_sqlite_synchronous(struct store *s)
{
    struct sq *q = sq_of(s);
    sqlite3_stmt *st;
    int level = -1;
    if (sqlite3_prepare_v2(q->db, "PRAGMA synchronous", -1, &st, NULL) != SQLITE_OK)
        return -1;
    if (sqlite3_step(st) == SQLITE_ROW)
        level = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return level;
}

void store_sqlite_inline_checkpoint(struct store *s, int *level_during)
{
    struct sq *q = sq_of(s);
    q->probe_level = level_during;
    inline_checkpoint(q);
    q->probe_level = NULL;
}
#endif

/* ---------- open ---------- */

static int pragma_text_cb(void *arg, int ncol, char **vals, char **names)
{
    (void)names;
    if (ncol > 0 && vals[0])
        snprintf((char *)arg, 16, "%s", vals[0]);
    return 0;
}

/* Pragmas, schema and version check.  On error fills err. */
static int sq_setup(struct sq *q, const struct store_options *o, char *err, size_t errlen)
{
    char mode[16] = "", ver[16] = "";
    char *msg = NULL;
    int rc;
    sqlite3_busy_timeout(q->db, BUSY_TIMEOUT_MS);
    rc = sqlite3_exec(q->db, "PRAGMA journal_mode=WAL", pragma_text_cb, mode, &msg);
    if (rc == SQLITE_OK && strcmp(mode, "wal") != 0 && strcmp(o->path, ":memory:") != 0) {
        snprintf(err, errlen, "%s: cannot switch to WAL mode (journal_mode=%s)", o->path, mode);
        return ERR_IO;
    }
    if (rc == SQLITE_OK &&
        set_synchronous(q, o->durability == STORE_DURABILITY_NORMAL ? SYNC_LEVEL_NORMAL
                                                                    : SYNC_LEVEL_FULL)) {
        snprintf(err, errlen, "%s: cannot set synchronous: %s", o->path, sqlite3_errmsg(q->db));
        return ERR_IO;
    }
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(q->db,
                          "PRAGMA foreign_keys=OFF; PRAGMA cache_size=-32768; "
                          "PRAGMA temp_store=MEMORY;",
                          NULL, NULL, &msg);
    /* Schema creation under the write lock: concurrent openers serialize. */
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(q->db, "BEGIN IMMEDIATE", NULL, NULL, &msg);
    if (rc == SQLITE_OK) {
        rc = sqlite3_exec(q->db, SCHEMA, NULL, NULL, &msg);
        if (rc == SQLITE_OK)
            rc = sqlite3_exec(q->db, "SELECT value FROM meta WHERE key = 'schema_version'",
                              pragma_text_cb, ver, &msg);
        if (rc == SQLITE_OK &&
            (atoi(ver) < STORE_SQLITE_SCHEMA_OLDEST || atoi(ver) > STORE_SQLITE_SCHEMA_VERSION)) {
            sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
            snprintf(err, errlen, "%s: schema version %s, this build reads %d to %d", o->path, ver,
                     STORE_SQLITE_SCHEMA_OLDEST, STORE_SQLITE_SCHEMA_VERSION);
            return ERR_INVALID;
        }
        if (rc == SQLITE_OK) {
            char ai[16] = "";
            rc = sqlite3_exec(q->db,
                              "SELECT instr(upper(sql), 'AUTOINCREMENT') > 0 FROM sqlite_master "
                              "WHERE type = 'table' AND name = 'stream'",
                              pragma_text_cb, ai, &msg);
            q->schema1 = atoi(ai) != 0;
        }
        if (rc == SQLITE_OK)
            rc = sqlite3_exec(q->db, "COMMIT", NULL, NULL, &msg);
        else
            sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
    }
    if (rc != SQLITE_OK) {
        snprintf(err, errlen, "%s: %s", o->path, msg ? msg : sqlite3_errmsg(q->db));
        sqlite3_free(msg);
        return map_rc(rc) ? map_rc(rc) : ERR_IO;
    }
    for (int i = 0; i < ST_COUNT; i++) {
        const char *sql = i == ST_HEAD && q->schema1 ? SQL_HEAD_SCHEMA1 : SQL[i];
        rc = sqlite3_prepare_v3(q->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &q->st[i], NULL);
        if (rc != SQLITE_OK) {
            snprintf(err, errlen, "%s: preparing statement %d: %s", o->path, i,
                     sqlite3_errmsg(q->db));
            return ERR_INTERNAL;
        }
    }
    return sq_stream_head(&q->base, &q->committed_head);
}

struct store *store_open_sqlite(const struct store_options *o, char *err, size_t errlen)
{
    char dummy[8];
    struct sq *q = NULL;
    int rc;
    if (!err || !errlen) {
        err = dummy;
        errlen = sizeof(dummy);
    }
    err[0] = '\0';
    if (!o || !o->path || !*o->path) {
        snprintf(err, errlen, "no database path");
        return NULL;
    }
    q = xcalloc(1, sizeof(*q));
    store_base_init(&q->base, &sqlite_ops, o);
    buf_init(&q->body, BODY_MAX);
    q->keys_only = o->stream_keys_only;
    pthread_once(&sqlite_once, sqlite_setup);
    /* The store's connection writes its WAL through the coalescing shim
     * (store/sqlite_walbuf.h); SQLite's default VFS when it is missing. */
    rc = sqlite3_open_v2(o->path, &q->db,
                         SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                         sqlite_walbuf_register());
    if (rc != SQLITE_OK) {
        snprintf(err, errlen, "%s: %s", o->path, q->db ? sqlite3_errmsg(q->db) : "cannot open");
        goto fail;
    }
    if (sq_setup(q, o, err, errlen)) {
        if (!err[0])
            snprintf(err, errlen, "%s: %s", o->path, sqlite3_errmsg(q->db));
        goto fail;
    }
    if (o->background_checkpoint && strcmp(o->path, ":memory:") != 0) {
        char why[256];
        q->ckpt = sqlite_ckpt_start(o->path, STORE_SQLITE_AUTOCHECKPOINT,
                                    SQLITE_CKPT_RESTART_DEFAULT, why, sizeof(why));
        if (q->ckpt)
            sqlite3_wal_hook(q->db, wal_hook, q); /* replaces the automatic checkpoint */
        else
            log_warn("store: checkpoints stay inline: %s", why);
    }
    /* Deferred sync needs the WAL hook (tickets) and FULL durability
     * (NORMAL syncs no commit anyway). */
    if (o->deferred_sync && q->ckpt && o->durability == STORE_DURABILITY_FULL) {
        char why[256];
        size_t n = strlen(o->path) + 5;
        char *wal = xmalloc(n);
        snprintf(wal, n, "%s-wal", o->path);
        q->sync = sqlite_sync_start(wal, why, sizeof why);
        free(wal);
        if (!q->sync)
            log_warn("store: commits stay synced inline: %s", why);
        else if (set_synchronous(q, SYNC_LEVEL_NORMAL)) {
            log_warn("store: commits stay synced inline: cannot set synchronous=NORMAL");
            sqlite_sync_stop(q->sync);
            q->sync = NULL;
        }
    }
    return &q->base;
fail:
    store_close(&q->base);
    return NULL;
}
