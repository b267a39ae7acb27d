/*
 * test_webhook_fanout.c - change records to webhook deliveries
 * (detect/webhook_fanout.c) on a SQLite store: deterministic ids and keys
 * for the same stream position (different per webhook and event), random
 * ones without a position; the event subscription filter; the
 * "webhook existed when the record was written" filter, including a
 * record written in the same second as the registration when the stream
 * time is whole seconds (DynamoDB Streams) and the image's time refining
 * a stream time of whole minutes (DynamoDB Local); the brand found through the
 * product for a scan without brandId; inactive and deleted webhooks get
 * nothing; and the Streams detector's collect step writing the
 * deliveries as free, idempotent puts (a replay rewrites the same items).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/alert.h"
#include "core/keys.h"
#include "core/timeutil.h"
#include "core/webhook.h"
#include "detect/webhook_fanout.h"
#include "detect/wset.h"
#include "util/err.h"
#include "tmpdir.h"

#define BRAND "b-fan"
#define T_REC "2026-03-01T10:00:00.000Z"

static int64_t ms_of(const char *iso)
{
    int64_t ms = 0;
    assert_int_equal(time_parse_iso(iso, &ms), 0);
    return ms;
}

static void put(struct store *s, cJSON *item)
{
    assert_non_null(item);
    assert_int_equal(store_put(s, item, NULL), 0);
    cJSON_Delete(item);
}

static void add_hook(struct store *s, const char *id, const char *brand, unsigned events,
                     const char *created_at, bool active)
{
    struct webhook_fields f = {.id = id,
                               .brand_id = brand,
                               .url = "http://127.0.0.1:9/h",
                               .events = events,
                               .created_at = created_at,
                               .secret = "whsec_test"};
    cJSON *it = webhook_item_new(&f);
    assert_non_null(it);
    if (!active)
        cJSON_ReplaceItemInObject(it, "active", cJSON_CreateFalse());
    put(s, it);
}

static void add_product(struct store *s, const char *pid, const char *brand)
{
    struct key pk;
    cJSON *it = cJSON_CreateObject();
    cJSON_AddStringToObject(it, "PK", key_product_pk(&pk, pid));
    cJSON_AddStringToObject(it, "SK", KEY_SK_META);
    cJSON_AddStringToObject(it, "productId", pid);
    cJSON_AddStringToObject(it, "brandId", brand);
    put(s, it);
}

/* A scan insert record (brand NULL: the scan carries none) taken at
 * `taken` (the image's timestamp), stream time ts_ms. */
static void scan_record_at(struct stream_record *r, const char *pid, const char *brand,
                           int64_t ts_ms, const char *taken)
{
    struct key pk, sk;
    cJSON *img = cJSON_CreateObject();

    memset(r, 0, sizeof *r);
    r->kind = STORE_INSERT;
    r->ts_ms = ts_ms;
    r->pk = strdup(key_product_pk(&pk, pid));
    r->sk = strdup(key_scan_sk(&sk, taken, "0a0b0c0d"));
    cJSON_AddStringToObject(img, "productId", pid);
    cJSON_AddStringToObject(img, "timestamp", taken);
    cJSON_AddStringToObject(img, "ip", "203.0.113.9");
    cJSON_AddStringToObject(img, "country", "CH");
    cJSON_AddStringToObject(img, "result", "authentic");
    if (brand)
        cJSON_AddStringToObject(img, "brandId", brand);
    r->image = img;
}

/* ... taken at T_REC. */
static void scan_record(struct stream_record *r, const char *pid, const char *brand, int64_t ts_ms)
{
    scan_record_at(r, pid, brand, ts_ms, T_REC);
}

/* An alert insert record of type (e.g. "product_recall"). */
static void alert_record(struct stream_record *r, const char *type, int64_t ts_ms)
{
    struct alert_fields f = {.brand_id = BRAND,
                             .type = type,
                             .severity = "critical",
                             .product_id = "p1",
                             .details = "details",
                             .timestamp = T_REC,
                             .source = "api"};
    cJSON *img = alert_item_new(&f);

    assert_non_null(img);
    memset(r, 0, sizeof *r);
    r->kind = STORE_INSERT;
    r->ts_ms = ts_ms;
    r->pk = strdup(cJSON_GetObjectItem(img, "PK")->valuestring);
    r->sk = strdup(cJSON_GetObjectItem(img, "SK")->valuestring);
    r->image = img;
}

static void record_clear(struct stream_record *r)
{
    free(r->pk);
    free(r->sk);
    cJSON_Delete(r->image);
    memset(r, 0, sizeof *r);
}

/* Collects the emitted items into a JSON array. */
static int collect(void *arg, cJSON *item)
{
    cJSON_AddItemToArray(arg, item);
    return 0;
}

/* The deliveries of r (a new cache each time: nothing carried over). */
static cJSON *fan(struct store *s, const struct stream_record *r, const char *pos, bool coarse_time)
{
    struct wf_cache *c = wf_cache_new();
    cJSON *out = cJSON_CreateArray();
    struct wf_opts o = {
        .pos = pos, .now_ms = ms_of("2026-03-01T11:00:00.000Z"), .coarse_time = coarse_time};
    uint64_t skipped = 0;

    assert_int_equal(webhook_fanout_record(s, c, r, &o, collect, out, &skipped), 0);
    assert_int_equal(skipped, 0);
    wf_cache_free(c);
    return out;
}

static const char *str(const cJSON *item, const char *name)
{
    const cJSON *v = cJSON_GetObjectItem(item, name);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* The delivery of webhook wid and event ev in arr, or NULL. */
static const cJSON *find(const cJSON *arr, const char *wid, const char *ev)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, arr)
    {
        if (!strcmp(str(it, "webhookId"), wid) && !strcmp(str(it, "event"), ev))
            return it;
    }
    return NULL;
}

static bool uuid_shaped(const char *id)
{
    if (strlen(id) != 36)
        return false;
    for (int i = 0; i < 36; i++) {
        bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash != (id[i] == '-'))
            return false;
        if (!dash && !strchr("0123456789abcdef", id[i]))
            return false;
    }
    return true;
}

static void t_deterministic_ids(void **state)
{
    struct ut_db *f = *state;
    struct stream_record r;
    const char *pos1 = "00000000000000000000000000000000000000001@shardId-0001";
    const char *pos2 = "00000000000000000000000000000000000000002@shardId-0001";

    add_hook(f->s, "w1", BRAND, WEBHOOK_EV_ALL, "2026-01-01T00:00:00.000Z", true);
    add_hook(f->s, "w2", BRAND, WEBHOOK_EV_ALL, "2026-01-01T00:00:00.000Z", true);
    alert_record(&r, "product_recall", ms_of(T_REC));

    cJSON *a = fan(f->s, &r, pos1, true), *b = fan(f->s, &r, pos1, true);
    cJSON *c = fan(f->s, &r, pos2, true), *rnd = fan(f->s, &r, NULL, false);
    /* two hooks x (threat_alert + product_recall) */
    assert_int_equal(cJSON_GetArraySize(a), 4);
    assert_int_equal(cJSON_GetArraySize(b), 4);
    const char *wids[2] = {"w1", "w2"}, *evs[2] = {"threat_alert", "product_recall"};
    char seen[4][40];
    int k = 0;
    for (int w = 0; w < 2; w++)
        for (int e = 0; e < 2; e++) {
            const cJSON *x = find(a, wids[w], evs[e]), *y = find(b, wids[w], evs[e]);
            const cJSON *z = find(c, wids[w], evs[e]), *q = find(rnd, wids[w], evs[e]);
            char want[WF_ID_LEN + 1];
            assert_non_null(x);
            assert_non_null(y);
            assert_non_null(z);
            assert_non_null(q);
            /* same record position: the same item, key for key */
            assert_string_equal(str(x, "id"), str(y, "id"));
            assert_string_equal(str(x, "PK"), str(y, "PK"));
            assert_string_equal(str(x, "SK"), str(y, "SK"));
            assert_string_equal(str(x, "payload"), str(y, "payload"));
            webhook_fanout_id(pos1, wids[w], evs[e], want);
            assert_string_equal(str(x, "id"), want);
            assert_true(webhook_id_ok(str(x, "id")));
            assert_true(uuid_shaped(str(x, "id")));
            /* createdAt is the record's time, not the clock */
            assert_string_equal(str(x, "createdAt"), T_REC);
            assert_string_equal(str(x, "claimToken"), "");
            assert_string_equal(str(x, "GSI1PK"), KEY_GSI1PK_DELIVERY_PENDING);
            /* another position: another id */
            assert_string_not_equal(str(x, "id"), str(z, "id"));
            /* without a position: random ids, createdAt = now */
            assert_true(uuid_shaped(str(q, "id")));
            assert_string_not_equal(str(q, "id"), str(x, "id"));
            assert_string_equal(str(q, "createdAt"), "2026-03-01T11:00:00.000Z");
            for (int j = 0; j < k; j++)
                assert_string_not_equal(seen[j], str(x, "id"));
            snprintf(seen[k++], sizeof seen[0], "%s", str(x, "id"));
        }
    cJSON_Delete(a);
    cJSON_Delete(b);
    cJSON_Delete(c);
    cJSON_Delete(rnd);
    record_clear(&r);
}

static void t_subscriptions(void **state)
{
    struct ut_db *f = *state;
    struct stream_record scan, alert;

    add_hook(f->s, "w-threat", BRAND, WEBHOOK_EV_THREAT, "2026-01-01T00:00:00.000Z", true);
    add_hook(f->s, "w-scan", BRAND, WEBHOOK_EV_SCAN, "2026-01-01T00:00:00.000Z", true);
    add_hook(f->s, "w-other", "b-other", WEBHOOK_EV_ALL, "2026-01-01T00:00:00.000Z", true);
    scan_record(&scan, "p1", BRAND, ms_of(T_REC));
    alert_record(&alert, "geographic_anomaly", ms_of(T_REC));

    cJSON *a = fan(f->s, &scan, "1@s", true);
    assert_int_equal(cJSON_GetArraySize(a), 1);
    assert_non_null(find(a, "w-scan", "verification_scan"));
    cJSON_Delete(a);
    a = fan(f->s, &alert, "2@s", true);
    assert_int_equal(cJSON_GetArraySize(a), 1);
    assert_non_null(find(a, "w-threat", "threat_alert"));
    cJSON_Delete(a);
    /* a resolved alert is not a new threat */
    cJSON_ReplaceItemInObject(alert.image, "resolved", cJSON_CreateTrue());
    alert.kind = STORE_MODIFY;
    a = fan(f->s, &alert, "3@s", true);
    assert_int_equal(cJSON_GetArraySize(a), 0);
    cJSON_Delete(a);
    record_clear(&scan);
    record_clear(&alert);
}

static void t_created_filter(void **state)
{
    struct ut_db *f = *state;
    struct stream_record r;

    /* registered half a second into the record's second */
    add_hook(f->s, "w1", BRAND, WEBHOOK_EV_ALL, "2026-03-01T10:00:00.500Z", true);

    /* DynamoDB: the stream time is the start of the record's second */
    scan_record(&r, "p1", BRAND, ms_of(T_REC));
    cJSON *a = fan(f->s, &r, "1@s", true);
    assert_int_equal(cJSON_GetArraySize(a), 1);
    cJSON_Delete(a);
    record_clear(&r);
    /* ... but not a record of the second before */
    scan_record_at(&r, "p1", BRAND, ms_of("2026-03-01T09:59:59.000Z"), "2026-03-01T09:59:59.900Z");
    a = fan(f->s, &r, "2@s", true);
    assert_int_equal(cJSON_GetArraySize(a), 0);
    cJSON_Delete(a);
    record_clear(&r);
    /* DynamoDB Local: whole minutes; the image's time refines it */
    scan_record_at(&r, "p1", BRAND, ms_of("2026-03-01T10:00:00.000Z") - 59000,
                   "2026-03-01T10:00:00.700Z");
    a = fan(f->s, &r, "3@s", true);
    assert_int_equal(cJSON_GetArraySize(a), 1);
    assert_string_equal(str(cJSON_GetArrayItem(a, 0), "createdAt"), "2026-03-01T10:00:00.700Z");
    cJSON_Delete(a);
    record_clear(&r);
    scan_record_at(&r, "p1", BRAND, ms_of("2026-03-01T10:00:00.000Z") - 59000,
                   "2026-03-01T09:59:58.000Z");
    a = fan(f->s, &r, "4@s", true);
    assert_int_equal(cJSON_GetArraySize(a), 0);
    cJSON_Delete(a);
    record_clear(&r);
    /* an image time far ahead of the stream is believed one minute at most */
    scan_record_at(&r, "p1", BRAND, ms_of("2026-03-01T10:00:00.000Z"), "2026-03-01T12:00:00.000Z");
    a = fan(f->s, &r, "5@s", true);
    assert_int_equal(cJSON_GetArraySize(a), 1);
    assert_string_equal(str(cJSON_GetArrayItem(a, 0), "createdAt"), "2026-03-01T10:01:00.000Z");
    cJSON_Delete(a);
    record_clear(&r);
    /* SQLite: millisecond stream times, compared as they are (the image's
     * time does not matter) */
    scan_record(&r, "p1", BRAND, ms_of("2026-03-01T10:00:00.499Z"));
    a = fan(f->s, &r, NULL, false);
    assert_int_equal(cJSON_GetArraySize(a), 0);
    cJSON_Delete(a);
    r.ts_ms = ms_of("2026-03-01T10:00:00.500Z");
    a = fan(f->s, &r, NULL, false);
    assert_int_equal(cJSON_GetArraySize(a), 1);
    cJSON_Delete(a);
    record_clear(&r);
}

static void t_brand_via_product(void **state)
{
    struct ut_db *f = *state;
    struct stream_record r;

    add_hook(f->s, "w1", BRAND, WEBHOOK_EV_ALL, "2026-01-01T00:00:00.000Z", true);
    add_product(f->s, "p-known", BRAND);
    scan_record(&r, "p-known", NULL, ms_of(T_REC));
    cJSON *a = fan(f->s, &r, "1@s", true);
    assert_int_equal(cJSON_GetArraySize(a), 1);
    assert_string_equal(str(cJSON_GetArrayItem(a, 0), "brandId"), BRAND);
    cJSON *body = cJSON_Parse(str(cJSON_GetArrayItem(a, 0), "payload"));
    assert_string_equal(str(body, "brandId"), BRAND);
    assert_string_equal(str(body, "event"), "verification_scan");
    /* never the raw IP (D04) */
    assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(body, "data"), "ip"));
    cJSON_Delete(body);
    cJSON_Delete(a);
    record_clear(&r);
    /* a product nobody knows: no brand, no delivery */
    scan_record(&r, "p-ghost", NULL, ms_of(T_REC));
    a = fan(f->s, &r, "2@s", true);
    assert_int_equal(cJSON_GetArraySize(a), 0);
    cJSON_Delete(a);
    record_clear(&r);
}

static void t_inactive_and_deleted(void **state)
{
    struct ut_db *f = *state;
    struct stream_record r;
    struct key pk, sk;

    add_hook(f->s, "w-off", BRAND, WEBHOOK_EV_ALL, "2026-01-01T00:00:00.000Z", false);
    add_hook(f->s, "w-gone", BRAND, WEBHOOK_EV_ALL, "2026-01-01T00:00:00.000Z", true);
    add_hook(f->s, "w-on", BRAND, WEBHOOK_EV_ALL, "2026-01-01T00:00:00.000Z", true);
    assert_int_equal(
        store_delete(f->s, key_brand_pk(&pk, BRAND), key_webhook_sk(&sk, "w-gone"), NULL), 0);
    scan_record(&r, "p1", BRAND, ms_of(T_REC));
    cJSON *a = fan(f->s, &r, "1@s", true);
    assert_int_equal(cJSON_GetArraySize(a), 1);
    assert_non_null(find(a, "w-on", "verification_scan"));
    cJSON_Delete(a);
    record_clear(&r);
}

/* The pending index as an array (caller frees). */
static cJSON *pending(struct store *s)
{
    struct store_query q = {.index = STORE_INDEX_GSI1, .pk = KEY_GSI1PK_DELIVERY_PENDING};
    struct store_result res = {0};
    assert_int_equal(store_query(s, &q, &res), 0);
    cJSON *items = res.items;
    res.items = NULL;
    store_result_free(&res);
    return items;
}

/* Runs the detector's collect step over recs and commits what it adds. */
static void collect_and_commit(struct store *s, const struct ddbs_record *recs, size_t n)
{
    struct wset *ws = wset_new();
    struct wset_plan plan = {0};

    assert_int_equal(webhook_fanout_collect(s, recs, n, ms_of("2026-03-01T11:00:00.000Z"),
                                            &(struct ddbd_sink){.ws = ws}),
                     0);
    assert_int_equal(wset_plan(ws, STORE_TRANSACT_MAX, 0, &plan), 0);
    for (size_t g = 0; g < plan.ngroups; g++) {
        size_t nw;
        const struct store_write *w = wset_plan_group(&plan, g, &nw);
        assert_int_equal(store_transact(s, w, nw, NULL), 0);
    }
    wset_plan_free(&plan);
    wset_free(ws);
}

static void t_collect_idempotent(void **state)
{
    struct ut_db *f = *state;
    struct ddbs_record recs[3];

    add_hook(f->s, "w1", BRAND, WEBHOOK_EV_ALL, "2026-01-01T00:00:00.000Z", true);
    add_hook(f->s, "w2", BRAND, WEBHOOK_EV_SCAN, "2026-01-01T00:00:00.000Z", true);
    memset(recs, 0, sizeof recs);
    scan_record(&recs[0].r, "p1", BRAND, ms_of(T_REC));
    alert_record(&recs[1].r, "product_recall", ms_of(T_REC));
    /* a record that is no delivery at all (a product's META) */
    recs[2].r.kind = STORE_MODIFY;
    recs[2].r.pk = strdup("PRODUCT#p1");
    recs[2].r.sk = strdup(KEY_SK_META);
    recs[2].r.image = cJSON_CreateObject();
    for (int i = 0; i < 3; i++) {
        snprintf(recs[i].seq, sizeof recs[i].seq, "%d00000", i + 1);
        assert_true(det_pos_format(recs[i].pos, "shardId-0001", recs[i].seq));
    }
    collect_and_commit(f->s, recs, 3);
    cJSON *p = pending(f->s);
    /* scan: w1, w2; recall: w1 x (threat_alert, product_recall) */
    assert_int_equal(cJSON_GetArraySize(p), 4);
    const cJSON *it;
    cJSON_ArrayForEach(it, p)
    {
        assert_string_equal(str(it, "claimToken"), "");
        assert_string_equal(str(it, "status"), "pending");
    }
    char *first = cJSON_PrintUnformatted(p);
    cJSON_Delete(p);
    /* the batch read again after a crash: the same items, no more */
    collect_and_commit(f->s, recs, 3);
    p = pending(f->s);
    char *again = cJSON_PrintUnformatted(p);
    assert_string_equal(first, again);
    free(first);
    free(again);
    cJSON_Delete(p);
    for (int i = 0; i < 3; i++)
        ddbs_record_clear(&recs[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(t_deterministic_ids, ut_db_setup, ut_db_teardown),
        cmocka_unit_test_setup_teardown(t_subscriptions, ut_db_setup, ut_db_teardown),
        cmocka_unit_test_setup_teardown(t_created_filter, ut_db_setup, ut_db_teardown),
        cmocka_unit_test_setup_teardown(t_brand_via_product, ut_db_setup, ut_db_teardown),
        cmocka_unit_test_setup_teardown(t_inactive_and_deleted, ut_db_setup, ut_db_teardown),
        cmocka_unit_test_setup_teardown(t_collect_idempotent, ut_db_setup, ut_db_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
