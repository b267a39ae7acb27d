/*
 * view_heat.c - partition heat (TUI.md §4.6): one row per key family,
 * 30 one-minute columns shaded by the hottest key's load that minute as a
 * share of DynamoDB's per-partition ceiling (1,000 WCU/s, or 3,000 RCU/s
 * with `r`), then distinct keys, the hottest key, the peak, and `1!` for
 * families that live in a single partition key.  The figures come from
 * GET /api/admin/partitions; without it the view says why and shows no
 * numbers.
 */
#include "tui/view_heat.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "core/keys.h"
#include "core/timeutil.h"
#include "tui/view_util.h"
#include "tui/views.h"

#define HEAT_COLS 30
#define HEAT_WCU  1000.0
#define HEAT_RCU  3000.0

static const struct {
    const char *label;
    enum key_family kf;
    const char *alias[3];
} families[] = {
    {"PRODUCT#", KF_PRODUCT, {"PRODUCT#", NULL, NULL}},
    {"VERIFY#", KF_VERIFY, {"VERIFY#", NULL, NULL}},
    {"HASH#", KF_HASH, {"HASH#", NULL, NULL}},
    {"BRAND#", KF_BRAND, {"BRAND#", NULL, NULL}},
    {"THREAT#b#YYYY-MM", KF_THREAT, {"THREAT#b#YYYY-MM", "THREAT#<b>#<YYYY-MM>", "THREAT#"}},
    {"THREAT#b", KF_THREAT_LEGACY, {"THREAT#b", "THREAT#<b>", NULL}},
    {"OPS_LOG#day", KF_OPS_LOG, {"OPS_LOG#day", "OPS_LOG#<day>", "OPS_LOG#"}},
    {"OPS_LOG", KF_OPS_LOG_LEGACY, {"OPS_LOG", NULL, NULL}},
    {"BRAND_INDEX", KF_BRAND_INDEX, {"BRAND_INDEX", NULL, NULL}},
    {"PRODUCT_INDEX", KF_PRODUCT_INDEX, {"PRODUCT_INDEX", NULL, NULL}},
    {"AUDIT_LOG", KF_AUDIT_LOG, {"AUDIT_LOG", NULL, NULL}},
};
#define NFAM (sizeof families / sizeof families[0])

static const cJSON *find_family(const cJSON *list, size_t f)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, list)
    {
        const char *name = vu_str(e, "family", NULL);
        if (!name)
            name = vu_str(e, "pattern", NULL);
        if (!name)
            continue;
        if (!strcmp(name, key_family_pattern(families[f].kf)) || !strcmp(name, families[f].label))
            return e;
        for (int a = 0; a < 3; a++)
            if (families[f].alias[a] && !strcmp(name, families[f].alias[a]))
                return e;
    }
    return NULL;
}

static double load_of(const cJSON *o, bool reads, const char *wkey, const char *rkey)
{
    return vu_num(o, reads ? rkey : wkey, 0);
}

/* Shade 0..4 of a share in percent. */
static int shade(double pct)
{
    return pct < 1 ? 0 : pct < 10 ? 1 : pct < 50 ? 2 : pct < 80 ? 3 : 4;
}

static void draw_row(struct canvas *c, int y, int name_w, size_t f, const cJSON *fam,
                     const struct view_ctx *ctx)
{
    double ceiling = ctx->heat_reads ? HEAT_RCU : HEAT_WCU;
    canvas_text(c, 0, y, name_w, families[f].label, THEME_BASE);
    int x0 = name_w + 1;
    for (int i = 0; i < HEAT_COLS; i++)
        canvas_putc(c, x0 + i, y, canvas_glyph(c, G_SHADE0), THEME_HEAT_0);
    if (!fam) {
        canvas_text(c, x0 + HEAT_COLS + 1, y, c->w - x0 - HEAT_COLS - 1, "-", THEME_MUTED);
        return;
    }
    const cJSON *mins = vu_get(fam, "minutes");
    int n = cJSON_IsArray(mins) ? cJSON_GetArraySize(mins) : 0;
    int64_t now_min = ctx->now_ms / 60000;
    for (int k = 0; k < n; k++) {
        const cJSON *mi = cJSON_GetArrayItem(mins, k);
        int col;
        int64_t ms;
        const char *when = vu_str(mi, "minute", NULL);
        if (when && time_parse_iso(when, &ms) == 0)
            col = HEAT_COLS - 1 - (int)(now_min - ms / 60000);
        else
            col = HEAT_COLS - (n - k); /* by order: the last entry is now */
        if (col < 0 || col >= HEAT_COLS)
            continue;
        double pct = 100.0 * load_of(mi, ctx->heat_reads, "wcu", "rcu") / ceiling;
        int s = shade(pct);
        canvas_putc(c, x0 + col, y, canvas_glyph(c, (enum glyph)(G_SHADE0 + s)),
                    (enum theme_elem)(THEME_HEAT_0 + s));
    }
    int x = x0 + HEAT_COLS + 1;
    double keys = vu_num(fam, "distinctKeys", -1);
    char buf[32];
    if (keys >= 0)
        snprintf(buf, sizeof buf, "%5.0f", keys);
    else
        snprintf(buf, sizeof buf, "%5s", "?");
    canvas_text(c, x, y, 5, buf, THEME_BASE);
    x += 6;
    int rest = c->w - x;
    if (rest <= 0)
        return;
    int hot_w = rest >= 26 ? rest - 12 : rest - 7;
    if (hot_w > 0)
        canvas_text(c, x, y, hot_w, vu_str(fam, "hottestKey", "-"), THEME_MUTED);
    x += hot_w > 0 ? hot_w + 1 : 0;
    double peak = load_of(fam, ctx->heat_reads, "peakWcu", "peakRcu");
    int ps = shade(100.0 * peak / ceiling);
    canvas_printf(c, x, y, 6,
                  ps >= 3   ? THEME_BAD
                  : ps >= 2 ? THEME_WARN
                            : THEME_BASE,
                  "%6.0f", peak);
    if (keys == 1)
        canvas_text(c, x + 7, y, 2, "1!", THEME_WARN);
}

static void draw(struct canvas *c, const struct model *m, const struct view_ctx *ctx)
{
    const struct data_slot *d = model_data(m, POLL_PARTITIONS, 0);
    canvas_printf(c, 0, 0, c->w, THEME_TITLE,
                  "Partition heat: hottest key per minute, share of %s (%s)",
                  ctx->heat_reads ? "3,000 RCU/s" : "1,000 WCU/s", ctx->heat_reads ? "r" : "w");
    if (c->h < 2 || vu_placeholder(c, 0, 1, c->w, d))
        return;
    const cJSON *list = vu_get(d->json, "families");
    int name_w = c->w >= 80 ? 16 : 12;
    int y = 1;
    char hdr[160];
    snprintf(hdr, sizeof hdr, "%-*s %-*s %5s %s", name_w, "Family", HEAT_COLS,
             "-30m        per minute   now", "keys", "hottest key / peak");
    canvas_text(c, 0, y++, c->w, hdr, THEME_TITLE);
    size_t first = ctx->scroll < NFAM ? ctx->scroll : 0;
    for (size_t f = first; f < NFAM && y < c->h; f++)
        draw_row(c, y++, name_w, f, find_family(list, f), ctx);
    if (y < c->h) {
        int x = 0;
        static const char *lbl[5] = {"<1% ", "<10% ", "<50% ", "<80% ", ">=80%"};
        for (int s = 0; s < 5; s++) {
            canvas_putc(c, x, y, canvas_glyph(c, (enum glyph)(G_SHADE0 + s)),
                        (enum theme_elem)(THEME_HEAT_0 + s));
            x += 2;
            x += canvas_text(c, x, y, c->w - x, lbl[s], THEME_MUTED) + 1;
        }
        canvas_text(c, x, y, c->w - x, " 1! = one key", THEME_MUTED);
        y++;
    }
    const cJSON *top = vu_get(d->json, "top");
    if (cJSON_IsArray(top) && y + 1 < c->h && !ctx->compact) {
        vu_title(c, 0, y++, c->w, "Hottest keys");
        const cJSON *t;
        cJSON_ArrayForEach(t, top)
        {
            if (y >= c->h)
                break;
            const char *key = vu_str(t, "key", NULL);
            if (!key)
                key = vu_str(t, "pk", "?");
            canvas_printf(c, 0, y++, c->w, THEME_BASE, "%8.0f  %s",
                          load_of(t, ctx->heat_reads,
                                  cJSON_IsNumber(vu_get(t, "peakWcu")) ? "peakWcu" : "wcu",
                                  cJSON_IsNumber(vu_get(t, "peakRcu")) ? "peakRcu" : "rcu"),
                          key);
        }
    }
}

void view_heat(struct canvas *c, int x, int y, int w, int h, const struct model *m,
               const struct view_ctx *ctx)
{
    vu_draw_clipped(c, x, y, w, h, draw, m, ctx);
}
