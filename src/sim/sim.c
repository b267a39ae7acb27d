/*
 * sim.c - the traffic simulator (sim.h).
 *
 * Everything is a chain of asynchronous HTTP requests: a request's
 * completion callback decides the next one.  Start-up resolves the brand
 * and fills the product pool; then three timers drive the run: consumer
 * scans (1/rate), the attack schedule (sim_plan.h) and, when asked, the
 * alert watcher.  An attack in progress is a struct sim_run that walks
 * its steps; runs and requests in flight are kept in lists so sim_free()
 * can release them after http_client_free() dropped their callbacks.
 */
#include "sim/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "api/geo.h"
#include "core/catalog_data.h"
#include "core/ids.h"
#include "core/timeutil.h"
#include "http/client.h"
#include "util/err.h"
#include "util/timescale.h"
#include "util/xalloc.h"

#define SIM_CITIES_MAX   64
#define SIM_SEEN_MAX     4096
#define SIM_ID_MAX       63
#define SIM_ATK_SKU      "SIM-ATK-"
#define SIM_HTTP_TIMEOUT 15.0

struct sim_city {
    char city[64];
    char country[64]; /* as the catalog spells it */
    char code[4];     /* ISO alpha-2 */
};

struct sim_product {
    char id[SIM_ID_MAX + 1];
    char code[SIM_ID_MAX + 1];
    unsigned city, ua, scans;
    char ip[40];
};

struct sim;
typedef void (*sim_done_fn)(struct sim *s, void *ctx, long status, cJSON *body, int err);

/* One request in flight. */
struct sim_req {
    struct sim *s;
    sim_done_fn done;
    void *ctx;
    struct sim_req *prev, *next;
};

/* One attack in progress. */
struct sim_run {
    struct sim *s;
    enum sim_attack kind;
    int step;
    unsigned i;
    char pid[SIM_ID_MAX + 1], code[SIM_ID_MAX + 1];
    char detail[256];
    struct sim_run *prev, *next;
};

struct sim {
    struct ev_loop *loop;
    struct http_client *http;
    struct sim_config cfg; /* strings below are owned copies */
    char *url, *key;
    char brand[SIM_ID_MAX + 1];
    double rate;
    uint64_t rng;
    struct sim_plan plan;
    size_t next_attack;
    double t0;
    ev_timer scan_timer, attack_timer, done_timer, alert_timer;
    bool running, stopped, refilling, alert_busy, alerts_baselined;
    struct sim_city cities[SIM_CITIES_MAX];
    size_t ncities;
    struct sim_product pool[SIM_POOL_MAX];
    size_t npool, cursor;
    char ingest_key[SIM_ID_MAX + 1];
    struct sim_req *reqs;
    struct sim_run *runs;
    char (*seen)[SIM_ID_MAX + 1];
    size_t nseen;
    struct sim_stats st;
};

static const char *const sim_uas[] = {
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like "
    "Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/125.0 Mobile Safari/537.36",
    "Mozilla/5.0 (Linux; Android 13; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/124.0 Mobile Safari/537.36",
    "GenuProofScanner/2.1 (iPadOS 17)",
};
#define SIM_NUAS (sizeof sim_uas / sizeof sim_uas[0])

static const struct {
    const char *name, *category, *sku;
} sim_names[] = {
    {"Royal Oak Chronograph 42mm", "Watches", "LW-RO"},
    {"Le Classique Tote - Noir", "Handbags", "LW-LCT"},
    {"Oud Royale Eau de Parfum", "Fragrances", "LW-OUD"},
    {"Nautilus Travel Time 40mm", "Watches", "LW-NTT"},
    {"Aviator Titanium Polarized", "Eyewear", "LW-AVT"},
};
#define SIM_NNAMES (sizeof sim_names / sizeof sim_names[0])

/* ---------- small helpers ---------- */

static uint64_t rnd(struct sim *s)
{
    /* xorshift64* */
    s->rng ^= s->rng >> 12;
    s->rng ^= s->rng << 25;
    s->rng ^= s->rng >> 27;
    return s->rng * 2685821657736338717ULL;
}

static unsigned rnd_below(struct sim *s, unsigned n)
{
    return n ? (unsigned)(rnd(s) % n) : 0;
}

static void random_ip(struct sim *s, const char *prefix, char out[40])
{
    snprintf(out, 40, "%s.%u", prefix, 1 + rnd_below(s, 254));
}

static void copy_str(char *dst, size_t n, const char *src)
{
    snprintf(dst, n, "%s", src ? src : "");
}

static const char *jstr(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Loads the catalog's retail and distribution cities whose country has
 * an ISO code (so the server maps it the same way). */
static void load_cities(struct sim *s)
{
    for (size_t g = 0; g < CATALOG_LOCATION_GROUPS; g++) {
        const struct catalog_group *grp = &catalog_locations_groups[g];
        if (strcmp(grp->name, "retail") && strcmp(grp->name, "distribution"))
            continue;
        for (size_t i = 0; i < grp->count && s->ncities < SIM_CITIES_MAX; i++) {
            cJSON *o = cJSON_Parse(grp->entries[i].json);
            const char *city = jstr(o, "city"), *country = jstr(o, "country");
            const char *code = country ? geo_country_code(country) : NULL;
            if (city && code && strlen(city) < 64 && strlen(country) < 64) {
                struct sim_city *c = &s->cities[s->ncities++];
                copy_str(c->city, sizeof c->city, city);
                copy_str(c->country, sizeof c->country, country);
                copy_str(c->code, sizeof c->code, code);
            }
            cJSON_Delete(o);
        }
    }
}

/* ---------- requests ---------- */

static void req_cb(void *arg, const struct http_client_res *res)
{
    struct sim_req *r = arg;
    struct sim *s = r->s;
    cJSON *body = NULL;

    if (r->prev)
        r->prev->next = r->next;
    else
        s->reqs = r->next;
    if (r->next)
        r->next->prev = r->prev;
    if (!res->err && res->body_len)
        body = cJSON_ParseWithLength(res->body, res->body_len);
    r->done(s, r->ctx, res->status, body, res->err);
    cJSON_Delete(body);
    free(r);
}

/*
 * Sends a request.  path starts with '/'; body (may be NULL) is sent as
 * JSON; auth adds the bearer key; hdrs are extra "Name: value" lines.
 * On success returns 0 and done() will be called once.  On error returns
 * a negative ERR_* and done() is never called.
 */
static int sim_http(struct sim *s, const char *method, const char *path, const cJSON *body,
                    bool auth, const char *const *hdrs, size_t nhdrs, sim_done_fn done, void *ctx)
{
    const char *headers[HTTP_CLIENT_HEADERS_MAX];
    char authz[300] = "", url[HTTP_CLIENT_URL_MAX];
    char *text = NULL;
    size_t n = 0;
    int rc;

    if (snprintf(url, sizeof url, "%s%s", s->url, path) >= (int)sizeof url)
        return ERR_INVALID;
    if (auth && s->key) {
        snprintf(authz, sizeof authz, "Authorization: Bearer %s", s->key);
        headers[n++] = authz;
    }
    if (body) {
        text = cJSON_PrintUnformatted(body);
        if (!text)
            return ERR_NOMEM;
        headers[n++] = "Content-Type: application/json";
    }
    for (size_t i = 0; i < nhdrs && n < HTTP_CLIENT_HEADERS_MAX; i++)
        headers[n++] = hdrs[i];

    struct sim_req *r = xcalloc(1, sizeof *r);
    r->s = s;
    r->done = done;
    r->ctx = ctx;
    struct http_client_req hr = {
        .method = method,
        .url = url,
        .headers = headers,
        .nheaders = n,
        .body = text,
        .body_len = text ? strlen(text) : 0,
        .timeout_s = SIM_HTTP_TIMEOUT,
    };
    rc = http_client_start(s->http, &hr, req_cb, r);
    memset(authz, 0, sizeof authz);
    free(text);
    if (rc) {
        free(r);
        return rc;
    }
    r->next = s->reqs;
    if (s->reqs)
        s->reqs->prev = r;
    s->reqs = r;
    return 0;
}

/* A consumer's request headers: address, place and device. */
struct consumer {
    char xff[64], country[96], city[96], ua[300];
    const char *h[4];
};

static void consumer_init(struct consumer *c, const char *ip, const struct sim_city *city,
                          const char *ua)
{
    snprintf(c->xff, sizeof c->xff, "X-Forwarded-For: %s", ip);
    snprintf(c->country, sizeof c->country, "X-Country: %s", city->country);
    snprintf(c->city, sizeof c->city, "X-City: %s", city->city);
    snprintf(c->ua, sizeof c->ua, "User-Agent: %s", ua);
    c->h[0] = c->xff;
    c->h[1] = c->country;
    c->h[2] = c->city;
    c->h[3] = c->ua;
}

/* GET /api/products/verify?code= as that consumer. */
static int verify_as(struct sim *s, const char *code, const char *ip, const struct sim_city *city,
                     const char *ua, sim_done_fn done, void *ctx)
{
    struct consumer c;
    char path[160];

    consumer_init(&c, ip, city, ua);
    snprintf(path, sizeof path, "/api/products/verify?code=%s", code);
    return sim_http(s, "GET", path, NULL, false, c.h, 4, done, ctx);
}

/* ---------- consumer scans and the pool ---------- */

static void refill_pool(struct sim *s);

static void scan_done(struct sim *s, void *ctx, long status, cJSON *body, int err)
{
    (void)ctx;
    (void)body;
    if (err || status != 200)
        s->st.scan_errors++;
}

/* The next product still under its honest-scan budget, or NULL. */
static struct sim_product *next_product(struct sim *s)
{
    for (size_t k = 0; k < s->npool; k++) {
        struct sim_product *p = &s->pool[(s->cursor + k) % s->npool];
        if (p->scans < SIM_SCANS_PER_PRODUCT) {
            s->cursor = (s->cursor + k + 1) % s->npool;
            return p;
        }
    }
    return NULL;
}

static size_t pool_alive(const struct sim *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->npool; i++)
        if (s->pool[i].scans < SIM_SCANS_PER_PRODUCT)
            n++;
    return n;
}

static void scan_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    struct sim *s = w->data;
    struct sim_product *p;

    if (s->stopped)
        return;
    if (pool_alive(s) < SIM_BATCH / 2)
        refill_pool(s);
    p = next_product(s);
    if (!p) {
        s->st.scans_skipped++;
        return;
    }
    if (verify_as(s, p->code, p->ip, &s->cities[p->city], sim_uas[p->ua], scan_done, NULL)) {
        s->st.scans_skipped++;
        return;
    }
    p->scans++;
    s->st.scans++;
}

/* Adds a product to the pool (replacing a retired one when full). */
static void pool_add(struct sim *s, const char *id, const char *code, unsigned scans)
{
    struct sim_product *p = NULL;

    if (!id || !code || strlen(id) > SIM_ID_MAX || strlen(code) > SIM_ID_MAX)
        return;
    if (s->npool < SIM_POOL_MAX) {
        p = &s->pool[s->npool++];
    } else {
        for (size_t i = 0; i < s->npool && !p; i++)
            if (s->pool[i].scans >= SIM_SCANS_PER_PRODUCT)
                p = &s->pool[i];
        if (!p)
            return;
    }
    memset(p, 0, sizeof *p);
    copy_str(p->id, sizeof p->id, id);
    copy_str(p->code, sizeof p->code, code);
    p->scans = scans;
    p->city = rnd_below(s, (unsigned)s->ncities);
    p->ua = rnd_below(s, SIM_NUAS);
    random_ip(s, rnd_below(s, 2) ? "203.0.113" : "198.51.100", p->ip);
}

/* ---------- attacks ---------- */

static void run_step(struct sim_run *run, long status, cJSON *body, int err);

static void run_done_cb(struct sim *s, void *ctx, long status, cJSON *body, int err)
{
    (void)s;
    run_step(ctx, status, body, err);
}

static void run_finish(struct sim_run *run, bool ok, const char *why)
{
    struct sim *s = run->s;

    if (!ok) {
        s->st.attacks_failed++;
        if (why)
            copy_str(run->detail, sizeof run->detail, why);
    }
    if (s->cfg.on_attack) {
        struct sim_attack_report r = {
            .kind = run->kind, .ok = ok, .product_id = run->pid, .detail = run->detail};
        s->cfg.on_attack(s->cfg.cb_arg, &r);
    }
    if (run->prev)
        run->prev->next = run->next;
    else
        s->runs = run->next;
    if (run->next)
        run->next->prev = run->prev;
    free(run);
}

/* Picks three cities in three different countries (indexes in out). */
static bool three_countries(struct sim *s, unsigned out[3])
{
    size_t n = 0;
    unsigned start = rnd_below(s, (unsigned)s->ncities);
    for (size_t k = 0; k < s->ncities && n < 3; k++) {
        unsigned i = (unsigned)((start + k) % s->ncities);
        bool dup = false;
        for (size_t j = 0; j < n; j++)
            if (!strcmp(s->cities[out[j]].code, s->cities[i].code))
                dup = true;
        if (!dup)
            out[n++] = i;
    }
    return n == 3;
}

static int register_product(struct sim_run *run)
{
    struct sim *s = run->s;
    unsigned k = rnd_below(s, SIM_NNAMES);
    char name[160], sku[64], tag[9];
    int rc;

    ids_random_hex(4, tag);
    snprintf(name, sizeof name, "%s - lot %s", sim_names[k].name, tag);
    snprintf(sku, sizeof sku, "%s%s-%s", SIM_ATK_SKU, sim_attack_name(run->kind), tag);
    cJSON *b = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "brandId", s->brand);
    cJSON_AddStringToObject(b, "name", name);
    cJSON_AddStringToObject(b, "sku", sku);
    cJSON_AddStringToObject(b, "category", sim_names[k].category);
    rc = sim_http(s, "POST", "/api/products/register", b, true, NULL, 0, run_done_cb, run);
    cJSON_Delete(b);
    return rc;
}

/* The attack's own steps after registration (step >= 1).  Returns 0
 * when a request was sent, 1 when the attack is complete, or a negative
 * ERR_* (the attack failed). */
static int attack_next(struct sim_run *run, long status, cJSON *body)
{
    struct sim *s = run->s;
    unsigned c3[3];
    int rc;

    switch (run->kind) {
    case SIM_ATK_CLONE: {
        /* the same tag in three countries, one after the other */
        if (run->i >= 3)
            return 1;
        if (run->i == 0 && !three_countries(s, c3))
            return ERR_INVALID;
        if (run->i == 0) {
            run->step = (int)(c3[0] | (c3[1] << 8) | (c3[2] << 16));
            snprintf(run->detail, sizeof run->detail, "tag %s scanned in %s, %s and %s", run->code,
                     s->cities[c3[0]].city, s->cities[c3[1]].city, s->cities[c3[2]].city);
        }
        unsigned city = ((unsigned)run->step >> (8 * run->i)) & 0xff;
        char ip[40];
        random_ip(s, "203.0.113", ip);
        rc = verify_as(s, run->code, ip, &s->cities[city], sim_uas[run->i % SIM_NUAS], run_done_cb,
                       run);
        run->i++;
        return rc;
    }
    case SIM_ATK_BURST: {
        /* one workshop testing a cloned tag over and over */
        static const char *const ip = "192.0.2.77";
        if (run->i >= SIM_BURST_SCANS)
            return 1;
        if (run->i == 0)
            snprintf(run->detail, sizeof run->detail, "tag %s scanned %d times in a burst from %s",
                     run->code, SIM_BURST_SCANS, s->cities[0].city);
        run->i++;
        return verify_as(s, run->code, ip, &s->cities[0], sim_uas[0], run_done_cb, run);
    }
    case SIM_ATK_CLAIM: {
        /* owner scans and claims; a second device scans the same tag */
        const struct sim_city *home = &s->cities[run->step % (int)s->ncities];
        struct consumer c;
        if (run->i == 0) {
            run->step = (int)rnd_below(s, (unsigned)s->ncities);
            home = &s->cities[run->step];
            run->i++;
            return verify_as(s, run->code, "198.51.100.21", home, sim_uas[0], run_done_cb, run);
        }
        if (run->i == 1) {
            cJSON *b = cJSON_CreateObject();
            cJSON_AddStringToObject(b, "productId", run->pid);
            cJSON_AddStringToObject(b, "consumerName", "Simulated Owner");
            consumer_init(&c, "198.51.100.21", home, sim_uas[0]);
            run->i++;
            rc = sim_http(s, "POST", "/api/products/claim", b, false, c.h, 4, run_done_cb, run);
            cJSON_Delete(b);
            return rc;
        }
        if (run->i == 2) {
            if (status != 200)
                return ERR_INVALID;
            snprintf(run->detail, sizeof run->detail,
                     "product %s claimed in %s, then scanned by another device", run->code,
                     home->city);
            run->i++;
            return verify_as(s, run->code, "203.0.113.99", home, sim_uas[1], run_done_cb, run);
        }
        return 1;
    }
    case SIM_ATK_TAMPER:
        if (run->i == 0) {
            rc = s->cfg.tamper ? s->cfg.tamper(s->cfg.tamper_arg, run->pid) : ERR_INVALID;
            if (rc)
                return rc;
            snprintf(run->detail, sizeof run->detail, "stored record of %s altered, then scanned",
                     run->code);
            run->i++;
            return verify_as(s, run->code, "198.51.100.40", &s->cities[0], sim_uas[2], run_done_cb,
                             run);
        }
        return 1;
    case SIM_ATK_GAP: {
        if (run->i == 0) {
            run->i++;
            if (!s->ingest_key[0]) {
                cJSON *b = cJSON_CreateObject();
                cJSON_AddStringToObject(b, "brandId", s->brand);
                cJSON_AddStringToObject(b, "type", "wms_custom");
                rc = sim_http(s, "POST", "/api/integrations/configure", b, true, NULL, 0,
                              run_done_cb, run);
                cJSON_Delete(b);
                return rc;
            }
            body = NULL;
            status = 200;
        }
        if (run->i == 1) {
            const char *k = body ? jstr(body, "ingestKey") : NULL;
            if (!s->ingest_key[0]) {
                if (status != 200 || !k || strlen(k) > SIM_ID_MAX)
                    return ERR_INVALID;
                copy_str(s->ingest_key, sizeof s->ingest_key, k);
            }
            char ts[ISO_LEN + 1], hdr[128];
            const char *h[1] = {hdr};
            time_iso(time_now_ms() - (int64_t)SIM_GAP_HOURS * 3600000, ts);
            snprintf(hdr, sizeof hdr, "X-Ingest-Key: %s", s->ingest_key);
            cJSON *b = cJSON_CreateObject();
            cJSON_AddStringToObject(b, "productId", run->pid);
            cJSON_AddStringToObject(b, "action", "received");
            cJSON_AddStringToObject(b, "warehouseName", "US Distribution Center (East)");
            cJSON_AddStringToObject(b, "warehouseLocation", "Newark, NJ");
            cJSON_AddStringToObject(b, "timestamp", ts);
            run->i++;
            rc = sim_http(s, "POST", "/api/ingest/warehouse", b, false, h, 1, run_done_cb, run);
            memset(hdr, 0, sizeof hdr);
            cJSON_Delete(b);
            return rc;
        }
        if (run->i == 2) {
            if (status != 200)
                return ERR_INVALID;
            cJSON *b = cJSON_CreateObject();
            cJSON_AddStringToObject(b, "productId", run->pid);
            cJSON_AddStringToObject(b, "type", "inspected");
            cJSON_AddStringToObject(b, "actor", "Quality Assurance Team");
            cJSON_AddStringToObject(b, "location", "Newark, NJ");
            run->i++;
            rc = sim_http(s, "POST", "/api/products/events", b, true, NULL, 0, run_done_cb, run);
            cJSON_Delete(b);
            snprintf(run->detail, sizeof run->detail,
                     "%s: warehouse receipt dated %d h back, next custody event now", run->code,
                     SIM_GAP_HOURS);
            return rc;
        }
        if (status != 200)
            return ERR_INVALID;
        return 1;
    }
    default:
        return ERR_INVALID;
    }
}

static void run_step(struct sim_run *run, long status, cJSON *body, int err)
{
    char why[160];
    int rc;

    if (err) {
        snprintf(why, sizeof why, "request failed: %s", err_str(err));
        run_finish(run, false, why);
        return;
    }
    if (!run->pid[0]) {
        /* the registration answered */
        const char *pid = body ? jstr(body, "productId") : NULL;
        const char *code = body ? jstr(body, "verificationCode") : NULL;
        if (status != 200 || !pid || !code || strlen(pid) > SIM_ID_MAX ||
            strlen(code) > SIM_ID_MAX) {
            snprintf(why, sizeof why, "registration answered %ld", status);
            run_finish(run, false, why);
            return;
        }
        copy_str(run->pid, sizeof run->pid, pid);
        copy_str(run->code, sizeof run->code, code);
        run->s->st.products_created++;
        status = 0;
        body = NULL;
    } else if (status >= 400 && run->kind != SIM_ATK_GAP && run->kind != SIM_ATK_CLAIM) {
        snprintf(why, sizeof why, "step %u answered %ld", run->i, status);
        run_finish(run, false, why);
        return;
    }
    rc = run->s->stopped ? 1 : attack_next(run, status, body);
    if (rc == 1)
        run_finish(run, true, NULL);
    else if (rc < 0) {
        snprintf(why, sizeof why, "step %u failed (status %ld, %s)", run->i, status, err_str(rc));
        run_finish(run, false, why);
    }
}

static void launch_attack(struct sim *s, enum sim_attack kind)
{
    struct sim_run *run = xcalloc(1, sizeof *run);

    run->s = s;
    run->kind = kind;
    run->next = s->runs;
    if (s->runs)
        s->runs->prev = run;
    s->runs = run;
    s->st.attacks++;
    if (register_product(run))
        run_finish(run, false, "cannot send the registration");
}

static double plan_offset(struct sim *s, size_t n, enum sim_attack *kind)
{
    double off = sim_plan_at(&s->plan, n, kind);
    return s->cfg.scale_schedule ? scaled(off) : off;
}

static void attack_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)revents;
    struct sim *s = w->data;
    enum sim_attack kind;

    if (s->stopped)
        return;
    plan_offset(s, s->next_attack, &kind);
    launch_attack(s, kind);
    s->next_attack++;
    double next = plan_offset(s, s->next_attack, &kind);
    double wait = s->t0 + next - ev_now(loop);
    ev_timer_set(w, wait > 0.001 ? wait : 0.001, 0.);
    ev_timer_start(loop, w);
}

/* ---------- alert watcher ---------- */

static bool seen_add(struct sim *s, const char *id)
{
    for (size_t i = 0; i < s->nseen; i++)
        if (!strcmp(s->seen[i], id))
            return false;
    if (s->nseen == SIM_SEEN_MAX) {
        memmove(s->seen, s->seen + 1, (SIM_SEEN_MAX - 1) * sizeof s->seen[0]);
        s->nseen--;
    }
    copy_str(s->seen[s->nseen++], SIM_ID_MAX + 1, id);
    return true;
}

static void alerts_done(struct sim *s, void *ctx, long status, cJSON *body, int err)
{
    (void)ctx;
    const cJSON *list = body ? cJSON_GetObjectItemCaseSensitive(body, "threats") : NULL;
    int n = cJSON_IsArray(list) ? cJSON_GetArraySize(list) : 0;

    s->alert_busy = false;
    if (err || status != 200)
        return;
    /* newest first: report oldest first */
    for (int i = n - 1; i >= 0; i--) {
        const cJSON *a = cJSON_GetArrayItem(list, i);
        const char *id = jstr(a, "alertId");
        if (!id || strlen(id) > SIM_ID_MAX || !seen_add(s, id))
            continue;
        if (s->alerts_baselined) {
            s->st.alerts_seen++;
            if (s->cfg.on_alert)
                s->cfg.on_alert(s->cfg.cb_arg, a);
        }
    }
    s->alerts_baselined = true;
}

static void poll_alerts(struct sim *s)
{
    char path[200];

    if (s->alert_busy)
        return;
    snprintf(path, sizeof path, "/api/threats?brandId=%s&limit=100", s->brand);
    if (!sim_http(s, "GET", path, NULL, true, NULL, 0, alerts_done, NULL))
        s->alert_busy = true;
}

static void alert_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    struct sim *s = w->data;
    if (!s->stopped)
        poll_alerts(s);
}

/* ---------- start-up ---------- */

static void done_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    struct sim *s = w->data;
    sim_stop(s);
    if (s->cfg.on_done)
        s->cfg.on_done(s->cfg.cb_arg, 0);
}

static void fail_start(struct sim *s, int err)
{
    sim_stop(s);
    if (s->cfg.on_done)
        s->cfg.on_done(s->cfg.cb_arg, err ? err : ERR_UNAVAILABLE);
}

static void begin_traffic(struct sim *s)
{
    enum sim_attack kind;

    if (s->running || s->stopped)
        return;
    s->running = true;
    s->t0 = ev_now(s->loop);
    ev_timer_init(&s->scan_timer, scan_cb, 1.0 / s->rate, 1.0 / s->rate);
    ev_timer_start(s->loop, &s->scan_timer);
    double first = plan_offset(s, 0, &kind);
    if (first >= 0) {
        ev_timer_init(&s->attack_timer, attack_cb, first, 0.);
        ev_timer_start(s->loop, &s->attack_timer);
    }
    if (s->cfg.duration_s > 0) {
        ev_timer_init(&s->done_timer, done_cb, s->cfg.duration_s, 0.);
        ev_timer_start(s->loop, &s->done_timer);
    }
    if (s->cfg.on_alert) {
        ev_timer_init(&s->alert_timer, alert_cb, SIM_ALERT_POLL_S, SIM_ALERT_POLL_S);
        ev_timer_start(s->loop, &s->alert_timer);
        poll_alerts(s);
    }
    if (s->cfg.on_ready)
        s->cfg.on_ready(s->cfg.cb_arg, s->brand);
}

static void batch_done(struct sim *s, void *ctx, long status, cJSON *body, int err)
{
    (void)ctx;
    const cJSON *list = body ? cJSON_GetObjectItemCaseSensitive(body, "products") : NULL;
    const cJSON *p;

    s->refilling = false;
    if (err || status != 200 || !cJSON_IsArray(list))
        return; /* scans are skipped until a later refill works */
    cJSON_ArrayForEach(p, list)
    {
        pool_add(s, jstr(p, "productId"), jstr(p, "verificationCode"), 0);
        s->st.products_created++;
    }
}

static void refill_pool(struct sim *s)
{
    char tag[9], name[160], sku[64];

    if (s->refilling || s->stopped)
        return;
    cJSON *b = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "brandId", s->brand);
    cJSON *arr = cJSON_AddArrayToObject(b, "products");
    ids_random_hex(4, tag);
    for (int i = 0; i < SIM_BATCH; i++) {
        unsigned k = (unsigned)i % SIM_NNAMES;
        cJSON *o = cJSON_CreateObject();
        snprintf(name, sizeof name, "%s - lot %s%02d", sim_names[k].name, tag, i);
        snprintf(sku, sizeof sku, "%s-%s%02d", sim_names[k].sku, tag, i);
        cJSON_AddStringToObject(o, "name", name);
        cJSON_AddStringToObject(o, "sku", sku);
        cJSON_AddStringToObject(o, "category", sim_names[k].category);
        cJSON_AddItemToArray(arr, o);
    }
    if (!sim_http(s, "POST", "/api/products/batch", b, true, NULL, 0, batch_done, NULL))
        s->refilling = true;
    cJSON_Delete(b);
}

static void list_done(struct sim *s, void *ctx, long status, cJSON *body, int err)
{
    (void)ctx;
    const cJSON *list = body ? cJSON_GetObjectItemCaseSensitive(body, "products") : NULL;
    const cJSON *p;

    if (err || status != 200 || !cJSON_IsArray(list)) {
        fail_start(s, err ? err : ERR_UNAVAILABLE);
        return;
    }
    cJSON_ArrayForEach(p, list)
    {
        const char *sku = jstr(p, "sku");
        const cJSON *sc = cJSON_GetObjectItemCaseSensitive(p, "scanCount");
        double scans = cJSON_IsNumber(sc) ? sc->valuedouble : 0;
        if (sku && !strncmp(sku, SIM_ATK_SKU, strlen(SIM_ATK_SKU)))
            continue; /* an earlier run's attack target */
        if (scans >= SIM_SCANS_PER_PRODUCT)
            continue;
        pool_add(s, jstr(p, "productId"), jstr(p, "verificationCode"), (unsigned)scans);
    }
    /* the schedule starts now; consumer scans wait for products if needed */
    begin_traffic(s);
    if (pool_alive(s) < SIM_BATCH / 2)
        refill_pool(s);
}

static void load_products(struct sim *s)
{
    char path[200];
    snprintf(path, sizeof path, "/api/products/list?brandId=%s&limit=100", s->brand);
    int rc = sim_http(s, "GET", path, NULL, true, NULL, 0, list_done, NULL);
    if (rc)
        fail_start(s, rc);
}

static void brands_done(struct sim *s, void *ctx, long status, cJSON *body, int err)
{
    (void)ctx;
    const cJSON *list = body ? cJSON_GetObjectItemCaseSensitive(body, "brands") : NULL;
    const char *id = cJSON_IsArray(list) ? jstr(cJSON_GetArrayItem(list, 0), "id") : NULL;

    if (err || status != 200 || !id || strlen(id) > SIM_ID_MAX) {
        fail_start(s, err ? err : ERR_NOTFOUND);
        return;
    }
    copy_str(s->brand, sizeof s->brand, id);
    load_products(s);
}

/* ---------- public ---------- */

struct sim *sim_new(struct ev_loop *loop, const struct sim_config *cfg, char *err, size_t errlen)
{
    struct sim *s;
    size_t ulen;

    if (!cfg->url || (strncmp(cfg->url, "http://", 7) && strncmp(cfg->url, "https://", 8))) {
        snprintf(err, errlen, "the URL must start with http:// or https://");
        return NULL;
    }
    ulen = strlen(cfg->url);
    if (ulen > 1024) {
        snprintf(err, errlen, "the URL is too long");
        return NULL;
    }
    if (cfg->rate > SIM_MAX_RATE || isnan(cfg->rate)) {
        snprintf(err, errlen, "the rate must be at most %.0f scans per second", SIM_MAX_RATE);
        return NULL;
    }
    if (cfg->brand_id && strlen(cfg->brand_id) > SIM_ID_MAX) {
        snprintf(err, errlen, "the brand id is too long");
        return NULL;
    }
    if (!cfg->api_key || !*cfg->api_key || strlen(cfg->api_key) > 256) {
        snprintf(err, errlen, "an API key (admin or the brand's) is required");
        return NULL;
    }
    s = xcalloc(1, sizeof *s);
    s->loop = loop;
    s->cfg = *cfg;
    s->url = xstrdup(cfg->url);
    while (ulen > 0 && s->url[ulen - 1] == '/')
        s->url[--ulen] = '\0';
    s->key = xstrdup(cfg->api_key);
    s->cfg.url = s->url;
    s->cfg.api_key = s->key;
    s->cfg.brand_id = NULL;
    if (cfg->brand_id)
        copy_str(s->brand, sizeof s->brand, cfg->brand_id);
    s->rate = cfg->rate > 0 ? cfg->rate : SIM_DEFAULT_RATE;
    s->rng = cfg->seed;
    if (!s->rng)
        ids_random(&s->rng, sizeof s->rng);
    if (!s->rng)
        s->rng = 0x9e3779b97f4a7c15ULL;
    s->plan.mask = cfg->attacks;
    if (!s->plan.mask)
        s->plan.mask = ((1u << SIM_ATK_COUNT) - 1) & ~(1u << SIM_ATK_TAMPER);
    if (!cfg->tamper)
        s->plan.mask &= ~(1u << SIM_ATK_TAMPER);
    s->plan.calm_s = cfg->calm_s;
    s->seen = xcalloc(SIM_SEEN_MAX, sizeof s->seen[0]);
    load_cities(s);
    if (s->ncities < 3) {
        snprintf(err, errlen, "the catalog has too few cities");
        goto fail;
    }
    struct http_client_config hc = {.max_inflight = 256, .user_agent = "GenuProof-sim/1"};
    s->http = http_client_new(loop, &hc);
    if (!s->http) {
        snprintf(err, errlen, "cannot start the HTTP client (libcurl)");
        goto fail;
    }
    s->scan_timer.data = s->attack_timer.data = s->done_timer.data = s->alert_timer.data = s;
    return s;
fail:
    sim_free(s);
    return NULL;
}

void sim_start(struct sim *s)
{
    int rc;
    if (s->brand[0]) {
        load_products(s);
        return;
    }
    rc = sim_http(s, "GET", "/api/brands/list", NULL, true, NULL, 0, brands_done, NULL);
    if (rc)
        fail_start(s, rc);
}

void sim_stop(struct sim *s)
{
    s->stopped = true;
    ev_timer_stop(s->loop, &s->scan_timer);
    ev_timer_stop(s->loop, &s->attack_timer);
    ev_timer_stop(s->loop, &s->done_timer);
    ev_timer_stop(s->loop, &s->alert_timer);
}

void sim_get_stats(const struct sim *s, struct sim_stats *out)
{
    *out = s->st;
}

const char *sim_brand(const struct sim *s)
{
    return s->brand;
}

void sim_free(struct sim *s)
{
    if (!s)
        return;
    sim_stop(s);
    http_client_free(s->http); /* drops every callback */
    while (s->reqs) {
        struct sim_req *r = s->reqs;
        s->reqs = r->next;
        free(r);
    }
    while (s->runs) {
        struct sim_run *r = s->runs;
        s->runs = r->next;
        free(r);
    }
    if (s->key) {
        memset(s->key, 0, strlen(s->key));
        free(s->key);
    }
    free(s->url);
    free(s->seen);
    free(s);
}
