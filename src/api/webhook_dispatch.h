/*
 * webhook_dispatch.h - the webhook delivery engine: turns change records
 * into signed HTTP deliveries (API.md §9.27 Reimpl, D06).
 *
 * Which records become which deliveries is detect/webhook_fanout.h's
 * business; this engine creates and sends them in one of two modes.
 *
 * Stream mode (SQLite, one dispatcher in worker 0): it tails the store's
 * change stream from its own durable checkpoint (reader "webhooks") and
 * writes each record's deliveries (DELIVERY#<webhookId> items) in ONE
 * transaction with the new checkpoint, so a crash never loses or
 * duplicates a delivery record.  At start, and whenever the in-memory
 * queue overflowed, it reloads pending deliveries from the sparse GSI1
 * partition DELIVERY_PENDING.
 *
 * Claim mode (DynamoDB, a dispatcher in every API process; or forced by
 * the config): the Streams detector creates the deliveries
 * (detect/ddb_jobs.h), and no stream is read here.  On a 1 s (scaled)
 * poll, and after attempts finish, the dispatcher queries
 * DELIVERY_PENDING and takes each due, free delivery with a claim
 * (api/job_claim.h) lasting two attempt timeouts plus a margin.  Its
 * outcome writes hold only while the claim is its own: a retry writes
 * the attempt and gives the claim back (the entry leaves memory until a
 * later poll finds it due), a final outcome takes the delivery out of
 * the index.  A lost claim (the holder stalled past claimUntil and
 * another process took over) drops the entry without an error.  A
 * process that dies leaves its claims to lapse; any other one then takes
 * them over.
 *
 * Either way deliveries are at-least-once: one interrupted in flight is
 * sent again, with the same X-GenuProof-Delivery id so receivers can drop
 * the repeat.  Sending goes through http/client.h (libcurl multi on the
 * loop).
 *
 * An attempt is a POST of the stored payload with Content-Type,
 * X-GenuProof-Timestamp (unix seconds), X-GenuProof-Signature
 * (sha256=HMAC(secret, "<ts>.<body>")), X-GenuProof-Event and
 * X-GenuProof-Delivery, a 5 s timeout (scaled), and unless private
 * targets are allowed an address check before every connect.  2xx is
 * delivered (the webhook's lastTriggered and deliveryCount are updated);
 * anything else is retried after 1, 2, 4, ... s (scaled), at most 6
 * attempts, then "failed".  Every attempt updates the delivery item
 * (attempts, lastStatus, lastError, nextAttemptAt, history).
 *
 * Bounds: at most max_inflight requests and queue_max deliveries in
 * memory; the stream is not read while the queue lacks room for one
 * record's deliveries, and a poll takes no more than there is room for.
 * Store writes never join another module's open batch: the engine runs
 * from a highest-priority zero-delay timer (before the loop iteration's
 * request handlers open the server's batch) and waits an iteration when
 * a batch is open anyway.
 *
 * Single-threaded, on the server's loop.
 */
#ifndef GP_API_WEBHOOK_DISPATCH_H
#define GP_API_WEBHOOK_DISPATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct store;
struct ev_loop;
struct webhook_dispatch;

#define WEBHOOK_DISPATCH_READER    "webhooks"
#define WEBHOOK_DISPATCH_TIMEOUT_S 5.0
#define WEBHOOK_DISPATCH_ATTEMPTS  6
#define WEBHOOK_DISPATCH_BACKOFF_S 1.0
#define WEBHOOK_DISPATCH_INFLIGHT  64
#define WEBHOOK_DISPATCH_QUEUE     1024
#define WEBHOOK_DISPATCH_BATCH     100

/* Zero fields take their defaults.  Durations are in unscaled seconds:
 * the engine applies GENUPROOF_TIME_SCALE. */
struct webhook_dispatch_config {
    bool allow_private;    /* --allow-private-webhooks */
    double timeout_s;      /* per attempt; 0 -> 5 */
    unsigned max_attempts; /* 0 -> 6 */
    double backoff_s;      /* first retry delay, doubling; 0 -> 1 */
    size_t max_inflight;   /* 0 -> 64 */
    size_t queue_max;      /* deliveries in memory; 0 -> 1024 (at least 64) */
    size_t batch;          /* stream records per read; 0 -> 100 */
    const char *reader;    /* checkpoint name; NULL -> "webhooks" */
    /* Claim mode even on a store with a change stream (tests); stores
     * without one (DynamoDB) always use it. */
    bool claim;
};

struct webhook_dispatch_stats {
    uint64_t created;    /* delivery items written (stream mode) */
    uint64_t claimed;    /* deliveries taken (claim mode) */
    uint64_t lost;       /* claims lost to another process (claim mode) */
    uint64_t delivered;  /* final: 2xx */
    uint64_t failed;     /* final: attempts exhausted or webhook gone */
    uint64_t attempts;   /* HTTP attempts finished */
    uint64_t resumed;    /* pending deliveries loaded from the store (stream mode) */
    uint64_t spilled;    /* waiting retries moved out of a full queue (stream mode) */
    uint64_t skipped;    /* events dropped (payload over the cap) */
    uint64_t errors;     /* store errors (each followed by a backoff) */
    uint64_t queued;     /* deliveries in memory now */
    uint64_t inflight;   /* requests in flight now */
    uint64_t checkpoint; /* last stream sequence read (stream mode) */
};

/*
 * A dispatcher over s (borrowed) on loop (borrowed); both must outlive
 * it.  It starts working from the loop (stream mode: resume, then the
 * stream; claim mode: a poll): call webhook_dispatch_on_commit() from a
 * commit listener so new records are picked up at once (a 1 s scaled
 * poll catches anything missed).  NULL with a message in err when the
 * checkpoint cannot be read (stream mode) or the HTTP client cannot be
 * created.
 */
struct webhook_dispatch *webhook_dispatch_new(struct store *s, struct ev_loop *loop,
                                              const struct webhook_dispatch_config *cfg, char *err,
                                              size_t errlen);
/* Stops everything (requests in flight are abandoned and stay pending in
 * the store; in claim mode their claims are given back when possible),
 * persists the checkpoint when possible, frees.  NULL ok. */
void webhook_dispatch_free(struct webhook_dispatch *d);
/* An app_commit_listener (arg = the dispatcher): only schedules work
 * (nothing in claim mode, where this process's commits create no
 * deliveries). */
void webhook_dispatch_on_commit(void *arg, uint64_t last_seq);
/* Claim mode: look at the pending deliveries now rather than at the next
 * poll (this process's Streams detector just wrote some).  NULL ok;
 * nothing in stream mode. */
void webhook_dispatch_poke(struct webhook_dispatch *d);
void webhook_dispatch_get_stats(const struct webhook_dispatch *d,
                                struct webhook_dispatch_stats *out);

#endif
