/*
 * view_feed.c - the live threat feed (TUI.md §4.2): one line per threat,
 * newest first, with the unseen and backfill markers, a 2 s flash for new
 * rows, the selection, and on Enter a detail pane with every field of the
 * alert.  The list scrolls so that the selected row stays in view.
 */
#include "tui/view_feed.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/view_util.h"
#include "tui/views.h"
#include "util/timescale.h"
#include "util/xalloc.h"

/* Column plan for a given width. */
struct cols {
    int mark, time, sev, brand, type, product, loc, details; /* widths; 0 = hidden */
};

static struct cols plan(int w, bool brands, bool tz_local)
{
    /* "14:03:27Z", or "15:03:27 CEST" in local time. */
    struct cols k = {2, tz_local ? 13 : 9, 4, brands ? 10 : 0, 12, 12, 14, 0};
    int fixed = k.mark + k.time + 1 + k.sev + 1 + (k.brand ? k.brand + 1 : 0) + k.type + 1 +
                k.product + 1 + k.loc + 1;
    if (w - fixed < 16) { /* narrow: shrink, then drop columns */
        k.product = 8;
        fixed -= 4;
    }
    if (w - fixed < 12 && k.loc) {
        fixed -= k.loc + 1;
        k.loc = 0;
    }
    if (w - fixed < 12 && k.brand) {
        fixed -= k.brand + 1;
        k.brand = 0;
    }
    if (w - fixed >= 72) { /* wide: product names whole (most of them) */
        k.product += 12;
        fixed += 12;
    }
    k.details = w - fixed > 0 ? w - fixed : 0;
    return k;
}

static void draw_header(struct canvas *c, int y, const struct cols *k)
{
    int x = k->mark;
    canvas_fill(c, 0, y, c->w, 1, ' ', THEME_TITLE);
    canvas_text(c, x, y, k->time, "Time", THEME_TITLE);
    x += k->time + 1;
    canvas_text(c, x, y, k->sev, "Sev", THEME_TITLE);
    x += k->sev + 1;
    if (k->brand) {
        canvas_text(c, x, y, k->brand, "Brand", THEME_TITLE);
        x += k->brand + 1;
    }
    canvas_text(c, x, y, k->type, "Type", THEME_TITLE);
    x += k->type + 1;
    canvas_text(c, x, y, k->product, "Product", THEME_TITLE);
    x += k->product + 1;
    if (k->loc) {
        canvas_text(c, x, y, k->loc, "Location", THEME_TITLE);
        x += k->loc + 1;
    }
    canvas_text(c, x, y, k->details, "Details", THEME_TITLE);
}

static void draw_row(struct canvas *c, int y, const struct cols *k, const struct model *m,
                     const struct threat_row *r, const struct view_ctx *ctx, bool selected)
{
    char clock[32];
    bool flash = r->arrived_ms > 0 && !(r->flags & ROW_GAP) &&
                 ctx->now_ms - r->arrived_ms < (int64_t)(scaled(MODEL_FLASH_MS / 1000.0) * 1000);
    enum theme_elem base = flash ? THEME_FLASH : THEME_BASE;
    canvas_fill(c, 0, y, c->w, 1, ' ', base);
    if (r->flags & ROW_UNSEEN && !flash)
        canvas_putc(c, 0, y, canvas_glyph(c, G_UNSEEN), THEME_UNSEEN);
    if (r->flags & ROW_BACKFILL)
        canvas_putc(c, 1, y, canvas_glyph(c, G_BACKFILL), flash ? base : THEME_INFO);
    int x = k->mark;
    view_clock(r->ts_ms, ctx->tz_local, clock, sizeof clock);
    canvas_text(c, x, y, k->time, clock, flash ? base : THEME_MUTED);
    x += k->time + 1;
    if (r->flags & ROW_GAP) {
        canvas_text(c, x, y, c->w - x, r->details, THEME_WARN);
    } else {
        canvas_text(c, x, y, k->sev, sev_label(r->sev), vu_sev_elem(r->sev));
        x += k->sev + 1;
        if (k->brand) {
            canvas_text(c, x, y, k->brand, model_brand_name(m, r->brand), base);
            x += k->brand + 1;
        }
        canvas_text(c, x, y, k->type, model_type_label(r->type), base);
        x += k->type + 1;
        char prod[64];
        if (!strcmp(r->product, r->product_id))
            snprintf(prod, sizeof prod, "%.8s", r->product_id[0] ? r->product_id : "-");
        else
            snprintf(prod, sizeof prod, "%s", r->product);
        canvas_text(c, x, y, k->product, prod, base);
        x += k->product + 1;
        if (k->loc) {
            canvas_text(c, x, y, k->loc, r->location, base);
            x += k->loc + 1;
        }
        canvas_text(c, x, y, k->details, r->details,
                    r->flags & ROW_RESOLVED && !flash ? THEME_MUTED : base);
    }
    if (selected)
        canvas_attr(c, 0, y, c->w, 1, CANVAS_A_REVERSE);
}

/* The detail pane: every field of the alert (objects one level deep),
 * in two columns when one does not hold them. */
#define DETAIL_LINES 64
static void draw_detail(struct canvas *c, int y, int h, const struct threat_row *r)
{
    if (h < 3)
        return;
    canvas_box(c, 0, y, c->w, h, THEME_BORDER_FOCUS);
    canvas_text(c, 2, y, c->w - 4, " Alert detail ", THEME_TITLE);
    int inner = h - 2;
    if (!r || !r->raw) {
        canvas_text(c, 2, y + 1, c->w - 4, r ? r->details : "no alert selected", THEME_MUTED);
        return;
    }
    static const size_t line_max = 300;
    char *lines = xmalloc(DETAIL_LINES * line_max);
    int n = 0;
    char val[256];
    cJSON *a = cJSON_Parse(r->raw);
    const cJSON *it;
    cJSON_ArrayForEach(it, a)
    {
        if (cJSON_IsObject(it) && cJSON_GetArraySize(it) > 0) {
            const cJSON *sub;
            cJSON_ArrayForEach(sub, it)
            {
                if (n == DETAIL_LINES)
                    break;
                vu_value_text(sub, val, sizeof val);
                snprintf(lines + (size_t)n++ * line_max, line_max, "%s.%s: %s",
                         it->string ? it->string : "?", sub->string ? sub->string : "?", val);
            }
            continue;
        }
        if (n == DETAIL_LINES)
            break;
        vu_value_text(it, val, sizeof val);
        snprintf(lines + (size_t)n++ * line_max, line_max, "%s: %s", it->string ? it->string : "?",
                 val);
    }
    cJSON_Delete(a);
    int cols = n > inner && c->w >= 60 ? 2 : 1;
    int cw = (c->w - 4) / cols;
    for (int i = 0; i < n; i++) {
        int col = i / (inner > 0 ? inner : 1), rr = i % (inner > 0 ? inner : 1);
        if (col >= cols)
            break;
        canvas_text(c, 2 + col * cw, y + 1 + rr, cw - 1, lines + (size_t)i * line_max, THEME_BASE);
    }
    free(lines);
    canvas_text(c, 2, y + h - 1, c->w - 4, " c chain  a ack  Esc back ", THEME_HINT);
}

static void draw(struct canvas *c, const struct model *m, const struct view_ctx *ctx)
{
    struct cols k = plan(c->w, model_brand_count(m) > 1, ctx->tz_local);
    const struct feed_state *f = model_feed_c(m);
    int list_h = c->h;
    if (ctx->feed_detail && c->h >= 8)
        list_h = c->h / 3 + 1;
    draw_header(c, 0, &k);
    int rows = view_feed_rows(list_h, ctx->compact);
    size_t want = rows > 0 ? (size_t)rows : 0;
    size_t top = f->sel >= want && want > 0 ? f->sel - want + 1 : 0;
    size_t max = top + want;
    size_t *idx = xmalloc((max + 1) * sizeof *idx);
    size_t total = model_visible(m, idx, max);
    if (total == 0 && rows > 0) {
        canvas_text(c, 2, 1, c->w - 2,
                    f->filter[0] ? "no threats match the filter" : "no threats yet", THEME_MUTED);
    }
    for (int i = 0; i < rows; i++) {
        size_t n = top + (size_t)i;
        if (n >= total || n >= max)
            break;
        draw_row(c, 1 + i, &k, m, model_threat_at(m, idx[n]), ctx, n == f->sel);
    }
    free(idx);
    if (list_h < c->h)
        draw_detail(c, list_h, c->h - list_h, model_selected(m));
}

void view_feed(struct canvas *c, int x, int y, int w, int h, const struct model *m,
               const struct view_ctx *ctx)
{
    vu_draw_clipped(c, x, y, w, h, draw, m, ctx);
}
