/*
 * test_webhook_dispatch.c - the delivery engine over a real SQLite store,
 * a real event loop and a loopback receiver (mini_httpd.h): which stream
 * records become which deliveries (events, subscriptions, brands via the
 * product, webhooks created after the record, resolved alerts), signed
 * POSTs, retries and the final outcome written to the delivery item and
 * the webhook, the checkpoint moving with the deliveries, resume after a
 * stop without duplicates, and the delivery-time private-address block.
 * Claim mode (the DynamoDB one, forced here on SQLite): two dispatchers
 * deliver each delivery once, a retry gives the claim back, a lapsed
 * claim is taken over, and a lost claim drops the outcome quietly.
 * GENUPROOF_TIME_SCALE is forced to 0.01 so the backoffs take
 * milliseconds.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ev.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/webhook_dispatch.h"
#include "core/alert.h"
#include "core/crypto.h"
#include "core/keys.h"
#include "core/timeutil.h"
#include "core/webhook.h"
#include "mini_httpd.h"
#include "store/store.h"
#include "util/err.h"
#include "util/timescale.h"
#include "tmpdir.h"

/* ---- receiver ------------------------------------------------------------ */

#define RX_MAX 64

struct rx {
    pthread_mutex_t mu;
    int n;
    char event[RX_MAX][32], delivery[RX_MAX][48], path[RX_MAX][256];
    char ts[RX_MAX][24], sig[RX_MAX][80];
    char *body[RX_MAX];
    atomic_int fail_left; /* answer 500 while > 0 */
    atomic_int delay_ms;  /* wait this long before answering */
};

static struct rx rx = {.mu = PTHREAD_MUTEX_INITIALIZER};
static struct mini_httpd *srv;

static void handler(void *arg, const struct mini_req *r, int fd)
{
    (void)arg;
    pthread_mutex_lock(&rx.mu);
    if (rx.n < RX_MAX) {
        int i = rx.n++;
        mini_header(r, "X-GenuProof-Event", rx.event[i], sizeof rx.event[i]);
        mini_header(r, "X-GenuProof-Delivery", rx.delivery[i], sizeof rx.delivery[i]);
        mini_header(r, "X-GenuProof-Timestamp", rx.ts[i], sizeof rx.ts[i]);
        mini_header(r, "X-GenuProof-Signature", rx.sig[i], sizeof rx.sig[i]);
        snprintf(rx.path[i], sizeof rx.path[i], "%s", r->path);
        rx.body[i] = strndup(r->body, r->body_len);
    }
    pthread_mutex_unlock(&rx.mu);
    if (atomic_load(&rx.delay_ms) > 0)
        usleep((useconds_t)atomic_load(&rx.delay_ms) * 1000);
    if (atomic_load(&rx.fail_left) > 0) {
        atomic_fetch_sub(&rx.fail_left, 1);
        mini_reply(fd, 500, "application/json", "{}");
    } else {
        mini_reply(fd, 200, "application/json", "{\"ok\":true}");
    }
}

static void rx_reset(int fail_first)
{
    pthread_mutex_lock(&rx.mu);
    for (int i = 0; i < rx.n; i++)
        free(rx.body[i]);
    rx.n = 0;
    pthread_mutex_unlock(&rx.mu);
    atomic_store(&rx.fail_left, fail_first);
    atomic_store(&rx.delay_ms, 0);
}

static int rx_count(void)
{
    pthread_mutex_lock(&rx.mu);
    int n = rx.n;
    pthread_mutex_unlock(&rx.mu);
    return n;
}

/* ---- fixture ------------------------------------------------------------- */

struct fx {
    char dir[64], path[128];
    struct store *s;
    struct ev_loop *loop;
    struct webhook_dispatch *d;
};

static struct fx F;

static void fx_open_store(void)
{
    struct store_options o = {.path = F.path, .durability = STORE_DURABILITY_NORMAL};
    char err[256];
    F.s = store_open_sqlite(&o, err, sizeof err);
    assert_non_null(F.s);
}

static int setup(void **state)
{
    (void)state;
    time_scale_set(0.01);
    memset(&F, 0, sizeof F);
    snprintf(F.dir, sizeof F.dir, "/tmp/gp-whd.XXXXXX");
    if (!mkdtemp(F.dir))
        return -1;
    snprintf(F.path, sizeof F.path, "%s/t.db", F.dir);
    fx_open_store();
    F.loop = ev_loop_new(EVFLAG_AUTO);
    rx_reset(0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    webhook_dispatch_free(F.d);
    F.d = NULL;
    store_close(F.s);
    ev_loop_destroy(F.loop);
    if (ut_rmtree(F.dir) != 0)
        return -1;
    rx_reset(0);
    return 0;
}

static int group_up(void **state)
{
    (void)state;
    srv = mini_httpd_start(handler, NULL);
    return srv ? 0 : -1;
}

static int group_down(void **state)
{
    (void)state;
    mini_httpd_stop(srv);
    rx_reset(0);
    time_scale_set(0);
    return 0;
}

static void start_dispatch(bool allow_private)
{
    char err[200];
    /* 200 s scaled by 0.01: a 2 s attempt timeout, ample under ASan */
    struct webhook_dispatch_config c = {.allow_private = allow_private, .timeout_s = 200};
    F.d = webhook_dispatch_new(F.s, F.loop, &c, err, sizeof err);
    assert_non_null(F.d);
}

static void put(cJSON *item)
{
    assert_non_null(item);
    assert_int_equal(store_put(F.s, item, NULL), 0);
    cJSON_Delete(item);
}

static void add_product(const char *pid, const char *brand)
{
    struct key pk;
    cJSON *it = cJSON_CreateObject();
    cJSON_AddStringToObject(it, "PK", key_product_pk(&pk, pid));
    cJSON_AddStringToObject(it, "SK", KEY_SK_META);
    cJSON_AddStringToObject(it, "productId", pid);
    cJSON_AddStringToObject(it, "brandId", brand);
    put(it);
}

/* A webhook to the receiver's path; returns its secret in secret_out. */
static void add_webhook(const char *id, const char *brand, const char *path, unsigned events,
                        const char *created_at, char *secret_out)
{
    char url[128], secret[WEBHOOK_SECRET_LEN + 1];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", mini_httpd_port(srv), path);
    webhook_secret_new(secret);
    struct webhook_fields f = {.id = id,
                               .brand_id = brand,
                               .url = url,
                               .events = events,
                               .created_at = created_at,
                               .secret = secret};
    put(webhook_item_new(&f));
    if (secret_out)
        strcpy(secret_out, secret);
}

static void add_scan(const char *pid, const char *ts, const char *country)
{
    struct key pk, sk;
    cJSON *it = cJSON_CreateObject();
    cJSON_AddStringToObject(it, "PK", key_product_pk(&pk, pid));
    cJSON_AddStringToObject(it, "SK", key_scan_sk(&sk, ts, "0a0b0c0d"));
    cJSON_AddStringToObject(it, "productId", pid);
    cJSON_AddStringToObject(it, "timestamp", ts);
    cJSON_AddStringToObject(it, "ip", "203.0.113.9");
    cJSON_AddStringToObject(it, "country", country);
    cJSON_AddStringToObject(it, "city", "Zurich");
    cJSON_AddStringToObject(it, "userAgent", "ua");
    cJSON_AddStringToObject(it, "result", "authentic");
    put(it);
}

static cJSON *add_alert(const char *brand, const char *type, const char *pid)
{
    char now[ISO_LEN + 1];
    time_iso(time_now_ms(), now);
    struct alert_fields f = {.brand_id = brand,
                             .type = type,
                             .severity = "critical",
                             .product_id = pid,
                             .details = "details",
                             .timestamp = now,
                             .source = "api"};
    cJSON *it = alert_item_new(&f);
    assert_non_null(it);
    assert_int_equal(store_put(F.s, it, NULL), 0);
    return it; /* caller frees */
}

static const char *old_iso = "2020-01-01T00:00:00.000Z";

/* Runs the loop until cond() holds (checked every 5 ms) or 10 s pass. */
static bool (*until_fn)(void);
static bool until_ok;

static void until_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)revents;
    if (until_fn()) {
        until_ok = true;
        ev_break(loop, EVBREAK_ALL);
        return;
    }
    if (--*(int *)w->data <= 0)
        ev_break(loop, EVBREAK_ALL);
}

static bool run_until(bool (*cond)(void))
{
    ev_timer t;
    int left = 2000;
    until_fn = cond;
    until_ok = false;
    ev_timer_init(&t, until_cb, 0.005, 0.005);
    t.data = &left;
    ev_timer_start(F.loop, &t);
    ev_run(F.loop, 0);
    ev_timer_stop(F.loop, &t);
    return until_ok;
}

/* Deliveries of one webhook, newest first (caller frees). */
static cJSON *deliveries(const char *wid)
{
    struct key pk;
    struct store_query q = {.pk = key_delivery_pk(&pk, wid), .forward = false, .consistent = true};
    struct store_result r = {0};
    assert_int_equal(store_query(F.s, &q, &r), 0);
    cJSON *items = r.items;
    r.items = NULL;
    store_result_free(&r);
    return items;
}

static const char *status_of_first(const char *wid, char *buf, size_t n)
{
    cJSON *d = deliveries(wid);
    const cJSON *st = cJSON_GetObjectItem(cJSON_GetArrayItem(d, 0), "status");
    snprintf(buf, n, "%s", cJSON_IsString(st) ? st->valuestring : "");
    cJSON_Delete(d);
    return buf;
}

static bool w1_final(void)
{
    char b[32];
    status_of_first("w1", b, sizeof b);
    return !strcmp(b, "delivered") || !strcmp(b, "failed");
}

static int pending_count(void)
{
    struct store_query q = {.index = STORE_INDEX_GSI1, .pk = KEY_GSI1PK_DELIVERY_PENDING};
    struct store_result r = {0};
    assert_int_equal(store_query(F.s, &q, &r), 0);
    int n = r.count;
    store_result_free(&r);
    return n;
}

static double webhook_num(const char *brand, const char *wid, const char *attr)
{
    struct key pk, sk;
    cJSON *it = NULL;
    assert_int_equal(store_get(F.s, key_brand_pk(&pk, brand), key_webhook_sk(&sk, wid), true, &it),
                     0);
    const cJSON *v = cJSON_GetObjectItem(it, attr);
    double d = cJSON_IsNumber(v) ? v->valuedouble : -1;
    cJSON_Delete(it);
    return d;
}

/* ---- tests ---------------------------------------------------------------- */

static void test_scan_delivered_after_retries(void **state)
{
    (void)state;
    char secret[WEBHOOK_SECRET_LEN + 1], sig[WEBHOOK_SIG_LEN + 1], st[32];
    uint64_t ckpt = 0;

    add_product("p1", "b1");
    add_webhook("w1", "b1", "/hook", WEBHOOK_EV_ALL, old_iso, secret);
    add_webhook("w-other", "b2", "/other", WEBHOOK_EV_ALL, old_iso, NULL);
    rx_reset(2);
    add_scan("p1", "2026-03-01T10:00:00.000Z", "CH");
    start_dispatch(true);
    assert_true(run_until(w1_final));
    assert_string_equal(status_of_first("w1", st, sizeof st), "delivered");

    assert_int_equal(rx_count(), 3);
    pthread_mutex_lock(&rx.mu);
    for (int i = 0; i < 3; i++) {
        assert_string_equal(rx.path[i], "/hook");
        assert_string_equal(rx.event[i], "verification_scan");
        assert_string_equal(rx.delivery[i], rx.delivery[0]);
        webhook_sign(secret, rx.ts[i], rx.body[i], strlen(rx.body[i]), sig);
        assert_string_equal(rx.sig[i], sig);
    }
    cJSON *body = cJSON_Parse(rx.body[2]);
    assert_string_equal(cJSON_GetObjectItem(body, "event")->valuestring, "verification_scan");
    assert_string_equal(cJSON_GetObjectItem(body, "brandId")->valuestring, "b1");
    assert_string_equal(cJSON_GetObjectItem(body, "timestamp")->valuestring,
                        "2026-03-01T10:00:00.000Z");
    cJSON *data = cJSON_GetObjectItem(body, "data");
    assert_string_equal(cJSON_GetObjectItem(data, "productId")->valuestring, "p1");
    assert_string_equal(cJSON_GetObjectItem(data, "country")->valuestring, "CH");
    assert_null(cJSON_GetObjectItem(data, "ip"));
    assert_null(cJSON_GetObjectItem(data, "userAgent"));
    cJSON_Delete(body);
    pthread_mutex_unlock(&rx.mu);

    cJSON *d = deliveries("w1");
    assert_int_equal(cJSON_GetArraySize(d), 1);
    cJSON *d0 = cJSON_GetArrayItem(d, 0);
    assert_int_equal(cJSON_GetObjectItem(d0, "attempts")->valueint, 3);
    assert_int_equal(cJSON_GetObjectItem(d0, "lastStatus")->valueint, 200);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(d0, "lastError")));
    assert_true(cJSON_IsString(cJSON_GetObjectItem(d0, "deliveredAt")));
    assert_null(cJSON_GetObjectItem(d0, "GSI1PK")); /* left the pending index */
    cJSON *h = cJSON_GetObjectItem(d0, "history");
    assert_int_equal(cJSON_GetArraySize(h), 3);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(h, 0), "status")->valueint, 500);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(h, 0), "error")->valuestring,
                        "HTTP 500");
    cJSON_Delete(d);
    cJSON *other = deliveries("w-other");
    assert_int_equal(cJSON_GetArraySize(other), 0); /* another brand's webhook */
    cJSON_Delete(other);

    assert_true(webhook_num("b1", "w1", "deliveryCount") == 1);
    assert_int_equal(pending_count(), 0);
    assert_int_equal(store_checkpoint_get(F.s, WEBHOOK_DISPATCH_READER, &ckpt), 0);
    assert_true(ckpt > 0);
    struct webhook_dispatch_stats ws;
    webhook_dispatch_get_stats(F.d, &ws);
    assert_int_equal(ws.created, 1);
    assert_int_equal(ws.delivered, 1);
    assert_int_equal(ws.attempts, 3);
    assert_int_equal(ws.queued, 0);
}

static bool rx_has_3(void)
{
    return rx_count() >= 3;
}

/* Stream mode: a receiver that is down with more deliveries waiting for
 * their retry than the queue holds must not stop the stream for every
 * other webhook: waiting retries leave memory for the store (and stay
 * pending there), new deliveries keep going. */
#define NDOWN 80
static bool down_all_tried(void)
{
    struct webhook_dispatch_stats ws;
    webhook_dispatch_get_stats(F.d, &ws);
    return ws.attempts >= NDOWN;
}

static bool wg_final(void)
{
    char b[32];
    status_of_first("wg", b, sizeof b);
    return !strcmp(b, "delivered") || !strcmp(b, "failed");
}

static bool wg_two_delivered(void)
{
    cJSON *d = deliveries("wg");
    const cJSON *it;
    int n = 0;
    cJSON_ArrayForEach(it, d)
    {
        const cJSON *st = cJSON_GetObjectItem(it, "status");
        n += cJSON_IsString(st) && !strcmp(st->valuestring, "delivered");
    }
    cJSON_Delete(d);
    return n == 2;
}

static void test_stream_full_queue_spills_retries(void **state)
{
    (void)state;
    char ts[ISO_LEN + 1], st[32], err[200];
    int64_t t0 = time_now_ms() - 60000;

    add_product("pd", "bd");
    add_webhook("wd", "bd", "/down", WEBHOOK_EV_ALL, old_iso, NULL);
    add_product("pg", "bg");
    add_webhook("wg", "bg", "/hook", WEBHOOK_EV_ALL, old_iso, NULL);
    for (int i = 0; i < NDOWN; i++) {
        time_iso(t0 + i, ts);
        add_scan("pd", ts, "CH");
    }
    rx_reset(NDOWN); /* every first attempt fails: retries far ahead */
    struct webhook_dispatch_config c = {.allow_private = true,
                                        .timeout_s = 200,
                                        .backoff_s = 100000,
                                        .max_inflight = 16,
                                        .queue_max = 64};
    F.d = webhook_dispatch_new(F.s, F.loop, &c, err, sizeof err);
    assert_non_null(F.d);
    assert_true(run_until(down_all_tried));
    time_iso(time_now_ms(), ts);
    add_scan("pg", ts, "CH");
    assert_true(run_until(wg_final));
    assert_string_equal(status_of_first("wg", st, sizeof st), "delivered");
    struct webhook_dispatch_stats ws;
    webhook_dispatch_get_stats(F.d, &ws);
    assert_true(ws.spilled > 0);
    assert_int_equal(ws.created, NDOWN + 1);
    assert_int_equal(ws.attempts, NDOWN + 1);
    /* none of the receiver's deliveries is lost: all wait in the store */
    assert_int_equal(pending_count(), NDOWN);

    /* A restart with more pending retries than the queue holds: the
     * ones not due stay in the store and the stream goes on. */
    webhook_dispatch_free(F.d);
    F.d = webhook_dispatch_new(F.s, F.loop, &c, err, sizeof err);
    assert_non_null(F.d);
    time_iso(time_now_ms() + 1, ts);
    add_scan("pg", ts, "DE");
    assert_true(run_until(wg_two_delivered));
    webhook_dispatch_get_stats(F.d, &ws);
    assert_int_equal(ws.resumed, 0);
    assert_int_equal(ws.attempts, 1);
    assert_int_equal(pending_count(), NDOWN);
}

static void test_alert_events_and_filters(void **state)
{
    (void)state;
    char now[ISO_LEN + 1];

    add_product("p1", "b1");
    add_webhook("w1", "b1", "/all", WEBHOOK_EV_ALL, old_iso, NULL);
    add_webhook("w-scan", "b1", "/scan-only", WEBHOOK_EV_SCAN, old_iso, NULL);
    cJSON *recall = add_alert("b1", "product_recall", "p1");
    cJSON *geo = add_alert("b1", "geographic_anomaly", "p1");
    /* resolving an alert is not a new threat */
    cJSON *yes = cJSON_CreateTrue();
    const struct store_action act = {.kind = STORE_ACT_SET, .attr = "resolved", .value = yes};
    assert_int_equal(store_update(F.s, cJSON_GetObjectItem(geo, "PK")->valuestring,
                                  cJSON_GetObjectItem(geo, "SK")->valuestring, &act, 1, NULL, NULL),
                     0);
    cJSON_Delete(yes);
    /* a webhook created after these records sees none of them */
    time_iso(time_now_ms() + 60000, now);
    add_webhook("w-late", "b1", "/late", WEBHOOK_EV_ALL, now, NULL);
    /* a scan of a product without a known brand goes nowhere */
    add_scan("p-unknown", "2026-03-01T10:00:00.000Z", "FR");

    start_dispatch(true);
    /* recall INSERT -> threat_alert + product_recall; geo INSERT -> threat_alert */
    assert_true(run_until(rx_has_3));
    /* and nothing more arrives */
    for (int i = 0; i < 20; i++) {
        usleep(10000);
        ev_run(F.loop, EVRUN_NOWAIT);
    }
    assert_int_equal(rx_count(), 3);
    int threat = 0, rec = 0;
    pthread_mutex_lock(&rx.mu);
    for (int i = 0; i < rx.n; i++) {
        assert_string_equal(rx.path[i], "/all");
        threat += !strcmp(rx.event[i], "threat_alert");
        if (!strcmp(rx.event[i], "product_recall")) {
            rec++;
            cJSON *b = cJSON_Parse(rx.body[i]);
            cJSON *data = cJSON_GetObjectItem(b, "data");
            assert_string_equal(cJSON_GetObjectItem(data, "type")->valuestring, "product_recall");
            assert_string_equal(cJSON_GetObjectItem(data, "alertId")->valuestring,
                                cJSON_GetObjectItem(recall, "alertId")->valuestring);
            cJSON_Delete(b);
        }
    }
    pthread_mutex_unlock(&rx.mu);
    assert_int_equal(threat, 2);
    assert_int_equal(rec, 1);
    cJSON *none = deliveries("w-scan");
    assert_int_equal(cJSON_GetArraySize(none), 0);
    cJSON_Delete(none);
    none = deliveries("w-late");
    assert_int_equal(cJSON_GetArraySize(none), 0);
    cJSON_Delete(none);
    cJSON_Delete(recall);
    cJSON_Delete(geo);
}

static bool w1_has_attempt(void)
{
    cJSON *d = deliveries("w1");
    const cJSON *a = cJSON_GetObjectItem(cJSON_GetArrayItem(d, 0), "attempts");
    bool ok = cJSON_IsNumber(a) && a->valueint >= 1;
    cJSON_Delete(d);
    return ok;
}

static void test_resume_without_duplicates(void **state)
{
    (void)state;
    char st[32];

    add_product("p1", "b1");
    add_webhook("w1", "b1", "/hook", WEBHOOK_EV_SCAN, old_iso, NULL);
    rx_reset(1000); /* the receiver keeps failing */
    add_scan("p1", "2026-03-01T10:00:00.000Z", "CH");
    struct webhook_dispatch_config c = {.allow_private = true, .backoff_s = 100, .timeout_s = 200};
    char err[200];
    F.d = webhook_dispatch_new(F.s, F.loop, &c, err, sizeof err);
    assert_non_null(F.d);
    assert_true(run_until(w1_has_attempt));
    assert_string_equal(status_of_first("w1", st, sizeof st), "pending");
    assert_int_equal(pending_count(), 1);
    /* stop (as a crash would, the delivery stays pending), restart */
    webhook_dispatch_free(F.d);
    F.d = NULL;
    store_close(F.s);
    fx_open_store();
    rx_reset(0);
    start_dispatch(true);
    /* the resumed attempt waits for its nextAttemptAt (100 s scaled = 1 s) */
    assert_true(run_until(w1_final));
    assert_string_equal(status_of_first("w1", st, sizeof st), "delivered");
    cJSON *d = deliveries("w1");
    assert_int_equal(cJSON_GetArraySize(d), 1); /* the stream was not replayed */
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(d, 0), "attempts")->valueint, 2);
    cJSON_Delete(d);
    assert_int_equal(rx_count(), 1);
    assert_int_equal(pending_count(), 0);
    struct webhook_dispatch_stats ws;
    webhook_dispatch_get_stats(F.d, &ws);
    assert_int_equal(ws.resumed, 1);
    assert_int_equal(ws.created, 0);
}

static void test_private_target_blocked_at_connect(void **state)
{
    (void)state;
    char st[32];

    add_product("p1", "b1");
    add_webhook("w1", "b1", "/hook", WEBHOOK_EV_ALL, old_iso, NULL);
    add_scan("p1", "2026-03-01T10:00:00.000Z", "CH");
    start_dispatch(false);
    assert_true(run_until(w1_final));
    assert_string_equal(status_of_first("w1", st, sizeof st), "failed");
    cJSON *d = deliveries("w1");
    cJSON *d0 = cJSON_GetArrayItem(d, 0);
    assert_int_equal(cJSON_GetObjectItem(d0, "attempts")->valueint, WEBHOOK_DISPATCH_ATTEMPTS);
    assert_string_equal(cJSON_GetObjectItem(d0, "lastError")->valuestring,
                        "address refused: 127.0.0.1");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(d0, "nextAttemptAt")));
    cJSON_Delete(d);
    assert_int_equal(rx_count(), 0);
    assert_true(webhook_num("b1", "w1", "deliveryCount") == 0);
}

static void test_deleted_webhook_fails_fast(void **state)
{
    (void)state;
    char st[32];
    struct key pk, sk;

    add_product("p1", "b1");
    add_webhook("w1", "b1", "/hook", WEBHOOK_EV_ALL, old_iso, NULL);
    add_scan("p1", "2026-03-01T10:00:00.000Z", "CH");
    cJSON *no = cJSON_CreateFalse();
    const struct store_action act = {.kind = STORE_ACT_SET, .attr = "active", .value = no};
    /* deactivate after the record but before the dispatcher sends */
    start_dispatch(true);
    assert_int_equal(
        store_update(F.s, key_brand_pk(&pk, "b1"), key_webhook_sk(&sk, "w1"), &act, 1, NULL, NULL),
        0);
    cJSON_Delete(no);
    for (int i = 0; i < 30; i++) {
        usleep(10000);
        ev_run(F.loop, EVRUN_NOWAIT);
    }
    /* the delivery was created (the webhook was active when the record
     * was read) and then refused at send time, or never created; in no
     * case does the receiver hear from it */
    cJSON *d = deliveries("w1");
    if (cJSON_GetArraySize(d) > 0)
        assert_string_equal(status_of_first("w1", st, sizeof st), "failed");
    cJSON_Delete(d);
    assert_int_equal(rx_count(), 0);
}

/* ---- claim mode (DynamoDB's: deliveries written by someone else) ------- */

/* A pending delivery of webhook wid, due now, as the Streams detector
 * writes it (free: claimToken ""). */
static void add_delivery(const char *wid, const char *brand, const char *id)
{
    char now[ISO_LEN + 1];
    time_iso(time_now_ms(), now);
    struct webhook_delivery_fields f = {.id = id,
                                        .webhook_id = wid,
                                        .brand_id = brand,
                                        .event = "verification_scan",
                                        .created_at = now,
                                        .payload = "{\"event\":\"verification_scan\"}"};
    put(webhook_delivery_item_new(&f));
}

static struct webhook_dispatch *claim_dispatch(struct store *s, size_t inflight, double backoff_s)
{
    char err[200];
    struct webhook_dispatch_config c = {.allow_private = true,
                                        .timeout_s = 200,
                                        .backoff_s = backoff_s,
                                        .max_inflight = inflight,
                                        .claim = true};
    struct webhook_dispatch *d = webhook_dispatch_new(s, F.loop, &c, err, sizeof err);
    assert_non_null(d);
    return d;
}

#define NCLAIM 12
static struct webhook_dispatch *d2;

static bool all_claimed_delivered(void)
{
    struct webhook_dispatch_stats a, b;
    webhook_dispatch_get_stats(F.d, &a);
    webhook_dispatch_get_stats(d2, &b);
    return a.delivered + b.delivered >= NCLAIM;
}

static void test_claim_two_dispatchers_once(void **state)
{
    (void)state;
    char id[40];
    struct store_options o = {.path = F.path, .durability = STORE_DURABILITY_NORMAL};
    char err[256];
    struct store *s2 = store_open_sqlite(&o, err, sizeof err);

    assert_non_null(s2);
    add_webhook("w1", "b1", "/hook", WEBHOOK_EV_ALL, old_iso, NULL);
    for (int i = 0; i < NCLAIM; i++) {
        snprintf(id, sizeof id, "d-%02d", i);
        add_delivery("w1", "b1", id);
    }
    /* two processes' dispatchers (each its own connection), each with
     * room for only a few requests at a time, so both take some: the
     * receiver holds each request 50 ms, so the first to start cannot
     * send everything before the other has claimed (under a loaded
     * machine it once did, with instant answers) */
    atomic_store(&rx.delay_ms, 50);
    F.d = claim_dispatch(F.s, 3, 0);
    d2 = claim_dispatch(s2, 3, 0);
    assert_true(run_until(all_claimed_delivered));
    /* a little longer: nothing is sent twice */
    for (int i = 0; i < 20; i++) {
        usleep(10000);
        ev_run(F.loop, EVRUN_NOWAIT);
    }
    struct webhook_dispatch_stats a, b;
    webhook_dispatch_get_stats(F.d, &a);
    webhook_dispatch_get_stats(d2, &b);
    assert_int_equal(a.delivered + b.delivered, NCLAIM);
    assert_true(a.delivered > 0 && b.delivered > 0);
    assert_int_equal(a.claimed + b.claimed, NCLAIM);
    assert_int_equal(a.created + b.created, 0); /* claim mode creates nothing */
    assert_int_equal(rx_count(), NCLAIM);
    pthread_mutex_lock(&rx.mu);
    for (int i = 0; i < NCLAIM; i++)
        for (int j = 0; j < i; j++)
            assert_string_not_equal(rx.delivery[i], rx.delivery[j]);
    pthread_mutex_unlock(&rx.mu);
    assert_int_equal(pending_count(), 0);
    assert_true(webhook_num("b1", "w1", "deliveryCount") == NCLAIM);
    webhook_dispatch_free(d2);
    d2 = NULL;
    store_close(s2);
}

static bool first_has_attempt(void)
{
    cJSON *d = deliveries("w1");
    const cJSON *a = cJSON_GetObjectItem(cJSON_GetArrayItem(d, 0), "attempts");
    bool ok = cJSON_IsNumber(a) && a->valueint >= 1;
    cJSON_Delete(d);
    return ok;
}

static void test_claim_retry_releases(void **state)
{
    (void)state;
    char st[32];

    add_webhook("w1", "b1", "/hook", WEBHOOK_EV_ALL, old_iso, NULL);
    add_delivery("w1", "b1", "d-retry");
    rx_reset(1);
    /* first retry after 100 s scaled = 1 s: time to look at the item */
    F.d = claim_dispatch(F.s, 0, 100);
    assert_true(run_until(first_has_attempt));
    cJSON *d = deliveries("w1");
    cJSON *d0 = cJSON_GetArrayItem(d, 0);
    assert_string_equal(cJSON_GetObjectItem(d0, "status")->valuestring, "pending");
    assert_int_equal(cJSON_GetObjectItem(d0, "lastStatus")->valueint, 500);
    /* the claim was given back with the attempt */
    assert_string_equal(cJSON_GetObjectItem(d0, "claimToken")->valuestring, "");
    assert_null(cJSON_GetObjectItem(d0, "claimUntil"));
    int64_t next = 0;
    assert_int_equal(time_parse_iso(cJSON_GetObjectItem(d0, "nextAttemptAt")->valuestring, &next),
                     0);
    assert_true(next > time_now_ms());
    cJSON_Delete(d);
    struct webhook_dispatch_stats ws;
    webhook_dispatch_get_stats(F.d, &ws);
    assert_int_equal(ws.queued, 0); /* back in the store, not in memory */
    assert_int_equal(pending_count(), 1);
    /* the poll that finds it due takes it again */
    assert_true(run_until(w1_final));
    assert_string_equal(status_of_first("w1", st, sizeof st), "delivered");
    d = deliveries("w1");
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(d, 0), "attempts")->valueint, 2);
    cJSON_Delete(d);
    assert_int_equal(rx_count(), 2);
    pthread_mutex_lock(&rx.mu);
    assert_string_equal(rx.delivery[0], "d-retry");
    assert_string_equal(rx.delivery[1], "d-retry");
    pthread_mutex_unlock(&rx.mu);
    webhook_dispatch_get_stats(F.d, &ws);
    assert_int_equal(ws.claimed, 2);
    assert_int_equal(pending_count(), 0);
}

/* Retries of a dead endpoint waiting in the pending index (more of them
 * than a poll looks at) must not hide a new delivery that is due: a retry
 * moves to its due time in the index (GSI1SK), so the new one sorts
 * before them. */
#define NDEAD 70
static struct webhook_dispatch *dead_d;

static bool dead_all_tried(void)
{
    struct webhook_dispatch_stats ws;
    webhook_dispatch_get_stats(dead_d, &ws);
    return ws.claimed >= NDEAD && ws.queued == 0;
}

static void test_claim_due_before_waiting_retries(void **state)
{
    (void)state;
    char id[40], st[32], err[200];
    int64_t hour_ago = time_now_ms() - 3600 * 1000;
    char old[ISO_LEN + 1];

    add_webhook("wd", "b1", "/dead", WEBHOOK_EV_ALL, old_iso, NULL);
    add_webhook("w1", "b1", "/hook", WEBHOOK_EV_ALL, old_iso, NULL);
    for (int i = 0; i < NDEAD; i++) {
        /* created an hour ago, so they come first in creation order */
        time_iso(hour_ago + i, old);
        snprintf(id, sizeof id, "dead-%02d", i);
        struct webhook_delivery_fields f = {.id = id,
                                            .webhook_id = "wd",
                                            .brand_id = "b1",
                                            .event = "verification_scan",
                                            .created_at = old,
                                            .payload = "{\"event\":\"verification_scan\"}"};
        put(webhook_delivery_item_new(&f));
    }
    rx_reset(NDEAD); /* every first attempt fails: retries far ahead */
    struct webhook_dispatch_config c = {.allow_private = true,
                                        .timeout_s = 200,
                                        .backoff_s = 100000,
                                        .max_inflight = 16,
                                        .queue_max = 64,
                                        .claim = true};
    F.d = dead_d = webhook_dispatch_new(F.s, F.loop, &c, err, sizeof err);
    assert_non_null(F.d);
    assert_true(run_until(dead_all_tried));
    assert_int_equal(pending_count(), NDEAD + 0);
    add_delivery("w1", "b1", "d-new");
    assert_true(run_until(w1_final));
    assert_string_equal(status_of_first("w1", st, sizeof st), "delivered");
    /* the retries wait in the index under their due time */
    cJSON *d = deliveries("wd");
    const cJSON *it;
    int moved = 0;
    cJSON_ArrayForEach(it, d)
    {
        const cJSON *gsk = cJSON_GetObjectItem(it, "GSI1SK"),
                    *next = cJSON_GetObjectItem(it, "nextAttemptAt");
        if (cJSON_IsString(gsk) && cJSON_IsString(next) &&
            !strncmp(gsk->valuestring, next->valuestring, strlen(next->valuestring)))
            moved++;
    }
    cJSON_Delete(d);
    assert_int_equal(moved, NDEAD);
    dead_d = NULL;
}

static void test_claim_lapsed_taken_over(void **state)
{
    (void)state;
    char st[32];
    struct key pk, sk;
    char now[ISO_LEN + 1];

    add_webhook("w1", "b1", "/hook", WEBHOOK_EV_ALL, old_iso, NULL);
    add_delivery("w1", "b1", "d-held");
    /* another process holds it for 3 s more, then dies */
    cJSON *d = deliveries("w1");
    snprintf(now, sizeof now, "%s",
             cJSON_GetObjectItem(cJSON_GetArrayItem(d, 0), "createdAt")->valuestring);
    cJSON_Delete(d);
    cJSON *tok = cJSON_CreateString("0123456789abcdef0123456789abcdef");
    cJSON *until = cJSON_CreateNumber((double)(time_now_ms() + 3000));
    const struct store_action acts[2] = {
        {.kind = STORE_ACT_SET, .attr = "claimToken", .value = tok},
        {.kind = STORE_ACT_SET, .attr = "claimUntil", .value = until},
    };
    assert_int_equal(store_update(F.s, key_delivery_pk(&pk, "w1"),
                                  key_delivery_sk(&sk, now, "d-held"), acts, 2, NULL, NULL),
                     0);
    cJSON_Delete(tok);
    cJSON_Delete(until);
    F.d = claim_dispatch(F.s, 0, 0);
    /* several polls (10 ms each, scaled) while the claim holds: nothing */
    for (int i = 0; i < 50; i++) {
        usleep(10000);
        ev_run(F.loop, EVRUN_NOWAIT);
    }
    assert_int_equal(rx_count(), 0);
    assert_string_equal(status_of_first("w1", st, sizeof st), "pending");
    /* once it lapses, a poll takes it over */
    assert_true(run_until(w1_final));
    assert_string_equal(status_of_first("w1", st, sizeof st), "delivered");
    assert_int_equal(rx_count(), 1);
    d = deliveries("w1");
    assert_string_not_equal(
        cJSON_GetObjectItem(cJSON_GetArrayItem(d, 0), "claimToken")->valuestring,
        "0123456789abcdef0123456789abcdef");
    cJSON_Delete(d);
}

static bool one_error(void)
{
    struct webhook_dispatch_stats ws;
    webhook_dispatch_get_stats(F.d, &ws);
    return ws.errors >= 1;
}

/* A pending delivery that cannot be read as one (no payload, as a stray
 * or damaged item would be) is taken out of the pending index, once: it
 * is not taken again by every process at every lapse of the claim. */
static void test_claim_malformed_leaves_index(void **state)
{
    (void)state;
    struct key pk, sk;
    char now[ISO_LEN + 1];

    add_webhook("w1", "b1", "/hook", WEBHOOK_EV_ALL, old_iso, NULL);
    time_iso(time_now_ms(), now);
    cJSON *it = cJSON_CreateObject();
    cJSON_AddStringToObject(it, "PK", key_delivery_pk(&pk, "w1"));
    cJSON_AddStringToObject(it, "SK", key_delivery_sk(&sk, now, "d-bad"));
    cJSON_AddStringToObject(it, "GSI1PK", KEY_GSI1PK_DELIVERY_PENDING);
    cJSON_AddStringToObject(it, "GSI1SK", sk.s);
    cJSON_AddStringToObject(it, "id", "d-bad");
    cJSON_AddStringToObject(it, "claimToken", "");
    put(it); /* no webhookId, brandId, event or payload */
    assert_int_equal(pending_count(), 1);
    F.d = claim_dispatch(F.s, 0, 0);
    assert_true(run_until(one_error));
    assert_int_equal(pending_count(), 0);
    for (int i = 0; i < 30; i++) { /* more polls: it is not taken again */
        usleep(10000);
        ev_run(F.loop, EVRUN_NOWAIT);
    }
    struct webhook_dispatch_stats ws;
    webhook_dispatch_get_stats(F.d, &ws);
    assert_int_equal(ws.errors, 1);
    assert_int_equal(ws.claimed, 0);
    assert_int_equal(rx_count(), 0);
    cJSON *left = NULL;
    assert_int_equal(store_get(F.s, pk.s, sk.s, true, &left), 0); /* kept, out of the index */
    assert_null(cJSON_GetObjectItem(left, "GSI1PK"));
    cJSON_Delete(left);
}

/* A dispatcher stopped right after an attempt finished, before its step
 * wrote the outcome: the stop writes it, so the delivery is not sent
 * again by the next process (claim mode) or after a restart. */
static void test_stop_writes_finished_outcome(void **state)
{
    (void)state;
    char st[32];
    struct webhook_dispatch_stats ws = {0};

    add_webhook("w1", "b1", "/hook", WEBHOOK_EV_ALL, old_iso, NULL);
    add_delivery("w1", "b1", "d-last");
    F.d = claim_dispatch(F.s, 0, 0);
    for (int i = 0; i < 20000 && ws.attempts == 0; i++) {
        ev_run(F.loop, EVRUN_ONCE | EVRUN_NOWAIT);
        webhook_dispatch_get_stats(F.d, &ws);
        if (!ws.attempts)
            usleep(100);
    }
    assert_int_equal(ws.attempts, 1);
    assert_int_equal(ws.delivered, 0); /* its outcome is not written yet */
    webhook_dispatch_free(F.d);
    F.d = NULL;
    assert_string_equal(status_of_first("w1", st, sizeof st), "delivered");
    assert_int_equal(pending_count(), 0);
    assert_int_equal(rx_count(), 1);
}

static bool one_inflight(void)
{
    struct webhook_dispatch_stats ws;
    webhook_dispatch_get_stats(F.d, &ws);
    return ws.inflight == 1;
}

static bool one_lost(void)
{
    struct webhook_dispatch_stats ws;
    webhook_dispatch_get_stats(F.d, &ws);
    return ws.lost == 1;
}

static void test_claim_lost_drops_outcome(void **state)
{
    (void)state;
    struct key pk, sk;
    const char *stolen = "fedcba9876543210fedcba9876543210";

    add_webhook("w1", "b1", "/hook", WEBHOOK_EV_ALL, old_iso, NULL);
    add_delivery("w1", "b1", "d-lost");
    cJSON *d = deliveries("w1");
    char created[ISO_LEN + 1];
    snprintf(created, sizeof created, "%s",
             cJSON_GetObjectItem(cJSON_GetArrayItem(d, 0), "createdAt")->valuestring);
    cJSON_Delete(d);
    atomic_store(&rx.delay_ms, 300); /* the attempt takes a while */
    F.d = claim_dispatch(F.s, 0, 0);
    assert_true(run_until(one_inflight));
    /* meanwhile another process takes the delivery over (as after a
     * stall past claimUntil) */
    cJSON *tok = cJSON_CreateString(stolen);
    const struct store_action act = {.kind = STORE_ACT_SET, .attr = "claimToken", .value = tok};
    assert_int_equal(store_update(F.s, key_delivery_pk(&pk, "w1"),
                                  key_delivery_sk(&sk, created, "d-lost"), &act, 1, NULL, NULL),
                     0);
    cJSON_Delete(tok);
    /* the outcome write fails its condition: dropped, not an error */
    assert_true(run_until(one_lost));
    struct webhook_dispatch_stats ws;
    webhook_dispatch_get_stats(F.d, &ws);
    assert_int_equal(ws.errors, 0);
    assert_int_equal(ws.delivered, 0);
    assert_int_equal(ws.queued, 0);
    assert_int_equal(rx_count(), 1);
    /* the new holder's item is untouched */
    d = deliveries("w1");
    cJSON *d0 = cJSON_GetArrayItem(d, 0);
    assert_string_equal(cJSON_GetObjectItem(d0, "status")->valuestring, "pending");
    assert_int_equal(cJSON_GetObjectItem(d0, "attempts")->valueint, 0);
    assert_string_equal(cJSON_GetObjectItem(d0, "claimToken")->valuestring, stolen);
    cJSON_Delete(d);
    assert_true(webhook_num("b1", "w1", "deliveryCount") == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_scan_delivered_after_retries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_alert_events_and_filters, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resume_without_duplicates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_private_target_blocked_at_connect, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deleted_webhook_fails_fast, setup, teardown),
        cmocka_unit_test_setup_teardown(test_claim_two_dispatchers_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_claim_retry_releases, setup, teardown),
        cmocka_unit_test_setup_teardown(test_claim_lapsed_taken_over, setup, teardown),
        cmocka_unit_test_setup_teardown(test_claim_due_before_waiting_retries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stream_full_queue_spills_retries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_claim_lost_drops_outcome, setup, teardown),
        cmocka_unit_test_setup_teardown(test_claim_malformed_leaves_index, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_writes_finished_outcome, setup, teardown),
    };
    return cmocka_run_group_tests(tests, group_up, group_down);
}
