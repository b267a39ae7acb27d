/*
 * test_detect_scenarios.c - the detector end to end on a SQLite store:
 * items are written as the API would write them, the detector runs until
 * idle, and each attack raises exactly the expected alerts (type,
 * severity, count, flags), STATS threatCount increments and ops-log
 * entries; normal traffic raises nothing.
 */
#include "test_detect_fixture.h"

#include "detect/dlq.h"

#define BRAND   "b-0001"
#define T0      "2026-06-20T10:00:00.000Z"
#define CREATED "2026-06-01T00:00:00.000Z"

static void t_geo_cloned_tag(void **state)
{
    struct fx *f = *state;
    struct detector *d;
    struct detector_stats st;
    char ts[ISO_LEN + 1];
    cJSON *alerts, *log;
    const cJSON *a, *ai;

    fx_product(f, "p1", BRAND, CREATED);
    fx_scan(f, "p1", fx_ts(ts, T0, 0), "US");
    fx_scan(f, "p1", fx_ts(ts, T0, 30), "FR");
    fx_scan(f, "p1", fx_ts(ts, T0, 60), "JP");
    d = fx_detector(f, 100);
    fx_run(d);

    alerts = fx_alerts(f, BRAND);
    assert_int_equal(cJSON_GetArraySize(alerts), 1);
    a = cJSON_GetArrayItem(alerts, 0);
    assert_string_equal(fx_str(a, "type"), "geographic_anomaly");
    assert_string_equal(fx_str(a, "severity"), "high");
    assert_string_equal(fx_str(a, "source"), "detector");
    assert_string_equal(fx_str(a, "productId"), "p1");
    assert_string_equal(fx_str(a, "timestamp"), "2026-06-20T11:00:00.000Z");
    assert_string_equal(fx_str(a, "PK"), "THREAT#" BRAND "#2026-06");
    assert_string_equal(fx_str(a, "country"), "JP");
    assert_true(fx_num(a, "count") == 1);
    assert_true(fx_has_flag(a, "geographic_anomaly"));
    assert_non_null(strstr(fx_str(a, "details"), "3 countries (FR, JP, US)"));
    ai = cJSON_GetObjectItemCaseSensitive(a, "aiAnalysis");
    assert_string_equal(fx_str(ai, "model"), "rules");
    assert_string_equal(fx_str(ai, "attack_vector"), "tag_cloning");
    assert_true(fx_threat_count(f, BRAND) == 1);
    log = fx_opslog(f, "2026-06-20");
    assert_int_equal(cJSON_GetArraySize(log), 1);
    assert_string_equal(fx_str(cJSON_GetArrayItem(log, 0), "agent"), "threat_detector");
    assert_string_equal(fx_str(cJSON_GetArrayItem(log, 0), "trigger"), "scan_event");
    assert_string_equal(fx_str(cJSON_GetArrayItem(log, 0), "aiSeverity"), "HIGH");
    assert_string_equal(fx_str(cJSON_GetArrayItem(log, 0), "aiAttackVector"), "tag_cloning");
    assert_string_equal(fx_str(cJSON_GetArrayItem(log, 0), "geminiModel"), "rules");
    assert_string_equal(fx_str(cJSON_GetArrayItem(log, 0), "timestamp"),
                        "2026-06-20T11:00:00.000Z");
    assert_true(fx_num(cJSON_GetArrayItem(log, 0), "aiConfidence") == 70);
    cJSON_Delete(alerts);
    cJSON_Delete(log);

    /* 20 more scans from a 4th country, 7 minutes apart (never 10 in an
     * hour): the same alert is updated, nothing new is counted. */
    for (int i = 0; i < 20; i++)
        fx_scan(f, "p1", fx_ts(ts, T0, 67 + 7 * i), "DE");
    fx_run(d);
    alerts = fx_alerts(f, BRAND);
    assert_int_equal(cJSON_GetArraySize(alerts), 1);
    a = cJSON_GetArrayItem(alerts, 0);
    assert_string_equal(fx_str(a, "type"), "geographic_anomaly");
    assert_true(fx_num(a, "count") == 21);
    assert_string_equal(fx_str(a, "lastSeen"), fx_ts(ts, T0, 67 + 7 * 19));
    assert_string_equal(fx_str(a, "timestamp"), "2026-06-20T11:00:00.000Z");
    assert_non_null(strstr(fx_str(a, "details"), "4 countries (DE, FR, JP, US)"));
    assert_true(fx_threat_count(f, BRAND) == 1);
    log = fx_opslog(f, "2026-06-20");
    assert_int_equal(cJSON_GetArraySize(log), 21);
    detector_get_stats(d, &st);
    assert_int_equal(st.alerts_created, 1);
    assert_int_equal(st.alerts_updated, 20);
    assert_int_equal(st.scans, 23);
    assert_int_equal(st.dlq_parked, 0);
    cJSON_Delete(alerts);
    cJSON_Delete(log);
    detector_free(d);
}

/* `--ops-log changes`: the same alerts as above, but an ops-log entry only
 * for the scans that raise an alert or change the product's verdict
 * (here: the confidence rising with each new country); the verdict is
 * kept in the product's stored window state, so a restarted detector
 * does not log it again. */
static void t_opslog_changes(void **state)
{
    struct fx *f = *state;
    struct detector_config c = {.batch_size = 7, .clock_ms = fx_clock, .opslog_changes = true};
    struct detector *d = detector_new(f->s, &c);
    char ts[ISO_LEN + 1];
    cJSON *alerts, *log;
    const cJSON *a;

    assert_non_null(d);
    fx_product(f, "p1", BRAND, CREATED);
    fx_scan(f, "p1", fx_ts(ts, T0, 0), "US");
    fx_scan(f, "p1", fx_ts(ts, T0, 30), "FR");
    fx_scan(f, "p1", fx_ts(ts, T0, 60), "JP"); /* raises the alert: logged */
    for (int i = 0; i < 20; i++)               /* 4 countries: logged once */
        fx_scan(f, "p1", fx_ts(ts, T0, 67 + 7 * i), "DE");
    fx_run(d);
    alerts = fx_alerts(f, BRAND);
    assert_int_equal(cJSON_GetArraySize(alerts), 1);
    a = cJSON_GetArrayItem(alerts, 0);
    assert_true(fx_num(a, "count") == 21);
    log = fx_opslog(f, "2026-06-20");
    assert_int_equal(cJSON_GetArraySize(log), 2);
    assert_true(fx_num(cJSON_GetArrayItem(log, 0), "aiConfidence") == 70);
    assert_string_equal(fx_str(cJSON_GetArrayItem(log, 0), "timestamp"),
                        "2026-06-20T11:00:00.000Z");
    assert_true(fx_num(cJSON_GetArrayItem(log, 1), "aiConfidence") == 75);
    assert_string_equal(fx_str(cJSON_GetArrayItem(log, 1), "timestamp"), fx_ts(ts, T0, 67));
    cJSON_Delete(alerts);
    cJSON_Delete(log);
    detector_free(d);

    /* A new detector (window states read back from the store): the same
     * verdict is not logged again; a fifth country changes it. */
    d = detector_new(f->s, &c);
    assert_non_null(d);
    for (int i = 0; i < 5; i++) /* 20 minutes apart: never a burst */
        fx_scan(f, "p1", fx_ts(ts, T0, 300 + 20 * i), "DE");
    fx_scan(f, "p1", fx_ts(ts, T0, 400), "BR");
    fx_scan(f, "p1", fx_ts(ts, T0, 420), "BR");
    fx_run(d);
    log = fx_opslog(f, "2026-06-20");
    assert_int_equal(cJSON_GetArraySize(log), 3);
    assert_true(fx_num(cJSON_GetArrayItem(log, 2), "aiConfidence") == 80);
    assert_string_equal(fx_str(cJSON_GetArrayItem(log, 2), "timestamp"), fx_ts(ts, T0, 400));
    alerts = fx_alerts(f, BRAND);
    assert_true(fx_num(cJSON_GetArrayItem(alerts, 0), "count") == 28);
    cJSON_Delete(alerts);
    cJSON_Delete(log);
    detector_free(d);
}

static void t_burst(void **state)
{
    struct fx *f = *state;
    struct detector *d;
    char ts[ISO_LEN + 1];
    cJSON *alerts, *log;
    const cJSON *a;

    fx_product(f, "p2", BRAND, CREATED);
    for (int i = 0; i < 9; i++)
        fx_scan(f, "p2", fx_ts(ts, T0, 5 * i), "US");
    d = fx_detector(f, 100);
    fx_run(d);
    alerts = fx_alerts(f, BRAND);
    assert_int_equal(cJSON_GetArraySize(alerts), 0); /* nine is not a burst */
    cJSON_Delete(alerts);

    fx_scan(f, "p2", fx_ts(ts, T0, 45), "US"); /* the tenth within the hour */
    fx_run(d);
    alerts = fx_alerts(f, BRAND);
    assert_int_equal(cJSON_GetArraySize(alerts), 1);
    a = cJSON_GetArrayItem(alerts, 0);
    assert_string_equal(fx_str(a, "type"), "burst_scan");
    assert_string_equal(fx_str(a, "severity"), "medium");
    assert_true(fx_num(a, "count") == 1);
    assert_string_equal(fx_str(cJSON_GetObjectItemCaseSensitive(a, "aiAnalysis"), "attack_vector"),
                        "scan_farming");
    assert_true(fx_threat_count(f, BRAND) == 1);
    log = fx_opslog(f, "2026-06-20");
    assert_int_equal(cJSON_GetArraySize(log), 1);
    assert_string_equal(fx_str(cJSON_GetArrayItem(log, 0), "aiSeverity"), "MEDIUM");
    cJSON_Delete(alerts);
    cJSON_Delete(log);
    detector_free(d);
}

static void t_claim(void **state)
{
    struct fx *f = *state;
    struct detector *d;
    char ts[ISO_LEN + 1];
    cJSON *alerts, *log;
    const cJSON *a;

    fx_product(f, "p3", BRAND, CREATED);
    /* A stranger's scan before the claim is no violation. */
    fx_scan_full(f, "p3", fx_ts(ts, T0, -10), "US", "203.0.113.9", "Evil/1.0", "authentic");
    fx_claim(f, "p3", "203.0.113.7", "Mozilla/5.0", T0);
    /* The claimant's own scan is fine ([D13] fixed). */
    fx_scan_full(f, "p3", fx_ts(ts, T0, 10), "US", "203.0.113.7", "Mozilla/5.0", "authentic");
    d = fx_detector(f, 100);
    fx_run(d);
    alerts = fx_alerts(f, BRAND);
    assert_int_equal(cJSON_GetArraySize(alerts), 0);
    cJSON_Delete(alerts);

    fx_scan_full(f, "p3", fx_ts(ts, T0, 20), "US", "203.0.113.9", "Evil/1.0", "authentic");
    fx_scan_full(f, "p3", fx_ts(ts, T0, 30), "US", "203.0.113.9", "Evil/1.0", "authentic");
    fx_run(d);
    alerts = fx_alerts(f, BRAND);
    assert_int_equal(cJSON_GetArraySize(alerts), 1);
    a = cJSON_GetArrayItem(alerts, 0);
    assert_string_equal(fx_str(a, "type"), "claimed_product_scan");
    assert_string_equal(fx_str(a, "severity"), "high"); /* [D51] */
    assert_true(fx_num(a, "count") == 2);
    assert_non_null(strstr(fx_str(a, "details"), "Original claim: " T0));
    assert_true(fx_threat_count(f, BRAND) == 1);
    log = fx_opslog(f, "2026-06-20");
    assert_int_equal(cJSON_GetArraySize(log), 2);
    cJSON_Delete(alerts);
    cJSON_Delete(log);
    detector_free(d);
}

/* A claim made after the detector already knew the product unclaimed:
 * the CLAIM write in the stream makes it read the claim again, so the
 * next stranger's scan is caught. */
static void t_claim_after_known_unclaimed(void **state)
{
    struct fx *f = *state;
    struct detector *d;
    char ts[ISO_LEN + 1];
    cJSON *alerts;

    fx_product(f, "p3b", BRAND, CREATED);
    fx_scan_full(f, "p3b", fx_ts(ts, T0, -10), "US", "203.0.113.9", "Evil/1.0", "authentic");
    d = fx_detector(f, 100);
    fx_run(d); /* remembers: no claim */
    alerts = fx_alerts(f, BRAND);
    assert_int_equal(cJSON_GetArraySize(alerts), 0);
    cJSON_Delete(alerts);

    fx_claim(f, "p3b", "203.0.113.7", "Mozilla/5.0", T0);
    fx_scan_full(f, "p3b", fx_ts(ts, T0, 20), "US", "203.0.113.9", "Evil/1.0", "authentic");
    fx_run(d);
    alerts = fx_alerts(f, BRAND);
    assert_int_equal(cJSON_GetArraySize(alerts), 1);
    assert_string_equal(fx_str(cJSON_GetArrayItem(alerts, 0), "type"), "claimed_product_scan");
    cJSON_Delete(alerts);
    detector_free(d);
}

static void t_tampered(void **state)
{
    struct fx *f = *state;
    struct detector *d;
    char ts[ISO_LEN + 1];
    cJSON *alerts, *log;
    const cJSON *a;

    fx_product(f, "p4", BRAND, CREATED);
    fx_scan(f, "p4", fx_ts(ts, T0, 0), "US");
    fx_scan_full(f, "p4", fx_ts(ts, T0, 5), "US", "198.51.100.1", "Mozilla/5.0", "suspicious");
    d = fx_detector(f, 100);
    fx_run(d);
    alerts = fx_alerts(f, BRAND);
    assert_int_equal(cJSON_GetArraySize(alerts), 1);
    a = cJSON_GetArrayItem(alerts, 0);
    assert_string_equal(fx_str(a, "type"), "hash_tampering");
    assert_string_equal(fx_str(a, "severity"), "critical");
    assert_string_equal(fx_str(cJSON_GetObjectItemCaseSensitive(a, "aiAnalysis"), "attack_vector"),
                        "record_tampering");
    assert_true(fx_threat_count(f, BRAND) == 1);
    log = fx_opslog(f, "2026-06-20");
    assert_int_equal(cJSON_GetArraySize(log), 1);
    assert_string_equal(fx_str(cJSON_GetArrayItem(log, 0), "aiSeverity"), "CRITICAL");
    assert_true(fx_num(cJSON_GetArrayItem(log, 0), "aiConfidence") == 90);
    cJSON_Delete(alerts);
    cJSON_Delete(log);
    detector_free(d);
}

static void t_velocity(void **state)
{
    struct fx *f = *state;
    struct detector *d;
    char ts[ISO_LEN + 1];
    cJSON *alerts;
    const cJSON *a;

    /* A product one hour old scanned once an hour from one country: the
     * 21st scan makes total > 20 at more than 5 a day. */
    fx_product(f, "p5", BRAND, "2026-06-20T09:00:00.000Z");
    for (int i = 0; i < 20; i++)
        fx_scan(f, "p5", fx_ts(ts, T0, 61 * i), "US");
    d = fx_detector(f, 7);
    fx_run(d);
    alerts = fx_alerts(f, BRAND);
    assert_int_equal(cJSON_GetArraySize(alerts), 0);
    cJSON_Delete(alerts);
    fx_scan(f, "p5", fx_ts(ts, T0, 61 * 20), "US");
    fx_scan(f, "p5", fx_ts(ts, T0, 61 * 21), "US");
    fx_run(d);
    alerts = fx_alerts(f, BRAND);
    assert_int_equal(cJSON_GetArraySize(alerts), 1);
    a = cJSON_GetArrayItem(alerts, 0);
    assert_string_equal(fx_str(a, "type"), "scan_velocity");
    assert_string_equal(fx_str(a, "severity"), "high");
    assert_true(fx_num(a, "count") == 2);
    assert_non_null(strstr(fx_str(a, "details"), "(22 total)"));
    assert_true(fx_threat_count(f, BRAND) == 1);
    cJSON_Delete(alerts);
    detector_free(d);
}

static void t_chain_gap(void **state)
{
    struct fx *f = *state;
    struct detector *d;
    char h1[CRYPTO_HEX_LEN + 1], h2[CRYPTO_HEX_LEN + 1], h3[CRYPTO_HEX_LEN + 1], ts[ISO_LEN + 1];
    cJSON *alerts, *log;
    const cJSON *a;

    fx_product(f, "p6", BRAND, CREATED);
    fx_event(f, "p6", 1, T0, "manufactured", "Luxe Watches", CRYPTO_GENESIS, h1);
    fx_event(f, "p6", 2, fx_ts(ts, T0, 60), "shipped", "Swiss Post", h1, h2);
    fx_event(f, "p6", 3, fx_ts(ts, T0, 60 + 4 * 24 * 60), "received", "Geneva Store", h2, h3);
    d = fx_detector(f, 100);
    fx_run(d);
    alerts = fx_alerts(f, BRAND);
    assert_int_equal(cJSON_GetArraySize(alerts), 1);
    a = cJSON_GetArrayItem(alerts, 0);
    assert_string_equal(fx_str(a, "type"), "chain_gap");
    assert_string_equal(fx_str(a, "severity"), "medium");
    assert_string_equal(fx_str(a, "timestamp"), "2026-06-24T11:00:00.000Z");
    assert_string_equal(fx_str(a, "details"), "96-hour gap between Swiss Post and Geneva Store");
    assert_true(fx_threat_count(f, BRAND) == 1);
    log = fx_opslog(f, "2026-06-24");
    assert_int_equal(cJSON_GetArraySize(log), 1);
    assert_string_equal(fx_str(cJSON_GetArrayItem(log, 0), "agent"), "chain_analyzer");
    assert_string_equal(fx_str(cJSON_GetArrayItem(log, 0), "trigger"), "chain_event");
    assert_string_equal(fx_str(cJSON_GetArrayItem(log, 0), "aiAttackVector"),
                        "supply_chain_diversion");
    assert_true(fx_num(cJSON_GetArrayItem(log, 0), "aiConfidence") == 70);
    cJSON_Delete(alerts);
    cJSON_Delete(log);
    detector_free(d);
}

static void t_chain_break(void **state)
{
    struct fx *f = *state;
    struct detector *d;
    char h1[CRYPTO_HEX_LEN + 1], h2[CRYPTO_HEX_LEN + 1], h3[CRYPTO_HEX_LEN + 1], ts[ISO_LEN + 1];
    cJSON *alerts, *log;
    const cJSON *a;

    fx_product(f, "p7", BRAND, CREATED);
    fx_event(f, "p7", 1, T0, "manufactured", "Luxe Watches", CRYPTO_GENESIS, h1);
    /* Event 2 links to GENESIS instead of event 1's hash. */
    fx_event(f, "p7", 2, fx_ts(ts, T0, 60), "shipped", "Swiss Post", CRYPTO_GENESIS, h2);
    fx_event(f, "p7", 3, fx_ts(ts, T0, 120), "received", "Shop", h2, h3);
    d = fx_detector(f, 1); /* one record per batch: the state carries the chain */
    fx_run(d);
    alerts = fx_alerts(f, BRAND);
    assert_int_equal(cJSON_GetArraySize(alerts), 1);
    a = cJSON_GetArrayItem(alerts, 0);
    assert_string_equal(fx_str(a, "type"), "chain_break");
    assert_string_equal(fx_str(a, "severity"), "critical");
    assert_string_equal(fx_str(a, "timestamp"), "2026-06-20T11:00:00.000Z");
    assert_string_equal(fx_str(cJSON_GetObjectItemCaseSensitive(a, "aiAnalysis"), "attack_vector"),
                        "chain_forgery");
    assert_true(fx_threat_count(f, BRAND) == 1);
    log = fx_opslog(f, "2026-06-20");
    assert_int_equal(cJSON_GetArraySize(log), 1);
    assert_string_equal(fx_str(cJSON_GetArrayItem(log, 0), "aiSeverity"), "CRITICAL");
    cJSON_Delete(alerts);
    cJSON_Delete(log);
    detector_free(d);
}

/* A valid chain whose earlier events the detector never saw (stream
 * trimmed, detector started late): the previous event is found with a
 * bounded lookup, and a bad link is still caught. */
static void t_chain_lookup(void **state)
{
    struct fx *f = *state;
    struct detector *d;
    char h1[CRYPTO_HEX_LEN + 1], h2[CRYPTO_HEX_LEN + 1], h3[CRYPTO_HEX_LEN + 1], ts[ISO_LEN + 1];
    uint64_t head = 0;
    cJSON *alerts;

    fx_product(f, "p8", BRAND, CREATED);
    fx_event(f, "p8", 1, T0, "manufactured", "Luxe Watches", CRYPTO_GENESIS, h1);
    fx_event(f, "p8", 2, fx_ts(ts, T0, 60), "shipped", "Swiss Post", h1, h2);
    assert_int_equal(store_stream_head(f->s, &head), 0);
    assert_int_equal(store_checkpoint_set(f->s, DETECTOR_READER_DEFAULT, head), 0);
    fx_event(f, "p8", 3, fx_ts(ts, T0, 120), "received", "Shop", h1, h3); /* wrong link */
    d = fx_detector(f, 100);
    fx_run(d);
    alerts = fx_alerts(f, BRAND);
    assert_int_equal(cJSON_GetArraySize(alerts), 1);
    assert_string_equal(fx_str(cJSON_GetArrayItem(alerts, 0), "type"), "chain_break");
    cJSON_Delete(alerts);
    detector_free(d);
}

static void t_normal_traffic(void **state)
{
    struct fx *f = *state;
    struct detector *d;
    struct detector_stats st;
    char ts[ISO_LEN + 1], h[CRYPTO_HEX_LEN + 1], h2[CRYPTO_HEX_LEN + 1];
    cJSON *alerts, *log;

    fx_product(f, "p9", BRAND, "2026-01-01T00:00:00.000Z");
    fx_event(f, "p9", 1, T0, "manufactured", "Luxe Watches", CRYPTO_GENESIS, h);
    fx_event(f, "p9", 2, fx_ts(ts, T0, 70 * 60), "shipped", "Swiss Post", h, h2);
    fx_claim(f, "p9", "203.0.113.7", "Mozilla/5.0", T0);
    /* The owner scans every two hours; "Unknown" and "Local" are no
     * countries. */
    for (int i = 0; i < 15; i++)
        fx_scan_full(f, "p9", fx_ts(ts, T0, 120 * i),
                     i % 3 == 0   ? "Unknown"
                     : i % 3 == 1 ? "Local"
                                  : "CH",
                     "203.0.113.7", "Mozilla/5.0", "authentic");
    d = fx_detector(f, 4);
    fx_run(d);
    alerts = fx_alerts(f, BRAND);
    assert_int_equal(cJSON_GetArraySize(alerts), 0);
    assert_true(fx_threat_count(f, BRAND) == 0);
    log = fx_opslog(f, "2026-06-20");
    assert_int_equal(cJSON_GetArraySize(log), 0);
    detector_get_stats(d, &st);
    assert_int_equal(st.scans, 15);
    assert_int_equal(st.events, 2);
    assert_int_equal(st.alerts_created, 0);
    assert_int_equal(st.dlq_parked, 0);
    cJSON_Delete(alerts);
    cJSON_Delete(log);
    detector_free(d);
}

/* One scan trips several checks: each raises its own alert, and every
 * alert records all the checks that fired in anomalyFlags. */
static void t_multi_flags(void **state)
{
    struct fx *f = *state;
    struct detector *d;
    char ts[ISO_LEN + 1];
    cJSON *alerts, *log;
    const cJSON *geo, *tamper;

    fx_product(f, "pa", BRAND, CREATED);
    fx_scan(f, "pa", fx_ts(ts, T0, 0), "US");
    fx_scan(f, "pa", fx_ts(ts, T0, 1), "FR");
    fx_scan_full(f, "pa", fx_ts(ts, T0, 2), "JP", "1.2.3.4", "x", "suspicious");
    d = fx_detector(f, 100);
    fx_run(d);
    alerts = fx_alerts(f, BRAND);
    assert_int_equal(cJSON_GetArraySize(alerts), 2);
    geo = fx_find(alerts, "type", "geographic_anomaly");
    tamper = fx_find(alerts, "type", "hash_tampering");
    assert_non_null(geo);
    assert_non_null(tamper);
    assert_true(fx_has_flag(geo, "hash_tampering") && fx_has_flag(geo, "geographic_anomaly"));
    assert_true(fx_has_flag(tamper, "hash_tampering") && fx_has_flag(tamper, "geographic_anomaly"));
    assert_true(fx_threat_count(f, BRAND) == 2);
    /* One ops-log entry for the scan (one classification per record, as
     * the original wrote): both checks in its flags, and the most severe
     * hit (tampering: CRITICAL) gives severity, vector and confidence. */
    log = fx_opslog(f, "2026-06-20");
    assert_int_equal(cJSON_GetArraySize(log), 1);
    {
        const cJSON *e = cJSON_GetArrayItem(log, 0);
        const cJSON *fl = cJSON_GetObjectItemCaseSensitive(e, "anomalyFlags");
        assert_int_equal(cJSON_GetArraySize(fl), 2);
        assert_true(fx_has_flag(e, "geographic_anomaly") && fx_has_flag(e, "hash_tampering"));
        assert_string_equal(fx_str(e, "aiSeverity"), "CRITICAL");
        assert_string_equal(fx_str(e, "aiAttackVector"), "record_tampering");
        assert_true(fx_num(e, "aiConfidence") == 95);
        assert_non_null(strstr(fx_str(e, "SK"), "#threat_detector#"));
    }
    /* Corroboration raises confidence: 70 + 5 and 90 + 5. */
    assert_true(fx_num(geo, "count") == 1);
    assert_true(fx_num(cJSON_GetObjectItemCaseSensitive(geo, "aiAnalysis"), "confidence") == 75);
    assert_true(fx_num(cJSON_GetObjectItemCaseSensitive(tamper, "aiAnalysis"), "confidence") == 95);
    cJSON_Delete(alerts);
    cJSON_Delete(log);
    detector_free(d);
}

/* Records the detector cannot use are parked and the stream moves on. */
static void t_malformed_parked(void **state)
{
    struct fx *f = *state;
    struct detector *d;
    struct detector_stats st;
    struct key pk;
    char ts[ISO_LEN + 1];
    cJSON *o, *dl, *alerts;
    uint64_t cp = 0, head = 0;

    fx_product(f, "pb", BRAND, CREATED);
    /* A scan with neither a timestamp attribute nor a timestamp key. */
    o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "PK", key_product_pk(&pk, "pb"));
    cJSON_AddStringToObject(o, "SK", "SCAN#not-a-time#1");
    cJSON_AddStringToObject(o, "country", "US");
    fx_put(f, o);
    /* A scan of a product that does not exist ([D51]: no "unknown" brand). */
    fx_scan(f, "ghost", fx_ts(ts, T0, 0), "US");
    /* Then an attack that must still be seen. */
    fx_scan_full(f, "pb", fx_ts(ts, T0, 1), "US", "1.2.3.4", "x", "suspicious");
    d = fx_detector(f, 100);
    fx_run(d);
    alerts = fx_alerts(f, BRAND);
    assert_int_equal(cJSON_GetArraySize(alerts), 1);
    assert_int_equal(dlq_list(f->s, "2026-06-21", 100, &dl), 0); /* FX_NOW_MS's day */
    assert_int_equal(cJSON_GetArraySize(dl), 2);
    assert_int_equal(fx_count_eq(dl, "sk", "SCAN#not-a-time#1"), 1);
    assert_non_null(strstr(fx_str(cJSON_GetArrayItem(dl, 0), "error"), "product not found"));
    detector_get_stats(d, &st);
    assert_int_equal(st.dlq_parked, 2);
    assert_int_equal(store_checkpoint_get(f->s, DETECTOR_READER_DEFAULT, &cp), 0);
    assert_int_equal(store_stream_head(f->s, &head), 0);
    assert_true(cp == head); /* caught up, own writes included */
    cJSON_Delete(dl);
    cJSON_Delete(alerts);
    detector_free(d);
}

static void t_conflict_in_batch(void **state)
{
    struct fx *f = *state;
    struct detector *d = fx_detector(f, 100);
    size_t n = 99;
    assert_int_equal(store_batch_begin(f->s), 0);
    assert_int_equal(detector_run_once(d, &n), ERR_CONFLICT);
    assert_int_equal(n, 0);
    store_batch_abort(f->s);
    assert_int_equal(detector_run_once(d, &n), 0);
    assert_int_equal(n, 0);
    detector_free(d);
    /* Invalid reader names are refused. */
    struct detector_config c = {.reader = ""};
    assert_null(detector_new(f->s, &c));
    assert_null(detector_new(NULL, NULL));
}

/* A batch window waits for a fuller batch (reporting when to call back);
 * a full batch goes at once. */
static void t_batch_window(void **state)
{
    struct fx *f = *state;
    struct detector_config c = {.batch_size = 5, .batch_window_s = 1000, .clock_ms = fx_clock};
    struct detector *d = detector_new(f->s, &c);
    char ts[ISO_LEN + 1];
    size_t n = 99;

    fx_product(f, "pc", BRAND, CREATED);
    fx_scan(f, "pc", fx_ts(ts, T0, 0), "US");
    assert_int_equal(detector_run_once(d, &n), 0);
    assert_int_equal(n, 0);
    assert_true(detector_retry_in_ms(d) > 0); /* 1000 s scaled by 0.001 */
    for (int i = 1; i < 5; i++)
        fx_scan(f, "pc", fx_ts(ts, T0, i), "US");
    usleep((useconds_t)(detector_retry_in_ms(d) * 1000) + 1000);
    assert_int_equal(detector_run_once(d, &n), 0);
    assert_int_equal(n, 5);
    detector_free(d);
}

static struct detector *g_reenter;
static int g_reenter_rc;

static void reenter_cb(void *arg, uint64_t last_seq)
{
    size_t n = 0;
    (void)arg;
    (void)last_seq;
    if (g_reenter)
        g_reenter_rc = detector_run_once(g_reenter, &n);
}

/* A commit callback that calls the detector while it commits is refused
 * (ERR_CONFLICT) instead of nesting batches. */
static void t_reentry_refused(void **state)
{
    struct fx *f = *state;
    char ts[ISO_LEN + 1];

    fx_product(f, "pd", BRAND, CREATED);
    fx_scan(f, "pd", fx_ts(ts, T0, 0), "US");
    g_reenter = fx_detector(f, 100);
    g_reenter_rc = 0;
    store_set_commit_cb(f->s, reenter_cb, NULL);
    fx_run(g_reenter);
    store_set_commit_cb(f->s, NULL, NULL);
    assert_int_equal(g_reenter_rc, ERR_CONFLICT);
    detector_free(g_reenter);
    g_reenter = NULL;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(t_geo_cloned_tag, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_opslog_changes, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_burst, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_claim, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_claim_after_known_unclaimed, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_tampered, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_velocity, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_chain_gap, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_chain_break, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_chain_lookup, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_normal_traffic, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_multi_flags, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_malformed_parked, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_conflict_in_batch, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_batch_window, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_reentry_refused, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests_name("detect_scenarios", tests, NULL, NULL);
}
