/*
 * ddb_detector.h - the stream detector on DynamoDB Streams: the same
 * checks and effects as the embedded detector (detect/process.h), with
 * shards split between workers by leases (detect/lease.h).
 *
 * One round (ddb_detector_step):
 *   1. every half lease period: lists the stream's shards (all
 *      DescribeStream pages), learns which are finished, beats its
 *      worker heartbeat, counts the live workers, gives a lease back when
 *      it holds more than its fair share, and tries to lease unfinished
 *      shards whose parent is finished (lineage) up to that share;
 *   2. renews its leases every third of a period (a lease that cannot be
 *      renewed is dropped: its shard is no longer read);
 *   3. for each leased shard: a GetRecords batch from its iterator
 *      (AFTER_SEQUENCE_NUMBER the checkpoint, or TRIM_HORIZON; a new one
 *      after an ExpiredIteratorException), processed and committed with
 *      ddbd_apply().
 *
 * Exactly-once: a batch's effects are split into TransactWriteItems
 * groups (detect/wset.h): idempotent ops-log entries first, then one
 * atomic unit per product whose window state records the stream position
 * it includes and is written on the condition that the stored position
 * is still the one read, then the shard checkpoint, its dead letters and
 * a check that the lease is still ours.  After a crash between two
 * groups the batch is read again from the checkpoint; products whose
 * unit was committed skip the records their state already covers, so
 * nothing is counted twice and nothing is lost.  A worker that lost its
 * lease cannot commit a checkpoint, and its state writes lose the
 * position race to the new owner.
 *
 * Checkpoints: item CHECKPOINT#<reader>/<shardId> with "seq" (the last
 * sequence number processed) and "finished" (read to its end; children
 * may start).
 *
 * Not thread-safe; blocking HTTP calls, each bounded by the client's
 * timeout and retry budget.
 */
#ifndef GP_DETECT_DDB_DETECTOR_H
#define GP_DETECT_DDB_DETECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/ddb_streams.h"
#include "detect/lease.h"
#include "detect/process.h"
#include "store/ddb_http.h"
#include "store/store.h"

#define DDBD_READER_DEFAULT "streams"
/* Idle GetRecords period of a shard: 4 calls/s per shard, under the 5/s
 * DynamoDB Streams allows, and a quarter of the scan->alert budget. */
#define DDBD_POLL_DEFAULT_S 0.25

struct ev_loop;

struct ddb_detector_config {
    struct store *s;       /* the table (writes, leases, checkpoints); borrowed */
    struct ddb_http *h;    /* Streams and DescribeTable calls; borrowed.  NULL: the
                            * detector makes (and owns) one from endpoint/region */
    const char *endpoint;  /* when h is NULL: as ddb_http_config.endpoint */
    const char *region;    /* when h is NULL: as ddb_http_config.region */
    const char *table;     /* table whose stream is read */
    const char *worker_id; /* lease owner; NULL -> "<host>-<pid>" */
    const char *reader;    /* checkpoint name; NULL -> DDBD_READER_DEFAULT */
    double lease_s;        /* lease period (scaled); 0 -> LEASE_PERIOD_DEFAULT_S */
    size_t batch_size;     /* records per GetRecords; 0 -> 100, at most DDBS_LIMIT_MAX */
    double poll_s;         /* idle poll period (scaled); 0 -> DDBD_POLL_DEFAULT_S */
    double velocity_min_total, velocity_min_rate; /* 0 -> the defaults */
    /* Fold the hot scan counters (product META and brand STATS
     * scanCount) per batch, exactly once with the checkpoint (see
     * det_proc_cfg.fold_scan_counts).  The DynamoDB wiring sets it from
     * store_counters_by_detector(): the request path then does not
     * count scans. */
    bool fold_scan_counts;
    /* det_proc_cfg.opslog_changes (`--ops-log changes`) */
    bool opslog_changes;
    /* This process runs a model classifier: classification jobs are
     * written without looking for the presence marker (classify_job.h). */
    bool classifier_local;
    /* Optional: called after a batch committed work items for the API
     * processes (webhook deliveries, classification jobs), so that the
     * takers of the same process look at once instead of at their next
     * poll (serve's in-process detector).  Other processes still find
     * the items by polling. */
    void (*on_work)(void *arg);
    void *on_work_arg;
    /* Wall clock (lease expiry, alert times); NULL -> time_now_ms(). */
    int64_t (*clock_ms)(void *arg);
    void *clock_arg;
};

struct ddb_detector_stats {
    uint64_t batches, records, scans, events, replayed, parked;
    uint64_t alerts_created, alerts_updated, opslog;
    uint64_t work_items;   /* deliveries and classification jobs written */
    uint64_t transactions; /* TransactWriteItems committed */
    uint64_t errors;
    uint64_t leases_taken, leases_lost;
    uint64_t shards_owned, shards_finished;
    uint64_t workers_live; /* at the last refresh, this one included */
};

struct ddb_detector;

/* A new detector (nothing is called yet).  NULL with a message in err
 * when the configuration is invalid. */
struct ddb_detector *ddb_detector_new(const struct ddb_detector_config *cfg, char *err,
                                      size_t errlen);
/* Stops it (if started), releases its leases and frees it. */
void ddb_detector_free(struct ddb_detector *d);

/* One round (see above).  On success returns 0 with the records
 * processed in *processed (0: idle).  On error returns a negative ERR_*
 * (the round is retried later; nothing is half-applied). */
int ddb_detector_step(struct ddb_detector *d, size_t *processed);

/* Runs rounds from an ev_timer on loop: at once while records come,
 * every poll period when idle.  Returns 0. */
int ddb_detector_start(struct ddb_detector *d, struct ev_loop *loop);
void ddb_detector_stop(struct ddb_detector *d);

void ddb_detector_get_stats(const struct ddb_detector *d, struct ddb_detector_stats *out);

/* ---------- the commit of one batch (exposed for tests) ---------- */

/* Called before group g (0-based) of ngroups commits; a negative return
 * stops the batch there with that error (a simulated crash). */
typedef int (*ddbd_fault_fn)(void *arg, size_t g, size_t ngroups);

struct ddbd_target {
    const char *reader;
    const char *shard;
    const struct lease *lease; /* checked in the last group; NULL: none */
    const char *prev_seq;      /* checkpoint to keep when recs is empty */
    bool finished;             /* the shard is read to its end */
    bool careful;              /* read again after a failed try (ddbd_jobs_collect) */
    ddbd_fault_fn fault;
    void *fault_arg;
};

/*
 * Processes recs[0..n) (in stream order) over pc->s and commits their
 * effects and the checkpoint (the last record's sequence number, or
 * prev_seq) in DynamoDB-sized transactions.  On success returns 0 and
 * fills *counts (may be NULL) and *ntx (may be NULL) with the
 * transactions committed.  On error returns a negative ERR_*: ERR_TOOBIG
 * when one product's effects do not fit a transaction (retry with fewer
 * records), ERR_CONDITION when the lease was lost or another worker
 * moved a product's state (re-read from the checkpoint), else the
 * store's error.  Groups committed before the error stay: a retry from
 * the checkpoint completes the batch without counting anything twice.
 */
int ddbd_apply(const struct det_proc_cfg *pc, const struct ddbd_target *t,
               const struct ddbs_record *recs, size_t n, struct det_proc_counts *counts,
               size_t *ntx);

/* Parks one record that keeps failing: its dead letter (detect/dlq.h),
 * the checkpoint moved to it and the lease check, in one transaction. */
int ddbd_park(const struct det_proc_cfg *pc, const struct ddbd_target *t,
              const struct ddbs_record *rec, const char *why, unsigned attempts);

/* Reads a shard's checkpoint: *found false when there is none; seq gets
 * the sequence number ("" when none). */
int ddbd_checkpoint_get(struct store *s, const char *reader, const char *shard,
                        char seq[DDBS_SEQ_MAX + 1], bool *finished, bool *found);

#endif
