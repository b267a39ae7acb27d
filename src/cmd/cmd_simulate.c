/*
 * cmd_simulate.c - `genuproof simulate`: plays consumer scans and the
 * scheduled attacks (sim/sim.h) against any server through its HTTP API
 * (every attack but tampering, which needs the store itself).  Prints
 * one line per attack, and at the end (duration reached, SIGINT or
 * SIGTERM) one line of totals.
 *
 * Exit status: 0 after a run, 1 when the simulator could not start
 * (server unreachable, key refused, no brand), 2 for usage errors.
 */
#include "cmd/cmd_simulate.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <ev.h>

#include "cmd/options.h"
#include "sim/sim.h"
#include "util/err.h"

static const struct opt_def simulate_options[] = {
    {"url", OPT_STRING, "URL", "http://127.0.0.1:8080", 0, 0, NULL, "GENUPROOF_URL", 0,
     "server base URL"},
    {"api-key", OPT_STRING, "KEY", NULL, 0, 0, NULL, "GENUPROOF_API_KEY", 0,
     "admin key, or the brand's key (required)"},
    {"rate", OPT_INT, "N", "2", 1, 1000, NULL, NULL, 0, "consumer scans per second"},
    {"duration", OPT_INT, "S", "0", 0, 86400 * 365, NULL, NULL, 0,
     "stop after S seconds (0: until interrupted)"},
    {"brand", OPT_STRING, "ID", NULL, 0, 0, NULL, NULL, 0,
     "brand to play (default: the first brand the key can list)"},
    {"seed", OPT_INT, "N", "0", 0, 2147483647, NULL, NULL, 0,
     "random seed (0: random); same seed, same cities and devices"},
    {"calm", OPT_INT, "S", "45", 1, 86400, NULL, NULL, 0,
     "seconds between attacks after the first round"},
    {NULL, 0, NULL, NULL, 0, 0, NULL, NULL, 0, NULL},
};

struct simrun {
    struct ev_loop *loop;
    struct sim *sim;
    int status;
    ev_signal sigint, sigterm;
};

static void on_ready(void *arg, const char *brand)
{
    (void)arg;
    printf("simulate: playing brand %s\n", brand);
    fflush(stdout);
}

static void on_attack(void *arg, const struct sim_attack_report *r)
{
    (void)arg;
    printf("attack %-6s %s product=%s expect=%s: %s\n", sim_attack_name(r->kind),
           r->ok ? "sent  " : "FAILED", r->product_id[0] ? r->product_id : "-",
           sim_attack_alerts(r->kind), r->detail);
    fflush(stdout);
}

static void on_done(void *arg, int err)
{
    struct simrun *sr = arg;
    if (err) {
        fprintf(stderr, "genuproof simulate: cannot start: %s (is the server up, the key right?)\n",
                err_str(err));
        sr->status = 1;
    }
    ev_break(sr->loop, EVBREAK_ALL);
}

static void signal_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
    (void)revents;
    (void)w;
    ev_break(loop, EVBREAK_ALL);
}

int cmd_simulate(int argc, char **argv)
{
    struct opt_values o;
    struct simrun sr;
    char err[512];
    bool help = false;

    memset(&sr, 0, sizeof sr);
    if (opt_parse(simulate_options, argc, argv, &o, &help, err, sizeof err)) {
        fprintf(stderr, "genuproof simulate: %s\n", err);
        return 2;
    }
    if (help) {
        opt_usage(stdout, "simulate",
                  "Consumer scans and scheduled attacks against a server (traffic simulator).",
                  simulate_options);
        return 0;
    }
    if (!opt_str(&o, "api-key")) {
        fprintf(stderr, "genuproof simulate: --api-key (or GENUPROOF_API_KEY) is required\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    sr.loop = ev_default_loop(EVFLAG_AUTO);
    if (!sr.loop) {
        fprintf(stderr, "genuproof simulate: cannot create the event loop\n");
        return 1;
    }
    struct sim_config sc = {
        .url = opt_str(&o, "url"),
        .api_key = opt_str(&o, "api-key"),
        .brand_id = opt_str(&o, "brand"),
        .rate = (double)opt_int(&o, "rate"),
        .duration_s = (double)opt_int(&o, "duration"),
        .seed = (uint64_t)opt_int(&o, "seed"),
        .calm_s = (double)opt_int(&o, "calm"),
        .on_ready = on_ready,
        .on_attack = on_attack,
        .on_done = on_done,
        .cb_arg = &sr,
    };
    sr.sim = sim_new(sr.loop, &sc, err, sizeof err);
    if (!sr.sim) {
        fprintf(stderr, "genuproof simulate: %s\n", err);
        return 2;
    }
    ev_signal_init(&sr.sigint, signal_cb, SIGINT);
    ev_signal_init(&sr.sigterm, signal_cb, SIGTERM);
    ev_signal_start(sr.loop, &sr.sigint);
    ev_signal_start(sr.loop, &sr.sigterm);
    sim_start(sr.sim);
    ev_run(sr.loop, 0);

    struct sim_stats st;
    sim_get_stats(sr.sim, &st);
    printf("simulate: %llu scans (%llu errors, %llu skipped), %llu attacks (%llu failed), "
           "%llu products created\n",
           (unsigned long long)st.scans, (unsigned long long)st.scan_errors,
           (unsigned long long)st.scans_skipped, (unsigned long long)st.attacks,
           (unsigned long long)st.attacks_failed, (unsigned long long)st.products_created);
    fflush(stdout);
    signal(SIGTERM, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    ev_signal_stop(sr.loop, &sr.sigint);
    ev_signal_stop(sr.loop, &sr.sigterm);
    sim_free(sr.sim);
    return sr.status;
}
