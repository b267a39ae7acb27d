/*
 * chrome.c - draws the frame around the views: tab bar (row 1), status
 * bar (last row), key hints or the open prompt (row H-1), the help
 * overlay filtered as you type, the brand picker, kiosk banners and the
 * too-small notice.  Sizes follow TUI.md §2: full layout from 80x24,
 * compact from 40x10, a notice below; hints only when H >= 24 and not in
 * kiosk mode.
 */
#include "tui/chrome.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "tui/views.h"

void chrome_layout(int w, int h, bool kiosk, struct layout *out)
{
    memset(out, 0, sizeof *out);
    out->w = w < 0 ? 0 : w;
    out->h = h < 0 ? 0 : h;
    out->too_small = w < CHROME_MIN_W || h < CHROME_MIN_H;
    if (out->too_small)
        return;
    out->compact = w < 80 || h < 24;
    out->short_tabs = w < 100;
    out->hints = h >= 24 && !kiosk;
    out->big = kiosk && w >= 100 && h >= 30;
    out->cx = 0;
    out->cy = 1;
    out->cw = w;
    out->ch = h - 2 - (out->hints ? 1 : 0);
}

void chrome_duration(int64_t ms, char *out, size_t outlen)
{
    int64_t s = ms < 0 ? 0 : ms / 1000;
    if (s < 60)
        snprintf(out, outlen, "%llds", (long long)s);
    else if (s < 3600)
        snprintf(out, outlen, "%lldm%02llds", (long long)(s / 60), (long long)(s % 60));
    else if (s < 86400)
        snprintf(out, outlen, "%lldh%02lldm", (long long)(s / 3600), (long long)(s / 60 % 60));
    else
        snprintf(out, outlen, "%lldd%02lldh", (long long)(s / 86400), (long long)(s / 3600 % 24));
}

int64_t chrome_data_ms(const struct stream_info *st, size_t n)
{
    int64_t t = 0;
    for (size_t i = 0; i < n; i++)
        if (st[i].last_byte_ms > t)
            t = st[i].last_byte_ms;
    return t;
}

/* UTF-8 of a code point into out (4 bytes + NUL). */
static void cp_utf8(uint32_t cp, char *out)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        out[1] = 0;
    } else if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        out[2] = 0;
    } else {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        out[3] = 0;
    }
}

enum theme_elem chrome_streams_text(const struct canvas *c, const struct stream_info *st, size_t n,
                                    int64_t now_ms, char *out, size_t outlen)
{
    size_t live = 0, err = 0, waiting = 0;
    int64_t next = 0;
    bool first_connect = true;
    char g[8];
    for (size_t i = 0; i < n; i++) {
        switch (st[i].state) {
        case ST_LIVE:
            live++;
            break;
        case ST_ERROR:
            err++;
            break;
        case ST_CONNECTING:
            if (st[i].attempt > 1 || st[i].reconnects || st[i].last_byte_ms)
                first_connect = false;
            waiting++;
            break;
        default:
            first_connect = false;
            waiting++;
            if (st[i].next_retry_ms && (!next || st[i].next_retry_ms < next))
                next = st[i].next_retry_ms;
            break;
        }
    }
    if (n > 0 && live == n) {
        cp_utf8(canvas_glyph(c, G_DOT_LIVE), g);
        snprintf(out, outlen, "%s LIVE %zu/%zu", g, live, n);
        return THEME_STATUS_LIVE;
    }
    if (n == 0 || err == n) {
        cp_utf8(canvas_glyph(c, G_DOT_DOWN), g);
        snprintf(out, outlen, "%s DOWN", g);
        return THEME_STATUS_DOWN;
    }
    cp_utf8(canvas_glyph(c, G_DOT_RETRY), g);
    if (first_connect && live == 0 && err == 0) {
        snprintf(out, outlen, "%s CONNECTING 0/%zu", g, n);
        return THEME_STATUS_RETRY;
    }
    if (next > now_ms) {
        char d[16];
        chrome_duration(next - now_ms + 999, d, sizeof d);
        snprintf(out, outlen, "%s RETRY %zu/%zu %s", g, waiting + err, n, d);
    } else {
        snprintf(out, outlen, "%s RETRY %zu/%zu", g, waiting + err, n);
    }
    return THEME_STATUS_RETRY;
}

void chrome_tabbar(struct canvas *c, const struct layout *l, const struct ui_state *s,
                   const struct model *m, const struct chrome_info *ci)
{
    int x = 0;
    canvas_fill(c, 0, 0, l->w, 1, ' ', THEME_TAB);
    for (int v = 0; v < VIEW_COUNT; v++) {
        char label[24];
        bool active = (int)s->view == v;
        if (l->compact && !active)
            snprintf(label, sizeof label, "%d", v + 1);
        else if (l->short_tabs)
            snprintf(label, sizeof label, l->compact ? "%d %s" : "%d%s", v + 1,
                     view_short((enum view_id)v));
        else
            snprintf(label, sizeof label, "%d %s", v + 1, view_name((enum view_id)v));
        x += canvas_text(c, x, 0, l->w - x, label, active ? THEME_TAB_ACTIVE : THEME_TAB);
        x += 1;
    }
    if (x >= l->w)
        return;
    canvas_putc(c, x, 0, canvas_glyph(c, G_SEP), THEME_BORDER);
    x += 2;
    if (s->nbrands) {
        char b[160];
        snprintf(b, sizeof b, "%s %zu/%zu", model_brand_name(m, s->brand), s->brand + 1,
                 s->nbrands);
        x += canvas_text(c, x, 0, l->w - x, b, THEME_TITLE);
    }
    if (ci->countdown_s >= 0 && x + 6 < l->w) {
        char t[24];
        snprintf(t, sizeof t, "next %.0fs", ci->countdown_s);
        int tw = (int)strlen(t);
        canvas_text(c, l->w - tw, 0, tw, t, THEME_MUTED);
    }
}

/* Appends one status item at *x with a two-column gap; false when full. */
static bool item(struct canvas *c, int *x, int limit, const char *text, enum theme_elem e)
{
    if (*x >= limit)
        return false;
    int wdt = canvas_text(c, *x, c->h - 1, limit - *x, text, e);
    *x += wdt + 2;
    return true;
}

void chrome_status(struct canvas *c, const struct layout *l, const struct ui_state *s,
                   const struct model *m, const struct chrome_info *ci)
{
    int y = l->h - 1, x = 0;
    char buf[192], clock[48];
    const struct feed_state *f = model_feed_c(m);
    canvas_fill(c, 0, y, l->w, 1, ' ', THEME_STATUS);
    view_clock(ci->now_ms, s->tz_local, clock, sizeof clock);
    int cw = canvas_text_width(c, clock);
    int limit = l->w - cw - 1;

    enum theme_elem e =
        chrome_streams_text(c, ci->streams, ci->n_streams, ci->now_ms, buf, sizeof buf);
    item(c, &x, limit, buf, e);
    int64_t data = chrome_data_ms(ci->streams, ci->n_streams);
    if (data) {
        char d[24];
        chrome_duration(ci->now_ms - data, d, sizeof d);
        snprintf(buf, sizeof buf, "age %s", d);
        item(c, &x, limit, buf, THEME_STATUS);
    }
    if (f->frozen) {
        snprintf(buf, sizeof buf, "FROZEN +%lu", f->pending);
        item(c, &x, limit, buf, THEME_STATUS_STALE);
    } else if (f->pending) {
        snprintf(buf, sizeof buf, "+%lu", f->pending);
        item(c, &x, limit, buf, THEME_STATUS);
    }
    if (f->filter[0]) {
        snprintf(buf, sizeof buf, "/%s%s", f->invert ? "!" : "", f->filter);
        item(c, &x, limit, buf, THEME_MATCH);
    }
    if (f->floor > SEV_LOW) {
        snprintf(buf, sizeof buf, "%s%s", c->ascii ? ">=" : "\xe2\x89\xa5", sev_label(f->floor));
        item(c, &x, limit, buf, THEME_STATUS);
    }
    size_t crit = model_unseen_critical(m);
    if (crit) {
        snprintf(buf, sizeof buf, "CRIT %zu", crit);
        item(c, &x, limit, buf, THEME_SEV_CRITICAL);
    }
    if (s->readonly)
        item(c, &x, limit, "RO", THEME_STATUS);
    if (ci->bell_on && s->bell)
        item(c, &x, limit, s->bell == 1 ? "bell:crit" : "bell:high", THEME_STATUS);
    if (s->message[0] && ci->now_ms < s->message_until_ms)
        item(c, &x, limit, s->message, THEME_WARN);
    else if (ci->note && ci->note[0])
        item(c, &x, limit, ci->note, THEME_MUTED);
    if (cw < l->w)
        canvas_text(c, l->w - cw, y, cw, clock, THEME_STATUS);
}

void chrome_hints(struct canvas *c, const struct layout *l, const struct ui_state *s)
{
    char buf[UI_INPUT_MAX + 96];
    const char *label = NULL;
    switch (s->mode) {
    case UI_FILTER:
        label = "/";
        break;
    case UI_COMMAND:
        label = ":";
        break;
    case UI_RECALL_REASON:
        label = "Recall reason (Esc cancels): ";
        break;
    case UI_RECALL_CODE:
        label = "Type the product code to confirm: ";
        break;
    case UI_QUIT:
        label = "Quit? (y/N) ";
        break;
    default:
        break;
    }
    /* Prompts use the hint row, or the row above the status bar when
     * there are no hints (small terminals). */
    int y = l->h - 2;
    if (!label && !l->hints)
        return;
    canvas_fill(c, 0, y, l->w, 1, ' ', THEME_HINT);
    if (label) {
        snprintf(buf, sizeof buf, "%s%s", label, s->mode == UI_QUIT ? "" : s->input);
        int wdt = canvas_text(c, 0, y, l->w, buf, THEME_TITLE);
        if (wdt < l->w)
            canvas_putc(c, wdt, y, '_', THEME_TITLE);
        return;
    }
    canvas_text(c, 0, y, l->w, keys_hint(s->view, s->readonly), THEME_HINT);
}

static bool help_match(const struct key_binding *b, const char *filter)
{
    return !*filter || strcasestr(b->keys, filter) || strcasestr(b->help, filter);
}

static void help_overlay(struct canvas *c, const struct layout *l, const struct ui_state *s)
{
    const struct key_binding *t = keys_table();
    int bw = l->cw - 4 > 76 ? 76 : l->cw - 4;
    int bh = l->ch - 2;
    if (bw < 20 || bh < 4)
        return;
    int bx = (l->cw - bw) / 2, by = l->cy + 1;
    canvas_fill(c, bx, by, bw, bh, ' ', THEME_BASE);
    canvas_box(c, bx, by, bw, bh, THEME_BORDER_FOCUS);
    char title[96];
    snprintf(title, sizeof title, " Help: %s  filter: %s_ ", view_name(s->view), s->help_filter);
    canvas_text(c, bx + 2, by, bw - 4, title, THEME_TITLE);
    int row = by + 1;
    for (size_t i = 0; t[i].keys && row < by + bh - 1; i++) {
        /* contextual: global keys plus the current view's */
        if (t[i].views && !(t[i].views & (1u << s->view)) && !s->help_filter[0])
            continue;
        if (!help_match(&t[i], s->help_filter))
            continue;
        canvas_text(c, bx + 2, row, 14, t[i].keys, THEME_TITLE);
        canvas_text(c, bx + 17, row, bw - 19, t[i].help, THEME_BASE);
        row++;
    }
    if (row == by + 1)
        canvas_text(c, bx + 2, row, bw - 4, "no key matches", THEME_MUTED);
}

static void picker_overlay(struct canvas *c, const struct layout *l, const struct ui_state *s,
                           const struct model *m)
{
    int bw = l->cw - 4 > 60 ? 60 : l->cw - 4;
    int bh = l->ch - 2;
    if (bw < 20 || bh < 3)
        return;
    int bx = (l->cw - bw) / 2, by = l->cy + 1;
    canvas_fill(c, bx, by, bw, bh, ' ', THEME_BASE);
    canvas_box(c, bx, by, bw, bh, THEME_BORDER_FOCUS);
    canvas_text(c, bx + 2, by, bw - 4, " Brands: Space subscribes, Enter selects ", THEME_TITLE);
    int rows = bh - 2;
    size_t first = s->picker_sel >= (size_t)rows ? s->picker_sel - (size_t)rows + 1 : 0;
    for (int r = 0; r < rows && first + (size_t)r < s->nbrands; r++) {
        size_t b = first + (size_t)r;
        char line[200];
        snprintf(line, sizeof line, "[%c] %s%s", s->subscribed[b] ? 'x' : ' ',
                 model_brand_name(m, b), b == s->brand ? "  (current)" : "");
        canvas_text(c, bx + 2, by + 1 + r, bw - 4, line, THEME_BASE);
        if (b == s->picker_sel)
            canvas_style(c, bx + 1, by + 1 + r, bw - 2, 1, THEME_SELECTED);
    }
}

void chrome_overlay(struct canvas *c, const struct layout *l, const struct ui_state *s,
                    const struct model *m)
{
    if (s->mode == UI_HELP)
        help_overlay(c, l, s);
    else if (s->mode == UI_PICKER)
        picker_overlay(c, l, s, m);
}

void chrome_banner(struct canvas *c, int y, const char *text)
{
    canvas_fill(c, 0, y, c->w, 3, ' ', THEME_BANNER);
    int tw = canvas_text_width(c, text);
    int x = tw < c->w ? (c->w - tw) / 2 : 0;
    canvas_text(c, x, y + 1, c->w, text, THEME_BANNER);
}

void chrome_stale(struct canvas *c, int y, const char *text)
{
    canvas_fill(c, 0, y, c->w, 1, ' ', THEME_STATUS_STALE);
    canvas_text(c, 0, y, c->w, text, THEME_STATUS_STALE);
}

int chrome_bigclock(struct canvas *c, int y, int64_t now_ms, bool tz_local)
{
    char text[48];
    view_clock(now_ms, tz_local, text, sizeof text);
    if (tz_local || strlen(text) > 9)
        text[8] = '\0'; /* HH:MM:SS */
    int width = 4 * (int)strlen(text);
    if (c->w < width + 2 || y < 0 || y + 6 > c->h)
        return 0;
    canvas_fill(c, 0, y, c->w, 6, ' ', THEME_BASE);
    canvas_bigtext(c, c->w - width - 1, y, text, THEME_TITLE);
    return 6;
}

void chrome_too_small(struct canvas *c)
{
    char msg[80];
    canvas_clear(c, THEME_BASE);
    snprintf(msg, sizeof msg, "Terminal too small: %dx%d (need %dx%d)", c->w, c->h, CHROME_MIN_W,
             CHROME_MIN_H);
    int tw = (int)strlen(msg);
    int x = tw < c->w ? (c->w - tw) / 2 : 0;
    canvas_text(c, x, c->h / 2, c->w, msg, THEME_BASE);
}
