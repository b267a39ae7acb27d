/*
 * sim.h - the traffic simulator behind `genuproof simulate` and `genuproof
 * demo`: consumer scans and scheduled attacks played against a server's
 * HTTP API, asynchronously, on the caller's libev loop (libcurl multi
 * through http/client.h), so it can share the loop with an in-process
 * server and the dashboard.
 *
 * Consumer scans: GET /api/products/verify?code=... at `rate` per second,
 * from the catalog's retail and distribution cities.  The simulator sits
 * behind the server as a trusted proxy would (it connects from loopback,
 * the default trusted proxy) and tells the client's address and place in
 * X-Forwarded-For, X-Country and X-City.  Each product has one home city,
 * device and address, and is scanned at most SIM_SCANS_PER_PRODUCT times,
 * so that honest traffic stays under every detector threshold; the pool
 * is refilled with POST /api/products/batch as products retire.
 *
 * Attacks (sim_plan.h) each register a fresh product first, so that
 * every attack raises its own alerts.  Tampering needs a hook that alters
 * the stored product behind the API: only an in-process caller can give
 * one.  The chain gap uses an integration ingest key (created on first
 * use) to report a warehouse receipt dated four days back, then appends
 * an inspection now: a 96-hour hole in the provenance chain.
 *
 * Needs a bearer key that may act for the brand (admin or the brand's
 * key).  Single-threaded like the loop.
 */
#ifndef GP_SIM_SIM_H
#define GP_SIM_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "sim/sim_plan.h"

struct ev_loop;
struct sim;

#define SIM_DEFAULT_RATE      2.0 /* consumer scans per second */
#define SIM_MAX_RATE          1000.0
#define SIM_SCANS_PER_PRODUCT 8 /* honest scans before a product retires */
#define SIM_POOL_MAX          256
#define SIM_BATCH             25 /* products per refill */
#define SIM_BURST_SCANS       22 /* burst attack: > velocity's 20 */
#define SIM_GAP_HOURS         96
#define SIM_ALERT_POLL_S      1.0 /* alert watcher period (real seconds) */

struct sim_attack_report {
    enum sim_attack kind;
    bool ok;
    const char *product_id; /* may be "" when registration failed */
    const char *detail;     /* one line: what was done, or why it failed */
};

struct sim_stats {
    uint64_t scans, scan_errors, scans_skipped;
    uint64_t attacks, attacks_failed;
    uint64_t products_created;
    uint64_t alerts_seen;
};

struct sim_config {
    const char *url;      /* server base URL (required) */
    const char *api_key;  /* bearer key for the brand calls (required) */
    const char *brand_id; /* NULL: the first brand of /api/brands/list */
    double rate;          /* scans per second; <= 0 -> SIM_DEFAULT_RATE */
    double duration_s;    /* real seconds; 0 = until sim_stop() */
    uint64_t seed;        /* 0: random */
    unsigned attacks;     /* mask of sim_plan.h; 0 -> all the API can do */
    double calm_s;        /* pace after the first round; 0 -> SIM_PLAN_CALM_S */
    bool scale_schedule;  /* scale schedule offsets by GENUPROOF_TIME_SCALE */
    /* In-process only: alters the stored product so that it no longer
     * verifies.  Returns 0 or a negative ERR_*.  NULL: no tamper attack. */
    int (*tamper)(void *arg, const char *product_id);
    void *tamper_arg;
    /* Reports (any may be NULL); cb_arg is passed to each. */
    void (*on_ready)(void *arg, const char *brand_id); /* pool loaded, traffic starts */
    void (*on_attack)(void *arg, const struct sim_attack_report *r);
    void (*on_alert)(void *arg, const cJSON *alert); /* polls /api/threats when set */
    void (*on_done)(void *arg, int err);             /* duration reached (0) or start-up failed */
    void *cb_arg;
};

/*
 * Creates a simulator on loop (borrowed); strings of cfg are copied.
 * Nothing is sent before sim_start().  On error returns NULL with a
 * message in err (bad URL or rate, libcurl unavailable).
 */
struct sim *sim_new(struct ev_loop *loop, const struct sim_config *cfg, char *err, size_t errlen);

/* Starts: resolves the brand, loads (or creates) products, then plays
 * traffic and the schedule.  Failures arrive through on_done. */
void sim_start(struct sim *s);

/* Stops every timer; requests in flight finish but start nothing new. */
void sim_stop(struct sim *s);

void sim_get_stats(const struct sim *s, struct sim_stats *out);
/* The brand played (empty until resolved). */
const char *sim_brand(const struct sim *s);

/* Aborts what is in flight and frees everything.  NULL accepted.  Not
 * from inside one of the simulator's callbacks. */
void sim_free(struct sim *s);

#endif
