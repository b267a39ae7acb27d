/*
 * view_overview.c - the brand overview (TUI.md §4.1): six tiles (scans,
 * products, active, recalled, open alerts, authenticity %), open alerts
 * per severity over 24 h from the threat ring, bars of the top five scan
 * locations and suspicious hotspots, the last five threats and the last
 * three audit entries.  Numbers come only from the server's replies or
 * the ring; a figure that is not known is drawn as "--".
 */
#include "tui/view_overview.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/timeutil.h"
#include "tui/view_util.h"
#include "tui/views.h"

struct tile {
    const char *label;
    char value[32];
    enum theme_elem elem;
};

/* First number found among several (object, key) sources; false if none. */
static bool pick(double *out, const cJSON *a, const char *ka, const cJSON *b, const char *kb,
                 const cJSON *c, const char *kc)
{
    if (a && vu_has_num(a, ka))
        *out = vu_num(a, ka, 0);
    else if (b && vu_has_num(b, kb))
        *out = vu_num(b, kb, 0);
    else if (c && vu_has_num(c, kc))
        *out = vu_num(c, kc, 0);
    else
        return false;
    return true;
}

static void set_num(struct tile *t, bool known, double v)
{
    if (known)
        snprintf(t->value, sizeof t->value, "%.0f", v);
    else
        snprintf(t->value, sizeof t->value, "--");
}

static void build_tiles(const struct model *m, const struct view_ctx *ctx, struct tile t[6])
{
    const cJSON *st = model_data(m, POLL_STATS, ctx->brand)->json;
    const cJSON *an = model_data(m, POLL_ANALYTICS, ctx->brand)->json;
    const cJSON *status = vu_get(an, "statusBreakdown");
    const cJSON *results = vu_get(an, "resultBreakdown");
    double v = 0;
    bool k;
    static const char *labels[6] = {"Scans",    "Products",    "Active",
                                    "Recalled", "Open alerts", "Authentic"};
    for (int i = 0; i < 6; i++) {
        t[i].label = labels[i];
        t[i].elem = THEME_BASE;
    }
    k = pick(&v, st, "scanCount", st, "totalScans", an, "totalScans");
    set_num(&t[0], k, v);
    k = pick(&v, st, "productCount", an, "totalProducts", NULL, NULL);
    set_num(&t[1], k, v);
    k = pick(&v, st, "activeProducts", status, "active", NULL, NULL);
    if (!k && cJSON_IsObject(status)) {
        k = true;
        v = 0;
    }
    set_num(&t[2], k, v);
    t[2].elem = THEME_OK;
    k = pick(&v, st, "recalledProducts", status, "recalled", NULL, NULL);
    if (!k && cJSON_IsObject(status)) {
        k = true;
        v = 0;
    }
    set_num(&t[3], k, v);
    if (k && v > 0)
        t[3].elem = THEME_WARN;
    /* Open alerts: the server's count when it gives one, else the ring. */
    k = pick(&v, st, "unresolvedThreats", NULL, NULL, NULL, NULL);
    if (!k) {
        v = 0;
        for (size_t i = 0; i < model_threat_count(m); i++) {
            const struct threat_row *r = model_threat_at(m, i);
            if (r->brand == ctx->brand && !(r->flags & (ROW_GAP | ROW_RESOLVED)))
                v++;
        }
        k = true;
    }
    set_num(&t[4], k, v);
    if (v > 0)
        t[4].elem = THEME_BAD;
    /* Authenticity: authentic / all results. */
    double all = 0, ok = 0;
    const cJSON *it;
    const cJSON *rb = cJSON_IsObject(results) ? results : NULL;
    cJSON_ArrayForEach(it, rb)
    {
        if (!cJSON_IsNumber(it))
            continue;
        all += it->valuedouble;
        if (it->string && !strcmp(it->string, "authentic"))
            ok += it->valuedouble;
    }
    if (all > 0) {
        double pct = 100.0 * ok / all;
        snprintf(t[5].value, sizeof t[5].value, "%.1f%%", floor(pct * 10 + 0.5) / 10);
        t[5].elem = pct >= 90 ? THEME_OK : pct >= 70 ? THEME_WARN : THEME_BAD;
    } else {
        snprintf(t[5].value, sizeof t[5].value, "--");
    }
}

static void draw_tiles(struct canvas *c, int y, int th, const struct tile t[6], bool big)
{
    int tw = c->w / 6;
    for (int i = 0; i < 6; i++) {
        int x = i * tw;
        int w = i == 5 ? c->w - x : tw;
        canvas_box(c, x, y, w, th, THEME_BORDER);
        canvas_text(c, x + 1, y, w - 2, t[i].label, THEME_TITLE);
        if (big && th >= 7 && (int)strlen(t[i].value) * 4 <= w - 2)
            canvas_bigtext(c, x + 1, y + 1, t[i].value, t[i].elem);
        else
            canvas_text(c, x + 2, y + 1, w - 3, t[i].value, t[i].elem);
    }
}

/* Open alerts of the brand per severity over the last 24 h. */
static void sev_counts(const struct model *m, const struct view_ctx *ctx, unsigned n[4])
{
    n[0] = n[1] = n[2] = n[3] = 0;
    for (size_t i = 0; i < model_threat_count(m); i++) {
        const struct threat_row *r = model_threat_at(m, i);
        if (r->brand != ctx->brand || r->flags & (ROW_GAP | ROW_RESOLVED))
            continue;
        if (r->ts_ms < ctx->now_ms - TIME_DAY_MS)
            continue;
        n[r->sev]++;
    }
}

static int draw_sev_line(struct canvas *c, int x, int y, int w, const struct model *m,
                         const struct view_ctx *ctx)
{
    unsigned n[4];
    char buf[32];
    sev_counts(m, ctx, n);
    int col = x + canvas_text(c, x, y, w, "Open alerts (24h) ", THEME_MUTED);
    for (int s = SEV_CRITICAL; s >= SEV_LOW; s--) {
        col +=
            canvas_text(c, col, y, x + w - col, sev_label((enum sev)s), vu_sev_elem((enum sev)s));
        snprintf(buf, sizeof buf, " %u  ", n[s]);
        col += canvas_text(c, col, y, x + w - col, buf, THEME_BASE);
    }
    return col;
}

/* Top five of a locations array as labelled bars. */
static void draw_bars(struct canvas *c, int x, int y, int w, int rows, const char *title,
                      const struct data_slot *d, const char *key, bool hotspots)
{
    vu_title(c, x, y, w, title);
    if (rows < 2 || vu_placeholder(c, x, y + 1, w, d))
        return;
    const cJSON *list = vu_get(d->json, key);
    int n = cJSON_IsArray(list) ? cJSON_GetArraySize(list) : 0;
    if (n == 0) {
        canvas_text(c, x, y + 1, w, hotspots ? "no suspicious scans" : "no scans yet", THEME_MUTED);
        return;
    }
    double max = 0;
    for (int i = 0; i < n && i < 5; i++)
        max = fmax(max, vu_num(cJSON_GetArrayItem(list, i), "count", 0));
    int label_w = w > 40 ? 18 : w / 2;
    for (int i = 0; i < n && i < 5 && i + 1 < rows; i++) {
        const cJSON *e = cJSON_GetArrayItem(list, i);
        double cnt = vu_num(e, "count", 0);
        char label[96], num[24];
        const char *city = vu_str(e, "city", ""), *cc = vu_str(e, "country", "");
        if (city[0] && strcmp(city, "Unknown"))
            snprintf(label, sizeof label, "%s, %s", city, cc);
        else
            snprintf(label, sizeof label, "%s", cc);
        snprintf(num, sizeof num, "%.0f", cnt);
        canvas_text(c, x, y + 1 + i, label_w, label, THEME_BASE);
        int nw = (int)strlen(num);
        int bw = w - label_w - nw - 2;
        enum theme_elem e2 = THEME_CHART_BAR;
        if (hotspots)
            e2 = cnt >= 5 ? THEME_BAD : cnt >= 2 ? THEME_WARN : THEME_INFO;
        canvas_bar(c, x + label_w + 1, y + 1 + i, bw, cnt, max, e2);
        canvas_text(c, x + w - nw, y + 1 + i, nw, num, THEME_MUTED);
    }
}

static void draw_threats(struct canvas *c, int y, int rows, const struct model *m,
                         const struct view_ctx *ctx)
{
    vu_title(c, 0, y, c->w, "Last threats");
    int shown = 0;
    for (size_t i = 0; i < model_threat_count(m) && shown + 1 < rows && shown < 5; i++) {
        const struct threat_row *r = model_threat_at(m, i);
        if (r->brand != ctx->brand || r->flags & ROW_GAP)
            continue;
        char clock[32], prod[16];
        int yy = y + 1 + shown++;
        view_clock(r->ts_ms, ctx->tz_local, clock, sizeof clock);
        snprintf(prod, sizeof prod, "%.8s", r->product_id[0] ? r->product_id : "-");
        int x = canvas_text(c, 0, yy, 12, clock, THEME_MUTED);
        x = x < 10 ? 10 : x + 1;
        canvas_text(c, x, yy, 4, sev_label(r->sev), vu_sev_elem(r->sev));
        canvas_text(c, x + 5, yy, 12, model_type_label(r->type), THEME_BASE);
        canvas_text(c, x + 18, yy, 8, prod, THEME_MUTED);
        canvas_text(c, x + 27, yy, c->w - x - 27, r->details, THEME_BASE);
    }
    if (shown == 0 && rows > 1)
        canvas_text(c, 0, y + 1, c->w, "no threats", THEME_MUTED);
}

static void draw_audit(struct canvas *c, int y, int rows, const struct model *m,
                       const struct view_ctx *ctx)
{
    const struct data_slot *d = model_data(m, POLL_AUDIT, 0);
    vu_title(c, 0, y, c->w, "Audit");
    if (rows < 2 || vu_placeholder(c, 0, y + 1, c->w, d))
        return;
    const cJSON *list = vu_get(d->json, "entries");
    int n = cJSON_IsArray(list) ? cJSON_GetArraySize(list) : 0;
    if (n == 0)
        canvas_text(c, 0, y + 1, c->w, "no entries", THEME_MUTED);
    for (int i = 0; i < n && i < 3 && i + 1 < rows; i++) {
        const cJSON *e = cJSON_GetArrayItem(list, i);
        char clock[32], line[256];
        vu_iso_clock(vu_str(e, "timestamp", NULL), ctx->tz_local, clock, sizeof clock);
        snprintf(line, sizeof line, "%-6s %-20s %s %s", vu_str(e, "type", "?"),
                 vu_str(e, "action", "?"), vu_str(e, "actor", ""), vu_str(e, "productId", ""));
        int x = canvas_text(c, 0, y + 1 + i, 12, clock, THEME_MUTED);
        x = x < 10 ? 10 : x + 1;
        canvas_text(c, x, y + 1 + i, c->w - x, line, THEME_BASE);
    }
}

static void draw_compact(struct canvas *c, const struct model *m, const struct view_ctx *ctx,
                         const struct tile t[6])
{
    int x = 0, y = 0;
    for (int i = 0; i < 6; i++) {
        char buf[64];
        snprintf(buf, sizeof buf, "%s %s", t[i].label, t[i].value);
        int bw = canvas_text_width(c, buf);
        if (x > 0 && x + bw > c->w) {
            x = 0;
            y++;
        }
        int nx = vu_kv(c, x, y, c->w - x, t[i].label, t[i].value, t[i].elem);
        x = nx + 2;
    }
    y++;
    draw_sev_line(c, 0, y++, c->w, m, ctx);
    if (y < c->h)
        draw_threats(c, y, c->h - y, m, ctx);
}

static void draw(struct canvas *c, const struct model *m, const struct view_ctx *ctx)
{
    struct tile t[6];
    build_tiles(m, ctx, t);
    if (ctx->compact || c->w < 60 || c->h < 18) {
        draw_compact(c, m, ctx, t);
        return;
    }
    bool big = ctx->big && c->h >= 27;
    int th = big ? 7 : 3;
    int y = 0;
    draw_tiles(c, y, th, t, big);
    y += th;
    draw_sev_line(c, 0, y++, c->w, m, ctx);
    int half = c->w / 2;
    draw_bars(c, 0, y, half - 1, 6, "Top scan locations",
              model_data(m, POLL_BRAND_SCANS, ctx->brand), "locations", false);
    draw_bars(c, half + 1, y, c->w - half - 1, 6, "Suspicious hotspots",
              model_data(m, POLL_BRAND_SCANS, ctx->brand), "threatHotspots", true);
    y += 7;
    int audit_rows = 4;
    int threat_rows = c->h - y - audit_rows;
    if (threat_rows > 6)
        threat_rows = 6;
    draw_threats(c, y, threat_rows, m, ctx);
    y += threat_rows;
    draw_audit(c, y, c->h - y, m, ctx);
}

void view_overview(struct canvas *c, int x, int y, int w, int h, const struct model *m,
                   const struct view_ctx *ctx)
{
    vu_draw_clipped(c, x, y, w, h, draw, m, ctx);
}
