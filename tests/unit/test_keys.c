/*
 * test_keys.c - keys.c: every builder's exact text, round trips through
 * the parsers, NULL on overflow or bad components, family classification.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "core/keys.h"
#include "util/err.h"

#define TS    "2026-06-20T15:00:00.000Z"
#define BRAND "5019622c-9860-4b83-a5c6-adb82ebd0412"
#define PID   "e084595c97320cfcc85309943f345760"

static void test_schema_builders(void **state)
{
    (void)state;
    struct key k;
    assert_string_equal(key_brand_pk(&k, BRAND), "BRAND#" BRAND);
    assert_string_equal(key_brand_index_sk(&k, TS, BRAND), "BRAND#" TS "#" BRAND);
    assert_string_equal(key_webhook_sk(&k, "w1"), "WEBHOOK#w1");
    assert_string_equal(key_integration_sk(&k, "i1"), "INTEGRATION#i1");
    assert_string_equal(key_product_pk(&k, PID), "PRODUCT#" PID);
    assert_string_equal(key_product_gsi1sk(&k, TS), "PRODUCT#" TS);
    assert_string_equal(key_event_sk(&k, TS, "shipped", 7), "EVENT#" TS "#shipped#00000007");
    assert_string_equal(key_event_sk(&k, TS, "sold", 99999999), "EVENT#" TS "#sold#99999999");
    assert_string_equal(key_scan_sk(&k, TS, "0a1b2c3d"), "SCAN#" TS "#0a1b2c3d");
    assert_string_equal(key_scan_lo(&k, TS), "SCAN#" TS);
    assert_string_equal(key_scan_hi(&k, TS), "SCAN#" TS "~");
    assert_string_equal(key_scan_lo(&k, ""), "SCAN#");
    assert_string_equal(key_dispute_sk(&k, TS, "ab12"), "DISPUTE#" TS "#ab12");
    assert_string_equal(key_verify_pk(&k, "wfPHybaFV3_a"), "VERIFY#wfPHybaFV3_a");
    assert_string_equal(key_hash_pk(&k, "abc"), "HASH#abc");
    assert_string_equal(key_product_index_sk(&k, TS, PID), "PRODUCT#" TS "#" PID);
    assert_string_equal(key_threat_pk(&k, BRAND, TS), "THREAT#" BRAND "#2026-06");
    assert_string_equal(key_threat_legacy_pk(&k, BRAND), "THREAT#" BRAND);
    assert_string_equal(key_alert_sk(&k, TS, "burst_scan", "a1"), "ALERT#" TS "#burst_scan#a1");
    assert_string_equal(key_threat_gsi1sk(&k, TS, "a1"), "THREAT#" TS "#a1");
    assert_string_equal(key_opslog_pk(&k, TS), "OPS_LOG#2026-06-20");
    assert_string_equal(key_opslog_pk_day(&k, "2026-06-21"), "OPS_LOG#2026-06-21");
    assert_string_equal(key_opslog_sk(&k, TS, "threat_detector", "x9"), TS "#threat_detector#x9");
}

static void test_project_builders(void **state)
{
    (void)state;
    struct key k;
    assert_string_equal(key_apikey_pk(&k, "ff00"), "APIKEY#ff00");
    assert_string_equal(key_ingestkey_pk(&k, "ee11"), "INGESTKEY#ee11");
    assert_string_equal(key_idem_sk(&k, "d1"), "IDEM#d1");
    assert_string_equal(key_alert_dedup_sk(&k, "burst_scan", "2026-06-20T15"),
                        "ALERTKEY#burst_scan#2026-06-20T15");
    assert_string_equal(key_product_name_sk(&k, "n1"), "PNAME#n1");
    assert_string_equal(key_delivery_pk(&k, "wh"), "DELIVERY#wh");
    assert_string_equal(key_delivery_sk(&k, TS, "d7"), TS "#d7");
    assert_string_equal(key_audit_pk(&k, TS), "AUDIT#2026-06-20");
    assert_string_equal(key_audit_pk_day(&k, "2026-01-02"), "AUDIT#2026-01-02");
    assert_string_equal(key_audit_sk(&k, TS, "id"), TS "#id");
    assert_string_equal(key_dlq_pk(&k, TS), "DLQ#2026-06-20");
    assert_string_equal(key_dlq_sk(&k, TS, 42), TS "#00000000000000000042");
    assert_string_equal(key_dlq_sk(&k, TS, UINT64_MAX), TS "#18446744073709551615");
    assert_string_equal(key_lease_pk(&k, "shard-0"), "LEASE#shard-0");
    assert_string_equal(key_checkpoint_pk(&k, "detector"), "CHECKPOINT#detector");
    assert_string_equal(key_classify_job_pk(&k, "a1b2"), "CLASSIFY#a1b2");
    assert_string_equal(key_classify_job_gsi1sk(&k, TS, "a1b2"), TS "#a1b2");
    assert_string_equal(KEY_SK_CLASSIFY_JOB, "JOB");
    assert_string_equal(KEY_GSI1PK_CLASSIFY_PENDING, "CLASSIFY_PENDING");
    /* an id or time with '#' could alias another job's key */
    assert_null(key_classify_job_pk(&k, "a#b"));
    assert_null(key_classify_job_pk(&k, ""));
    assert_null(key_classify_job_gsi1sk(&k, TS, "a#b"));
    assert_null(key_classify_job_gsi1sk(&k, "", "a1"));
    assert_null(key_classify_job_gsi1sk(&k, NULL, "a1"));
}

static void test_rejects(void **state)
{
    (void)state;
    struct key k;
    char big[KEY_MAX + 8];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';

    /* overflow */
    assert_null(key_brand_pk(&k, big));
    assert_null(key_event_sk(&k, TS, big, 1));
    size_t fit = KEY_MAX - 1 - strlen("BRAND#");
    big[fit] = '\0'; /* exactly KEY_MAX-1 chars in total */
    assert_non_null(key_brand_pk(&k, big));
    assert_int_equal(strlen(k.s), KEY_MAX - 1);
    big[fit] = 'x';
    big[fit + 1] = '\0'; /* one too many */
    assert_null(key_brand_pk(&k, big));
    /* empty, NULL, '#' in a component */
    assert_null(key_brand_pk(&k, ""));
    assert_null(key_brand_pk(&k, NULL));
    assert_null(key_brand_pk(&k, "a#b"));
    assert_null(key_alert_sk(&k, TS, "t#x", "id"));
    assert_null(key_scan_hi(&k, "x#"));
    /* seq beyond 8 digits */
    assert_null(key_event_sk(&k, TS, "sold", 100000000));
    /* timestamps too short or malformed for buckets */
    assert_null(key_threat_pk(&k, BRAND, "2026-0"));
    assert_null(key_threat_pk(&k, BRAND, "abcd-ef"));
    assert_null(key_opslog_pk(&k, "2026-06-2"));
    assert_null(key_audit_pk(&k, NULL));
    assert_null(key_dlq_pk(&k, "20260620"));
}

static void test_parsers(void **state)
{
    (void)state;
    struct key k;
    char id[64], ts[25], type[32], month[8], day[11], aid[16];
    uint32_t seq;

    assert_int_equal(key_parse_brand_pk(key_brand_pk(&k, BRAND), id, sizeof id), 0);
    assert_string_equal(id, BRAND);
    assert_int_equal(key_parse_product_pk(key_product_pk(&k, PID), id, sizeof id), 0);
    assert_string_equal(id, PID);
    assert_int_equal(key_parse_product_pk("PRODUCT#", id, sizeof id), ERR_INVALID);
    assert_int_equal(key_parse_product_pk("BRAND#x", id, sizeof id), ERR_INVALID);
    assert_int_equal(key_parse_product_pk("PRODUCT#a#b", id, sizeof id), ERR_INVALID);
    assert_int_equal(key_parse_brand_pk("BRAND#abcdef", id, 4), ERR_INVALID); /* too small */

    assert_int_equal(
        key_parse_event_sk(key_event_sk(&k, TS, "shipped", 12), ts, type, sizeof type, &seq), 0);
    assert_string_equal(ts, TS);
    assert_string_equal(type, "shipped");
    assert_int_equal(seq, 12);
    assert_int_equal(key_parse_event_sk("EVENT#" TS "#received", ts, type, sizeof type, &seq), 0);
    assert_string_equal(type, "received");
    assert_int_equal(seq, 0);
    assert_int_equal(key_parse_event_sk("EVENT#" TS, ts, type, sizeof type, &seq), ERR_INVALID);
    assert_int_equal(key_parse_event_sk("EVENT##x", ts, type, sizeof type, &seq), ERR_INVALID);
    assert_int_equal(
        key_parse_event_sk("EVENT#2026-06-20T15:00:00.000Z1#x", ts, type, sizeof type, &seq),
        ERR_INVALID); /* ts longer than 24 */
    assert_int_equal(key_parse_event_sk("SCAN#" TS "#x", ts, type, sizeof type, &seq), ERR_INVALID);

    assert_int_equal(key_parse_scan_sk(key_scan_sk(&k, TS, "0a1b2c3d"), ts), 0);
    assert_string_equal(ts, TS);
    assert_int_equal(key_parse_scan_sk("SCAN#" TS, ts), 0);
    assert_string_equal(ts, TS);
    assert_int_equal(key_parse_scan_sk("SCAN#" TS "#", ts), ERR_INVALID);
    assert_int_equal(key_parse_scan_sk("SCAN#", ts), ERR_INVALID);

    assert_int_equal(key_parse_threat_pk(key_threat_pk(&k, BRAND, TS), id, sizeof id, month), 0);
    assert_string_equal(id, BRAND);
    assert_string_equal(month, "2026-06");
    assert_int_equal(key_parse_threat_pk(key_threat_legacy_pk(&k, BRAND), id, sizeof id, month), 0);
    assert_string_equal(id, BRAND);
    assert_string_equal(month, "");
    assert_int_equal(key_parse_threat_pk("THREAT#b#2026-6", id, sizeof id, month), ERR_INVALID);
    assert_int_equal(key_parse_threat_pk("THREAT##2026-06", id, sizeof id, month), ERR_INVALID);

    assert_int_equal(key_parse_alert_sk(key_alert_sk(&k, TS, "chain_gap", "abc"), ts, type,
                                        sizeof type, aid, sizeof aid),
                     0);
    assert_string_equal(ts, TS);
    assert_string_equal(type, "chain_gap");
    assert_string_equal(aid, "abc");
    assert_int_equal(
        key_parse_alert_sk("ALERT#" TS "#burst_scan", ts, type, sizeof type, aid, sizeof aid), 0);
    assert_string_equal(type, "burst_scan");
    assert_string_equal(aid, "");
    assert_int_equal(key_parse_alert_sk("ALERT#" TS, ts, type, sizeof type, aid, sizeof aid), 0);
    assert_string_equal(type, "");
    assert_int_equal(
        key_parse_alert_sk("ALERT#" TS "#t#i#j", ts, type, sizeof type, aid, sizeof aid),
        ERR_INVALID);

    assert_int_equal(
        key_parse_threat_gsi1sk(key_threat_gsi1sk(&k, TS, "a1b2"), ts, aid, sizeof aid), 0);
    assert_string_equal(ts, TS);
    assert_string_equal(aid, "a1b2");
    assert_int_equal(key_parse_threat_gsi1sk("THREAT#" TS, ts, aid, sizeof aid), ERR_INVALID);
    assert_int_equal(key_parse_threat_gsi1sk("THREAT#" TS "#", ts, aid, sizeof aid), ERR_INVALID);
    assert_int_equal(key_parse_threat_gsi1sk("THREAT#" TS "#a#b", ts, aid, sizeof aid),
                     ERR_INVALID);
    assert_int_equal(key_parse_threat_gsi1sk("PRODUCT#" TS "#a", ts, aid, sizeof aid), ERR_INVALID);
    assert_string_equal(key_threat_gsi1sk_lo(&k, TS), "THREAT#" TS);
    assert_null(key_threat_gsi1sk_lo(&k, "a#b"));
    assert_string_equal(key_threat_gsi1sk_hi(&k), "THREAT#~");

    assert_int_equal(key_parse_opslog_pk(key_opslog_pk(&k, TS), day), 0);
    assert_string_equal(day, "2026-06-20");
    assert_int_equal(key_parse_opslog_pk("OPS_LOG", day), ERR_INVALID);
    assert_int_equal(key_parse_opslog_pk("OPS_LOG#2026-06-2x", day), ERR_INVALID);

    assert_string_equal(key_after("PRODUCT#abc", KEY_PFX_PRODUCT), "abc");
    assert_null(key_after("PRODUCX#abc", KEY_PFX_PRODUCT));
}

/* Keys of one partition sort in the order the store relies on. */
static void test_ordering(void **state)
{
    (void)state;
    struct key a, b;
    key_event_sk(&a, TS, "shipped", 9);
    key_event_sk(&b, TS, "shipped", 10);
    assert_true(strcmp(a.s, b.s) < 0);
    key_scan_sk(&a, TS, "ffffffff");
    key_scan_hi(&b, TS);
    assert_true(strcmp(a.s, b.s) < 0);
    key_scan_lo(&b, TS);
    assert_true(strcmp(b.s, a.s) < 0);
    key_dlq_sk(&a, TS, 9);
    key_dlq_sk(&b, TS, 10);
    assert_true(strcmp(a.s, b.s) < 0);
}

static void test_families(void **state)
{
    (void)state;
    struct key k;
    assert_int_equal(key_family_of(key_product_pk(&k, PID)), KF_PRODUCT);
    assert_int_equal(key_family_of(key_verify_pk(&k, "c")), KF_VERIFY);
    assert_int_equal(key_family_of(key_hash_pk(&k, "h")), KF_HASH);
    assert_int_equal(key_family_of(key_brand_pk(&k, BRAND)), KF_BRAND);
    assert_int_equal(key_family_of(key_threat_pk(&k, BRAND, TS)), KF_THREAT);
    assert_int_equal(key_family_of(key_threat_legacy_pk(&k, BRAND)), KF_THREAT_LEGACY);
    assert_int_equal(key_family_of(key_opslog_pk(&k, TS)), KF_OPS_LOG);
    assert_int_equal(key_family_of(KEY_PK_OPS_LOG_LEGACY), KF_OPS_LOG_LEGACY);
    assert_int_equal(key_family_of(KEY_PK_BRAND_INDEX), KF_BRAND_INDEX);
    assert_int_equal(key_family_of(KEY_PK_PRODUCT_INDEX), KF_PRODUCT_INDEX);
    assert_int_equal(key_family_of(KEY_PK_AUDIT_LOG_LEGACY), KF_AUDIT_LOG);
    assert_int_equal(key_family_of(key_audit_pk(&k, TS)), KF_AUDIT);
    assert_int_equal(key_family_of(key_apikey_pk(&k, "a")), KF_APIKEY);
    assert_int_equal(key_family_of(key_ingestkey_pk(&k, "a")), KF_INGESTKEY);
    assert_int_equal(key_family_of(key_dlq_pk(&k, TS)), KF_DLQ);
    assert_int_equal(key_family_of(key_lease_pk(&k, "s")), KF_LEASE);
    assert_int_equal(key_family_of(key_delivery_pk(&k, "w")), KF_DELIVERY);
    assert_int_equal(key_family_of(key_checkpoint_pk(&k, "r")), KF_CHECKPOINT);
    assert_int_equal(key_family_of(key_classify_job_pk(&k, "a")), KF_CLASSIFY);
    assert_int_equal(key_family_of("CLASSIFY#"), KF_OTHER);
    assert_int_equal(key_family_of("NOPE#1"), KF_OTHER);
    assert_int_equal(key_family_of("PRODUCT#"), KF_OTHER);
    assert_int_equal(key_family_of("BRAND_INDEXX"), KF_OTHER);
    assert_int_equal(key_family_of(NULL), KF_OTHER);

    for (int f = 0; f < KF_COUNT; f++) {
        const char *p = key_family_pattern((enum key_family)f);
        assert_non_null(p);
        assert_true(strlen(p) > 0);
    }
    assert_string_equal(key_family_pattern(KF_THREAT), "THREAT#<brand>#<YYYY-MM>");
    assert_string_equal(key_family_pattern(KF_CLASSIFY), "CLASSIFY#<alertId>");
    assert_string_equal(key_family_pattern(KF_COUNT), "other");
}

/* The items whose change records carry keys only. */
static void test_stream_keys_only(void **state)
{
    struct key pk, sk;
    (void)state;
    assert_true(key_stream_keys_only(key_opslog_pk_day(&pk, "2026-06-20"),
                                     "2026-06-20T00:00:00.000Z#threat_detector#7-0"));
    assert_true(key_stream_keys_only(key_product_pk(&pk, "p1"), KEY_SK_DETSTATE));
    assert_true(key_stream_keys_only(key_product_pk(&pk, "p1"),
                                     key_alert_dedup_sk(&sk, "burst_scan", "2026-06-20T08")));
    /* Everything a stream reader looks into keeps its image. */
    assert_false(
        key_stream_keys_only(key_product_pk(&pk, "p1"), "SCAN#2026-06-20T08:00:00.000Z#a"));
    assert_false(key_stream_keys_only(key_product_pk(&pk, "p1"), "EVENT#x"));
    assert_false(key_stream_keys_only(key_product_pk(&pk, "p1"), KEY_SK_META));
    assert_false(
        key_stream_keys_only("THREAT#b#2026-06", "ALERT#2026-06-20T08:00:00.000Z#burst_scan"));
    assert_false(key_stream_keys_only(KEY_PK_OPS_LOG_LEGACY, "x"));
    assert_false(key_stream_keys_only(NULL, KEY_SK_DETSTATE));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schema_builders),  cmocka_unit_test(test_project_builders),
        cmocka_unit_test(test_rejects),          cmocka_unit_test(test_parsers),
        cmocka_unit_test(test_ordering),         cmocka_unit_test(test_families),
        cmocka_unit_test(test_stream_keys_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
