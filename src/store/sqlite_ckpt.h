/*
 * sqlite_ckpt.h - WAL checkpoints of the SQLite store on a thread of their
 * own, so that the event loop never waits for one.
 *
 * Why.  With SQLite's automatic checkpoint the connection that commits
 * past 1,000 WAL frames copies those pages into the database file and
 * fsyncs it, inside its COMMIT: under a steady write load the server's
 * loop stopped for 5-15 ms every ~150 ms (and up to 250 ms now and then),
 * which is most of its p99 request latency (docs/benchmarks.md).
 *
 * How.  The store's connection keeps a WAL hook that only counts frames
 * and, past the threshold, wakes this thread.  The thread has its own
 * connection to the file and runs a PASSIVE checkpoint, which never blocks
 * a writer.  A checkpoint on another connection cannot make the WAL start
 * over while writes keep coming (that needs every frame copied at the
 * moment the next write begins), so when the WAL holds restart_frames the
 * store's own connection runs one PASSIVE checkpoint inline, right after
 * its commit: it copies only what the thread has not copied yet (the few
 * frames since its last run), and the next write rewinds the WAL.  (A
 * RESTART checkpoint from the thread did the same but made writers sleep
 * through SQLite's coarse busy-handler steps: stalls of up to 300 ms.)
 *
 * Thread-safety: sqlite_ckpt_kick() is called by the store's thread (from
 * the WAL hook); start/stop by the store's owner.  The thread touches only
 * its own connection.
 */
#ifndef GP_STORE_SQLITE_CKPT_H
#define GP_STORE_SQLITE_CKPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sqlite_ckpt;

/* WAL frames from which the thread checkpoints, and from which it also
 * restarts the WAL (defaults for 0). */
#define SQLITE_CKPT_FRAMES_DEFAULT  1000
#define SQLITE_CKPT_RESTART_DEFAULT 4000

/* Starts the thread on the database at path.  NULL (with err) when the
 * connection or the thread cannot be had; the caller then keeps SQLite's
 * automatic checkpoint. */
struct sqlite_ckpt *sqlite_ckpt_start(const char *path, int frames, int restart_frames, char *err,
                                      size_t errlen);
/* The WAL holds `frames` frames after a commit: wakes the thread when that
 * is past its threshold.  Cheap (no system call below the threshold).
 * Returns true when the WAL holds restart_frames or more: the caller then
 * runs a PASSIVE checkpoint on its own connection (see above). */
bool sqlite_ckpt_kick(struct sqlite_ckpt *c, int frames);
/* Changes the threshold (store_set_bulk). */
void sqlite_ckpt_set_frames(struct sqlite_ckpt *c, int frames);
/* Stops and joins the thread, closes its connection. */
void sqlite_ckpt_stop(struct sqlite_ckpt *c);

struct sqlite_ckpt_stats {
    uint64_t passive, busy; /* the thread's checkpoints run; refused as busy */
    uint64_t restarts;      /* inline checkpoints asked of the store's connection */
    uint64_t frames_copied; /* frames checkpointed by PASSIVE runs */
};
void sqlite_ckpt_get_stats(struct sqlite_ckpt *c, struct sqlite_ckpt_stats *out);

#endif
