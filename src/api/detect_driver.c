/*
 * detect_driver.c - the stream detector on the server's event loop (see
 * detect_driver.h).
 *
 * The work is done by an ev_prepare watcher of the lowest priority: libev
 * runs the prepare watchers once per loop iteration just before it
 * waits for events, highest priority first, so this one runs right
 * after the HTTP server's (priority 0), which has committed the
 * iteration's group-commit batch and sent its responses.  The detector
 * therefore never meets an open batch of the server, and an alert
 * raised by a scan commits in the same iteration the scan's response
 * leaves.  (An idle watcher would not do: libev invokes idle watchers
 * only when nothing of a higher or equal priority is pending, which a
 * busy server, or another component's zero-delay timer, never allows.)
 *
 * A wake-up only sets `pending`: the commit listener (every commit,
 * also the detector's own), a one-shot timer for the detector's backoff
 * or batch window, and a periodic poke (1 s, scaled) that also picks up
 * records written by another process.  When the time budget of one
 * iteration runs out with work left, an idle watcher that does nothing
 * is started so that the loop polls without blocking and comes back.
 */
#include "api/detect_driver.h"

#include <ev.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/app.h"
#include "api/metrics.h"
#include "core/timeutil.h"
#include "detect/checks.h"
#include "store/store.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"
#include "util/timescale.h"
#include "util/xalloc.h"

struct detect_driver {
    struct app *app;
    struct ev_loop *loop;
    struct store *s;
    struct detector *det;
    double budget_us;
    bool opslog_changes; /* `--ops-log changes`, also for DLQ replays */
    bool pending;        /* a wake-up not yet served */
    bool joined;         /* ran inside this iteration's group commit */
    ev_prepare prep;
    ev_idle spin;
    ev_timer retry, poke;
    ev_timer grace;         /* wakes the loop when JOIN_GRACE has passed */
    int64_t last_join_us;   /* monotonic time of the last joined run */
    uint64_t joins;         /* runs inside the server's group commit */
    uint64_t carried;       /* of which carried past a commit (detect_driver_join) */
    uint64_t replayed;      /* DLQ records replayed through the API */
    uint64_t replay_failed; /* DLQ replays refused */
    int last_rc;            /* last error reported, to log a change once */
};

/* Keeps the loop from blocking while work is pending (the idle watcher
 * does nothing itself: the prepare watcher does the work). */
static void spin(struct detect_driver *d, bool on)
{
    if (on && !ev_is_active(&d->spin))
        ev_idle_start(d->loop, &d->spin);
    else if (!on && ev_is_active(&d->spin))
        ev_idle_stop(d->loop, &d->spin);
}

static void wake(struct detect_driver *d)
{
    d->pending = true;
}

static void on_commit(void *arg, uint64_t last_seq)
{
    (void)last_seq;
    wake(arg);
}

/* Arms the one-shot timer for the detector's own delay, if any. */
static void arm_retry(struct detect_driver *d)
{
    int64_t ms = detector_retry_in_ms(d->det);
    if (ms <= 0)
        return;
    ev_timer_stop(d->loop, &d->retry);
    ev_timer_set(&d->retry, (double)ms / 1000.0, 0.);
    ev_timer_start(d->loop, &d->retry);
}

/* Runs detector batches until the detector is idle or fails, or the
 * time budget is spent; *more tells the last case (work may remain). */
static int run_batches(struct detect_driver *d, bool *more, size_t *seen)
{
    int64_t t0 = time_mono_us();
    size_t n = 0;
    int rc;

    *more = false;
    for (;;) {
        rc = detector_run_once(d->det, &n);
        if (seen)
            *seen += n;
        if (rc || n == 0)
            return rc;
        if ((double)(time_mono_us() - t0) >= d->budget_us) {
            *more = true;
            return 0;
        }
    }
}

/* Logs a change between failing and running once, and arms the timer for
 * the detector's own delay (backoff or batch window), if any. */
static void note_result(struct detect_driver *d, int rc)
{
    if (rc && rc != d->last_rc)
        log_warn("detector: %s (backing off)", err_str(rc));
    else if (!rc && d->last_rc)
        log_info("detector: running again");
    d->last_rc = rc;
    arm_retry(d);
}

/*
 * How long after a joined run the detector leaves new records to the
 * server's next commit rather than running a batch (and a commit, and a
 * sync) of its own.  A busy server commits again within a millisecond or
 * so; the commits' syncs wake the loop in between (deferred sync), and
 * without the grace each such wake-up ran the detector on its own: a
 * fifth of the loop's time under a verify load.  Idle, a scan's alert
 * waits at most this long more.
 */
#define JOIN_GRACE_S 0.002

static void prep_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
    (void)loop;
    (void)revents;
    struct detect_driver *d = w->data;
    bool more;
    int rc;

    if (d->joined) {
        /* The server is busy and the detector rode in its commit: the
         * records that commit added are the next commit's work.  If no
         * request comes, the next iteration (not blocking) runs here. */
        d->joined = false;
        if (d->pending)
            spin(d, true);
        return;
    }
    if (!d->pending)
        return;
    /* Never inside another batch.  An open batch now is the server's,
     * postponed to gather more requests (app_commit_later): the detector
     * joins it when it commits, within half a millisecond.  No spinning
     * meanwhile (the loop would poll without blocking, taking the CPU the
     * clients need); the poke timer is the safety net. */
    if (store_batch_active(d->s)) {
        spin(d, false);
        return;
    }
    double grace = scaled(JOIN_GRACE_S);
    double since = (double)(time_mono_us() - d->last_join_us) / 1e6;
    if (d->last_join_us && since < grace) {
        /* the server's next commit will likely take them along */
        spin(d, false);
        if (!ev_is_active(&d->grace)) {
            ev_timer_set(&d->grace, grace - since, 0.);
            ev_timer_start(loop, &d->grace);
        }
        return;
    }
    rc = run_batches(d, &more, NULL);
    if (more || (rc == ERR_CONFLICT && store_batch_active(d->s))) {
        spin(d, true); /* more may remain: let HTTP run, then continue */
        return;
    }
    note_result(d, rc);
    d->pending = false;
    spin(d, false);
}

size_t detect_driver_join(struct detect_driver *d, bool carried)
{
    size_t seen = 0;
    bool more;
    int rc;

    if (carried)
        d->pending = true;
    if (!d->pending || ev_is_active(&d->retry) || store_subbatch_enter(d->s))
        return 0;
    rc = run_batches(d, &more, &seen);
    store_subbatch_leave(d->s);
    if (carried && !rc && !more)
        d->pending = false; /* the commit looked at is done with */
    if (carried && seen)
        d->carried++;
    d->joined = true;
    d->joins++;
    d->last_join_us = time_mono_us();
    note_result(d, rc);
    return seen;
}

static void grace_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)w;
    (void)revents; /* the wake-up is the point: prep_cb looks again */
}

static void spin_cb(struct ev_loop *loop, ev_idle *w, int revents)
{
    (void)loop;
    (void)w;
    (void)revents;
}

static void retry_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    wake(w->data);
}

static void poke_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    struct detect_driver *d = w->data;
    if (!ev_is_active(&d->retry))
        wake(d);
}

/* ---------- /metrics ---------- */

static void counter(struct buf *out, const char *name, const char *help, uint64_t v)
{
    buf_printf(out,
               "# HELP genuproof_detector_%s %s\n# TYPE genuproof_detector_%s counter\n"
               "genuproof_detector_%s %llu\n",
               name, help, name, name, (unsigned long long)v);
}

static void gauge(struct buf *out, const char *name, const char *help, double v)
{
    buf_printf(out,
               "# HELP genuproof_detector_%s %s\n# TYPE genuproof_detector_%s gauge\n"
               "genuproof_detector_%s %.17g\n",
               name, help, name, name, v);
}

static int render_metrics(void *arg, struct store *s, struct buf *out)
{
    struct detect_driver *d = arg;
    struct detector_stats st;
    uint64_t head = 0, cp = 0;
    int rc;

    detector_get_stats(d->det, &st);
    counter(out, "batches_total", "Detector batches committed.", st.batches);
    counter(out, "records_total", "Change-stream records consumed (ignored ones included).",
            st.records);
    counter(out, "scans_total", "Scan records checked.", st.scans);
    counter(out, "events_total", "Provenance event records checked.", st.events);
    counter(out, "ignored_total", "Records skipped (not a scan or event insert).", st.ignored);
    counter(out, "alerts_created_total", "Alerts raised.", st.alerts_created);
    counter(out, "alerts_updated_total", "Hits folded into an existing alert.", st.alerts_updated);
    counter(out, "opslog_total", "Ops-log entries written.", st.opslog);
    counter(out, "dlq_parked_total", "Records parked in the dead-letter partition.", st.dlq_parked);
    counter(out, "dlq_replayed_total", "Parked records replayed through the admin API.",
            d->replayed);
    counter(out, "dlq_replay_failed_total", "Replays of parked records that were refused.",
            d->replay_failed);
    counter(out, "errors_total", "Failed batch attempts.", st.errors);
    counter(out, "joined_runs_total",
            "Runs made inside the server's group commit (one commit for both).", d->joins);
    counter(out, "carried_runs_total",
            "Joined runs made while the previous commit synced, riding in the next commit.",
            d->carried);
    counter(out, "bisections_total", "Failing batches split in two.", st.bisections);
    counter(out, "state_flushes_total",
            "Batches that wrote every deferred window state (and the states mark).",
            st.state_flushes);
    counter(out, "states_deferred_total", "Window-state writes deferred while catching up.",
            st.states_deferred);
    counter(out, "state_warmups_total",
            "Times the window states were rebuilt from the states mark (after a restart).",
            st.warmups);
    counter(out, "state_warmup_records_total", "Stream records re-read to rebuild them.",
            st.warmup_records);
    gauge(out, "state_cache_entries", "Window states in the detector's cache.",
          (double)st.state_cache_size);
    gauge(out, "last_batch_seconds", "Duration of the last committed batch.",
          (double)st.last_batch_us / 1e6);
    if (!s)
        return 0;
    rc = store_stream_head(s, &head);
    if (!rc)
        rc = store_checkpoint_get(s, DETECTOR_READER_DEFAULT, &cp);
    if (rc)
        return 0; /* the store probe of /api/ready reports this */
    gauge(out, "stream_head", "Highest committed change-stream sequence.", (double)head);
    gauge(out, "checkpoint", "The detector's durable checkpoint.", (double)cp);
    gauge(out, "lag", "Stream records not yet processed (head - checkpoint).",
          (double)(head > cp ? head - cp : 0));
    return 0;
}

/* ---------- lifecycle ---------- */

struct detect_driver *detect_driver_new(struct app *a, const struct detect_driver_config *cfg,
                                        char *err, size_t errlen)
{
    struct detector_config dc = {0};
    struct detect_driver *d;
    double poke;

    if (!app_loop(a)) {
        snprintf(err, errlen, "detector: no event loop");
        return NULL;
    }
    if (cfg->batch_size > DETECTOR_BATCH_MAX) {
        snprintf(err, errlen, "detector: batch size above %d", DETECTOR_BATCH_MAX);
        return NULL;
    }
    dc.batch_size = cfg->batch_size;
    dc.batch_window_s = cfg->batch_window_s;
    dc.opslog_changes = cfg->opslog_changes;
    d = xcalloc(1, sizeof *d);
    d->app = a;
    d->loop = app_loop(a);
    d->s = app_store(a);
    d->opslog_changes = cfg->opslog_changes;
    d->det = detector_new(d->s, &dc);
    if (!d->det) {
        snprintf(err, errlen, "detector: invalid configuration");
        free(d);
        return NULL;
    }
    d->budget_us = (cfg->budget_ms > 0 ? cfg->budget_ms : DETECT_DRIVER_BUDGET_MS) * 1000.0;
    poke = scaled(cfg->poke_s > 0 ? cfg->poke_s : DETECT_DRIVER_POKE_S);

    /* After the server's prepare watcher (priority 0), which commits the
     * iteration's batch and sends its responses. */
    ev_prepare_init(&d->prep, prep_cb);
    ev_set_priority(&d->prep, EV_MINPRI);
    d->prep.data = d;
    ev_prepare_start(d->loop, &d->prep);
    ev_idle_init(&d->spin, spin_cb);
    ev_set_priority(&d->spin, EV_MINPRI);
    d->spin.data = d;
    ev_timer_init(&d->retry, retry_cb, 0., 0.);
    ev_timer_init(&d->grace, grace_cb, 0., 0.);
    d->grace.data = d;
    d->retry.data = d;
    ev_timer_init(&d->poke, poke_cb, poke, poke);
    d->poke.data = d;
    ev_timer_start(d->loop, &d->poke);
    /* The prepare watcher and the poke alone must not keep the loop
     * running. */
    ev_unref(d->loop);
    ev_unref(d->loop);

    app_add_commit_listener(a, on_commit, d);
    metrics_add_source(app_metrics(a), render_metrics, d);
    app_set_detector(a, d);
    wake(d); /* catch up from the checkpoint */
    return d;
}

void detect_driver_free(struct detect_driver *d)
{
    if (!d)
        return;
    ev_ref(d->loop);
    ev_ref(d->loop);
    ev_prepare_stop(d->loop, &d->prep);
    ev_timer_stop(d->loop, &d->poke);
    ev_timer_stop(d->loop, &d->retry);
    ev_timer_stop(d->loop, &d->grace);
    ev_idle_stop(d->loop, &d->spin);
    app_remove_commit_listener(d->app, on_commit, d);
    metrics_remove_source(app_metrics(d->app), render_metrics, d);
    if (app_detector(d->app) == d)
        app_set_detector(d->app, NULL);
    detector_free(d->det);
    free(d);
}

struct detector *detect_driver_detector(struct detect_driver *d)
{
    return d->det;
}

void detect_driver_proc_cfg(const struct detect_driver *d, struct det_proc_cfg *out)
{
    memset(out, 0, sizeof *out);
    out->s = d->s;
    out->reader = DETECTOR_READER_DEFAULT;
    out->velocity.min_total = DET_VELOCITY_MIN_TOTAL;
    out->velocity.min_rate = DET_VELOCITY_MIN_RATE;
    out->now_ms = time_now_ms();
    out->opslog_changes = d->opslog_changes;
}

void detect_driver_note_replay(struct detect_driver *d, size_t replayed, size_t failed)
{
    d->replayed += replayed;
    d->replay_failed += failed;
}

void detect_driver_poke(struct detect_driver *d)
{
    wake(d);
}
