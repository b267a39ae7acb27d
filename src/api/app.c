/*
 * app.c - the http_handler of GenuProof (app.h) and the application
 * services of api.h.
 *
 * Per request (app_handle): open the loop iteration's store batch if none
 * is active, take one "now", route, resolve the client IP and geo, check
 * the route's access class, rate-limit, run the handler, free the request
 * arena.  Per loop iteration (app_commit): fold the pending hot counters
 * into one update per item, then commit the batch; a failure makes the
 * server answer 500 to every request of the iteration, so a 2xx always
 * means "durable".  After each response (app_done): access log line and
 * metrics.
 */
#include "api/app.h"
#include "api/verify_memo.h"
#include "api/detect_driver.h"

#include <ctype.h>
#include <ev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_req.h"
#include "api/auth.h"
#include "api/counters.h"
#include "api/geo.h"
#include "api/metrics.h"
#include "api/ratelimit.h"
#include "api/router.h"
#include "core/canon.h"
#include "core/crypto.h"
#include "core/ids.h"
#include "http/client.h"
#include "http/server.h"
#include "net/resolver.h"
#include "store/store.h"
#include "util/err.h"
#include "util/log.h"
#include "util/timescale.h"
#include "util/xalloc.h"

/* Most post-commit listeners (app.h). */
#define APP_LISTENERS_MAX 8

struct app {
    struct store *store;
    char *signing_secret;
    char *base_url;
    bool auth_off, quiet;
    bool allow_private_webhooks;
    char admin_hash[65];
    unsigned char pepper[64];
    size_t pepper_len;
    char *admin_key_file; /* set when this start generated the key */
    struct ratelimit *rl;
    struct geo_proxies *proxies;
    struct geo_db *geo;
    struct metrics *metrics;
    struct counters *counters;
    size_t batch_requests; /* requests since the last commit */
    struct http_server *srv;
    int64_t (*clock)(void *arg);
    void *clock_arg;
    struct ev_loop *loop; /* set by serve; NULL in handler tests */
    ev_io sync_io;        /* the store's deferred-sync progress (store_sync_fd) */
    bool sync_on;
    bool early;             /* the server's early writes are the store's durable hook */
    bool carry_due;         /* app_commit_held: the carried run waits for app_after_commit */
    bool sync_failed;       /* the store reported a failed sync */
    ev_timer batch_timer;   /* bounds a postponed commit (app_commit_later) */
    int64_t batch_start_us; /* first request of the open batch (commit_later) */
    struct {
        app_commit_listener fn;
        void *arg;
    } listeners[APP_LISTENERS_MAX];
    size_t nlisteners;
    struct detect_driver *detector;
    struct verify_memo *memo; /* NULL: store without a data version, or turned off */
    struct sse_hub *sse_hub;  /* set by serve; NULL in handler tests */
    /* set by serve in poll mode (instead of sse_hub) */
    struct sse_poll *sse_poll;
    int commit_poison;         /* app_fail_commit: error of this iteration's commit */
    struct http_client *http;  /* outbound requests of handlers (app_http_client) */
    struct resolver *resolver; /* name lookups of handlers (app_resolver) */
};

static char *path_with_suffix(const char *db, const char *suffix)
{
    size_t n = strlen(db) + strlen(suffix) + 1;
    char *p = xmalloc(n);
    snprintf(p, n, "%s%s", db, suffix);
    return p;
}

static void sync_stop(struct app *a);

/* Metrics of the verify memo and of the answers waiting for a sync. */
static int app_metrics_source(void *arg, struct store *s, struct buf *out)
{
    (void)s;
    struct app *a = arg;
    struct verify_memo_stats ms = {0};
    if (a->memo)
        verify_memo_get_stats(a->memo, &ms);
    return buf_printf(out,
                      "# HELP genuproof_verify_memo_lookups_total Verify memo lookups "
                      "(api/verify_memo.h).\n"
                      "# TYPE genuproof_verify_memo_lookups_total counter\n"
                      "genuproof_verify_memo_lookups_total{result=\"hit\"} %llu\n"
                      "genuproof_verify_memo_lookups_total{result=\"miss\"} %llu\n"
                      "# HELP genuproof_verify_memo_drops_total Memo entries dropped by writes, "
                      "and memo resets (rollbacks, other processes' commits).\n"
                      "# TYPE genuproof_verify_memo_drops_total counter\n"
                      "genuproof_verify_memo_drops_total{kind=\"entry\"} %llu\n"
                      "genuproof_verify_memo_drops_total{kind=\"reset\"} %llu\n"
                      "# HELP genuproof_verify_memo_entries Entries in the verify memo.\n"
                      "# TYPE genuproof_verify_memo_entries gauge\n"
                      "genuproof_verify_memo_entries %zu\n"
                      "# HELP genuproof_http_held_responses Responses waiting for their "
                      "commit's sync.\n"
                      "# TYPE genuproof_http_held_responses gauge\n"
                      "genuproof_http_held_responses %zu\n"
                      "# HELP genuproof_http_early_writes_total Held answers written by the "
                      "server's writer thread right after their sync.\n"
                      "# TYPE genuproof_http_early_writes_total counter\n"
                      "genuproof_http_early_writes_total %llu\n",
                      ms.hits, ms.misses, ms.drops, ms.resets, ms.entries,
                      a->srv ? http_server_held_count(a->srv) : (size_t)0,
                      (unsigned long long)(a->srv ? http_server_early_writes(a->srv) : 0))
               ? ERR_TOOBIG
               : 0;
}

/* The store's commit callback: fans out to the listeners in order. */
static void app_on_commit(void *arg, uint64_t last_seq)
{
    struct app *a = arg;
    for (size_t i = 0; i < a->nlisteners; i++)
        a->listeners[i].fn(a->listeners[i].arg, last_seq);
}

struct app *app_new(const struct app_config *cfg, struct store *s, char *err, size_t errlen)
{
    struct app *a = xcalloc(1, sizeof *a);
    char now_iso[ISO_LEN + 1];
    char *key_path = NULL;
    int rc = 0;

    time_iso(time_now_ms(), now_iso);
    a->store = s;
    store_set_commit_cb(s, app_on_commit, a);
    a->auth_off = cfg->auth_off;
    a->quiet = cfg->quiet;
    a->allow_private_webhooks = cfg->allow_private_webhooks;
    if (!cfg->signing_secret || !*cfg->signing_secret) {
        snprintf(err, errlen, "no signing secret");
        goto fail;
    }
    a->signing_secret = xstrdup(cfg->signing_secret);
    a->base_url = xstrdup(cfg->base_url && *cfg->base_url ? cfg->base_url : APP_DEFAULT_BASE_URL);
    for (size_t n = strlen(a->base_url); n > 0 && a->base_url[n - 1] == '/'; n--)
        a->base_url[n - 1] = '\0';
    a->metrics = metrics_new(time_now_ms());
    metrics_add_source(a->metrics, app_metrics_source, a);
    a->counters = counters_new();
    if (!cfg->no_verify_memo)
        a->memo = verify_memo_new(s);

    a->proxies = geo_proxies_parse(cfg->trust_proxy ? cfg->trust_proxy : APP_DEFAULT_TRUST_PROXY,
                                   err, errlen);
    if (!a->proxies)
        goto fail;
    if (cfg->geoip_path && *cfg->geoip_path) {
        a->geo = geo_db_open(cfg->geoip_path, err, errlen);
        if (!a->geo)
            goto fail;
    }
    if (cfg->rate_limit > 0) {
        a->rl = rl_new((double)cfg->rate_limit, 2.0 * (double)cfg->rate_limit, RL_DEFAULT_CLIENTS);
        if (!a->rl) {
            snprintf(err, errlen, "bad rate limit");
            goto fail;
        }
    }

    /* admin key (hash only) */
    if (!cfg->admin_key && !cfg->db_path) {
        /* no file to keep a generated key in: admin only via the env */
        a->admin_hash[0] = '\0';
    } else {
        bool generated = false;
        key_path = cfg->db_path ? path_with_suffix(cfg->db_path, ".admin-key") : NULL;
        rc = auth_admin_setup(s, cfg->admin_key, key_path, now_iso, a->admin_hash, &generated, err,
                              errlen);
        if (rc)
            goto fail;
        if (generated) {
            a->admin_key_file = key_path;
            key_path = NULL;
        }
        /* the key joined no batch: the put committed on its own */
    }

    /* email pepper */
    if (cfg->email_pepper && *cfg->email_pepper) {
        a->pepper_len = strlen(cfg->email_pepper);
        if (a->pepper_len > sizeof a->pepper)
            a->pepper_len = sizeof a->pepper;
        memcpy(a->pepper, cfg->email_pepper, a->pepper_len);
    } else if (cfg->db_path) {
        char *pp = path_with_suffix(cfg->db_path, ".pepper");
        bool created;
        rc = auth_secret_file(pp, a->pepper, &created, err, errlen);
        free(pp);
        if (rc)
            goto fail;
        a->pepper_len = 32;
    } else {
        ids_random(a->pepper, 32); /* ephemeral: tests without files */
        a->pepper_len = 32;
    }
    free(key_path);
    return a;
fail:
    free(key_path);
    app_free(a);
    return NULL;
}

void app_free(struct app *a)
{
    if (!a)
        return;
    sync_stop(a);
    if (a->early && a->store)
        store_set_durable_hook(a->store, NULL, NULL);
    if (a->store)
        store_set_commit_cb(a->store, NULL, NULL);
    if (a->signing_secret) {
        memset(a->signing_secret, 0, strlen(a->signing_secret));
        free(a->signing_secret);
    }
    memset(a->pepper, 0, sizeof a->pepper);
    free(a->base_url);
    free(a->admin_key_file);
    rl_free(a->rl);
    geo_proxies_free(a->proxies);
    geo_db_close(a->geo);
    metrics_free(a->metrics);
    counters_free(a->counters);
    verify_memo_free(a->memo);
    http_client_free(a->http);
    resolver_free(a->resolver);
    free(a);
}

static uint64_t app_commit_ticket(void *arg);
static int app_commit_held(void *arg);
static void app_after_commit(void *arg);
static bool app_busy_after_commit(void *arg);
static bool app_commit_later(void *arg);
static void batch_timer_cb(struct ev_loop *loop, ev_timer *w, int revents);

void app_http_handler(struct app *a, struct http_handler *h)
{
    memset(h, 0, sizeof *h);
    h->arg = a;
    h->handle = app_handle;
    h->commit = app_commit_held;
    h->after_commit = app_after_commit;
    h->busy_after_commit = app_busy_after_commit;
    h->commit_ticket = app_commit_ticket;
    h->commit_later = app_commit_later;
    h->done = app_done;
}

const char *app_admin_key_file(const struct app *a)
{
    return a->admin_key_file;
}

struct store *app_store(struct app *a)
{
    return a->store;
}

struct metrics *app_metrics(struct app *a)
{
    return a->metrics;
}

void app_set_server(struct app *a, struct http_server *srv)
{
    if (a->srv && a->early) {
        /* returns once no call of the hook runs: the server may go */
        store_set_durable_hook(a->store, NULL, NULL);
        http_server_set_early_writes(a->srv, false);
        a->early = false;
    }
    a->srv = srv;
    if (srv && store_set_durable_hook(a->store, http_server_durable_hook, srv)) {
        http_server_set_early_writes(srv, true);
        a->early = true;
    }
}

void app_add_commit_listener(struct app *a, app_commit_listener fn, void *arg)
{
    if (!fn)
        return;
    if (a->nlisteners >= APP_LISTENERS_MAX) {
        log_msg(LOG_ERROR, NULL, "too many commit listeners (max %d); one ignored",
                APP_LISTENERS_MAX);
        return;
    }
    a->listeners[a->nlisteners].fn = fn;
    a->listeners[a->nlisteners].arg = arg;
    a->nlisteners++;
}

void app_remove_commit_listener(struct app *a, app_commit_listener fn, void *arg)
{
    for (size_t i = 0; i < a->nlisteners; i++) {
        if (a->listeners[i].fn != fn || a->listeners[i].arg != arg)
            continue;
        memmove(&a->listeners[i], &a->listeners[i + 1],
                (a->nlisteners - i - 1) * sizeof a->listeners[0]);
        a->nlisteners--;
        return;
    }
}

void app_set_detector(struct app *a, struct detect_driver *d)
{
    a->detector = d;
}

struct verify_memo *app_verify_memo(struct app *a)
{
    return a->memo && verify_memo_usable(a->memo) ? a->memo : NULL;
}

struct detect_driver *app_detector(struct app *a)
{
    return a->detector;
}

void app_set_sse_hub(struct app *a, struct sse_hub *hub)
{
    a->sse_hub = hub;
}

struct sse_hub *app_sse_hub(struct app *a)
{
    return a->sse_hub;
}

void app_set_sse_poll(struct app *a, struct sse_poll *hub)
{
    a->sse_poll = hub;
}

struct sse_poll *app_sse_poll(struct app *a)
{
    return a->sse_poll;
}

void app_fail_commit(struct app *a, int err)
{
    if (!a->commit_poison)
        a->commit_poison = err < 0 ? err : ERR_INTERNAL;
}

/* The store synced more commits: announce them (commit listeners) and
 * write the responses that waited for them. */
static void sync_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    (void)revents;
    struct app *a = w->data;
    int err = 0;
    uint64_t durable = store_sync_poll(a->store, &err);
    if (err)
        a->sync_failed = true;
    if (a->srv)
        http_server_durable(a->srv, durable, err != 0);
}

static void sync_stop(struct app *a)
{
    if (a->loop)
        ev_timer_stop(a->loop, &a->batch_timer);
    if (a->sync_on) {
        ev_io_stop(a->loop, &a->sync_io);
        a->sync_on = false;
    }
}

void app_set_loop(struct app *a, struct ev_loop *loop)
{
    sync_stop(a);
    a->loop = loop;
    ev_timer_init(&a->batch_timer, batch_timer_cb, 0., 0.);
    int fd = loop ? store_sync_fd(a->store) : -1;
    if (fd >= 0) {
        ev_io_init(&a->sync_io, sync_cb, fd, EV_READ);
        a->sync_io.data = a;
        ev_io_start(loop, &a->sync_io);
        a->sync_on = true;
    }
}

static void batch_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)w;
    (void)revents; /* the wake-up is the point: the prepare phase commits */
}

/*
 * http_handler.commit_later: a commit has a cost of its own (the WAL
 * frames of every page it touched, the detector's batch riding in it, the
 * counters, a sync), so under load fewer, larger commits serve more
 * requests.  The iteration's requests wait for the next iterations when
 *   - the previous commit's sync is still running (its completion wakes
 *     the loop; committing now would wait for the same disk), or
 *   - clients just answered are about to ask again
 *     (http_server_expected; a timer bounds the wait),
 * for at most APP_BATCH_WAIT_US (scaled) and APP_BATCH_MAX requests.  A
 * lone client is never kept waiting: its own next request cannot come
 * before its answer.
 */
static bool app_commit_later(void *arg)
{
    struct app *a = arg;
    if (a->sync_failed || a->batch_requests >= APP_BATCH_MAX)
        return false;
    double wait = scaled((double)APP_BATCH_WAIT_US / 1e6);
    double age = (double)(time_mono_us() - a->batch_start_us) / 1e6;
    if (age >= wait)
        return false;
    if (store_sync_pending(a->store))
        return true;
    if (!a->srv || !a->loop || !http_server_expected(a->srv))
        return false;
    if (!ev_is_active(&a->batch_timer)) {
        ev_timer_set(&a->batch_timer, wait - age, 0.);
        ev_timer_start(a->loop, &a->batch_timer);
    }
    return true;
}

/* http_handler.commit_ticket: what this iteration waits for. */
static uint64_t app_commit_ticket(void *arg)
{
    struct app *a = arg;
    return store_sync_pending(a->store);
}

struct ev_loop *app_loop(struct app *a)
{
    return a->loop;
}

struct http_client *app_http_client(struct app *a)
{
    if (!a->http && a->loop)
        a->http = http_client_new(a->loop, NULL);
    return a->http;
}

void app_set_clock(struct app *a, int64_t (*mono_ms)(void *arg), void *arg)
{
    a->clock = mono_ms;
    a->clock_arg = arg;
}

static int64_t app_mono_ms(const struct app *a)
{
    return a->clock ? a->clock(a->clock_arg) : time_mono_ms();
}

/* ---------- access ---------- */

/* Sets r->who from the request's credentials and checks the route's
 * access class.  Returns false when a response (401/403/500) was given. */
static bool authenticate(struct app *a, struct api_req *r)
{
    enum api_access acc = r->access;
    int rc;
    if (a->auth_off)
        r->who.kind = API_PRINCIPAL_ADMIN;

    if (acc == API_INGEST) {
        const char *ik = http_request_header(r->http, "X-Ingest-Key");
        if (ik) {
            struct api_principal p;
            rc = auth_resolve_ingest(a->store, ik, &p);
            if (!rc) {
                r->who = p;
                return true;
            }
            if (rc != ERR_NOTFOUND) {
                api_fail(r, "Internal error", rc);
                return false;
            }
        }
        if (a->auth_off)
            return true;
        api_error(r, 401, "Unauthorized");
        return false;
    }

    const char *authz = http_request_header(r->http, "Authorization");
    if (authz && !a->auth_off) {
        char key[AUTH_KEY_MAX + 1];
        if (!auth_parse_bearer(authz, key, sizeof key)) {
            rc = auth_resolve_bearer(a->store, a->admin_hash, key, &r->who);
            if (rc && rc != ERR_NOTFOUND && (acc == API_BRAND || acc == API_ADMIN)) {
                api_fail(r, "Internal error", rc);
                return false;
            }
        }
        memset(key, 0, sizeof key);
    }

    switch (acc) {
    case API_BRAND:
        if (r->who.kind == API_PRINCIPAL_BRAND || r->who.kind == API_PRINCIPAL_ADMIN)
            return true;
        break;
    case API_ADMIN:
        if (r->who.kind == API_PRINCIPAL_ADMIN)
            return true;
        if (r->who.kind != API_ANON) {
            api_error(r, 403, "Forbidden");
            return false;
        }
        break;
    default: /* PUBLIC, PUBLIC_RL, OPTIONAL: never rejected */
        return true;
    }
    api_error(r, 401, "Unauthorized");
    return false;
}

/* Token bucket per client IP on API_PUBLIC_RL routes.  The configured
 * admin key (an operator, or a test driver) is exempt when auth is on. */
static bool rate_limited(struct app *a, struct api_req *r)
{
    int retry = 1;
    if (!a->rl || r->access != API_PUBLIC_RL)
        return false;
    if (!a->auth_off && r->who.kind == API_PRINCIPAL_ADMIN)
        return false;
    if (rl_take(a->rl, r->client_ip, app_mono_ms(a), &retry))
        return false;
    api_error(r, 429, "Too many requests");
    http_response_header(r->res, "Retry-After", "%d", retry);
    return true;
}

/* ---------- http_handler ---------- */

/* A request joins the open group commit (one is opened when none is). */
static void request_begin(struct app *a)
{
    if (a->batch_requests++ == 0)
        a->batch_start_us = time_mono_us();
    if (!store_batch_active(a->store)) {
        int rc = store_batch_begin(a->store);
        if (rc) /* writes then commit one by one: still durable before the reply */
            log_msg(LOG_WARN, NULL, "store_batch_begin failed: %s", err_str(rc));
    }
}

/* The end of a handler's run: a handler that answered nothing, or whose
 * JSON could not be written, answers 500. */
static void request_check(struct api_req *r, struct http_response *res)
{
    if (res->status == 0)
        api_fail(r, "Internal error", ERR_INTERNAL);
    else if (r->jw.b == &res->body && jsonw_error(&r->jw))
        api_fail(r, "Internal error", jsonw_error(&r->jw));
}

void app_handle(void *arg, struct http_request *req, struct http_response *res)
{
    struct app *a = arg;
    struct api_req r;
    const struct api_route *rt = NULL;
    char allow[96];

    api_req_init(&r, a, req, res, time_now_ms());
    request_begin(a);

    switch (router_match(req->method, req->path, &rt, allow, sizeof allow)) {
    case ROUTER_NOT_FOUND:
        api_error(&r, 404, "Not found");
        goto out;
    case ROUTER_BAD_METHOD:
        api_error(&r, 405, "Method not allowed");
        http_response_header(res, "Allow", "%s", allow);
        goto out;
    case ROUTER_FOUND:
        break;
    }
    r.route = rt->path;
    r.access = rt->access;
    geo_resolve(a->proxies, a->geo, req, r.client_ip, sizeof r.client_ip, r.country,
                sizeof r.country, r.city, sizeof r.city);
    if (!authenticate(a, &r))
        goto out;
    if (rate_limited(a, &r))
        goto out;
    rt->fn(&r);
    if (res->deferred && !res->stream)
        goto out; /* answered later with http_conn_complete() (http.h) */
    request_check(&r, res);
out:
    api_req_finish(&r);
}

/*
 * Detection carried past the commit.  With deferred sync the loop waits
 * for the disk after each commit: its clients all wait for their answers,
 * so nothing else is there to do.  The detector's run on what the commit
 * just wrote fills that wait: it opens the next batch, runs the detector
 * in it (a sub-batch, as when joining) and leaves it open, so its alerts,
 * ops-log entries and checkpoint ride in the next group commit, with the
 * requests that come once the answers are out, or alone when none come
 * (http_server_touch: the server commits it under commit_later's rules).
 * Records become visible to the detector at COMMIT, before their sync;
 * whatever the detector writes comes later in the WAL, so it can never
 * be durable while they are not.
 */
static void carry_detection(struct app *a)
{
    if (store_batch_active(a->store) || store_batch_begin(a->store))
        return;
    a->batch_start_us = time_mono_us();
    if (detect_driver_join(a->detector, true) > 0) {
        http_server_touch(a->srv);
        return;
    }
    /* Nothing was written: an empty commit (an abort would tell the
     * write watchers that items may have changed). */
    if (store_batch_commit(a->store))
        store_batch_abort(a->store);
}

/* The group commit; with carry, the detector's carried run follows it
 * (app_commit), or runs once the server has held the answers
 * (app_after_commit: the answers are then ready for an early write
 * before the run starts). */
static int commit_requests(struct app *a, bool *carry_out)
{
    size_t n = a->batch_requests;
    a->batch_requests = 0;
    int rc = a->commit_poison;
    a->commit_poison = 0;
    if (!rc)
        rc = counters_flush(a->counters, a->store);
    else
        counters_clear(a->counters);
    /* With deferred sync the detector runs after the commit instead
     * (carry_detection); otherwise it rides in this commit. */
    bool carry = a->sync_on && a->srv;
    if (!rc && a->detector && !carry && store_batch_active(a->store))
        (void)detect_driver_join(a->detector, false);
    if (store_batch_active(a->store)) {
        if (rc)
            store_batch_abort(a->store);
        else
            rc = store_batch_commit(a->store);
    }
    if (rc)
        log_msg(LOG_ERROR, NULL, "group commit of %zu requests failed: %s", n, err_str(rc));
    if (n || rc) /* a commit of carried detector work alone is no group commit */
        metrics_commit(a->metrics, n, rc != 0);
    *carry_out = !rc && carry && a->detector && store_sync_pending(a->store);
    return rc;
}

int app_commit(void *arg)
{
    bool carry = false;
    int rc = commit_requests(arg, &carry);
    if (carry)
        carry_detection(arg);
    return rc;
}

/* http_handler.commit and .after_commit: the server's own commit defers
 * the carried run until the iteration's answers are held. */
static int app_commit_held(void *arg)
{
    struct app *a = arg;
    return commit_requests(a, &a->carry_due);
}

static bool app_busy_after_commit(void *arg)
{
    return ((struct app *)arg)->carry_due;
}

static void app_after_commit(void *arg)
{
    struct app *a = arg;
    if (a->carry_due) {
        a->carry_due = false;
        carry_detection(a);
    }
}

void app_done(void *arg, const struct http_request *req, const struct http_response *res,
              size_t bytes, double duration_ms)
{
    struct app *a = arg;
    const struct api_route *rt = NULL;
    char allow[8];
    router_match(req->method, req->path, &rt, allow, sizeof allow);
    metrics_request(a->metrics, rt ? rt->path : NULL, res->status, duration_ms);
    if (a->srv)
        metrics_set_connections(a->metrics, (long)http_server_conn_count(a->srv));
    if (a->quiet || !log_enabled(LOG_INFO))
        return;

    /* The query string is left out on purpose: it may carry codes or keys. */
    char client[64];
    char line[1536];
    struct buf b = BUF_INIT(sizeof line);
    geo_client_ip(a->proxies, req, client, sizeof client);
    size_t plen = strlen(req->path ? req->path : "");
    if (plen > 512)
        plen = 512;
    int rc = buf_puts(&b, "\"method\":");
    if (!rc)
        rc = canon_cstring(&b, req->method_name ? req->method_name : "");
    if (!rc)
        rc = buf_puts(&b, ",\"path\":");
    if (!rc)
        rc = canon_string(&b, req->path ? req->path : "", plen);
    if (!rc)
        rc = buf_printf(&b, ",\"route\":\"%s\",\"status\":%d,\"duration_ms\":%.3f,\"bytes\":%zu,",
                        rt ? rt->path : "", res->status, duration_ms, bytes);
    if (!rc)
        rc = buf_puts(&b, "\"client\":");
    if (!rc)
        rc = canon_cstring(&b, client);
    if (!rc)
        log_msg(LOG_INFO, buf_cstr(&b), "request");
    buf_free(&b);
}

/* ---------- deferred requests that write (app.h) ---------- */

static void resume_conn_closed(void *arg, struct http_conn *c)
{
    struct api_resume *rs = arg;
    (void)c;
    rs->conn = NULL;
    if (rs->closed)
        rs->closed(rs->arg);
}

void app_defer(struct api_req *r, struct api_resume *rs, void (*closed)(void *arg), void *arg)
{
    memset(rs, 0, sizeof *rs);
    rs->app = r->app;
    rs->conn = r->http ? r->http->conn : NULL;
    rs->who = r->who;
    rs->now_ms = r->now_ms;
    snprintf(rs->client_ip, sizeof rs->client_ip, "%s", r->client_ip);
    snprintf(rs->country, sizeof rs->country, "%s", r->country);
    snprintf(rs->city, sizeof rs->city, "%s", r->city);
    rs->route = r->route;
    rs->access = r->access;
    rs->closed = closed;
    rs->arg = arg;
    r->res->deferred = true;
    r->res->deferred_closed = resume_conn_closed;
    r->res->deferred_arg = rs;
}

void app_resume(struct api_resume *rs, void (*fn)(struct api_req *r, void *arg), void *arg)
{
    struct app *a = rs->app;
    struct http_response res;
    struct api_req r;

    if (!rs->conn)
        return;
    memset(&res, 0, sizeof res);
    buf_init(&res.headers, 64 * 1024);
    buf_init(&res.body, HTTP_RESPONSE_MAX);
    api_req_init(&r, a, NULL, &res, rs->now_ms);
    r.who = rs->who;
    snprintf(r.client_ip, sizeof r.client_ip, "%s", rs->client_ip);
    snprintf(r.country, sizeof r.country, "%s", rs->country);
    snprintf(r.city, sizeof r.city, "%s", rs->city);
    r.route = rs->route;
    r.access = rs->access;
    request_begin(a);
    fn(&r, arg);
    request_check(&r, &res);
    api_req_finish(&r);
    struct http_conn *c = rs->conn;
    rs->conn = NULL;
    if (http_conn_complete(c, &res))
        log_msg(LOG_WARN, NULL, "could not complete a deferred answer");
    buf_free(&res.headers);
    buf_free(&res.body);
}

struct resolver *app_resolver(struct app *a)
{
    if (!a->resolver && a->loop)
        a->resolver = resolver_new(a->loop, 0);
    return a->resolver;
}

/* ---------- application services (api.h) ---------- */

struct store *api_store(struct api_req *r)
{
    return r->app->store;
}

const char *api_signing_secret(const struct api_req *r)
{
    return r->app->signing_secret;
}

const char *api_base_url(const struct api_req *r)
{
    return r->app->base_url;
}

bool api_allow_private_webhooks(const struct api_req *r)
{
    return r->app->allow_private_webhooks;
}

double api_counter_add(struct api_req *r, const char *pk, const char *sk, const char *attr,
                       double delta)
{
    return counters_add(r->app->counters, pk, sk, attr, delta);
}

double api_counter_pending(struct api_req *r, const char *pk, const char *sk, const char *attr)
{
    return counters_pending(r->app->counters, pk, sk, attr);
}

void api_email_hash(struct api_req *r, const char *email, char out[65])
{
    const char *s = email ? email : "";
    while (*s && isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    char *low = api_alloc(r, n + 1);
    for (size_t i = 0; i < n; i++)
        low[i] = (char)tolower((unsigned char)s[i]);
    crypto_hmac_sha256_hex(r->app->pepper, r->app->pepper_len, low, n, out);
}

cJSON *api_brand_key_item(struct api_req *r, const char *brand_id, char key_out[72])
{
    char hash[65];
    cJSON *item = NULL;
    if (brand_id && *brand_id && strlen(brand_id) < sizeof r->who.brand_id) {
        auth_key_generate(AUTH_BRAND_PREFIX, key_out, 72);
        auth_key_hash(key_out, hash);
        item = auth_key_item_new(hash, "brand", brand_id, r->now_iso);
    }
    if (!item)
        memset(key_out, 0, 72);
    return item;
}
