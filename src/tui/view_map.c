/*
 * view_map.c - the Product Scan Map (TUI.md §4.3): where a brand's (or
 * one product's) scans come from, on an equirectangular world map cropped
 * to 84N..60S.  Land is drawn from the 1-degree mask as Braille (2x4 dots
 * per cell) or '.' in ASCII mode; each scan location becomes a marker
 * whose glyph grows with its scan count and whose colour follows its
 * suspicious scans.  Below the map (full layout) a line gives the scope
 * and the scans that could not be placed, then the six busiest places.
 * Compact layout: the map alone, scaled to the panel.
 */
#include "tui/view_map.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/timeutil.h"
#include "tui/mapdata.h"
#include "tui/view_util.h"
#include "util/xalloc.h"

#define MAP_LOCS_MAX 64 /* locations read from one reply (the API sends <= 15) */
#define MAP_TOP      6  /* places listed under the map */
#define MAP_BELOW    (1 + MAP_TOP)

struct map_loc {
    const char *city, *country; /* borrowed from the reply; never NULL */
    long count, susp;
    const char *last; /* lastScan text or NULL */
    bool placed;
    int x, y; /* cell on the map when placed */
};

static const char *str_or_empty(const cJSON *o, const char *key)
{
    const char *s = vu_str(o, key, "");
    return s ? s : "";
}

static long clamp_count(double v)
{
    if (!(v > 0))
        return 0;
    return v > 1e12 ? 1000000000000L : (long)v;
}

/* Suspicious scans of (city, country): the brand's threatHotspots, or the
 * product's scans with result "suspicious". */
static long suspicious_of(const cJSON *root, bool product, const char *city, const char *country)
{
    long n = 0;
    const cJSON *arr = vu_get(root, product ? "scans" : "threatHotspots");
    const cJSON *e;
    if (!cJSON_IsArray(arr))
        return 0;
    cJSON_ArrayForEach(e, arr)
    {
        if (strcmp(str_or_empty(e, "city"), city) || strcmp(str_or_empty(e, "country"), country))
            continue;
        if (product)
            n += !strcmp(str_or_empty(e, "result"), "suspicious");
        else
            n += clamp_count(vu_num(e, "count", 0));
    }
    return n;
}

/*
 * Reads the locations of a reply into locs (at most max) and places them
 * on a w x h map.  Returns the number read; *placed_scans gets the scans
 * of the placed ones.
 */
static size_t read_locs(const cJSON *root, bool product, int w, int h, struct map_loc *locs,
                        size_t max, long *placed_scans)
{
    size_t n = 0;
    const cJSON *arr = vu_get(root, "locations");
    const cJSON *e;
    *placed_scans = 0;
    if (!cJSON_IsArray(arr))
        return 0;
    cJSON_ArrayForEach(e, arr)
    {
        struct map_loc *l;
        double lat, lon;
        if (n >= max)
            break;
        if (!cJSON_IsObject(e))
            continue;
        l = &locs[n++];
        memset(l, 0, sizeof *l);
        l->city = str_or_empty(e, "city");
        l->country = str_or_empty(e, "country");
        l->count = clamp_count(vu_num(e, "count", 0));
        l->last = vu_str(e, "lastScan", NULL);
        l->susp = suspicious_of(root, product, l->city, l->country);
        l->placed = map_lookup(l->city, l->country, &lat, &lon) &&
                    map_project(lat, lon, w, h, &l->x, &l->y);
        if (l->placed)
            *placed_scans += l->count;
    }
    return n;
}

static enum theme_elem susp_elem(long susp)
{
    if (susp >= 5)
        return THEME_MAP_MARKER_HIGH;
    if (susp >= 2)
        return THEME_MAP_MARKER_MID;
    if (susp >= 1)
        return THEME_MAP_MARKER_LOW;
    return THEME_MAP_MARKER_OK;
}

static uint32_t marker_glyph(long count)
{
    if (count >= 20)
        return '@';
    if (count >= 5)
        return 'O';
    if (count >= 2)
        return 'o';
    return '+';
}

/* Land of a w x h map at (0, 0) of c: Braille dots from 2x4 samples per
 * cell, or '.' (ASCII) when at least two of the eight samples are land. */
static void draw_land(struct canvas *c, int w, int h)
{
    static const uint8_t dot[4][2] = {{0x01, 0x08}, {0x02, 0x10}, {0x04, 0x20}, {0x40, 0x80}};
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            unsigned bits = 0, n = 0;
            for (int sy = 0; sy < 4; sy++)
                for (int sx = 0; sx < 2; sx++) {
                    double lon = ((x * 2 + sx) + 0.5) / (2.0 * w) * 360.0 - 180.0;
                    double lat = 84.0 - ((y * 4 + sy) + 0.5) / (4.0 * h) * 144.0;
                    if (map_land_at(lat, lon)) {
                        bits |= dot[sy][sx];
                        n++;
                    }
                }
            if (c->ascii)
                canvas_putc(c, x, y, n >= 2 ? '.' : ' ', THEME_MAP_LAND);
            else
                canvas_putc(c, x, y, bits ? 0x2800u + bits : ' ', THEME_MAP_LAND);
        }
}

/* One marker per cell: the location with the larger scan count wins. */
static void draw_markers(struct canvas *c, int w, int h, const struct map_loc *locs, size_t n)
{
    int *best = xmalloc((size_t)w * (size_t)h * sizeof *best);
    for (int i = 0; i < w * h; i++)
        best[i] = -1;
    for (size_t i = 0; i < n; i++) {
        const struct map_loc *l = &locs[i];
        if (!l->placed || l->x < 0 || l->x >= w || l->y < 0 || l->y >= h)
            continue;
        int *b = &best[l->y * w + l->x];
        if (*b < 0 || l->count > locs[*b].count)
            *b = (int)i;
    }
    for (int i = 0; i < w * h; i++)
        if (best[i] >= 0) {
            const struct map_loc *l = &locs[best[i]];
            canvas_putc(c, i % w, i / w, marker_glyph(l->count), susp_elem(l->susp));
            canvas_attr(c, i % w, i / w, 1, 1, CANVAS_A_BOLD);
        }
    free(best);
}

/* The scope: "Brand <name>" or "Product <id>". */
static void scope_text(const struct model *m, const struct view_ctx *ctx, char *out, size_t len)
{
    if (ctx->map_product)
        snprintf(out, len, "Product %s",
                 ctx->map_product_id ? ctx->map_product_id : "(none selected)");
    else
        snprintf(out, len, "Brand %s",
                 ctx->brand < model_brand_count(m) ? model_brand_name(m, ctx->brand) : "-");
}

static void draw_top(struct canvas *c, int y0, const struct map_loc *locs, size_t n,
                     const struct view_ctx *ctx)
{
    int w = c->w;
    for (size_t i = 0; i < n && i < MAP_TOP && y0 + (int)i < c->h; i++) {
        const struct map_loc *l = &locs[i];
        int y = y0 + (int)i, x = 0;
        char buf[64], age[24], when[48];
        int64_t ms;
        if (l->last && time_parse_iso(l->last, &ms) == 0) {
            vu_age(ctx->now_ms - ms, age, sizeof age);
            snprintf(when, sizeof when, "%s ago%s", age, l->placed ? "" : "  unplaced");
        } else {
            snprintf(when, sizeof when, "-%s", l->placed ? "" : "  unplaced");
        }
        snprintf(buf, sizeof buf, "%zu.", i + 1);
        x += canvas_text(c, x, y, 3, buf, THEME_MUTED) + 1;
        canvas_text(c, x, y, 18, l->city[0] ? l->city : "-", THEME_BASE);
        x += 19;
        canvas_text(c, x, y, 12, l->country[0] ? l->country : "-",
                    l->placed ? THEME_BASE : THEME_MUTED);
        x += 13;
        snprintf(buf, sizeof buf, "%6ld scan%s", l->count, l->count == 1 ? " " : "s");
        x += canvas_text(c, x, y, w - x, buf, THEME_BASE) + 1;
        snprintf(buf, sizeof buf, "%4ld susp", l->susp);
        x += canvas_text(c, x, y, w - x, buf, l->susp ? susp_elem(l->susp) : THEME_MUTED) + 2;
        canvas_text(c, x, y, w - x, when, THEME_MUTED);
    }
}

static void draw(struct canvas *c, const struct model *m, const struct view_ctx *ctx)
{
    const struct data_slot *d = ctx->map_product ? model_data(m, POLL_PRODUCT_SCANS, 0)
                                                 : model_data(m, POLL_BRAND_SCANS, ctx->brand);
    bool full = !ctx->compact && c->h >= MAP_BELOW + 3;
    int map_h = full ? c->h - MAP_BELOW : c->h;
    int info_y = full ? map_h : 0; /* compact: messages over the map's first row */
    struct map_loc locs[MAP_LOCS_MAX];
    size_t n = 0;
    long placed = 0;
    char scope[96], line[192];

    canvas_clear(c, THEME_BASE);
    draw_land(c, c->w, map_h);
    scope_text(m, ctx, scope, sizeof scope);

    if (ctx->map_product && !ctx->map_product_id) {
        canvas_text(c, 0, info_y, c->w, "Product scope: open a product first (p)", THEME_MUTED);
        return;
    }
    if (d->state == DATA_DENIED) {
        snprintf(line, sizeof line, "%s  needs an admin key", scope);
        canvas_text(c, 0, info_y, c->w, line, THEME_WARN);
        return;
    }
    if (!d->json) {
        if (d->state == DATA_NONE) {
            snprintf(line, sizeof line, "%s  waiting for data", scope);
            canvas_text(c, 0, info_y, c->w, line, THEME_MUTED);
        } else {
            int x = canvas_text(c, 0, info_y, c->w, scope, THEME_BASE) + 2;
            vu_placeholder(c, x, info_y, c->w - x, d);
        }
        return;
    }

    n = read_locs(d->json, ctx->map_product, c->w, map_h, locs, MAP_LOCS_MAX, &placed);
    draw_markers(c, c->w, map_h, locs, n);
    if (!full)
        return;

    /* Unplaced: the scans of the reply that have no marker (unknown or
     * unmatched places, and, for a brand, the scans the API left out of
     * its top locations because their country is "Unknown"). */
    long total = clamp_count(vu_num(d->json, "totalScans", 0)), listed = 0;
    for (size_t i = 0; i < n; i++)
        listed += locs[i].count;
    if (total < listed)
        total = listed;
    long unplaced = total - placed;
    snprintf(line, sizeof line, "%s  %zu place%s  %ld scan%s  Unplaced: %ld", scope, n,
             n == 1 ? "" : "s", total, total == 1 ? "" : "s", unplaced);
    canvas_text(c, 0, info_y, c->w, line, THEME_TITLE);
    if (n == 0)
        canvas_text(c, 0, info_y + 1, c->w, "no scans yet", THEME_MUTED);
    draw_top(c, info_y + 1, locs, n, ctx);
}

void view_map(struct canvas *c, int x, int y, int w, int h, const struct model *m,
              const struct view_ctx *ctx)
{
    if (!c || !m || !ctx || w <= 0 || h <= 0)
        return;
    vu_draw_clipped(c, x, y, w, h, draw, m, ctx);
}
