/*
 * sqlite_sync.h - the WAL's fsync on a thread of its own, for the SQLite
 * store's deferred sync (store_options.deferred_sync).
 *
 * Why.  With synchronous=FULL every COMMIT writes its WAL frames and then
 * waits for fdatasync() of the WAL: under a steady load the server's loop
 * spent a fifth of its time blocked there (and the system-call time of
 * the sync itself ran on the loop too), handling no request meanwhile.
 *
 * How.  The store's connection runs with synchronous=NORMAL, so a COMMIT
 * only writes its frames (NORMAL syncs the WAL header when the WAL starts
 * over, and checkpoints, never a commit).  The store then hands the
 * commit's ticket (a counter, one per commit) to this thread, which
 * fdatasyncs the WAL file through a
 * descriptor of its own and publishes the highest ticket it covered: one
 * fdatasync covers every frame written before it started, so while one
 * runs, the commits that follow are gathered into the next (group commit
 * at the disk).  The thread writes to an eventfd after each round; the
 * owner's loop watches it and only then answers the requests of those
 * commits (store_sync_poll).  A 2xx still means the write is on disk.
 *
 * Checkpoints must not copy frames the disk may not hold yet, nor let the
 * WAL restart over frames whose pages are not synced in the database file:
 * the checkpoint thread's connection runs at synchronous=FULL, the
 * store's own at NORMAL, and both sync the WAL before a checkpoint and the
 * database file after it (store_sqlite.c).
 *
 * Errors.  A failed fdatasync is sticky (after an fsync error the kernel
 * may have dropped the dirty pages): every ticket not yet covered fails
 * with it, and the store refuses further commits.
 *
 * Durable hook.  An owner may have the thread run a function after each
 * successful fdatasync, before the covered tickets are published (so that
 * whoever sees sqlite_sync_done() >= T knows the hook for T has returned).
 * The server uses it to wake its writer thread, which writes the answers
 * the moment they are durable instead of waiting for a busy loop to get
 * round to them (http.h, http_server_set_early_writes).
 *
 * Thread-safety: request/done/wait are called by the store's thread; the
 * sync thread touches only its own descriptors (and whatever the hook
 * touches, which the hook's owner guards).
 */
#ifndef GP_STORE_SQLITE_SYNC_H
#define GP_STORE_SQLITE_SYNC_H

#include <stdint.h>
#include <stddef.h>

struct sqlite_sync;

/* Starts the thread for the WAL at wal_path (the database path + "-wal").
 * NULL (with err) when the eventfd or the thread cannot be had. */
struct sqlite_sync *sqlite_sync_start(const char *wal_path, char *err, size_t errlen);
/* Everything written to the WAL so far belongs to ticket: sync it. */
void sqlite_sync_request(struct sqlite_sync *y, uint64_t ticket);
/* The highest ticket synced, and the sticky error (0, or ERR_IO). */
uint64_t sqlite_sync_done(struct sqlite_sync *y, int *err);
/* An eventfd, readable after the thread made progress or failed. */
int sqlite_sync_fd(const struct sqlite_sync *y);
/* Empties the eventfd (before reading sqlite_sync_done). */
void sqlite_sync_clear_fd(struct sqlite_sync *y);
/* Blocks until ticket is synced or the thread failed; returns 0 or the
 * error. */
int sqlite_sync_wait(struct sqlite_sync *y, uint64_t ticket);
/* Sets (fn non-NULL) or clears the durable hook: fn(arg, ticket) runs on
 * the sync thread after each successful sync, with the highest ticket it
 * covered.  Returns once no call of the previous hook is running. */
void sqlite_sync_set_hook(struct sqlite_sync *y, void (*fn)(void *arg, uint64_t ticket), void *arg);
/* Stops and joins the thread (after syncing what was requested). */
void sqlite_sync_stop(struct sqlite_sync *y);

struct sqlite_sync_stats {
    uint64_t syncs;    /* fdatasync calls */
    uint64_t requests; /* tickets handed over */
};
void sqlite_sync_get_stats(struct sqlite_sync *y, struct sqlite_sync_stats *out);

#ifdef UNITTEST
/* Test builds only: a delay before each fdatasync (microseconds), and a
 * forced failure of the next syncs (errno value, 0 to stop). */
void sqlite_sync_test_delay(struct sqlite_sync *y, unsigned usec);
void sqlite_sync_test_fail(struct sqlite_sync *y, int err);
#endif

#endif
