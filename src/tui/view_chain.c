/*
 * view_chain.c - the provenance chain of one product (TUI.md §4.5): a
 * header with the product's identity and the HMAC and chain checks (from
 * verify?metadata=true and products/events), then the hops with their
 * link glyphs: intact, or broken with the word BROKEN; gaps longer than
 * 72 h are annotated; Enter expands the selected hop's hashes; `v` swaps
 * the hops for the product's last 20 scans; `l` lists the brand's
 * products to open one.
 */
#include "tui/view_chain.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/timeutil.h"
#include "tui/view_util.h"
#include "tui/views.h"
#include "util/xalloc.h"

#define CHAIN_GAP_MS (72 * TIME_HOUR_MS)

/* "YYYY-MM-DD HH:MM" of an ISO string (or the string cut). */
static void short_time(const char *iso, char *out, size_t n)
{
    if (!iso) {
        snprintf(out, n, "-");
        return;
    }
    snprintf(out, n, "%.16s", iso);
    char *t = strchr(out, 'T');
    if (t)
        *t = ' ';
}

static void pass_fail(struct canvas *c, int *x, int y, const char *what, int state)
{
    *x += canvas_text(c, *x, y, c->w - *x, what, THEME_MUTED);
    *x += canvas_text(c, *x, y, c->w - *x, " ", THEME_BASE);
    *x += canvas_text(c, *x, y, c->w - *x,
                      state < 0 ? "?"
                      : state   ? "PASS"
                                : "FAIL",
                      state < 0 ? THEME_MUTED
                      : state   ? THEME_OK
                                : THEME_BAD);
    *x += canvas_text(c, *x, y, c->w - *x, "  ", THEME_BASE);
}

/* -1 unknown, else the boolean. */
static int tri(const cJSON *v)
{
    return cJSON_IsBool(v) ? cJSON_IsTrue(v) : -1;
}

static void draw_scans(struct canvas *c, int y, const struct model *m)
{
    const struct data_slot *d = model_data(m, POLL_PRODUCT_SCANS, 0);
    vu_title(c, 0, y, c->w, "Last scans (v: back to the chain)");
    if (y + 1 >= c->h || vu_placeholder(c, 0, y + 1, c->w, d))
        return;
    const cJSON *scans = vu_get(d->json, "scans");
    int n = cJSON_IsArray(scans) ? cJSON_GetArraySize(scans) : 0;
    if (n == 0)
        canvas_text(c, 0, y + 1, c->w, "no scans", THEME_MUTED);
    for (int i = 0; i < n && i < 20 && y + 1 + i < c->h; i++) {
        const cJSON *s = cJSON_GetArrayItem(scans, i);
        char t[32];
        const char *res = vu_str(s, "result", "-");
        short_time(vu_str(s, "timestamp", NULL), t, sizeof t);
        canvas_text(c, 0, y + 1 + i, 17, t, THEME_MUTED);
        canvas_text(c, 18, y + 1 + i, 8, vu_str(s, "country", "-"), THEME_BASE);
        canvas_text(c, 27, y + 1 + i, 20, vu_str(s, "city", "-"), THEME_BASE);
        canvas_text(c, 48, y + 1 + i, c->w - 48, res,
                    !strcmp(res, "authentic") ? THEME_OK : THEME_BAD);
    }
}

/* One display line of the hop list. */
struct line {
    int hop;
    int kind; /* 0 hop, 1 link, 2 hash, 3 previous hash */
};

static void draw_hops(struct canvas *c, int y, const cJSON *events, const struct view_ctx *ctx)
{
    int n = cJSON_IsArray(events) ? cJSON_GetArraySize(events) : 0;
    if (n == 0) {
        canvas_text(c, 0, y, c->w, "no provenance events", THEME_MUTED);
        return;
    }
    int sel = ctx->chain_sel < (size_t)n ? (int)ctx->chain_sel : n - 1;
    struct line *lines = xmalloc(sizeof *lines * (size_t)(n * 4 + 1));
    int nl = 0, sel_line = 0;
    for (int i = 0; i < n; i++) {
        if (i > 0)
            lines[nl++] = (struct line){i, 1};
        if (i == sel)
            sel_line = nl;
        lines[nl++] = (struct line){i, 0};
        if (i == sel && ctx->chain_expanded) {
            lines[nl++] = (struct line){i, 2};
            lines[nl++] = (struct line){i, 3};
        }
    }
    int rows = c->h - y;
    int first = 0;
    int sel_end = sel_line + (ctx->chain_expanded ? 2 : 0);
    if (sel_end >= rows)
        first = sel_end - rows + 1;
    for (int k = 0; k < rows && first + k < nl; k++) {
        const struct line *ln = &lines[first + k];
        const cJSON *e = cJSON_GetArrayItem(events, ln->hop);
        int yy = y + k;
        char buf[160];
        if (ln->kind == 0) {
            char t[32];
            short_time(vu_str(e, "timestamp", NULL), t, sizeof t);
            snprintf(buf, sizeof buf, "%-14.14s %-22.22s %-20.20s %s  %.12s",
                     vu_str(e, "type", "?"), vu_str(e, "actor", "-"), vu_str(e, "location", "-"), t,
                     vu_str(e, "hash", ""));
            canvas_text(c, 2, yy, c->w - 2, buf, THEME_BASE);
            if (ln->hop == sel)
                canvas_attr(c, 0, yy, c->w, 1, CANVAS_A_REVERSE);
        } else if (ln->kind == 1) {
            const cJSON *prev = cJSON_GetArrayItem(events, ln->hop - 1);
            const char *ph = vu_str(e, "previousHash", ""), *h = vu_str(prev, "hash", "");
            bool broken = strcmp(ph, h) != 0;
            canvas_putc(c, 4, yy, canvas_glyph(c, broken ? G_CHAIN_BROKEN : G_CHAIN_OK),
                        broken ? THEME_CHAIN_BROKEN : THEME_CHAIN_OK);
            int x = 6;
            if (broken)
                x += canvas_text(c, x, yy, c->w - x, "BROKEN ", THEME_CHAIN_BROKEN);
            int64_t a, b;
            if (time_parse_iso(vu_str(prev, "timestamp", ""), &a) == 0 &&
                time_parse_iso(vu_str(e, "timestamp", ""), &b) == 0 && b - a > CHAIN_GAP_MS)
                canvas_printf(c, x, yy, c->w - x, THEME_WARN, "gap %lldh (> 72h)",
                              (long long)((b - a) / TIME_HOUR_MS));
        } else {
            const char *v = ln->kind == 2 ? vu_str(e, "hash", "-") : vu_str(e, "previousHash", "-");
            if (ln->kind == 3 && ln->hop == 0)
                v = "genesis";
            snprintf(buf, sizeof buf, "%s %s", ln->kind == 2 ? "hash    " : "previous", v);
            canvas_text(c, 6, yy, c->w - 6, buf, THEME_MUTED);
        }
    }
    free(lines);
}

/* l: the brand's products (newest first), one to open with Enter. */
static void draw_pick(struct canvas *c, const struct model *m, const struct view_ctx *ctx)
{
    const struct data_slot *d = model_data(m, POLL_BRAND_PRODUCTS, ctx->brand);
    canvas_text(c, 0, 0, c->w, "Products of the brand: j k choose, Enter opens, Esc closes",
                THEME_TITLE);
    if (c->h < 2 || vu_placeholder(c, 0, 1, c->w, d))
        return;
    const cJSON *list = vu_get(d->json, "products");
    int n = cJSON_IsArray(list) ? cJSON_GetArraySize(list) : 0;
    if (n == 0) {
        canvas_text(c, 0, 1, c->w, "no products", THEME_MUTED);
        return;
    }
    /* names and SKUs whole when there is room (104 columns) */
    int namew = c->w >= 104 ? 44 : 31, skuw = c->w >= 104 ? 24 : 14;
    char head[256];
    snprintf(head, sizeof head, "  %-*s %-*s %-12s %-13s %5s", namew, "Name", skuw, "SKU", "Status",
             "Code", "Scans");
    vu_title(c, 0, 1, c->w, head);
    int rows = c->h - 2;
    if (rows <= 0)
        return;
    int sel = (int)ctx->chain_pick_sel < n ? (int)ctx->chain_pick_sel : n - 1;
    int first = sel >= rows ? sel - rows + 1 : 0;
    for (int i = 0; i < rows && first + i < n; i++) {
        const cJSON *p = cJSON_GetArrayItem(list, first + i);
        char line[256];
        bool on = first + i == sel;
        snprintf(line, sizeof line, "%s %-*.*s %-*.*s %-12.12s %-13.13s %5.0f", on ? ">" : " ",
                 namew, namew, vu_str(p, "name", "?"), skuw, skuw, vu_str(p, "sku", "-"),
                 vu_str(p, "status", "?"), vu_str(p, "verificationCode", "-"),
                 vu_num(p, "scanCount", 0));
        canvas_text(c, 0, 2 + i, c->w, line, on ? THEME_SELECTED : THEME_BASE);
    }
}

static void draw(struct canvas *c, const struct model *m, const struct view_ctx *ctx)
{
    if (ctx->chain_pick) {
        draw_pick(c, m, ctx);
        return;
    }
    if (!ctx->chain_product_id || !ctx->chain_product_id[0]) {
        canvas_text(c, 0, 0, c->w, "open a product with c, l or :product", THEME_MUTED);
        return;
    }
    const struct data_slot *vd = model_data(m, POLL_PRODUCT, 0);
    const cJSON *prod = vu_get(vd->json, "product");
    const char *pid = vu_str(prod, "productId", ""), *code = vu_str(prod, "verificationCode", "");
    if (!vd->json || (strcmp(pid, ctx->chain_product_id) && strcmp(code, ctx->chain_product_id))) {
        if (!vu_placeholder(c, 0, 0, c->w, vd) || vd->json)
            canvas_printf(c, 0, 0, c->w, THEME_MUTED, "loading %s...", ctx->chain_product_id);
        return;
    }
    char buf[256];
    snprintf(buf, sizeof buf, "%s  %s", vu_str(prod, "name", "?"), vu_str(prod, "brandName", ""));
    int x = canvas_text(c, 0, 0, c->w, buf, THEME_TITLE) + 2;
    const char *status = vu_str(prod, "status", "?");
    x = vu_kv(c, x, 0, c->w - x, "status", status,
              !strcmp(status, "active") ? THEME_OK : THEME_WARN) +
        2;
    snprintf(buf, sizeof buf, "SKU %s  code %s  scans %.0f", vu_str(prod, "sku", "-"), code,
             vu_num(vd->json, "scanCount", 0));
    if (c->h < 4 || ctx->compact) {
        canvas_text(c, x, 0, c->w - x, buf, THEME_MUTED);
    } else {
        canvas_text(c, 0, 1, c->w, buf, THEME_MUTED);
    }
    int y = c->h < 4 || ctx->compact ? 1 : 2;
    const cJSON *cert = vu_get(vd->json, "certificate");
    const struct data_slot *ed = model_data(m, POLL_PRODUCT_EVENTS, 0);
    int chain = tri(vu_get(cert, "chainIntegrity"));
    int linked = tri(vu_get(ed->json, "chainValid"));
    if (linked >= 0)
        chain = chain < 0 ? linked : (chain && linked);
    x = 0;
    pass_fail(c, &x, y, "HMAC", tri(vu_get(cert, "signatureValid")));
    pass_fail(c, &x, y, "CHAIN", chain);
    y++;
    if (y >= c->h)
        return;
    if (ctx->chain_scans) {
        draw_scans(c, y, m);
        return;
    }
    const cJSON *events = vu_get(ed->json, "events");
    if (!cJSON_IsArray(events))
        events = vu_get(vd->json, "events");
    vu_title(c, 2, y, c->w - 2,
             "Type           Actor                  Location             Time              Hash");
    y++;
    if (y < c->h)
        draw_hops(c, y, events, ctx);
}

void view_chain(struct canvas *c, int x, int y, int w, int h, const struct model *m,
                const struct view_ctx *ctx)
{
    vu_draw_clipped(c, x, y, w, h, draw, m, ctx);
}
