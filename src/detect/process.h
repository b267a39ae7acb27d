/*
 * process.h - one detector batch: turns change-stream records into the
 * batch's write set (alerts, dedup items, window states, STATS increments,
 * ops-log entries, dead letters) and writes it.
 *
 * The consumer (consumer.c) opens a store batch, feeds every record of
 * the batch in stream order to det_proc_add(), calls det_proc_flush()
 * (which also moves the reader's checkpoint) and commits.  Everything a
 * batch reads (product META/CLAIM/DETSTATE, dedup items, alerts) is read
 * inside that store batch and cached only for its lifetime (no stale
 * caches, [D51]); the one exception is the detector's own DETSTATE, which
 * may come from the consumer's write-through cache (cfg.cache, see
 * consumer.h).  Everything it writes reaches the store only in
 * det_proc_flush(), so a failed batch leaves no trace.
 *
 * Per scan (INSERT of PRODUCT#<id>/SCAN#...): the product's window state
 * is updated, then geographic, burst, claim, tampering and velocity
 * checks run; every check that fires raises or updates its alert, and a
 * scan on which any fired gets one ops-log entry (its flags, the most
 * severe hit's classification).  Per
 * provenance event (INSERT of PRODUCT#<id>/EVENT#...): the gap and break
 * checks run against the previous event.  Every other record is ignored.
 * A record that cannot be processed (malformed image, unknown product)
 * is parked in the DLQ within the same batch.
 */
#ifndef GP_DETECT_PROCESS_H
#define GP_DETECT_PROCESS_H

#include <stddef.h>
#include <stdint.h>

#include "detect/chk_velocity.h"
#include "store/store.h"

struct det_proc;

struct det_proc_cfg {
    struct store *s;
    const char *reader; /* checkpoint name */
    struct chk_velocity_cfg velocity;
    int64_t now_ms; /* wall clock of the batch: alert write time, DLQ time */
    /* Collect mode only (the DynamoDB Streams detector, where the request
     * path does not count scans: store_counters_by_detector): every scan
     * applied adds 1 to its product's META scanCount and its brand's
     * STATS scanCount, inside the product's atomic unit, so a replay
     * skips them with the rest of the record's effects.  Ignored by
     * det_proc_flush(). */
    bool fold_scan_counts;
    /* Optional (NULL: none), det_proc_flush() mode only: window states
     * are taken from this cache when present instead of being read, and
     * det_proc_cache_commit() puts the batch's states into it.  The
     * caller guarantees that the cache matches the stored items (see
     * detect/state.h and consumer.c). */
    struct det_state_cache *cache;
    /* Optional (NULL: none), with cache: products' brand, creation time
     * and claim across batches (detect/facts.h); det_proc_add() forgets a
     * claim when it sees a write of the product's CLAIM item. */
    struct det_facts *facts;
    /* With cache: det_proc_flush() does not write the batch's window
     * states; det_proc_cache_commit() stages them in the cache as
     * deferred writes (det_state_cache_stage), which the consumer writes
     * later, all at once, together with its states mark (consumer.c). */
    bool defer_states;
    /* Warm-up after a restart: records only update the window states (no
     * checks, alerts, ops-log or DLQ writes); the caller never flushes. */
    bool state_only;
    /* `--ops-log changes`: a classified scan gets its ops-log entry only
     * when it raised an alert or its verdict (fired checks, severity,
     * attack vector, confidence) differs from the product's previous
     * scan's; false (`every`, API.md §6.5): every classified scan. */
    bool opslog_changes;
    /* Streams detector (ddb_jobs.h): write classification jobs for the
     * batch's alerts, because some process runs a model. */
    bool classify_jobs;
};

/* What a batch did (valid after det_proc_flush). */
struct det_proc_counts {
    size_t scans, events, ignored, parked;
    size_t alerts_created, alerts_updated, opslog;
    size_t brands;   /* STATS items updated */
    size_t replayed; /* records whose effects the product's state already holds (collect mode) */
    size_t work;     /* DynamoDB: work items for the API processes (detect/ddb_jobs.h) */
};

/* A new, empty batch.  cfg is copied (its strings are borrowed). */
struct det_proc *det_proc_new(const struct det_proc_cfg *cfg);
void det_proc_free(struct det_proc *p);

/* True when the detector processes r (an INSERT of a scan or event item
 * in a product partition); everything else is skipped. */
bool det_record_wanted(const struct stream_record *r);

/*
 * Adds one record.  On success returns 0: the record was processed,
 * ignored, or parked in the batch's DLQ writes.  On error (a store read
 * failed) returns a negative ERR_*: the batch must be abandoned.
 */
int det_proc_add(struct det_proc *p, const struct stream_record *r);

/*
 * Writes the batch's write set and sets the reader's checkpoint to
 * last_seq, through the store batch the caller has open.  On error
 * returns a negative ERR_* and the caller must abort the store batch.
 */
int det_proc_flush(struct det_proc *p, uint64_t last_seq);

void det_proc_get_counts(const struct det_proc *p, struct det_proc_counts *out);

/* After the store batch holding det_proc_flush() committed: puts the
 * window state of every product the batch read or wrote into cfg.cache
 * (no-op without one).  Never call it for a batch that did not commit. */
void det_proc_cache_commit(struct det_proc *p);
/* Whether this batch changed the window state of product_id. */
bool det_proc_state_changed(const struct det_proc *p, const char *product_id);

/* How many times a det_proc_flush() without a cache wrote window states
 * in this process (a DLQ replay does): a cache that saw this number
 * change may hold a stale state.  Process-wide, see process.c. */
uint64_t det_proc_uncached_state_writes(void);

/* ---------- collecting mode (the DynamoDB Streams detector) ----------
 *
 * On DynamoDB a batch's effects cannot commit in one transaction, so a
 * crash may leave part of them written.  In this mode every record comes
 * with its stream position and each product's window state item records
 * the position of the last record folded into it (attribute "detPos"); a
 * record the stored state already covers is skipped (a replay), and the
 * state is written on the condition that its detPos is still the one
 * read, together with the product's alerts, dedup items and brand
 * counter increment (one atomic unit, see detect/wset.h); with
 * fold_scan_counts the unit also carries the product's and the brand's
 * scanCount increments for the scans it applied.
 */

struct wset;

/* Digits of the sequence number in a position. */
#define DET_POS_SEQ_DIGITS 40
/* Longest position text (sequence, '@', shard id of up to 128 bytes). */
#define DET_POS_MAX (DET_POS_SEQ_DIGITS + 1 + 128)

/* Formats the position "<seq zero-padded to 40 digits>@<shard>" into out
 * (DET_POS_MAX + 1 bytes).  Returns false when seq is not 1..40 decimal
 * digits or the shard id is empty or longer than 128 bytes. */
bool det_pos_format(char *out, const char *shard, const char *seq);
/* True when the stored position covers pos: the same shard and a
 * sequence number at least as high. */
bool det_pos_covers(const char *stored, const char *pos);

/* det_proc_add() for a record at stream position pos (det_pos_format). */
int det_proc_add_at(struct det_proc *p, const struct stream_record *r, const char *pos);

/*
 * Moves the batch's write set into ws instead of writing it: per product
 * one WSET_ATOMIC unit (window state with its detPos condition, alerts
 * with new ones conditional on their absence, new dedup items, the
 * brand's threatCount increment, with fold_scan_counts the scanCount
 * increments of the product META and the brand STATS), ops-log entries as WSET_FREE writes
 * (their keys are a function of the record: replays rewrite them) and
 * dead letters in WSET_LAST.  The checkpoint is the caller's.  Call at
 * most once, instead of det_proc_flush().  On error returns a negative
 * ERR_* (ws may hold part of the writes: discard it).
 */
int det_proc_collect(struct det_proc *p, struct wset *ws);

#endif
