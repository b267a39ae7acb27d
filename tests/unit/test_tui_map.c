/*
 * test_tui_map.c - the world map data (land mask, place lookup,
 * projection) and the Map view (TUI.md §4.3, §10 check 10).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/catalog_data.h"
#include "core/journeys_data.h"
#include "core/timeutil.h"
#include "tui/canvas.h"
#include "tui/mapdata.h"
#include "tui/model.h"
#include "tui/views.h"

/* Real coordinates (not the table's) of the §10.10 cities. */
static const struct {
    const char *city, *country;
    double lat, lon;
} real_places[] = {
    {"Memphis", "US", 35.1495, -90.0490},
    {"Geneva", "CH", 46.2044, 6.1432},
    {"Tokyo", "JP", 35.6762, 139.6503},
};

static void test_project_centre(void **state)
{
    (void)state;
    int x = -1, y = -1;
    assert_true(map_project(0, 0, 80, 14, &x, &y));
    assert_int_equal(x, 40);                          /* 180/360 * 80 */
    assert_int_equal(y, (int)floor(84.0 / 144 * 14)); /* 8 */
    /* corners and the crop */
    assert_true(map_project(84, -180, 80, 14, &x, &y));
    assert_int_equal(x, 0);
    assert_int_equal(y, 0);
    assert_true(map_project(-60, 180, 80, 14, &x, &y));
    assert_int_equal(x, 79);
    assert_int_equal(y, 13);
    assert_false(map_project(85, 0, 80, 14, &x, &y));
    assert_false(map_project(-61, 0, 80, 14, &x, &y));
    assert_false(map_project(0, 0, 0, 14, &x, &y));
    assert_false(map_project(NAN, 0, 80, 14, &x, &y));
}

static void test_country_aliases(void **state)
{
    (void)state;
    const char *us[] = {
        "US",    "us", "USA", "United States", "united states of america", "  United   States  ",
        "U.S.A."};
    const char *gb[] = {"GB", "UK", "United Kingdom", "Great Britain", "GBR"};
    double lat0, lon0, lat, lon;
    assert_true(map_lookup(NULL, us[0], &lat0, &lon0));
    for (size_t i = 1; i < sizeof us / sizeof us[0]; i++) {
        assert_true(map_lookup(NULL, us[i], &lat, &lon));
        assert_true(lat == lat0 && lon == lon0);
    }
    /* the US label point is in the contiguous states */
    assert_true(lat0 > 30 && lat0 < 45 && lon0 > -110 && lon0 < -85);
    assert_true(map_lookup("", gb[0], &lat0, &lon0));
    for (size_t i = 1; i < sizeof gb / sizeof gb[0]; i++) {
        assert_true(map_lookup("", gb[i], &lat, &lon));
        assert_true(lat == lat0 && lon == lon0);
    }
    assert_true(map_lookup(NULL, "UAE", &lat, &lon));
    assert_true(map_lookup(NULL, "Russia", &lat, &lon));
    assert_true(lon > 40 && lon < 140); /* not thrown across the antimeridian */
    assert_true(map_lookup(NULL, "South Korea", &lat, &lon));
    assert_true(map_lookup(NULL, "Côte d'Ivoire", &lat, &lon));
    assert_string_equal(map_country_name("ch"), "Switzerland");
    assert_string_equal(map_country_name("US"), "United States");
    assert_null(map_country_name("ZZ"));
    assert_null(map_country_name("USA"));
    assert_null(map_country_name(NULL));
}

static void test_cities_on_expected_cells(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof real_places / sizeof real_places[0]; i++) {
        double lat, lon;
        int ex, ey, x, y;
        assert_true(map_project(real_places[i].lat, real_places[i].lon, 80, 14, &ex, &ey));
        /* with its country, and alone */
        assert_true(map_lookup(real_places[i].city, real_places[i].country, &lat, &lon));
        assert_true(map_project(lat, lon, 80, 14, &x, &y));
        assert_true(abs(x - ex) <= 1 && abs(y - ey) <= 1);
        assert_true(fabs(lat - real_places[i].lat) < 0.2 && fabs(lon - real_places[i].lon) < 0.2);
        assert_true(map_lookup(real_places[i].city, NULL, &lat, &lon));
        assert_true(map_project(lat, lon, 80, 14, &x, &y));
        assert_true(abs(x - ex) <= 1 && abs(y - ey) <= 1);
    }
    /* the city wins over its country; a US state code names the city's country */
    double lat, lon;
    assert_true(map_lookup("memphis", "TN", &lat, &lon));
    assert_true(fabs(lat - 35.15) < 0.1 && fabs(lon + 90.05) < 0.1);
    assert_true(map_lookup("Dubai", "UAE", &lat, &lon));
    assert_true(fabs(lat - 25.1) < 0.3 && fabs(lon - 55.3) < 0.3);
    /* a capital: Canberra, not the middle of Australia */
    assert_true(map_lookup("Canberra", "Australia", &lat, &lon));
    assert_true(fabs(lat + 35.3) < 0.3 && fabs(lon - 149.1) < 0.3);
    /* unknown city, known country: the country's point */
    double clat, clon;
    assert_true(map_lookup("Nowhereville", "France", &lat, &lon));
    assert_true(map_lookup(NULL, "FR", &clat, &clon));
    assert_true(lat == clat && lon == clon);
}

static void test_unplaced(void **state)
{
    (void)state;
    double lat = 99, lon = 99;
    assert_false(map_lookup("Unknown", "Unknown", &lat, &lon));
    assert_false(map_lookup("Local", "Local", &lat, &lon));
    assert_false(map_lookup(" unknown ", "LOCAL", &lat, &lon));
    assert_false(map_lookup("", "", &lat, &lon));
    assert_false(map_lookup(NULL, NULL, &lat, &lon));
    assert_false(map_lookup("Atlantis", "Nowhere", &lat, &lon));
    assert_true(lat == 99 && lon == 99); /* never 0,0 or anything else */
    /* hostile: very long labels are unplaced, not truncated into a match */
    char big[4096];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_false(map_lookup(big, big, &lat, &lon));
}

/* Every city of the catalog (locations and journey stages) is in the city table. */
static void test_catalog_cities(void **state)
{
    (void)state;
    size_t checked = 0;
    for (size_t g = 0; g < CATALOG_LOCATION_GROUPS; g++) {
        const struct catalog_group *grp = &catalog_locations_groups[g];
        for (size_t i = 0; i < grp->count; i++) {
            cJSON *o = cJSON_Parse(grp->entries[i].json);
            const cJSON *city = cJSON_GetObjectItemCaseSensitive(o, "city");
            const cJSON *country = cJSON_GetObjectItemCaseSensitive(o, "country");
            double lat, lon;
            assert_true(cJSON_IsString(city) && cJSON_IsString(country));
            if (!map_lookup(city->valuestring, NULL, &lat, &lon))
                fail_msg("catalog city %s unplaced", city->valuestring);
            assert_true(map_lookup(city->valuestring, country->valuestring, &lat, &lon));
            checked++;
            cJSON_Delete(o);
        }
    }
    for (size_t j = 0; j < JOURNEYS_N; j++)
        for (size_t s = 0; s < journeys[j].nstages; s++) {
            const char *loc = journeys[j].stages[s].location;
            char city[128];
            double lat, lon;
            if (!loc)
                continue;
            const char *comma = strchr(loc, ',');
            size_t n = comma ? (size_t)(comma - loc) : strlen(loc);
            assert_true(n < sizeof city);
            memcpy(city, loc, n);
            city[n] = '\0';
            if (!map_lookup(city, comma ? comma + 1 : NULL, &lat, &lon) ||
                !map_lookup(city, NULL, &lat, &lon))
                fail_msg("journey place %s unplaced", loc);
            checked++;
        }
    assert_true(checked >= 37);
}

static void test_land_mask(void **state)
{
    (void)state;
    assert_true(map_land_at(23, 10));   /* Sahara */
    assert_true(map_land_at(60, 100));  /* Siberia */
    assert_true(map_land_at(40, -100)); /* Great Plains */
    assert_true(map_land_at(-25, 135)); /* Australia */
    assert_true(map_land_at(-80, 0));   /* Antarctica */
    assert_false(map_land_at(0, -150)); /* mid-Pacific */
    assert_false(map_land_at(30, -40)); /* mid-Atlantic */
    assert_false(map_land_at(-30, 80)); /* Indian Ocean */
    assert_false(map_land_at(42, 50));  /* Caspian Sea (a hole in the land) */
    assert_false(map_is_land(-1, 0));
    assert_false(map_is_land(0, 360));
    assert_false(map_land_at(NAN, 0));
    /* a plausible share of the globe's cells is land (about 29 % of the area,
     * more of the cells because polar rows count fully) */
    int land = 0;
    for (int r = 0; r < 180; r++)
        for (int q = 0; q < 360; q++)
            land += map_is_land(r, q);
    assert_true(land > 64800 * 25 / 100 && land < 64800 * 45 / 100);
}

/* ---- the view ---- */

static const char brand_scans[] = "{\"locations\":["
                                  "{\"country\":\"TN\",\"city\":\"Memphis\",\"count\":2,"
                                  "\"lastScan\":\"2026-06-28T18:00:00.000Z\"},"
                                  "{\"country\":\"US\",\"city\":\"Memphis\",\"count\":25,"
                                  "\"lastScan\":\"2026-06-28T18:30:00.000Z\"},"
                                  "{\"country\":\"Japan\",\"city\":\"Tokyo\",\"count\":7,"
                                  "\"lastScan\":\"2026-06-28T17:30:00.000Z\"},"
                                  "{\"country\":\"CH\",\"city\":\"Geneva\",\"count\":3,"
                                  "\"lastScan\":\"2026-06-28T18:32:00.000Z\"},"
                                  "{\"country\":\"Local\",\"city\":\"Local\",\"count\":2,"
                                  "\"lastScan\":\"2026-06-28T18:00:00.000Z\"},"
                                  "{\"country\":\"US\",\"city\":\"New "
                                  "York\",\"count\":1,\"lastScan\":\"2026-06-27T18:30:00.000Z\"},"
                                  "{\"country\":\"Nowhere\",\"city\":\"Atlantis\",\"count\":1,"
                                  "\"lastScan\":\"2026-06-28T18:30:00.000Z\"},"
                                  "{\"country\":\"France\",\"city\":\"Paris\",\"count\":1,"
                                  "\"lastScan\":\"2026-06-28T18:30:00.000Z\"}],"
                                  "\"threatHotspots\":["
                                  "{\"country\":\"US\",\"city\":\"Memphis\",\"count\":6},"
                                  "{\"country\":\"Japan\",\"city\":\"Tokyo\",\"count\":2},"
                                  "{\"country\":\"CH\",\"city\":\"Geneva\",\"count\":1}],"
                                  "\"totalScans\":47}";

struct fixture {
    struct model *m;
    struct view_ctx ctx;
};

static int setup(void **state)
{
    static const char *const ids[] = {"b1"};
    static const char *const names[] = {"Acme Watches"};
    struct fixture *f = calloc(1, sizeof *f);
    int64_t t;
    if (!f)
        return -1;
    f->m = model_new(ids, names, 1);
    assert_int_equal(time_parse_iso("2026-06-28T18:30:00.000Z", &t), 0);
    f->ctx.now_ms = t + 133000; /* Memphis last scanned 2m13s ago */
    f->ctx.brand = 0;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    model_free(f->m);
    free(f);
    return 0;
}

static void row(const struct canvas *c, int y, char *out, size_t n)
{
    canvas_row_text(c, y, out, n);
}

/* The cell where the view must put the marker of (city, country) on a w x h map. */
static void expect_cell(const char *city, const char *country, int w, int h, int *x, int *y)
{
    double lat, lon;
    assert_true(map_lookup(city, country, &lat, &lon));
    assert_true(map_project(lat, lon, w, h, x, y));
}

static void test_view_full(void **state)
{
    struct fixture *f = *state;
    struct canvas c;
    char line[1024];
    int x, y;
    model_reply(f->m, POLL_BRAND_SCANS, 0, 200, brand_scans, strlen(brand_scans), 10,
                f->ctx.now_ms);
    canvas_init(&c, 80, 24, false);
    canvas_fill(&c, 0, 0, 80, 1, 'Z', THEME_BASE); /* tab bar row: must stay */
    canvas_fill(&c, 0, 22, 80, 2, 'Z', THEME_BASE);
    view_map(&c, 0, 1, 80, 21, f->m, &f->ctx);

    row(&c, 0, line, sizeof line);
    assert_int_equal(strspn(line, "Z"), 80);
    row(&c, 22, line, sizeof line);
    assert_int_equal(strspn(line, "Z"), 80);

    /* markers: Memphis 25 beats Memphis,TN 2 in the same cell (@, >= 5 suspicious) */
    expect_cell("Memphis", "US", 80, 14, &x, &y);
    assert_int_equal(canvas_cat(&c, x, 1 + y)->ch, '@');
    assert_int_equal(canvas_cat(&c, x, 1 + y)->elem, THEME_MAP_MARKER_HIGH);
    expect_cell("Tokyo", "Japan", 80, 14, &x, &y);
    assert_int_equal(canvas_cat(&c, x, 1 + y)->ch, 'O');
    assert_int_equal(canvas_cat(&c, x, 1 + y)->elem, THEME_MAP_MARKER_MID);
    expect_cell("Geneva", "CH", 80, 14, &x, &y);
    assert_int_equal(canvas_cat(&c, x, 1 + y)->ch, 'o');
    assert_int_equal(canvas_cat(&c, x, 1 + y)->elem, THEME_MAP_MARKER_LOW);
    expect_cell("New York", "US", 80, 14, &x, &y);
    assert_int_equal(canvas_cat(&c, x, 1 + y)->ch, '+');
    assert_int_equal(canvas_cat(&c, x, 1 + y)->elem, THEME_MAP_MARKER_OK);
    expect_cell("Paris", "France", 80, 14, &x, &y);
    assert_int_equal(canvas_cat(&c, x, 1 + y)->ch, '+');
    /* exactly these five markers */
    int markers = 0;
    for (int j = 1; j < 15; j++)
        for (int i = 0; i < 80; i++) {
            uint32_t ch = canvas_cat(&c, i, j)->ch;
            markers += ch == '+' || ch == 'o' || ch == 'O' || ch == '@';
        }
    assert_int_equal(markers, 5);
    /* land is Braille: the Sahara cell */
    assert_true(map_project(23, 10, 80, 14, &x, &y));
    assert_in_range(canvas_cat(&c, x, 1 + y)->ch, 0x2801, 0x28FF);
    assert_int_equal(canvas_cat(&c, x, 1 + y)->elem, THEME_MAP_LAND);
    assert_true(map_project(0, -150, 80, 14, &x, &y));
    assert_int_equal(canvas_cat(&c, x, 1 + y)->ch, ' ');

    /* the line under the map: scope and Unplaced (47 scans - 39 placed) */
    row(&c, 15, line, sizeof line);
    assert_non_null(strstr(line, "Acme Watches"));
    assert_non_null(strstr(line, "Unplaced: 8"));
    /* top 6, in the reply's order */
    row(&c, 16, line, sizeof line);
    assert_non_null(strstr(line, "Memphis"));
    assert_non_null(strstr(line, "TN"));
    row(&c, 17, line, sizeof line);
    assert_non_null(strstr(line, "Memphis"));
    assert_non_null(strstr(line, "US"));
    assert_non_null(strstr(line, "25 scans"));
    assert_non_null(strstr(line, "6 susp"));
    assert_non_null(strstr(line, "2m13s ago"));
    row(&c, 18, line, sizeof line);
    assert_non_null(strstr(line, "Tokyo"));
    assert_non_null(strstr(line, "2 susp"));
    row(&c, 19, line, sizeof line);
    assert_non_null(strstr(line, "Geneva"));
    row(&c, 20, line, sizeof line);
    assert_non_null(strstr(line, "Local"));
    assert_non_null(strstr(line, "unplaced"));
    row(&c, 21, line, sizeof line);
    assert_non_null(strstr(line, "New York"));
    canvas_free(&c);
}

static void test_view_ascii(void **state)
{
    struct fixture *f = *state;
    struct canvas c;
    char line[1024];
    int x, y;
    model_reply(f->m, POLL_BRAND_SCANS, 0, 200, brand_scans, strlen(brand_scans), 10,
                f->ctx.now_ms);
    canvas_init(&c, 80, 21, true);
    view_map(&c, 0, 0, 80, 21, f->m, &f->ctx);
    for (int j = 0; j < 21; j++) {
        row(&c, j, line, sizeof line);
        for (const unsigned char *p = (const unsigned char *)line; *p; p++)
            assert_true(*p < 0x80);
    }
    assert_true(map_project(23, 10, 80, 14, &x, &y));
    assert_int_equal(canvas_cat(&c, x, y)->ch, '.');
    assert_true(map_project(60, 100, 80, 14, &x, &y));
    assert_int_equal(canvas_cat(&c, x, y)->ch, '.');
    assert_true(map_project(30, -40, 80, 14, &x, &y));
    assert_int_equal(canvas_cat(&c, x, y)->ch, ' ');
    expect_cell("Memphis", "US", 80, 14, &x, &y);
    assert_int_equal(canvas_cat(&c, x, y)->ch, '@');
    canvas_free(&c);
}

static void test_view_compact(void **state)
{
    struct fixture *f = *state;
    struct canvas c;
    char line[1024];
    int x, y;
    f->ctx.compact = true;
    model_reply(f->m, POLL_BRAND_SCANS, 0, 200, brand_scans, strlen(brand_scans), 10,
                f->ctx.now_ms);
    canvas_init(&c, 60, 14, false);
    view_map(&c, 0, 0, 60, 14, f->m, &f->ctx);
    expect_cell("Tokyo", "JP", 60, 14, &x, &y);
    assert_int_equal(canvas_cat(&c, x, y)->ch, 'O');
    for (int j = 0; j < 14; j++) {
        row(&c, j, line, sizeof line);
        assert_null(strstr(line, "Unplaced"));
    }
    canvas_free(&c);
}

static void test_view_states(void **state)
{
    struct fixture *f = *state;
    struct canvas c;
    char line[1024];
    canvas_init(&c, 80, 21, false);
    view_map(&c, 0, 0, 80, 21, f->m, &f->ctx);
    row(&c, 14, line, sizeof line);
    assert_non_null(strstr(line, "waiting for data"));

    model_reply(f->m, POLL_BRAND_SCANS, 0, 403, "{\"error\":\"Forbidden\"}", 21, 5, f->ctx.now_ms);
    canvas_clear(&c, THEME_BASE);
    view_map(&c, 0, 0, 80, 21, f->m, &f->ctx);
    row(&c, 14, line, sizeof line);
    assert_non_null(strstr(line, "needs an admin key"));

    /* product scope reads /api/scans: suspicious from the scans' results */
    static const char prod[] =
        "{\"scans\":[{\"timestamp\":\"2026-06-28T18:30:00.000Z\",\"country\":\"CH\",\"city\":"
        "\"Geneva\","
        "\"result\":\"suspicious\"},{\"timestamp\":\"2026-06-28T18:20:00.000Z\",\"country\":\"CH\","
        "\"city\":\"Geneva\",\"result\":\"suspicious\"},{\"timestamp\":\"2026-06-28T18:10:00."
        "000Z\","
        "\"country\":\"Unknown\",\"city\":\"Unknown\",\"result\":\"authentic\"}],"
        "\"locations\":[{\"country\":\"CH\",\"city\":\"Geneva\",\"count\":2,\"lastScan\":"
        "\"2026-06-28T18:30:00.000Z\"},{\"country\":\"Unknown\",\"city\":\"Unknown\",\"count\":1,"
        "\"lastScan\":\"2026-06-28T18:10:00.000Z\"}],\"totalScans\":3}";
    int x, y;
    f->ctx.map_product = true;
    f->ctx.map_product_id = "wfPHybaFV3_a";
    model_reply(f->m, POLL_PRODUCT_SCANS, 0, 200, prod, strlen(prod), 5, f->ctx.now_ms);
    canvas_clear(&c, THEME_BASE);
    view_map(&c, 0, 0, 80, 21, f->m, &f->ctx);
    row(&c, 14, line, sizeof line);
    assert_non_null(strstr(line, "wfPHybaFV3_a"));
    assert_non_null(strstr(line, "Unplaced: 1"));
    expect_cell("Geneva", "CH", 80, 14, &x, &y);
    assert_int_equal(canvas_cat(&c, x, y)->ch, 'o');
    assert_int_equal(canvas_cat(&c, x, y)->elem, THEME_MAP_MARKER_MID);

    /* tiny and odd sizes never crash */
    canvas_resize(&c, 3, 2);
    view_map(&c, 0, 0, 3, 2, f->m, &f->ctx);
    view_map(&c, -5, -5, 100, 100, f->m, &f->ctx);
    canvas_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_project_centre),
        cmocka_unit_test(test_country_aliases),
        cmocka_unit_test(test_cities_on_expected_cells),
        cmocka_unit_test(test_unplaced),
        cmocka_unit_test(test_catalog_cities),
        cmocka_unit_test(test_land_mask),
        cmocka_unit_test_setup_teardown(test_view_full, setup, teardown),
        cmocka_unit_test_setup_teardown(test_view_ascii, setup, teardown),
        cmocka_unit_test_setup_teardown(test_view_compact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_view_states, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
