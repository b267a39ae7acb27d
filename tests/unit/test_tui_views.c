/*
 * test_tui_views.c - tui/views.c and the view_*.c files, drawn on a
 * canvas and read back as text: the feed shows exactly 20 threat rows in
 * the 80x24 content area and at least 12 at 60x16, every view stays
 * inside its rectangle at 80x24, 60x16 and 1x1, ASCII mode writes no byte
 * >= 0x80, the overview tiles show the numbers of canned replies, data
 * the key may not read says "needs an admin key", and the ops, chain,
 * heat and health views show what their replies say.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/timeutil.h"
#include "tui/canvas.h"
#include "tui/model.h"
#include "tui/views.h"
#include "util/timescale.h"

#define T0 1780000000000LL /* 2026-05-28T20:26:40Z */

static const char *ids[] = {"brand-a"};
static const char *names[] = {"Acme"};

static char *row(const struct canvas *c, int y)
{
    static char buf[8192];
    canvas_row_text(c, y, buf, sizeof buf);
    return buf;
}

/* True when any row of c contains needle. */
static bool has_text(const struct canvas *c, const char *needle)
{
    for (int y = 0; y < c->h; y++)
        if (strstr(row(c, y), needle))
            return true;
    return false;
}

static void add_threats(struct model *m, int n, int64_t arrived)
{
    for (int i = 0; i < n; i++) {
        char buf[1024], iso[ISO_LEN + 1];
        time_iso(T0 - (int64_t)(n - i) * 60000, iso);
        int len = snprintf(
            buf, sizeof buf,
            "{\"alertId\":\"id%03d\",\"brandId\":\"brand-a\",\"type\":\"%s\","
            "\"severity\":\"%s\",\"productId\":\"prod%04dxyz\",\"details\":\"detail %d\","
            "\"timestamp\":\"%s\",\"resolved\":false,\"country\":\"JP\",\"city\":\"Tokyo\"}",
            i, i % 2 ? "geographic_anomaly" : "product_recall", i % 4 == 0 ? "critical" : "medium",
            i, i, iso);
        model_threat(m, 0, buf, (size_t)len, arrived);
    }
}

static struct view_ctx ctx_at(int64_t now)
{
    struct view_ctx v;
    memset(&v, 0, sizeof v);
    v.now_ms = now;
    v.ops_days = 7;
    return v;
}

/* Rows of the feed content showing a threat (a severity label). */
static int threat_rows(const struct canvas *c, int y0, int h)
{
    int n = 0;
    for (int y = y0; y < y0 + h; y++) {
        const char *r = row(c, y);
        if (strstr(r, "CRIT") || strstr(r, " MED ") || strstr(r, "HIGH") || strstr(r, " LOW "))
            n++;
    }
    return n;
}

static void test_names_and_clock(void **state)
{
    (void)state;
    assert_string_equal(view_name(VIEW_HEALTH), "Health");
    assert_string_equal(view_short(VIEW_CHAIN), "Chn");
    assert_int_equal(view_parse("OVERVIEW"), VIEW_OVERVIEW);
    assert_int_equal(view_parse("hlth"), VIEW_HEALTH);
    assert_int_equal(view_parse("nope"), -1);
    assert_int_equal(view_parse(NULL), -1);
    char out[32];
    view_clock(T0, false, out, sizeof out);
    assert_string_equal(out, "20:26:40Z");
    setenv("TZ", "UTC0", 1);
    tzset();
    view_clock(T0, true, out, sizeof out);
    assert_string_equal(out, "20:26:40 UTC");
    assert_int_equal(view_feed_rows(21, false), 20);
    assert_int_equal(view_feed_rows(14, true), 13);
    assert_int_equal(view_feed_rows(0, true), 0);
}

static void test_feed_rows(void **state)
{
    (void)state;
    struct model *m = model_new(ids, names, 1);
    add_threats(m, 40, T0 - 3600000);
    struct view_ctx v = ctx_at(T0);
    struct canvas c;
    /* 80x24: content rows 1..21; row 0 and 22..23 belong to others. */
    canvas_init(&c, 80, 24, false);
    canvas_fill(&c, 0, 0, 80, 24, 'Z', THEME_BASE);
    view_draw(VIEW_FEED, &c, 0, 1, 80, 21, m, &v);
    assert_int_equal(threat_rows(&c, 1, 21), 20);
    assert_true(strstr(row(&c, 1), "Time") != NULL);
    assert_true(strstr(row(&c, 1), "Details") != NULL);
    assert_string_equal(
        row(&c, 0),
        "ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ");
    assert_int_equal(row(&c, 22)[0], 'Z');
    /* Newest first, human type label, 8-char product id, location, selection reversed. */
    assert_true(strstr(row(&c, 2), "Geo anomaly") != NULL);
    assert_true(strstr(row(&c, 2), "prod0039") != NULL);
    assert_true(strstr(row(&c, 2), "prod0039x") == NULL);
    assert_true(strstr(row(&c, 2), "Tokyo, JP") != NULL);
    assert_true(strstr(row(&c, 3), "Recall") != NULL);
    assert_true(canvas_at(&c, 10, 2)->attr & CANVAS_A_REVERSE);
    assert_false(canvas_at(&c, 10, 3)->attr & CANVAS_A_REVERSE);
    /* Unseen marker after the flash; the brand column is hidden with one brand. */
    assert_int_equal(canvas_at(&c, 0, 2)->ch, 0x2022);
    assert_false(has_text(&c, "Brand"));
    canvas_free(&c);
    /* Named products (the brand's list): on a wide terminal the name is
     * whole, at 80 columns it is cut. */
    const char *plist = "{\"products\":[{\"productId\":\"prod0039xyz\",\"name\":"
                        "\"Aviator Titanium 58mm\"}],\"count\":1}";
    model_reply(m, POLL_BRAND_PRODUCTS, 0, 200, plist, strlen(plist), 1, T0);
    canvas_init(&c, 80, 24, false);
    view_draw(VIEW_FEED, &c, 0, 1, 80, 21, m, &v);
    assert_non_null(strstr(row(&c, 2), "Aviator Tit"));
    assert_null(strstr(row(&c, 2), "Aviator Titanium 58mm"));
    canvas_free(&c);
    canvas_init(&c, 140, 24, false);
    view_draw(VIEW_FEED, &c, 0, 1, 140, 21, m, &v);
    assert_non_null(strstr(row(&c, 2), "Aviator Titanium 58mm"));
    assert_non_null(strstr(row(&c, 2), "detail 39"));
    canvas_free(&c);
    /* 60x16 compact: content = 16 - 2 rows. */
    canvas_init(&c, 60, 16, false);
    v.compact = true;
    view_draw(VIEW_FEED, &c, 0, 1, 60, 14, m, &v);
    assert_true(threat_rows(&c, 0, 16) >= 12);
    canvas_free(&c);
    model_free(m);
}

static void test_feed_flash_and_detail(void **state)
{
    (void)state;
    time_scale_set(1.0);
    struct model *m = model_new(ids, names, 1);
    add_threats(m, 3, T0);
    struct view_ctx v = ctx_at(T0 + 500);
    struct canvas c;
    canvas_init(&c, 80, 21, false);
    view_feed(&c, 0, 0, 80, 21, m, &v);
    assert_int_equal(canvas_at(&c, 30, 1)->elem, THEME_FLASH);
    v.now_ms = T0 + 2500;
    canvas_clear(&c, THEME_BASE);
    view_feed(&c, 0, 0, 80, 21, m, &v);
    assert_int_not_equal(canvas_at(&c, 30, 1)->elem, THEME_FLASH);
    assert_int_equal(canvas_at(&c, 0, 1)->elem, THEME_UNSEEN);
    /* Enter: detail pane with every field. */
    v.feed_detail = true;
    canvas_clear(&c, THEME_BASE);
    view_feed(&c, 0, 0, 80, 21, m, &v);
    assert_true(has_text(&c, "alertId: id002"));
    assert_true(has_text(&c, "city: Tokyo"));
    assert_true(has_text(&c, "c chain"));
    canvas_free(&c);
    model_free(m);
}

static void test_feed_markers(void **state)
{
    (void)state;
    static const char *two[] = {"brand-a", "brand-b"};
    static const char *two_names[] = {"Acme", "Luxe"};
    struct model *m = model_new(two, two_names, 2);
    char a[512], body[1200], iso[ISO_LEN + 1];
    time_iso(T0 - 600000, iso);
    snprintf(a, sizeof a,
             "{\"alertId\":\"old\",\"type\":\"chain_gap\",\"severity\":\"low\","
             "\"timestamp\":\"%s\",\"details\":\"x\"}",
             iso);
    snprintf(body, sizeof body, "{\"threats\":[%s]}", a);
    model_reconcile(m, 0, body, strlen(body), T0 - 500000); /* history */
    time_iso(T0 - 60000, iso);
    snprintf(a, sizeof a,
             "{\"alertId\":\"new\",\"type\":\"ownership_dispute\",\"severity\":\"critical\","
             "\"timestamp\":\"%s\",\"details\":\"y\"}",
             iso);
    snprintf(body, sizeof body, "{\"threats\":[%s]}", a);
    assert_int_equal(model_reconcile(m, 0, body, strlen(body), T0 - 50000), 1); /* + gap row */
    struct view_ctx v = ctx_at(T0);
    struct canvas c;
    canvas_init(&c, 80, 21, false);
    view_feed(&c, 0, 0, 80, 21, m, &v);
    assert_true(strstr(row(&c, 0), "Brand") != NULL); /* two brands: brand column */
    assert_true(strstr(row(&c, 1), "Acme") != NULL);
    assert_true(strstr(row(&c, 1), "Dispute") != NULL);
    assert_int_equal(canvas_at(&c, 1, 1)->ch, 0x21BA); /* ↺ */
    assert_int_equal(canvas_at(&c, 0, 1)->ch, 0x2022); /* • */
    assert_true(strstr(row(&c, 2), "possible gap before") != NULL);
    assert_true(strstr(row(&c, 3), "Chain gap") != NULL);
    assert_int_equal(canvas_at(&c, 0, 3)->ch, ' '); /* history rows are not unseen */
    model_set_filter(m, "zzz");
    canvas_clear(&c, THEME_BASE);
    view_feed(&c, 0, 0, 80, 21, m, &v);
    assert_true(has_text(&c, "no threats match the filter"));
    canvas_free(&c);
    model_free(m);
}

static void load_overview(struct model *m)
{
    const char *stats =
        "{\"id\":\"brand-a\",\"name\":\"Acme\",\"productCount\":57,\"scanCount\":4321,"
        "\"threatCount\":9}";
    const char *an =
        "{\"totalScans\":40,\"totalProducts\":57,\"resultBreakdown\":{\"authentic\":36,"
        "\"suspicious\":4},\"statusBreakdown\":{\"active\":51,\"recalled\":6}}";
    const char *scans =
        "{\"locations\":[{\"country\":\"US\",\"city\":\"New York\",\"count\":20},"
        "{\"country\":\"CH\",\"city\":\"Geneva\",\"count\":5}],"
        "\"threatHotspots\":[{\"country\":\"CN\",\"city\":\"Shenzhen\",\"count\":7}],"
        "\"totalScans\":25}";
    model_reply(m, POLL_STATS, 0, 200, stats, strlen(stats), 1, T0);
    model_reply(m, POLL_ANALYTICS, 0, 200, an, strlen(an), 1, T0);
    model_reply(m, POLL_BRAND_SCANS, 0, 200, scans, strlen(scans), 1, T0);
}

static void test_overview(void **state)
{
    (void)state;
    struct model *m = model_new(ids, names, 1);
    load_overview(m);
    add_threats(m, 8, T0 - 3600000);
    model_reply(m, POLL_AUDIT, 0, 403, "{\"error\":\"Forbidden\"}", 21, 1, T0);
    struct view_ctx v = ctx_at(T0);
    struct canvas c;
    canvas_init(&c, 80, 21, false);
    view_overview(&c, 0, 0, 80, 21, m, &v);
    const char *tiles = row(&c, 1);
    assert_true(strstr(tiles, "4321") != NULL);
    assert_true(strstr(tiles, "57") != NULL);
    assert_true(strstr(tiles, "51") != NULL);
    assert_true(strstr(tiles, "6") != NULL);
    assert_true(strstr(tiles, "90.0%") != NULL);
    assert_true(strstr(tiles, " 8 ") != NULL); /* open alerts from the ring */
    assert_true(has_text(&c, "Scans"));
    assert_true(has_text(&c, "Authentic"));
    assert_true(has_text(&c, "CRIT 2"));
    assert_true(has_text(&c, "MED 6"));
    assert_true(has_text(&c, "New York, US"));
    assert_true(has_text(&c, "Shenzhen, CN"));
    assert_true(has_text(&c, "needs an admin key")); /* audit */
    assert_true(has_text(&c, "Last threats"));
    /* 90 % is ok-coloured; find the tile's '%' cell. */
    int px = -1;
    for (int x = 0; x < c.w && px < 0; x++)
        if (canvas_at(&c, x, 1)->ch == '%')
            px = x;
    assert_true(px > 0);
    assert_int_equal(canvas_at(&c, px, 1)->elem, THEME_OK);
    canvas_free(&c);
    /* Unknown numbers are "--", never invented. */
    struct model *e = model_new(ids, names, 1);
    canvas_init(&c, 80, 21, false);
    view_overview(&c, 0, 0, 80, 21, e, &v);
    assert_true(strstr(row(&c, 1), "--") != NULL);
    assert_true(strstr(row(&c, 1), "4321") == NULL);
    canvas_free(&c);
    model_free(e);
    /* Kiosk big tiles. */
    canvas_init(&c, 120, 34, true);
    v.big = true;
    view_overview(&c, 0, 0, 120, 34, m, &v);
    assert_true(has_text(&c, "###"));
    canvas_free(&c);
    model_free(m);
}

static void test_denied_and_unsupported(void **state)
{
    (void)state;
    struct model *m = model_new(ids, names, 1);
    struct view_ctx v = ctx_at(T0);
    struct canvas c;
    canvas_init(&c, 80, 21, false);
    model_reply(m, POLL_OPSLOG, 0, 403, "{}", 2, 1, T0);
    view_ops(&c, 0, 0, 80, 21, m, &v);
    assert_true(has_text(&c, "needs an admin key"));
    canvas_clear(&c, THEME_BASE);
    model_reply(m, POLL_PARTITIONS, 0, 404, "", 0, 1, T0);
    view_heat(&c, 0, 0, 80, 21, m, &v);
    assert_true(has_text(&c, "not available from this server"));
    canvas_clear(&c, THEME_BASE);
    model_reply(m, POLL_PARTITIONS, 0, 401, "", 0, 1, T0);
    view_heat(&c, 0, 0, 80, 21, m, &v);
    assert_true(has_text(&c, "needs an admin key"));
    canvas_free(&c);
    model_free(m);
}

static void test_ops(void **state)
{
    (void)state;
    struct model *m = model_new(ids, names, 1);
    struct view_ctx v = ctx_at(T0);
    struct canvas c;
    char day[11], yday[11], body[2048];
    time_day_bucket(T0, day);
    time_day_bucket(T0 - TIME_DAY_MS, yday);
    snprintf(body, sizeof body,
             "{\"entries\":[{\"agent\":\"threat_detector\",\"trigger\":\"scan_event\","
             "\"geminiModel\":\"rules\","
             "\"aiSeverity\":\"HIGH\",\"aiAttackVector\":\"tag_cloning\",\"aiConfidence\":80,"
             "\"latencyMs\":12,\"timestamp\":\"%sT10:00:00.000Z\"}],"
             "\"stats\":{\"totalOperations\":1,\"agentBreakdown\":{\"threat_detector\":1},"
             "\"severityBreakdown\":{\"HIGH\":1},\"attackVectorBreakdown\":{\"tag_cloning\":1},"
             "\"avgLatencyMs\":12,\"avgConfidence\":80,\"geminiModel\":\"rules\"},"
             "\"buckets\":[{\"date\":\"%s\",\"pk\":\"OPS_LOG#%s\",\"items\":1,\"latencyMs\":0.25},"
             "{\"date\":\"%s\",\"pk\":\"OPS_LOG#%s\",\"items\":0,\"latencyMs\":0.5}]}",
             day, day, day, yday, yday);
    model_reply(m, POLL_OPSLOG, 0, 200, body, strlen(body), 1, T0);
    canvas_init(&c, 80, 21, false);
    view_ops(&c, 0, 0, 80, 21, m, &v);
    char pk[32];
    snprintf(pk, sizeof pk, "OPS_LOG#%s", day);
    assert_true(has_text(&c, pk));
    assert_true(strstr(row(&c, 2), "0.2") != NULL || strstr(row(&c, 2), "0.3") != NULL);
    assert_true(has_text(&c, "merged 1 / limit 50"));
    assert_true(has_text(&c, "tag_cloning"));
    assert_true(has_text(&c, "model rules"));
    assert_true(has_text(&c, "By agent"));
    /* 7 day rows: the 7th date is there. */
    char d6[11];
    time_day_bucket(T0 - 6 * TIME_DAY_MS, d6);
    assert_true(has_text(&c, d6));
    /* Without buckets: items derived from the entries, latency n/a. */
    snprintf(body, sizeof body,
             "{\"entries\":[{\"agent\":\"a\",\"timestamp\":\"%sT10:00:00.000Z\"}],\"stats\":{},"
             "\"legacyFallback\":true,\"limit\":1}",
             day);
    model_reply(m, POLL_OPSLOG, 0, 200, body, strlen(body), 1, T0);
    canvas_clear(&c, THEME_BASE);
    view_ops(&c, 0, 0, 80, 21, m, &v);
    assert_true(strstr(row(&c, 2), "n/a") != NULL);
    assert_true(strstr(row(&c, 2), "derived") != NULL);
    assert_true(has_text(&c, "truncated"));
    assert_true(has_text(&c, "legacy OPS_LOG fallback"));
    canvas_free(&c);

    /* The model is the entries' (the stats' field is the original's
     * constant); words in full on a wide terminal. */
    snprintf(body, sizeof body,
             "{\"entries\":["
             "{\"agent\":\"threat_detector\",\"trigger\":\"scan_event\",\"geminiModel\":"
             "\"rules\",\"aiSeverity\":\"CRITICAL\",\"aiAttackVector\":\"record_tampering\","
             "\"aiConfidence\":90,\"timestamp\":\"%sT10:00:02.000Z\"},"
             "{\"agent\":\"chain_analyzer\",\"trigger\":\"chain_event\",\"geminiModel\":"
             "\"rules\",\"aiSeverity\":\"MEDIUM\",\"aiAttackVector\":\"supply_chain_diversion\","
             "\"aiConfidence\":70,\"timestamp\":\"%sT10:00:01.000Z\"}],"
             "\"stats\":{\"totalOperations\":2,\"geminiModel\":\"gemini-2.5-flash\"}}",
             day, day);
    model_reply(m, POLL_OPSLOG, 0, 200, body, strlen(body), 1, T0);
    canvas_init(&c, 140, 30, false);
    view_ops(&c, 0, 0, 140, 30, m, &v);
    assert_true(has_text(&c, "model rules"));
    assert_false(has_text(&c, "gemini-2.5-flash"));
    assert_true(has_text(&c, "CRITICAL"));
    assert_true(has_text(&c, "supply_chain_diversion"));
    assert_true(has_text(&c, "record_tampering"));
    canvas_free(&c);
    canvas_init(&c, 80, 21, false);
    view_ops(&c, 0, 0, 80, 21, m, &v);
    assert_true(has_text(&c, "model rules"));
    assert_true(has_text(&c, "record_t")); /* cut, but there */
    canvas_free(&c);
    /* several models: the most frequent, and how many others */
    snprintf(body, sizeof body,
             "{\"entries\":[{\"agent\":\"a\",\"geminiModel\":\"gpt-4o-mini\","
             "\"timestamp\":\"%sT10:00:03.000Z\"},{\"agent\":\"a\",\"geminiModel\":\"rules\","
             "\"timestamp\":\"%sT10:00:02.000Z\"},{\"agent\":\"a\",\"geminiModel\":\"rules\","
             "\"timestamp\":\"%sT10:00:01.000Z\"}],\"stats\":{}}",
             day, day, day);
    model_reply(m, POLL_OPSLOG, 0, 200, body, strlen(body), 1, T0);
    canvas_init(&c, 140, 30, false);
    view_ops(&c, 0, 0, 140, 30, m, &v);
    assert_true(has_text(&c, "model rules +1"));
    canvas_free(&c);
    /* no entries: no model (not the stats' constant) */
    snprintf(body, sizeof body,
             "{\"entries\":[],\"stats\":{\"totalOperations\":0,\"geminiModel\":"
             "\"gemini-2.5-flash\"}}");
    model_reply(m, POLL_OPSLOG, 0, 200, body, strlen(body), 1, T0);
    canvas_init(&c, 140, 30, false);
    view_ops(&c, 0, 0, 140, 30, m, &v);
    assert_true(has_text(&c, "model -"));
    assert_true(has_text(&c, "no classifications"));
    canvas_free(&c);
    model_free(m);
}

/* l in the Chain view: the brand's products, the selected one marked. */
static void test_chain_picker(void **state)
{
    (void)state;
    struct model *m = model_new(ids, names, 1);
    struct view_ctx v = ctx_at(T0);
    struct canvas c;
    v.chain_pick = true;
    v.chain_pick_sel = 1;
    canvas_init(&c, 80, 8, false);
    view_chain(&c, 0, 0, 80, 8, m, &v);
    assert_true(has_text(&c, "Products of the brand"));
    assert_false(has_text(&c, "open a product with"));
    char body[4096];
    size_t len = (size_t)snprintf(body, sizeof body, "{\"products\":[");
    for (int i = 0; i < 12; i++)
        len +=
            (size_t)snprintf(body + len, sizeof body - len,
                             "%s{\"productId\":\"p%d\",\"name\":\"Item %02d\",\"sku\":\"SKU-%d\","
                             "\"status\":\"active\",\"verificationCode\":\"CODE%02d\","
                             "\"scanCount\":%d}",
                             i ? "," : "", i, i, i, i, i * 3);
    len += (size_t)snprintf(body + len, sizeof body - len, "],\"count\":12}");
    model_reply(m, POLL_BRAND_PRODUCTS, 0, 200, body, len, 1, T0);
    canvas_clear(&c, THEME_BASE);
    view_chain(&c, 0, 0, 80, 8, m, &v);
    assert_non_null(strstr(row(&c, 3), "> Item 01"));
    assert_non_null(strstr(row(&c, 3), "CODE01"));
    assert_non_null(strstr(row(&c, 2), "  Item 00"));
    /* the selection stays on screen: 6 rows, the 11th selected */
    v.chain_pick_sel = 10;
    canvas_clear(&c, THEME_BASE);
    view_chain(&c, 0, 0, 80, 8, m, &v);
    assert_non_null(strstr(row(&c, 7), "> Item 10"));
    assert_false(has_text(&c, "Item 04"));
    const char *h = row(&c, 1);
    assert_int_equal(strstr(h, "SKU") - h, 34); /* 80 columns: names cut at 31 */
    canvas_free(&c);
    canvas_init(&c, 120, 8, false); /* wide: names 44, SKUs 24 */
    view_chain(&c, 0, 0, 120, 8, m, &v);
    h = row(&c, 1);
    assert_int_equal(strstr(h, "SKU") - h, 47);
    assert_int_equal(strstr(h, "Status") - h, 72);
    canvas_free(&c);
    /* an empty list says so */
    const char *none = "{\"products\":[],\"count\":0}";
    model_reply(m, POLL_BRAND_PRODUCTS, 0, 200, none, strlen(none), 1, T0);
    canvas_init(&c, 80, 8, false);
    view_chain(&c, 0, 0, 80, 8, m, &v);
    assert_true(has_text(&c, "no products"));
    canvas_free(&c);
    model_free(m);
}

static void test_chain(void **state)
{
    (void)state;
    struct model *m = model_new(ids, names, 1);
    struct view_ctx v = ctx_at(T0);
    struct canvas c;
    canvas_init(&c, 80, 21, false);
    view_chain(&c, 0, 0, 80, 21, m, &v);
    assert_true(has_text(&c, "open a product with c, l or :product"));
    const char *verify =
        "{\"authentic\":true,\"product\":{\"productId\":\"P1\",\"brandName\":\"Acme\",\"name\":"
        "\"Aero "
        "Sunglasses\",\"sku\":\"AS-1\",\"verificationCode\":\"GP-ABC\",\"status\":\"active\"},"
        "\"scanCount\":4,\"certificate\":{\"signatureValid\":true,\"chainIntegrity\":false}}";
    const char *events =
        "{\"events\":[{\"type\":\"manufactured\",\"actor\":\"Acme\",\"location\":\"Milan\","
        "\"timestamp\":\"2026-05-01T10:00:00.000Z\",\"hash\":\"aaaaaaaaaaaa1111\",\"previousHash\":"
        "\"e3b0\"},"
        "{\"type\":\"shipped\",\"actor\":\"DHL\",\"location\":\"Basel\","
        "\"timestamp\":\"2026-05-02T10:00:00.000Z\",\"hash\":\"bbbbbbbbbbbb2222\",\"previousHash\":"
        "\"aaaaaaaaaaaa1111\"},"
        "{\"type\":\"received\",\"actor\":\"Shop\",\"location\":\"Paris\","
        "\"timestamp\":\"2026-05-09T10:00:00.000Z\",\"hash\":\"cccccccccccc3333\",\"previousHash\":"
        "\"ffff\"}],"
        "\"count\":3,\"chainValid\":false}";
    model_reply(m, POLL_PRODUCT, 0, 200, verify, strlen(verify), 1, T0);
    model_reply(m, POLL_PRODUCT_EVENTS, 0, 200, events, strlen(events), 1, T0);
    v.chain_product_id = "P1";
    v.chain_sel = 0;
    v.chain_expanded = true;
    canvas_clear(&c, THEME_BASE);
    view_chain(&c, 0, 0, 80, 21, m, &v);
    assert_true(has_text(&c, "Aero Sunglasses"));
    assert_true(has_text(&c, "GP-ABC"));
    assert_true(has_text(&c, "HMAC PASS"));
    assert_true(has_text(&c, "CHAIN FAIL"));
    assert_true(has_text(&c, "aaaaaaaaaaaa"));
    assert_true(has_text(&c, "BROKEN"));
    assert_true(has_text(&c, "gap 168h"));
    assert_true(has_text(&c, "genesis"));
    assert_true(has_text(&c, "\xe2\x95\xb3")); /* ╳ */
    assert_true(has_text(&c, "\xe2\x94\x82")); /* │ */
    /* Another product selected: not this one's data. */
    v.chain_product_id = "P2";
    canvas_clear(&c, THEME_BASE);
    view_chain(&c, 0, 0, 80, 21, m, &v);
    assert_false(has_text(&c, "Aero"));
    /* v: the last scans. */
    const char *scans =
        "{\"scans\":[{\"timestamp\":\"2026-05-10T10:00:00.000Z\",\"country\":\"FR\","
        "\"city\":\"Paris\",\"result\":\"suspicious\"}],\"totalScans\":1}";
    model_reply(m, POLL_PRODUCT_SCANS, 0, 200, scans, strlen(scans), 1, T0);
    v.chain_product_id = "GP-ABC";
    v.chain_scans = true;
    canvas_clear(&c, THEME_BASE);
    view_chain(&c, 0, 0, 80, 21, m, &v);
    assert_true(has_text(&c, "suspicious"));
    assert_false(has_text(&c, "BROKEN"));
    canvas_free(&c);
    model_free(m);
}

static void test_heat_and_health(void **state)
{
    (void)state;
    struct model *m = model_new(ids, names, 1);
    struct view_ctx v = ctx_at(T0);
    struct canvas c;
    const char *parts =
        "{\"windowSeconds\":1800,\"families\":[{\"family\":\"PRODUCT#<id>\",\"distinctKeys\":120,"
        "\"hottestKey\":\"PRODUCT#p1\",\"peakWcu\":900,\"peakRcu\":10,\"minutes\":[{\"wcu\":50},"
        "{\"wcu\":900}]},{\"family\":\"BRAND_INDEX\",\"distinctKeys\":1,\"hottestKey\":\"BRAND_"
        "INDEX\","
        "\"peakWcu\":2,\"minutes\":[]}],\"top\":[]}";
    model_reply(m, POLL_PARTITIONS, 0, 200, parts, strlen(parts), 1, T0);
    canvas_init(&c, 80, 21, true);
    view_heat(&c, 0, 0, 80, 21, m, &v);
    assert_true(has_text(&c, "PRODUCT#"));
    assert_true(has_text(&c, "PRODUCT#p1"));
    assert_true(has_text(&c, "1!"));
    assert_true(has_text(&c, "THREAT#b#YYYY-MM"));
    assert_true(has_text(&c, "AUDIT_LOG"));
    /* The last minute at 90 % of 1,000 WCU/s is '#', the one before '.'. */
    const char *r = NULL;
    for (int y = 0; y < c.h; y++)
        if (!strncmp(row(&c, y), "PRODUCT#", 8)) {
            r = row(&c, y);
            break;
        }
    assert_non_null(r);
    assert_int_equal(r[17 + 29], '#');
    assert_int_equal(r[17 + 28], '.');
    canvas_free(&c);
    /* Health: server, sparkline, streams. */
    model_reply(
        m, POLL_HEALTH, 0, 200,
        "{\"status\":\"operational\",\"services\":{\"api\":\"healthy\",\"database\":\"healthy\","
        "\"dbLatency\":\"3ms\"},\"version\":\"1.0.0\"}",
        115, 7, T0);
    struct stream_info si;
    memset(&si, 0, sizeof si);
    si.state = ST_LIVE;
    si.since_ms = T0 - 65000;
    si.last_heartbeat_ms = T0 - 2000;
    si.reconnects = 3;
    si.backfilled = 2;
    snprintf(si.last_event_id, sizeof si.last_event_id, "seq-77");
    v.streams = &si;
    v.n_streams = 1;
    canvas_init(&c, 80, 21, false);
    view_health(&c, 0, 0, 80, 21, m, &v);
    assert_true(has_text(&c, "operational"));
    assert_true(has_text(&c, "1.0.0"));
    assert_true(has_text(&c, "LIVE"));
    assert_true(has_text(&c, "1m05s"));
    assert_true(has_text(&c, "seq-77"));
    assert_true(has_text(&c, "/api/health       200")); /* endpoint list from the polls */
    assert_false(has_text(&c, "/api/ops-log"));         /* never polled: not listed */
    assert_true(has_text(&c, "Acme"));
    canvas_free(&c);
    model_free(m);
}

/* Every view, several sizes and both modes: nothing outside the rectangle,
 * no byte >= 0x80 in ASCII mode. */
static void test_all_views_bounds(void **state)
{
    (void)state;
    struct model *m = model_new(ids, names, 1);
    load_overview(m);
    add_threats(m, 30, T0 - 10000);
    struct stream_info si;
    memset(&si, 0, sizeof si);
    static const int sizes[][2] = {{80, 21}, {58, 14}, {1, 1}, {2, 3}, {40, 7}, {120, 30}};
    for (int ascii = 0; ascii < 2; ascii++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (int vw = 0; vw < VIEW_COUNT; vw++) {
                int w = sizes[s][0], h = sizes[s][1];
                struct view_ctx v = ctx_at(T0);
                v.compact = w < 80;
                v.streams = &si;
                v.n_streams = 1;
                v.chain_product_id = "P1";
                v.feed_detail = vw == VIEW_FEED && s == 0;
                struct canvas c;
                canvas_init(&c, w + 4, h + 4, ascii);
                canvas_fill(&c, 0, 0, w + 4, h + 4, 'Z', THEME_BASE);
                view_draw((enum view_id)vw, &c, 2, 2, w, h, m, &v);
                for (int y = 0; y < c.h; y++)
                    for (int x = 0; x < c.w; x++) {
                        bool inside = x >= 2 && x < 2 + w && y >= 2 && y < 2 + h;
                        if (!inside)
                            assert_int_equal(canvas_at(&c, x, y)->ch, 'Z');
                        else if (ascii)
                            assert_true(canvas_at(&c, x, y)->ch < 0x80);
                    }
                canvas_free(&c);
            }
    model_free(m);
}

int main(void)
{
    time_scale_set(1.0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_and_clock),
        cmocka_unit_test(test_feed_rows),
        cmocka_unit_test(test_feed_flash_and_detail),
        cmocka_unit_test(test_feed_markers),
        cmocka_unit_test(test_overview),
        cmocka_unit_test(test_denied_and_unsupported),
        cmocka_unit_test(test_ops),
        cmocka_unit_test(test_chain),
        cmocka_unit_test(test_chain_picker),
        cmocka_unit_test(test_heat_and_health),
        cmocka_unit_test(test_all_views_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
