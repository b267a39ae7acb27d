/*
 * test_detect_checks.c - the detector's pure parts: the window state
 * (bounds, eviction, item round trip), each check at its thresholds, the
 * classifier's severity table and texts, dead-letter items and the
 * record filter.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/crypto.h"
#include "core/timeutil.h"
#include "detect/checks.h"
#include "detect/chk_burst.h"
#include "detect/chk_chain.h"
#include "detect/chk_claim.h"
#include "detect/chk_geo.h"
#include "detect/chk_tamper.h"
#include "detect/chk_velocity.h"
#include "detect/classify.h"
#include "detect/dlq.h"
#include "detect/process.h"
#include "detect/state.h"

#define MIN  60000LL
#define HOUR (60 * MIN)

static int64_t ms_of(const char *iso)
{
    int64_t ms = 0;
    assert_int_equal(time_parse_iso(iso, &ms), 0);
    return ms;
}

/* A scan at base + offset ms (timestamp buffer owned by the caller). */
static struct det_scan scan_at(char ts[ISO_LEN + 1], int64_t ms, const char *country)
{
    struct det_scan sc = {0};
    time_iso(ms, ts);
    sc.timestamp = ts;
    sc.ts_ms = ms;
    sc.country = country;
    sc.ip = "198.51.100.1";
    sc.user_agent = "Mozilla/5.0";
    sc.result = "authentic";
    return sc;
}

static void t_state_ring_and_countries(void **state)
{
    (void)state;
    struct det_state st;
    const char *list[DET_COUNTRIES_MAX];
    int64_t t = ms_of("2026-06-20T10:00:00.000Z");

    det_state_init(&st);
    /* Out-of-order times stay sorted; only the 10 newest are kept. */
    for (int i = 14; i >= 0; i--)
        det_state_add_scan(&st, t + i * MIN, NULL);
    assert_int_equal(st.scans, 15);
    assert_int_equal(st.nrecent, DET_BURST_MIN_SCANS);
    assert_true(st.recent[0] == t + 5 * MIN);
    assert_true(st.recent[9] == t + 14 * MIN);
    assert_int_equal(det_state_scans_between(&st, t + 5 * MIN, t + 14 * MIN), 10);
    assert_int_equal(det_state_scans_between(&st, t + 6 * MIN, t + 13 * MIN), 8);

    /* Unknown, Local, empty and overlong countries are not countries. */
    assert_false(det_country_known("Unknown"));
    assert_false(det_country_known("Local"));
    assert_false(det_country_known(""));
    assert_false(det_country_known(NULL));
    assert_false(det_country_known("ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFGHIJKLMNOPQRSTUVWXYZ"));
    assert_true(det_country_known("FR"));

    /* Last-seen per country; the oldest is evicted past the bound. */
    det_state_init(&st);
    for (int i = 0; i < DET_COUNTRIES_MAX + 5; i++) {
        char c[16];
        snprintf(c, sizeof(c), "C%02d", i);
        det_state_add_scan(&st, t + i * MIN, c);
    }
    det_state_add_scan(&st, t + 100 * MIN, "C36"); /* seen again: updated, not added */
    assert_int_equal(st.ncountries, DET_COUNTRIES_MAX);
    assert_int_equal(det_state_countries_between(&st, t, t + 4 * MIN, list), 0);
    assert_int_equal(det_state_countries_between(&st, t, t + 6 * MIN, list), 2);
    assert_string_equal(list[0], "C05");
    assert_string_equal(list[1], "C06");
    assert_int_equal(det_state_countries_between(&st, t + 90 * MIN, t + 100 * MIN, list), 1);
    assert_string_equal(list[0], "C36");
}

static void t_state_item_roundtrip(void **state)
{
    (void)state;
    struct det_state a, b;
    struct det_event ev = {.timestamp = "2026-06-20T10:00:00.000Z",
                           .hash = CRYPTO_GENESIS,
                           .actor = "Swiss Post",
                           .seq = 7};
    int64_t t = ms_of("2026-06-20T10:00:00.000Z");
    cJSON *item, *bad;

    det_state_init(&a);
    for (int i = 0; i < 12; i++)
        det_state_add_scan(&a, t + i * MIN, i % 2 ? "FR" : "US");
    ev.ts_ms = t;
    det_state_set_event(&a, &ev);
    a.last_verdict = 4000000000u;
    item = det_state_to_item(&a, "p1");
    assert_non_null(item);
    assert_string_equal(cJSON_GetObjectItem(item, "PK")->valuestring, "PRODUCT#p1");
    assert_string_equal(cJSON_GetObjectItem(item, "SK")->valuestring, "DETSTATE");
    det_state_from_item(&b, item);
    assert_memory_equal(&a, &b, sizeof(a));
    cJSON_Delete(item);
    assert_null(det_state_to_item(&a, "p#1"));

    /* A damaged item loads what is usable and never fails. */
    bad = cJSON_Parse("{\"scans\":\"x\",\"recent\":[1,\"a\",null,2],\"countries\":[[\"US\"],"
                      "[\"FR\",5],[\"Unknown\",6],7],\"lastEvent\":{\"seq\":-1}}");
    det_state_from_item(&b, bad);
    assert_int_equal(b.scans, 0);
    assert_int_equal(b.nrecent, 2);
    assert_int_equal(b.ncountries, 1);
    assert_string_equal(b.countries[0].code, "FR");
    assert_false(b.has_event);
    assert_int_equal(b.last_verdict, 0);
    cJSON_Delete(bad);
    /* lastVerdict: a whole number in 1..2^32-1, else none. */
    static const char *const verdicts[] = {"{\"lastVerdict\":-1}", "{\"lastVerdict\":1.5}",
                                           "{\"lastVerdict\":4294967296}",
                                           "{\"lastVerdict\":\"7\"}", "{\"lastVerdict\":7}"};
    for (size_t i = 0; i < 5; i++) {
        bad = cJSON_Parse(verdicts[i]);
        det_state_from_item(&b, bad);
        assert_int_equal(b.last_verdict, i == 4 ? 7 : 0);
        cJSON_Delete(bad);
    }
    det_state_from_item(&b, NULL);
    assert_int_equal(b.scans, 0);
}

static void t_geo_threshold(void **state)
{
    (void)state;
    struct det_state st;
    struct det_hit hit;
    char ts[ISO_LEN + 1];
    int64_t t = ms_of("2026-06-20T10:00:00.000Z");
    struct det_scan sc;

    det_state_init(&st);
    det_state_add_scan(&st, t - 24 * HOUR - 1, "DE"); /* just outside the window */
    det_state_add_scan(&st, t - 24 * HOUR, "US");     /* on its edge: inside */
    det_state_add_scan(&st, t - HOUR, "Unknown");
    det_state_add_scan(&st, t - HOUR, "Local");
    sc = scan_at(ts, t, "FR");
    det_state_add_scan(&st, t, "FR");
    assert_false(chk_geo(&st, &sc, &hit)); /* US, FR: two */
    sc = scan_at(ts, t, "JP");
    det_state_add_scan(&st, t, "JP");
    assert_true(chk_geo(&st, &sc, &hit));
    assert_int_equal(hit.type, DET_GEO);
    assert_string_equal(hit.window, "2026-06-20");
    assert_int_equal(hit.ncountries, 3);
    assert_string_equal(hit.countries[0], "FR");
    assert_string_equal(hit.countries[2], "US");
    /* One millisecond later the US scan has left the window. */
    sc = scan_at(ts, t + 1, "JP");
    det_state_add_scan(&st, t + 1, "JP");
    assert_false(chk_geo(&st, &sc, &hit));
}

static void t_burst_threshold(void **state)
{
    (void)state;
    struct det_state st;
    struct det_hit hit;
    char ts[ISO_LEN + 1];
    int64_t t = ms_of("2026-06-20T10:59:00.000Z");
    struct det_scan sc = scan_at(ts, t, "US");

    det_state_init(&st);
    det_state_add_scan(&st, t - HOUR - 1, "US"); /* outside the hour */
    for (int i = 8; i >= 0; i--)
        det_state_add_scan(&st, t - i * 6 * MIN, "US");
    assert_false(chk_burst(&st, &sc, &hit)); /* nine in the hour */
    det_state_add_scan(&st, t - HOUR, "US"); /* the tenth, on the edge */
    assert_true(chk_burst(&st, &sc, &hit));
    assert_int_equal(hit.scans_in_hour, 10);
    assert_string_equal(hit.window, "2026-06-20T10");
}

static void t_claim_check(void **state)
{
    (void)state;
    struct det_claim c = {0};
    struct det_hit hit;
    char ts[ISO_LEN + 1], fp[CRYPTO_HEX_LEN + 1];
    int64_t t = ms_of("2026-06-20T10:00:00.000Z");
    struct det_scan sc = scan_at(ts, t, "US");

    assert_false(chk_claim(&c, &sc, &hit)); /* not claimed */
    c.present = true;
    crypto_fingerprint("198.51.100.1", "Mozilla/5.0", c.fingerprint);
    memcpy(c.claimed_at, "2026-06-20T09:00:00.000Z", ISO_LEN + 1);
    c.claimed_ms = t - HOUR;
    strcpy(c.claimed_by, "Alice");
    assert_false(chk_claim(&c, &sc, &hit)); /* the claimant */
    sc.ip = "203.0.113.9";
    assert_true(chk_claim(&c, &sc, &hit));
    assert_int_equal(hit.type, DET_CLAIM);
    assert_string_equal(hit.window, "2026-06-20T09:00:00.000Z");
    sc.ts_ms = t - 2 * HOUR; /* before the claim */
    assert_false(chk_claim(&c, &sc, &hit));
    /* A stored fingerprint wins over ip/userAgent. */
    sc.ts_ms = t;
    sc.fingerprint = c.fingerprint;
    assert_false(chk_claim(&c, &sc, &hit));
    sc.fingerprint = "short";
    chk_scan_fingerprint(&sc, fp);
    assert_string_not_equal(fp, c.fingerprint);
}

static void t_tamper_and_velocity(void **state)
{
    (void)state;
    struct det_hit hit;
    char ts[ISO_LEN + 1];
    int64_t t = ms_of("2026-06-20T10:00:00.000Z");
    struct det_scan sc = scan_at(ts, t, "US");
    struct chk_velocity_cfg vc = {DET_VELOCITY_MIN_TOTAL, DET_VELOCITY_MIN_RATE};

    assert_false(chk_tamper(&sc, &hit));
    sc.result = NULL;
    assert_false(chk_tamper(&sc, &hit));
    sc.result = "suspicious";
    assert_true(chk_tamper(&sc, &hit));
    assert_int_equal(hit.type, DET_TAMPER);
    assert_string_equal(hit.window, "2026-06-20");

    /* total must exceed 20, and the rate 5/day; days is at least 1. */
    assert_false(chk_velocity(&vc, 20, t - HOUR, &sc, &hit));
    assert_true(chk_velocity(&vc, 21, t - HOUR, &sc, &hit));
    assert_true(hit.days == 1 && hit.rate == 21 && hit.total == 21);
    assert_false(chk_velocity(&vc, 25, t - 5 * 24 * HOUR, &sc, &hit)); /* 5.0/day */
    assert_true(chk_velocity(&vc, 26, t - 5 * 24 * HOUR, &sc, &hit));
    assert_string_equal(hit.window, "2026-06-20");
}

static void t_chain_checks(void **state)
{
    (void)state;
    struct det_hit hits[2];
    struct det_prev_event prev = {.seq = 1, .hash = "aa", .actor = "Maker"};
    struct det_event ev = {.timestamp = "2026-06-23T10:00:00.000Z",
                           .type = "shipped",
                           .actor = "Carrier",
                           .hash = "bb",
                           .previous_hash = "aa",
                           .seq = 2};

    prev.ts_ms = ms_of("2026-06-20T10:00:00.000Z");
    ev.ts_ms = prev.ts_ms + 72 * HOUR;
    assert_int_equal(chk_chain(&prev, &ev, hits), 0); /* exactly 72 h */
    ev.ts_ms += 1;
    assert_int_equal(chk_chain(&prev, &ev, hits), 1);
    assert_int_equal(hits[0].type, DET_CHAIN_GAP);
    assert_string_equal(hits[0].window, "2");
    ev.previous_hash = "zz";
    assert_int_equal(chk_chain(&prev, &ev, hits), 2);
    assert_int_equal(hits[1].type, DET_CHAIN_BREAK);
    assert_string_equal(hits[1].expected_hash, "aa");
    /* Without a known predecessor only a first event can be checked. */
    assert_int_equal(chk_chain(NULL, &ev, hits), 0);
    ev.seq = 1;
    assert_int_equal(chk_chain(NULL, &ev, hits), 1);
    assert_int_equal(hits[0].type, DET_CHAIN_BREAK);
    ev.previous_hash = CRYPTO_GENESIS;
    assert_int_equal(chk_chain(NULL, &ev, hits), 0);
    /* Events without seq use their timestamp as the window. */
    ev.seq = 0;
    ev.previous_hash = "zz";
    assert_int_equal(chk_chain(&prev, &ev, hits), 2);
    assert_string_equal(hits[0].window, "2026-06-23T10:00:00.000Z");
}

static void t_classify_table(void **state)
{
    (void)state;
    static const struct {
        enum det_type t;
        const char *name, *sev, *upper, *vector;
    } rows[] = {
        {DET_GEO, "geographic_anomaly", "high", "HIGH", "tag_cloning"},
        {DET_BURST, "burst_scan", "medium", "MEDIUM", "scan_farming"},
        {DET_CLAIM, "claimed_product_scan", "high", "HIGH", "tag_cloning"},
        {DET_TAMPER, "hash_tampering", "critical", "CRITICAL", "record_tampering"},
        {DET_VELOCITY, "scan_velocity", "high", "HIGH", "tag_cloning"},
        {DET_CHAIN_GAP, "chain_gap", "medium", "MEDIUM", "supply_chain_diversion"},
        {DET_CHAIN_BREAK, "chain_break", "critical", "CRITICAL", "chain_forgery"},
    };
    struct classification c, c2;
    struct det_hit h;
    cJSON *ai;

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        memset(&h, 0, sizeof(h));
        h.type = rows[i].t;
        classify(&h, DET_BIT(rows[i].t), &c);
        assert_string_equal(det_type_name(rows[i].t), rows[i].name);
        assert_string_equal(c.severity, rows[i].sev);
        assert_string_equal(c.severity_upper, rows[i].upper);
        assert_string_equal(c.attack_vector, rows[i].vector);
        assert_true(c.nactions >= 2);
        assert_true(c.confidence > 0 && c.confidence < 100);
        assert_true(strlen(c.narrative) > 10);
    }
    assert_string_equal(det_type_name(DET_NTYPES), "unknown");

    /* Burst with failing verification is probing; corroboration adds 5. */
    memset(&h, 0, sizeof(h));
    h.type = DET_BURST;
    h.scans_in_hour = 10;
    classify(&h, DET_BIT(DET_BURST), &c);
    classify(&h, DET_BIT(DET_BURST) | DET_BIT(DET_TAMPER), &c2);
    assert_string_equal(c2.attack_vector, "brute_force_probe");
    assert_int_equal(c2.confidence, c.confidence + 5);
    assert_string_equal(c.narrative,
                        "At least 10 scans in 1 hour (limit 10). Possible automated scan farming.");

    /* Numbers in the narratives; deterministic output. */
    memset(&h, 0, sizeof(h));
    h.type = DET_VELOCITY;
    h.total = 42;
    h.days = 2.6;
    h.rate = 42 / 2.6;
    classify(&h, DET_BIT(DET_VELOCITY), &c);
    assert_string_equal(c.narrative,
                        "Scan velocity 16.2/day over 3 days (42 total). Possible tag cloning.");
    classify(&h, DET_BIT(DET_VELOCITY), &c2);
    assert_string_equal(c.narrative, c2.narrative);
    assert_int_equal(c.confidence, c2.confidence);
    assert_ptr_equal(c.severity, c2.severity);
    assert_ptr_equal(c.actions, c2.actions);
    memset(&h, 0, sizeof(h));
    h.type = DET_CHAIN_GAP;
    h.gap_hours = 96.5;
    h.prev_actor = "A";
    h.actor = "B";
    classify(&h, DET_BIT(DET_CHAIN_GAP), &c);
    assert_string_equal(c.narrative, "96-hour gap between A and B");
    assert_int_equal(c.confidence, 70);

    ai = classify_analysis_json(&c, 0.25);
    assert_string_equal(cJSON_GetObjectItem(ai, "model")->valuestring, "rules");
    assert_string_equal(cJSON_GetObjectItem(ai, "severity")->valuestring, "medium");
    assert_string_equal(cJSON_GetObjectItem(ai, "narrative")->valuestring, c.narrative);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(ai, "recommended_actions")),
                     (int)c.nactions);
    assert_true(cJSON_GetObjectItem(ai, "latency_ms")->valuedouble == 0.25);
    cJSON_Delete(ai);

    /* Many countries: the list is cut, never overflowing. */
    static const char *many[DET_COUNTRIES_MAX];
    static const char *name = "SOME-VERY-LONG-COUNTRY-NAME-THAT-FILLS-THE-LIST";
    memset(&h, 0, sizeof(h));
    h.type = DET_GEO;
    h.ncountries = DET_COUNTRIES_MAX;
    for (int i = 0; i < DET_COUNTRIES_MAX; i++)
        many[i] = name;
    memcpy(h.countries, many, sizeof(many));
    classify(&h, DET_BIT(DET_GEO), &c);
    assert_non_null(strstr(c.narrative, "..."));
    assert_int_equal(c.confidence, 99);
    {
        /* The list is cut where the printf-built one was: after the last
         * country that leaves room for "...", within 512 bytes. */
        char list[512], want[CLASSIFY_NARRATIVE_MAX];
        size_t len = 0;
        list[0] = '\0';
        for (size_t i = 0; i < h.ncountries; i++) {
            int w = snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", many[i]);
            if (w < 0 || (size_t)w >= sizeof list - len - 4) {
                snprintf(list + len, sizeof list - len, "...");
                break;
            }
            len += (size_t)w;
        }
        snprintf(want, sizeof want,
                 "Scanned from %d countries (%s) in 24h window. A single physical product "
                 "cannot travel this fast: possible cloned tag.",
                 DET_COUNTRIES_MAX, list);
        assert_string_equal(c.narrative, want);
    }

    /* A short list, word for word. */
    memset(&h, 0, sizeof(h));
    h.type = DET_GEO;
    h.ncountries = 3;
    h.countries[0] = "CN";
    h.countries[1] = "FR";
    h.countries[2] = "US";
    classify(&h, DET_BIT(DET_GEO), &c);
    assert_string_equal(c.narrative,
                        "Scanned from 3 countries (CN, FR, US) in 24h window. A single "
                        "physical product cannot travel this fast: possible cloned "
                        "tag.");
    assert_int_equal(c.confidence, 70);
}

static void t_dlq_item(void **state)
{
    (void)state;
    struct stream_record r = {.seq = 42, .ts_ms = 0, .kind = STORE_INSERT};
    int64_t parked = ms_of("2026-06-21T01:02:03.004Z");
    cJSON *it;
    char err[DLQ_ERROR_MAX + 100];
    struct buf b;
    struct jsonw w;

    r.pk = "PRODUCT#p1";
    r.sk = "SCAN#x";
    r.image = cJSON_Parse("{\"PK\":\"PRODUCT#p1\",\"SK\":\"SCAN#x\"}");
    memset(err, 'e', sizeof(err) - 1);
    err[sizeof(err) - 1] = '\0';
    it = dlq_item_new(&r, "detector", err, 3, parked);
    assert_non_null(it);
    assert_string_equal(cJSON_GetObjectItem(it, "PK")->valuestring, "DLQ#2026-06-21");
    assert_string_equal(cJSON_GetObjectItem(it, "SK")->valuestring,
                        "2026-06-21T01:02:03.004Z#00000000000000000042");
    assert_int_equal(strlen(cJSON_GetObjectItem(it, "error")->valuestring), DLQ_ERROR_MAX);
    assert_string_equal(cJSON_GetObjectItem(it, "kind")->valuestring, "INSERT");
    assert_true(cJSON_IsObject(cJSON_GetObjectItem(it, "image")));

    buf_init(&b, 1 << 16);
    jsonw_init(&w, &b);
    dlq_write_json(&w, it);
    assert_int_equal(jsonw_error(&w), 0);
    assert_non_null(strstr(buf_cstr(&b), "\"seq\":42,\"reader\":\"detector\",\"kind\":\"INSERT\""));
    assert_non_null(strstr(buf_cstr(&b), "\"image\":{\"PK\":\"PRODUCT#p1\""));
    buf_free(&b);
    cJSON_Delete(it);

    /* REMOVE records have no image. */
    cJSON_Delete(r.image);
    r.image = NULL;
    r.kind = STORE_REMOVE;
    it = dlq_item_new(&r, "detector", NULL, 1, parked);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(it, "image")));
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(it, "imageOmitted")));
    cJSON_Delete(it);
    assert_null(dlq_item_new(NULL, "d", "e", 1, parked));
}

static void t_record_filter(void **state)
{
    (void)state;
    cJSON *img = cJSON_CreateObject();
    struct stream_record r = {.kind = STORE_INSERT, .image = img};

    r.pk = "PRODUCT#p1";
    r.sk = "SCAN#2026-06-20T10:00:00.000Z#abcd0123";
    assert_true(det_record_wanted(&r));
    r.sk = "EVENT#2026-06-20T10:00:00.000Z#shipped#00000002";
    assert_true(det_record_wanted(&r));
    r.kind = STORE_MODIFY;
    assert_false(det_record_wanted(&r));
    r.kind = STORE_INSERT;
    r.sk = "DETSTATE";
    assert_false(det_record_wanted(&r));
    r.sk = "ALERTKEY#burst_scan#2026-06-20T10";
    assert_false(det_record_wanted(&r));
    r.pk = "OPS_LOG#2026-06-20";
    r.sk = "SCAN#x";
    assert_false(det_record_wanted(&r));
    r.pk = "PRODUCT#p1";
    r.image = NULL;
    assert_false(det_record_wanted(&r));
    cJSON_Delete(img);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_state_ring_and_countries),
        cmocka_unit_test(t_state_item_roundtrip),
        cmocka_unit_test(t_geo_threshold),
        cmocka_unit_test(t_burst_threshold),
        cmocka_unit_test(t_claim_check),
        cmocka_unit_test(t_tamper_and_velocity),
        cmocka_unit_test(t_chain_checks),
        cmocka_unit_test(t_classify_table),
        cmocka_unit_test(t_dlq_item),
        cmocka_unit_test(t_record_filter),
    };
    return cmocka_run_group_tests_name("detect_checks", tests, NULL, NULL);
}
