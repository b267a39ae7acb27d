/*
 * bench_detect.c - stream detector replay throughput (issue 4 target:
 * >= 50,000 stream records/s over 1,000,000 records, durability normal).
 *
 * For each scenario a store is generated once in a temp directory (group
 * commits of 1000 store_put calls, durability normal): brands (PROFILE +
 * STATS), products (META), a few claims and then the scan items, all of
 * them change-stream records.  Then, for each durability mode, batch size
 * and round, the generated file is copied to a fresh database and the
 * detector replays the whole stream from an empty checkpoint:
 * detector_run_once() in a loop until it is idle.  Only that loop is
 * timed.  "input rec/s" is the generated stream (brand, product, claim
 * and scan records; the detector skips all but the scans) over the wall
 * time; "consumed rec/s" counts every record the detector consumed, which
 * also includes its own writes (alerts, dedup items, ops-log entries,
 * DETSTATE items) that it reads back from the stream and skips.
 *
 * Scenarios:
 *   mix       --products products over 20 brands; most scans come from
 *             the product's home country at a normal rate, ~5 % of the
 *             products are attacked (bursts of 12-20 scans from 3-5
 *             countries), ~2 % are claimed (some scans from other
 *             devices), ~0.1 % of scans are "suspicious" (tampering);
 *   single    every scan on one product under attack (every check fires
 *             on almost every record: the alert-update path);
 *   distinct  every scan on its own product (one META/DETSTATE/CLAIM read
 *             and one DETSTATE write per record: the cold-context path);
 *             --distinct-records scans (default: --records / 5, as it
 *             also writes one product per scan).
 *
 * Prints every round and the medians as Markdown tables.
 *
 *   make bench && build/bench/bench_detect [--records 1000000]
 *       [--products 10000] [--distinct-records N] [--batch 100,1000]
 *       [--mode normal|full|both] [--runs 3] [--scenarios mix,single,distinct]
 *       [--dir /tmp] [--quick] [--state-cache N|off]
 *
 * --state-cache sets the detector's window-state cache size (default: the
 * detector's default; "off" reads every product's state in every batch,
 * as before the cache existed).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "core/crypto.h"
#include "core/keys.h"
#include "core/timeutil.h"
#include "detect/consumer.h"
#include "store/store.h"
#include "util/err.h"
#include "util/log.h"
#include "util/timescale.h"

#define MAX_RUNS    15
#define MAX_BATCHES 4
#define NBRANDS     20
#define SETUP_BATCH 1000
/* Scans start here; products were created 60 days earlier. */
#define T0_MS      1767225600000LL /* 2026-01-01T00:00:00Z */
#define CREATED_MS (T0_MS - 60LL * 86400000)
/* The generated traffic covers 30 days whatever the record count. */
#define SPAN_MS (30LL * 86400000)

enum scenario { SC_MIX = 0, SC_SINGLE, SC_DISTINCT, SC_COUNT };
static const char *const sc_name[SC_COUNT] = {"mix", "single", "distinct"};

struct opts {
    long records, products, distinct_records;
    size_t batches[MAX_BATCHES];
    int nbatches;
    int runs;
    bool full, normal;
    bool sc[SC_COUNT];
    const char *dir;
    long state_cache; /* -1: detector default, 0: off */
};

struct round {
    double wall_s, cpu_s;
    double sys_s; /* part of cpu_s spent in the kernel */
    uint64_t records, batches, alerts_created, alerts_updated, opslog, parked;
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

/* Kernel CPU time of the process so far, s. */
static double sys_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "bench_detect: %s: %s\n", what, detail ? detail : "");
    exit(1);
}

static void check(int rc, const char *what)
{
    if (rc)
        die(what, err_str(rc));
}

/* xorshift64*: deterministic traffic. */
static uint64_t rng_state = 88172645463325252ULL;
static uint64_t rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}
static long rnd_below(long n)
{
    return n > 0 ? (long)(rnd() % (uint64_t)n) : 0;
}

static const char *const countries[] = {"DE", "FR", "US", "GB", "IT", "ES", "NL", "PL",
                                        "SE", "JP", "CN", "BR", "IN", "CA", "AU", "MX"};
#define NCOUNTRIES (sizeof(countries) / sizeof(countries[0]))

/* ---------- generation ---------- */

struct gen {
    struct store *s;
    long in_batch;
    unsigned long scan_no;
};

static void gen_put(struct gen *g, cJSON *item)
{
    if (!item)
        die("generate", "item");
    if (g->in_batch == 0)
        check(store_batch_begin(g->s), "batch_begin");
    check(store_put(g->s, item, NULL), "store_put");
    cJSON_Delete(item);
    if (++g->in_batch == SETUP_BATCH) {
        check(store_batch_commit(g->s), "batch_commit");
        g->in_batch = 0;
    }
}

static void pid_of(long i, char out[40])
{
    snprintf(out, 40, "%08lx-0000-4000-8000-%012lu",
             (unsigned long)(i * 2654435761UL) & 0xffffffffUL, (unsigned long)i % 1000000000000UL);
}

static void brand_of(long i, char out[40])
{
    snprintf(out, 40, "brand-%02d", (int)(i % NBRANDS));
}

static void gen_brand(struct gen *g, long b)
{
    struct key pk;
    char id[40], iso[ISO_LEN + 1];
    cJSON *o = cJSON_CreateObject();
    brand_of(b, id);
    time_iso(CREATED_MS - 86400000, iso);
    cJSON_AddStringToObject(o, "PK", key_brand_pk(&pk, id));
    cJSON_AddStringToObject(o, "SK", KEY_SK_PROFILE);
    cJSON_AddStringToObject(o, "brandId", id);
    cJSON_AddStringToObject(o, "name", "Bench brand");
    cJSON_AddStringToObject(o, "createdAt", iso);
    gen_put(g, o);
    o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "PK", pk.s);
    cJSON_AddStringToObject(o, "SK", KEY_SK_STATS);
    cJSON_AddNumberToObject(o, "productCount", 0);
    cJSON_AddNumberToObject(o, "scanCount", 0);
    cJSON_AddNumberToObject(o, "threatCount", 0);
    gen_put(g, o);
}

static void gen_product(struct gen *g, long i)
{
    struct key pk, gpk, gsk;
    char pid[40], brand[40], iso[ISO_LEN + 1];
    cJSON *o = cJSON_CreateObject();
    pid_of(i, pid);
    brand_of(i, brand);
    time_iso(CREATED_MS, iso);
    cJSON_AddStringToObject(o, "PK", key_product_pk(&pk, pid));
    cJSON_AddStringToObject(o, "SK", KEY_SK_META);
    cJSON_AddStringToObject(o, "GSI1PK", key_brand_pk(&gpk, brand));
    cJSON_AddStringToObject(o, "GSI1SK", key_product_gsi1sk(&gsk, iso));
    cJSON_AddStringToObject(o, "productId", pid);
    cJSON_AddStringToObject(o, "brandId", brand);
    cJSON_AddStringToObject(o, "name", "Bench product");
    cJSON_AddStringToObject(o, "sku", "SKU-0001");
    cJSON_AddStringToObject(o, "createdAt", iso);
    cJSON_AddStringToObject(o, "status", "active");
    cJSON_AddNumberToObject(o, "scanCount", 0);
    gen_put(g, o);
}

static void device_of(long d, char ip[32], char ua[64])
{
    snprintf(ip, 32, "198.51.%ld.%ld", (d / 250) % 250, d % 250 + 1);
    snprintf(ua, 64, "Mozilla/5.0 (Linux; Android 14; device %ld)", d);
}

static void gen_claim(struct gen *g, long i)
{
    struct key pk;
    char pid[40], ip[32], ua[64], fp[CRYPTO_HEX_LEN + 1], iso[ISO_LEN + 1];
    cJSON *o = cJSON_CreateObject();
    pid_of(i, pid);
    device_of(i, ip, ua);
    crypto_fingerprint(ip, ua, fp);
    time_iso(T0_MS, iso);
    cJSON_AddStringToObject(o, "PK", key_product_pk(&pk, pid));
    cJSON_AddStringToObject(o, "SK", KEY_SK_CLAIM);
    cJSON_AddStringToObject(o, "productId", pid);
    cJSON_AddStringToObject(o, "consumerName", "Bench owner");
    cJSON_AddNullToObject(o, "email");
    cJSON_AddStringToObject(o, "fingerprint", fp);
    cJSON_AddStringToObject(o, "ip", ip);
    cJSON_AddStringToObject(o, "claimedAt", iso);
    gen_put(g, o);
}

/* A scan as the verify route writes it (API.md E8). */
static void gen_scan(struct gen *g, long prod, int64_t ts_ms, const char *country, long device,
                     bool suspicious)
{
    struct key pk, sk;
    char pid[40], brand[40], id[9], iso[ISO_LEN + 1], ip[32], ua[64], fp[CRYPTO_HEX_LEN + 1];
    cJSON *o = cJSON_CreateObject();
    pid_of(prod, pid);
    brand_of(prod, brand);
    time_iso(ts_ms, iso);
    snprintf(id, sizeof(id), "%08lx", ++g->scan_no & 0xffffffffUL);
    device_of(device, ip, ua);
    crypto_fingerprint(ip, ua, fp);
    cJSON_AddStringToObject(o, "PK", key_product_pk(&pk, pid));
    cJSON_AddStringToObject(o, "SK", key_scan_sk(&sk, iso, id));
    cJSON_AddStringToObject(o, "productId", pid);
    cJSON_AddStringToObject(o, "timestamp", iso);
    cJSON_AddStringToObject(o, "ip", ip);
    cJSON_AddStringToObject(o, "country", country);
    cJSON_AddStringToObject(o, "city", "Bench city");
    cJSON_AddStringToObject(o, "userAgent", ua);
    cJSON_AddStringToObject(o, "result", suspicious ? "suspicious" : "authentic");
    cJSON_AddStringToObject(o, "scanId", id);
    cJSON_AddStringToObject(o, "fingerprint", fp);
    cJSON_AddStringToObject(o, "brandId", brand);
    gen_put(g, o);
}

/* Product classes of the mix: i % 100 < 5 attacked, == 5 or 6 claimed. */
static bool mix_attacked(long i)
{
    return i % 100 < 5;
}
static bool mix_claimed(long i)
{
    return i % 100 == 5 || i % 100 == 6;
}

static void gen_scans_mix(struct gen *g, long nrec, long nprod)
{
    double step = (double)SPAN_MS / (double)nrec;
    long burst_left = 0, burst_prod = 0, burst_c0 = 0;
    long nattacked = (nprod + 99) / 100 * 5;

    for (long i = 0; i < nrec; i++) {
        int64_t ts = T0_MS + (int64_t)((double)i * step);
        long prod;
        if (burst_left == 0 && rnd_below(1000) < 5) {
            /* ~5 % of the scans are attack bursts of 12-20. */
            burst_left = 12 + rnd_below(9);
            do
                burst_prod = rnd_below(nprod);
            while (!mix_attacked(burst_prod) && nattacked > 0);
            burst_c0 = rnd_below(NCOUNTRIES);
        }
        if (burst_left > 0) {
            burst_left--;
            gen_scan(g, burst_prod, ts, countries[(burst_c0 + burst_left % 4) % NCOUNTRIES],
                     1000000 + rnd_below(100000), false);
            continue;
        }
        prod = rnd_below(nprod);
        if (mix_claimed(prod)) {
            /* One in five scans of a claimed product from another device. */
            long dev = rnd_below(5) == 0 ? 2000000 + rnd_below(100000) : prod;
            gen_scan(g, prod, ts, countries[prod % NCOUNTRIES], dev, false);
        } else {
            const char *c = rnd_below(50) == 0 ? "Unknown" : countries[prod % NCOUNTRIES];
            gen_scan(g, prod, ts, c, 3000000 + rnd_below(1000000), rnd_below(1000) == 0);
        }
    }
}

/* Generates the scenario's store at path; returns the stream head. */
static uint64_t generate(enum scenario sc, const char *path, long nrec, long nprod)
{
    struct store_options o = {.path = path, .durability = STORE_DURABILITY_NORMAL};
    struct gen g = {0};
    char err[256];
    uint64_t head = 0;
    double t0 = now_s();

    rng_state = 88172645463325252ULL;
    g.s = store_open_sqlite(&o, err, sizeof(err));
    if (!g.s)
        die("store_open_sqlite", err);
    for (long b = 0; b < NBRANDS; b++)
        gen_brand(&g, b);
    if (sc == SC_SINGLE)
        nprod = 1;
    if (sc == SC_DISTINCT)
        nprod = nrec;
    for (long i = 0; i < nprod; i++) {
        gen_product(&g, i);
        if (sc == SC_MIX && mix_claimed(i))
            gen_claim(&g, i);
    }
    if (sc == SC_MIX) {
        gen_scans_mix(&g, nrec, nprod);
    } else {
        double step = (double)SPAN_MS / (double)nrec;
        for (long i = 0; i < nrec; i++) {
            int64_t ts = T0_MS + (int64_t)((double)i * step);
            if (sc == SC_SINGLE)
                gen_scan(&g, 0, ts, countries[i % 4], 1000000 + rnd_below(100000), false);
            else
                gen_scan(&g, i, ts, countries[i % NCOUNTRIES], 3000000 + i, false);
        }
    }
    if (g.in_batch)
        check(store_batch_commit(g.s), "batch_commit");
    check(store_stream_head(g.s, &head), "stream_head");
    store_close(g.s);
    fprintf(stderr,
            "generated %-8s %ld scans, %ld products, %" PRIu64 " stream records in %.1f s\n",
            sc_name[sc], nrec, nprod, head, now_s() - t0);
    return head;
}

/* ---------- replay ---------- */

static void rm_db(const char *path)
{
    char p[700];
    unlink(path);
    snprintf(p, sizeof(p), "%s-wal", path);
    unlink(p);
    snprintf(p, sizeof(p), "%s-shm", path);
    unlink(p);
}

static void copy_file(const char *from, const char *to)
{
    char buf[1 << 16];
    int in = open(from, O_RDONLY), out;
    ssize_t n;

    if (in < 0)
        die("open", from);
    out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (out < 0)
        die("create", to);
    while ((n = read(in, buf, sizeof(buf))) > 0)
        if (write(out, buf, (size_t)n) != n)
            die("write", to);
    if (n < 0)
        die("read", from);
    close(in);
    close(out);
}

static void replay(const char *base, const char *path, bool full, size_t batch, uint64_t head,
                   long state_cache, struct round *r)
{
    /* As `genuproof serve` opens it (src/cmd/store_open.c). */
    struct store_options o = {.path = path,
                              .durability = full ? STORE_DURABILITY_FULL : STORE_DURABILITY_NORMAL,
                              .stream_keys_only = key_stream_keys_only,
                              .background_checkpoint = true};
    struct detector_config c = {.batch_size = batch,
                                .state_cache_max = state_cache > 0 ? (size_t)state_cache : 0,
                                .no_state_cache = state_cache == 0};
    struct detector_stats st;
    struct detector *d;
    struct store *s;
    char err[256];
    double w0, c0, s0;

    rm_db(path);
    copy_file(base, path);
    s = store_open_sqlite(&o, err, sizeof(err));
    if (!s)
        die("store_open_sqlite", err);
    d = detector_new(s, &c);
    if (!d)
        die("detector_new", "");
    w0 = now_s();
    c0 = cpu_s();
    s0 = sys_s();
    for (;;) {
        size_t n = 0;
        int rc = detector_run_once(d, &n);
        int64_t wait = detector_retry_in_ms(d);
        if (rc && !wait)
            die("detector_run_once", err_str(rc));
        if (rc == 0 && n == 0 && wait == 0)
            break;
        if (wait > 0)
            usleep((useconds_t)(wait * 1000));
    }
    r->wall_s = now_s() - w0;
    r->cpu_s = cpu_s() - c0;
    r->sys_s = sys_s() - s0;
    detector_get_stats(d, &st);
    r->records = st.records;
    r->batches = st.batches;
    r->alerts_created = st.alerts_created;
    r->alerts_updated = st.alerts_updated;
    r->opslog = st.opslog;
    r->parked = st.dlq_parked;
    /* The detector's own writes (alerts, ops log, DETSTATE) are stream
     * records too: it reads them back and skips them. */
    if (st.checkpoint < head || r->parked)
        fprintf(stderr,
                "warning: checkpoint %" PRIu64 " < head %" PRIu64 " or %" PRIu64 " parked\n",
                st.checkpoint, head, r->parked);
    detector_free(d);
    store_close(s);
    rm_db(path);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_detect [--records N] [--products N] [--distinct-records N]\n"
                    "  [--batch 100,1000] [--mode normal|full|both] [--runs N]\n"
                    "  [--scenarios mix,single,distinct] [--dir DIR] [--quick]\n"
                    "  [--state-cache N|off]\n");
    exit(2);
}

static void parse_batches(struct opts *o, const char *arg)
{
    char tmp[128];
    char *save = NULL;
    snprintf(tmp, sizeof(tmp), "%s", arg);
    o->nbatches = 0;
    for (char *t = strtok_r(tmp, ",", &save); t && o->nbatches < MAX_BATCHES;
         t = strtok_r(NULL, ",", &save)) {
        long v = strtol(t, NULL, 10);
        if (v < 1 || v > DETECTOR_BATCH_MAX)
            usage();
        o->batches[o->nbatches++] = (size_t)v;
    }
    if (!o->nbatches)
        usage();
}

static void parse_scenarios(struct opts *o, const char *arg)
{
    memset(o->sc, 0, sizeof(o->sc));
    for (int i = 0; i < SC_COUNT; i++)
        if (strstr(arg, sc_name[i]))
            o->sc[i] = true;
}

static void parse(struct opts *o, int argc, char **argv)
{
    *o = (struct opts){.records = 1000000,
                       .products = 10000,
                       .distinct_records = -1,
                       .batches = {100, 1000},
                       .nbatches = 2,
                       .runs = 3,
                       .full = true,
                       .normal = true,
                       .sc = {true, true, true},
                       .dir = "/tmp",
                       .state_cache = -1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--quick") == 0) {
            o->records = 100000;
            o->products = 1000;
            o->runs = 1;
            continue;
        }
        if (!v)
            usage();
        i++;
        if (strcmp(a, "--records") == 0)
            o->records = strtol(v, NULL, 10);
        else if (strcmp(a, "--products") == 0)
            o->products = strtol(v, NULL, 10);
        else if (strcmp(a, "--distinct-records") == 0)
            o->distinct_records = strtol(v, NULL, 10);
        else if (strcmp(a, "--batch") == 0)
            parse_batches(o, v);
        else if (strcmp(a, "--runs") == 0)
            o->runs = atoi(v);
        else if (strcmp(a, "--mode") == 0) {
            o->full = strcmp(v, "full") == 0 || strcmp(v, "both") == 0;
            o->normal = strcmp(v, "normal") == 0 || strcmp(v, "both") == 0;
        } else if (strcmp(a, "--scenarios") == 0)
            parse_scenarios(o, v);
        else if (strcmp(a, "--dir") == 0)
            o->dir = v;
        else if (strcmp(a, "--state-cache") == 0)
            o->state_cache = strcmp(v, "off") == 0 ? 0 : strtol(v, NULL, 10);
        else
            usage();
    }
    if (o->distinct_records < 0)
        o->distinct_records = o->records / 5 > 0 ? o->records / 5 : 1;
    if (o->records < 1 || o->products < 1 || o->distinct_records < 1 || o->runs < 1 ||
        o->state_cache < -1 || o->runs > MAX_RUNS || (!o->full && !o->normal))
        usage();
}

int main(int argc, char **argv)
{
    struct opts o;
    char dir[512], base[600], path[600];
    static struct round res[SC_COUNT][2][MAX_BATCHES][MAX_RUNS];
    uint64_t heads[SC_COUNT] = {0};

    parse(&o, argc, argv);
    log_set_level(LOG_WARN);
    snprintf(dir, sizeof(dir), "%s/gp-bench-detect-XXXXXX", o.dir);
    if (!mkdtemp(dir))
        die("mkdtemp", strerror(errno));
    snprintf(path, sizeof(path), "%s/run.db", dir);

    printf("| scenario | durability | batch | round | input records | consumed | wall s | "
           "input rec/s | consumed rec/s | consumed/cpu-s | alerts created | alerts updated | "
           "ops-log | cpu s | kernel %% |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int sc = 0; sc < SC_COUNT; sc++) {
        long nrec = sc == SC_DISTINCT ? o.distinct_records : o.records;
        if (!o.sc[sc])
            continue;
        snprintf(base, sizeof(base), "%s/%s.db", dir, sc_name[sc]);
        heads[sc] = generate((enum scenario)sc, base, nrec, o.products);
        for (int run = 0; run < o.runs; run++) {
            for (int dm = 0; dm < 2; dm++) {
                if ((dm == 0 && !o.normal) || (dm == 1 && !o.full))
                    continue;
                for (int b = 0; b < o.nbatches; b++) {
                    struct round *r = &res[sc][dm][b][run];
                    replay(base, path, dm == 1, o.batches[b], heads[sc], o.state_cache, r);
                    printf("| %s | %s | %zu | %d | %" PRIu64 " | %" PRIu64
                           " | %.2f | %.0f | %.0f | %.0f | %" PRIu64 " | %" PRIu64 " | %" PRIu64
                           " | %.2f | %.0f |\n",
                           sc_name[sc], dm ? "full" : "normal", o.batches[b], run + 1, heads[sc],
                           r->records, r->wall_s, (double)heads[sc] / r->wall_s,
                           (double)r->records / r->wall_s, (double)r->records / r->cpu_s,
                           r->alerts_created, r->alerts_updated, r->opslog, r->cpu_s,
                           r->cpu_s > 0 ? 100.0 * r->sys_s / r->cpu_s : 0.0);
                    fflush(stdout);
                }
            }
        }
        rm_db(base);
    }
    rmdir(dir);

    printf("\nMedians of %d round(s):\n\n", o.runs);
    printf("| scenario | durability | batch | input records | consumed | wall s | "
           "**input rec/s** | consumed rec/s | consumed/cpu-s | alerts created | alerts updated | "
           "ops-log entries |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int sc = 0; sc < SC_COUNT; sc++) {
        if (!o.sc[sc])
            continue;
        for (int dm = 0; dm < 2; dm++) {
            if ((dm == 0 && !o.normal) || (dm == 1 && !o.full))
                continue;
            for (int b = 0; b < o.nbatches; b++) {
                double wall[MAX_RUNS], irate[MAX_RUNS], rate[MAX_RUNS], crate[MAX_RUNS];
                struct round *r0 = &res[sc][dm][b][0];
                for (int run = 0; run < o.runs; run++) {
                    struct round *r = &res[sc][dm][b][run];
                    wall[run] = r->wall_s;
                    irate[run] = (double)heads[sc] / r->wall_s;
                    rate[run] = (double)r->records / r->wall_s;
                    crate[run] = (double)r->records / r->cpu_s;
                }
                printf("| %s | %s | %zu | %" PRIu64 " | %" PRIu64
                       " | %.2f | **%.0f** | %.0f | %.0f | %" PRIu64 " | %" PRIu64 " | %" PRIu64
                       " |\n",
                       sc_name[sc], dm ? "full" : "normal", o.batches[b], heads[sc], r0->records,
                       median(wall, o.runs), median(irate, o.runs), median(rate, o.runs),
                       median(crate, o.runs), r0->alerts_created, r0->alerts_updated, r0->opslog);
            }
        }
    }
    return 0;
}
