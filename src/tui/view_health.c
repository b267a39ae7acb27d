/*
 * view_health.c - server and connection health (TUI.md §4.7): the
 * /api/health reply (status, database, version) with a sparkline of the
 * last poll latencies, the endpoint probes, and one row per subscribed
 * brand's SSE stream (state, since, last event and heartbeat,
 * reconnects, rows backfilled by reconciles, Last-Event-ID).
 */
#include "tui/view_health.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "tui/view_util.h"
#include "tui/views.h"

static enum theme_elem state_elem(enum stream_state s)
{
    switch (s) {
    case ST_LIVE:
        return THEME_STATUS_LIVE;
    case ST_STALLED:
        return THEME_STATUS_STALE;
    case ST_RETRYING:
        return THEME_STATUS_RETRY;
    case ST_ERROR:
        return THEME_STATUS_DOWN;
    default:
        return THEME_MUTED;
    }
}

static uint32_t state_glyph(const struct canvas *c, enum stream_state s)
{
    return canvas_glyph(c, s == ST_LIVE ? G_DOT_LIVE : s == ST_ERROR ? G_DOT_DOWN : G_DOT_RETRY);
}

static int draw_server(struct canvas *c, int y, const struct model *m)
{
    const struct data_slot *d = model_data(m, POLL_HEALTH, 0);
    if (vu_placeholder(c, 0, y, c->w, d))
        return y + 1;
    const cJSON *svc = vu_get(d->json, "services");
    const char *status = vu_str(d->json, "status", "?");
    const char *db = vu_str(svc, "database", "?");
    char lat[32];
    int x = vu_kv(c, 0, y, c->w, "Status", status,
                  !strcmp(status, "operational") ? THEME_OK : THEME_BAD) +
            2;
    x = vu_kv(c, x, y, c->w - x, "DB", db, !strcmp(db, "healthy") ? THEME_OK : THEME_BAD) + 1;
    x += canvas_text(c, x, y, c->w - x, vu_str(svc, "dbLatency", ""), THEME_BASE) + 2;
    x = vu_kv(c, x, y, c->w - x, "version", vu_str(d->json, "version", "?"), THEME_BASE) + 2;
    snprintf(lat, sizeof lat, "%.0f ms", d->latency_ms);
    vu_kv(c, x, y, c->w - x, "poll", lat, THEME_BASE);
    if (d->state == DATA_ERROR)
        canvas_printf(c, 0, y + 1, c->w, THEME_WARN,
                      "last poll failed (HTTP %d); showing older data", d->status);
    return y + (d->state == DATA_ERROR ? 2 : 1);
}

static int draw_spark(struct canvas *c, int y, const struct model *m)
{
    double lat[64];
    int x = canvas_text(c, 0, y, c->w, "Latency ", THEME_MUTED);
    size_t room = c->w - x > 0 ? (size_t)(c->w - x - 12) : 0;
    if (room > 64)
        room = 64;
    size_t n = model_health_latencies(m, lat, 64);
    size_t first = n > room ? n - room : 0;
    double max = 0;
    for (size_t i = first; i < n; i++)
        if (lat[i] > max)
            max = lat[i];
    for (size_t i = first; i < n; i++) {
        int level = max > 0 ? (int)(lat[i] / max * 7 + 0.5) : 0;
        canvas_putc(c, x++, y, canvas_spark(c, level), THEME_CHART_BAR);
    }
    if (n == 0)
        x += canvas_text(c, x, y, c->w - x, "no samples", THEME_MUTED);
    else
        canvas_printf(c, x + 1, y, c->w - x - 1, THEME_MUTED, "max %.0f ms", max);
    return y + 1;
}

/* One endpoint line: name, status, latency, age, in w columns at x. */
static void endpoint_line(struct canvas *c, int x, int y, int w, const char *name, int status,
                          double latency_ms, int64_t age_ms)
{
    char age[24], line[64];
    bool ok = status >= 200 && status < 400;
    int nw = w - 22 > 8 ? w - 22 : 8;
    vu_age(age_ms, age, sizeof age);
    canvas_text(c, x, y, nw, name, THEME_BASE);
    if (status)
        canvas_printf(c, x + nw + 1, y, 4, ok ? THEME_OK : THEME_BAD, "%d", status);
    else
        canvas_text(c, x + nw + 1, y, 4, "down", THEME_BAD);
    snprintf(line, sizeof line, "%5.0fms %s", latency_ms, age);
    canvas_text(c, x + nw + 5, y, w - nw - 5, line, THEME_MUTED);
}

/*
 * Endpoints: the last result of every poll the dashboard makes (they are
 * all GETs, so they double as non-mutating probes), then the glue's
 * extra probes (model_probe).  Two columns when the width allows.
 */
static int draw_probes(struct canvas *c, int y, int last, const struct model *m,
                       const struct view_ctx *ctx)
{
    static const struct {
        enum poll_kind k;
        const char *name;
    } polls[] = {
        {POLL_HEALTH, "/api/health"},       {POLL_THREATS, "/api/threats"},
        {POLL_STATS, "/api/brands"},        {POLL_BRAND_SCANS, "/api/brands/scans"},
        {POLL_ANALYTICS, "/api/analytics"}, {POLL_AUDIT, "/api/audit"},
        {POLL_OPSLOG, "/api/ops-log"},      {POLL_PARTITIONS, "/api/admin/partitions"},
        {POLL_BRANDS, "/api/brands/list"},  {POLL_PROBE, "probe"},
    };
    struct {
        const char *name;
        int status;
        double lat;
        int64_t at;
    } e[32];
    size_t n = 0;
    for (size_t i = 0; i < sizeof polls / sizeof polls[0]; i++) {
        const struct data_slot *d = model_data(m, polls[i].k, ctx->brand);
        if (d->at_ms == 0)
            continue;
        e[n].name = polls[i].name;
        e[n].status = d->status;
        e[n].lat = d->latency_ms;
        e[n].at = d->at_ms;
        n++;
    }
    for (size_t i = 0; i < model_probe_count(m) && n < 32; i++) {
        const struct model_probe *p = model_probe_at(m, i);
        e[n].name = p->name;
        e[n].status = p->status;
        e[n].lat = p->latency_ms;
        e[n].at = p->at_ms;
        n++;
    }
    if (n == 0 || y >= last)
        return y;
    vu_title(c, 0, y++, c->w, "Endpoints (last poll)");
    int cols = c->w >= 80 ? 2 : 1;
    int cw = c->w / cols;
    int rows = last - y;
    int need = ((int)n + cols - 1) / cols;
    if (rows > need)
        rows = need;
    if (rows <= 0)
        return y;
    int used = 0;
    for (size_t i = 0; i < n; i++) {
        int col = (int)i / rows, r = (int)i % rows;
        if (col >= cols)
            break;
        endpoint_line(c, col * cw, y + r, cw - 1, e[i].name, e[i].status, e[i].lat,
                      ctx->now_ms - e[i].at);
        if (r + 1 > used)
            used = r + 1;
    }
    return y + used;
}

static void ago(int64_t now, int64_t t, char *out, size_t n)
{
    if (t <= 0) {
        snprintf(out, n, "never");
        return;
    }
    vu_age(now - t, out, n);
}

static void draw_streams(struct canvas *c, int y, const struct model *m, const struct view_ctx *ctx)
{
    if (y >= c->h)
        return;
    vu_title(c, 0, y++, c->w,
             "Stream      State       Since   Event   Beat    Recon Backfill Last-Event-ID");
    if (ctx->n_streams == 0 && y < c->h)
        canvas_text(c, 0, y, c->w, "no streams", THEME_MUTED);
    size_t first = ctx->scroll < ctx->n_streams ? ctx->scroll : 0;
    for (size_t i = first; i < ctx->n_streams && y < c->h; i++, y++) {
        const struct stream_info *s = &ctx->streams[i];
        char since[24], ev[24], hb[24];
        ago(ctx->now_ms, s->since_ms, since, sizeof since);
        ago(ctx->now_ms, s->last_event_ms, ev, sizeof ev);
        ago(ctx->now_ms, s->last_heartbeat_ms, hb, sizeof hb);
        canvas_text(c, 0, y, 11, model_brand_name(m, i), THEME_BASE);
        canvas_putc(c, 12, y, state_glyph(c, s->state), state_elem(s->state));
        canvas_text(c, 14, y, 10, net_state_name(s->state), state_elem(s->state));
        canvas_printf(c, 24, y, c->w - 24, THEME_BASE, "%-7s %-7s %-7s %5lu %8lu %s", since, ev, hb,
                      s->reconnects, s->backfilled, s->last_event_id[0] ? s->last_event_id : "-");
        if (s->error[0] && y + 1 < c->h && !ctx->compact)
            canvas_printf(c, 14, ++y, c->w - 14, THEME_WARN, "%s", s->error);
    }
}

static void draw(struct canvas *c, const struct model *m, const struct view_ctx *ctx)
{
    vu_title(c, 0, 0, c->w, "Health");
    int y = 1;
    if (y < c->h)
        y = draw_server(c, y, m);
    if (y < c->h)
        y = draw_spark(c, y, m);
    if (!ctx->compact) {
        size_t ns = ctx->n_streams ? ctx->n_streams : 1;
        int keep = (int)ns + 1;
        y = draw_probes(c, y, c->h - keep, m, ctx);
    }
    draw_streams(c, y, m, ctx);
}

void view_health(struct canvas *c, int x, int y, int w, int h, const struct model *m,
                 const struct view_ctx *ctx)
{
    vu_draw_clipped(c, x, y, w, h, draw, m, ctx);
}
