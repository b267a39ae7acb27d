/*
 * raw_verify.c - the SQLite ceiling of GET /api/products/verify.
 *
 * A counted verify makes the store write one scan item, bump two counters
 * (the product's and the brand's scanCount) and append a change-stream
 * record, all inside the group commit of its loop iteration.  This program
 * does the same row writes with plain prepared statements and nothing
 * else (no HTTP, no JSON tree, no signature check, no detector), on a
 * file opened with the store's pragmas (store_sqlite.c: WAL,
 * synchronous FULL or NORMAL, cache_size -32768, temp_store MEMORY) and
 * the store's items/stream schema.  Per verify:
 *   INSERT the scan row into the WITHOUT ROWID items table
 *          (ON CONFLICT DO NOTHING, the store's conditional insert);
 *   two counter upserts (INSERT ... ON CONFLICT DO UPDATE) on the
 *          product's and the brand's STATS rows;
 *   INSERT the scan's record into the stream table;
 * and one BEGIN IMMEDIATE ... COMMIT per --batch verifies, the size of
 * the server's group commits under load (its /metrics histogram
 * genuproof_commit_batch_requests tells; bench/http_bench.sh passes the
 * measured mean).  The counters are an integer column of their own table,
 * which is cheaper than the server's read-modify-write of a JSON item, so
 * the figure is an upper bound.  With --fold the counter upserts (and
 * their stream records) happen once per batch instead of once per verify,
 * as the server's counter folding does (api/counters.c).  With --detector
 * each verify also writes what the in-process detector adds for a scan of
 * a product under attack (detect/process.c): its ops-log entry (an E16
 * item with its GSI1 index entry, ~460 bytes, API.md §7) and that item's
 * stream record; and each batch rewrites the folded alert item (~1.1 KB,
 * count and lastSeen) with its stream record and moves the detector's
 * checkpoint.  That is the floor of the rows a verify costs while the
 * detector runs, with nothing else around them.
 *
 * With --walbuf the file is written through the store's WAL-coalescing
 * VFS (store/sqlite_walbuf.h) instead of SQLite's default: for
 * information, the ceiling of the target stays plain SQLite.
 *
 * Each run writes into a fresh database for --seconds and reports
 * verifies/s and the CPU time per verify (which depends much less on
 * what else runs on the machine); the medians of --runs runs are printed
 * as a Markdown table.
 * Lines starting "RAW " are for scripts.
 *
 *   make bench && build/bench/raw_verify [--mode full|normal|both]
 *       [--batch 32] [--seconds 10] [--runs 3] [--fold] [--detector] [--walbuf] [--dir /tmp]
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store/sqlite_walbuf.h"

#define MAX_RUNS   21
#define MAX_BATCH  100000
#define BODY_MAX   1024
#define PRODUCT_PK "PRODUCT#e084595c97320cfcc85309943f345760"
#define BRAND_PK   "BRAND#5019622c-9860-4b83-a5c6-adb82ebd0412"
#define BRAND_ID   "5019622c-9860-4b83-a5c6-adb82ebd0412"

/* The store's schema (store_sqlite.c), plus a plain counter table. */
static const char SCHEMA[] =
    "CREATE TABLE items(pk TEXT NOT NULL, sk TEXT NOT NULL, gsi1pk TEXT, "
    "  gsi1sk TEXT, ttl REAL, size INTEGER NOT NULL, body TEXT NOT NULL, "
    "  PRIMARY KEY(pk, sk)) WITHOUT ROWID;"
    "CREATE INDEX items_gsi1 ON items(gsi1pk, gsi1sk, pk, sk) WHERE gsi1pk IS NOT NULL;"
    "CREATE INDEX items_ttl ON items(ttl) WHERE ttl IS NOT NULL;"
    "CREATE TABLE stream(seq INTEGER PRIMARY KEY, "
    "  ts INTEGER NOT NULL, kind INTEGER NOT NULL, pk TEXT NOT NULL, sk TEXT NOT NULL, image TEXT);"
    "CREATE TABLE checkpoints(reader TEXT PRIMARY KEY, seq INTEGER NOT NULL, "
    "  updated INTEGER NOT NULL) WITHOUT ROWID;"
    "CREATE TABLE counters(pk TEXT NOT NULL, sk TEXT NOT NULL, attr TEXT NOT NULL, "
    "  n REAL NOT NULL, PRIMARY KEY(pk, sk, attr)) WITHOUT ROWID;";

enum {
    ST_BEGIN,
    ST_COMMIT,
    ST_SCAN,
    ST_COUNTER,
    ST_STREAM,
    ST_OPSLOG,
    ST_ALERT,
    ST_CHECKPOINT,
    ST_N
};

static const char *const SQL[ST_N] = {
    [ST_BEGIN] = "BEGIN IMMEDIATE",
    [ST_COMMIT] = "COMMIT",
    [ST_SCAN] = "INSERT INTO items(pk, sk, gsi1pk, gsi1sk, ttl, size, body) "
                "VALUES(?1, ?2, NULL, NULL, NULL, ?3, ?4) ON CONFLICT(pk, sk) DO NOTHING",
    [ST_COUNTER] = "INSERT INTO counters(pk, sk, attr, n) VALUES(?1, ?2, 'scanCount', ?3) "
                   "ON CONFLICT(pk, sk, attr) DO UPDATE SET n = n + excluded.n",
    /* seq given by the writer, as store_sqlite.c does (schema 2) */
    [ST_STREAM] = "INSERT INTO stream(seq, ts, kind, pk, sk, image) VALUES(?6, ?1, ?2, ?3, ?4, ?5)",
    [ST_OPSLOG] = "INSERT INTO items(pk, sk, gsi1pk, gsi1sk, ttl, size, body) "
                  "VALUES(?1, ?2, 'OPS_LOG', ?3, NULL, ?4, ?5) ON CONFLICT(pk, sk) DO NOTHING",
    [ST_ALERT] = "INSERT INTO items(pk, sk, gsi1pk, gsi1sk, ttl, size, body) "
                 "VALUES(?1, ?2, NULL, NULL, NULL, ?3, ?4) "
                 "ON CONFLICT(pk, sk) DO UPDATE SET size = excluded.size, body = excluded.body",
    [ST_CHECKPOINT] = "INSERT INTO checkpoints(reader, seq, updated) VALUES('detector', ?1, ?2) "
                      "ON CONFLICT(reader) DO UPDATE SET seq = excluded.seq, "
                      "updated = excluded.updated",
};

struct opts {
    int runs;
    int batch;
    double seconds;
    bool fold;
    bool detector;
    const char *mode;
    const char *dir;
};

struct raw {
    sqlite3 *db;
    sqlite3_stmt *st[ST_N];
    uint64_t rng; /* xorshift64 state of the scan ids */
    int64_t seq;  /* stream records written (the detector's checkpoint) */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ISO 8601 UTC with milliseconds, as the server stamps scans. */
static void iso_ms(int64_t ms, char out[48])
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    size_t n;
    gmtime_r(&t, &tm);
    n = strftime(out, 48, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out + n, 48 - n, ".%03uZ", (unsigned)(ms % 1000));
}

static uint64_t next_rand(struct raw *r)
{
    r->rng ^= r->rng << 13;
    r->rng ^= r->rng >> 7;
    r->rng ^= r->rng << 17;
    return r->rng;
}

/* Steps a statement that returns no rows, then resets it.  On error
 * prints SQLite's message and returns -1.  On success returns 0. */
static int step(struct raw *r, int id)
{
    int rc = sqlite3_step(r->st[id]);
    sqlite3_reset(r->st[id]);
    if (rc != SQLITE_DONE) {
        fprintf(stderr, "raw_verify: %s: %s\n", SQL[id], sqlite3_errmsg(r->db));
        return -1;
    }
    return 0;
}

static void raw_close(struct raw *r)
{
    for (int i = 0; i < ST_N; i++)
        sqlite3_finalize(r->st[i]);
    sqlite3_close(r->db);
    memset(r, 0, sizeof(*r));
}

static const char *vfs_name; /* --walbuf: the store's VFS; NULL: SQLite's default */

/* Creates the database at path with the store's pragmas and schema.  On
 * error prints why, closes everything and returns -1.  On success
 * returns 0 and the caller closes r with raw_close. */
static int raw_open(struct raw *r, const char *path, bool full)
{
    char *msg = NULL;
    int rc;
    memset(r, 0, sizeof(*r));
    r->rng = ((uint64_t)wall_ms() << 16) ^ (uint64_t)getpid() ^ 0x9e3779b97f4a7c15ULL;
    rc = sqlite3_open_v2(path, &r->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, vfs_name);
    if (rc == SQLITE_OK)
        rc = sqlite3_busy_timeout(r->db, 5000);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(r->db, "PRAGMA journal_mode=WAL", NULL, NULL, &msg);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(r->db, full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL",
                          NULL, NULL, &msg);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(r->db,
                          "PRAGMA foreign_keys=OFF; PRAGMA cache_size=-32768; "
                          "PRAGMA temp_store=MEMORY;",
                          NULL, NULL, &msg);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(r->db, SCHEMA, NULL, NULL, &msg);
    for (int i = 0; i < ST_N && rc == SQLITE_OK; i++)
        rc = sqlite3_prepare_v3(r->db, SQL[i], -1, SQLITE_PREPARE_PERSISTENT, &r->st[i], NULL);
    if (rc != SQLITE_OK) {
        fprintf(stderr, "raw_verify: %s: %s\n", path, msg ? msg : sqlite3_errmsg(r->db));
        sqlite3_free(msg);
        raw_close(r);
        return -1;
    }
    return 0;
}

static int counter(struct raw *r, const char *pk, const char *sk, double delta)
{
    sqlite3_stmt *st = r->st[ST_COUNTER];
    sqlite3_bind_text(st, 1, pk, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, sk, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 3, delta);
    return step(r, ST_COUNTER);
}

static int stream_add(struct raw *r, int64_t ms, int kind, const char *pk, const char *sk,
                      const char *image, int len)
{
    sqlite3_stmt *st = r->st[ST_STREAM];
    sqlite3_bind_int64(st, 1, ms);
    sqlite3_bind_int(st, 2, kind);
    sqlite3_bind_text(st, 3, pk, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, sk, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, image, len, SQLITE_STATIC);
    r->seq++;
    sqlite3_bind_int64(st, 6, r->seq);
    return step(r, ST_STREAM);
}

/* --detector, per verify: the scan's ops-log entry and its stream record. */
static int opslog_entry(struct raw *r, int64_t ms, const char *ts)
{
    char pk[64], sk[96], body[BODY_MAX];
    int len;
    snprintf(pk, sizeof(pk), "OPS_LOG#%.10s", ts);
    snprintf(sk, sizeof(sk), "%s#threat_detector#%lld-0", ts, (long long)r->seq);
    len = snprintf(body, sizeof(body),
                   "{\"PK\":\"%s\",\"SK\":\"%s\",\"GSI1PK\":\"OPS_LOG\",\"GSI1SK\":\"%s\","
                   "\"agent\":\"threat_detector\",\"trigger\":\"scan_event\",\"productId\":"
                   "\"e084595c97320cfcc85309943f345760\",\"brandId\":\"" BRAND_ID "\","
                   "\"anomalyFlags\":[\"geographic_anomaly\"],\"geminiModel\":\"rules\","
                   "\"aiSeverity\":\"HIGH\",\"aiAttackVector\":\"tag_cloning\","
                   "\"aiConfidence\":60,\"latencyMs\":0.002,\"timestamp\":\"%s\"}",
                   pk, sk, ts, ts);
    sqlite3_stmt *st = r->st[ST_OPSLOG];
    sqlite3_bind_text(st, 1, pk, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, sk, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, ts, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 4, len);
    sqlite3_bind_text(st, 5, body, len, SQLITE_TRANSIENT);
    int rc = step(r, ST_OPSLOG);
    return rc ? rc : stream_add(r, ms, 1, pk, sk, body, len);
}

/* --detector, per batch: the folded alert rewritten (with its stream
 * record) and the detector's checkpoint moved. */
static int detector_batch(struct raw *r, int n)
{
    static long long count;
    char ts[48], body[BODY_MAX + 512];
    static const char pk[] = "THREAT#" BRAND_ID "#2026-12";
    static const char sk[] =
        "ALERT#2026-12-03T16:00:05.178Z#geographic_anomaly#0bb3eaac30e62e8b4a04d1b37be70992";
    int64_t ms = wall_ms();
    int len, rc;
    char pad[601];
    memset(pad, 'x', sizeof(pad) - 1);
    pad[sizeof(pad) - 1] = 0;
    count += n;
    iso_ms(ms, ts);
    /* The alert's usual size: its narrative, analysis and flags. */
    len = snprintf(body, sizeof(body),
                   "{\"PK\":\"%s\",\"SK\":\"%s\",\"type\":\"geographic_anomaly\","
                   "\"count\":%lld,\"lastSeen\":\"%s\",\"details\":\"%s\"}",
                   pk, sk, count, ts, pad);
    sqlite3_stmt *st = r->st[ST_ALERT];
    sqlite3_bind_text(st, 1, pk, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, sk, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, len);
    sqlite3_bind_text(st, 4, body, len, SQLITE_STATIC);
    rc = step(r, ST_ALERT);
    if (!rc)
        rc = stream_add(r, ms, 2, pk, sk, body, len);
    if (!rc) {
        st = r->st[ST_CHECKPOINT];
        sqlite3_bind_int64(st, 1, r->seq);
        sqlite3_bind_int64(st, 2, ms);
        rc = step(r, ST_CHECKPOINT);
    }
    return rc;
}

/* The row writes of one counted verify (see the file comment).  On error
 * returns -1.  On success returns 0. */
static int one_verify(struct raw *r, bool fold, bool detector)
{
    char ts[48], sk[80], body[BODY_MAX];
    int64_t ms = wall_ms();
    unsigned id = (unsigned)(next_rand(r) >> 32);
    int len, rc;

    iso_ms(ms, ts);
    snprintf(sk, sizeof(sk), "SCAN#%s#%08x", ts, id);
    /* An E8 scan item of the usual size (~450 bytes of canonical JSON). */
    len = snprintf(body, sizeof(body),
                   "{\"PK\":\"" PRODUCT_PK "\",\"SK\":\"%s\",\"brandId\":\"" BRAND_ID "\","
                   "\"city\":\"Unknown\",\"country\":\"FR\",\"fingerprint\":\"%016llx%016llx"
                   "%016llx%016llx\",\"ip\":\"127.0.0.1\",\"productId\":"
                   "\"e084595c97320cfcc85309943f345760\",\"result\":\"authentic\",\"scanId\":"
                   "\"%08x\",\"timestamp\":\"%s\",\"userAgent\":\"wrk\"}",
                   sk, (unsigned long long)next_rand(r), (unsigned long long)next_rand(r),
                   (unsigned long long)next_rand(r), (unsigned long long)next_rand(r), id, ts);
    sqlite3_stmt *st = r->st[ST_SCAN];
    sqlite3_bind_text(st, 1, PRODUCT_PK, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, sk, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, len);
    sqlite3_bind_text(st, 4, body, len, SQLITE_STATIC);
    rc = step(r, ST_SCAN);
    if (!rc && !fold)
        rc = counter(r, PRODUCT_PK, "METADATA", 1);
    if (!rc && !fold)
        rc = counter(r, BRAND_PK, "STATS", 1);
    if (!rc)
        rc = stream_add(r, ms, 1, PRODUCT_PK, sk, body, len);
    if (!rc && detector)
        rc = opslog_entry(r, ms, ts);
    return rc;
}

/* The folded counters of a batch: one upsert and one stream record per
 * counter item, as api/counters.c flushes them. */
static int fold_counters(struct raw *r, int n)
{
    static const char img[] = "{\"scanCount\":0}";
    int64_t ms = wall_ms();
    int rc = counter(r, PRODUCT_PK, "METADATA", n);
    if (!rc)
        rc = stream_add(r, ms, 2, PRODUCT_PK, "METADATA", img, (int)sizeof(img) - 1);
    if (!rc)
        rc = counter(r, BRAND_PK, "STATS", n);
    if (!rc)
        rc = stream_add(r, ms, 2, BRAND_PK, "STATS", img, (int)sizeof(img) - 1);
    return rc;
}

static void unlink_db(const char *path)
{
    char p[1300];
    unlink(path);
    snprintf(p, sizeof(p), "%s-wal", path);
    unlink(p);
    snprintf(p, sizeof(p), "%s-shm", path);
    unlink(p);
}

/* One timed run on a fresh database in dir.  On error returns -1.  On
 * success stores verifies/s in *rate and returns 0. */
static int run_once(const struct opts *o, const char *dir, bool full, int run, double *rate)
{
    char path[1200];
    struct raw r;
    long long n = 0;
    double t0, c0, el = 0;
    int rc;

    snprintf(path, sizeof(path), "%s/raw.db", dir);
    unlink_db(path);
    rc = raw_open(&r, path, full);
    if (rc)
        return rc;
    t0 = now_s();
    c0 = cpu_s();
    while (!rc && el < o->seconds) {
        rc = step(&r, ST_BEGIN);
        for (int i = 0; i < o->batch && !rc; i++)
            rc = one_verify(&r, o->fold, o->detector);
        if (!rc && o->fold)
            rc = fold_counters(&r, o->batch);
        if (!rc && o->detector)
            rc = detector_batch(&r, o->batch);
        if (!rc)
            rc = step(&r, ST_COMMIT);
        if (!rc)
            n += o->batch;
        el = now_s() - t0;
    }
    c0 = cpu_s() - c0;
    raw_close(&r);
    unlink_db(path);
    if (rc)
        return rc;
    *rate = (double)n / el;
    printf("RAW mode=%s batch=%d fold=%s detector=%s run=%d verifies=%lld seconds=%.2f rate=%.1f "
           "cpu_us=%.1f walbuf=%s\n",
           full ? "full" : "normal", o->batch, o->fold ? "yes" : "no", o->detector ? "yes" : "no",
           run, n, el, *rate, n ? c0 * 1e6 / (double)n : 0, vfs_name ? "yes" : "no");
    fflush(stdout);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int usage(void)
{
    fprintf(stderr, "usage: raw_verify [--mode full|normal|both] [--batch N] [--seconds S] "
                    "[--runs N] [--fold] [--detector] [--walbuf] [--dir DIR]\n");
    return 2;
}

/* Parses argv into o.  On error prints usage and returns 2; on success 0. */
static int parse_args(int argc, char **argv, struct opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--fold")) {
            o->fold = true;
            continue;
        }
        if (!strcmp(argv[i], "--detector")) {
            o->detector = true;
            continue;
        }
        if (!strcmp(argv[i], "--walbuf")) {
            vfs_name = sqlite_walbuf_register();
            if (!vfs_name) {
                fprintf(stderr, "raw_verify: cannot register the WAL-coalescing VFS\n");
                return 2;
            }
            continue;
        }
        if (!v)
            return usage();
        if (!strcmp(argv[i], "--runs"))
            o->runs = atoi(v);
        else if (!strcmp(argv[i], "--batch"))
            o->batch = atoi(v);
        else if (!strcmp(argv[i], "--seconds"))
            o->seconds = atof(v);
        else if (!strcmp(argv[i], "--mode"))
            o->mode = v;
        else if (!strcmp(argv[i], "--dir"))
            o->dir = v;
        else
            return usage();
        i++;
    }
    if (o->runs < 1 || o->runs > MAX_RUNS || o->batch < 1 || o->batch > MAX_BATCH ||
        !(o->seconds > 0 && o->seconds <= 3600) || strlen(o->dir) > 1024 ||
        (strcmp(o->mode, "full") && strcmp(o->mode, "normal") && strcmp(o->mode, "both")))
        return usage();
    return 0;
}

int main(int argc, char **argv)
{
    struct opts o = {.runs = 3, .batch = 32, .seconds = 10, .mode = "both", .dir = "/tmp"};
    double rates[2][MAX_RUNS];
    bool want[2];
    char dir[1100];
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc;
    want[0] = strcmp(o.mode, "normal") != 0; /* full */
    want[1] = strcmp(o.mode, "full") != 0;   /* normal */
    snprintf(dir, sizeof(dir), "%s/raw_verify.XXXXXX", o.dir);
    if (!mkdtemp(dir)) {
        perror("raw_verify: mkdtemp");
        return 1;
    }
    /* Modes alternate run by run, so a noisy spell hits both. */
    for (int run = 0; run < o.runs && !rc; run++)
        for (int m = 0; m < 2 && !rc; m++)
            if (want[m])
                rc = run_once(&o, dir, m == 0, run + 1, &rates[m][run]);
    rmdir(dir);
    if (rc)
        return 1;
    printf(
        "\n| durability | batch | counters | detector rows | verifies/s (median of %d x %.0f s) |\n"
        "|---|---:|---|---|---:|\n",
        o.runs, o.seconds);
    for (int m = 0; m < 2; m++)
        if (want[m])
            printf("| %s | %d | %s | %s | %.0f |\n", m == 0 ? "full" : "normal", o.batch,
                   o.fold ? "once per batch" : "per verify", o.detector ? "yes" : "no",
                   median(rates[m], o.runs));
    return 0;
}
