/*
 * detect_driver.h - runs the stream detector (detect/consumer.h) inside
 * `genuproof serve`, on the server's event loop.
 *
 * The detector is woken by every store commit (an app commit listener),
 * by its own backoff timer and by a periodic poke (which also picks up
 * records written by another process).  It runs from a lowest-priority
 * ev_prepare watcher, i.e. once per loop iteration right after the HTTP
 * server's prepare watcher has committed the iteration's group-commit
 * batch: it never runs while that batch is open.  One wake-up runs
 * batches until the detector is idle or a time budget is spent (so HTTP
 * stays responsive) and comes back in the next iteration while work
 * remains.  At start it catches up from its durable checkpoint.
 *
 * Single-threaded like the loop; one driver per app.
 */
#ifndef GP_API_DETECT_DRIVER_H
#define GP_API_DETECT_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#include "detect/consumer.h"
#include "detect/process.h"

struct app;
struct detect_driver;

/* Defaults of struct detect_driver_config. */
#define DETECT_DRIVER_POKE_S    1.0 /* periodic wake-up (scaled) */
#define DETECT_DRIVER_BUDGET_MS 5.0 /* detector time per loop iteration */

struct detect_driver_config {
    size_t batch_size;     /* records per batch; 0 -> DETECTOR_BATCH_DEFAULT */
    double batch_window_s; /* wait for a full batch up to this long; 0 = none */
    double poke_s;         /* 0 -> DETECT_DRIVER_POKE_S (scaled) */
    double budget_ms;      /* 0 -> DETECT_DRIVER_BUDGET_MS */
    bool opslog_changes;   /* det_proc_cfg.opslog_changes (`--ops-log changes`) */
};

/*
 * Creates the detector over the app's store and starts it on the app's
 * loop (app_set_loop must have been called): registers the commit
 * listener and the /metrics source, sets app_detector(), and schedules
 * the catch-up.  On error returns NULL with a message in err.
 */
struct detect_driver *detect_driver_new(struct app *a, const struct detect_driver_config *cfg,
                                        char *err, size_t errlen);
/* Stops the watchers, unregisters from the app and frees the detector. */
void detect_driver_free(struct detect_driver *d);

/*
 * Called by the server's group commit (app_commit) with its batch open and
 * about to commit: when records are waiting, runs the detector's batches
 * (up to the time budget) as sub-batches of that batch (store.h), so one
 * commit carries the requests' writes and the detector's effects with its
 * checkpoint.  A failed detector batch is undone alone; if the group
 * commit then fails, the detector's checkpoint goes back with it and the
 * records are processed again.  The loop's own detector run is skipped in
 * an iteration that joined (the next one catches up if the server goes
 * quiet).  With carried set the batch was just opened after a commit,
 * for the records that commit added (their commit callback comes only
 * once they are synced): the detector looks even if it was not told of
 * new records yet.  Returns the records looked at (0: nothing written).
 */
size_t detect_driver_join(struct detect_driver *d, bool carried);

/* The detector (stats, tests). */
struct detector *detect_driver_detector(struct detect_driver *d);

/* The processing configuration the detector uses (for DLQ replays):
 * store, reader, velocity thresholds, and now_ms = the current time. */
void detect_driver_proc_cfg(const struct detect_driver *d, struct det_proc_cfg *out);

/* Counts records replayed from the DLQ (for /metrics). */
void detect_driver_note_replay(struct detect_driver *d, size_t replayed, size_t failed);

/* Wakes the detector now (as a commit would). */
void detect_driver_poke(struct detect_driver *d);

#endif
