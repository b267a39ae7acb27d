/*
 * views.h - the seven views of TUI.md §4, each drawn from the model onto
 * a rectangle of a canvas.  Pure: no curses, no network, no clock (now
 * comes in the context), so tests draw a view at 80x24 or 60x16 and read
 * the canvas back as text.
 *
 * Layout rules: full layout when the whole terminal is >= 80x24, compact
 * (one panel per view) from 40x10 to 79x23 (ctx->compact); the caller
 * handles "Terminal too small".  Views never write outside their
 * rectangle.  Data that the key may not read is drawn as "needs an admin
 * key"; data the server does not offer as "not available from this
 * server"; never invented numbers.
 */
#ifndef GP_TUI_VIEWS_H
#define GP_TUI_VIEWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tui/canvas.h"
#include "tui/model.h"
#include "tui/net.h"

enum view_id {
    VIEW_OVERVIEW = 0,
    VIEW_FEED,
    VIEW_MAP,
    VIEW_OPS,
    VIEW_CHAIN,
    VIEW_HEAT,
    VIEW_HEALTH,
    VIEW_COUNT
};

struct view_ctx {
    int64_t now_ms;                    /* wall clock */
    bool tz_local;                     /* times in local zone (with zone name) instead of UTC 'Z' */
    size_t brand;                      /* current brand (Overview, Map, Heat) */
    bool compact;                      /* 40x10..79x23 */
    bool big;                          /* kiosk large text (W >= 100 and H >= 30) */
    bool readonly;                     /* greys out recall/resolve hints */
    const struct stream_info *streams; /* n_streams records (Health) */
    size_t n_streams;
    /* Feed */
    bool feed_detail; /* Enter: detail pane of the selected row */
    /* Map */
    bool map_product; /* scope = one product (p) */
    const char *map_product_id;
    /* Chain */
    const char *chain_product_id; /* NULL: "open a product with c, l or :product" */
    size_t chain_sel;             /* selected hop */
    bool chain_expanded;          /* Enter: full hash / previous hash */
    bool chain_scans;             /* v: last 20 scans */
    bool chain_pick;              /* l: the brand's products, one to open */
    size_t chain_pick_sel;        /* selected product of that list */
    /* Ops */
    int ops_days;  /* 1..31 */
    size_t scroll; /* first row of a scrolled list (Ops timeline, Heat, Health) */
    /* Heat (added by T3) */
    bool heat_reads; /* r: share of 3,000 RCU/s instead of 1,000 WCU/s (w) */
};

const char *view_name(enum view_id v);  /* "Overview" "Feed" "Map" "Ops" "Chain" "Heat" "Health" */
const char *view_short(enum view_id v); /* "Ovw" "Feed" "Map" "Ops" "Chn" "Heat" "Hlth" */
/* Parses a name (any case, full or short, e.g. "overview", "feed"); -1 if unknown. */
int view_parse(const char *name);

/* Draws view v in the rectangle (x, y, w, h) of c. */
void view_draw(enum view_id v, struct canvas *c, int x, int y, int w, int h, const struct model *m,
               const struct view_ctx *ctx);

/* One function per view (view_draw dispatches). */
void view_overview(struct canvas *c, int x, int y, int w, int h, const struct model *m,
                   const struct view_ctx *ctx);
void view_feed(struct canvas *c, int x, int y, int w, int h, const struct model *m,
               const struct view_ctx *ctx);
void view_map(struct canvas *c, int x, int y, int w, int h, const struct model *m,
              const struct view_ctx *ctx);
void view_ops(struct canvas *c, int x, int y, int w, int h, const struct model *m,
              const struct view_ctx *ctx);
void view_chain(struct canvas *c, int x, int y, int w, int h, const struct model *m,
                const struct view_ctx *ctx);
void view_heat(struct canvas *c, int x, int y, int w, int h, const struct model *m,
               const struct view_ctx *ctx);
void view_health(struct canvas *c, int x, int y, int w, int h, const struct model *m,
                 const struct view_ctx *ctx);

/* Rows of the feed list that fit in a content area of height h (80x24 -> 20). */
int view_feed_rows(int h, bool compact);

/* Formats a time for display: "14:03:27Z" (UTC) or "15:03:27 CET" (local). */
void view_clock(int64_t ms, bool tz_local, char *out, size_t outlen);

#endif
