/*
 * test_sse_hub.c - the SSE frame writer (http/sse.c), Last-Event-ID
 * parsing (api_stream.c) and the hub (api/sse_hub.c) against a real
 * SQLite store in a temp directory, with a fake sink in place of HTTP
 * connections: one-format fan-out per brand / all brands, no backlog for
 * new clients, replay after Last-Event-ID without gap or duplicate (also
 * with a new hub, as after a restart), the trimmed-stream gap comment,
 * updated alerts sent again, only durable records pushed, scan events
 * with the product's brand and no IP, slow clients dropped while others
 * keep receiving, the per-brand limit, and heartbeats.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ev.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api_stream.h"
#include "api/sse_hub.h"
#include "core/alert.h"
#include "core/jsonw.h"
#include "core/keys.h"
#include "core/timeutil.h"
#include "http/sse.h"
#include "store/store.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/timescale.h"

#include "sse_fake.h"

/* ---------- fixture ---------- */

struct fx {
    char dir[64];
    char path[128];
    struct store *s;
    struct sse_hub *h;
};

static struct sse_hub *new_hub(struct store *s, size_t max_per_brand)
{
    struct sse_hub_config c = {
        .store = s, .max_per_brand = max_per_brand, .buffer_max = 1 << 20, .sink = &fake_sink};
    char err[256];
    struct sse_hub *h = sse_hub_new(&c, err, sizeof err);
    assert_non_null(h);
    store_set_commit_cb(s, sse_hub_commit_cb, h);
    return h;
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/gp-ssehub.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof f->path, "%s/db", f->dir);
    f->s = fake_store_open(f->path, 0);
    f->h = new_hub(f->s, 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    sse_hub_free(f->h);
    store_close(f->s);
    fake_db_remove(f->dir, f->path);
    free(f);
    return 0;
}

/* Opens a subscriber on a fake connection. */
static struct sse_sub *sub_open(struct sse_hub *h, struct fake_conn *c, const char *brand, bool all,
                                bool scans, bool resume, uint64_t last)
{
    struct sse_sub_params p = {
        .brand_id = brand, .all = all, .scans = scans, .resume = resume, .last_id = last};
    struct sse_sub *s = NULL;
    fake_conn_init(c);
    assert_int_equal(sse_hub_reserve(h, &p, &s), 0);
    sse_hub_stream_open(s, fake_hc(c));
    return s;
}

static void sub_close(struct sse_sub *s, struct fake_conn *c)
{
    sse_hub_stream_closed(s, fake_hc(c));
    fake_conn_free(c);
}

/* Writes an alert for brand; returns its stream sequence. */
static uint64_t put_alert(struct store *s, const char *brand, const char *type, cJSON **keep)
{
    char ts[ISO_LEN + 1];
    uint64_t seq = 0;
    time_iso(time_now_ms(), ts);
    struct alert_fields af = {.brand_id = brand,
                              .type = type,
                              .severity = "high",
                              .product_id = "p1",
                              .details = "line one\nline two",
                              .timestamp = ts,
                              .source = "detector"};
    cJSON *it = alert_item_new(&af);
    assert_non_null(it);
    assert_int_equal(store_put(s, it, NULL), 0);
    assert_int_equal(store_stream_head(s, &seq), 0);
    if (keep)
        *keep = it;
    else
        cJSON_Delete(it);
    return seq;
}

/* The exact frame the hub must send for item at seq. */
static char *expected_frame(const cJSON *item, uint64_t seq)
{
    char id[24];
    snprintf(id, sizeof id, "%" PRIu64, seq);
    return fake_threat_frame(item, id);
}

static void pump_all(struct sse_hub *h)
{
    int rc;
    while ((rc = sse_hub_pump(h)) == 1)
        ;
    assert_int_equal(rc, 0);
}

/* The ids of threat frames, in order, as "a,b,c". */
static void threat_ids(const struct fake_conn *c, char *out, size_t n)
{
    const char *p = c->out.data ? c->out.data : "";
    size_t used = 0;
    out[0] = '\0';
    while ((p = strstr(p, "id: "))) {
        unsigned long long v = strtoull(p + 4, NULL, 10);
        used += (size_t)snprintf(out + used, n - used, "%s%llu", used ? "," : "", v);
        p += 4;
    }
}

/* ---------- frame writer ---------- */

static void test_frames(void **state)
{
    (void)state;
    struct buf b = BUF_INIT(4096);
    assert_int_equal(sse_event(&b, "threat", "42", "{\"a\":1}", 7), 0);
    assert_string_equal(buf_cstr(&b), "id: 42\nevent: threat\ndata: {\"a\":1}\n\n");
    buf_reset(&b);
    const char multi[] = "one\ntwo\r\nthree\rfour";
    assert_int_equal(sse_event(&b, "x", NULL, multi, sizeof multi - 1), 0);
    assert_string_equal(buf_cstr(&b),
                        "event: x\ndata: one\ndata: two\ndata: three\ndata: four\n\n");
    buf_reset(&b);
    assert_int_equal(sse_retry(&b, 3000), 0);
    assert_int_equal(sse_retry(&b, 0), 0);
    assert_int_equal(sse_comment(&b, "gap"), 0);
    assert_string_equal(buf_cstr(&b), "retry: 3000\n\nretry: 1\n\n: gap\n\n");
    /* a CR/LF in a field would forge another field */
    buf_reset(&b);
    assert_int_equal(sse_event(&b, "a\nid: 9", NULL, "x", 1), ERR_INVALID);
    assert_int_equal(sse_event(&b, "a", "1\r", "x", 1), ERR_INVALID);
    assert_int_equal(sse_event(&b, "", NULL, "x", 1), ERR_INVALID);
    assert_int_equal(sse_comment(&b, "a\nb"), ERR_INVALID);
    assert_int_equal(b.len, 0);
    buf_free(&b);

    /* the cap: nothing half-written */
    struct buf small = BUF_INIT(20);
    assert_int_equal(sse_event(&small, "ev", "1", "0123456789abcdef", 16), ERR_TOOBIG);
    assert_int_equal(small.len, 0);
    assert_int_equal(sse_event(&small, "ev", NULL, "ok", 2), 0);
    assert_string_equal(buf_cstr(&small), "event: ev\ndata: ok\n\n");
    buf_free(&small);
}

static void test_parse_id(void **state)
{
    (void)state;
    uint64_t v = 7;
    assert_true(api_stream_parse_id("0", &v));
    assert_int_equal(v, 0);
    assert_true(api_stream_parse_id(" 123 ", &v));
    assert_int_equal(v, 123);
    assert_true(api_stream_parse_id("18446744073709551615", &v));
    assert_true(v == UINT64_MAX);
    v = 5;
    assert_false(api_stream_parse_id("18446744073709551616", &v));
    assert_false(api_stream_parse_id("", &v));
    assert_false(api_stream_parse_id("12a", &v));
    assert_false(api_stream_parse_id("-1", &v));
    assert_false(api_stream_parse_id("0x10", &v));
    assert_false(api_stream_parse_id(NULL, &v));
    assert_int_equal(v, 5);
}

/* ---------- live fan-out ---------- */

static void test_fanout(void **state)
{
    struct fx *f = *state;
    struct fake_conn a1 = {0}, a2 = {0}, b1 = {0}, all = {0};
    struct sse_sub *sa1 = sub_open(f->h, &a1, "brand-a", false, false, false, 0);
    struct sse_sub *sa2 = sub_open(f->h, &a2, "brand-a", false, false, false, 0);
    struct sse_sub *sb1 = sub_open(f->h, &b1, "brand-b", false, false, false, 0);
    struct sse_sub *sall = sub_open(f->h, &all, NULL, true, false, false, 0);
    assert_int_equal(sse_hub_clients(f->h), 4);

    cJSON *item = NULL;
    uint64_t seq = put_alert(f->s, "brand-a", "burst_scan", &item);
    /* the commit callback only schedules: nothing sent before the pump */
    assert_int_equal(a1.out.len, 0);
    pump_all(f->h);
    assert_true(sse_hub_position(f->h) == seq);
    char *want = expected_frame(item, seq);
    assert_string_equal(buf_cstr(&a1.out), want);
    assert_string_equal(buf_cstr(&a2.out), want);
    assert_string_equal(buf_cstr(&all.out), want);
    assert_int_equal(b1.out.len, 0);
    /* the multi-line details stay one data line (JSON escapes the LF) */
    assert_non_null(strstr(want, "line one\\nline two"));
    assert_int_equal(fake_count(&a1, "\ndata: "), 1);
    free(want);
    cJSON_Delete(item);

    /* another brand's alert reaches only its subscribers and all */
    uint64_t seq2 = put_alert(f->s, "brand-b", "geographic_anomaly", NULL);
    pump_all(f->h);
    assert_int_equal(fake_count(&a1, "event: threat"), 1);
    assert_int_equal(fake_count(&b1, "event: threat"), 1);
    assert_int_equal(fake_count(&all, "event: threat"), 2);
    char ids[128];
    threat_ids(&all, ids, sizeof ids);
    char wantids[64];
    snprintf(wantids, sizeof wantids, "%" PRIu64 ",%" PRIu64, seq, seq2);
    assert_string_equal(ids, wantids);

    /* non-alert writes are not sent */
    cJSON *other = cJSON_Parse("{\"PK\":\"BRAND#brand-a\",\"SK\":\"STATS\",\"threatCount\":1}");
    assert_int_equal(store_put(f->s, other, NULL), 0);
    cJSON_Delete(other);
    pump_all(f->h);
    assert_int_equal(fake_count(&a1, "event:"), 1);

    sub_close(sa1, &a1);
    sub_close(sa2, &a2);
    sub_close(sb1, &b1);
    sub_close(sall, &all);
    assert_int_equal(sse_hub_clients(f->h), 0);
}

static void test_no_backlog_and_modify(void **state)
{
    struct fx *f = *state;
    struct fake_conn c = {0};
    cJSON *item = NULL;
    put_alert(f->s, "brand-a", "burst_scan", &item);
    pump_all(f->h);
    /* a new client without Last-Event-ID starts at the current position */
    struct sse_sub *s = sub_open(f->h, &c, "brand-a", false, false, false, 0);
    pump_all(f->h);
    assert_int_equal(c.out.len, 0);

    /* an updated (deduplicated) alert is sent again with its new id */
    const char *pk = cJSON_GetObjectItem(item, "PK")->valuestring;
    const char *sk = cJSON_GetObjectItem(item, "SK")->valuestring;
    struct store_action act = {.kind = STORE_ACT_ADD, .attr = "count", .delta = 1};
    cJSON *img = NULL;
    assert_int_equal(store_update(f->s, pk, sk, &act, 1, NULL, &img), 0);
    uint64_t seq = 0;
    assert_int_equal(store_stream_head(f->s, &seq), 0);
    pump_all(f->h);
    char *want = expected_frame(img, seq);
    assert_string_equal(buf_cstr(&c.out), want);
    assert_non_null(strstr(want, "\"count\":2"));
    free(want);
    cJSON_Delete(img);
    cJSON_Delete(item);
    sub_close(s, &c);
}

/* Records of an open batch are not pushed before it commits. */
static void test_only_durable(void **state)
{
    struct fx *f = *state;
    struct fake_conn c = {0};
    struct sse_sub *s = sub_open(f->h, &c, "brand-a", false, false, false, 0);
    assert_int_equal(store_batch_begin(f->s), 0);
    uint64_t before = sse_hub_position(f->h);
    char ts[ISO_LEN + 1];
    time_iso(time_now_ms(), ts);
    struct alert_fields af = {
        .brand_id = "brand-a", .type = "chain_gap", .severity = "medium", .timestamp = ts};
    cJSON *it = alert_item_new(&af);
    assert_int_equal(store_put(f->s, it, NULL), 0);
    pump_all(f->h);
    assert_int_equal(c.out.len, 0);
    assert_true(sse_hub_position(f->h) == before);
    assert_int_equal(store_batch_commit(f->s), 0);
    pump_all(f->h);
    assert_int_equal(fake_count(&c, "event: threat"), 1);
    cJSON_Delete(it);
    sub_close(s, &c);
}

/* ---------- replay ---------- */

static void test_replay(void **state)
{
    struct fx *f = *state;
    uint64_t a1 = put_alert(f->s, "brand-a", "t1", NULL);
    uint64_t b1 = put_alert(f->s, "brand-b", "t2", NULL);
    uint64_t a2 = put_alert(f->s, "brand-a", "t3", NULL);
    pump_all(f->h);
    (void)b1;

    /* resume after a1: exactly a2, then live a3, each once */
    struct fake_conn c = {0};
    struct sse_sub *s = sub_open(f->h, &c, "brand-a", false, false, true, a1);
    char ids[256], want[256];
    threat_ids(&c, ids, sizeof ids);
    snprintf(want, sizeof want, "%" PRIu64, a2);
    assert_string_equal(ids, want);
    uint64_t a3 = put_alert(f->s, "brand-a", "t4", NULL);
    pump_all(f->h);
    threat_ids(&c, ids, sizeof ids);
    snprintf(want, sizeof want, "%" PRIu64 ",%" PRIu64, a2, a3);
    assert_string_equal(ids, want);
    assert_int_equal(fake_count(&c, ": gap"), 0);
    sub_close(s, &c);

    /* resume from before everything: a1, a2, a3 (not b1) */
    struct fake_conn d = {0};
    s = sub_open(f->h, &d, "brand-a", false, false, true, a1 - 1);
    threat_ids(&d, ids, sizeof ids);
    snprintf(want, sizeof want, "%" PRIu64 ",%" PRIu64 ",%" PRIu64, a1, a2, a3);
    assert_string_equal(ids, want);
    sub_close(s, &d);

    /* a new hub (server restart) replays from the stream too */
    sse_hub_free(f->h);
    f->h = new_hub(f->s, 0);
    struct fake_conn e = {0};
    s = sub_open(f->h, &e, "brand-a", false, false, true, a2);
    uint64_t a4 = put_alert(f->s, "brand-a", "t5", NULL);
    pump_all(f->h);
    threat_ids(&e, ids, sizeof ids);
    snprintf(want, sizeof want, "%" PRIu64 ",%" PRIu64, a3, a4);
    assert_string_equal(ids, want);
    sub_close(s, &e);
}

/* A replay longer than one pump budget joins live without gap or
 * duplicate while new alerts keep arriving. */
static void test_long_replay(void **state)
{
    struct fx *f = *state;
    const int n = SSE_HUB_PUMP_BUDGET + 300;
    uint64_t first = 0;
    assert_int_equal(store_batch_begin(f->s), 0);
    for (int i = 0; i < n; i++) {
        uint64_t seq = put_alert(f->s, i % 2 ? "brand-a" : "brand-b", "t", NULL);
        (void)seq;
    }
    assert_int_equal(store_batch_commit(f->s), 0);
    assert_int_equal(store_stream_head(f->s, &first), 0);
    first -= (uint64_t)n; /* the seq before the first of them */
    pump_all(f->h);

    struct fake_conn c = {0};
    struct sse_sub *s = sub_open(f->h, &c, "brand-a", false, false, true, first);
    /* stream_open stops at its budget; live alerts arrive meanwhile */
    int extra = 0;
    int rc;
    do {
        put_alert(f->s, "brand-a", "live", NULL);
        extra++;
        rc = sse_hub_pump(f->h);
    } while (rc == 1 && extra < 50);
    pump_all(f->h);
    assert_int_equal(fake_count(&c, "event: threat"), n / 2 + extra);
    /* ids strictly increasing */
    const char *p = c.out.data;
    uint64_t last = 0;
    while ((p = strstr(p, "id: "))) {
        uint64_t v = strtoull(p + 4, NULL, 10);
        assert_true(v > last);
        last = v;
        p += 4;
    }
    sub_close(s, &c);
}

/* A replay pauses while the client's output is more than half full and
 * resumes once it drained. */
static void test_replay_backpressure(void **state)
{
    struct fx *f = *state;
    uint64_t a1 = put_alert(f->s, "brand-a", "t1", NULL);
    put_alert(f->s, "brand-a", "t2", NULL);
    pump_all(f->h);
    struct fake_conn c = {0};
    struct sse_sub_params p = {.brand_id = "brand-a", .resume = true, .last_id = a1 - 1};
    struct sse_sub *s = NULL;
    buf_init(&c.out, 1 << 20);
    c.pending = (1 << 20) / 2 + 1; /* hub buffer_max is 1 MiB */
    assert_int_equal(sse_hub_reserve(f->h, &p, &s), 0);
    sse_hub_stream_open(s, fake_hc(&c));
    assert_int_equal(sse_hub_pump(f->h), 0);
    assert_int_equal(c.out.len, 0);
    c.pending = 0;
    pump_all(f->h);
    assert_int_equal(fake_count(&c, "event: threat"), 2);
    sub_close(s, &c);
}

/* Resuming from an id the hub has not pumped yet sends nothing twice. */
static void test_resume_ahead(void **state)
{
    struct fx *f = *state;
    uint64_t a1 = put_alert(f->s, "brand-a", "t1", NULL); /* not pumped yet */
    struct fake_conn c = {0};
    struct sse_sub *s = sub_open(f->h, &c, "brand-a", false, false, true, a1);
    pump_all(f->h);
    assert_int_equal(fake_count(&c, "event: threat"), 0);
    uint64_t a2 = put_alert(f->s, "brand-a", "t2", NULL);
    pump_all(f->h);
    char ids[64], want[64];
    threat_ids(&c, ids, sizeof ids);
    snprintf(want, sizeof want, "%" PRIu64, a2);
    assert_string_equal(ids, want);
    sub_close(s, &c);

    /* an id the stream never issued is ignored: a fresh start */
    struct fake_conn d = {0};
    s = sub_open(f->h, &d, "brand-a", false, false, true, a2 + 1000);
    uint64_t a3 = put_alert(f->s, "brand-a", "t3", NULL);
    pump_all(f->h);
    threat_ids(&d, ids, sizeof ids);
    snprintf(want, sizeof want, "%" PRIu64, a3);
    assert_string_equal(ids, want);
    sub_close(s, &d);
}

/* Records trimmed by retention: ": gap" first, then what remains. */
static void test_gap(void **state)
{
    struct fx *f = *state;
    sse_hub_free(f->h);
    store_close(f->s);
    f->s = fake_store_open(f->path, 1000);
    f->h = new_hub(f->s, 0);
    uint64_t a1 = put_alert(f->s, "brand-a", "old", NULL);
    size_t trimmed = 0;
    assert_int_equal(store_stream_trim(f->s, time_now_ms() + 60000, &trimmed), 0);
    assert_true(trimmed >= 1);
    uint64_t a2 = put_alert(f->s, "brand-a", "new", NULL);
    pump_all(f->h);

    struct fake_conn c = {0};
    struct sse_sub *s = sub_open(f->h, &c, "brand-a", false, false, true, a1 - 1);
    assert_int_equal(strncmp(buf_cstr(&c.out), ": gap\n\n", 7), 0);
    char ids[64], want[64];
    threat_ids(&c, ids, sizeof ids);
    snprintf(want, sizeof want, "%" PRIu64, a2);
    assert_string_equal(ids, want);
    sub_close(s, &c);

    /* everything trimmed */
    assert_int_equal(store_stream_trim(f->s, time_now_ms() + 60000, &trimmed), 0);
    struct fake_conn d = {0};
    s = sub_open(f->h, &d, "brand-a", false, false, true, a1 - 1);
    assert_string_equal(buf_cstr(&d.out), ": gap\n\n");
    sub_close(s, &d);
}

/* ---------- scans ---------- */

static void test_scans(void **state)
{
    struct fx *f = *state;
    cJSON *prod = cJSON_Parse("{\"PK\":\"PRODUCT#p9\",\"SK\":\"META\",\"productId\":\"p9\","
                              "\"brandId\":\"brand-a\"}");
    assert_int_equal(store_put(f->s, prod, NULL), 0);
    cJSON_Delete(prod);
    struct fake_conn with = {0}, without = {0}, all = {0}, other = {0};
    struct sse_sub *sw = sub_open(f->h, &with, "brand-a", false, true, false, 0);
    struct sse_sub *so = sub_open(f->h, &without, "brand-a", false, false, false, 0);
    struct sse_sub *sa = sub_open(f->h, &all, NULL, true, true, false, 0);
    struct sse_sub *sx = sub_open(f->h, &other, "brand-b", false, true, false, 0);

    for (int i = 0; i < 2; i++) {
        char js[512];
        snprintf(js, sizeof js,
                 "{\"PK\":\"PRODUCT#p9\",\"SK\":\"SCAN#2026-06-20T15:00:0%d.000Z#abcd000%d\","
                 "\"productId\":\"p9\",\"timestamp\":\"2026-06-20T15:00:0%d.000Z\","
                 "\"ip\":\"203.0.113.7\",\"country\":\"FR\",\"city\":\"Paris\","
                 "\"userAgent\":\"ua\",\"result\":\"authentic\"}",
                 i, i, i);
        cJSON *scan = cJSON_Parse(js);
        assert_int_equal(store_put(f->s, scan, NULL), 0);
        cJSON_Delete(scan);
    }
    pump_all(f->h);
    assert_int_equal(fake_count(&with, "event: scan"), 2);
    assert_non_null(strstr(buf_cstr(&with.out),
                           "event: scan\ndata: {\"productId\":\"p9\",\"country\":\"FR\",\"result\":"
                           "\"authentic\",\"timestamp\":\"2026-06-20T15:00:00.000Z\",\"brandId\":"
                           "\"brand-a\"}\n\n"));
    assert_null(strstr(buf_cstr(&with.out), "203.0.113.7"));
    assert_null(strstr(buf_cstr(&with.out), "id: "));
    assert_int_equal(without.out.len, 0);
    assert_int_equal(other.out.len, 0);
    assert_int_equal(fake_count(&all, "event: scan"), 2);
    sub_close(sw, &with);
    sub_close(so, &without);
    sub_close(sa, &all);
    sub_close(sx, &other);
}

/* ---------- slow clients, limits, heartbeats ---------- */

static void test_slow_client_dropped(void **state)
{
    struct fx *f = *state;
    struct fake_conn slow = {0}, fast = {0};
    struct sse_sub *ss = sub_open(f->h, &slow, "brand-a", false, false, false, 0);
    struct sse_sub *sf = sub_open(f->h, &fast, "brand-a", false, false, false, 0);
    slow.stuck = true;
    slow.cap = 2000; /* a few frames */
    for (int i = 0; i < 10; i++)
        put_alert(f->s, "brand-a", "burst_scan", NULL);
    pump_all(f->h);
    assert_true(slow.closed);
    assert_int_equal(sse_hub_dropped(f->h), 1);
    assert_true(slow.out.len <= 2000);
    assert_int_equal(fake_count(&fast, "event: threat"), 10);
    /* the dropped one gets nothing more; the other keeps receiving */
    int before = slow.sends;
    put_alert(f->s, "brand-a", "burst_scan", NULL);
    pump_all(f->h);
    sse_hub_heartbeat(f->h, time_now_ms() + 3600000);
    assert_int_equal(slow.sends, before);
    assert_int_equal(fake_count(&fast, "event: threat"), 11);
    /* the server reports the close later */
    assert_int_equal(sse_hub_clients(f->h), 2);
    sub_close(ss, &slow);
    assert_int_equal(sse_hub_clients(f->h), 1);
    sub_close(sf, &fast);
}

static void test_limit(void **state)
{
    struct fx *f = *state;
    sse_hub_free(f->h);
    f->h = new_hub(f->s, 2);
    struct sse_sub_params pa = {.brand_id = "brand-a"}, pall = {.all = true};
    struct sse_sub_params bad = {.brand_id = "x#y"};
    struct sse_sub *s1, *s2, *s3, *s4, *s5, *s6;
    assert_int_equal(sse_hub_reserve(f->h, &pa, &s1), 0);
    assert_int_equal(sse_hub_reserve(f->h, &pa, &s2), 0);
    assert_int_equal(sse_hub_reserve(f->h, &pa, &s3), ERR_TOOBIG);
    assert_null(s3);
    assert_int_equal(sse_hub_reserve(f->h, &bad, &s3), ERR_INVALID);
    /* other brands and all-brands have their own counts */
    struct sse_sub_params pb = {.brand_id = "brand-b"};
    assert_int_equal(sse_hub_reserve(f->h, &pb, &s4), 0);
    assert_int_equal(sse_hub_reserve(f->h, &pall, &s5), 0);
    assert_int_equal(sse_hub_reserve(f->h, &pall, &s6), 0);
    assert_int_equal(sse_hub_reserve(f->h, &pall, &s3), ERR_TOOBIG);
    /* a reserved stream that never opened still frees its slot */
    sse_hub_stream_closed(s1, NULL);
    assert_int_equal(sse_hub_reserve(f->h, &pa, &s1), 0);
    assert_int_equal(sse_hub_clients(f->h), 0);
    sse_hub_stream_closed(s1, NULL);
    sse_hub_stream_closed(s2, NULL);
    sse_hub_stream_closed(s4, NULL);
    sse_hub_stream_closed(s5, NULL);
    sse_hub_stream_closed(s6, NULL);
}

static void test_heartbeat(void **state)
{
    struct fx *f = *state;
    time_scale_set(1.0); /* a 3 s period whatever GENUPROOF_TIME_SCALE says */
    sse_hub_free(f->h);
    f->h = new_hub(f->s, 0);
    struct fake_conn a = {0}, b = {0}, all = {0};
    struct sse_sub *sa = sub_open(f->h, &a, "brand-a", false, false, false, 0);
    struct sse_sub *sb = sub_open(f->h, &b, "brand-b", false, false, false, 0);
    struct sse_sub *sall = sub_open(f->h, &all, NULL, true, false, false, 0);
    /* not due yet: nothing */
    sse_hub_heartbeat(f->h, time_now_ms());
    assert_int_equal(a.out.len + b.out.len + all.out.len, 0);
    /* one period (3 s, unscaled here) later: everyone, once */
    int64_t t = time_now_ms() + 3100;
    char iso[ISO_LEN + 1], want[128];
    time_iso(t, iso);
    snprintf(want, sizeof want, "event: heartbeat\ndata: {\"ts\":\"%s\"}\n\n", iso);
    sse_hub_heartbeat(f->h, t);
    assert_string_equal(buf_cstr(&a.out), want);
    assert_string_equal(buf_cstr(&b.out), want);
    assert_string_equal(buf_cstr(&all.out), want);
    sse_hub_heartbeat(f->h, t + 1000);
    assert_int_equal(fake_count(&a, "heartbeat"), 1);
    /* the next period */
    sse_hub_heartbeat(f->h, t + 3000);
    assert_int_equal(fake_count(&a, "event: heartbeat"), 2);
    assert_int_equal(fake_count(&all, "event: heartbeat"), 2);
    time_scale_set(0);
    sub_close(sa, &a);
    sub_close(sb, &b);
    sub_close(sall, &all);
}

/* Tail mode: the writer is another store handle (another worker process
 * on the same file), so no commit callback reaches the hub; its timer
 * notices the new stream head and the alert goes out. */
static void stop_loop(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)w;
    (void)revents;
    ev_break(loop, EVBREAK_ALL);
}

static void test_tail(void **state)
{
    struct fx *f = *state;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    struct sse_hub_config c = {
        .store = f->s, .loop = loop, .buffer_max = 1 << 20, .sink = &fake_sink, .tail_s = 0.02};
    char err[256];
    time_scale_set(1.0);
    struct sse_hub *h = sse_hub_new(&c, err, sizeof err);
    assert_non_null(h);
    struct store *writer = fake_store_open(f->path, 0);
    struct fake_conn a = {0};
    struct sse_sub *sa = sub_open(h, &a, "brand-a", false, false, false, 0);
    uint64_t seq = put_alert(writer, "brand-a", "burst_scan", NULL);
    ev_timer stop;
    ev_timer_init(&stop, stop_loop, 0.5, 0.);
    ev_timer_start(loop, &stop);
    ev_run(loop, 0);
    char ids[64];
    threat_ids(&a, ids, sizeof ids);
    char want[32];
    snprintf(want, sizeof want, "%llu", (unsigned long long)seq);
    assert_string_equal(ids, want);
    assert_int_equal(fake_count(&a, "event: threat"), 1);
    sub_close(sa, &a);
    sse_hub_free(h);
    store_close(writer);
    ev_timer_stop(loop, &stop);
    ev_loop_destroy(loop);
    time_scale_set(0);
}

static void test_retry_hint(void **state)
{
    (void)state;
    time_scale_set(1.0);
    assert_int_equal(sse_hub_retry_ms(), 3000);
    time_scale_set(0.05);
    assert_int_equal(sse_hub_retry_ms(), 150);
    time_scale_set(5.0);
    assert_int_equal(sse_hub_retry_ms(), 3000);
    time_scale_set(0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frames),
        cmocka_unit_test(test_parse_id),
        cmocka_unit_test(test_retry_hint),
        cmocka_unit_test_setup_teardown(test_fanout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_backlog_and_modify, setup, teardown),
        cmocka_unit_test_setup_teardown(test_only_durable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replay, setup, teardown),
        cmocka_unit_test_setup_teardown(test_long_replay, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replay_backpressure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resume_ahead, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scans, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slow_client_dropped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_heartbeat, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tail, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
