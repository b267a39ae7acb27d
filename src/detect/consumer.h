/*
 * consumer.h - the stream detector: reads the store's change stream from
 * its durable checkpoint in batches and, per batch, writes its alerts,
 * dedup items, window states, STATS threatCount increments, ops-log
 * entries, dead letters and the new checkpoint in one store batch (one
 * SQLite transaction).  A crash at any point followed by a restart
 * therefore produces every alert and every counter increment exactly
 * once.
 *
 * The detector is driven from outside: `genuproof serve` calls
 * detector_run_once() from its event loop after each commit of its own
 * batch and on a timer, until it reports nothing processed.  It never
 * runs while another store batch is open on the same store (it needs its
 * own) and never sleeps: retry delays are reported through
 * detector_retry_in_ms() for the caller's timer.
 *
 * A batch that fails is bisected (the first half is retried at once, and
 * so on) until the failing record is alone; a record that still fails
 * after max_attempts tries (with backoff scaled by GENUPROOF_TIME_SCALE)
 * is parked in the DLQ (detect/dlq.h) and the checkpoint moves past it,
 * so the stream never stalls.  Transient errors (throttling, an
 * unavailable backend, timeouts) only back off: they park nothing.
 *
 * Per-product window states (DETSTATE) are kept in a bounded cache
 * across batches (detect/state.h), so a product seen again is not read
 * back.  Every batch still writes its states in its transaction; the
 * cache takes them only after the commit, and is emptied when a batch
 * fails, when the checkpoint is not the one this detector committed last,
 * when another connection committed to the store since the last batch
 * (store_data_version: other processes on the same file, e.g. the other
 * workers of `serve --workers`), and when a DLQ replay in this process
 * wrote states.  A restarted detector starts with an empty cache.
 *
 * Not thread-safe; one detector per store.
 */
#ifndef GP_DETECT_CONSUMER_H
#define GP_DETECT_CONSUMER_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

struct det_state;

/* Defaults and bounds of struct detector_config. */
#define DETECTOR_BATCH_DEFAULT    100
#define DETECTOR_BATCH_MAX        1000
#define DETECTOR_READER_DEFAULT   "detector"
#define DETECTOR_READER_MAX       63
#define DETECTOR_ATTEMPTS_DEFAULT 3
#define DETECTOR_RETRY_BASE_S     0.2
#define DETECTOR_RETRY_MAX_S      30.0

/* Zero fields take their defaults. */
struct detector_config {
    size_t batch_size;         /* records per batch; 0 -> 100, at most DETECTOR_BATCH_MAX */
    double batch_window_s;     /* wait up to this long for a full batch; 0 = no delay */
    const char *reader;        /* checkpoint name; NULL -> "detector" */
    double velocity_min_total; /* scan_velocity when total > this; 0 -> 20 */
    double velocity_min_rate;  /* ... and scans per day > this; 0 -> 5 */
    unsigned max_attempts;     /* tries of a lone failing record before parking; 0 -> 3 */
    double retry_base_s;       /* first backoff (scaled); 0 -> 0.2 s, doubling per failure */
    double retry_max_s;        /* backoff cap (scaled); 0 -> 30 s */
    /* Wall clock for alert write times and DLQ times (ms since the
     * epoch); NULL -> time_now_ms().  Tests pin it. */
    int64_t (*clock_ms)(void *arg);
    void *clock_arg;
    /* Window-state cache: most products kept (0 -> DET_STATE_CACHE_DEFAULT);
     * no_state_cache turns it off (every batch reads the states). */
    size_t state_cache_max;
    bool no_state_cache;
    /* Deferred state writes (with the cache only): while the detector is
     * catching up (full batches), window states stay in the cache and
     * are written all at once every state_flush_batches batches (0 ->
     * DETECTOR_STATE_FLUSH_BATCHES), when half the cache holds deferred
     * writes, and by the batch that drains the stream.  no_defer_states
     * writes them in every batch. */
    unsigned state_flush_batches;
    bool no_defer_states;
    /* det_proc_cfg.opslog_changes (`--ops-log changes`) */
    bool opslog_changes;
    /* Records per batch while the detector is at least
     * DETECTOR_BULK_LAG_BATCHES batches behind the stream's head (0 ->
     * DETECTOR_BATCH_MAX; batch_size or less: no catch-up batches).
     * Latency matters little that far behind, throughput does. */
    size_t catchup_batch;
};

#define DETECTOR_STATE_FLUSH_BATCHES 1000
/* Batches behind the stream's head from which the detector reads
 * catch-up batches and asks the store for bulk mode (store_set_bulk). */
#define DETECTOR_BULK_LAG_BATCHES 10
/* Suffix of the states mark: the checkpoint name under which the
 * detector records how far the stored window states go (consumer.c). */
#define DETECTOR_STATES_MARK_SUFFIX ".states"

/* Counters since detector_new (for /metrics). */
struct detector_stats {
    uint64_t batches;           /* committed batches */
    uint64_t records;           /* stream records consumed (committed), ignored ones included */
    uint64_t scans, events;     /* records checked */
    uint64_t ignored;           /* records skipped (not a scan/event insert) */
    uint64_t alerts_created;    /* new alerts (each also +1 threatCount) */
    uint64_t alerts_updated;    /* hits folded into an existing alert */
    uint64_t opslog;            /* ops-log entries written */
    uint64_t dlq_parked;        /* records parked in the DLQ */
    uint64_t errors;            /* failed batch attempts */
    uint64_t bisections;        /* times a failing batch was split */
    uint64_t checkpoint;        /* last committed checkpoint */
    uint64_t last_batch_us;     /* duration of the last committed batch */
    uint64_t state_cache_drops; /* times the state cache was emptied (not counting empty ones) */
    uint64_t state_cache_size;  /* states cached now */
    uint64_t state_flushes;     /* batches that wrote every deferred state */
    uint64_t states_deferred;   /* state writes deferred by the cache */
    uint64_t warmups;           /* restarts that rebuilt deferred states */
    uint64_t warmup_records;    /* records re-read to rebuild them */
};

struct detector;

/* A new detector on s (borrowed; it must outlive the detector).  NULL
 * when cfg is invalid (reader name too long or empty). */
struct detector *detector_new(struct store *s, const struct detector_config *cfg);
void detector_free(struct detector *d);

/*
 * Processes at most one batch.  On success returns 0 and sets *processed
 * to the number of stream records consumed (committed or parked); 0
 * means idle (nothing new, waiting for a batch window, or backing off:
 * see detector_retry_in_ms).  On error returns a negative ERR_* with
 * *processed = 0: ERR_CONFLICT when a store batch is already open, else
 * the store's error, after which a backoff is scheduled.
 */
int detector_run_once(struct detector *d, size_t *processed);

/* Milliseconds until the detector wants to be called again (a backoff or
 * a batch window), 0 when it can run now. */
int64_t detector_retry_in_ms(const struct detector *d);

void detector_get_stats(const struct detector *d, struct detector_stats *out);

/* The window state of product_id as the detector last left it: from its
 * cache when that is current (deferred writes included), else false (the
 * stored DETSTATE item is then current for that product). */
bool detector_state_peek(const struct detector *d, const char *product_id, struct det_state *out);

/* Inside the caller's store batch (or as its own writes outside one):
 * writes every deferred window state and the states mark, so that the
 * stored items are current; the cache is re-validated by the next batch.
 * For writers of window states outside the detector (a DLQ replay). */
int detector_write_deferred(struct detector *d);

/*
 * Test hook: called after a batch's writes and before its commit with
 * the batch's first and last stream sequence; a negative return fails the
 * batch with that error (as if the commit had failed).  NULL removes it.
 */
typedef int (*detector_fault_fn)(void *arg, uint64_t first_seq, uint64_t last_seq);
void detector_set_fault_hook(struct detector *d, detector_fault_fn fn, void *arg);

#endif
