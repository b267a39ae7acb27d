/*
 * test_detect_fixture.h - shared helpers of the detector tests
 * (test_detect_*.c): a SQLite store in a temp directory, writers for the
 * items the API would write (product META, scans, claims, events), a
 * run-until-idle loop, and readers for alerts, counters, ops-log entries
 * and dead letters.  Header-only (static functions marked unused) so each
 * test binary stays one file.
 */
#ifndef GP_TEST_DETECT_FIXTURE_H
#define GP_TEST_DETECT_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/crypto.h"
#include "core/event.h"
#include "core/keys.h"
#include "core/timeutil.h"
#include "detect/consumer.h"
#include "store/store.h"
#include "util/err.h"
#include "util/timescale.h"

#define FX_UNUSED __attribute__((unused))

/* The wall clock the detector sees in tests (alert write times). */
#define FX_NOW_MS 1782000000000LL /* 2026-06-21T00:00:00Z */

struct fx {
    char dir[64];
    char path[128];
    struct store *s;
    unsigned scan_no; /* deterministic scan ids */
};

FX_UNUSED static int64_t fx_clock(void *arg)
{
    (void)arg;
    return FX_NOW_MS;
}

FX_UNUSED static struct store *fx_reopen(struct fx *f)
{
    struct store_options o = {.path = f->path, .durability = STORE_DURABILITY_NORMAL};
    char err[256];
    f->s = store_open_sqlite(&o, err, sizeof(err));
    if (!f->s)
        fprintf(stderr, "store_open_sqlite: %s\n", err);
    assert_non_null(f->s);
    return f->s;
}

FX_UNUSED static void fx_open(struct fx *f)
{
    char tmpl[] = "/tmp/gp-detect-XXXXXX";
    memset(f, 0, sizeof(*f));
    assert_non_null(mkdtemp(tmpl));
    snprintf(f->dir, sizeof(f->dir), "%s", tmpl);
    snprintf(f->path, sizeof(f->path), "%s/store.db", tmpl);
    time_scale_set(0.001);
    fx_reopen(f);
}

FX_UNUSED static void fx_close(struct fx *f)
{
    char p[160];
    if (f->s)
        store_close(f->s);
    f->s = NULL;
    unlink(f->path);
    snprintf(p, sizeof(p), "%s-wal", f->path);
    unlink(p);
    snprintf(p, sizeof(p), "%s-shm", f->path);
    unlink(p);
    rmdir(f->dir);
}

/* cmocka setup/teardown: a fixture per test in *state. */
FX_UNUSED static int fx_setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    fx_open(f);
    *state = f;
    return 0;
}

FX_UNUSED static int fx_teardown(void **state)
{
    fx_close(*state);
    free(*state);
    return 0;
}

FX_UNUSED static struct detector *fx_detector(struct fx *f, size_t batch)
{
    struct detector_config c = {.batch_size = batch, .clock_ms = fx_clock};
    struct detector *d = detector_new(f->s, &c);
    assert_non_null(d);
    return d;
}

/* ISO time of base + minutes. */
FX_UNUSED static const char *fx_ts(char out[ISO_LEN + 1], const char *base, double minutes)
{
    int64_t ms;
    assert_int_equal(time_parse_iso(base, &ms), 0);
    time_iso(ms + (int64_t)(minutes * 60000.0), out);
    return out;
}

FX_UNUSED static void fx_put(struct fx *f, cJSON *item)
{
    assert_non_null(item);
    assert_int_equal(store_put(f->s, item, NULL), 0);
    cJSON_Delete(item);
}

FX_UNUSED static void fx_product(struct fx *f, const char *pid, const char *brand,
                                 const char *created_at)
{
    struct key pk, gpk, gsk;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "PK", key_product_pk(&pk, pid));
    cJSON_AddStringToObject(o, "SK", KEY_SK_META);
    cJSON_AddStringToObject(o, "GSI1PK", key_brand_pk(&gpk, brand));
    cJSON_AddStringToObject(o, "GSI1SK", key_product_gsi1sk(&gsk, created_at));
    cJSON_AddStringToObject(o, "productId", pid);
    cJSON_AddStringToObject(o, "brandId", brand);
    cJSON_AddStringToObject(o, "name", "Test product");
    cJSON_AddStringToObject(o, "createdAt", created_at);
    cJSON_AddStringToObject(o, "status", "active");
    cJSON_AddNumberToObject(o, "scanCount", 0);
    fx_put(f, o);
}

/* A scan as the verify route writes it. */
FX_UNUSED static void fx_scan_full(struct fx *f, const char *pid, const char *ts,
                                   const char *country, const char *ip, const char *ua,
                                   const char *result)
{
    struct key pk, sk;
    char id[9];
    cJSON *o = cJSON_CreateObject();
    snprintf(id, sizeof(id), "%08x", ++f->scan_no);
    cJSON_AddStringToObject(o, "PK", key_product_pk(&pk, pid));
    cJSON_AddStringToObject(o, "SK", key_scan_sk(&sk, ts, id));
    cJSON_AddStringToObject(o, "productId", pid);
    cJSON_AddStringToObject(o, "timestamp", ts);
    cJSON_AddStringToObject(o, "ip", ip);
    cJSON_AddStringToObject(o, "country", country);
    cJSON_AddStringToObject(o, "city", "Somewhere");
    cJSON_AddStringToObject(o, "userAgent", ua);
    cJSON_AddStringToObject(o, "result", result);
    cJSON_AddStringToObject(o, "scanId", id);
    fx_put(f, o);
}

FX_UNUSED static void fx_scan(struct fx *f, const char *pid, const char *ts, const char *country)
{
    fx_scan_full(f, pid, ts, country, "198.51.100.1", "Mozilla/5.0", "authentic");
}

FX_UNUSED static void fx_claim(struct fx *f, const char *pid, const char *ip, const char *ua,
                               const char *claimed_at)
{
    struct key pk;
    char fp[CRYPTO_HEX_LEN + 1];
    cJSON *o = cJSON_CreateObject();
    crypto_fingerprint(ip, ua, fp);
    cJSON_AddStringToObject(o, "PK", key_product_pk(&pk, pid));
    cJSON_AddStringToObject(o, "SK", KEY_SK_CLAIM);
    cJSON_AddStringToObject(o, "productId", pid);
    cJSON_AddStringToObject(o, "consumerName", "Alice");
    cJSON_AddNullToObject(o, "email");
    cJSON_AddStringToObject(o, "fingerprint", fp);
    cJSON_AddStringToObject(o, "ip", ip);
    cJSON_AddStringToObject(o, "claimedAt", claimed_at);
    fx_put(f, o);
}

/* Appends event seq with the given previous hash; its hash goes to
 * hash_out. */
FX_UNUSED static void fx_event(struct fx *f, const char *pid, uint32_t seq, const char *ts,
                               const char *type, const char *actor, const char *prev,
                               char hash_out[CRYPTO_HEX_LEN + 1])
{
    struct event_fields ef = {.product_id = pid, .type = type, .actor = actor, .timestamp = ts};
    fx_put(f, event_item_new(&ef, seq, prev, hash_out));
}

/* Runs the detector until it is idle (following backoffs).  Returns the
 * records consumed. */
FX_UNUSED static size_t fx_run(struct detector *d)
{
    size_t total = 0;
    for (int i = 0; i < 100000; i++) {
        size_t n = 0;
        int rc = detector_run_once(d, &n);
        int64_t wait = detector_retry_in_ms(d);
        total += n;
        if (rc == 0 && n == 0 && wait == 0)
            return total;
        if (wait > 0)
            usleep((useconds_t)(wait * 1000));
    }
    fail_msg("detector did not become idle");
    return total;
}

/* Every item of a query, across pages. */
FX_UNUSED static cJSON *fx_query_all(struct fx *f, enum store_index idx, const char *pk,
                                     enum store_sk_op op, const char *sk)
{
    cJSON *all = cJSON_CreateArray();
    char *cursor = NULL;
    do {
        struct store_query q = {.index = idx, .pk = pk, .sk_op = op, .sk = sk, .forward = true};
        struct store_result r = {0};
        const cJSON *it;
        q.start = cursor;
        assert_int_equal(store_query(f->s, &q, &r), 0);
        cJSON_ArrayForEach(it, r.items)
        {
            cJSON_AddItemToArray(all, cJSON_Duplicate(it, 1));
        }
        free(cursor);
        cursor = r.next;
        r.next = NULL;
        store_result_free(&r);
    } while (cursor);
    return all;
}

/* The brand's alerts through GSI1 (BRAND#<b>, THREAT#...), oldest write
 * first. */
FX_UNUSED static cJSON *fx_alerts(struct fx *f, const char *brand)
{
    struct key pk;
    return fx_query_all(f, STORE_INDEX_GSI1, key_brand_pk(&pk, brand), STORE_SK_BEGINS,
                        KEY_PFX_THREAT);
}

FX_UNUSED static cJSON *fx_opslog(struct fx *f, const char *day)
{
    struct key pk;
    return fx_query_all(f, STORE_INDEX_TABLE, key_opslog_pk_day(&pk, day), STORE_SK_ANY, NULL);
}

/* STATS threatCount of a brand (0 when absent). */
FX_UNUSED static double fx_threat_count(struct fx *f, const char *brand)
{
    struct key pk;
    cJSON *it = NULL;
    double n = 0;
    int rc = store_get(f->s, key_brand_pk(&pk, brand), KEY_SK_STATS, true, &it);
    if (rc == ERR_NOTFOUND)
        return 0;
    assert_int_equal(rc, 0);
    n = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(it, "threatCount"));
    cJSON_Delete(it);
    return n;
}

FX_UNUSED static const char *fx_str(const cJSON *item, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

FX_UNUSED static double fx_num(const cJSON *item, const char *name)
{
    return cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(item, name));
}

/* Number of items in arr whose attribute name equals value. */
FX_UNUSED static int fx_count_eq(const cJSON *arr, const char *name, const char *value)
{
    int n = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, arr)
    {
        const char *s = fx_str(it, name);
        if (s && strcmp(s, value) == 0)
            n++;
    }
    return n;
}

/* The first item of arr with attribute name == value, or NULL. */
FX_UNUSED static const cJSON *fx_find(const cJSON *arr, const char *name, const char *value)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, arr)
    {
        const char *s = fx_str(it, name);
        if (s && strcmp(s, value) == 0)
            return it;
    }
    return NULL;
}

/* True when the item's anomalyFlags holds flag. */
FX_UNUSED static int fx_has_flag(const cJSON *item, const char *flag)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(item, "anomalyFlags"))
    {
        if (cJSON_IsString(e) && strcmp(e->valuestring, flag) == 0)
            return 1;
    }
    return 0;
}

#endif
