/*
 * test_brand.c - brand items (E1/E2/E3) and JSON shapes, and the scan
 * location aggregation used by the brand and scan routes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/brand.h"
#include "core/scan.h"
#include "util/buf.h"

#define ID "5019622c-9860-4b83-a5c6-adb82ebd0412"
#define TS "2026-06-20T14:00:00.000Z"

static const struct brand_fields luxe = {.id = ID,
                                         .name = "Luxe Watches",
                                         .domain = "luxewatches.com",
                                         .industry = "fashion",
                                         .created_at = TS};

static char *canon_of(const cJSON *item)
{
    struct buf b = BUF_INIT(1 << 20);
    struct jsonw w;

    jsonw_init(&w, &b);
    jsonw_json(&w, item);
    assert_int_equal(jsonw_error(&w), 0);
    return buf_steal(&b);
}

static void test_items(void **state)
{
    (void)state;
    cJSON *p = brand_profile_item_new(&luxe);
    cJSON *s = brand_stats_item_new(ID);
    cJSON *x = brand_index_item_new(&luxe);
    char *t;

    assert_non_null(p);
    assert_non_null(s);
    assert_non_null(x);
    t = canon_of(p);
    assert_string_equal(t, "{\"PK\":\"BRAND#" ID "\",\"SK\":\"PROFILE\",\"GSI1PK\":\"BRAND#" ID
                           "\",\"GSI1SK\":\"PROFILE\",\"id\":\"" ID "\",\"name\":\"Luxe Watches\","
                           "\"domain\":\"luxewatches.com\",\"industry\":\"fashion\",\"logoUrl\":"
                           "null,\"plan\":\"free\",\"createdAt\":\"" TS "\",\"productCount\":0,"
                           "\"scanCount\":0}");
    free(t);
    t = canon_of(s);
    assert_string_equal(t, "{\"PK\":\"BRAND#" ID "\",\"SK\":\"STATS\",\"productCount\":0,"
                           "\"scanCount\":0,\"threatCount\":0}");
    free(t);
    t = canon_of(x);
    assert_string_equal(t,
                        "{\"PK\":\"BRAND_INDEX\",\"SK\":\"BRAND#" TS "#" ID "\",\"brandId\":\"" ID
                        "\",\"name\":\"Luxe Watches\",\"domain\":\"luxewatches.com\","
                        "\"industry\":\"fashion\",\"plan\":\"free\",\"createdAt\":\"" TS "\"}");
    free(t);
    cJSON_Delete(p);
    cJSON_Delete(s);
    cJSON_Delete(x);

    struct brand_fields f = luxe;
    f.logo_url = "https://l/x.png";
    p = brand_profile_item_new(&f);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(p, "logoUrl")->valuestring,
                        "https://l/x.png");
    cJSON_Delete(p);
}

static void test_items_invalid(void **state)
{
    (void)state;
    struct brand_fields f;

    f = luxe;
    f.id = "a#b";
    assert_null(brand_profile_item_new(&f));
    assert_null(brand_index_item_new(&f));
    assert_null(brand_stats_item_new("a#b"));
    assert_null(brand_stats_item_new(""));
    f = luxe;
    f.name = "";
    assert_null(brand_profile_item_new(&f));
    f = luxe;
    f.created_at = "2026-06-20";
    assert_null(brand_index_item_new(&f));
    assert_null(brand_profile_item_new(NULL));

    assert_true(brand_id_ok(ID));
    assert_true(brand_id_ok("nonexistent-brand-id"));
    assert_false(brand_id_ok(NULL));
    assert_false(brand_id_ok(""));
    assert_false(brand_id_ok("x\ty"));
    assert_false(brand_id_ok("x\x7fy"));
    char longid[BRAND_ID_MAX + 2];
    memset(longid, 'a', sizeof longid - 1);
    longid[sizeof longid - 1] = '\0';
    assert_false(brand_id_ok(longid));
    longid[BRAND_ID_MAX] = '\0';
    assert_true(brand_id_ok(longid));
}

static char *render_profile(const cJSON *profile, const struct brand_counters *c)
{
    struct buf b = BUF_INIT(1 << 20);
    struct jsonw w;

    jsonw_init(&w, &b);
    brand_write_profile_json(&w, profile, c);
    assert_int_equal(jsonw_error(&w), 0);
    return buf_steal(&b);
}

static void test_profile_json(void **state)
{
    (void)state;
    cJSON *p = brand_profile_item_new(&luxe);
    cJSON *stats = cJSON_Parse("{\"PK\":\"x\",\"SK\":\"STATS\",\"productCount\":5,"
                               "\"scanCount\":12}");
    struct brand_counters c;
    char *t;

    brand_counters_from_stats(stats, &c);
    assert_true(c.product_count == 5 && c.scan_count == 12 && c.threat_count == 0);
    c.threat_count = 2;
    t = render_profile(p, &c);
    /* No key attributes (D04); counters in place, threatCount appended. */
    assert_string_equal(t, "{\"id\":\"" ID "\",\"name\":\"Luxe Watches\",\"domain\":"
                           "\"luxewatches.com\",\"industry\":\"fashion\",\"logoUrl\":null,"
                           "\"plan\":\"free\",\"createdAt\":\"" TS "\",\"productCount\":5,"
                           "\"scanCount\":12,\"threatCount\":2}");
    free(t);
    brand_counters_from_stats(NULL, &c);
    assert_true(c.product_count == 0 && c.scan_count == 0 && c.threat_count == 0);
    cJSON_Delete(p);
    cJSON_Delete(stats);

    /* A stored profile without counters and with an extra attribute. */
    p = cJSON_Parse("{\"PK\":\"BRAND#z\",\"SK\":\"PROFILE\",\"id\":\"z\",\"threatCount\":9,"
                    "\"custom\":{\"a\":[1]}}");
    c = (struct brand_counters){1, 2, 3};
    t = render_profile(p, &c);
    assert_string_equal(t, "{\"id\":\"z\",\"threatCount\":3,\"custom\":{\"a\":[1]},"
                           "\"productCount\":1,\"scanCount\":2}");
    free(t);
    cJSON_Delete(p);
}

static void test_created_and_index_json(void **state)
{
    (void)state;
    cJSON *p = brand_profile_item_new(&luxe);
    struct buf b = BUF_INIT(1 << 20);
    struct jsonw w;

    jsonw_init(&w, &b);
    jsonw_obj(&w);
    brand_write_created_members(&w, p);
    jsonw_kstr(&w, "apiKey", "gpk_x");
    jsonw_end(&w);
    assert_string_equal(buf_cstr(&b), "{\"id\":\"" ID "\",\"name\":\"Luxe Watches\",\"domain\":"
                                      "\"luxewatches.com\",\"industry\":\"fashion\",\"plan\":"
                                      "\"free\",\"createdAt\":\"" TS "\",\"apiKey\":\"gpk_x\"}");
    cJSON_Delete(p);

    /* Index entries: id from brandId, plan defaults to free. */
    cJSON *e = cJSON_Parse("{\"brandId\":\"b1\",\"name\":\"N\",\"domain\":\"d\",\"industry\":\"i\","
                           "\"createdAt\":\"" TS "\"}");
    buf_reset(&b);
    jsonw_init(&w, &b);
    brand_write_index_entry_json(&w, e);
    assert_string_equal(buf_cstr(&b), "{\"id\":\"b1\",\"name\":\"N\",\"domain\":\"d\",\"industry\":"
                                      "\"i\",\"plan\":\"free\",\"createdAt\":\"" TS "\"}");
    cJSON_Delete(e);

    struct brand_counters c = {5, 0.5, 1e21};
    buf_reset(&b);
    jsonw_init(&w, &b);
    brand_write_counters_json(&w, &c);
    assert_string_equal(buf_cstr(&b),
                        "{\"productCount\":5,\"scanCount\":0.5,\"threatCount\":1e+21}");
    buf_free(&b);
}

static char *render_agg(const struct scan_loc_agg *a, size_t top, bool last)
{
    struct buf b = BUF_INIT(1 << 22);
    struct jsonw w;

    jsonw_init(&w, &b);
    scan_loc_agg_write(&w, a, top, last);
    assert_int_equal(jsonw_error(&w), 0);
    return buf_steal(&b);
}

static void test_scan_agg(void **state)
{
    (void)state;
    struct scan_loc_agg *a = scan_loc_agg_new();
    char *t;

    scan_loc_agg_add(a, "CH", "Geneva", "2026-06-20T10:00:00.000Z");
    scan_loc_agg_add(a, "US", "New York", "2026-06-20T09:00:00.000Z");
    scan_loc_agg_add(a, "US", "New York", "2026-06-20T11:00:00.000Z");
    scan_loc_agg_add(a, "US", "New York", "2026-06-20T08:00:00.000Z");
    scan_loc_agg_add(a, "JP", "Tokyo", NULL);
    /* The pair is the key: no collision through commas. */
    scan_loc_agg_add(a, "b,c", "a", "x");
    scan_loc_agg_add(a, "c", "a,b", "y");
    scan_loc_agg_add(a, NULL, NULL, "z");
    scan_loc_agg_add(a, "", "", "w");
    assert_int_equal(scan_loc_agg_len(a), 7);
    t = render_agg(a, 4, true);
    /* Count descending, ties in first-seen order. */
    assert_string_equal(t, "[{\"country\":\"US\",\"city\":\"New York\",\"count\":3,\"lastScan\":"
                           "\"2026-06-20T11:00:00.000Z\"},{\"country\":\"CH\",\"city\":\"Geneva\","
                           "\"count\":1,\"lastScan\":\"2026-06-20T10:00:00.000Z\"},{\"country\":"
                           "\"JP\",\"city\":\"Tokyo\",\"count\":1,\"lastScan\":null},{\"country\":"
                           "\"b,c\",\"city\":\"a\",\"count\":1,\"lastScan\":\"x\"}]");
    free(t);
    t = render_agg(a, 100, false);
    assert_non_null(strstr(t, "{\"country\":null,\"city\":null,\"count\":1}"));
    assert_non_null(strstr(t, "{\"country\":\"\",\"city\":\"\",\"count\":1}"));
    assert_null(strstr(t, "lastScan"));
    free(t);
    t = render_agg(a, 0, true);
    assert_string_equal(t, "[]");
    free(t);
    scan_loc_agg_free(a);

    assert_true(scan_country_known("US"));
    assert_true(scan_country_known("Local"));
    assert_false(scan_country_known("Unknown"));
    assert_false(scan_country_known(""));
    assert_false(scan_country_known(NULL));
}

static void test_scan_agg_many(void **state)
{
    (void)state;
    struct scan_loc_agg *a = scan_loc_agg_new();
    char city[32];
    char *t;

    /* 10,000 scans over 2,500 places (forces index growth); place i seen
     * (i % 4) + 1 times. */
    for (int round = 0; round < 4; round++)
        for (int i = 0; i < 2500; i++)
            if (round <= i % 4) {
                snprintf(city, sizeof city, "c%d", i);
                scan_loc_agg_add(a, "US", city, NULL);
            }
    assert_int_equal(scan_loc_agg_len(a), 2500);
    t = render_agg(a, 2, false);
    assert_string_equal(t, "[{\"country\":\"US\",\"city\":\"c3\",\"count\":4},"
                           "{\"country\":\"US\",\"city\":\"c7\",\"count\":4}]");
    free(t);
    scan_loc_agg_free(a);
    scan_loc_agg_free(NULL);
}

static void test_scan_row(void **state)
{
    (void)state;
    cJSON *s = cJSON_Parse("{\"PK\":\"PRODUCT#p\",\"SK\":\"SCAN#t#1\",\"productId\":\"p\","
                           "\"timestamp\":\"t\",\"ip\":\"203.0.113.7\",\"country\":\"US\","
                           "\"city\":\"NYC\",\"userAgent\":\"UA\",\"result\":\"authentic\"}");
    struct buf b = BUF_INIT(1 << 16);
    struct jsonw w;

    jsonw_init(&w, &b);
    scan_write_row_json(&w, s);
    assert_string_equal(buf_cstr(&b), "{\"timestamp\":\"t\",\"country\":\"US\",\"city\":\"NYC\","
                                      "\"result\":\"authentic\"}");
    buf_free(&b);
    cJSON_Delete(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_items),        cmocka_unit_test(test_items_invalid),
        cmocka_unit_test(test_profile_json), cmocka_unit_test(test_created_and_index_json),
        cmocka_unit_test(test_scan_agg),     cmocka_unit_test(test_scan_agg_many),
        cmocka_unit_test(test_scan_row),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
