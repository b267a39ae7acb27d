/*
 * cmd_serve.c - `genuproof serve` (cmd_serve.h): wires options, store,
 * application and HTTP server on one libev loop.
 *
 * Start-up order: options -> signing secret -> store -> demo data ->
 * application (admin key, pepper) -> listen -> port file.  Anything that
 * fails before listening exits non-zero with one clear log line; secrets
 * and keys are never logged (only the path of a generated admin key
 * file).  Shutdown: SIGTERM/SIGINT stop accepting and drain in-flight
 * requests (bounded), then the loop ends and everything is closed.
 */
#include "cmd/cmd_serve.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ev.h>

#include "api/app.h"
#include "api/classify_driver.h"
#include "api/webhook_dispatch.h"
#include "api/demo.h"
#include "api/detect_driver.h"
#include "api/sse_hub.h"
#include "cmd/options.h"
#include "core/canon.h"
#include "core/timeutil.h"
#include "http/http.h"
#include "store/store.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"
#include "util/timescale.h"
#include "util/xalloc.h"

struct serve {
    struct ev_loop *loop;
    struct store *store;
    struct app *app;
    struct http_server *srv;
    struct detect_driver *detector;    /* NULL with --no-detector */
    struct sse_hub *sse;               /* GET /api/stream subscribers */
    struct webhook_dispatch *webhooks; /* webhook deliveries (H10) */
    struct classify_driver *classifier; /* --classifier gemini|openai (H10) */
    ev_signal sigterm, sigint;
    ev_timer maint, drain_deadline;
    bool draining;
};

/* Raises the open-file limit to the hard limit (many connections). */
static void raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl))
            log_warn("cannot raise the open-file limit: %s", strerror(errno));
    }
}

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

/* Writes "<port>\n" to path atomically (temp file + rename), so a reader
 * polling for the file never sees it half written. */
static int write_port_file(const char *path, int port)
{
    size_t n = strlen(path) + 16;
    char *tmp = xmalloc(n);
    snprintf(tmp, n, "%s.tmp", path);
    int rc = 0;
    FILE *f = fopen(tmp, "w");
    if (!f || fprintf(f, "%d\n", port) < 0)
        rc = ERR_IO;
    if (f && fclose(f))
        rc = ERR_IO;
    if (!rc && rename(tmp, path))
        rc = ERR_IO;
    if (rc)
        unlink(tmp);
    free(tmp);
    return rc;
}

/* Extra log members: "key":"<json-escaped value>". */
static void log_kv(enum log_level lvl, const char *key, const char *val, const char *msg)
{
    struct buf b = BUF_INIT(4096);
    if (!buf_printf(&b, "\"%s\":", key) && !canon_cstring(&b, val ? val : ""))
        log_msg(lvl, buf_cstr(&b), "%s", msg);
    else
        log_msg(lvl, NULL, "%s", msg);
    buf_free(&b);
}

static void maint_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    struct serve *sv = w->data;
    size_t purged = 0, trimmed = 0;
    int64_t now = time_now_ms();
    int rc = store_purge_expired(sv->store, now, 1000, &purged);
    if (rc)
        log_warn("ttl purge failed: %s", err_str(rc));
    rc = store_stream_trim(sv->store, now, &trimmed);
    if (rc)
        log_warn("stream trim failed: %s", err_str(rc));
    if (purged || trimmed)
        log_msg(LOG_DEBUG, NULL,
                "maintenance: %zu expired items purged, %zu stream records trimmed", purged,
                trimmed);
}

static void drained_cb(void *arg)
{
    struct serve *sv = arg;
    ev_break(sv->loop, EVBREAK_ALL);
}

static void drain_deadline_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)w;
    (void)revents;
    log_warn("drain deadline reached; closing remaining connections");
    ev_break(loop, EVBREAK_ALL);
}

static void signal_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
    (void)revents;
    struct serve *sv = w->data;
    if (sv->draining) {
        log_warn("second signal: stopping now");
        ev_break(loop, EVBREAK_ALL);
        return;
    }
    sv->draining = true;
    log_info("signal %d: draining in-flight requests", w->signum);
    ev_timer_stop(loop, &sv->maint);
    ev_timer_init(&sv->drain_deadline, drain_deadline_cb, scaled(SERVE_DRAIN_SECONDS), 0.);
    ev_timer_start(loop, &sv->drain_deadline);
    ev_unref(loop); /* the deadline alone must not keep the loop alive */
    http_server_drain(sv->srv, drained_cb, sv);
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

int cmd_serve(int argc, char **argv)
{
    struct opt_values o;
    struct serve sv;
    char err[512];
    bool help = false;
    char *secret = NULL;
    int status = SERVE_EXIT_FAIL;

    memset(&sv, 0, sizeof sv);
    if (opt_parse(serve_options, argc, argv, &o, &help, err, sizeof err)) {
        fprintf(stderr, "genuproof serve: %s\n", err);
        return SERVE_EXIT_USAGE;
    }
    if (help) {
        opt_usage(stdout, "serve", "API server on the embedded SQLite store.", serve_options);
        return SERVE_EXIT_OK;
    }
    signal(SIGPIPE, SIG_IGN);
    raise_nofile();

    bool demo = opt_flag(&o, "demo-data");
    bool auth_off = !strcmp(opt_str(&o, "auth"), "none");
    secret = signing_secret(&o, demo, err, sizeof err);
    if (!secret) {
        log_error("%s", err);
        return SERVE_EXIT_USAGE;
    }

    const char *db = opt_str(&o, "db");
    struct store_options so = {
        .path = db,
        .durability = !strcmp(opt_str(&o, "durability"), "normal") ? STORE_DURABILITY_NORMAL
                                                                   : STORE_DURABILITY_FULL,
    };
    sv.store = store_open_sqlite(&so, err, sizeof err);
    if (!sv.store) {
        log_kv(LOG_ERROR, "db", db, err);
        goto out;
    }
    if (demo) {
        int rc = demo_seed(sv.store, secret, err, sizeof err);
        if (rc) {
            log_error("demo data: %s (%s)", err, err_str(rc));
            goto out;
        }
        log_info("demo data present");
    }

    struct app_config ac = {
        .db_path = db,
        .signing_secret = secret,
        .base_url = opt_str(&o, "base-url"),
        .auth_off = auth_off,
        .admin_key = getenv("GENUPROOF_ADMIN_KEY"),
        .email_pepper = getenv("GENUPROOF_EMAIL_PEPPER"),
        .rate_limit = opt_int(&o, "rate-limit"),
        .trust_proxy = opt_str(&o, "trust-proxy"),
        .geoip_path = opt_str(&o, "geoip"),
        .allow_private_webhooks = opt_flag(&o, "allow-private-webhooks"),
    };
    if (ac.admin_key && !*ac.admin_key)
        ac.admin_key = NULL;
    sv.app = app_new(&ac, sv.store, err, sizeof err);
    if (!sv.app) {
        log_error("%s", err);
        status = SERVE_EXIT_USAGE;
        goto out;
    }
    if (app_admin_key_file(sv.app))
        log_kv(LOG_WARN, "file", app_admin_key_file(sv.app),
               "generated the admin key; it is in this file (mode 0600) and shown nowhere else");
    if (auth_off)
        log_warn("authentication is OFF (--auth none): every caller has admin rights");

    sv.loop = ev_default_loop(EVFLAG_AUTO);
    if (!sv.loop) {
        log_error("cannot create the event loop");
        goto out;
    }
    app_set_loop(sv.app, sv.loop);
    struct http_handler h;
    app_http_handler(sv.app, &h);
    struct http_server_config hc = {
        .listen = opt_str(&o, "listen"),
        .max_body = (size_t)opt_int(&o, "max-body"),
        .cors_origin = opt_str(&o, "cors-origin"),
        .stream_buffer_max = (size_t)opt_int(&o, "sse-buffer"),
    };
    sv.srv = http_server_new(sv.loop, &hc, &h, err, sizeof err);
    if (!sv.srv) {
        log_kv(LOG_ERROR, "listen", hc.listen, err);
        goto out;
    }
    app_set_server(sv.app, sv.srv);
    {
        struct sse_hub_config sc = {
            .store = sv.store,
            .loop = sv.loop,
            .metrics = app_metrics(sv.app),
            .max_per_brand = (size_t)opt_int(&o, "sse-max-streams"),
            .buffer_max = hc.stream_buffer_max,
        };
        sv.sse = sse_hub_new(&sc, err, sizeof err);
        if (!sv.sse) {
            log_error("%s", err);
            goto out;
        }
        app_set_sse_hub(sv.app, sv.sse);
        app_add_commit_listener(sv.app, sse_hub_commit_cb, sv.sse);
    }
    if (opt_flag(&o, "no-detector")) {
        log_warn(
            "the threat detector is off (--no-detector): alerts wait for a server that runs it");
    } else {
        struct detect_driver_config dc = {
            .batch_size = (size_t)opt_int(&o, "detector-batch"),
            .batch_window_s = (double)opt_int(&o, "detector-window"),
        };
        sv.detector = detect_driver_new(sv.app, &dc, err, sizeof err);
        if (!sv.detector) {
            log_error("%s", err);
            goto out;
        }
    }
    {
        struct webhook_dispatch_config wc = {
            .allow_private = opt_flag(&o, "allow-private-webhooks"),
        };
        if (wc.allow_private)
            log_warn(
                "webhooks may target private and loopback addresses (--allow-private-webhooks)");
        sv.webhooks = webhook_dispatch_new(sv.store, sv.loop, &wc, err, sizeof err);
        if (!sv.webhooks) {
            log_error("%s", err);
            goto out;
        }
        app_add_commit_listener(sv.app, webhook_dispatch_on_commit, sv.webhooks);
    }
    {
        enum classify_provider prov = CLASSIFY_PROVIDER_RULES;
        classify_provider_parse(opt_str(&o, "classifier"), &prov);
        if (prov != CLASSIFY_PROVIDER_RULES) {
            struct classify_driver_config cc = {
                .model = {.provider = prov,
                          .url = opt_str(&o, "classifier-url"),
                          .model = opt_str(&o, "classifier-model"),
                          .timeout_s = (double)opt_int(&o, "classifier-timeout")},
            };
            sv.classifier = classify_driver_new(sv.store, sv.loop, &cc, err, sizeof err);
            if (!sv.classifier) {
                log_error("%s", err);
                status = SERVE_EXIT_USAGE;
                goto out;
            }
            app_add_commit_listener(sv.app, classify_driver_on_commit, sv.classifier);
            log_info("model classifier: %s (rules stand on any model error)",
                     classify_provider_name(prov));
        }
    }
    int port = http_server_port(sv.srv);
    const char *port_file = opt_str(&o, "port-file");
    if (port_file && write_port_file(port_file, port)) {
        log_kv(LOG_ERROR, "file", port_file, "cannot write the port file");
        goto out;
    }
    {
        char extra[160];
        snprintf(extra, sizeof extra, "\"port\":%d,\"auth\":\"%s\",\"rateLimit\":%ld", port,
                 auth_off ? "none" : "on", ac.rate_limit);
        log_msg(LOG_INFO, extra, "listening");
    }

    sv.sigterm.data = sv.sigint.data = sv.maint.data = &sv;
    ev_signal_init(&sv.sigterm, signal_cb, SIGTERM);
    ev_signal_init(&sv.sigint, signal_cb, SIGINT);
    ev_signal_start(sv.loop, &sv.sigterm);
    ev_signal_start(sv.loop, &sv.sigint);
    ev_timer_init(&sv.maint, maint_cb, scaled(SERVE_MAINT_SECONDS), scaled(SERVE_MAINT_SECONDS));
    ev_timer_start(sv.loop, &sv.maint);

    ev_run(sv.loop, 0);

    /* anything a handler wrote after the last commit (none normally) */
    if (store_batch_active(sv.store) && app_commit(sv.app))
        goto out;
    log_info("stopped");
    status = SERVE_EXIT_OK;
out:
    if (sv.loop) {
        /* already shutting down: a repeated SIGTERM must not kill the
         * cleanup.  Stopping a watcher restores the default action (and
         * unblocks a signal libev held back), so ignore them around it. */
        signal(SIGTERM, SIG_IGN);
        signal(SIGINT, SIG_IGN);
        ev_signal_stop(sv.loop, &sv.sigterm);
        ev_signal_stop(sv.loop, &sv.sigint);
        signal(SIGTERM, SIG_IGN);
        signal(SIGINT, SIG_IGN);
        ev_timer_stop(sv.loop, &sv.maint);
        if (sv.draining) {
            ev_ref(sv.loop);
            ev_timer_stop(sv.loop, &sv.drain_deadline);
        }
    }
    detect_driver_free(sv.detector);
    if (sv.srv)
        http_server_free(sv.srv); /* reports every open stream to the hub */
    if (sv.sse) {
        app_remove_commit_listener(sv.app, sse_hub_commit_cb, sv.sse);
        app_set_sse_hub(sv.app, NULL);
        sse_hub_free(sv.sse);
    }
    if (sv.classifier) {
        app_remove_commit_listener(sv.app, classify_driver_on_commit, sv.classifier);
        classify_driver_free(sv.classifier);
    }
    if (sv.webhooks) {
        app_remove_commit_listener(sv.app, webhook_dispatch_on_commit, sv.webhooks);
        webhook_dispatch_free(sv.webhooks);
    }
    app_free(sv.app);
    if (sv.store)
        store_close(sv.store);
    if (secret) {
        memset(secret, 0, strlen(secret));
        free(secret);
    }
    return status;
}
