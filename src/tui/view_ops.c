/*
 * view_ops.c - the ops-log scatter-gather view (TUI.md §4.4): a row per
 * UTC day bucket (date, partition key, items, query latency with a bar,
 * status), the merged count against the limit, then the merged timeline
 * of classifications, breakdown bars and the KPIs.  Per-bucket figures
 * come from the reply's `buckets` array when the server sends one; else
 * items are counted from the merged entries (`derived`) and latency is
 * n/a.
 */
#include "tui/view_ops.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/timeutil.h"
#include "tui/view_util.h"
#include "tui/views.h"

#define OPS_DEFAULT_LIMIT 50 /* the server's default when the reply does not echo it */

static const cJSON *find_bucket(const cJSON *buckets, const char *day)
{
    const cJSON *b;
    cJSON_ArrayForEach(b, buckets)
    {
        const char *d = vu_str(b, "date", NULL);
        if (!d)
            d = vu_str(b, "day", NULL);
        if (d && !strncmp(d, day, 10))
            return b;
    }
    return NULL;
}

static int derived_items(const cJSON *entries, const char *day)
{
    int n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, entries)
    {
        const char *ts = vu_str(e, "timestamp", "");
        if (!strncmp(ts, day, 10))
            n++;
    }
    return n;
}

/* Draws the bucket table from row y; returns the next free row. */
static int draw_buckets(struct canvas *c, int y, int max_rows, const cJSON *j,
                        const struct view_ctx *ctx)
{
    const cJSON *buckets = vu_get(j, "buckets");
    const cJSON *entries = vu_get(j, "entries");
    bool have = cJSON_IsArray(buckets);
    int days = ctx->ops_days < 1 ? 7 : ctx->ops_days > 31 ? 31 : ctx->ops_days;
    bool wide = c->w >= 70;
    double maxlat = 0;
    const cJSON *b;
    cJSON_ArrayForEach(b, (have ? buckets : NULL)) maxlat = fmax(maxlat, vu_num(b, "latencyMs", 0));
    canvas_fill(c, 0, y, c->w, 1, ' ', THEME_TITLE);
    if (wide)
        canvas_text(c, 0, y, c->w,
                    "Date        PK                   Items  Latency ms           Status",
                    THEME_TITLE);
    else
        canvas_text(c, 0, y, c->w, "Date        Items  Latency  Status", THEME_TITLE);
    y++;
    int rows = days < max_rows - 1 ? days : max_rows - 1;
    if (rows < 0)
        rows = 0;
    for (int i = 0; i < rows; i++, y++) {
        char day[11], pk[32], items[16], lat[16];
        const char *status;
        time_day_bucket(ctx->now_ms - (int64_t)i * TIME_DAY_MS, day);
        snprintf(pk, sizeof pk, "OPS_LOG#%s", day);
        const cJSON *bk = have ? find_bucket(buckets, day) : NULL;
        double latency = -1;
        if (bk) {
            snprintf(items, sizeof items, "%.0f", vu_num(bk, "items", 0));
            if (vu_has_num(bk, "latencyMs")) {
                latency = vu_num(bk, "latencyMs", 0);
                snprintf(lat, sizeof lat, "%.1f", latency);
            } else {
                snprintf(lat, sizeof lat, "n/a");
            }
            status = vu_str(bk, "status", "ok");
            snprintf(pk, sizeof pk, "%.31s", vu_str(bk, "pk", pk));
        } else {
            snprintf(items, sizeof items, "%d", derived_items(entries, day));
            snprintf(lat, sizeof lat, "n/a");
            status = have ? "not read" : "derived";
        }
        canvas_text(c, 0, y, 11, day, THEME_BASE);
        if (wide) {
            canvas_text(c, 12, y, 20, pk, THEME_MUTED);
            canvas_printf(c, 33, y, 5, THEME_BASE, "%5s", items);
            canvas_printf(c, 40, y, 8, THEME_BASE, "%8s", lat);
            if (latency >= 0)
                canvas_bar(c, 49, y, 12, latency, maxlat, THEME_CHART_BAR);
            canvas_text(c, 62, y, c->w - 62, status,
                        !strcmp(status, "ok") ? THEME_OK : THEME_MUTED);
        } else {
            canvas_printf(c, 12, y, 5, THEME_BASE, "%5s", items);
            canvas_printf(c, 19, y, 7, THEME_BASE, "%7s", lat);
            canvas_text(c, 28, y, c->w - 28, status,
                        !strcmp(status, "ok") ? THEME_OK : THEME_MUTED);
        }
    }
    if (rows < days && max_rows > 0)
        canvas_printf(c, c->w > 20 ? c->w - 16 : 0, y - 1, 16, THEME_MUTED, "+%d more days",
                      days - rows);
    return y;
}

static int draw_footer(struct canvas *c, int y, const cJSON *j)
{
    const cJSON *entries = vu_get(j, "entries");
    int merged = cJSON_IsArray(entries) ? cJSON_GetArraySize(entries) : 0;
    int limit = (int)vu_num(j, "limit", OPS_DEFAULT_LIMIT);
    bool legacy = cJSON_IsTrue(vu_get(j, "legacyFallback")) || cJSON_IsTrue(vu_get(j, "legacy"));
    int x = canvas_printf(c, 0, y, c->w, THEME_BASE, "merged %d / limit %d", merged, limit);
    if (merged >= limit)
        x += canvas_text(c, x, y, c->w - x, "  truncated", THEME_WARN);
    if (legacy)
        x += canvas_text(c, x, y, c->w - x, "  legacy OPS_LOG fallback", THEME_WARN);
    if (!cJSON_IsArray(vu_get(j, "buckets")))
        canvas_text(c, x, y, c->w - x, "  (per-bucket figures derived)", THEME_MUTED);
    return y + 1;
}

/* Column widths of the timeline's severity and vector for a panel w wide:
 * the short ones (5, 11) when tight, whole words ("CRITICAL",
 * "supply_chain_diversion") when there is room. */
static void timeline_widths(int w, int *sevw, int *vecw)
{
    int avail = w - 10 - 34; /* time, agent, trigger, confidence, latency and the gaps */
    *sevw = 5;
    *vecw = 11;
    if (avail >= 8 + 1 + 22) {
        *sevw = 8;
        *vecw = avail - 9 < 24 ? avail - 9 : 24;
    } else if (avail > 5 + 1 + 11) {
        *vecw = avail - 6 < 24 ? avail - 6 : 24;
    }
}

static void draw_timeline(struct canvas *c, int x, int y, int w, int rows, const cJSON *j,
                          const struct view_ctx *ctx)
{
    const cJSON *entries = vu_get(j, "entries");
    char head[200];
    int sevw, vecw;
    timeline_widths(w, &sevw, &vecw);
    snprintf(head, sizeof head, "%-10s%-16s %-5s %-*s %-*s %4s %5s", "Time", "Agent", "Trig", sevw,
             "Sev", vecw, "Vector", "Conf", "Lat");
    vu_title(c, x, y, w, head);
    int n = cJSON_IsArray(entries) ? cJSON_GetArraySize(entries) : 0;
    if (n == 0 && rows > 1)
        canvas_text(c, x, y + 1, w, "no classifications", THEME_MUTED);
    size_t first = ctx->scroll < (size_t)n ? ctx->scroll : 0;
    for (int i = 0; i + 1 < rows && (int)first + i < n; i++) {
        const cJSON *e = cJSON_GetArrayItem(entries, (int)first + i);
        char clock[32], line[200];
        const char *trig = vu_str(e, "trigger", "");
        vu_iso_clock(vu_str(e, "timestamp", NULL), ctx->tz_local, clock, sizeof clock);
        snprintf(line, sizeof line, "%-16.16s %-5.5s %-*.*s %-*.*s %4.0f %5.0f",
                 vu_str(e, "agent", "unknown"), !strncmp(trig, "scan", 4) ? "scan" : trig, sevw,
                 sevw, vu_str(e, "aiSeverity", "-"), vecw, vecw, vu_str(e, "aiAttackVector", "-"),
                 vu_num(e, "aiConfidence", 0), vu_num(e, "latencyMs", 0));
        canvas_text(c, x, y + 1 + i, 10, clock, THEME_MUTED);
        canvas_text(c, x + 10, y + 1 + i, w - 10, line, THEME_BASE);
    }
}

/* The model that classified the merged entries (their geminiModel: a
 * model's name, or "rules"), "+N" when there were others, "-" without
 * entries; the stats' field is the original's constant and says nothing. */
static void entries_model(const cJSON *j, char *out, size_t n)
{
    struct {
        const char *name;
        int count;
    } seen[8];
    int nseen = 0, others = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, vu_get(j, "entries"))
    {
        const char *mdl = vu_str(e, "geminiModel", NULL);
        int k = 0;
        if (!mdl || !*mdl)
            continue;
        while (k < nseen && strcmp(seen[k].name, mdl) != 0)
            k++;
        if (k < nseen) {
            seen[k].count++;
        } else if (nseen < 8) {
            seen[nseen].name = mdl;
            seen[nseen++].count = 1;
        } else {
            others = 1;
        }
    }
    if (nseen == 0) {
        snprintf(out, n, "-");
        return;
    }
    int top = 0;
    for (int k = 1; k < nseen; k++)
        if (seen[k].count > seen[top].count)
            top = k;
    if (nseen + others > 1)
        snprintf(out, n, "%s +%d", seen[top].name, nseen - 1 + others);
    else
        snprintf(out, n, "%s", seen[top].name);
}

/* Bars of one breakdown object; returns rows used. */
static int draw_breakdown(struct canvas *c, int x, int y, int w, int rows, const char *title,
                          const cJSON *obj)
{
    if (rows <= 0)
        return 0;
    vu_title(c, x, y, w, title);
    int used = 1;
    double max = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, (cJSON_IsObject(obj) ? obj : NULL)) max =
        fmax(max, cJSON_IsNumber(it) ? it->valuedouble : 0);
    cJSON_ArrayForEach(it, (cJSON_IsObject(obj) ? obj : NULL))
    {
        if (used >= rows)
            break;
        char num[16];
        snprintf(num, sizeof num, "%.0f", cJSON_IsNumber(it) ? it->valuedouble : 0);
        int lw = w / 2;
        canvas_text(c, x, y + used, lw - 1, it->string ? it->string : "?", THEME_BASE);
        canvas_bar(c, x + lw, y + used, w - lw - 5, cJSON_IsNumber(it) ? it->valuedouble : 0, max,
                   THEME_CHART_BAR);
        canvas_text(c, x + w - 4, y + used, 4, num, THEME_MUTED);
        used++;
    }
    return used;
}

static void draw(struct canvas *c, const struct model *m, const struct view_ctx *ctx)
{
    const struct data_slot *d = model_data(m, POLL_OPSLOG, 0);
    int days = ctx->ops_days < 1 ? 7 : ctx->ops_days > 31 ? 31 : ctx->ops_days;
    canvas_printf(c, 0, 0, c->w, THEME_TITLE, "Ops log: %d UTC day bucket%s, scatter-gather", days,
                  days == 1 ? "" : "s");
    if (c->h < 2 || vu_placeholder(c, 0, 1, c->w, d))
        return;
    const cJSON *j = d->json;
    bool full = !ctx->compact && c->h >= 16 && c->w >= 70;
    int budget = full ? c->h - 1 - 12 : c->h - 2; /* rows for header + buckets */
    if (budget < 2)
        budget = c->h - 2;
    int y = draw_buckets(c, 1, budget, j, ctx);
    if (y < c->h)
        y = draw_footer(c, y, j);
    if (!full || y >= c->h)
        return;
    const cJSON *st = vu_get(j, "stats");
    char model[160];
    entries_model(j, model, sizeof model);
    canvas_printf(c, 0, y++, c->w, THEME_INFO,
                  "Total %.0f  avg latency %.0f ms  avg confidence %.0f  model %s",
                  vu_num(st, "totalOperations", 0), vu_num(st, "avgLatencyMs", 0),
                  vu_num(st, "avgConfidence", 0), model);
    int rows = c->h - y;
    int lw = c->w * 62 / 100;
    draw_timeline(c, 0, y, lw - 1, rows, j, ctx);
    int rx = lw + 1, rw = c->w - rx;
    int used = draw_breakdown(c, rx, y, rw, rows, "By agent", vu_get(st, "agentBreakdown"));
    used += draw_breakdown(c, rx, y + used, rw, rows - used, "By AI severity",
                           vu_get(st, "severityBreakdown"));
    draw_breakdown(c, rx, y + used, rw, rows - used, "By vector",
                   vu_get(st, "attackVectorBreakdown"));
}

void view_ops(struct canvas *c, int x, int y, int w, int h, const struct model *m,
              const struct view_ctx *ctx)
{
    vu_draw_clipped(c, x, y, w, h, draw, m, ctx);
}
