/*
 * test_opslog.c - ops-log items, the merge of daily partitions, and the
 * statistics of /api/ops-log (D36 fix, JavaScript Math.round, key order).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/opslog.h"
#include "util/buf.h"

#define TS "2026-06-20T15:00:00.000Z"

static const char *sattr(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    assert_true(cJSON_IsString(v));
    return v->valuestring;
}

static void test_item(void **state)
{
    (void)state;
    const char *flags[] = {"burst_scan"};
    struct opslog_fields f = {.id = "ab12cd34",
                              .agent = "threat_detector",
                              .trigger = "scan_event",
                              .product_id = "p1",
                              .brand_id = "b1",
                              .flags = flags,
                              .nflags = 1,
                              .ai_severity = "MEDIUM",
                              .ai_attack_vector = "burst_scan",
                              .has_confidence = true,
                              .ai_confidence = 50,
                              .latency_ms = 3.5,
                              .timestamp = TS};
    cJSON *it = opslog_item_new(&f);
    struct buf b = BUF_INIT(1 << 16);
    struct jsonw w;

    assert_non_null(it);
    assert_string_equal(sattr(it, "PK"), "OPS_LOG#2026-06-20");
    assert_string_equal(sattr(it, "SK"), TS "#threat_detector#ab12cd34");
    assert_string_equal(sattr(it, "GSI1PK"), "OPS_LOG");
    assert_string_equal(sattr(it, "GSI1SK"), TS);
    jsonw_init(&w, &b);
    opslog_write_entry_json(&w, it);
    assert_string_equal(buf_cstr(&b),
                        "{\"agent\":\"threat_detector\",\"trigger\":\"scan_event\",\"productId\":"
                        "\"p1\",\"brandId\":\"b1\",\"anomalyFlags\":[\"burst_scan\"],"
                        "\"geminiModel\":\"rules\",\"aiSeverity\":\"MEDIUM\",\"aiAttackVector\":"
                        "\"burst_scan\",\"aiConfidence\":50,\"latencyMs\":3.5,\"timestamp\":\"" TS
                        "\"}");
    cJSON_Delete(it);

    /* Generated ids keep same-millisecond entries apart; no confidence -> null. */
    f.id = NULL;
    f.has_confidence = false;
    f.model = "gemini-2.5-flash";
    cJSON *a = opslog_item_new(&f), *c = opslog_item_new(&f);
    assert_non_null(a);
    assert_non_null(c);
    assert_string_not_equal(sattr(a, "SK"), sattr(c, "SK"));
    assert_int_equal(strlen(sattr(a, "SK")), strlen(TS "#threat_detector#") + 8);
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(a, "aiConfidence")));
    assert_string_equal(sattr(a, "geminiModel"), "gemini-2.5-flash");
    cJSON_Delete(a);
    cJSON_Delete(c);

    /* Required fields. */
    f.agent = NULL;
    assert_null(opslog_item_new(&f));
    f.agent = "bad#agent";
    assert_null(opslog_item_new(&f));
    f.agent = "x";
    f.timestamp = "not a time";
    assert_null(opslog_item_new(&f));
    buf_free(&b);
}

static void test_entry_missing_attrs(void **state)
{
    (void)state;
    cJSON *it = cJSON_Parse("{\"agent\":\"chain_analyzer\",\"timestamp\":\"" TS "\"}");
    struct buf b = BUF_INIT(1 << 16);
    struct jsonw w;

    jsonw_init(&w, &b);
    opslog_write_entry_json(&w, it);
    assert_string_equal(buf_cstr(&b),
                        "{\"agent\":\"chain_analyzer\",\"trigger\":null,\"productId\":null,"
                        "\"brandId\":null,\"anomalyFlags\":null,\"geminiModel\":null,"
                        "\"aiSeverity\":null,\"aiAttackVector\":null,\"aiConfidence\":null,"
                        "\"latencyMs\":null,\"timestamp\":\"" TS "\"}");
    buf_free(&b);
    cJSON_Delete(it);
}

/* Array of {"timestamp":ts,"n":i} (ts NULL: no timestamp). */
static cJSON *mk_items(const char *const *ts, size_t n)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        if (ts[i])
            cJSON_AddStringToObject(o, "timestamp", ts[i]);
        cJSON_AddNumberToObject(o, "n", (double)i);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

static void test_sort_trim(void **state)
{
    (void)state;
    /* Today's bucket then yesterday's, as the reader appends them. */
    const char *ts[] = {
        "2026-06-20T10:00:00.000Z", "2026-06-20T08:00:00.000Z", NULL,
        "2026-06-19T23:00:00.000Z", "2026-06-20T10:00:00.000Z", "2026-06-20T12:00:00.000Z"};
    cJSON *arr = mk_items(ts, 6);
    const int want[] = {5, 0, 4, 1, 3, 2};
    const cJSON *it;
    int i = 0;

    opslog_sort_trim(arr, 100);
    assert_int_equal(cJSON_GetArraySize(arr), 6);
    cJSON_ArrayForEach(it, arr)
    {
        assert_int_equal((int)cJSON_GetObjectItemCaseSensitive(it, "n")->valuedouble, want[i]);
        i++;
    }
    /* Trimming keeps the newest. */
    opslog_sort_trim(arr, 2);
    assert_int_equal(cJSON_GetArraySize(arr), 2);
    assert_int_equal(
        (int)cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(arr, 1), "n")->valuedouble, 0);
    /* Appending after a trim still works (list links are consistent). */
    cJSON_AddItemToArray(arr, cJSON_CreateObject());
    assert_int_equal(cJSON_GetArraySize(arr), 3);
    opslog_sort_trim(arr, 0);
    assert_int_equal(cJSON_GetArraySize(arr), 0);
    cJSON_Delete(arr);

    /* Empty and non-array inputs are left alone. */
    arr = cJSON_CreateArray();
    opslog_sort_trim(arr, 5);
    assert_int_equal(cJSON_GetArraySize(arr), 0);
    cJSON_Delete(arr);
    opslog_sort_trim(NULL, 5);
}

static void test_js_round(void **state)
{
    (void)state;
    assert_true(opslog_js_round(2.5) == 3);
    assert_true(opslog_js_round(-2.5) == -2);
    assert_true(opslog_js_round(1.4999999) == 1);
    assert_true(opslog_js_round(63.333) == 63);
    assert_true(opslog_js_round(0.49999999999999994) == 0);
    assert_true(opslog_js_round(-0.4) == 0);
    assert_true(opslog_js_round(4503599627370497.0) == 4503599627370497.0);
    assert_true(isnan(opslog_js_round(NAN)));
}

static char *stats_json(const char *entries_json, struct opslog_stats *st)
{
    cJSON *items = cJSON_Parse(entries_json);
    struct buf b = BUF_INIT(1 << 16);
    struct jsonw w;

    assert_non_null(items);
    opslog_stats_compute(items, st);
    jsonw_init(&w, &b);
    opslog_write_stats_json(&w, st);
    assert_int_equal(jsonw_error(&w), 0);
    cJSON_Delete(items);
    return buf_steal(&b);
}

static void test_stats_d36(void **state)
{
    (void)state;
    struct opslog_stats st;
    /* Latencies 100, 0 (ignored), absent, 50 -> 75.  Confidences 80, 60,
     * 50 over three entries -> 63 (the original divided by the two
     * latencies: 95). */
    char *s =
        stats_json("[{\"agent\":\"threat_detector\",\"aiSeverity\":\"HIGH\","
                   "\"aiAttackVector\":\"tag_cloning\",\"latencyMs\":100,\"aiConfidence\":80},"
                   "{\"agent\":\"threat_detector\",\"aiSeverity\":\"HIGH\",\"latencyMs\":0,"
                   "\"aiConfidence\":60},"
                   "{\"agent\":\"chain_analyzer\",\"aiSeverity\":\"\",\"aiAttackVector\":"
                   "\"chain_gap\",\"aiConfidence\":50},"
                   "{\"aiSeverity\":\"MEDIUM\",\"latencyMs\":50,\"aiConfidence\":null}]",
                   &st);
    assert_int_equal(st.total, 4);
    assert_true(st.avg_latency_ms == 75);
    assert_true(st.avg_confidence == 63);
    assert_int_equal(opslog_tally_get(&st.agents, "threat_detector"), 2);
    assert_int_equal(opslog_tally_get(&st.agents, "chain_analyzer"), 1);
    assert_int_equal(opslog_tally_get(&st.agents, "unknown"), 1);
    assert_int_equal(opslog_tally_get(&st.severities, ""), 0);
    assert_string_equal(s, "{\"totalOperations\":4,\"agentBreakdown\":{\"threat_detector\":2,"
                           "\"chain_analyzer\":1,\"unknown\":1},\"severityBreakdown\":{\"HIGH\":2,"
                           "\"MEDIUM\":1},\"attackVectorBreakdown\":{\"tag_cloning\":1,"
                           "\"chain_gap\":1},\"avgLatencyMs\":75,\"avgConfidence\":63,"
                           "\"geminiModel\":\"gemini-2.5-flash\"}");
    free(s);
    opslog_stats_free(&st);

    /* A zero confidence counts in the denominator; halves round up. */
    s = stats_json("[{\"agent\":\"a\",\"aiConfidence\":0,\"latencyMs\":1},"
                   "{\"agent\":\"a\",\"aiConfidence\":3,\"latencyMs\":2}]",
                   &st);
    assert_true(st.avg_confidence == 2); /* 1.5 -> 2 */
    assert_true(st.avg_latency_ms == 2); /* 1.5 -> 2 */
    free(s);
    opslog_stats_free(&st);
}

static void test_stats_empty_and_key_order(void **state)
{
    (void)state;
    struct opslog_stats st;
    char *s = stats_json("[]", &st);
    assert_string_equal(s, "{\"totalOperations\":0,\"agentBreakdown\":{},\"severityBreakdown\":{},"
                           "\"attackVectorBreakdown\":{},\"avgLatencyMs\":0,\"avgConfidence\":0,"
                           "\"geminiModel\":\"gemini-2.5-flash\"}");
    free(s);
    opslog_stats_free(&st);

    /* JavaScript puts array-index keys first, ascending; "01" is not one. */
    s = stats_json("[{\"agent\":\"z\"},{\"agent\":\"10\"},{\"agent\":\"01\"},{\"agent\":\"2\"},"
                   "{\"agent\":\"10\"},{\"agent\":\"4294967295\"},{\"agent\":\"0\"}]",
                   &st);
    assert_non_null(strstr(s, "\"agentBreakdown\":{\"0\":1,\"2\":1,\"10\":2,\"z\":1,\"01\":1,"
                              "\"4294967295\":1}"));
    free(s);
    opslog_stats_free(&st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_item),      cmocka_unit_test(test_entry_missing_attrs),
        cmocka_unit_test(test_sort_trim), cmocka_unit_test(test_js_round),
        cmocka_unit_test(test_stats_d36), cmocka_unit_test(test_stats_empty_and_key_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
