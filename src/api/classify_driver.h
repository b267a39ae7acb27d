/*
 * classify_driver.h - runs the optional model classifier
 * (detect/classify_model.h) over the detector's alerts, on the server's
 * event loop.
 *
 * The detector classifies every alert by rules inside its batch
 * transaction, so alerts never wait for a model.  On a store with a
 * change stream (SQLite; one driver, in worker 0) this driver tails the
 * stream from its own durable checkpoint (reader "classifier")
 * and, for every alert the detector inserted or updated with a rule
 * classification (detect/classify_job.h: source "detector",
 * aiAnalysis.model "rules"), asks the model.  A usable answer updates the alert's severity and
 * aiAnalysis (model name, latency) and adds an ops-log entry for the model's classification, in one
 * store batch with the checkpoint; on any failure the rule classification stands and only the
 * checkpoint moves.  The updated alert is an ordinary MODIFY, so SSE clients and webhooks see the
 * re-classification.
 *
 * Calls run concurrently (bounded); the checkpoint only passes a record
 * once every earlier call has finished, so after a crash the unfinished
 * ones are asked again (model calls are at least once; the writes are
 * keyed by the alert and the stream sequence, so a repeat overwrites
 * instead of duplicating).  One alert has at most one call in flight:
 * updates arriving meanwhile are folded into it.
 *
 * Jobs mode (DynamoDB, where only the Streams detector reads the stream;
 * one driver in every API process): the detector writes one job item per
 * alert into the CLASSIFY_PENDING partition of GSI1 (classify_job.h).
 * The driver polls it (1 s, scaled), claims free jobs (api/job_claim.h)
 * for twice the model timeout plus 5 s, asks the model and then writes,
 * in one transaction, the alert update (if the alert still exists), the
 * ops-log entry (named after the job's change record) and the job's
 * deletion on the condition that the claim is still its own.  On a model
 * error it only deletes the job (the rules stand).  If the detector
 * re-put the job meanwhile (a newer state of the alert, claimToken ""
 * again), the condition fails, nothing is written and the job is
 * classified again.  A process that dies leaves its claims to lapse;
 * the jobs are then taken again (model calls are at least once).
 */
#ifndef GP_API_CLASSIFY_DRIVER_H
#define GP_API_CLASSIFY_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#include "detect/classify_model.h"

struct store;
struct ev_loop;
struct classify_driver;

#define CLASSIFY_DRIVER_READER   "classifier"
#define CLASSIFY_DRIVER_INFLIGHT 4
#define CLASSIFY_DRIVER_BATCH    50

struct classify_driver_config {
    struct classify_model_config model; /* provider gemini|openai, url, key, model, timeout */
    size_t max_inflight;                /* model calls at once; 0 -> 4 */
    size_t batch;                       /* stream records per read; 0 -> 50 */
    const char *reader;                 /* checkpoint name; NULL -> "classifier" */
    /* Take jobs from the pending partition even on a store with a
     * change stream (tests); always so on stores without one. */
    bool jobs;
};

struct classify_driver_stats {
    uint64_t requests;     /* model calls started */
    uint64_t reclassified; /* alerts updated with a model classification */
    uint64_t fallbacks;    /* calls that failed: the rules stand */
    uint64_t folded;       /* alert updates folded into a call in flight */
    uint64_t errors;       /* store errors, malformed jobs */
    uint64_t checkpoint;   /* last stream sequence read (stream mode) */
    uint64_t claimed;      /* jobs claimed (jobs mode) */
    uint64_t superseded;   /* results not written: the job was re-put or taken over */
};

/* A driver over s and loop (both borrowed), in jobs mode when cfg->jobs
 * or the store has no change stream.  NULL with a message in err when the
 * model configuration is refused (classify_model_new) or the checkpoint
 * cannot be read. */
struct classify_driver *classify_driver_new(struct store *s, struct ev_loop *loop,
                                            const struct classify_driver_config *cfg, char *err,
                                            size_t errlen);
/* Abandons calls in flight (asked again after the next start, or, in
 * jobs mode, once their claims lapse). */
void classify_driver_free(struct classify_driver *d);
/* An app_commit_listener (arg = the driver): only schedules work. */
void classify_driver_on_commit(void *arg, uint64_t last_seq);
/* Jobs mode: look at the pending jobs now rather than at the next poll
 * (this process's Streams detector just wrote some).  NULL ok; nothing
 * in stream mode. */
void classify_driver_poke(struct classify_driver *d);
void classify_driver_get_stats(const struct classify_driver *d, struct classify_driver_stats *out);

#endif
