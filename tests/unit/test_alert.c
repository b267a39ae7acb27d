/*
 * test_alert.c - the alert entity: stored item keys and attributes,
 * defaults, required fields, and the JSON object for new and legacy items.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/alert.h"
#include "util/buf.h"

#define TS "2026-06-20T15:00:00.000Z"
#define WT "2026-07-01T00:00:01.500Z"

static const char *sattr(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    assert_true(cJSON_IsString(v));
    return v->valuestring;
}

/* Renders alert_write_json(item) into a malloc'd string. */
static char *render(const cJSON *item)
{
    struct buf b = BUF_INIT(1 << 20);
    struct jsonw w;

    jsonw_init(&w, &b);
    alert_write_json(&w, item);
    assert_int_equal(jsonw_error(&w), 0);
    return buf_steal(&b);
}

static void test_item_keys(void **state)
{
    (void)state;
    struct alert_fields f = {.alert_id = "a1b2",
                             .brand_id = "brand-1",
                             .type = "product_recall",
                             .severity = "critical",
                             .product_id = "p1",
                             .details = "recalled",
                             .timestamp = TS};
    cJSON *it = alert_item_new(&f);
    assert_non_null(it);
    assert_string_equal(sattr(it, "PK"), "THREAT#brand-1#2026-06");
    assert_string_equal(sattr(it, "SK"), "ALERT#" TS "#product_recall#a1b2");
    assert_string_equal(sattr(it, "GSI1PK"), "BRAND#brand-1");
    /* No write_time: the GSI1 sort key uses the timestamp. */
    assert_string_equal(sattr(it, "GSI1SK"), "THREAT#" TS "#a1b2");
    cJSON_Delete(it);

    f.write_time = WT;
    it = alert_item_new(&f);
    assert_non_null(it);
    assert_string_equal(sattr(it, "GSI1SK"), "THREAT#" WT "#a1b2");
    /* The partition follows the triggering timestamp, not the write time. */
    assert_string_equal(sattr(it, "PK"), "THREAT#brand-1#2026-06");
    cJSON_Delete(it);
}

static void test_item_defaults(void **state)
{
    (void)state;
    struct alert_fields f = {
        .brand_id = "b", .type = "burst_scan", .severity = "medium", .timestamp = TS};
    cJSON *it = alert_item_new(&f);
    const cJSON *v;
    const char *id;

    assert_non_null(it);
    id = sattr(it, "alertId");
    assert_int_equal(strlen(id), 32);
    assert_int_equal(strspn(id, "0123456789abcdef"), 32);
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(it, "productId")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(it, "details")));
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(it, "resolved")));
    assert_string_equal(sattr(it, "source"), "api");
    assert_string_equal(sattr(it, "country"), "Unknown");
    assert_string_equal(sattr(it, "city"), "Unknown");
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(it, "aiAnalysis")));
    v = cJSON_GetObjectItemCaseSensitive(it, "anomalyFlags");
    assert_true(cJSON_IsArray(v));
    assert_int_equal(cJSON_GetArraySize(v), 0);
    v = cJSON_GetObjectItemCaseSensitive(it, "count");
    assert_true(cJSON_IsNumber(v));
    assert_true(v->valuedouble == 1);
    assert_string_equal(sattr(it, "lastSeen"), TS);
    /* The SK ends with the generated id. */
    assert_non_null(strstr(sattr(it, "SK"), id));

    /* Two items never share an id. */
    cJSON *it2 = alert_item_new(&f);
    assert_non_null(it2);
    assert_string_not_equal(sattr(it2, "alertId"), id);
    cJSON_Delete(it2);
    cJSON_Delete(it);
}

static void test_item_attr_order_and_copy(void **state)
{
    (void)state;
    static const char *const order[] = {
        "PK",       "SK",         "GSI1PK",       "GSI1SK",    "alertId",  "brandId", "type",
        "severity", "productId",  "details",      "timestamp", "resolved", "source",  "country",
        "city",     "aiAnalysis", "anomalyFlags", "count",     "lastSeen"};
    const char *flags[] = {"geographic_anomaly", "burst_scan"};
    cJSON *ai = cJSON_Parse("{\"severity\":\"HIGH\",\"confidence\":80}");
    struct alert_fields f = {.alert_id = "x",
                             .brand_id = "b",
                             .type = "geographic_anomaly",
                             .severity = "high",
                             .timestamp = TS,
                             .source = "detector",
                             .country = "CH",
                             .city = "Geneva",
                             .ai_analysis = ai,
                             .flags = flags,
                             .nflags = 2,
                             .count = 4,
                             .last_seen = WT};
    cJSON *it = alert_item_new(&f);
    const cJSON *a;
    size_t i = 0;

    assert_non_null(it);
    cJSON_ArrayForEach(a, it)
    {
        assert_true(i < sizeof order / sizeof order[0]);
        assert_string_equal(a->string, order[i]);
        i++;
    }
    assert_int_equal(i, sizeof order / sizeof order[0]);
    /* aiAnalysis is a deep copy. */
    cJSON_ReplaceItemInObject(ai, "severity", cJSON_CreateString("LOW"));
    cJSON_Delete(ai);
    char *s = render(it);
    assert_string_equal(
        s, "{\"alertId\":\"x\",\"brandId\":\"b\",\"type\":\"geographic_anomaly\",\"severity\":"
           "\"high\",\"productId\":null,\"details\":null,\"timestamp\":\"" TS
           "\",\"resolved\":false,\"source\":\"detector\",\"country\":\"CH\",\"city\":"
           "\"Geneva\",\"aiAnalysis\":{\"severity\":\"HIGH\",\"confidence\":80},"
           "\"anomalyFlags\":[\"geographic_anomaly\",\"burst_scan\"],\"count\":4,\"lastSeen\":"
           "\"" WT "\"}");
    free(s);
    cJSON_Delete(it);
}

static void test_item_required(void **state)
{
    (void)state;
    struct alert_fields ok = {.brand_id = "b", .type = "t", .severity = "low", .timestamp = TS};
    struct alert_fields f;

    assert_null(alert_item_new(NULL));
    f = ok;
    f.brand_id = NULL;
    assert_null(alert_item_new(&f));
    f = ok;
    f.brand_id = "";
    assert_null(alert_item_new(&f));
    f = ok;
    f.type = NULL;
    assert_null(alert_item_new(&f));
    f = ok;
    f.severity = NULL;
    assert_null(alert_item_new(&f));
    f = ok;
    f.timestamp = NULL;
    assert_null(alert_item_new(&f));
    f = ok;
    f.timestamp = "2026-06-20";
    assert_null(alert_item_new(&f));
    f = ok;
    f.write_time = "yesterday";
    assert_null(alert_item_new(&f));
    /* '#' would alias another key. */
    f = ok;
    f.brand_id = "b#2026-01";
    assert_null(alert_item_new(&f));
    f = ok;
    f.type = "a#b";
    assert_null(alert_item_new(&f));
    cJSON *it = alert_item_new(&ok);
    assert_non_null(it);
    cJSON_Delete(it);
}

static void test_json_new_item_roundtrip(void **state)
{
    (void)state;
    struct alert_fields f = {.alert_id = "0123456789abcdef0123456789abcdef",
                             .brand_id = "b",
                             .type = "product_recall",
                             .severity = "critical",
                             .product_id = "p9",
                             .details = "Product \"X\" recalled: bad batch",
                             .timestamp = TS};
    cJSON *it = alert_item_new(&f);
    char *s = render(it);
    assert_string_equal(
        s,
        "{\"alertId\":\"0123456789abcdef0123456789abcdef\",\"brandId\":\"b\",\"type\":"
        "\"product_recall\",\"severity\":\"critical\",\"productId\":\"p9\",\"details\":"
        "\"Product \\\"X\\\" recalled: bad batch\",\"timestamp\":\"" TS
        "\",\"resolved\":false,\"source\":\"api\",\"country\":\"Unknown\",\"city\":"
        "\"Unknown\",\"aiAnalysis\":null,\"anomalyFlags\":[],\"count\":1,\"lastSeen\":\"" TS "\"}");
    free(s);
    cJSON_Delete(it);
}

static void test_json_legacy_items(void **state)
{
    (void)state;
    /* E14: the original API routes' flat format, no source/alertId/etc. */
    cJSON *e14 = cJSON_Parse("{\"PK\":\"THREAT#b\",\"SK\":\"ALERT#" TS "\",\"GSI1PK\":"
                             "\"BRAND#b\",\"GSI1SK\":\"THREAT#" TS "\",\"brandId\":\"b\","
                             "\"type\":\"ownership_dispute\",\"severity\":\"critical\","
                             "\"productId\":\"p\",\"details\":\"d\",\"timestamp\":\"" TS
                             "\",\"resolved\":false}");
    char *s = render(e14);
    assert_string_equal(
        s, "{\"alertId\":null,\"brandId\":\"b\",\"type\":\"ownership_dispute\",\"severity\":"
           "\"critical\",\"productId\":\"p\",\"details\":\"d\",\"timestamp\":\"" TS
           "\",\"resolved\":false,\"source\":\"api\",\"country\":null,\"city\":null,"
           "\"aiAnalysis\":null,\"anomalyFlags\":[],\"count\":1,\"lastSeen\":\"" TS "\"}");
    free(s);
    cJSON_Delete(e14);

    /* E15: the Lambda's bucketed format, resolved later, no productId. */
    cJSON *e15 = cJSON_Parse("{\"brandId\":\"b\",\"type\":\"chain_gap\",\"severity\":\"medium\","
                             "\"details\":\"gap\",\"timestamp\":\"" TS "\",\"resolved\":true,"
                             "\"source\":\"lambda-stream\",\"aiAnalysis\":{\"risk_level\":"
                             "\"MEDIUM\"},\"count\":0,\"anomalyFlags\":\"junk\"}");
    s = render(e15);
    assert_string_equal(
        s, "{\"alertId\":null,\"brandId\":\"b\",\"type\":\"chain_gap\",\"severity\":\"medium\","
           "\"productId\":null,\"details\":\"gap\",\"timestamp\":\"" TS
           "\",\"resolved\":true,\"source\":\"lambda-stream\",\"country\":null,\"city\":null,"
           "\"aiAnalysis\":{\"risk_level\":\"MEDIUM\"},\"anomalyFlags\":[],\"count\":1,"
           "\"lastSeen\":\"" TS "\"}");
    free(s);
    cJSON_Delete(e15);

    /* An empty object still gives the full shape. */
    cJSON *empty = cJSON_CreateObject();
    s = render(empty);
    assert_string_equal(s, "{\"alertId\":null,\"brandId\":null,\"type\":null,\"severity\":null,"
                           "\"productId\":null,\"details\":null,\"timestamp\":null,\"resolved\":"
                           "false,\"source\":\"api\",\"country\":null,\"city\":null,"
                           "\"aiAnalysis\":null,\"anomalyFlags\":[],\"count\":1,\"lastSeen\":"
                           "null}");
    free(s);
    cJSON_Delete(empty);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_item_keys),
        cmocka_unit_test(test_item_defaults),
        cmocka_unit_test(test_item_attr_order_and_copy),
        cmocka_unit_test(test_item_required),
        cmocka_unit_test(test_json_new_item_roundtrip),
        cmocka_unit_test(test_json_legacy_items),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
