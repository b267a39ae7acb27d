/*
 * cmd_demo.c - `genuproof demo`: the one-command demo.  Runs the backend
 * (cmd/backend.h) in-process on 127.0.0.1 with the demo data set, on a
 * temporary database (removed at exit) or --db, starts the traffic
 * simulator (sim/sim.h, tampering included: the hook alters the product
 * in the store directly) and opens the dashboard (tui/tui.h) on the same
 * libev loop.  --headless runs backend and simulator only and prints
 * every new alert as one line.  SIGINT, SIGTERM and SIGHUP (terminal
 * gone) stop everything cleanly and remove the temporary database.
 *
 * While the dashboard owns the terminal, log lines go to a file beside
 * the database (genuproof-demo.log) instead of stderr.
 */
#include "cmd/cmd_demo.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ev.h>

#include "cmd/backend.h"
#include "cmd/cmd_serve.h"
#include "cmd/options.h"
#include "core/ids.h"
#include "core/keys.h"
#include "sim/sim.h"
#include "store/store.h"
#include "tui/tui.h"
#include "util/err.h"
#include "util/log.h"

/* The dashboard is linked when its module is built; until then (or in a
 * build without it) demo falls back to headless output. */
#pragma weak tui_run
#pragma weak tui_config_defaults

#define DEMO_PATH_MAX 4096

static const struct opt_def demo_options[] = {
    {"db", OPT_STRING, "PATH", NULL, 0, 0, NULL, NULL, 0,
     "SQLite database to use and keep (default: a temporary one, deleted at exit)"},
    {"rate", OPT_INT, "N", "2", 1, 1000, NULL, NULL, 0, "simulated consumer scans per second"},
    {"kiosk", OPT_FLAG, NULL, NULL, 0, 0, NULL, NULL, 0, "dashboard in kiosk mode"},
    {"theme", OPT_STRING, "NAME", NULL, 0, 0, NULL, NULL, 0, "dashboard theme"},
    {"port", OPT_INT, "N", "0", 0, 65535, NULL, NULL, 0,
     "port of the in-process server on 127.0.0.1 (0: any free port)"},
    {"headless", OPT_FLAG, NULL, NULL, 0, 0, NULL, NULL, 0,
     "no dashboard: print alerts as they come, one line each"},
    {"duration", OPT_INT, "S", "0", 0, 86400 * 365, NULL, NULL, 0,
     "headless: stop after S seconds (0: until interrupted)"},
    {"seed", OPT_INT, "N", "0", 0, 2147483647, NULL, NULL, 0, "simulator random seed"},
    {NULL, 0, NULL, NULL, 0, 0, NULL, NULL, 0, NULL},
};

struct demo {
    struct ev_loop *loop;
    struct backend *be;
    struct sim *sim;
    ev_signal sigint, sigterm, sighup;
    bool headless;
    char tmpdir[DEMO_PATH_MAX];
};

/* Alters the stored product (its sku is hashed) behind the API's back:
 * from now on it no longer verifies (hash_tampering). */
static int demo_tamper(void *arg, const char *product_id)
{
    struct demo *d = arg;
    struct key pk;
    struct store_action act = {.kind = STORE_ACT_SET, .attr = "sku"};
    struct store_cond cond = {.kind = STORE_COND_EXISTS};
    int rc;

    if (!key_product_pk(&pk, product_id))
        return ERR_INVALID;
    cJSON *v = cJSON_CreateString("ALTERED-IN-STORE");
    if (!v)
        return ERR_NOMEM;
    act.value = v;
    rc = store_update(backend_store(d->be), pk.s, KEY_SK_META, &act, 1, &cond, NULL);
    cJSON_Delete(v);
    return rc;
}

static void on_ready(void *arg, const char *brand)
{
    struct demo *d = arg;
    if (d->headless) {
        printf("demo: simulator playing brand %s\n", brand);
        fflush(stdout);
    }
}

static void on_attack(void *arg, const struct sim_attack_report *r)
{
    struct demo *d = arg;
    if (d->headless) {
        printf("attack %-6s %s %s\n", sim_attack_name(r->kind), r->ok ? "sent" : "FAILED",
               r->detail);
        fflush(stdout);
    } else if (!r->ok) {
        log_warn("simulator: %s attack failed: %s", sim_attack_name(r->kind), r->detail);
    }
}

static const char *jstr(const cJSON *o, const char *name, const char *dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(v) ? v->valuestring : dflt;
}

static void on_alert(void *arg, const cJSON *a)
{
    (void)arg;
    printf("alert %s %-8s %-22s product=%s %s\n", jstr(a, "timestamp", "-"),
           jstr(a, "severity", "-"), jstr(a, "type", "-"), jstr(a, "productId", "-"),
           jstr(a, "details", ""));
    fflush(stdout);
}

static void on_done(void *arg, int err)
{
    struct demo *d = arg;
    if (err)
        log_error("simulator stopped: %s", err_str(err));
    else if (d->headless)
        ev_break(d->loop, EVBREAK_ALL);
}

static void signal_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
    (void)w;
    (void)revents;
    ev_break(loop, EVBREAK_ALL);
}

/* Removes the temporary directory and what the demo left in it. */
static void remove_tmpdir(const char *dir)
{
    DIR *dh = opendir(dir);
    struct dirent *e;
    char path[DEMO_PATH_MAX + 256];

    if (dh) {
        while ((e = readdir(dh))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
        closedir(dh);
    }
    rmdir(dir);
}

/* Sends stderr to path (the dashboard owns the terminal). */
static void log_to_file(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd >= 0) {
        dup2(fd, STDERR_FILENO);
        close(fd);
    }
}

int cmd_demo(int argc, char **argv)
{
    struct opt_values o, so;
    struct demo d;
    char err[512], db[DEMO_PATH_MAX + 32], listen[64], key[80], logpath[DEMO_PATH_MAX + 64];
    bool help = false;
    int status = SERVE_EXIT_FAIL;
    const char *admin_key = NULL;

    memset(&d, 0, sizeof d);
    if (opt_parse(demo_options, argc, argv, &o, &help, err, sizeof err)) {
        fprintf(stderr, "genuproof demo: %s\n", err);
        return SERVE_EXIT_USAGE;
    }
    if (help) {
        opt_usage(stdout, "demo",
                  "Backend, demo data, traffic simulator and dashboard in one process.",
                  demo_options);
        return SERVE_EXIT_OK;
    }
    d.headless = opt_flag(&o, "headless") || !tui_run;
    if (!opt_flag(&o, "headless") && !tui_run)
        fprintf(stderr, "genuproof demo: this build has no dashboard; running headless\n");
    signal(SIGPIPE, SIG_IGN);

    if (opt_str(&o, "db")) {
        snprintf(db, sizeof db, "%s", opt_str(&o, "db"));
        snprintf(logpath, sizeof logpath, "%s.demo.log", db);
    } else {
        const char *tmp = getenv("TMPDIR");
        snprintf(d.tmpdir, sizeof d.tmpdir, "%s/genuproof-demo.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(d.tmpdir)) {
            fprintf(stderr, "genuproof demo: cannot create a temporary directory\n");
            d.tmpdir[0] = '\0';
            return SERVE_EXIT_FAIL;
        }
        snprintf(db, sizeof db, "%s/demo.db", d.tmpdir);
        snprintf(logpath, sizeof logpath, "%s/genuproof-demo.log", d.tmpdir);
    }
    admin_key = getenv("GENUPROOF_ADMIN_KEY");
    if ((!admin_key || !*admin_key) && !opt_str(&o, "db")) {
        /* a fresh database: a fresh key, known to this process only */
        char hex[33];
        ids_random_hex(16, hex);
        snprintf(key, sizeof key, "gpdemo_%s", hex);
        admin_key = key;
    } else if (admin_key && !*admin_key) {
        admin_key = NULL; /* --db: the key kept in <db>.admin-key */
    }

    snprintf(listen, sizeof listen, "127.0.0.1:%ld", opt_int(&o, "port"));
    char *sargv[] = {"serve", "--db", db, "--listen", listen, "--demo-data", NULL};
    if (opt_parse(serve_options, 6, sargv, &so, &help, err, sizeof err)) {
        fprintf(stderr, "genuproof demo: %s\n", err);
        status = SERVE_EXIT_USAGE;
        goto out;
    }
    d.loop = ev_default_loop(EVFLAG_AUTO);
    if (!d.loop) {
        fprintf(stderr, "genuproof demo: cannot create the event loop\n");
        goto out;
    }
    if (!d.headless && isatty(STDOUT_FILENO))
        log_to_file(logpath);
    struct backend_config bc = {.opts = &so, .admin_key = admin_key, .quiet = true};
    d.be = backend_start(d.loop, &bc, &status);
    if (!d.be)
        goto out;
    status = SERVE_EXIT_FAIL;
    if (!backend_admin_key(d.be)) {
        log_error("no admin key for the simulator (set GENUPROOF_ADMIN_KEY)");
        goto out;
    }

    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", backend_port(d.be));
    struct sim_config sc = {
        .url = url,
        .api_key = backend_admin_key(d.be),
        .rate = (double)opt_int(&o, "rate"),
        .duration_s = d.headless ? (double)opt_int(&o, "duration") : 0,
        .seed = (uint64_t)opt_int(&o, "seed"),
        .attacks = (1u << SIM_ATK_COUNT) - 1,
        .tamper = demo_tamper,
        .tamper_arg = &d,
        .on_ready = on_ready,
        .on_attack = on_attack,
        .on_alert = d.headless ? on_alert : NULL,
        .on_done = on_done,
        .cb_arg = &d,
    };
    d.sim = sim_new(d.loop, &sc, err, sizeof err);
    if (!d.sim) {
        log_error("simulator: %s", err);
        goto out;
    }
    ev_signal_init(&d.sigint, signal_cb, SIGINT);
    ev_signal_init(&d.sigterm, signal_cb, SIGTERM);
    ev_signal_init(&d.sighup, signal_cb, SIGHUP); /* terminal gone: still clean up */
    ev_signal_start(d.loop, &d.sigint);
    ev_signal_start(d.loop, &d.sigterm);
    ev_signal_start(d.loop, &d.sighup);
    if (d.headless) {
        printf("demo: server on %s (headless)\n", url);
        fflush(stdout);
    }
    sim_start(d.sim);

    if (d.headless) {
        ev_run(d.loop, 0);
        status = SERVE_EXIT_OK;
    } else {
        struct tui_config tc;
        char note[96];
        memset(&tc, 0, sizeof tc);
        tui_config_defaults(&tc);
        tc.url = url;
        tc.api_key = backend_admin_key(d.be);
        tc.all_brands = true;
        tc.kiosk = opt_flag(&o, "kiosk");
        tc.theme = opt_str(&o, "theme");
        snprintf(note, sizeof note, "demo: simulator at %ld scans/s", opt_int(&o, "rate"));
        tc.demo_note = note;
        status = tui_run(d.loop, &tc);
    }
    if (d.headless) {
        struct sim_stats st;
        sim_get_stats(d.sim, &st);
        printf("demo: %llu scans, %llu attacks (%llu failed), %llu alerts\n",
               (unsigned long long)st.scans, (unsigned long long)st.attacks,
               (unsigned long long)st.attacks_failed, (unsigned long long)st.alerts_seen);
        fflush(stdout);
    }
out:
    if (d.loop) {
        signal(SIGTERM, SIG_IGN);
        signal(SIGINT, SIG_IGN);
        signal(SIGHUP, SIG_IGN);
        ev_signal_stop(d.loop, &d.sigint);
        ev_signal_stop(d.loop, &d.sigterm);
        ev_signal_stop(d.loop, &d.sighup);
    }
    sim_free(d.sim);
    if (backend_stop(d.be))
        status = SERVE_EXIT_FAIL;
    if (d.tmpdir[0])
        remove_tmpdir(d.tmpdir);
    memset(key, 0, sizeof key);
    return status;
}
