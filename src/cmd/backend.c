/*
 * backend.c - the server side on one loop (backend.h), shared by `serve`
 * and `demo`.
 *
 * Start-up order: signing secret -> store -> demo data -> application
 * (admin key, pepper) -> listen -> SSE hub -> detector -> webhook
 * dispatcher -> classifier -> maintenance timer.  Anything that fails
 * logs one clear line and unwinds what was started; secrets and keys are
 * never logged (only the path of a generated admin key file).
 */
#include "cmd/backend.h"
#include "cmd/store_open.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ev.h>

#include "api/app.h"
#include "api/classify_driver.h"
#include "api/demo.h"
#include "api/detect_driver.h"
#include "api/sse_hub.h"
#include "api/sse_poll.h"
#include "api/webhook_dispatch.h"
#include "detect/ddb_detector.h"
#include "cmd/cmd_serve.h"
#include "core/canon.h"
#include "core/timeutil.h"
#include "http/http.h"
#include "store/store.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"
#include "util/timescale.h"
#include "util/xalloc.h"

/* Longest admin key read back from <db>.admin-key. */
#define BACKEND_KEY_MAX 256

struct backend {
    struct ev_loop *loop;
    char *secret;
    char *admin_key; /* known admin key or NULL */
    struct store *store;
    struct app *app;
    struct http_server *srv;
    struct detect_driver *detector;     /* NULL with --no-detector */
    struct sse_hub *sse;                /* GET /api/stream subscribers */
    struct ddb_detector *ddb_det;       /* DynamoDB Streams detector (worker 0) */
    struct sse_poll *sse_poll;          /* ... in poll mode (instead of sse) */
    struct webhook_dispatch *webhooks;  /* webhook deliveries */
    struct classify_driver *classifier; /* --classifier gemini|openai */
    ev_timer maint;
    bool maint_on;
    /* Worker 0 of several: notices the other workers' commits. */
    ev_timer tail;
    bool tail_on;
    uint64_t tail_head;
};

/* Period of the stream-head tail of a multi-worker server (scaled, at
 * least 10 ms): the extra scan->alert latency of a scan another worker
 * took. */
#define BACKEND_TAIL_S 0.05

/* Reads the signing secret from a file: trailing newlines dropped, must
 * be non-empty and at most SERVE_SECRET_MAX bytes.  Returns a malloc'd
 * string or NULL (message in err). */
static char *read_secret_file(const char *path, char *err, size_t errlen)
{
    char *buf = xmalloc(SERVE_SECRET_MAX + 2);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = -1;
    if (fd >= 0) {
        n = read(fd, buf, SERVE_SECRET_MAX + 1);
        close(fd);
    }
    if (n < 0) {
        snprintf(err, errlen, "cannot read signing secret file %s: %s", path, strerror(errno));
        goto fail;
    }
    if (n > SERVE_SECRET_MAX) {
        snprintf(err, errlen, "signing secret file %s is larger than %d bytes", path,
                 SERVE_SECRET_MAX);
        goto fail;
    }
    buf[n] = '\0';
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        buf[--n] = '\0';
    if (n == 0 || strlen(buf) != (size_t)n) {
        snprintf(err, errlen, "signing secret file %s is empty or holds a NUL byte", path);
        goto fail;
    }
    return buf;
fail:
    memset(buf, 0, SERVE_SECRET_MAX + 2);
    free(buf);
    return NULL;
}

/* Picks the signing secret: --signing-secret-file, env SIGNING_SECRET, or
 * (demo only) the dev secret.  NULL with a message when none. */
static char *signing_secret(const struct opt_values *o, bool demo, char *err, size_t errlen)
{
    const char *file = opt_str(o, "signing-secret-file");
    if (file)
        return read_secret_file(file, err, errlen);
    const char *env = getenv("SIGNING_SECRET");
    if (env && *env)
        return xstrdup(env);
    if (demo) {
        log_warn("no SIGNING_SECRET: using the public development secret (demo mode only)");
        return xstrdup(APP_DEV_SECRET);
    }
    snprintf(err, errlen,
             "no signing secret: set SIGNING_SECRET or --signing-secret-file "
             "(or use --demo-data for a local demo)");
    return NULL;
}

void backend_log_kv(enum log_level lvl, const char *key, const char *val, const char *msg)
{
    struct buf b = BUF_INIT(4096);
    if (!buf_printf(&b, "\"%s\":", key) && !canon_cstring(&b, val ? val : ""))
        log_msg(lvl, buf_cstr(&b), "%s", msg);
    else
        log_msg(lvl, NULL, "%s", msg);
    buf_free(&b);
}

/* The admin key kept in <db>.admin-key (first line), or NULL. */
static char *read_admin_key_file(const char *db)
{
    size_t n = strlen(db) + sizeof ".admin-key";
    char *path = xmalloc(n);
    char *key = NULL;
    char buf[BACKEND_KEY_MAX + 2];
    ssize_t got = -1;
    int fd;

    snprintf(path, n, "%s.admin-key", db);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        got = read(fd, buf, BACKEND_KEY_MAX + 1);
        close(fd);
    }
    if (got > 0 && got <= BACKEND_KEY_MAX) {
        buf[got] = '\0';
        buf[strcspn(buf, "\r\n")] = '\0';
        if (buf[0])
            key = xstrdup(buf);
    }
    memset(buf, 0, sizeof buf);
    free(path);
    return key;
}

static void maint_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    struct backend *b = w->data;
    size_t purged = 0, trimmed = 0;
    int64_t now = time_now_ms();
    int rc = store_purge_expired(b->store, now, 1000, &purged);
    if (rc)
        log_warn("ttl purge failed: %s", err_str(rc));
    rc = store_stream_trim(b->store, now, &trimmed);
    if (rc)
        log_warn("stream trim failed: %s", err_str(rc));
    if (purged || trimmed)
        log_msg(LOG_DEBUG, NULL,
                "maintenance: %zu expired items purged, %zu stream records trimmed", purged,
                trimmed);
}

/* The services after the HTTP server: SSE hub, detector, webhook
 * dispatcher, classifier.  Returns 0 or a SERVE_EXIT_* status (logged). */
/* Worker 0 of several: another worker's commit wakes what a commit of
 * this process would (the SSE hub, the detector, webhooks, classifier). */
static void tail_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    struct backend *b = w->data;
    uint64_t head;
    if (store_batch_active(b->store) || store_stream_head(b->store, &head) || head <= b->tail_head)
        return;
    b->tail_head = head;
    if (b->sse)
        sse_hub_commit_cb(b->sse, head);
    if (b->detector)
        detect_driver_poke(b->detector);
    if (b->webhooks)
        webhook_dispatch_on_commit(b->webhooks, head);
    if (b->classifier)
        classify_driver_on_commit(b->classifier, head);
}

/* DynamoDB: this process's Streams detector committed work items; its
 * own takers look at once (the other processes find them by polling). */
static void work_cb(void *arg)
{
    struct backend *b = arg;
    webhook_dispatch_poke(b->webhooks);
    classify_driver_poke(b->classifier);
}

/* The model --classifier names (RULES: none; otherwise
 * start_job_workers runs it in this process). */
static enum classify_provider model_provider(const struct opt_values *o)
{
    enum classify_provider prov = CLASSIFY_PROVIDER_RULES;
    classify_provider_parse(opt_str(o, "classifier"), &prov);
    return prov;
}

/* Webhook deliveries and the model classifier: on SQLite readers of the
 * change stream (worker 0 only); on DynamoDB takers of the work items
 * the Streams detector writes (every process). */
static int start_job_workers(struct backend *b, const struct opt_values *o)
{
    char err[512];
    struct webhook_dispatch_config wc = {
        .allow_private = opt_flag(o, "allow-private-webhooks"),
    };
    if (wc.allow_private)
        log_warn("webhooks may target private and loopback addresses (--allow-private-webhooks)");
    b->webhooks = webhook_dispatch_new(b->store, b->loop, &wc, err, sizeof err);
    if (!b->webhooks) {
        log_error("%s", err);
        return SERVE_EXIT_FAIL;
    }
    app_add_commit_listener(b->app, webhook_dispatch_on_commit, b->webhooks);

    enum classify_provider prov = model_provider(o);
    if (prov != CLASSIFY_PROVIDER_RULES) {
        struct classify_driver_config cc = {
            .model = {.provider = prov,
                      .url = opt_str(o, "classifier-url"),
                      .model = opt_str(o, "classifier-model"),
                      .timeout_s = (double)opt_int(o, "classifier-timeout")},
        };
        b->classifier = classify_driver_new(b->store, b->loop, &cc, err, sizeof err);
        if (!b->classifier) {
            log_error("%s", err);
            return SERVE_EXIT_USAGE;
        }
        app_add_commit_listener(b->app, classify_driver_on_commit, b->classifier);
        log_info("model classifier: %s (rules stand on any model error)",
                 classify_provider_name(prov));
    }
    return 0;
}

static int start_services(struct backend *b, const struct opt_values *o,
                          const struct http_server_config *hc, const struct backend_config *cfg)
{
    bool multi = cfg->workers > 1;
    bool lead = cfg->worker == 0;
    char err[512];
    struct sse_hub_config sc = {
        .store = b->store,
        .loop = b->loop,
        .metrics = app_metrics(b->app),
        .max_per_brand = (size_t)opt_int(o, "sse-max-streams"),
        .buffer_max = hc->stream_buffer_max,
        /* the other workers' hubs tail the stream themselves; worker 0's
         * is fed by the backend's own tail (tail_cb), one poll for all */
        .tail_s = multi && !lead ? BACKEND_TAIL_S : 0,
    };
    /* --sse-mode: push from the change stream, or poll GSI1 (auto: poll
     * when the store has no readable stream, i.e. DynamoDB) */
    const char *mode = opt_str(o, "sse-mode");
    bool poll = mode && !strcmp(mode, "poll");
    if (!mode || !strcmp(mode, "auto"))
        poll = !store_has_stream(b->store);
    if (poll) {
        struct sse_poll_config pc = {.store = b->store,
                                     .loop = b->loop,
                                     .metrics = app_metrics(b->app),
                                     .max_per_brand = sc.max_per_brand,
                                     .buffer_max = sc.buffer_max};
        b->sse_poll = sse_poll_new(&pc, err, sizeof err);
        if (!b->sse_poll) {
            log_error("%s", err);
            return SERVE_EXIT_FAIL;
        }
        app_set_sse_poll(b->app, b->sse_poll);
    } else {
        b->sse = sse_hub_new(&sc, err, sizeof err);
        if (!b->sse) {
            log_error("%s", err);
            return SERVE_EXIT_FAIL;
        }
        app_set_sse_hub(b->app, b->sse);
        app_add_commit_listener(b->app, sse_hub_commit_cb, b->sse);
    }

    if (!store_has_stream(b->store)) {
        /* DynamoDB: the change stream is DynamoDB Streams, read by the
         * Streams detector (leases let `genuproof detect` workers share
         * the shards with this one). */
        if (!lead || opt_flag(o, "no-detector")) {
            if (lead)
                log_warn("the threat detector is off (--no-detector): run `genuproof detect`");
        } else {
            struct ddb_detector_config dc = {
                .s = b->store,
                .endpoint = opt_str(o, "dynamodb"),
                .table = opt_str(o, "table"),
                .batch_size = (size_t)opt_int(o, "detector-batch"),
                .fold_scan_counts = store_counters_by_detector(b->store),
                .opslog_changes = opt_opslog_changes(o),
                .classifier_local = model_provider(o) != CLASSIFY_PROVIDER_RULES,
                .on_work = work_cb,
                .on_work_arg = b};
            b->ddb_det = ddb_detector_new(&dc, err, sizeof err);
            if (!b->ddb_det || ddb_detector_start(b->ddb_det, b->loop)) {
                log_error("Streams detector: %s", b->ddb_det ? "cannot start" : err);
                return SERVE_EXIT_FAIL;
            }
        }
    } else if (!lead) {
        /* worker 0 runs the detector for the whole database */
    } else if (opt_flag(o, "no-detector")) {
        log_warn(
            "the threat detector is off (--no-detector): alerts wait for a server that runs it");
    } else {
        struct detect_driver_config dc = {
            .batch_size = (size_t)opt_int(o, "detector-batch"),
            .batch_window_s = (double)opt_int(o, "detector-window"),
            .opslog_changes = opt_opslog_changes(o),
        };
        b->detector = detect_driver_new(b->app, &dc, err, sizeof err);
        if (!b->detector) {
            log_error("%s", err);
            return SERVE_EXIT_FAIL;
        }
    }

    int st = 0;
    if (store_has_stream(b->store)) {
        /* SQLite: both read the change stream, in worker 0 only */
        if (!lead)
            return 0;
        st = start_job_workers(b, o);
    } else {
        /* DynamoDB: the Streams detector writes deliveries and
         * classification jobs into pending partitions, and every API
         * process takes work from there (api/job_claim.h) */
        st = start_job_workers(b, o);
        if (!st && !lead)
            return 0;
    }
    if (st)
        return st;
    if (multi) {
        double every = scaled(BACKEND_TAIL_S);
        store_stream_head(b->store, &b->tail_head);
        b->tail.data = b;
        ev_timer_init(&b->tail, tail_cb, every < 0.01 ? 0.01 : every, every < 0.01 ? 0.01 : every);
        ev_timer_start(b->loop, &b->tail);
        b->tail_on = true;
    }
    return 0;
}

struct backend *backend_start(struct ev_loop *loop, const struct backend_config *cfg, int *status)
{
    const struct opt_values *o = cfg->opts;
    struct backend *b = xcalloc(1, sizeof *b);
    char err[512];
    int st = SERVE_EXIT_FAIL;

    b->loop = loop;
    bool demo = opt_flag(o, "demo-data");
    bool auth_off = !strcmp(opt_str(o, "auth"), "none");
    b->secret = signing_secret(o, demo, err, sizeof err);
    if (!b->secret) {
        log_error("%s", err);
        st = SERVE_EXIT_USAGE;
        goto fail;
    }

    const char *db = opt_str(o, "db");
    /* --store / --dynamodb / --table select the driver (cmd/store_open.h). */
    b->store = cmd_store_open(o, true, err, sizeof err);
    if (!b->store) {
        if (cmd_store_is_dynamodb(o))
            backend_log_kv(LOG_ERROR, "table", opt_str(o, "table"), err);
        else
            backend_log_kv(LOG_ERROR, "db", db, err);
        goto fail;
    }
    if (demo && cfg->worker == 0) {
        int rc = demo_seed(b->store, b->secret, err, sizeof err);
        if (rc) {
            log_error("demo data: %s (%s)", err, err_str(rc));
            goto fail;
        }
        log_info("demo data present");
    }

    const char *admin_key = cfg->admin_key ? cfg->admin_key : getenv("GENUPROOF_ADMIN_KEY");
    if (admin_key && !*admin_key)
        admin_key = NULL;
    struct app_config ac = {
        .db_path = db,
        .signing_secret = b->secret,
        .base_url = opt_str(o, "base-url"),
        .auth_off = auth_off,
        .admin_key = admin_key,
        .email_pepper = getenv("GENUPROOF_EMAIL_PEPPER"),
        .rate_limit = opt_int(o, "rate-limit"),
        .trust_proxy = opt_str(o, "trust-proxy"),
        .geoip_path = opt_str(o, "geoip"),
        .quiet = cfg->quiet,
        .allow_private_webhooks = opt_flag(o, "allow-private-webhooks"),
    };
    b->app = app_new(&ac, b->store, err, sizeof err);
    if (!b->app) {
        log_error("%s", err);
        st = SERVE_EXIT_USAGE;
        goto fail;
    }
    if (app_admin_key_file(b->app))
        backend_log_kv(
            LOG_WARN, "file", app_admin_key_file(b->app),
            "generated the admin key; it is in this file (mode 0600) and shown nowhere else");
    if (auth_off)
        log_warn("authentication is OFF (--auth none): every caller has admin rights");
    if (admin_key)
        b->admin_key = xstrdup(admin_key);
    else if (db && !auth_off)
        b->admin_key = read_admin_key_file(db);

    app_set_loop(b->app, loop);
    struct http_handler h;
    app_http_handler(b->app, &h);
    struct http_server_config hc = {
        .listen = cfg->listen ? cfg->listen : opt_str(o, "listen"),
        .reuseport = cfg->workers > 1,
        .max_body = (size_t)opt_int(o, "max-body"),
        .cors_origin = opt_str(o, "cors-origin"),
        .stream_buffer_max = (size_t)opt_int(o, "sse-buffer"),
    };
    b->srv = http_server_new(loop, &hc, &h, err, sizeof err);
    if (!b->srv) {
        backend_log_kv(LOG_ERROR, "listen", hc.listen, err);
        goto fail;
    }
    app_set_server(b->app, b->srv);
    st = start_services(b, o, &hc, cfg);
    if (st)
        goto fail;

    if (cfg->worker == 0) {
        b->maint.data = b;
        ev_timer_init(&b->maint, maint_cb, scaled(SERVE_MAINT_SECONDS),
                      scaled(SERVE_MAINT_SECONDS));
        ev_timer_start(loop, &b->maint);
        b->maint_on = true;
    }
    *status = 0;
    return b;
fail:
    backend_stop(b);
    *status = st;
    return NULL;
}

int backend_port(const struct backend *b)
{
    return http_server_port(b->srv);
}

const char *backend_admin_key(const struct backend *b)
{
    return b->admin_key;
}

struct store *backend_store(struct backend *b)
{
    return b->store;
}

struct app *backend_app(struct backend *b)
{
    return b->app;
}

void backend_drain(struct backend *b, void (*done_cb)(void *arg), void *arg)
{
    if (b->maint_on) {
        ev_timer_stop(b->loop, &b->maint);
        b->maint_on = false;
    }
    http_server_drain(b->srv, done_cb, arg);
}

int backend_stop(struct backend *b)
{
    int rc = 0;

    if (!b)
        return 0;
    /* Anything written after the last commit: a handler's writes (none
     * normally) or detection carried past it (app.c), which may carry
     * once more for its own records; a batch still open after that holds
     * only a checkpoint move, redone at the next start. */
    for (int i = 0; i < 4 && !rc && b->app && b->store && store_batch_active(b->store); i++)
        rc = app_commit(b->app);
    if (b->maint_on)
        ev_timer_stop(b->loop, &b->maint);
    if (b->tail_on)
        ev_timer_stop(b->loop, &b->tail);
    detect_driver_free(b->detector);
    ddb_detector_free(b->ddb_det); /* releases its leases; before store_close */
    if (b->srv) {
        if (b->app)
            app_set_server(b->app, NULL); /* a sync completing now has no answers to write */
        http_server_free(b->srv);         /* reports every open stream to the hub */
    }
    if (b->sse) {
        app_remove_commit_listener(b->app, sse_hub_commit_cb, b->sse);
        app_set_sse_hub(b->app, NULL);
        sse_hub_free(b->sse);
    }
    if (b->sse_poll) {
        app_set_sse_poll(b->app, NULL);
        sse_poll_free(b->sse_poll);
    }
    if (b->classifier) {
        app_remove_commit_listener(b->app, classify_driver_on_commit, b->classifier);
        classify_driver_free(b->classifier);
    }
    if (b->webhooks) {
        app_remove_commit_listener(b->app, webhook_dispatch_on_commit, b->webhooks);
        webhook_dispatch_free(b->webhooks);
    }
    app_free(b->app);
    if (b->store)
        store_close(b->store);
    if (b->secret) {
        memset(b->secret, 0, strlen(b->secret));
        free(b->secret);
    }
    if (b->admin_key) {
        memset(b->admin_key, 0, strlen(b->admin_key));
        free(b->admin_key);
    }
    free(b);
    return rc;
}
