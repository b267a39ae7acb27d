/*
 * app.h - the application behind the HTTP server: configuration, the
 * http_handler implementation (routing, access, rate limiting, group
 * commit, access log, metrics) and the services handlers reach through
 * api.h (store, signing secret, base URL, counters, keys, email hash).
 *
 * One struct app per process (per worker); it is not thread-safe, like
 * the loop that drives it.  Tests can drive it without a server: build an
 * http_request/http_response pair, call app_handle() for each request and
 * app_commit() once, as the server does per loop iteration.
 */
#ifndef GP_API_APP_H
#define GP_API_APP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/api.h"
#include "http/http.h"

struct store;
struct metrics;
struct ev_loop;
struct detect_driver;
struct sse_hub;
struct sse_poll;
struct http_client;

#define APP_DEFAULT_BASE_URL    "https://genuproof.com"
#define APP_DEFAULT_TRUST_PROXY "127.0.0.0/8,::1"
/* The dev secret of API.md §1.4, only with --demo-data. */
#define APP_DEV_SECRET "genuproof-dev-secret"

/* A postponed group commit (app_commit_later) waits at most this long
 * (scaled by GENUPROOF_TIME_SCALE) and takes at most this many requests. */
#define APP_BATCH_WAIT_US 500
#define APP_BATCH_MAX     512

struct app_config {
    const char *db_path;         /* beside it: <db>.admin-key, <db>.pepper; NULL: no files */
    const char *signing_secret;  /* required */
    const char *base_url;        /* NULL -> APP_DEFAULT_BASE_URL; trailing '/' removed */
    bool auth_off;               /* --auth none */
    const char *admin_key;       /* GENUPROOF_ADMIN_KEY; NULL -> <db>.admin-key file */
    const char *email_pepper;    /* GENUPROOF_EMAIL_PEPPER; NULL -> <db>.pepper file */
    long rate_limit;             /* requests/s per client IP on API_PUBLIC_RL routes; 0 = off */
    const char *trust_proxy;     /* NULL -> APP_DEFAULT_TRUST_PROXY */
    const char *geoip_path;      /* MaxMind .mmdb or NULL */
    bool quiet;                  /* no access log lines */
    bool allow_private_webhooks; /* --allow-private-webhooks (H10) */
    bool no_verify_memo;         /* verify re-reads every item (tests, A/B runs) */
};

/*
 * Creates the application over an open store (borrowed; must outlive the
 * app): sets up the admin key (writing <db>.admin-key when generated),
 * the email pepper, the rate limiter, trusted proxies and GeoIP.
 * On error returns NULL with a message in err.
 */
struct app *app_new(const struct app_config *cfg, struct store *s, char *err, size_t errlen);
void app_free(struct app *a);

/* The handler to give http_server_new() (arg = the app). */
void app_http_handler(struct app *a, struct http_handler *h);
/* The three http_handler callbacks (arg = struct app *). */
void app_handle(void *arg, struct http_request *req, struct http_response *res);
int app_commit(void *arg);
void app_done(void *arg, const struct http_request *req, const struct http_response *res,
              size_t bytes, double duration_ms);

/* Path of the admin key file when this start generated the key, else
 * NULL (the caller prints it once; the key itself is never logged). */
const char *app_admin_key_file(const struct app *a);
struct store *app_store(struct app *a);
struct metrics *app_metrics(struct app *a);
/* The server, for /metrics' connection gauge (may stay NULL). */
void app_set_server(struct app *a, struct http_server *srv);
/*
 * Post-commit listeners (detector driver, SSE hub, webhook dispatcher).
 * The app installs itself as the store's commit callback and calls each
 * listener, in registration order, after every successful commit of the
 * store (the server's group commit, the detector's batches, ...) with the
 * highest durable stream sequence.  A listener must only schedule work
 * (e.g. start an ev_idle watcher): it runs inside the commit path and must
 * not open a store batch itself.  At most 8 listeners.
 */
typedef void (*app_commit_listener)(void *arg, uint64_t last_seq);
void app_add_commit_listener(struct app *a, app_commit_listener fn, void *arg);
/* Removes a listener added with the same fn and arg (no-op when absent). */
void app_remove_commit_listener(struct app *a, app_commit_listener fn, void *arg);
/* The in-process detector's driver (api/detect_driver.h), set by serve;
 * NULL with --no-detector and in handler tests. */
void app_set_detector(struct app *a, struct detect_driver *d);
struct detect_driver *app_detector(struct app *a);
/* The verify snapshots (api/verify_memo.h), or NULL when this store has
 * none or they cannot be trusted right now (verify_memo_usable). */
struct verify_memo *app_verify_memo(struct app *a);
/* The SSE hub behind GET /api/stream (api/sse_hub.h), set by serve; NULL
 * in handler tests (the route then answers 503). */
void app_set_sse_hub(struct app *a, struct sse_hub *hub);
struct sse_hub *app_sse_hub(struct app *a);
/* The GSI1-polling hub (api/sse_poll.h) for processes that cannot read
 * the change stream (DynamoDB, serve --sse-mode poll).  When set, GET
 * /api/stream uses it instead of the sse_hub.  NULL by default. */
void app_set_sse_poll(struct app *a, struct sse_poll *hub);
struct sse_poll *app_sse_poll(struct app *a);
/*
 * Makes this loop iteration's group commit fail with err (the batch is
 * rolled back, every response of the iteration becomes a 500).  For a
 * handler whose multi-step write failed half way, so that no partial
 * write becomes durable.
 */
void app_fail_commit(struct app *a, int err);
/* The event loop the app runs on (set by serve; NULL in handler tests). */
void app_set_loop(struct app *a, struct ev_loop *loop);
struct ev_loop *app_loop(struct app *a);
/* The outbound HTTP client of handlers (http/client.h; e.g. Stripe),
 * created on first use on the app's loop and freed by app_free().  NULL
 * without a loop (handler tests) or when libcurl fails. */
struct http_client *app_http_client(struct app *a);
/* Name lookups of handlers (net/resolver.h; webhook registration),
 * created on first use on the app's loop and freed by app_free(), after
 * the server (whose deferred requests cancel their lookups).  NULL
 * without a loop (handler tests). */
struct resolver *app_resolver(struct app *a);

/*
 * Deferred requests that write.  A handler that has to wait for
 * something outside the loop (a name lookup) saves the request with
 * app_defer(), which marks the answer deferred (http.h); closed(arg) then
 * runs if the client goes away first (the saved conn is NULL by then).
 * When the wait is over, app_resume() runs fn(r, arg) on the loop as the
 * rest of the request: r carries the saved principal, client, route and
 * "now" (no query, body or headers: keep what you need), its writes join
 * the open group commit like a new request's, and fn answers through r
 * as a handler does; the answer goes out once that commit is durable.
 */
struct api_resume {
    struct app *app;
    struct http_conn *conn; /* NULL once the client is gone */
    struct api_principal who;
    int64_t now_ms;
    char client_ip[64];
    char country[64];
    char city[128];
    const char *route;
    enum api_access access;
    void (*closed)(void *arg);
    void *arg;
};
void app_defer(struct api_req *r, struct api_resume *rs, void (*closed)(void *arg), void *arg);
/* Answers the deferred request (nothing when its client is gone). */
void app_resume(struct api_resume *rs, void (*fn)(struct api_req *r, void *arg), void *arg);
/* Replaces the rate limiter's clock (ms, monotonic); NULL restores it. */
void app_set_clock(struct app *a, int64_t (*mono_ms)(void *arg), void *arg);

#endif
