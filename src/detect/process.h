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
 * caches, [D51]), and everything it writes reaches the store only in
 * det_proc_flush(), so a failed batch leaves no trace.
 *
 * Per scan (INSERT of PRODUCT#<id>/SCAN#...): the product's window state
 * is updated, then geographic, burst, claim, tampering and velocity
 * checks run; every check that fires raises or updates its alert and
 * writes one ops-log entry (one classification per fired check).  Per
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
};

/* What a batch did (valid after det_proc_flush). */
struct det_proc_counts {
    size_t scans, events, ignored, parked;
    size_t alerts_created, alerts_updated, opslog;
    size_t brands; /* STATS items updated */
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

#endif
