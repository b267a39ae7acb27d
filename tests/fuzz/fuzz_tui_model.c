/*
 * fuzz_tui_model.c - tui/model.c and the views on hostile input.  The
 * input is a list of records separated by 0x1E; the first byte of each
 * picks what it feeds: 't'/'T' an SSE threat of brand 0/1, 'r' a
 * reconcile body, 'p' a poll reply (next byte = kind from 'a', then a
 * status byte '2' 200, '3' 403, '4' 404, '5' 500, then the body), 'f' a
 * filter text, 'k' feed keys (j k g G space a A s).  Afterwards every view
 * is drawn at 80x21 and 37x9 in both glyph modes: nothing may be written
 * outside the rectangle, ASCII mode may hold no code point >= 0x80, the
 * ring never exceeds its bound and the selection stays inside the list.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tui/canvas.h"
#include "tui/model.h"
#include "tui/views.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define T0 1780000000000LL

static void keys(struct model *m, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        switch (p[i]) {
        case 'j':
            model_feed_move(m, 1);
            break;
        case 'k':
            model_feed_move(m, -1);
            break;
        case 'g':
            model_feed_home(m);
            break;
        case 'G':
            model_feed_end(m);
            break;
        case ' ':
            model_set_frozen(m, !model_feed_c(m)->frozen);
            break;
        case 'a':
            model_ack_selected(m);
            break;
        case 'A':
            model_ack_visible(m);
            break;
        case 's':
            model_set_floor(m, (enum sev)((model_feed_c(m)->floor + 1) % 4));
            break;
        default:
            break;
        }
    }
}

static void record(struct model *m, const uint8_t *p, size_t n, int64_t now)
{
    if (n == 0)
        return;
    const char *body = (const char *)p + 1;
    size_t len = n - 1;
    switch (p[0]) {
    case 't':
    case 'T':
        model_threat(m, p[0] == 'T', body, len, now);
        break;
    case 'r':
        model_reconcile(m, 0, body, len, now);
        break;
    case 'p': {
        if (n < 3)
            return;
        int kind = (p[1] - 'a') % POLL_KIND_COUNT;
        if (kind < 0)
            kind += POLL_KIND_COUNT;
        int status = p[2] == '3' ? 403 : p[2] == '4' ? 404 : p[2] == '5' ? 500 : 200;
        model_reply(m, (enum poll_kind)kind, 0, status, (const char *)p + 3, n - 3, 5, now);
        break;
    }
    case 'f': {
        char text[64];
        size_t k = len < sizeof text - 1 ? len : sizeof text - 1;
        memcpy(text, body, k);
        text[k] = '\0';
        model_set_filter(m, text);
        break;
    }
    case 'k':
        keys(m, p + 1, len);
        break;
    default:
        break;
    }
}

static void draw_all(const struct model *m, int w, int h, bool ascii, int64_t now)
{
    struct stream_info si;
    memset(&si, 0, sizeof si);
    si.state = ST_RETRYING;
    for (int v = 0; v < VIEW_COUNT; v++) {
        struct view_ctx ctx;
        memset(&ctx, 0, sizeof ctx);
        ctx.now_ms = now;
        ctx.compact = w < 80;
        ctx.streams = &si;
        ctx.n_streams = 1;
        ctx.ops_days = 7;
        ctx.chain_product_id = "P1";
        ctx.chain_expanded = true;
        ctx.feed_detail = v == VIEW_FEED && !ascii;
        ctx.chain_scans = ascii;
        struct canvas c;
        canvas_init(&c, w + 2, h + 2, ascii);
        canvas_fill(&c, 0, 0, w + 2, h + 2, 'Z', THEME_BASE);
        view_draw((enum view_id)v, &c, 1, 1, w, h, m, &ctx);
        for (int y = 0; y < c.h; y++)
            for (int x = 0; x < c.w; x++) {
                uint32_t ch = canvas_at(&c, x, y)->ch;
                bool inside = x >= 1 && x <= w && y >= 1 && y <= h;
                if (!inside && ch != 'Z')
                    abort();
                if (ascii && ch >= 0x80)
                    abort();
            }
        canvas_free(&c);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *ids[] = {"brand-a", "brand-b"};
    if (size > 1 << 16)
        return 0;
    struct model *m = model_new(ids, NULL, 2);
    int64_t now = T0;
    size_t start = 0;
    for (size_t i = 0; i <= size; i++) {
        if (i == size || data[i] == 0x1E) {
            record(m, data + start, i - start, now);
            now += 700;
            start = i + 1;
        }
    }
    if (model_threat_count(m) > MODEL_RING)
        abort();
    size_t vis = model_visible(m, NULL, 0);
    if (vis > 0 && model_feed_c(m)->sel >= vis)
        abort();
    draw_all(m, 80, 21, false, now);
    draw_all(m, 80, 21, true, now);
    draw_all(m, 37, 9, true, now);
    model_free(m);
    return 0;
}
