/*
 * tui.c - the dashboard glue: tui_run() wires the net layer, the model,
 * the ui state machine (keys.c), the kiosk schedule (kiosk.c), the
 * chrome and views, and the terminal (screen.c) onto the caller's libev
 * loop.  Data flows one way: net sink -> model -> views -> canvas ->
 * screen.  Redraws are coalesced: data marks the frame dirty and a timer
 * draws at most 10 frames a second; a key draws at once; an idle
 * dashboard redraws once a second for the clock.  Plain mode (TERM=dumb,
 * stdout not a tty, --plain) skips curses and prints one tab-separated
 * line per threat.  --record appends every event and reply as JSONL
 * ({"t":ms,"kind":"event","brand","type","data","id"} and
 * {"t":ms,"kind":"reply","k":poll_kind,"brand","status","latency","body"});
 * --replay plays such a file back as live without any network.
 *
 * While curses owns the terminal, stderr goes to
 * $XDG_STATE_HOME/genuproof/tui.log (else ~/.local/state/...).  With
 * GENUPROOF_TUI_STATS=FILE the dashboard writes its redraw count, cells
 * written and key-to-redraw times (from the loop iteration that read the
 * key to the end of the frame it caused) as one JSON object at exit, for
 * tests and bench/tui_bench.sh.
 *
 * Global state: the fatal-signal dispositions that were in place before
 * tui_run (g_fatal_old), so the handler that restores the terminal can
 * hand the signal on (to ASan's handler in test builds, or the default);
 * screen.c keeps the flag saying curses is up.
 */
#include "tui/tui.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <ev.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tui/chrome.h"
#include "tui/keys.h"
#include "tui/kiosk.h"
#include "tui/model.h"
#include "tui/net.h"
#include "tui/screen.h"
#include "tui/theme.h"
#include "tui/views.h"
#include "util/err.h"
#include "util/log.h"
#include "util/timescale.h"
#include "util/xalloc.h"

#define REDRAW_MIN_S    0.1  /* <= 10 redraws per second */
#define STALE_S         30.0 /* kiosk STALE banner after this data age */
#define BANNER_S        30.0
#define PAUSE_S         60.0
#define SHIFT_S         900.0 /* burn-in shift every 15 min */
#define BELL_GAP_MS     10000 /* <= 1 bell per 10 s */
#define LAT_SAMPLES     4096
#define REPLAY_LINE_MAX (1024u * 1024u)

#define TAG_RECALL  1u
#define TAG_RESOLVE 2u

static const char *const theme_cycle[] = {"default-dark", "light", "kiosk-hc", "mono"};

struct replay {
    FILE *f;
    int64_t t0_file, t0_wall; /* first record's time and the wall time it plays at */
    double speed;
    char *line; /* the next record, read ahead */
    int64_t line_t;
    ev_timer w;
};

struct app {
    struct ev_loop *loop;
    const struct tui_config *cfg;
    struct model *m;
    struct net *net;
    struct screen *scr;
    struct ui_state ui;
    struct kiosk kiosk;
    struct canvas cv, frame;
    struct theme *theme;
    size_t theme_idx;
    char theme_note[200];
    char **theme_dirs;
    size_t ntheme_dirs;
    bool ascii, plain, quit;
    /* brands: model index = position in ids; net index -> model index */
    char *brand_ids[MODEL_BRANDS_MAX];
    char *brand_names[MODEL_BRANDS_MAX];
    size_t nbrands;
    bool name_known[MODEL_BRANDS_MAX];
    size_t net_map[MODEL_BRANDS_MAX];
    size_t nnet;
    struct stream_info st[MODEL_BRANDS_MAX]; /* per model brand */
    unsigned long backfilled[MODEL_BRANDS_MAX];
    bool ever_live;
    int64_t start_ms;
    /* redraw */
    ev_io in_w;
    ev_timer redraw_w, tick_w;
    ev_signal winch_w, int_w, term_w, hup_w;
    bool dirty, full;
    double last_draw; /* ev_now of the last frame */
    int64_t last_bell_ms;
    /* stats (GENUPROOF_TUI_STATS) */
    double key_t; /* ev_now of the oldest key not drawn yet, 0 none */
    double *lat;
    size_t nlat;
    unsigned long redraws, keys, cells;
    FILE *record;
    struct replay rp;
    int saved_stderr;
};

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void tui_config_defaults(struct tui_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->url = "http://127.0.0.1:8080";
    cfg->rotate_s = 20;
    cfg->views = "overview,feed,map,ops";
    cfg->speed = 1;
    cfg->ops_days = 7;
    cfg->takeover = "critical";
}

/* --- redraw scheduling --- */

static void draw(struct app *a);

static void mark(struct app *a, bool full)
{
    a->dirty = true;
    a->full |= full;
    if (a->plain || ev_is_active(&a->redraw_w))
        return;
    double wait = a->last_draw + REDRAW_MIN_S - ev_now(a->loop);
    ev_timer_set(&a->redraw_w, wait > 0 ? wait : 0, 0);
    ev_timer_start(a->loop, &a->redraw_w);
}

static void redraw_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    struct app *a = w->data;
    if (a->dirty)
        draw(a);
}

/* --- record / plain --- */

static void record_line(struct app *a, cJSON *o)
{
    if (!a->record) {
        cJSON_Delete(o);
        return;
    }
    char *s = cJSON_PrintUnformatted(o);
    if (s) {
        fputs(s, a->record);
        fputc('\n', a->record);
        fflush(a->record);
        free(s);
    }
    cJSON_Delete(o);
}

static void iso_utc(int64_t ms, char *out, size_t outlen)
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    if (!gmtime_r(&t, &tm))
        memset(&tm, 0, sizeof tm);
    /* a year beyond 9999 does not fit: cut, never overflow */
    if (snprintf(out, outlen, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                 (int)(ms % 1000)) >= (int)outlen)
        out[outlen - 1] = '\0';
}

/* Tabs and newlines would break the plain format. */
static void plain_field(FILE *f, const char *s)
{
    for (; *s; s++)
        fputc(*s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s, f);
}

static const struct threat_row *find_row(const struct model *m, const char *alert_id)
{
    size_t n = model_threat_count(m);
    for (size_t i = 0; i < n && i < 64; i++) {
        const struct threat_row *r = model_threat_at(m, i);
        if (r && !strcmp(r->alert_id, alert_id))
            return r;
    }
    return NULL;
}

static void plain_threat(struct app *a, const struct threat_row *r)
{
    char t[40];
    iso_utc(r->ts_ms, t, sizeof t);
    printf("%s\t%s\t", t, sev_label(r->sev));
    plain_field(stdout, model_brand_name(a->m, r->brand));
    putchar('\t');
    plain_field(stdout, r->type);
    putchar('\t');
    plain_field(stdout, r->product);
    putchar('\t');
    plain_field(stdout, r->location);
    putchar('\t');
    plain_field(stdout, r->details);
    putchar('\n');
    fflush(stdout);
}

/* Plain mode: the rows a reconcile just added (the stream missed them)
 * are threats too; they were stamped with this reply's time. */
static void plain_backfill(struct app *a, size_t b, int64_t now)
{
    size_t n = model_threat_count(a->m);
    for (size_t i = n; i-- > 0;) {
        const struct threat_row *r = model_threat_at(a->m, i);
        if (r && r->brand == b && (r->flags & ROW_BACKFILL) && !(r->flags & ROW_GAP) &&
            r->arrived_ms == now)
            plain_threat(a, r);
    }
}

/* --- net sink --- */

static size_t model_index(struct app *a, size_t netb)
{
    if (a->cfg->replay_path)
        return netb < a->nbrands ? netb : (size_t)-1;
    return netb < a->nnet ? a->net_map[netb] : (size_t)-1;
}

/* The kiosk banner's text: the type by its label, as the feed shows it
 * (plain mode keeps the raw type: its lines are for scripts). */
static void threat_text(const struct threat_row *r, char *out, size_t outlen)
{
    /* cut to the banner's width: the return value is the full length */
    if (snprintf(out, outlen, "%s  %s  %s  %s  %s", sev_label(r->sev), model_type_label(r->type),
                 r->product, r->location, r->details) >= (int)outlen)
        out[outlen - 1] = '\0';
}

static void on_threat(struct app *a, size_t b, const char *data, size_t len)
{
    int64_t now = wall_ms();
    int rc = model_threat(a->m, b, data, len, now);
    if (rc != 1)
        return;
    const struct threat_row *r = NULL;
    cJSON *j = cJSON_ParseWithLength(data, len);
    cJSON *id = j ? cJSON_GetObjectItemCaseSensitive(j, "alertId") : NULL;
    if (cJSON_IsString(id))
        r = find_row(a->m, id->valuestring);
    cJSON_Delete(j);
    if (!r)
        return;
    if (a->plain) {
        plain_threat(a, r);
        return;
    }
    if (a->cfg->kiosk) {
        char text[200];
        threat_text(r, text, sizeof text);
        kiosk_threat(&a->kiosk, &a->ui, r->sev, text, now);
    }
    if (a->ui.bell &&
        (r->sev == SEV_CRITICAL || (a->ui.bell == TUI_BELL_HIGH && r->sev >= SEV_HIGH)) &&
        now - a->last_bell_ms >= BELL_GAP_MS) {
        a->last_bell_ms = now;
        screen_bell(a->scr);
    }
}

static void sink_event(void *ud, size_t netb, const char *type, const char *data, size_t len,
                       const char *id)
{
    struct app *a = ud;
    size_t b = model_index(a, netb);
    if (b == (size_t)-1)
        return;
    if (a->record && !a->cfg->replay_path) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "t", (double)wall_ms());
        cJSON_AddStringToObject(o, "kind", "event");
        cJSON_AddStringToObject(o, "brand", a->brand_ids[b]);
        cJSON_AddStringToObject(o, "type", type);
        cJSON_AddStringToObject(o, "data", data);
        cJSON_AddStringToObject(o, "id", id ? id : "");
        record_line(a, o);
    }
    if (!strcmp(type, "threat"))
        on_threat(a, b, data, len);
    /* the net layer has already noted this event (last id, event and
     * heartbeat times): the Health view shows its record */
    const struct stream_info *ni = a->net ? net_stream(a->net, netb) : NULL;
    if (ni) {
        a->st[b] = *ni;
        a->st[b].backfilled = a->backfilled[b];
    }
    a->st[b].last_byte_ms = wall_ms();
    /* a heartbeat changes nothing visible that the 1 s clock tick does
     * not redraw anyway: idle stays at one frame per second */
    if (strcmp(type, "heartbeat") != 0)
        mark(a, false);
}

static void sink_state(void *ud, size_t netb, const struct stream_info *info)
{
    struct app *a = ud;
    size_t b = model_index(a, netb);
    if (b == (size_t)-1)
        return;
    enum stream_state old = a->st[b].state;
    a->st[b] = *info;
    a->st[b].backfilled = a->backfilled[b];
    if (info->state == ST_LIVE)
        a->ever_live = true;
    if (a->plain && old != info->state)
        fprintf(stderr, "stream %s: %s%s%s\n", model_brand_name(a->m, b),
                net_state_name(info->state), info->error[0] ? " - " : "", info->error);
    mark(a, false);
}

/* all-brands mode: the brand list arrived. */
static void set_brand_list(struct app *a, const char *body, size_t len);
static void resubscribe(struct app *a);

static void learn_brand_name(struct app *a, size_t b, const char *body, size_t len)
{
    if (b >= a->nbrands || a->name_known[b])
        return;
    cJSON *j = cJSON_ParseWithLength(body, len);
    cJSON *brand = j ? cJSON_GetObjectItemCaseSensitive(j, "brand") : NULL;
    cJSON *name = cJSON_GetObjectItemCaseSensitive(brand ? brand : j, "name");
    if (cJSON_IsString(name) && name->valuestring[0]) {
        free(a->brand_names[b]);
        a->brand_names[b] = xstrdup(name->valuestring);
        a->name_known[b] = true;
        model_set_brands(a->m, (const char *const *)a->brand_ids,
                         (const char *const *)a->brand_names, a->nbrands);
    }
    cJSON_Delete(j);
}

static void url_encode(const char *in, char *out, size_t outlen);

static void product_code(struct app *a, const char *body, size_t len)
{
    cJSON *j = cJSON_ParseWithLength(body, len);
    cJSON *p = j ? cJSON_GetObjectItemCaseSensitive(j, "product") : NULL;
    cJSON *code = cJSON_GetObjectItemCaseSensitive(p, "verificationCode");
    cJSON *pid = cJSON_GetObjectItemCaseSensitive(p, "productId");
    if (cJSON_IsString(code))
        snprintf(a->ui.chain_code, sizeof a->ui.chain_code, "%s", code->valuestring);
    /* :product CODE opens by code: the chain then tracks the real id,
     * and the events (chain validity per hop) are read by that id */
    if (cJSON_IsString(pid)) {
        char enc[400], pq[512];
        snprintf(a->ui.chain_product_id, sizeof a->ui.chain_product_id, "%s", pid->valuestring);
        if (a->net) {
            url_encode(pid->valuestring, enc, sizeof enc);
            snprintf(pq, sizeof pq, "/api/products/events?productId=%s", enc);
            net_get(a->net, POLL_PRODUCT_EVENTS, 0, pq, 0);
        }
    }
    cJSON_Delete(j);
}

static void action_reply(struct app *a, int status, const char *body, size_t len, uint64_t tag)
{
    char msg[120];
    const char *what = tag == TAG_RECALL ? "recall" : tag == TAG_RESOLVE ? "resolve" : "action";
    if (status >= 200 && status < 300) {
        snprintf(msg, sizeof msg, "%s: done", what);
        if (tag == TAG_RECALL && a->ui.chain_product_id[0]) {
            char pq[256];
            snprintf(pq, sizeof pq, "/api/products/verify?productId=%s&metadata=true",
                     a->ui.chain_product_id);
            net_get(a->net, POLL_PRODUCT, 0, pq, 0);
        }
    } else {
        cJSON *j = cJSON_ParseWithLength(body, len);
        cJSON *e = j ? cJSON_GetObjectItemCaseSensitive(j, "error") : NULL;
        snprintf(msg, sizeof msg, "%s failed (%d): %s", what, status,
                 cJSON_IsString(e) ? e->valuestring : "");
        cJSON_Delete(j);
    }
    ui_notice(&a->ui, wall_ms(), 6000, "%s", msg);
}

static void sink_reply(void *ud, enum poll_kind k, size_t netb, int status, const char *body,
                       size_t len, double latency_ms, uint64_t tag)
{
    struct app *a = ud;
    int64_t now = wall_ms();
    size_t b = netb == (size_t)-1 ? 0 : model_index(a, netb);
    if (b == (size_t)-1)
        return;
    if (a->record && !a->cfg->replay_path) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "t", (double)now);
        cJSON_AddStringToObject(o, "kind", "reply");
        cJSON_AddNumberToObject(o, "k", k);
        cJSON_AddStringToObject(o, "brand", netb == (size_t)-1 ? "" : a->brand_ids[b]);
        cJSON_AddNumberToObject(o, "status", status);
        cJSON_AddNumberToObject(o, "latency", latency_ms);
        char *copy = xstrndup(body ? body : "", len);
        cJSON_AddStringToObject(o, "body", copy);
        free(copy);
        record_line(a, o);
    }
    if (k == POLL_ACTION) {
        action_reply(a, status, body, len, tag);
    } else if (k == POLL_PROBE) {
        /* net.c's endpoint probes, by tag (Health view) */
        static const char *const probe_names[] = {"/api/ready", "/api/catalog/categories",
                                                  "/api/integrations/journeys"};
        if (tag < sizeof probe_names / sizeof probe_names[0])
            model_probe(a->m, probe_names[tag], status, latency_ms, now);
    } else if (k == POLL_THREATS) {
        int n = model_reconcile(a->m, b, body, len, now);
        if (n > 0 && b < MODEL_BRANDS_MAX) {
            a->backfilled[b] += (unsigned long)n;
            a->st[b].backfilled = a->backfilled[b];
            if (a->plain)
                plain_backfill(a, b, now);
        }
        model_reply(a->m, k, b, status, body, len, latency_ms, now);
    } else if (k == POLL_BRANDS && a->cfg->all_brands && status == 200) {
        set_brand_list(a, body, len);
        model_reply(a->m, k, b, status, body, len, latency_ms, now);
    } else if (k == POLL_BRANDS && a->cfg->all_brands && (status == 401 || status == 403)) {
        /* TUI.md §11: say so, keep polling, never an error loop */
        ui_notice(&a->ui, now, 3600 * 1000, "--all-brands needs an admin key");
        model_reply(a->m, k, b, status, body, len, latency_ms, now);
    } else {
        if (k == POLL_STATS && status == 200)
            learn_brand_name(a, b, body, len);
        if (k == POLL_PRODUCT && status == 200)
            product_code(a, body, len);
        model_reply(a->m, k, b, status, body, len, latency_ms, now);
    }
    mark(a, false);
}

static void set_brand_list(struct app *a, const char *body, size_t len)
{
    cJSON *j = cJSON_ParseWithLength(body, len);
    cJSON *arr = j ? cJSON_GetObjectItemCaseSensitive(j, "brands") : NULL;
    cJSON *it;
    size_t n = 0;
    char *ids[MODEL_BRANDS_MAX], *names[MODEL_BRANDS_MAX];
    cJSON_ArrayForEach(it, arr)
    {
        cJSON *id = cJSON_GetObjectItemCaseSensitive(it, "id");
        cJSON *name = cJSON_GetObjectItemCaseSensitive(it, "name");
        if (!cJSON_IsString(id) || n >= MODEL_BRANDS_MAX || n >= UI_BRANDS_MAX)
            continue;
        ids[n] = xstrdup(id->valuestring);
        names[n] = xstrdup(cJSON_IsString(name) ? name->valuestring : id->valuestring);
        n++;
    }
    cJSON_Delete(j);
    /* same list as before: nothing to do */
    bool same = n == a->nbrands;
    for (size_t i = 0; same && i < n; i++)
        same = !strcmp(ids[i], a->brand_ids[i]);
    if (same || n == 0) {
        for (size_t i = 0; i < n; i++) {
            free(ids[i]);
            free(names[i]);
        }
        return;
    }
    for (size_t i = 0; i < a->nbrands; i++) {
        free(a->brand_ids[i]);
        free(a->brand_names[i]);
    }
    memcpy(a->brand_ids, ids, n * sizeof *ids);
    memcpy(a->brand_names, names, n * sizeof *names);
    a->nbrands = n;
    memset(a->st, 0, sizeof a->st);
    memset(a->backfilled, 0, sizeof a->backfilled);
    for (size_t i = 0; i < n; i++)
        a->name_known[i] = true;
    model_set_brands(a->m, (const char *const *)a->brand_ids, (const char *const *)a->brand_names,
                     n);
    a->ui.nbrands = n;
    for (size_t i = 0; i < n; i++)
        a->ui.subscribed[i] = true;
    if (a->ui.brand >= n)
        a->ui.brand = 0;
    resubscribe(a);
}

/* Subscribes the net layer to the brands ticked in the ui state. */
static void resubscribe(struct app *a)
{
    const char *ids[MODEL_BRANDS_MAX];
    size_t n = 0;
    if (!a->net)
        return;
    for (size_t i = 0; i < a->nbrands; i++) {
        if (!a->ui.subscribed[i])
            continue;
        a->net_map[n] = i;
        ids[n++] = a->brand_ids[i];
    }
    a->nnet = n;
    for (size_t i = 0; i < a->nbrands; i++)
        if (!a->ui.subscribed[i])
            memset(&a->st[i], 0, sizeof a->st[i]);
    net_set_brands(a->net, ids, n);
}

/* --- themes --- */

static void theme_warn(const char *msg, void *ud)
{
    struct app *a = ud;
    snprintf(a->theme_note, sizeof a->theme_note, "%s", msg);
}

/* Loads theme `name` (file or embedded); falls back to default-dark with
 * the error shown in the status bar. */
static void load_theme(struct app *a, const char *name)
{
    char err[256] = "";
    struct theme *t =
        theme_load(name, a->theme_dirs, a->ntheme_dirs, err, sizeof err, theme_warn, a);
    if (!t) {
        if (snprintf(a->theme_note, sizeof a->theme_note, "%s", err) >= (int)sizeof a->theme_note)
            a->theme_note[sizeof a->theme_note - 1] = '\0';
        log_warn("theme %s: %s", name, err);
        t = theme_load_builtin("default-dark");
    }
    if (!t)
        return;
    theme_free(a->theme);
    a->theme = t;
    if (a->scr)
        screen_apply_theme(a->scr, t);
}

/* --- export --- */

static int mkdir_p(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0700) && errno != EEXIST) {
            *p = '/';
            return ERR_IO;
        }
        *p = '/';
    }
    if (mkdir(path, 0700) && errno != EEXIST)
        return ERR_IO;
    return 0;
}

static void csv_field(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
    }
    fputc('"', f);
}

/* The data of the current view: the visible feed rows (Overview and
 * Feed), else the view's poll reply.  On error returns ERR_IO with a
 * notice; on success 0 with the path in the notice. */
static int export_view(struct app *a, bool csv)
{
    char dir[1024], path[1200], tmp[1300], stamp[40];
    const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
    int64_t now = wall_ms();
    int rc = 0;
    if (xdg && *xdg)
        snprintf(dir, sizeof dir, "%s/genuproof/exports", xdg);
    else
        snprintf(dir, sizeof dir, "%s/.local/state/genuproof/exports", home ? home : ".");
    if (mkdir_p(dir)) {
        ui_notice(&a->ui, now, 6000, "export: cannot create %s", dir);
        return ERR_IO;
    }
    time_t t = (time_t)(now / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    snprintf(path, sizeof path, "%s/genuproof-%s-%s.%s", dir, view_name(a->ui.view), stamp,
             csv ? "csv" : "jsonl");
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        ui_notice(&a->ui, now, 6000, "export: cannot write %s", tmp);
        return ERR_IO;
    }
    static const enum poll_kind view_kind[VIEW_COUNT] = {
        [VIEW_OVERVIEW] = POLL_THREATS, [VIEW_FEED] = POLL_THREATS,  [VIEW_MAP] = POLL_BRAND_SCANS,
        [VIEW_OPS] = POLL_OPSLOG,       [VIEW_CHAIN] = POLL_PRODUCT, [VIEW_HEAT] = POLL_PARTITIONS,
        [VIEW_HEALTH] = POLL_HEALTH};
    enum poll_kind k = view_kind[a->ui.view];
    size_t rows = 0;
    if (k == POLL_THREATS || csv) {
        size_t total = model_visible(a->m, NULL, 0);
        size_t *idx = xmalloc((total ? total : 1) * sizeof *idx);
        total = model_visible(a->m, idx, total);
        if (csv)
            fputs("time,severity,brand,type,product,location,details,alertId\n", f);
        for (size_t i = 0; i < total; i++) {
            const struct threat_row *r = model_threat_at(a->m, idx[i]);
            char ts[40];
            if (!r || (r->flags & ROW_GAP))
                continue;
            iso_utc(r->ts_ms, ts, sizeof ts);
            if (csv) {
                const char *f7[] = {ts,         sev_label(r->sev), model_brand_name(a->m, r->brand),
                                    r->type,    r->product,        r->location,
                                    r->details, r->alert_id};
                for (int c = 0; c < 8; c++) {
                    if (c)
                        fputc(',', f);
                    csv_field(f, f7[c]);
                }
                fputc('\n', f);
            } else if (r->raw) {
                fprintf(f, "%s\n", r->raw);
            }
            rows++;
        }
        free(idx);
    } else {
        const struct data_slot *d = model_data(a->m, k, a->ui.brand);
        char *s = d && d->json ? cJSON_PrintUnformatted(d->json) : NULL;
        if (s) {
            fprintf(f, "%s\n", s);
            rows = 1;
        }
        free(s);
    }
    if (fclose(f) || rename(tmp, path)) {
        unlink(tmp);
        ui_notice(&a->ui, now, 6000, "export: write failed");
        rc = ERR_IO;
    } else {
        ui_notice(&a->ui, now, 8000, "exported %zu to %s", rows, path);
    }
    return rc;
}

/* --- requests from keys --- */

static void url_encode(const char *in, char *out, size_t outlen)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (; *in && o + 4 < outlen; in++) {
        unsigned char ch = (unsigned char)*in;
        if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
            ch == '-' || ch == '_' || ch == '.' || ch == '~') {
            out[o++] = (char)ch;
        } else {
            out[o++] = '%';
            out[o++] = hex[ch >> 4];
            out[o++] = hex[ch & 15];
        }
    }
    out[o] = '\0';
}

/* A product id is 32 hex digits or a UUID; anything else is a code. */
static bool looks_like_id(const char *s)
{
    size_t hexd = 0;
    for (; *s; s++) {
        if ((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') || (*s >= 'A' && *s <= 'F'))
            hexd++;
        else if (*s != '-')
            return false;
    }
    return hexd == 32;
}

static void carry_out(struct app *a, const struct ui_req *r)
{
    char enc[400], pq[512];
    switch (r->kind) {
    case REQ_REFRESH:
        if (a->net)
            net_refresh(a->net);
        break;
    case REQ_EXPORT_JSONL:
    case REQ_EXPORT_CSV:
        export_view(a, r->kind == REQ_EXPORT_CSV);
        break;
    case REQ_THEME_CYCLE:
        a->theme_idx = (a->theme_idx + 1) % (sizeof theme_cycle / sizeof theme_cycle[0]);
        a->theme_note[0] = '\0';
        load_theme(a, theme_cycle[a->theme_idx]);
        ui_notice(&a->ui, wall_ms(), 2000, "theme: %s", theme_name(a->theme));
        break;
    case REQ_THEME_SET:
        a->theme_note[0] = '\0';
        load_theme(a, r->arg);
        break;
    case REQ_OPEN_PRODUCT:
        if (!a->net)
            break;
        url_encode(r->arg, enc, sizeof enc);
        snprintf(pq, sizeof pq, "/api/products/verify?%s=%s&metadata=true",
                 looks_like_id(r->arg) ? "productId" : "code", enc);
        net_get(a->net, POLL_PRODUCT, 0, pq, 0);
        break;
    case REQ_PRODUCT_SCANS:
        if (!a->net)
            break;
        url_encode(r->arg, enc, sizeof enc);
        snprintf(pq, sizeof pq, "/api/scans?productId=%s&limit=20", enc);
        net_get(a->net, POLL_PRODUCT_SCANS, 0, pq, 0);
        break;
    case REQ_BRAND_PRODUCTS:
        if (!a->net || (size_t)r->num >= a->nbrands)
            break;
        url_encode(a->brand_ids[r->num], enc, sizeof enc);
        snprintf(pq, sizeof pq, "/api/products/list?brandId=%s&limit=100", enc);
        net_get(a->net, POLL_BRAND_PRODUCTS, (size_t)r->num, pq, 0);
        break;
    case REQ_RECALL:
    case REQ_RESOLVE: {
        if (!a->net || a->cfg->readonly || a->cfg->kiosk)
            break;
        cJSON *o = cJSON_CreateObject();
        if (r->kind == REQ_RECALL) {
            cJSON_AddStringToObject(o, "productId", r->arg);
            cJSON_AddStringToObject(o, "reason", r->arg2);
        } else {
            size_t b = (size_t)r->num < a->nbrands ? (size_t)r->num : 0;
            cJSON_AddStringToObject(o, "brandId", a->nbrands ? a->brand_ids[b] : "");
            cJSON_AddStringToObject(o, "alertId", r->arg);
        }
        char *body = cJSON_PrintUnformatted(o);
        cJSON_Delete(o);
        int rc = net_send(a->net, "POST",
                          r->kind == REQ_RECALL ? "/api/products/recall" : "/api/threats/resolve",
                          body, r->kind == REQ_RECALL ? TAG_RECALL : TAG_RESOLVE);
        if (rc)
            ui_notice(&a->ui, wall_ms(), 4000, "request refused: %s", err_str(rc));
        free(body);
        break;
    }
    case REQ_DAYS:
        if (a->net)
            net_set_ops_days(a->net, (int)r->num);
        break;
    case REQ_SUBSCRIBE:
        resubscribe(a);
        break;
    default:
        break;
    }
}

/* --- drawing --- */

static bool server_down(const struct app *a)
{
    if (a->ever_live || a->cfg->replay_path)
        return false;
    for (size_t i = 0; i < a->nbrands; i++)
        if (a->st[i].state == ST_RETRYING || a->st[i].state == ST_ERROR)
            return true;
    return false;
}

/* Streams the status bar counts: the subscribed ones. */
static size_t subscribed_streams(const struct app *a, struct stream_info *out)
{
    size_t n = 0;
    for (size_t i = 0; i < a->nbrands; i++)
        if (a->ui.subscribed[i])
            out[n++] = a->st[i];
    return n;
}

static void draw(struct app *a)
{
    int w, h;
    int64_t now = wall_ms();
    struct stream_info sub[MODEL_BRANDS_MAX];
    struct layout l;
    struct chrome_info ci = {0};
    struct view_ctx ctx = {0};

    screen_check_resize(a->scr);
    screen_size(a->scr, &w, &h);
    int shift = a->cfg->kiosk && a->cfg->shift ? a->kiosk.shift : 0;
    if (w < 1 || h < 1)
        return;
    if (a->cv.w != w || a->cv.h != h)
        canvas_resize(&a->cv, w, h);
    if (a->frame.w != w - shift || a->frame.h != h)
        canvas_resize(&a->frame, w - shift, h);
    struct canvas *c = &a->frame;
    chrome_layout(c->w, c->h, a->cfg->kiosk, &l);
    if (l.too_small) {
        chrome_too_small(c);
    } else {
        canvas_clear(c, THEME_BASE);
        ci.now_ms = now;
        ci.n_streams = subscribed_streams(a, sub);
        ci.streams = sub;
        ci.countdown_s = a->cfg->kiosk ? kiosk_countdown(&a->kiosk, now) : -1;
        ci.note = a->theme_note[0] ? a->theme_note : a->cfg->demo_note;
        ci.bell_on = true;
        ui_fill_ctx(&a->ui, &ctx);
        ctx.now_ms = now;
        ctx.compact = l.compact;
        ctx.big = l.big;
        ctx.streams = a->st;
        ctx.n_streams = a->nbrands;
        int cy = l.cy, ch = l.ch;
        if (a->cfg->kiosk) {
            int64_t data = chrome_data_ms(sub, ci.n_streams);
            int64_t since = data ? data : a->start_ms;
            if (now - since > (int64_t)(scaled(STALE_S) * 1000) && ch > 2) {
                char text[240], when[48], age[24], nxt[24] = "";
                unsigned attempt = 0;
                int64_t next = 0;
                for (size_t i = 0; i < ci.n_streams; i++) {
                    if (sub[i].attempt > attempt)
                        attempt = sub[i].attempt;
                    if (sub[i].next_retry_ms > now && (!next || sub[i].next_retry_ms < next))
                        next = sub[i].next_retry_ms;
                }
                view_clock(since, a->ui.tz_local, when, sizeof when);
                chrome_duration(now - since, age, sizeof age);
                if (next)
                    chrome_duration(next - now + 999, nxt, sizeof nxt);
                snprintf(text, sizeof text,
                         "STALE %s data from %s (%s ago), reconnecting (attempt %u, "
                         "next %s)",
                         c->ascii ? "-" : "\xe2\x80\x94", data ? when : "start", age, attempt,
                         next ? nxt : "now");
                chrome_stale(c, cy, text);
                cy++;
                ch--;
            }
            /* the large clock takes 6 rows; on the Overview only when the
             * large tiles still fit below it (they need 27) */
            if (l.big && ch > 20 && (a->ui.view != VIEW_OVERVIEW || ch - 6 >= 27)) {
                int used = chrome_bigclock(c, cy, now, a->ui.tz_local);
                cy += used;
                ch -= used;
            }
            const char *banner = kiosk_banner(&a->kiosk, now);
            if (banner && ch > 6) {
                chrome_banner(c, cy, banner);
                cy += 3;
                ch -= 3;
            }
        }
        a->ui.page_rows = view_feed_rows(ch, l.compact);
        if (ch > 0)
            view_draw(a->ui.view, c, l.cx, cy, l.cw, ch, a->m, &ctx);
        chrome_tabbar(c, &l, &a->ui, a->m, &ci);
        chrome_overlay(c, &l, &a->ui, a->m);
        chrome_hints(c, &l, &a->ui);
        chrome_status(c, &l, &a->ui, a->m, &ci);
    }
    /* compose (burn-in shift moves the frame one column right) */
    if (shift) {
        canvas_clear(&a->cv, THEME_BASE);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < c->w; x++)
                *canvas_at(&a->cv, x + shift, y) = *canvas_cat(c, x, y);
        a->cells += (unsigned long)screen_blit(a->scr, &a->cv, a->full);
    } else {
        a->cells += (unsigned long)screen_blit(a->scr, c, a->full);
    }
    a->redraws++;
    a->dirty = false;
    a->full = false;
    a->last_draw = ev_now(a->loop);
    if (a->key_t > 0) {
        ev_now_update(a->loop);
        if (a->lat && a->nlat < LAT_SAMPLES)
            a->lat[a->nlat++] = (ev_now(a->loop) - a->key_t) * 1000.0;
        a->key_t = 0;
    }
}

/* --- input and timers --- */

static void stdin_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)revents;
    struct app *a = w->data;
    int key, n = 0;
    bool now_draw = false;
    while (n < 256 && (key = screen_key(a->scr)) >= 0) {
        struct ui_req req;
        n++;
        if (key == 0)
            continue;
        a->keys++;
        if (a->key_t <= 0)
            a->key_t = ev_now(loop);
        unsigned f = keys_handle(&a->ui, a->m, key, wall_ms(), &req);
        if (f & UI_QUITF) {
            a->quit = true;
            ev_break(loop, EVBREAK_ALL);
            return;
        }
        if (f & UI_REQ)
            carry_out(a, &req);
        if (f & (UI_REDRAW | UI_FULL)) {
            a->dirty = true;
            a->full |= (f & UI_FULL) != 0;
            now_draw = true;
        }
    }
    if (n == 0 && screen_input_gone(a->scr)) {
        /* readable but nothing to read: the terminal hung up */
        a->quit = true;
        ev_break(loop, EVBREAK_ALL);
        return;
    }
    if (now_draw) {
        /* keys draw at once (key-to-redraw latency); data redraws stay
         * coalesced at <= 10/s by the timer */
        ev_timer_stop(loop, &a->redraw_w);
        draw(a);
    } else {
        a->key_t = 0;
    }
}

static void tick_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    struct app *a = w->data;
    if (a->cfg->kiosk)
        kiosk_tick(&a->kiosk, &a->ui, server_down(a), wall_ms());
    mark(a, false); /* the clock (and ages) change every second */
}

static void winch_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
    (void)revents;
    struct app *a = w->data;
    if (a->plain)
        return;
    screen_check_resize(a->scr);
    a->full = true;
    ev_timer_stop(loop, &a->redraw_w);
    draw(a);
}

static void quit_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
    (void)revents;
    struct app *a = w->data;
    a->quit = true;
    ev_break(loop, EVBREAK_ALL);
}

#define NFATAL 4
static const int g_fatal[NFATAL] = {SIGSEGV, SIGBUS, SIGFPE, SIGABRT};
static struct sigaction g_fatal_old[NFATAL];

/* Restores the terminal, then puts the previous disposition back and
 * raises again: the signal is blocked until this handler returns, so the
 * old handler (or the default action) takes it from there. */
static void fatal_signal(int sig)
{
    screen_emergency_restore();
    for (int i = 0; i < NFATAL; i++)
        if (g_fatal[i] == sig)
            sigaction(sig, &g_fatal_old[i], NULL);
    raise(sig);
}

/* --- replay --- */

static void replay_read(struct app *a)
{
    size_t cap = 0;
    ssize_t n;
    free(a->rp.line);
    a->rp.line = NULL;
    while ((n = getline(&a->rp.line, &cap, a->rp.f)) > 0) {
        if ((size_t)n > REPLAY_LINE_MAX)
            continue;
        cJSON *j = cJSON_Parse(a->rp.line);
        cJSON *t = j ? cJSON_GetObjectItemCaseSensitive(j, "t") : NULL;
        bool ok = cJSON_IsNumber(t);
        if (ok)
            a->rp.line_t = (int64_t)t->valuedouble;
        cJSON_Delete(j);
        if (ok)
            return;
    }
    free(a->rp.line);
    a->rp.line = NULL;
}

static size_t replay_brand(struct app *a, const char *id)
{
    for (size_t i = 0; i < a->nbrands; i++)
        if (!strcmp(a->brand_ids[i], id))
            return i;
    if (a->nbrands >= MODEL_BRANDS_MAX || a->nbrands >= UI_BRANDS_MAX)
        return (size_t)-1;
    a->brand_ids[a->nbrands] = xstrdup(id);
    a->brand_names[a->nbrands] = xstrdup(id);
    a->st[a->nbrands].state = ST_LIVE;
    a->st[a->nbrands].since_ms = wall_ms();
    a->ui.subscribed[a->nbrands] = true;
    a->nbrands++;
    a->ui.nbrands = a->nbrands;
    model_set_brands(a->m, (const char *const *)a->brand_ids, (const char *const *)a->brand_names,
                     a->nbrands);
    return a->nbrands - 1;
}

static void replay_play(struct app *a, const char *line)
{
    cJSON *j = cJSON_Parse(line);
    cJSON *kind = cJSON_GetObjectItemCaseSensitive(j, "kind");
    cJSON *brand = cJSON_GetObjectItemCaseSensitive(j, "brand");
    const char *bid = cJSON_IsString(brand) ? brand->valuestring : "";
    if (cJSON_IsString(kind) && !strcmp(kind->valuestring, "event") && *bid) {
        cJSON *type = cJSON_GetObjectItemCaseSensitive(j, "type");
        cJSON *data = cJSON_GetObjectItemCaseSensitive(j, "data");
        cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "id");
        size_t b = replay_brand(a, bid);
        if (b != (size_t)-1 && cJSON_IsString(type) && cJSON_IsString(data))
            sink_event(a, b, type->valuestring, data->valuestring, strlen(data->valuestring),
                       cJSON_IsString(id) ? id->valuestring : "");
    } else if (cJSON_IsString(kind) && !strcmp(kind->valuestring, "reply")) {
        cJSON *k = cJSON_GetObjectItemCaseSensitive(j, "k");
        cJSON *st = cJSON_GetObjectItemCaseSensitive(j, "status");
        cJSON *body = cJSON_GetObjectItemCaseSensitive(j, "body");
        cJSON *lat = cJSON_GetObjectItemCaseSensitive(j, "latency");
        size_t b = *bid ? replay_brand(a, bid) : (size_t)-1;
        if (cJSON_IsNumber(k) && k->valueint >= 0 && k->valueint < POLL_KIND_COUNT &&
            k->valueint != POLL_ACTION && cJSON_IsNumber(st) && cJSON_IsString(body) &&
            (!*bid || b != (size_t)-1))
            sink_reply(a, (enum poll_kind)k->valueint, b, st->valueint, body->valuestring,
                       strlen(body->valuestring), cJSON_IsNumber(lat) ? lat->valuedouble : 0, 0);
    }
    cJSON_Delete(j);
}

static void replay_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)revents;
    struct app *a = w->data;
    int64_t now = wall_ms();
    int budget = 10000;
    while (a->rp.line && budget-- > 0) {
        int64_t due =
            a->rp.t0_wall + (int64_t)((double)(a->rp.line_t - a->rp.t0_file) / a->rp.speed);
        if (due > now) {
            ev_timer_set(w, (double)(due - now) / 1000.0, 0);
            ev_timer_start(loop, w);
            return;
        }
        char *line = a->rp.line;
        a->rp.line = NULL;
        replay_play(a, line);
        free(line);
        replay_read(a);
    }
    if (a->rp.line) { /* budget used up: go on at the next iteration */
        ev_timer_set(w, 0, 0);
        ev_timer_start(loop, w);
    } else if (a->plain) {
        ev_break(loop, EVBREAK_ALL); /* plain replay ends with the file */
    }
}

/* --- run --- */

static void write_stats(struct app *a)
{
    const char *path = getenv("GENUPROOF_TUI_STATS");
    if (!path || !*path)
        return;
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    double p50 = 0, p95 = 0, max = 0;
    if (a->nlat) {
        /* insertion sort: at most LAT_SAMPLES samples, once at exit */
        for (size_t i = 1; i < a->nlat; i++) {
            double v = a->lat[i];
            size_t j = i;
            while (j > 0 && a->lat[j - 1] > v) {
                a->lat[j] = a->lat[j - 1];
                j--;
            }
            a->lat[j] = v;
        }
        p50 = a->lat[a->nlat / 2];
        p95 = a->lat[(a->nlat * 95) / 100 < a->nlat ? (a->nlat * 95) / 100 : a->nlat - 1];
        max = a->lat[a->nlat - 1];
    }
    fprintf(f,
            "{\"redraws\":%lu,\"keys\":%lu,\"cells\":%lu,\"key_samples\":%zu,"
            "\"key_p50_ms\":%.2f,"
            "\"key_p95_ms\":%.2f,\"key_max_ms\":%.2f,\"threats\":%zu}\n",
            a->redraws, a->keys, a->cells, a->nlat, p50, p95, max, model_threat_count(a->m));
    fclose(f);
}

static bool want_plain(const struct tui_config *cfg)
{
    const char *term = getenv("TERM");
    return cfg->plain || !isatty(STDOUT_FILENO) || !term || !*term || !strcmp(term, "dumb");
}

/* Sends stderr to a log file while curses owns the terminal. */
static int divert_stderr(void)
{
    char path[1100];
    const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
    if (xdg && *xdg)
        snprintf(path, sizeof path, "%s/genuproof", xdg);
    else
        snprintf(path, sizeof path, "%s/.local/state/genuproof", home ? home : "/tmp");
    if (mkdir_p(path))
        snprintf(path, sizeof path, "/tmp");
    size_t l = strlen(path);
    snprintf(path + l, sizeof path - l, "/tui.log");
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0)
        fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    dup2(fd, STDERR_FILENO);
    close(fd);
    return saved;
}

int tui_run(struct ev_loop *loop, const struct tui_config *cfg)
{
    struct app *a = xcalloc(1, sizeof *a);
    int rc = 0;
    char err[256] = "";
    bool fatal_set = false;

    a->loop = loop;
    a->cfg = cfg;
    a->saved_stderr = -1;
    a->start_ms = wall_ms();
    setlocale(LC_ALL, "");
    a->ascii = cfg->ascii || strcmp(nl_langinfo(CODESET), "UTF-8") != 0;
    a->plain = want_plain(cfg);
    canvas_init(&a->cv, 0, 0, a->ascii);
    canvas_init(&a->frame, 0, 0, a->ascii);
    a->lat = xcalloc(LAT_SAMPLES, sizeof *a->lat);

    for (size_t i = 0; i < cfg->nbrands && i < MODEL_BRANDS_MAX && i < UI_BRANDS_MAX; i++) {
        a->brand_ids[i] = xstrdup(cfg->brands[i]);
        a->brand_names[i] = xstrdup(cfg->brands[i]);
        a->nbrands++;
    }
    if (!a->nbrands && !cfg->all_brands && !cfg->replay_path) {
        fprintf(stderr, "genuproof tui: give --brand ID[,ID] or --all-brands\n");
        rc = 1;
        goto out;
    }
    a->m = model_new((const char *const *)a->brand_ids, (const char *const *)a->brand_names,
                     a->nbrands);
    ui_state_init(&a->ui, a->nbrands, cfg->readonly, cfg->kiosk);
    a->ui.tz_local = cfg->tz_local;
    a->ui.bell = (int)cfg->bell;
    a->ui.ops_days = cfg->ops_days >= 1 && cfg->ops_days <= 31 ? cfg->ops_days : 7;

    /* themes */
    {
        const char *home = getenv("HOME");
        a->theme_dirs = xcalloc(8, sizeof *a->theme_dirs);
        a->ntheme_dirs = theme_search_dirs(cfg->theme_dir, getenv("GENUPROOF_THEME_DIR"), home,
#ifdef GP_PREFIX
                                           GP_PREFIX,
#else
                                           "/usr/local",
#endif
                                           a->theme_dirs, 8);
    }
    const char *tname = cfg->theme ? cfg->theme : cfg->kiosk ? "kiosk-hc" : "default-dark";
    for (size_t i = 0; i < sizeof theme_cycle / sizeof theme_cycle[0]; i++)
        if (!strcmp(theme_cycle[i], tname))
            a->theme_idx = i;

    if (cfg->record_path) {
        a->record = fopen(cfg->record_path, "a");
        if (!a->record) {
            fprintf(stderr, "genuproof tui: cannot open %s: %s\n", cfg->record_path,
                    strerror(errno));
            rc = 1;
            goto out;
        }
    }
    if (cfg->replay_path) {
        a->rp.f = fopen(cfg->replay_path, "r");
        if (!a->rp.f) {
            fprintf(stderr, "genuproof tui: cannot open %s: %s\n", cfg->replay_path,
                    strerror(errno));
            rc = 1;
            goto out;
        }
        a->rp.speed = cfg->speed > 0 ? cfg->speed : 1;
        replay_read(a);
        a->rp.t0_file = a->rp.line ? a->rp.line_t : 0;
        a->rp.t0_wall = wall_ms();
        for (size_t i = 0; i < a->nbrands; i++) {
            a->st[i].state = ST_LIVE;
            a->st[i].since_ms = a->start_ms;
        }
    } else {
        struct net_config nc = {cfg->url, cfg->api_key, cfg->readonly || cfg->kiosk,
                                a->ui.ops_days};
        struct net_sink sink = {a, sink_event, sink_state, sink_reply};
        a->net = net_new(loop, &nc, &sink, err, sizeof err);
        if (!a->net) {
            fprintf(stderr, "genuproof tui: %s\n", err);
            rc = 1;
            goto out;
        }
    }

    if (!a->plain) {
        a->saved_stderr = divert_stderr();
        a->scr = screen_open(cfg->color, cfg->mouse, err, sizeof err);
        if (!a->scr) {
            if (a->saved_stderr >= 0) {
                dup2(a->saved_stderr, STDERR_FILENO);
                close(a->saved_stderr);
                a->saved_stderr = -1;
            }
            /* never refuse to start: fall back to plain output */
            fprintf(stderr, "genuproof tui: %s; plain output\n", err);
            a->plain = true;
        }
    }
    if (!a->plain) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = fatal_signal;
        sigemptyset(&sa.sa_mask);
        for (int i = 0; i < NFATAL; i++)
            sigaction(g_fatal[i], &sa, &g_fatal_old[i]);
        fatal_set = true;
    }
    load_theme(a, tname);

    if (cfg->kiosk)
        kiosk_init(&a->kiosk, &a->ui, cfg->views, (int64_t)(scaled(cfg->rotate_s) * 1000),
                   (int64_t)(scaled(BANNER_S) * 1000), (int64_t)(scaled(PAUSE_S) * 1000),
                   cfg->shift ? (int64_t)(scaled(SHIFT_S) * 1000) : 0,
                   sev_parse(cfg->takeover ? cfg->takeover : "critical"), a->start_ms);

    ev_timer_init(&a->redraw_w, redraw_cb, 0, 0);
    a->redraw_w.data = a;
    ev_timer_init(&a->tick_w, tick_cb, 1.0, 1.0);
    a->tick_w.data = a;
    ev_signal_init(&a->int_w, quit_cb, SIGINT);
    a->int_w.data = a;
    ev_signal_init(&a->term_w, quit_cb, SIGTERM);
    a->term_w.data = a;
    ev_signal_init(&a->hup_w, quit_cb, SIGHUP);
    a->hup_w.data = a;
    ev_signal_start(loop, &a->int_w);
    ev_signal_start(loop, &a->term_w);
    ev_signal_start(loop, &a->hup_w);
    if (!a->plain) {
        ev_io_init(&a->in_w, stdin_cb, STDIN_FILENO, EV_READ);
        a->in_w.data = a;
        ev_io_start(loop, &a->in_w);
        ev_signal_init(&a->winch_w, winch_cb, SIGWINCH);
        a->winch_w.data = a;
        ev_signal_start(loop, &a->winch_w);
        ev_timer_start(loop, &a->tick_w);
        /* the kiosk schedule needs sub-second ticks when time is scaled */
        if (cfg->kiosk && time_scale() < 1) {
            ev_timer_set(&a->tick_w, 0.05, 0.05);
            ev_timer_again(loop, &a->tick_w);
        }
    }
    if (a->rp.f) {
        ev_timer_init(&a->rp.w, replay_cb, 0, 0);
        a->rp.w.data = a;
        ev_timer_start(loop, &a->rp.w);
    }
    if (a->net) {
        if (a->nbrands)
            resubscribe(a);
        net_start(a->net);
    }
    if (!a->plain)
        draw(a);

    ev_run(loop, 0);

out:
    if (a->scr && ev_is_active(&a->in_w))
        ev_io_stop(loop, &a->in_w);
    ev_timer_stop(loop, &a->redraw_w);
    ev_timer_stop(loop, &a->tick_w);
    if (a->rp.f)
        ev_timer_stop(loop, &a->rp.w);
    ev_signal_stop(loop, &a->winch_w);
    ev_signal_stop(loop, &a->int_w);
    ev_signal_stop(loop, &a->term_w);
    ev_signal_stop(loop, &a->hup_w);
    net_free(a->net);
    screen_close(a->scr);
    if (fatal_set)
        for (int i = 0; i < NFATAL; i++)
            sigaction(g_fatal[i], &g_fatal_old[i], NULL);
    if (a->saved_stderr >= 0) {
        fflush(stderr);
        dup2(a->saved_stderr, STDERR_FILENO);
        close(a->saved_stderr);
    }
    if (a->m)
        write_stats(a);
    if (a->record)
        fclose(a->record);
    if (a->rp.f)
        fclose(a->rp.f);
    free(a->rp.line);
    model_free(a->m);
    theme_free(a->theme);
    if (a->theme_dirs)
        theme_dirs_free(a->theme_dirs, a->ntheme_dirs);
    free(a->theme_dirs);
    for (size_t i = 0; i < a->nbrands; i++) {
        free(a->brand_ids[i]);
        free(a->brand_names[i]);
    }
    canvas_free(&a->cv);
    canvas_free(&a->frame);
    free(a->lat);
    free(a);
    return rc;
}
