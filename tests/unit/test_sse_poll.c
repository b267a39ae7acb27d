/*
 * test_sse_poll.c - the GSI1-polling SSE hub (api/sse_poll.c) on a real
 * SQLite store in a temp directory, with a fake sink for connections:
 * alerts written through another store handle reach a subscriber within a
 * few poll periods (private ev loop), ids of the form
 * <writeTime>_<alertId> with the embedded hub's JSON, no backlog for new
 * subscribers, no duplicates from the overlap window (write times out of
 * order), Last-Event-ID resume (exactly the later alerts, never the named
 * one, malformed ids ignored), one shared poll per brand and none for a
 * brand without open subscribers, heartbeats, the per-brand limit, the
 * slow-client drop, and freeing the hub with open subscribers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ev.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/sse_poll.h"
#include "core/alert.h"
#include "core/brand.h"
#include "core/jsonw.h"
#include "core/timeutil.h"
#include "http/sse.h"
#include "store/store.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/timescale.h"

#include "sse_fake.h"

#define BRAND1 "b1"
#define BRAND2 "b2"

/* ---------- fixture ---------- */

struct fx {
    char dir[64];
    char path[128];
    struct store *s;      /* the hub's handle */
    struct store *writer; /* "another process" */
    struct ev_loop *loop;
    struct sse_poll *h;
};

static struct sse_poll *new_hub(struct fx *f, struct ev_loop *loop, size_t max_per_brand)
{
    struct sse_poll_config c = {.store = f->s,
                                .loop = loop,
                                .max_per_brand = max_per_brand,
                                .buffer_max = 1 << 20,
                                .sink = &fake_sink};
    char err[256];
    struct sse_poll *h = sse_poll_new(&c, err, sizeof err);
    assert_non_null(h);
    return h;
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    time_scale_set(0.05);
    snprintf(f->dir, sizeof f->dir, "/tmp/gp-ssepoll.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof f->path, "%s/db", f->dir);
    f->s = fake_store_open(f->path, 0);
    f->writer = fake_store_open(f->path, 0);
    f->loop = ev_loop_new(EVFLAG_AUTO);
    assert_non_null(f->loop);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    sse_poll_free(f->h);
    store_close(f->writer);
    store_close(f->s);
    ev_loop_destroy(f->loop);
    fake_db_remove(f->dir, f->path);
    free(f);
    return 0;
}

static struct sse_psub *sub_open(struct sse_poll *h, struct fake_conn *c, const char *brand,
                                 const char *last)
{
    struct sse_poll_params p = {.brand_id = brand, .last_id = last};
    struct sse_psub *s = NULL;
    fake_conn_init(c);
    assert_int_equal(sse_poll_reserve(h, &p, &s), 0);
    sse_poll_stream_open(s, fake_hc(c));
    return s;
}

static void sub_close(struct sse_psub *s, struct fake_conn *c)
{
    sse_poll_stream_closed(s, fake_hc(c));
    fake_conn_free(c);
}

/* Writes an alert with write time now + offset_ms through store s; its
 * event id "<wt>_<alertId>" goes to id_out.  Returns the item (owned). */
static cJSON *put_alert(struct store *s, const char *brand, int64_t offset_ms, char *id_out,
                        size_t idn)
{
    char ts[ISO_LEN + 1];
    time_iso(time_now_ms() + offset_ms, ts);
    struct alert_fields af = {.brand_id = brand,
                              .type = "burst_scan",
                              .severity = "high",
                              .product_id = "p1",
                              .details = "two\nlines",
                              .timestamp = ts,
                              .write_time = ts,
                              .source = "detector"};
    cJSON *it = alert_item_new(&af);
    assert_non_null(it);
    assert_int_equal(store_put(s, it, NULL), 0);
    usleep(3000); /* past the reader's 1 ms snapshot reuse (store.h) */
    if (id_out)
        snprintf(id_out, idn, "%s_%s",
                 cJSON_GetObjectItemCaseSensitive(it, "timestamp")->valuestring,
                 cJSON_GetObjectItemCaseSensitive(it, "alertId")->valuestring);
    return it;
}

/* Runs the loop until conn holds needle (true) or timeout_ms passes. */
static bool wait_for(struct ev_loop *loop, const struct fake_conn *c, const char *needle,
                     int timeout_ms)
{
    int64_t end = time_mono_ms() + timeout_ms;
    while (time_mono_ms() < end) {
        if (fake_count(c, needle) > 0)
            return true;
        ev_run(loop, EVRUN_ONCE);
    }
    return fake_count(c, needle) > 0;
}

/* Runs the loop for ms milliseconds. */
static void run_for(struct ev_loop *loop, int ms)
{
    int64_t end = time_mono_ms() + ms;
    while (time_mono_ms() < end)
        ev_run(loop, EVRUN_ONCE);
}

/* ---------- tests ---------- */

static void test_parse_id(void **state)
{
    (void)state;
    char wt[25], id[64];
    assert_true(sse_poll_parse_id("2026-06-20T15:00:00.000Z_abc123", wt, id, sizeof id));
    assert_string_equal(wt, "2026-06-20T15:00:00.000Z");
    assert_string_equal(id, "abc123");
    assert_true(sse_poll_parse_id(" 2026-06-20T15:00:00.000Z_x ", wt, id, sizeof id));
    assert_string_equal(id, "x");
    assert_false(sse_poll_parse_id(NULL, wt, id, sizeof id));
    assert_false(sse_poll_parse_id("42", wt, id, sizeof id));
    assert_false(sse_poll_parse_id("2026-06-20T15:00:00.000Z_", wt, id, sizeof id));
    assert_false(sse_poll_parse_id("2026-06-20T15:00:00.000Z_a#b", wt, id, sizeof id));
    assert_false(sse_poll_parse_id("2026-06-20T15:00:00.000Z_a b", wt, id, sizeof id));
    assert_false(sse_poll_parse_id("2026-13-20T15:00:00.000Z_a", wt, id, sizeof id));
    assert_false(sse_poll_parse_id("2026-06-20T15:00:00Z_a", wt, id, sizeof id));
    assert_false(sse_poll_parse_id("2026-06-20T15:00:00.000Z_abcdefgh", wt, id, 4));
}

/* Another handle's write reaches the subscriber, with the exact frame;
 * no backlog; other brands' alerts stay away. */
static void test_cross_handle(void **state)
{
    struct fx *f = *state;
    struct fake_conn c = {0};
    char old_id[96], eid[96], other[96];
    f->h = new_hub(f, f->loop, 0);
    cJSON *old = put_alert(f->writer, BRAND1, -500, old_id, sizeof old_id);
    struct sse_psub *s = sub_open(f->h, &c, BRAND1, NULL);
    assert_int_equal(sse_poll_clients(f->h), 1);

    cJSON *o2 = put_alert(f->writer, BRAND2, 0, other, sizeof other);
    cJSON *it = put_alert(f->writer, BRAND1, 0, eid, sizeof eid);
    char *want = fake_threat_frame(it, eid);
    int64_t t0 = time_mono_ms();
    assert_true(wait_for(f->loop, &c, want, 2000));
    /* 12.5 ms poll period: well within a few periods (generous for ASan) */
    assert_true(time_mono_ms() - t0 < 1000);
    run_for(f->loop, 60);
    assert_int_equal(fake_count(&c, want), 1);
    assert_int_equal(fake_count(&c, "event: threat"), 1);
    assert_int_equal(fake_count(&c, old_id), 0);
    assert_int_equal(fake_count(&c, other), 0);
    free(want);
    cJSON_Delete(it);
    cJSON_Delete(o2);
    cJSON_Delete(old);
    sub_close(s, &c);
    assert_int_equal(sse_poll_clients(f->h), 0);
}

/* Write times out of order within the overlap: each sent exactly once. */
static void test_overlap_no_dup(void **state)
{
    struct fx *f = *state;
    struct fake_conn c = {0};
    char ids[4][96];
    static const int64_t offs[4] = {600, 100, 400, -300};
    f->h = new_hub(f, f->loop, 0);
    struct sse_psub *s = sub_open(f->h, &c, BRAND1, NULL);
    for (int i = 0; i < 4; i++) {
        cJSON_Delete(put_alert(f->writer, BRAND1, offs[i], ids[i], sizeof ids[i]));
        assert_true(wait_for(f->loop, &c, ids[i], 2000));
        run_for(f->loop, 40); /* several more polls over the same window */
    }
    run_for(f->loop, 100);
    for (int i = 0; i < 4; i++)
        assert_int_equal(fake_count(&c, ids[i]), 1);
    assert_int_equal(fake_count(&c, "event: threat"), 4);
    sub_close(s, &c);
}

/* Last-Event-ID: exactly the later alerts, also on a fresh hub (a
 * restart or another process); malformed ids give no backlog. */
static void test_resume(void **state)
{
    struct fx *f = *state;
    struct fake_conn c1 = {0}, c2 = {0}, c3 = {0}, c4 = {0};
    char ids[5][96];
    static const int64_t offs[5] = {-60000, -59000, -58000, -200, 0};
    f->h = new_hub(f, NULL, 0);
    for (int i = 0; i < 5; i++)
        cJSON_Delete(put_alert(f->writer, BRAND1, offs[i], ids[i], sizeof ids[i]));

    /* a fresh brand: ids[0..4] exist, resume after ids[1] */
    struct sse_psub *s1 = sub_open(f->h, &c1, BRAND1, ids[1]);
    assert_int_equal(fake_count(&c1, "event: threat"), 3);
    assert_int_equal(fake_count(&c1, ids[0]), 0);
    assert_int_equal(fake_count(&c1, ids[1]), 0);
    for (int i = 2; i < 5; i++)
        assert_int_equal(fake_count(&c1, ids[i]), 1);
    assert_true(strstr(c1.out.data, ids[2]) < strstr(c1.out.data, ids[3]));
    assert_true(strstr(c1.out.data, ids[3]) < strstr(c1.out.data, ids[4]));
    assert_int_equal(sse_poll_run(f->h), 0);
    assert_int_equal(fake_count(&c1, "event: threat"), 3); /* polls add nothing */

    /* a new alert, then a resume on the live brand from ids[3] */
    char late[96];
    cJSON_Delete(put_alert(f->writer, BRAND1, 100, late, sizeof late));
    struct sse_psub *s2 = sub_open(f->h, &c2, BRAND1, ids[3]);
    assert_int_equal(fake_count(&c2, ids[4]), 1);
    assert_int_equal(fake_count(&c2, late), 0); /* not seen yet: the poll sends it */
    assert_int_equal(sse_poll_run(f->h), 0);
    assert_int_equal(fake_count(&c2, late), 1);
    assert_int_equal(fake_count(&c1, late), 1);
    assert_int_equal(fake_count(&c2, "event: threat"), 2);

    /* malformed and sequence-style ids: no backlog */
    struct sse_psub *s3 = sub_open(f->h, &c3, BRAND1, "17");
    struct sse_psub *s4 = sub_open(f->h, &c4, BRAND1, "2026-06-20T15:00:00.000Z");
    assert_int_equal(sse_poll_run(f->h), 0);
    assert_int_equal(fake_count(&c3, "event: threat"), 0);
    assert_int_equal(fake_count(&c4, "event: threat"), 0);
    assert_int_equal(fake_count(&c1, "event: threat"), 4);

    /* the newest id: nothing to replay */
    sub_close(s3, &c3);
    s3 = sub_open(f->h, &c3, BRAND1, late);
    assert_int_equal(fake_count(&c3, "event: threat"), 0);
    sub_close(s1, &c1);
    sub_close(s2, &c2);
    sub_close(s3, &c3);
    sub_close(s4, &c4);
}

/* One query per poll per brand, shared by its subscribers; none for a
 * brand whose streams are not open or are all closed. */
static void test_shared_poll(void **state)
{
    struct fx *f = *state;
    struct fake_conn a = {0}, b = {0}, c = {0};
    struct sse_psub *reserved = NULL;
    struct sse_poll_params p2 = {.brand_id = BRAND2};
    f->h = new_hub(f, NULL, 0);
    struct sse_psub *sa = sub_open(f->h, &a, BRAND1, NULL);
    struct sse_psub *sb = sub_open(f->h, &b, BRAND1, NULL);
    assert_int_equal(sse_poll_reserve(f->h, &p2, &reserved), 0); /* never opened */
    assert_int_equal(sse_poll_active_brands(f->h), 1);

    uint64_t q0 = sse_poll_queries(f->h);
    assert_int_equal(sse_poll_run(f->h), 0);
    assert_int_equal(sse_poll_queries(f->h) - q0, 1);
    char eid[96];
    cJSON_Delete(put_alert(f->writer, BRAND1, 0, eid, sizeof eid));
    assert_int_equal(sse_poll_run(f->h), 0);
    assert_int_equal(sse_poll_queries(f->h) - q0, 2);
    assert_int_equal(fake_count(&a, eid), 1);
    assert_int_equal(fake_count(&b, eid), 1);

    struct sse_psub *sc = sub_open(f->h, &c, BRAND2, NULL);
    assert_int_equal(sse_poll_active_brands(f->h), 2);
    q0 = sse_poll_queries(f->h);
    assert_int_equal(sse_poll_run(f->h), 0);
    assert_int_equal(sse_poll_queries(f->h) - q0, 2);

    sub_close(sa, &a);
    sub_close(sb, &b);
    sub_close(sc, &c);
    assert_int_equal(sse_poll_active_brands(f->h), 0);
    q0 = sse_poll_queries(f->h);
    assert_int_equal(sse_poll_run(f->h), 0);
    assert_int_equal(sse_poll_queries(f->h), q0);
    sse_poll_stream_closed(reserved, NULL);

    /* with the loop: closed streams leave no timer behind */
    sse_poll_free(f->h);
    f->h = new_hub(f, f->loop, 0);
    sa = sub_open(f->h, &a, BRAND1, NULL);
    run_for(f->loop, 100);
    uint64_t polled = sse_poll_queries(f->h);
    assert_true(polled >= 2); /* 12.5 ms period: about 8 */
    sub_close(sa, &a);
    ev_run(f->loop, EVRUN_NOWAIT);
    assert_int_equal(sse_poll_queries(f->h), polled);
}

static void test_heartbeat_scans(void **state)
{
    struct fx *f = *state;
    struct fake_conn a = {0};
    f->h = new_hub(f, NULL, 0);
    struct sse_poll_params p = {.brand_id = BRAND1, .scans = true};
    struct sse_psub *s = NULL;
    buf_init(&a.out, 1 << 20);
    assert_int_equal(sse_poll_reserve(f->h, &p, &s), 0);
    sse_poll_stream_open(s, fake_hc(&a));
    assert_int_equal(fake_count(&a, ": scans unavailable\n\n"), 1);
    int64_t now = time_now_ms();
    sse_poll_heartbeat(f->h, now);
    assert_int_equal(fake_count(&a, "event: heartbeat"), 0);
    sse_poll_heartbeat(f->h, now + 1000); /* 3 s * 0.05 = 150 ms */
    assert_int_equal(fake_count(&a, "event: heartbeat\ndata: {\"ts\":\""), 1);
    sse_poll_heartbeat(f->h, now + 1001);
    assert_int_equal(fake_count(&a, "event: heartbeat"), 1);
    sse_poll_heartbeat(f->h, now + 2000);
    assert_int_equal(fake_count(&a, "event: heartbeat"), 2);
    sse_poll_stream_closed(s, fake_hc(&a));
    buf_free(&a.out);

    /* with the loop: heartbeats arrive on their own */
    sse_poll_free(f->h);
    f->h = new_hub(f, f->loop, 0);
    s = sub_open(f->h, &a, BRAND1, NULL);
    assert_true(wait_for(f->loop, &a, "event: heartbeat", 2000));
    sub_close(s, &a);
}

static void test_limit(void **state)
{
    struct fx *f = *state;
    struct sse_psub *s[3] = {0}, *x = NULL;
    struct sse_poll_params p = {.brand_id = BRAND1}, q = {.brand_id = BRAND2}, all = {.all = true},
                           bad = {.brand_id = "a#b"};
    f->h = new_hub(f, NULL, 2);
    assert_int_equal(sse_poll_reserve(f->h, &p, &s[0]), 0);
    assert_int_equal(sse_poll_reserve(f->h, &p, &s[1]), 0);
    assert_int_equal(sse_poll_reserve(f->h, &p, &s[2]), ERR_TOOBIG);
    assert_null(s[2]);
    assert_int_equal(sse_poll_reserve(f->h, &q, &x), 0);
    assert_int_equal(sse_poll_reserve(f->h, &bad, &s[2]), ERR_INVALID);
    struct sse_psub *a[3] = {0};
    assert_int_equal(sse_poll_reserve(f->h, &all, &a[0]), 0);
    assert_int_equal(sse_poll_reserve(f->h, &all, &a[1]), 0);
    assert_int_equal(sse_poll_reserve(f->h, &all, &a[2]), ERR_TOOBIG);
    sse_poll_stream_closed(a[0], NULL);
    sse_poll_stream_closed(a[1], NULL);
    sse_poll_stream_closed(s[0], NULL);
    assert_int_equal(sse_poll_reserve(f->h, &p, &s[0]), 0);
    sse_poll_stream_closed(s[0], NULL);
    sse_poll_stream_closed(s[1], NULL);
    sse_poll_stream_closed(x, NULL);
}

/* A client that stops reading is dropped; the others keep receiving. */
static void test_slow_client(void **state)
{
    struct fx *f = *state;
    struct fake_conn slow = {0}, ok = {0};
    char eid[96];
    f->h = new_hub(f, NULL, 0);
    struct sse_psub *ss = sub_open(f->h, &slow, BRAND1, NULL);
    struct sse_psub *so = sub_open(f->h, &ok, BRAND1, NULL);
    slow.stuck = true;
    slow.cap = 2000;
    for (int i = 0; i < 10; i++)
        cJSON_Delete(put_alert(f->writer, BRAND1, i, eid, sizeof eid));
    assert_int_equal(sse_poll_run(f->h), 0);
    assert_true(slow.closed);
    assert_int_equal(sse_poll_dropped(f->h), 1);
    assert_int_equal(fake_count(&ok, "event: threat"), 10);
    assert_true(fake_count(&slow, "event: threat") < 10);
    cJSON_Delete(put_alert(f->writer, BRAND1, 20, eid, sizeof eid));
    assert_int_equal(sse_poll_run(f->h), 0);
    assert_int_equal(fake_count(&ok, eid), 1);
    assert_int_equal(fake_count(&slow, eid), 0);
    sub_close(ss, &slow);
    sub_close(so, &ok);
    assert_int_equal(sse_poll_clients(f->h), 0);
}

/* Adds brand id to the brand list (BRAND_INDEX) through store s. */
static void put_brand(struct store *s, const char *id)
{
    char ts[ISO_LEN + 1];
    time_iso(time_now_ms(), ts);
    struct brand_fields bf = {
        .id = id, .name = id, .domain = "x.example", .industry = "other", .created_at = ts};
    cJSON *it = brand_index_item_new(&bf);
    assert_non_null(it);
    assert_int_equal(store_put(s, it, NULL), 0);
    cJSON_Delete(it);
}

/* ?all=1: every listed brand is polled while all-brands subscribers are
 * open; a new brand joins at the next refresh; no replay across brands. */
static void test_all_brands(void **state)
{
    struct fx *f = *state;
    struct fake_conn all = {0}, one = {0}, res = {0};
    struct sse_poll_params pa = {.all = true}, pr = {.all = true, .last_id = NULL};
    struct sse_psub *sa = NULL, *sr = NULL;
    char e1[96], e2[96], e3[96], e3b[96];
    put_brand(f->writer, BRAND1);
    put_brand(f->writer, BRAND2);
    usleep(3000);
    f->h = new_hub(f, NULL, 0);
    struct sse_psub *s1 = sub_open(f->h, &one, BRAND1, NULL);
    assert_int_equal(sse_poll_active_brands(f->h), 1);
    buf_init(&all.out, 1 << 22);
    assert_int_equal(sse_poll_reserve(f->h, &pa, &sa), 0);
    sse_poll_stream_open(sa, fake_hc(&all));
    assert_int_equal(sse_poll_active_brands(f->h), 2);

    cJSON_Delete(put_alert(f->writer, BRAND1, 0, e1, sizeof e1));
    cJSON_Delete(put_alert(f->writer, BRAND2, 0, e2, sizeof e2));
    assert_int_equal(sse_poll_run(f->h), 0);
    assert_int_equal(fake_count(&all, e1), 1);
    assert_int_equal(fake_count(&all, e2), 1);
    assert_int_equal(fake_count(&one, e1), 1);
    assert_int_equal(fake_count(&one, e2), 0);

    /* a new brand: polled from the next refresh on */
    put_brand(f->writer, "b3");
    cJSON_Delete(put_alert(f->writer, "b3", 0, e3, sizeof e3));
    assert_int_equal(sse_poll_run(f->h), 0);
    assert_int_equal(fake_count(&all, e3), 0);
    sse_poll_refresh_brands(f->h);
    assert_int_equal(sse_poll_active_brands(f->h), 3);
    cJSON_Delete(put_alert(f->writer, "b3", 10, e3b, sizeof e3b));
    assert_int_equal(sse_poll_run(f->h), 0);
    assert_int_equal(fake_count(&all, e3b), 1);
    assert_int_equal(fake_count(&all, e3), 0); /* older than the brand's start: no backlog */

    /* a resumed all-brands stream: a gap comment, then live */
    pr.last_id = e1;
    buf_init(&res.out, 1 << 22);
    assert_int_equal(sse_poll_reserve(f->h, &pr, &sr), 0);
    sse_poll_stream_open(sr, fake_hc(&res));
    assert_int_equal(fake_count(&res, ": gap\n\n"), 1);
    assert_int_equal(fake_count(&res, "event: threat"), 0);
    sse_poll_stream_closed(sr, fake_hc(&res));
    buf_free(&res.out);

    /* the last all-brands stream leaves: only BRAND1 (own subscriber) stays */
    sse_poll_stream_closed(sa, fake_hc(&all));
    buf_free(&all.out);
    assert_int_equal(sse_poll_active_brands(f->h), 1);
    uint64_t q0 = sse_poll_queries(f->h);
    assert_int_equal(sse_poll_run(f->h), 0);
    assert_int_equal(sse_poll_queries(f->h) - q0, 1);
    sub_close(s1, &one);
    assert_int_equal(sse_poll_active_brands(f->h), 0);
}

/* More alerts than one query page: every one exactly once, in order. */
static void test_paging(void **state)
{
    struct fx *f = *state;
    struct fake_conn c = {0};
    enum { N = SSE_POLL_PAGE + 44 };
    char first[96];
    f->h = new_hub(f, NULL, 0);
    struct sse_psub *s = sub_open(f->h, &c, BRAND1, NULL);
    cJSON_Delete(put_alert(f->writer, BRAND1, 0, first, sizeof first));
    assert_int_equal(store_batch_begin(f->writer), 0);
    for (int i = 1; i < N; i++) {
        char ts[ISO_LEN + 1];
        time_iso(time_now_ms() + i, ts);
        struct alert_fields af = {
            .brand_id = BRAND1, .type = "burst_scan", .severity = "low", .timestamp = ts};
        cJSON *it = alert_item_new(&af);
        assert_int_equal(store_put(f->writer, it, NULL), 0);
        cJSON_Delete(it);
    }
    assert_int_equal(store_batch_commit(f->writer), 0);
    usleep(3000);
    uint64_t q0 = sse_poll_queries(f->h);
    assert_int_equal(sse_poll_run(f->h), 0);
    assert_int_equal(sse_poll_queries(f->h) - q0, 2);
    assert_int_equal(fake_count(&c, "event: threat"), N);
    assert_int_equal(fake_count(&c, first), 1);
    assert_int_equal(sse_poll_run(f->h), 0);
    assert_int_equal(fake_count(&c, "event: threat"), N);
    /* ids ascend: write order */
    const char *p = c.out.data, *prev = NULL;
    while ((p = strstr(p, "id: "))) {
        if (prev)
            assert_true(strncmp(prev, p + 4, ISO_LEN) <= 0);
        prev = p + 4;
        p += 4;
    }
    sub_close(s, &c);
}

/* Freeing the hub with open, dropped and reserved subscribers is clean
 * (ASan); the loop keeps no watcher of the freed hub. */
static void test_free_open(void **state)
{
    struct fx *f = *state;
    struct fake_conn a = {0}, b = {0};
    struct sse_psub *r = NULL;
    struct sse_poll_params p = {.brand_id = BRAND2};
    f->h = new_hub(f, f->loop, 0);
    sub_open(f->h, &a, BRAND1, NULL);
    sub_open(f->h, &b, BRAND1, NULL);
    assert_int_equal(sse_poll_reserve(f->h, &p, &r), 0);
    run_for(f->loop, 30);
    sse_poll_free(f->h);
    f->h = NULL;
    ev_run(f->loop, EVRUN_NOWAIT); /* no watcher left: returns at once */
    buf_free(&a.out);
    buf_free(&b.out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_id),
        cmocka_unit_test_setup_teardown(test_cross_handle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_overlap_no_dup, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resume, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shared_poll, setup, teardown),
        cmocka_unit_test_setup_teardown(test_heartbeat_scans, setup, teardown),
        cmocka_unit_test_setup_teardown(test_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slow_client, setup, teardown),
        cmocka_unit_test_setup_teardown(test_paging, setup, teardown),
        cmocka_unit_test_setup_teardown(test_all_brands, setup, teardown),
        cmocka_unit_test_setup_teardown(test_free_open, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
