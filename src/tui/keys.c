/*
 * keys.c - the key map of the dashboard (TUI.md §5) as a pure state
 * machine over struct ui_state and the model.  Prompts (filter, command,
 * help filter, recall reason and code) collect text here; side effects
 * leave as a struct ui_req for tui.c.  The binding table below feeds the
 * help overlay and the hint row, so the documentation a user sees is the
 * table the code dispatches from.
 */
#include "tui/keys.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/xalloc.h"

#define VB(v) (1u << (v))

/* clang-format off */
static const struct key_binding bindings[] = {
    {"1-7 Tab S-Tab", "switch view (Overview Feed Map Ops Chain Heat Health)", 0},
    {"[ ]", "previous / next brand", 0},
    {"b", "brand picker (Space subscribes, Enter selects)", 0},
    {"? F1", "this help, filtered as you type", 0},
    {"/", "filter rows (substring, no case; ! inverts; Esc clears)", VB(VIEW_FEED)},
    {"n N", "next / previous match", VB(VIEW_FEED)},
    {"s", "severity floor (LOW MED HIGH CRIT)", VB(VIEW_FEED)},
    {"Space", "freeze / unfreeze (data keeps arriving: FROZEN +N)", 0},
    {"j k Up Down", "move the selection", 0},
    {"PgUp PgDn", "move a page", 0},
    {"g G Home End", "newest (follow) / oldest", 0},
    {"Enter", "open (detail pane, full hashes)", VB(VIEW_FEED) | VB(VIEW_CHAIN)},
    {"Esc", "back / close", 0},
    {"a A", "acknowledge the selected / every visible threat", VB(VIEW_FEED)},
    {"r", "resolve the selected threat (not read-only)", VB(VIEW_FEED)},
    {"c", "open the product's provenance chain", VB(VIEW_FEED)},
    {"l", "the brand's products (Enter opens one)", VB(VIEW_CHAIN)},
    {"v", "toggle the last 20 scans", VB(VIEW_CHAIN)},
    {"X", "recall the product (reason + type its code; not read-only)", VB(VIEW_CHAIN)},
    {"p", "map scope: brand / selected product", VB(VIEW_MAP)},
    {"+ -", "days of ops-log buckets (1..31)", VB(VIEW_OPS)},
    {"w", "heat of writes (WCU) / reads (RCU)", VB(VIEW_HEAT)},
    {"t", "UTC / local time", 0},
    {"T", "next theme", 0},
    {"B", "bell: off / critical / high", 0},
    {"e E", "export the view as JSONL / CSV", 0},
    {"R F5", "refresh every poll now", 0},
    {"Ctrl-L", "redraw the screen", 0},
    {":", "command: brand ID, product ID, theme NAME, days N, export [csv]", 0},
    {"q Ctrl-C", "quit (q asks y/N)", 0},
    {NULL, NULL, 0},
};
/* clang-format on */

const struct key_binding *keys_table(void)
{
    return bindings;
}

const char *keys_hint(enum view_id v, bool readonly)
{
    switch (v) {
    case VIEW_FEED:
        return readonly ? "j/k move  Enter open  / filter  s floor  Space freeze  "
                          "a ack  c chain  ? help"
                        : "j/k move  Enter open  / filter  s floor  Space freeze  "
                          "a ack  r resolve  ? help";
    case VIEW_CHAIN:
        return readonly ? "j/k hop  Enter hashes  v scans  l products  :product ID  ? "
                          "help"
                        : "j/k hop  Enter hashes  v scans  l products  X recall  ? help";
    case VIEW_MAP:
        return "p product/brand scope  [ ] brand  R refresh  ? help";
    case VIEW_OPS:
        return "+/- days  j/k scroll  R refresh  ? help";
    default:
        return "1-7 views  [ ] brand  b brands  t tz  T theme  e export  q quit  ? "
               "help";
    }
}

void ui_notice(struct ui_state *s, int64_t now_ms, int64_t ms, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->message, sizeof s->message, fmt, ap);
    va_end(ap);
    s->message_until_ms = now_ms + ms;
}

void ui_state_init(struct ui_state *s, size_t nbrands, bool readonly, bool kiosk)
{
    memset(s, 0, sizeof *s);
    s->view = VIEW_OVERVIEW;
    s->mode = UI_NORMAL;
    s->nbrands = nbrands > UI_BRANDS_MAX ? UI_BRANDS_MAX : nbrands;
    for (size_t i = 0; i < s->nbrands; i++)
        s->subscribed[i] = true;
    s->readonly = readonly || kiosk;
    s->kiosk = kiosk;
    s->ops_days = 7;
}

void ui_fill_ctx(const struct ui_state *s, struct view_ctx *ctx)
{
    ctx->tz_local = s->tz_local;
    ctx->brand = s->brand;
    ctx->readonly = s->readonly;
    ctx->feed_detail = s->feed_detail;
    ctx->map_product = s->map_product;
    ctx->map_product_id = s->map_product_id[0] ? s->map_product_id : NULL;
    ctx->chain_product_id = s->chain_product_id[0] ? s->chain_product_id : NULL;
    ctx->chain_sel = s->chain_sel;
    ctx->chain_expanded = s->chain_expanded;
    ctx->chain_scans = s->chain_scans;
    ctx->chain_pick = s->chain_pick;
    ctx->chain_pick_sel = s->chain_pick_sel;
    ctx->heat_reads = s->heat_reads;
    ctx->ops_days = s->ops_days;
    ctx->scroll = s->scroll;
}

static void req_set(struct ui_req *req, enum ui_req_kind k, long num, const char *arg,
                    const char *arg2)
{
    req->kind = k;
    req->num = num;
    snprintf(req->arg, sizeof req->arg, "%s", arg ? arg : "");
    snprintf(req->arg2, sizeof req->arg2, "%s", arg2 ? arg2 : "");
}

/* The selected row of the feed, NULL when nothing is visible. */
static const struct threat_row *selected_row(const struct model *m)
{
    const struct feed_state *f = model_feed_c(m);
    size_t want = f->sel + 1, *idx = xmalloc(want * sizeof *idx);
    size_t n = model_visible(m, idx, want);
    const struct threat_row *r = NULL;
    if (n > f->sel)
        r = model_threat_at(m, idx[f->sel]);
    free(idx);
    return r;
}

/* --- text prompts --- */

static void input_clear(struct ui_state *s)
{
    s->input[0] = '\0';
    s->input_len = 0;
}

/* Appends code point cp as UTF-8 when it fits; returns false for keys
 * that are not text. */
static bool text_append(char *buf, size_t *len, size_t cap, int cp)
{
    char u[4];
    size_t n;
    if (cp < 32 || cp == 127 || cp >= 0x110000 || (cp >= 0xD800 && cp <= 0xDFFF))
        return false;
    if (cp < 0x80) {
        u[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        u[0] = (char)(0xF0 | (cp >> 18));
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    if (*len + n + 1 > cap)
        return true; /* text key, but full: swallowed */
    memcpy(buf + *len, u, n);
    *len += n;
    buf[*len] = '\0';
    return true;
}

/* Removes the last UTF-8 character. */
static void text_backspace(char *buf, size_t *len)
{
    while (*len > 0) {
        (*len)--;
        if (((unsigned char)buf[*len] & 0xC0) != 0x80)
            break;
    }
    buf[*len] = '\0';
}

/* Shared editing for prompts: true when the key edited the text. */
static bool prompt_edit(char *buf, size_t *len, size_t cap, int key)
{
    if (key == TK_BACKSPACE || key == 8) {
        text_backspace(buf, len);
        return true;
    }
    return text_append(buf, len, cap, key);
}

/* --- normal-mode helpers --- */

static void set_view(struct ui_state *s, enum view_id v)
{
    if (s->view != v) {
        s->scroll = 0;
        s->feed_detail = false;
    }
    s->view = v;
}

/* Hops of the open product (events of products/events, else of verify). */
static size_t chain_hops(const struct model *m)
{
    const struct data_slot *d = model_data(m, POLL_PRODUCT_EVENTS, 0);
    const cJSON *ev = d && d->json ? cJSON_GetObjectItemCaseSensitive(d->json, "events") : NULL;
    if (!cJSON_IsArray(ev)) {
        d = model_data(m, POLL_PRODUCT, 0);
        ev = d && d->json ? cJSON_GetObjectItemCaseSensitive(d->json, "events") : NULL;
    }
    return cJSON_IsArray(ev) ? (size_t)cJSON_GetArraySize(ev) : 0;
}

/* The brand's products list of the picker (l), NULL until it came. */
static const cJSON *pick_list(const struct ui_state *s, const struct model *m)
{
    const struct data_slot *d = model_data(m, POLL_BRAND_PRODUCTS, s->brand);
    const cJSON *p = d && d->json ? cJSON_GetObjectItemCaseSensitive(d->json, "products") : NULL;
    return cJSON_IsArray(p) ? p : NULL;
}

static size_t pick_count(const struct ui_state *s, const struct model *m)
{
    const cJSON *p = pick_list(s, m);
    return p ? (size_t)cJSON_GetArraySize(p) : 0;
}

static unsigned move_sel(struct ui_state *s, struct model *m, long delta)
{
    if (s->view == VIEW_FEED) {
        model_feed_move(m, delta);
    } else if (s->view == VIEW_CHAIN && s->chain_pick) {
        long v = (long)s->chain_pick_sel + delta, last = (long)pick_count(s, m) - 1;
        if (v > last)
            v = last;
        s->chain_pick_sel = v < 0 ? 0 : (size_t)v;
    } else if (s->view == VIEW_CHAIN) {
        long v = (long)s->chain_sel + delta, last = (long)chain_hops(m) - 1;
        if (v > last)
            v = last;
        s->chain_sel = v < 0 ? 0 : (size_t)v;
    } else {
        long v = (long)s->scroll + delta;
        s->scroll = v < 0 ? 0 : (size_t)v;
    }
    return UI_REDRAW;
}

static bool row_matches(const struct threat_row *r, const char *needle)
{
    return strcasestr(r->type, needle) || strcasestr(r->product, needle) ||
           strcasestr(r->location, needle) || strcasestr(r->details, needle) ||
           strcasestr(sev_label(r->sev), needle);
}

/* n / N: the next visible row (dir +1 older, -1 newer) containing the last
 * filter text. */
static unsigned find_match(struct ui_state *s, struct model *m, int dir, int64_t now_ms)
{
    const char *needle = s->last_filter[0] == '!' ? s->last_filter + 1 : s->last_filter;
    if (!*needle) {
        ui_notice(s, now_ms, 3000, "no search: / sets one");
        return UI_REDRAW;
    }
    size_t total = model_visible(m, NULL, 0);
    if (!total)
        return 0;
    size_t *idx = xmalloc(total * sizeof *idx);
    total = model_visible(m, idx, total);
    size_t sel = model_feed_c(m)->sel;
    unsigned rc = 0;
    for (size_t step = 1; step <= total; step++) {
        size_t j = dir > 0 ? (sel + step) % total : (sel + total - step % total) % total;
        const struct threat_row *r = model_threat_at(m, idx[j]);
        if (r && row_matches(r, needle)) {
            model_feed_move(m, (long)j - (long)sel);
            rc = UI_REDRAW;
            break;
        }
    }
    if (!rc)
        ui_notice(s, now_ms, 3000, "no match for \"%s\"", needle);
    free(idx);
    return UI_REDRAW;
}

static unsigned open_product(struct ui_state *s, const char *id, struct ui_req *req)
{
    snprintf(s->chain_product_id, sizeof s->chain_product_id, "%s", id);
    s->chain_code[0] = '\0';
    s->chain_sel = 0;
    s->chain_expanded = false;
    s->chain_scans = false;
    s->chain_pick = false;
    set_view(s, VIEW_CHAIN);
    req_set(req, REQ_OPEN_PRODUCT, 0, s->chain_product_id, NULL);
    return UI_REDRAW | UI_REQ;
}

static unsigned set_brand(struct ui_state *s, size_t b, struct ui_req *req)
{
    if (b >= s->nbrands)
        return 0;
    s->brand = b;
    s->chain_pick = false; /* its list was the other brand's */
    req_set(req, REQ_BRAND, (long)b, NULL, NULL);
    return UI_REDRAW | UI_REQ;
}

unsigned keys_command(struct ui_state *s, struct model *m, const char *line, int64_t now_ms,
                      struct ui_req *req)
{
    char cmd[32] = "", arg[UI_INPUT_MAX] = "";
    memset(req, 0, sizeof *req);
    while (*line == ' ')
        line++;
    size_t n = strcspn(line, " ");
    if (n >= sizeof cmd)
        n = sizeof cmd - 1;
    memcpy(cmd, line, n);
    cmd[n] = '\0';
    line += strcspn(line, " ");
    while (*line == ' ')
        line++;
    snprintf(arg, sizeof arg, "%s", line);
    for (size_t l = strlen(arg); l > 0 && arg[l - 1] == ' '; l--)
        arg[l - 1] = '\0';

    if (!strcmp(cmd, "brand")) {
        for (size_t b = 0; b < s->nbrands && b < model_brand_count(m); b++)
            if (!strcasecmp(model_brand_id(m, b), arg) || !strcasecmp(model_brand_name(m, b), arg))
                return set_brand(s, b, req);
        char *end;
        long v = strtol(arg, &end, 10);
        if (*arg && !*end && v >= 1 && (size_t)v <= s->nbrands)
            return set_brand(s, (size_t)v - 1, req);
        ui_notice(s, now_ms, 4000, "no brand \"%s\"", arg);
        return UI_REDRAW;
    }
    if (!strcmp(cmd, "product")) {
        if (!*arg || strlen(arg) >= sizeof s->chain_product_id) {
            ui_notice(s, now_ms, 4000, "usage: product ID|CODE");
            return UI_REDRAW;
        }
        return open_product(s, arg, req);
    }
    if (!strcmp(cmd, "theme")) {
        if (!*arg) {
            ui_notice(s, now_ms, 4000, "usage: theme NAME");
            return UI_REDRAW;
        }
        req_set(req, REQ_THEME_SET, 0, arg, NULL);
        return UI_REDRAW | UI_FULL | UI_REQ;
    }
    if (!strcmp(cmd, "days")) {
        char *end;
        long v = strtol(arg, &end, 10);
        if (!*arg || *end || v < 1 || v > 31) {
            ui_notice(s, now_ms, 4000, "usage: days 1..31");
            return UI_REDRAW;
        }
        s->ops_days = (int)v;
        req_set(req, REQ_DAYS, v, NULL, NULL);
        return UI_REDRAW | UI_REQ;
    }
    if (!strcmp(cmd, "export")) {
        bool csv = !strcasecmp(arg, "csv");
        if (*arg && !csv && strcasecmp(arg, "jsonl")) {
            ui_notice(s, now_ms, 4000, "usage: export [jsonl|csv]");
            return UI_REDRAW;
        }
        req_set(req, csv ? REQ_EXPORT_CSV : REQ_EXPORT_JSONL, 0, NULL, NULL);
        return UI_REDRAW | UI_REQ;
    }
    if (!strcmp(cmd, "q") || !strcmp(cmd, "quit"))
        return UI_QUITF;
    if (*cmd)
        ui_notice(s, now_ms, 4000, "unknown command \"%s\" (brand product theme days export)", cmd);
    return UI_REDRAW;
}

static unsigned normal_key(struct ui_state *s, struct model *m, int key, int64_t now_ms,
                           struct ui_req *req)
{
    int page = s->page_rows > 1 ? s->page_rows - 1 : 1;
    if (key >= '1' && key <= '7') {
        set_view(s, (enum view_id)(key - '1'));
        return UI_REDRAW;
    }
    switch (key) {
    case TK_TAB:
        set_view(s, (enum view_id)((s->view + 1) % VIEW_COUNT));
        return UI_REDRAW;
    case TK_BTAB:
        set_view(s, (enum view_id)((s->view + VIEW_COUNT - 1) % VIEW_COUNT));
        return UI_REDRAW;
    case '[':
        return s->nbrands ? set_brand(s, (s->brand + s->nbrands - 1) % s->nbrands, req) : 0;
    case ']':
        return s->nbrands ? set_brand(s, (s->brand + 1) % s->nbrands, req) : 0;
    case 'b':
        s->mode = UI_PICKER;
        s->picker_sel = s->brand;
        return UI_REDRAW;
    case '?':
    case TK_F1:
        s->mode = UI_HELP;
        s->help_filter[0] = '\0';
        return UI_REDRAW;
    case '/': {
        const struct feed_state *f = model_feed_c(m);
        s->mode = UI_FILTER;
        input_clear(s);
        if (f->filter[0]) {
            if (f->invert)
                text_append(s->input, &s->input_len, sizeof s->input, '!');
            snprintf(s->input + s->input_len, sizeof s->input - s->input_len, "%s", f->filter);
            s->input_len = strlen(s->input);
        }
        return UI_REDRAW;
    }
    case 'n':
        return find_match(s, m, +1, now_ms);
    case 'N':
        return find_match(s, m, -1, now_ms);
    case 's': {
        enum sev f = model_feed_c(m)->floor;
        model_set_floor(m, f == SEV_CRITICAL ? SEV_LOW : (enum sev)(f + 1));
        ui_notice(s, now_ms, 2000, "severity floor: %s", sev_label(model_feed_c(m)->floor));
        return UI_REDRAW;
    }
    case ' ':
        model_set_frozen(m, !model_feed_c(m)->frozen);
        return UI_REDRAW;
    case 'j':
    case TK_DOWN:
    case TK_MOUSE_DOWN:
        return move_sel(s, m, +1);
    case 'k':
    case TK_UP:
    case TK_MOUSE_UP:
        return move_sel(s, m, -1);
    case TK_PGDN:
        return move_sel(s, m, page);
    case TK_PGUP:
        return move_sel(s, m, -page);
    case 'g':
    case TK_HOME:
        if (s->view == VIEW_FEED)
            model_feed_home(m);
        else if (s->view == VIEW_CHAIN && s->chain_pick)
            s->chain_pick_sel = 0;
        else if (s->view == VIEW_CHAIN)
            s->chain_sel = 0;
        else
            s->scroll = 0;
        return UI_REDRAW;
    case 'G':
    case TK_END:
        if (s->view == VIEW_FEED)
            model_feed_end(m);
        else if (s->view == VIEW_CHAIN && s->chain_pick)
            s->chain_pick_sel = pick_count(s, m) ? pick_count(s, m) - 1 : 0;
        else if (s->view == VIEW_CHAIN)
            s->chain_sel = chain_hops(m) ? chain_hops(m) - 1 : 0;
        else
            s->scroll = (size_t)1 << 20;
        return UI_REDRAW;
    case TK_ENTER:
    case '\r':
        if (s->view == VIEW_FEED) {
            if (!selected_row(m))
                return 0;
            s->feed_detail = true;
            model_ack_selected(m); /* opening a row clears its unseen mark */
        } else if (s->view == VIEW_CHAIN && s->chain_pick) {
            const cJSON *p = cJSON_GetArrayItem(pick_list(s, m), (int)s->chain_pick_sel);
            const cJSON *id = cJSON_GetObjectItemCaseSensitive(p, "productId");
            if (!cJSON_IsString(id) || !id->valuestring[0] ||
                strlen(id->valuestring) >= sizeof s->chain_product_id)
                return 0;
            return open_product(s, id->valuestring, req);
        } else if (s->view == VIEW_CHAIN) {
            s->chain_expanded = !s->chain_expanded;
        }
        return UI_REDRAW;
    case TK_ESC:
        if (s->view == VIEW_CHAIN && s->chain_pick)
            s->chain_pick = false;
        else if (s->feed_detail)
            s->feed_detail = false;
        else if (s->chain_expanded)
            s->chain_expanded = false;
        else if (model_feed_c(m)->filter[0])
            model_set_filter(m, "");
        return UI_REDRAW;
    case 'a':
        model_ack_selected(m);
        return UI_REDRAW;
    case 'A':
        model_ack_visible(m);
        return UI_REDRAW;
    case 'r': {
        const struct threat_row *r;
        if (s->view != VIEW_FEED)
            return 0;
        r = selected_row(m);
        if (!r)
            return 0;
        if (s->readonly) {
            model_ack_selected(m);
            ui_notice(s, now_ms, 3000, "read-only: acknowledged locally");
            return UI_REDRAW;
        }
        req_set(req, REQ_RESOLVE, (long)r->brand, r->alert_id, NULL);
        model_ack_selected(m);
        return UI_REDRAW | UI_REQ;
    }
    case 'c': {
        const struct threat_row *r = s->view == VIEW_FEED ? selected_row(m) : NULL;
        if (!r || !r->product_id[0]) {
            ui_notice(s, now_ms, 3000, "no product on this row");
            return UI_REDRAW;
        }
        return open_product(s, r->product_id, req);
    }
    case 'l':
        if (s->view != VIEW_CHAIN)
            return 0;
        s->chain_pick = !s->chain_pick;
        if (!s->chain_pick)
            return UI_REDRAW;
        s->chain_pick_sel = 0;
        req_set(req, REQ_BRAND_PRODUCTS, (long)s->brand, NULL, NULL);
        return UI_REDRAW | UI_REQ;
    case 'w':
        if (s->view != VIEW_HEAT)
            return 0;
        s->heat_reads = !s->heat_reads;
        return UI_REDRAW;
    case 'v':
        if (s->view != VIEW_CHAIN || !s->chain_product_id[0])
            return 0;
        s->chain_scans = !s->chain_scans;
        if (!s->chain_scans)
            return UI_REDRAW;
        req_set(req, REQ_PRODUCT_SCANS, 0, s->chain_product_id, NULL);
        return UI_REDRAW | UI_REQ;
    case 'X':
        if (s->view != VIEW_CHAIN || !s->chain_product_id[0])
            return 0;
        if (s->readonly) {
            ui_notice(s, now_ms, 3000, "read-only: recall is disabled");
            return UI_REDRAW;
        }
        s->mode = UI_RECALL_REASON;
        input_clear(s);
        return UI_REDRAW;
    case 'p': {
        if (s->view != VIEW_MAP)
            return 0;
        if (s->map_product) {
            s->map_product = false;
            return UI_REDRAW;
        }
        const struct threat_row *r = selected_row(m);
        const char *pid = s->chain_product_id[0] ? s->chain_product_id : r ? r->product_id : "";
        if (!*pid) {
            ui_notice(s, now_ms, 3000, "no product: select a feed row or open a chain first");
            return UI_REDRAW;
        }
        s->map_product = true;
        snprintf(s->map_product_id, sizeof s->map_product_id, "%s", pid);
        req_set(req, REQ_PRODUCT_SCANS, 0, s->map_product_id, NULL);
        return UI_REDRAW | UI_REQ;
    }
    case '+':
    case '-': {
        if (s->view != VIEW_OPS)
            return 0;
        int d = s->ops_days + (key == '+' ? 1 : -1);
        if (d < 1 || d > 31)
            return 0;
        s->ops_days = d;
        req_set(req, REQ_DAYS, d, NULL, NULL);
        return UI_REDRAW | UI_REQ;
    }
    case 't':
        s->tz_local = !s->tz_local;
        return UI_REDRAW;
    case 'T':
        req_set(req, REQ_THEME_CYCLE, 0, NULL, NULL);
        return UI_REDRAW | UI_FULL | UI_REQ;
    case 'B':
        s->bell = (s->bell + 1) % 3;
        ui_notice(s, now_ms, 2000, "bell: %s",
                  s->bell == 0   ? "off"
                  : s->bell == 1 ? "critical"
                                 : "high");
        return UI_REDRAW;
    case 'e':
        req_set(req, REQ_EXPORT_JSONL, 0, NULL, NULL);
        return UI_REDRAW | UI_REQ;
    case 'E':
        req_set(req, REQ_EXPORT_CSV, 0, NULL, NULL);
        return UI_REDRAW | UI_REQ;
    case 'R':
    case TK_F5:
        req_set(req, REQ_REFRESH, 0, NULL, NULL);
        ui_notice(s, now_ms, 1500, "refreshing");
        return UI_REDRAW | UI_REQ;
    case TK_CTRL_L:
        return UI_REDRAW | UI_FULL;
    case ':':
        s->mode = UI_COMMAND;
        input_clear(s);
        return UI_REDRAW;
    case 'q':
        s->mode = UI_QUIT;
        return UI_REDRAW;
    default:
        return 0;
    }
}

static unsigned picker_key(struct ui_state *s, int key, struct ui_req *req)
{
    switch (key) {
    case 'j':
    case TK_DOWN:
        if (s->picker_sel + 1 < s->nbrands)
            s->picker_sel++;
        return UI_REDRAW;
    case 'k':
    case TK_UP:
        if (s->picker_sel > 0)
            s->picker_sel--;
        return UI_REDRAW;
    case ' ': {
        if (s->picker_sel >= s->nbrands)
            return 0;
        size_t on = 0;
        for (size_t i = 0; i < s->nbrands; i++)
            on += s->subscribed[i];
        /* keep at least one stream */
        if (s->subscribed[s->picker_sel] && on <= 1)
            return UI_REDRAW;
        s->subscribed[s->picker_sel] = !s->subscribed[s->picker_sel];
        req_set(req, REQ_SUBSCRIBE, 0, NULL, NULL);
        return UI_REDRAW | UI_REQ;
    }
    case TK_ENTER:
    case '\r':
        s->mode = UI_NORMAL;
        return set_brand(s, s->picker_sel, req) | UI_REDRAW;
    case TK_ESC:
    case 'b':
    case 'q':
        s->mode = UI_NORMAL;
        return UI_REDRAW;
    default:
        return 0;
    }
}

unsigned keys_handle(struct ui_state *s, struct model *m, int key, int64_t now_ms,
                     struct ui_req *req)
{
    memset(req, 0, sizeof *req);
    if (key == TK_CTRL_C)
        return UI_QUITF;
    if (key == TK_RESIZE)
        return UI_REDRAW | UI_FULL;
    if (s->kiosk)
        return 0;
    switch (s->mode) {
    case UI_NORMAL:
        return normal_key(s, m, key, now_ms, req);
    case UI_HELP: {
        size_t len = strlen(s->help_filter);
        if (key == TK_ESC || key == TK_ENTER || key == '\r' || key == TK_F1 ||
            (key == '?' && len == 0)) {
            s->mode = UI_NORMAL;
            return UI_REDRAW;
        }
        if (prompt_edit(s->help_filter, &len, sizeof s->help_filter, key))
            return UI_REDRAW;
        return 0;
    }
    case UI_FILTER:
        if (key == TK_ESC) {
            model_set_filter(m, "");
            s->mode = UI_NORMAL;
            return UI_REDRAW;
        }
        if (key == TK_ENTER || key == '\r') {
            snprintf(s->last_filter, sizeof s->last_filter, "%s", s->input);
            s->mode = UI_NORMAL;
            return UI_REDRAW;
        }
        if (prompt_edit(s->input, &s->input_len, sizeof s->input, key)) {
            model_set_filter(m, s->input); /* filters as you type */
            return UI_REDRAW;
        }
        return 0;
    case UI_COMMAND:
        if (key == TK_ESC) {
            s->mode = UI_NORMAL;
            return UI_REDRAW;
        }
        if (key == TK_ENTER || key == '\r') {
            char line[UI_INPUT_MAX];
            snprintf(line, sizeof line, "%s", s->input);
            s->mode = UI_NORMAL;
            return keys_command(s, m, line, now_ms, req) | UI_REDRAW;
        }
        return prompt_edit(s->input, &s->input_len, sizeof s->input, key) ? UI_REDRAW : 0;
    case UI_QUIT:
        if (key == 'y' || key == 'Y')
            return UI_QUITF;
        s->mode = UI_NORMAL;
        return UI_REDRAW;
    case UI_PICKER:
        return picker_key(s, key, req);
    case UI_RECALL_REASON:
        if (key == TK_ESC) {
            s->mode = UI_NORMAL;
            ui_notice(s, now_ms, 2000, "recall cancelled");
            return UI_REDRAW;
        }
        if (key == TK_ENTER || key == '\r') {
            if (!s->input_len)
                return 0;
            snprintf(s->recall_reason, sizeof s->recall_reason, "%s", s->input);
            input_clear(s);
            s->mode = UI_RECALL_CODE;
            return UI_REDRAW;
        }
        return prompt_edit(s->input, &s->input_len, sizeof s->input, key) ? UI_REDRAW : 0;
    case UI_RECALL_CODE: {
        if (key == TK_ESC) {
            s->mode = UI_NORMAL;
            ui_notice(s, now_ms, 2000, "recall cancelled");
            return UI_REDRAW;
        }
        if (key != TK_ENTER && key != '\r')
            return prompt_edit(s->input, &s->input_len, sizeof s->input, key) ? UI_REDRAW : 0;
        const char *code = s->chain_code[0] ? s->chain_code : s->chain_product_id;
        s->mode = UI_NORMAL;
        if (strcmp(s->input, code) != 0) {
            ui_notice(s, now_ms, 4000, "code does not match: recall cancelled");
            return UI_REDRAW;
        }
        req_set(req, REQ_RECALL, 0, s->chain_product_id, s->recall_reason);
        ui_notice(s, now_ms, 4000, "recall sent");
        return UI_REDRAW | UI_REQ;
    }
    }
    return 0;
}
