/*
 * test_tui_model.c - tui/model.c: the 10,000-row ring keeps the newest,
 * an alert seen again replaces its row in place, reconciles backfill the
 * missed rows (↺) and insert the gap row, follow / freeze / +N, the
 * filter (case, '!' inversion) and severity floor, acks and the unseen
 * critical count, poll slots (denied, unsupported, errors keep data),
 * and the one-line details and location of a row.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "core/timeutil.h"
#include "tui/model.h"
#include "util/err.h"

#define T0 1780000000000LL /* 2026-05-28T20:26:40Z */

static const char *ids[] = {"brand-a", "brand-b"};
static const char *names[] = {"Acme", NULL};

/* An alert object; details_json is raw JSON (a quoted string or an object). */
static int alert(char *out, size_t n, const char *id, const char *sev, const char *type, int64_t ts,
                 const char *details_json)
{
    char iso[ISO_LEN + 1];
    time_iso(ts, iso);
    return snprintf(
        out, n,
        "{\"alertId\":\"%s\",\"brandId\":\"brand-a\",\"type\":\"%s\",\"severity\":\"%s\","
        "\"productId\":\"p0123456789abcdef\",\"details\":%s,\"timestamp\":\"%s\","
        "\"resolved\":false,\"source\":\"detector\",\"country\":\"FR\",\"city\":\"Paris\","
        "\"aiAnalysis\":null,\"anomalyFlags\":[],\"count\":1,\"lastSeen\":\"%s\"}",
        id, type, sev, details_json ? details_json : "\"d\"", iso, iso);
}

static int push(struct model *m, const char *id, const char *sev, int64_t ts)
{
    char buf[1024];
    int n = alert(buf, sizeof buf, id, sev, "burst_scan", ts, NULL);
    return model_threat(m, 0, buf, (size_t)n, ts);
}

static long index_of(const struct model *m, const char *id)
{
    for (size_t i = 0; i < model_threat_count(m); i++)
        if (!strcmp(model_threat_at(m, i)->alert_id, id))
            return (long)i;
    return -1;
}

static const char *selected_id(const struct model *m)
{
    const struct threat_row *r = model_selected(m);
    return r ? r->alert_id : "";
}

static void test_ring_keeps_newest(void **state)
{
    (void)state;
    struct model *m = model_new(ids, names, 2);
    char id[32];
    for (int i = 0; i < MODEL_RING + 50; i++) {
        snprintf(id, sizeof id, "a%05d", i);
        assert_int_equal(push(m, id, "low", T0 + i * 1000), 1);
    }
    assert_int_equal(model_threat_count(m), MODEL_RING);
    assert_string_equal(model_threat_at(m, 0)->alert_id, "a10049");
    assert_string_equal(model_threat_at(m, MODEL_RING - 1)->alert_id, "a00050");
    assert_null(model_threat_at(m, MODEL_RING));
    assert_int_equal(index_of(m, "a00049"), -1);
    model_free(m); /* ASan: every raw freed exactly once */
}

static void test_merge_in_place(void **state)
{
    (void)state;
    struct model *m = model_new(ids, names, 2);
    assert_int_equal(push(m, "A", "low", T0), 1);
    assert_int_equal(push(m, "B", "low", T0 + 1000), 1);
    assert_int_equal(push(m, "C", "low", T0 + 2000), 1);
    /* B again, now high: same place, new severity, no new row. */
    assert_int_equal(push(m, "B", "high", T0 + 1000), 0);
    assert_int_equal(model_threat_count(m), 3);
    assert_int_equal(index_of(m, "B"), 1);
    assert_int_equal(model_threat_at(m, 1)->sev, SEV_HIGH);
    assert_true(strstr(model_threat_at(m, 1)->raw, "\"high\"") != NULL);
    /* Not an alert: ignored. */
    assert_int_equal(model_threat(m, 0, "{\"x\":1}", 7, T0), ERR_INVALID);
    assert_int_equal(model_threat(m, 0, "[", 1, T0), ERR_INVALID);
    assert_int_equal(model_threat(m, 5, "{}", 2, T0), ERR_INVALID);
    assert_int_equal(model_threat_count(m), 3);
    model_free(m);
}

static void test_reconcile_backfill_and_gap(void **state)
{
    (void)state;
    struct model *m = model_new(ids, names, 2);
    char a1[1024], a2[1024], body[4096];
    /* First reconcile = history: rows added, not marked as backfilled. */
    alert(a1, sizeof a1, "H1", "medium", "burst_scan", T0 - 5000, NULL);
    snprintf(body, sizeof body, "{\"threats\":[%s],\"count\":1}", a1);
    assert_int_equal(model_reconcile(m, 0, body, strlen(body), T0), 0);
    assert_int_equal(model_threat_count(m), 1);
    assert_false(model_threat_at(m, 0)->flags & (ROW_BACKFILL | ROW_UNSEEN));
    /* The stream delivers S1; the next reconcile finds M1 (missed) and S1. */
    assert_int_equal(push(m, "S1", "high", T0 + 2000), 1);
    alert(a1, sizeof a1, "S1", "high", "burst_scan", T0 + 2000, NULL);
    alert(a2, sizeof a2, "M1", "critical", "hash_tampering", T0 + 1000, NULL);
    snprintf(body, sizeof body, "{\"threats\":[%s,%s],\"count\":2}", a1, a2);
    assert_int_equal(model_reconcile(m, 0, body, strlen(body), T0 + 3000), 1);
    assert_int_equal(model_threat_count(m), 3);
    long mi = index_of(m, "M1");
    assert_int_equal(mi, 1); /* slotted by time: below S1, above H1 */
    assert_true(model_threat_at(m, 1)->flags & ROW_BACKFILL);
    assert_true(model_threat_at(m, 1)->flags & ROW_UNSEEN);
    assert_false(model_threat_at(m, 0)->flags & ROW_BACKFILL);
    /* Everything returned is newer than all seen: gap row below them. */
    alert(a1, sizeof a1, "N2", "low", "burst_scan", T0 + 60000, NULL);
    alert(a2, sizeof a2, "N1", "low", "burst_scan", T0 + 50000, NULL);
    snprintf(body, sizeof body, "{\"threats\":[%s,%s],\"count\":2}", a1, a2);
    assert_int_equal(model_reconcile(m, 0, body, strlen(body), T0 + 70000), 2);
    assert_int_equal(model_threat_count(m), 6);
    assert_string_equal(model_threat_at(m, 0)->alert_id, "N2");
    assert_string_equal(model_threat_at(m, 1)->alert_id, "N1");
    const struct threat_row *g = model_threat_at(m, 2);
    assert_true(g->flags & ROW_GAP);
    char iso[ISO_LEN + 1], want[64];
    time_iso(T0 + 50000, iso);
    snprintf(want, sizeof want, "possible gap before %.8sZ", iso + 11);
    assert_string_equal(g->details, want);
    assert_string_equal(model_threat_at(m, 3)->alert_id, "S1");
    /* Same reply again: nothing new, no second gap. */
    assert_int_equal(model_reconcile(m, 0, body, strlen(body), T0 + 80000), 0);
    assert_int_equal(model_threat_count(m), 6);
    assert_int_equal(model_reconcile(m, 0, "{\"nope\":1}", 10, T0), ERR_INVALID);
    model_free(m);
}

static void test_follow_and_pending(void **state)
{
    (void)state;
    struct model *m = model_new(ids, names, 2);
    char id[16];
    for (int i = 0; i < 5; i++) {
        snprintf(id, sizeof id, "r%d", i);
        push(m, id, "low", T0 + i);
    }
    const struct feed_state *f = model_feed_c(m);
    assert_true(f->follow);
    assert_int_equal(f->sel, 0);
    assert_string_equal(selected_id(m), "r4");
    push(m, "r5", "low", T0 + 5);
    assert_string_equal(selected_id(m), "r5"); /* following: the newest */
    assert_int_equal(f->pending, 0);
    model_feed_move(m, 2);
    assert_false(f->follow);
    assert_string_equal(selected_id(m), "r3");
    push(m, "r6", "low", T0 + 6);
    push(m, "r7", "low", T0 + 7);
    assert_string_equal(selected_id(m), "r3"); /* stays on the same alert */
    assert_int_equal(f->sel, 4);
    assert_int_equal(f->pending, 2);
    model_feed_end(m);
    assert_string_equal(selected_id(m), "r0");
    model_feed_move(m, -100);
    assert_int_equal(f->sel, 0);
    assert_false(f->follow);
    model_feed_home(m);
    assert_true(f->follow);
    assert_int_equal(f->pending, 0);
    assert_string_equal(selected_id(m), "r7");
    model_free(m);
}

static void test_freeze(void **state)
{
    (void)state;
    struct model *m = model_new(ids, names, 2);
    size_t idx[32];
    push(m, "a", "low", T0);
    push(m, "b", "low", T0 + 1);
    model_set_frozen(m, true);
    assert_true(model_feed_c(m)->frozen);
    push(m, "c", "low", T0 + 2);
    push(m, "d", "low", T0 + 3);
    push(m, "e", "low", T0 + 4);
    assert_int_equal(model_visible(m, idx, 32), 2);
    assert_string_equal(model_threat_at(m, idx[0])->alert_id, "b");
    assert_int_equal(model_feed_c(m)->pending, 3);
    assert_string_equal(selected_id(m), "b");
    model_set_frozen(m, false);
    assert_int_equal(model_visible(m, idx, 32), 5);
    assert_string_equal(model_threat_at(m, idx[0])->alert_id, "e");
    assert_int_equal(model_feed_c(m)->pending, 0);
    assert_string_equal(selected_id(m), "e");
    model_free(m);
}

static void test_filter_floor(void **state)
{
    (void)state;
    struct model *m = model_new(ids, names, 2);
    char buf[1024];
    size_t idx[8];
    int n = alert(buf, sizeof buf, "G", "high", "geographic_anomaly", T0,
                  "{\"countries\":[\"US\",\"CN\",\"DE\"],\"countryCount\":3,\"windowHours\":24}");
    model_threat(m, 0, buf, (size_t)n, T0);
    push(m, "L", "low", T0 + 1);
    push(m, "M", "medium", T0 + 2);
    model_set_filter(m, "GEO ANOM");
    assert_int_equal(model_visible(m, idx, 8), 1);
    assert_string_equal(model_threat_at(m, idx[0])->alert_id, "G");
    model_set_filter(m, "cn, de");
    assert_int_equal(model_visible(m, idx, 8), 1);
    model_set_filter(m, "!geo");
    assert_true(model_feed_c(m)->invert);
    assert_string_equal(model_feed_c(m)->filter, "geo");
    assert_int_equal(model_visible(m, idx, 8), 2);
    model_set_filter(m, "");
    assert_int_equal(model_visible(m, NULL, 0), 3);
    model_set_floor(m, SEV_MEDIUM);
    assert_int_equal(model_visible(m, idx, 8), 2);
    model_set_floor(m, SEV_HIGH);
    assert_int_equal(model_visible(m, idx, 8), 1);
    model_set_floor(m, SEV_LOW);
    model_feed(m)->brand_only = 1;
    assert_int_equal(model_visible(m, NULL, 0), 0);
    model_free(m);
}

static void test_ack_and_unseen(void **state)
{
    (void)state;
    struct model *m = model_new(ids, names, 2);
    push(m, "c1", "critical", T0);
    push(m, "c2", "critical", T0 + 1);
    push(m, "h1", "high", T0 + 2);
    assert_int_equal(model_unseen_critical(m), 2);
    model_feed_move(m, 1); /* c2 */
    model_ack_selected(m);
    assert_int_equal(model_unseen_critical(m), 1);
    assert_true(model_threat_at(m, 1)->flags & ROW_ACKED);
    assert_false(model_threat_at(m, 1)->flags & ROW_UNSEEN);
    model_set_floor(m, SEV_HIGH);
    model_ack_visible(m);
    assert_int_equal(model_unseen_critical(m), 0);
    /* An update of an acked alert makes it unseen again. */
    push(m, "c1", "critical", T0 + 10);
    assert_int_equal(model_unseen_critical(m), 1);
    model_free(m);
}

static void test_reply_slots(void **state)
{
    (void)state;
    struct model *m = model_new(ids, names, 2);
    const char *ok = "{\"entries\":[],\"stats\":{}}";
    model_reply(m, POLL_OPSLOG, 0, 403, "{\"error\":\"Forbidden\"}", 21, 5, T0);
    assert_int_equal(model_data(m, POLL_OPSLOG, 0)->state, DATA_DENIED);
    model_reply(m, POLL_OPSLOG, 0, 200, ok, strlen(ok), 5, T0);
    assert_int_equal(model_data(m, POLL_OPSLOG, 7)->state, DATA_OK); /* brand-less */
    assert_non_null(model_data(m, POLL_OPSLOG, 0)->json);
    model_reply(m, POLL_OPSLOG, 0, 500, "x", 1, 5, T0 + 1);
    assert_int_equal(model_data(m, POLL_OPSLOG, 0)->state, DATA_ERROR);
    assert_non_null(model_data(m, POLL_OPSLOG, 0)->json); /* kept */
    assert_int_equal(model_data(m, POLL_OPSLOG, 0)->status, 500);
    model_reply(m, POLL_PARTITIONS, 0, 404, "", 0, 1, T0);
    assert_int_equal(model_data(m, POLL_PARTITIONS, 0)->state, DATA_UNSUPPORTED);
    model_reply(m, POLL_STATS, 1, 404, "{}", 2, 1, T0);
    assert_int_equal(model_data(m, POLL_STATS, 1)->state, DATA_ERROR);
    assert_int_equal(model_data(m, POLL_STATS, 0)->state, DATA_NONE);
    model_reply(m, POLL_AUDIT, 0, 401, "", 0, 1, T0);
    assert_int_equal(model_data(m, POLL_AUDIT, 0)->state, DATA_DENIED);
    model_reply(m, POLL_HEALTH, 0, 200, "{\"status\":\"operational\"}", 24, 12.5, T0);
    model_reply(m, POLL_HEALTH, 0, 200, "not json", 8, 20, T0);
    assert_int_equal(model_data(m, POLL_HEALTH, 0)->state, DATA_ERROR);
    double lat[8];
    assert_int_equal(model_health_latencies(m, lat, 8), 2);
    assert_true(lat[0] == 12.5 && lat[1] == 20);
    /* POLL_THREATS goes through the reconcile. */
    char a[1024], body[1200];
    alert(a, sizeof a, "T1", "low", "burst_scan", T0, NULL);
    snprintf(body, sizeof body, "{\"threats\":[%s]}", a);
    model_reply(m, POLL_THREATS, 0, 200, body, strlen(body), 3, T0);
    assert_int_equal(model_threat_count(m), 1);
    model_probe(m, "GET /api/ready", 200, 3, T0);
    model_probe(m, "GET /api/ready", 503, 4, T0 + 1);
    assert_int_equal(model_probe_count(m), 1);
    assert_int_equal(model_probe_at(m, 0)->status, 503);
    model_free(m);
}

static void test_row_text(void **state)
{
    (void)state;
    struct model *m = model_new(ids, names, 2);
    char buf[1024];
    int n = alert(buf, sizeof buf, "G", "HIGH", "geographic_anomaly", T0,
                  "{\"countries\":[\"US\",\"CN\",\"DE\"],\"countryCount\":3,\"windowHours\":24}");
    model_threat(m, 0, buf, (size_t)n, T0);
    const struct threat_row *r = model_threat_at(m, 0);
    assert_string_equal(r->details, "countries: US, CN, DE (3 in 24h)");
    assert_string_equal(r->location, "Paris, FR");
    assert_string_equal(r->product, "p0123456789abcdef");
    assert_int_equal(r->sev, SEV_HIGH);
    assert_int_equal(r->ts_ms, T0);
    n = alert(buf, sizeof buf, "B", "medium", "burst_scan", T0,
              "{\"scansInHour\":12,\"windowMinutes\":60}");
    model_threat(m, 0, buf, (size_t)n, T0);
    assert_string_equal(model_threat_at(m, 0)->details, "scansInHour=12, windowMinutes=60");
    n = alert(buf, sizeof buf, "S", "low", "x", T0, "\"line1\\nline2\"");
    model_threat(m, 0, buf, (size_t)n, T0);
    assert_string_equal(model_threat_at(m, 0)->details, "line1 line2");
    assert_string_equal(model_type_label("geographic_anomaly"), "Geo anomaly");
    assert_string_equal(model_type_label("something_new"), "something_new");
    assert_int_equal(sev_parse("CRITICAL"), SEV_CRITICAL);
    assert_int_equal(sev_parse(NULL), SEV_LOW);
    assert_string_equal(sev_label(SEV_MEDIUM), "MED");
    /* A products reply names the rows that only had an id, and later ones. */
    const char *prods = "{\"products\":[{\"productId\":\"p0123456789abcdef\",\"name\":\"Aero\"}]}";
    model_reply(m, POLL_BRAND_PRODUCTS, 0, 200, prods, strlen(prods), 1, T0);
    assert_string_equal(model_threat_at(m, 0)->product, "Aero");
    assert_string_equal(model_threat_at(m, 0)->product_id, "p0123456789abcdef");
    push(m, "later", "low", T0 + 5);
    assert_string_equal(model_threat_at(m, 0)->product, "Aero");
    assert_string_equal(model_brand_name(m, 0), "Acme");
    assert_string_equal(model_brand_name(m, 1), "brand-b");
    model_free(m);
}

static void test_set_brands(void **state)
{
    (void)state;
    struct model *m = model_new(ids, names, 2);
    char buf[1024];
    push(m, "A0", "low", T0);
    int n = alert(buf, sizeof buf, "B0", "low", "x", T0 + 1, NULL);
    model_threat(m, 1, buf, (size_t)n, T0);
    model_reply(m, POLL_STATS, 1, 200, "{\"scanCount\":3}", 15, 1, T0);
    const char *nids[] = {"brand-c", "brand-b"};
    model_set_brands(m, nids, NULL, 2);
    assert_int_equal(model_threat_count(m), 1);
    assert_string_equal(model_threat_at(m, 0)->alert_id, "B0");
    assert_int_equal(model_threat_at(m, 0)->brand, 1);
    assert_int_equal(model_data(m, POLL_STATS, 1)->state, DATA_OK);
    assert_int_equal(model_data(m, POLL_STATS, 0)->state, DATA_NONE);
    assert_string_equal(model_brand_id(m, 0), "brand-c");
    model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_keeps_newest),
        cmocka_unit_test(test_merge_in_place),
        cmocka_unit_test(test_reconcile_backfill_and_gap),
        cmocka_unit_test(test_follow_and_pending),
        cmocka_unit_test(test_freeze),
        cmocka_unit_test(test_filter_floor),
        cmocka_unit_test(test_ack_and_unseen),
        cmocka_unit_test(test_reply_slots),
        cmocka_unit_test(test_row_text),
        cmocka_unit_test(test_set_brands),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
