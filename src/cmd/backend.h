/*
 * backend.h - the whole server side of GenuProof on one libev loop: the
 * store, the application, the HTTP server, the SSE hub, the detector
 * driver, the webhook dispatcher, the optional model classifier and the
 * maintenance timer (TTL purge, stream trim).  `genuproof serve` runs it
 * alone; `genuproof demo` runs it in-process beside the simulator and
 * the dashboard.
 *
 * The backend is configured by the option table of `serve`
 * (cmd/options.h: serve_options), so both commands share one meaning for
 * every flag.  It installs no signal handlers: the command decides what
 * SIGTERM/SIGINT mean and calls backend_drain() or backend_stop().
 *
 * Start-up failures are logged (one clear line each, secrets never) and
 * reported with an exit status in the style of cmd_serve.h.
 */
#ifndef GP_CMD_BACKEND_H
#define GP_CMD_BACKEND_H

#include <stdbool.h>

#include "cmd/options.h"
#include "util/log.h"

struct ev_loop;
struct backend;
struct store;
struct app;

struct backend_config {
    const struct opt_values *opts; /* parsed serve_options (required) */
    const char *admin_key;         /* NULL: env GENUPROOF_ADMIN_KEY, else <db>.admin-key */
    bool quiet;                    /* no access log lines */
    /* serve --workers N: this process is worker `worker` of `workers`
     * (0 when workers <= 1).  With several workers the port is shared
     * with SO_REUSEPORT (listen overrides --listen with the resolved
     * port), only worker 0 seeds demo data and runs the detector, the
     * webhook dispatcher, the classifier and the maintenance timer
     * (woken by the other workers' commits through a stream-head tail),
     * and every worker's SSE hub tails the change stream. */
    int worker, workers;
    const char *listen; /* NULL: --listen */
};

/*
 * Opens the store (seeding the demo data with --demo-data), creates the
 * application, listens, and starts every service on loop (borrowed).
 * On success returns the backend and sets *status to 0.  On error
 * returns NULL and sets *status to SERVE_EXIT_USAGE (configuration:
 * no signing secret, bad admin key, bad classifier set-up) or
 * SERVE_EXIT_FAIL (anything else); the reason has been logged.
 */
struct backend *backend_start(struct ev_loop *loop, const struct backend_config *cfg, int *status);

/* The TCP port the HTTP server listens on. */
int backend_port(const struct backend *b);
/* The admin key the application accepts (the one given, from env, or
 * read/generated into <db>.admin-key); NULL when none is known to this
 * process (e.g. --auth none).  Borrowed; never log it. */
const char *backend_admin_key(const struct backend *b);
struct store *backend_store(struct backend *b);
struct app *backend_app(struct backend *b);

/* Stops the maintenance timer, stops accepting and calls done_cb(arg)
 * once in-flight requests are finished (from the loop). */
void backend_drain(struct backend *b, void (*done_cb)(void *arg), void *arg);

/*
 * Commits anything a handler left in the open batch, then closes every
 * service, the server and the store and frees b (NULL accepted).  Returns
 * 0, or the negative ERR_* of that last commit.
 */
int backend_stop(struct backend *b);

/* Logs msg with one extra member "key":"<val, JSON-escaped>". */
void backend_log_kv(enum log_level lvl, const char *key, const char *val, const char *msg);

#endif
