/*
 * bench_store.c - item store throughput against raw SQLite, in one run.
 *
 * For each durability mode and each of --runs rounds, on fresh databases
 * in a temp directory:
 *   raw     INSERTs of the items' pre-serialized JSON into a plain
 *           (pk, sk, body) WITHOUT ROWID table, same pragmas, one
 *           transaction per --batch rows;
 *   put     store_put of the same items, one group commit per --batch
 *           (store_batch_begin ... store_batch_commit);
 *   get     store_get of random existing items, eventually consistent
 *           (DynamoDB's default) and strongly consistent (getc);
 *   query   20-item pages (begins_with on SK, newest first) of random
 *           partitions;
 *   txn     store_transact of 4 writes (2 puts, an ADD update, a
 *           checkpoint), 25 transactions per group commit.
 * Prints each round and the medians as a Markdown table; the put/raw
 * ratio is computed per round from rates measured back to back.
 *
 *   make bench && build/bench/bench_store [--runs 5] [--items 20000]
 *       [--batch 100] [--mode full|normal|both] [--dir /tmp]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <sqlite3.h>

#include "core/canon.h"
#include "store/store.h"
#include "util/err.h"

#define MAX_RUNS            21
#define QUERY_PAGE          20
#define ITEMS_PER_PARTITION 50

struct opts {
    int runs;
    int items;
    int batch;
    int gets;
    int queries;
    int txns;
    const char *mode;
    const char *dir;
};

struct round {
    double raw, put, get, getc, query, txn;
    double get_cpu, query_cpu; /* the same rates over process CPU time */
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

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "bench_store: %s: %s\n", what, detail ? detail : "");
    exit(1);
}

/* A scan-like item (API.md E8): ~250 bytes of JSON. */
static cJSON *make_item(int i)
{
    char pk[64], sk[96], ts[32];
    cJSON *it = cJSON_CreateObject();
    int part = i / ITEMS_PER_PARTITION;
    snprintf(pk, sizeof(pk), "PRODUCT#7f3c%04x-0000-4000-8000-%012d", part & 0xffff, part);
    snprintf(ts, sizeof(ts), "2024-05-%02dT%02d:%02d:%02d.%03dZ", 1 + i % 28, i % 24, i % 60,
             (i / 60) % 60, i % 1000);
    snprintf(sk, sizeof(sk), "SCAN#%s#%08x", ts, (unsigned)i * 2654435761u);
    cJSON_AddStringToObject(it, "PK", pk);
    cJSON_AddStringToObject(it, "SK", sk);
    cJSON_AddStringToObject(it, "productId", pk + 8);
    cJSON_AddStringToObject(it, "timestamp", ts);
    cJSON_AddStringToObject(it, "ip", "203.0.113.42");
    cJSON_AddStringToObject(it, "country", "DE");
    cJSON_AddStringToObject(it, "city", "Berlin");
    cJSON_AddStringToObject(it, "userAgent", "Mozilla/5.0 (X11; Linux x86_64) bench");
    cJSON_AddStringToObject(it, "result", i % 7 ? "authentic" : "suspicious");
    cJSON_AddNumberToObject(it, "seq", i);
    return it;
}

static void rm_db(const char *path)
{
    char p[600];
    unlink(path);
    snprintf(p, sizeof(p), "%s-wal", path);
    unlink(p);
    snprintf(p, sizeof(p), "%s-shm", path);
    unlink(p);
}

static void exec_or_die(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        die(sql, msg);
}

/* Raw SQLite: the same pragmas as the store, prepared INSERT, one
 * transaction per batch.  Returns rows/s. */
static double bench_raw(const char *path, bool full, cJSON **items, char **bodies, int n, int batch)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *ins = NULL, *begin = NULL, *commit = NULL;
    double t0, t1;
    rm_db(path);
    if (sqlite3_open(path, &db) != SQLITE_OK)
        die("open raw", sqlite3_errmsg(db));
    exec_or_die(db, "PRAGMA journal_mode=WAL");
    exec_or_die(db, full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
    exec_or_die(db, "PRAGMA foreign_keys=OFF; PRAGMA cache_size=-32768; PRAGMA temp_store=MEMORY");
    exec_or_die(db, "CREATE TABLE kv(pk TEXT NOT NULL, sk TEXT NOT NULL, body TEXT NOT NULL, "
                    "PRIMARY KEY(pk, sk)) WITHOUT ROWID");
    if (sqlite3_prepare_v2(db, "INSERT INTO kv(pk, sk, body) VALUES(?1, ?2, ?3)", -1, &ins, NULL) !=
            SQLITE_OK ||
        sqlite3_prepare_v2(db, "BEGIN IMMEDIATE", -1, &begin, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "COMMIT", -1, &commit, NULL) != SQLITE_OK)
        die("prepare raw", sqlite3_errmsg(db));
    t0 = now_s();
    for (int i = 0; i < n; i += batch) {
        sqlite3_step(begin);
        sqlite3_reset(begin);
        for (int j = i; j < i + batch && j < n; j++) {
            sqlite3_bind_text(ins, 1, cJSON_GetObjectItem(items[j], "PK")->valuestring, -1,
                              SQLITE_STATIC);
            sqlite3_bind_text(ins, 2, cJSON_GetObjectItem(items[j], "SK")->valuestring, -1,
                              SQLITE_STATIC);
            sqlite3_bind_text(ins, 3, bodies[j], -1, SQLITE_STATIC);
            if (sqlite3_step(ins) != SQLITE_DONE)
                die("raw insert", sqlite3_errmsg(db));
            sqlite3_reset(ins);
        }
        if (sqlite3_step(commit) != SQLITE_DONE)
            die("raw commit", sqlite3_errmsg(db));
        sqlite3_reset(commit);
    }
    t1 = now_s();
    sqlite3_finalize(ins);
    sqlite3_finalize(begin);
    sqlite3_finalize(commit);
    sqlite3_close(db);
    rm_db(path);
    return n / (t1 - t0);
}

static struct store *open_store(const char *path, bool full)
{
    struct store_options o = {.path = path,
                              .durability = full ? STORE_DURABILITY_FULL : STORE_DURABILITY_NORMAL};
    char err[256];
    struct store *s = store_open_sqlite(&o, err, sizeof(err));
    if (!s)
        die("open store", err);
    return s;
}

static double bench_put(struct store *s, cJSON **items, int n, int batch)
{
    double t0 = now_s();
    for (int i = 0; i < n; i += batch) {
        if (store_batch_begin(s))
            die("batch_begin", NULL);
        for (int j = i; j < i + batch && j < n; j++)
            if (store_put(s, items[j], NULL))
                die("put", NULL);
        if (store_batch_commit(s))
            die("batch_commit", NULL);
    }
    return n / (now_s() - t0);
}

static double bench_get(struct store *s, cJSON **items, int n, int count, bool consistent,
                        double *cpu_rate)
{
    unsigned r = 12345;
    double t0 = now_s(), c0 = cpu_s();
    for (int i = 0; i < count; i++) {
        cJSON *out = NULL;
        r = r * 1103515245u + 12345u;
        const cJSON *it = items[(r >> 8) % (unsigned)n];
        if (store_get(s, cJSON_GetObjectItem(it, "PK")->valuestring,
                      cJSON_GetObjectItem(it, "SK")->valuestring, consistent, &out))
            die("get", NULL);
        cJSON_Delete(out);
    }
    if (cpu_rate)
        *cpu_rate = count / (cpu_s() - c0);
    return count / (now_s() - t0);
}

static double bench_query(struct store *s, cJSON **items, int n, int count, double *cpu_rate)
{
    unsigned r = 777;
    int parts = n / ITEMS_PER_PARTITION;
    double t0 = now_s(), c0 = cpu_s();
    for (int i = 0; i < count; i++) {
        struct store_result res;
        r = r * 1103515245u + 12345u;
        const cJSON *it = items[((r >> 8) % (unsigned)parts) * ITEMS_PER_PARTITION];
        struct store_query q = {.pk = cJSON_GetObjectItem(it, "PK")->valuestring,
                                .sk_op = STORE_SK_BEGINS,
                                .sk = "SCAN#",
                                .limit = QUERY_PAGE,
                                .forward = false};
        if (store_query(s, &q, &res) || res.count != QUERY_PAGE)
            die("query", NULL);
        store_result_free(&res);
    }
    *cpu_rate = count / (cpu_s() - c0);
    return count / (now_s() - t0);
}

/* Transactions of 4 writes, 25 per group commit; returns transactions/s. */
static double bench_txn(struct store *s, int count, int base)
{
    struct store_action inc = {.kind = STORE_ACT_ADD, .attr = "scanCount", .delta = 1};
    double t0 = now_s();
    for (int i = 0; i < count; i += 25) {
        if (store_batch_begin(s))
            die("batch_begin", NULL);
        for (int j = i; j < i + 25 && j < count; j++) {
            cJSON *a = make_item(base + 2 * j), *b = make_item(base + 2 * j + 1);
            struct store_write w[4] = {
                {.kind = STORE_W_PUT, .item = a, .cond = {.kind = STORE_COND_NOT_EXISTS}},
                {.kind = STORE_W_PUT, .item = b},
                {.kind = STORE_W_UPDATE,
                 .pk = "BRAND#bench",
                 .sk = "STATS",
                 .acts = &inc,
                 .nacts = 1},
                {.kind = STORE_W_CHECKPOINT, .reader = "bench", .seq = (uint64_t)j},
            };
            if (store_transact(s, w, 4, NULL))
                die("transact", NULL);
            cJSON_Delete(a);
            cJSON_Delete(b);
        }
        if (store_batch_commit(s))
            die("batch_commit", NULL);
    }
    return count / (now_s() - t0);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
    double tmp[MAX_RUNS];
    memcpy(tmp, v, (size_t)n * sizeof(*v));
    qsort(tmp, (size_t)n, sizeof(*tmp), cmp_double);
    return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

static void run_mode(const struct opts *o, bool full, cJSON **items, char **bodies)
{
    char path[512], rawpath[512];
    struct round r[MAX_RUNS];
    double col[MAX_RUNS], ratio[MAX_RUNS];
    snprintf(path, sizeof(path), "%s/bench_store_%d.db", o->dir, (int)getpid());
    snprintf(rawpath, sizeof(rawpath), "%s/bench_raw_%d.db", o->dir, (int)getpid());
    printf("\n### durability %s (items %d, group commit %d)\n\n", full ? "full" : "normal",
           o->items, o->batch);
    printf("| run | raw insert/s | store put/s | put/raw | get/s | get/s (cpu) | consistent "
           "get/s | 20-item query/s | query/s (cpu) | txn/s (4 writes) |\n"
           "|---|---|---|---|---|---|---|---|---|---|\n");
    for (int k = 0; k < o->runs; k++) {
        struct store *s;
        r[k].raw = bench_raw(rawpath, full, items, bodies, o->items, o->batch);
        rm_db(path);
        s = open_store(path, full);
        r[k].put = bench_put(s, items, o->items, o->batch);
        r[k].get = bench_get(s, items, o->items, o->gets, false, &r[k].get_cpu);
        r[k].getc = bench_get(s, items, o->items, o->gets, true, NULL);
        r[k].query = bench_query(s, items, o->items, o->queries, &r[k].query_cpu);
        r[k].txn = bench_txn(s, o->txns, o->items);
        store_close(s);
        rm_db(path);
        ratio[k] = r[k].put / r[k].raw;
        printf("| %d | %.0f | %.0f | %.2f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f |\n", k + 1,
               r[k].raw, r[k].put, ratio[k], r[k].get, r[k].get_cpu, r[k].getc, r[k].query,
               r[k].query_cpu, r[k].txn);
        fflush(stdout);
    }
    printf("| **median** ");
    for (int f = 0; f < 9; f++) {
        for (int k = 0; k < o->runs; k++) {
            const double v[] = {r[k].raw,  r[k].put,   ratio[k],       r[k].get, r[k].get_cpu,
                                r[k].getc, r[k].query, r[k].query_cpu, r[k].txn};
            col[k] = v[f];
        }
        if (f == 2)
            printf("| **%.2f** ", median(col, o->runs));
        else
            printf("| **%.0f** ", median(col, o->runs));
    }
    printf("|\n");
}

static int arg_int(const char *v, int lo, int hi)
{
    int x = atoi(v);
    if (x < lo || x > hi)
        die("argument out of range", v);
    return x;
}

int main(int argc, char **argv)
{
    struct opts o = {.runs = 5,
                     .items = 20000,
                     .batch = 100,
                     .gets = 200000,
                     .queries = 50000,
                     .txns = 5000,
                     .mode = "both",
                     .dir = "/tmp"};
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--quick")) {
            o.runs = 1;
            o.items = 2000;
            o.gets = 5000;
            o.queries = 2000;
            o.txns = 500;
            continue;
        }
        if (!v)
            die("missing value for", argv[i]);
        if (!strcmp(argv[i], "--runs"))
            o.runs = arg_int(v, 1, MAX_RUNS);
        else if (!strcmp(argv[i], "--items"))
            o.items = arg_int(v, 1000, 10000000);
        else if (!strcmp(argv[i], "--batch"))
            o.batch = arg_int(v, 1, 100000);
        else if (!strcmp(argv[i], "--mode"))
            o.mode = v;
        else if (!strcmp(argv[i], "--dir"))
            o.dir = v;
        else
            die("unknown option", argv[i]);
        i++;
    }
    o.items -= o.items % ITEMS_PER_PARTITION;
    cJSON **items = malloc((size_t)o.items * sizeof(*items));
    char **bodies = malloc((size_t)o.items * sizeof(*bodies));
    for (int i = 0; i < o.items; i++) {
        items[i] = make_item(i);
        bodies[i] = canon_dup(items[i]);
    }
    printf("## bench_store: %d runs, %d items of ~%zu bytes\n", o.runs, o.items, strlen(bodies[0]));
    if (strcmp(o.mode, "normal") != 0)
        run_mode(&o, true, items, bodies);
    if (strcmp(o.mode, "full") != 0)
        run_mode(&o, false, items, bodies);
    for (int i = 0; i < o.items; i++) {
        cJSON_Delete(items[i]);
        free(bodies[i]);
    }
    free(items);
    free(bodies);
    return 0;
}
