/*
 * webhook_dispatch.h - the webhook delivery engine: turns change-stream
 * records into signed HTTP deliveries (API.md §9.27 Reimpl, D06).
 *
 * It tails the store's change stream from its own durable checkpoint
 * (reader "webhooks"): a scan insert (SCAN#) becomes verification_scan, a
 * threat alert insert or update (THREAT#/ALERT#, unless resolved) becomes
 * threat_alert, and a product_recall alert insert also product_recall,
 * for every active webhook of the record's brand that subscribes to the
 * event and existed when the record was committed.  Each delivery is a
 * DELIVERY#<webhookId> item written in ONE transaction with the new
 * checkpoint, so a crash never loses or duplicates a delivery record;
 * sending happens after that commit, through http/client.h (libcurl
 * multi on the loop).  Deliveries are at-least-once: one interrupted in
 * flight is sent again after a restart, with the same
 * X-GenuProof-Delivery id so receivers can drop the repeat.
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
 * Pending deliveries sit in a sparse GSI1 partition (DELIVERY_PENDING)
 * that the final update removes them from; at start, and whenever the
 * in-memory queue overflowed, the dispatcher reloads them from there.
 *
 * Bounds: at most max_inflight requests and queue_max deliveries in
 * memory; the stream is not read while the queue lacks room for one
 * record's deliveries.  Store writes never join another module's open
 * batch: the engine runs from a highest-priority zero-delay timer (before
 * the loop iteration's request handlers open the server's batch) and
 * waits an iteration when a batch is open anyway.
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

#define WEBHOOK_DISPATCH_READER      "webhooks"
#define WEBHOOK_DISPATCH_TIMEOUT_S   5.0
#define WEBHOOK_DISPATCH_ATTEMPTS    6
#define WEBHOOK_DISPATCH_BACKOFF_S   1.0
#define WEBHOOK_DISPATCH_INFLIGHT    64
#define WEBHOOK_DISPATCH_QUEUE       1024
#define WEBHOOK_DISPATCH_BATCH       100
#define WEBHOOK_DISPATCH_PAYLOAD_MAX (64 * 1024)

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
};

struct webhook_dispatch_stats {
    uint64_t created;    /* delivery items written */
    uint64_t delivered;  /* final: 2xx */
    uint64_t failed;     /* final: attempts exhausted or webhook gone */
    uint64_t attempts;   /* HTTP attempts finished */
    uint64_t resumed;    /* pending deliveries loaded from the store */
    uint64_t skipped;    /* events dropped (payload over the cap) */
    uint64_t errors;     /* store errors (each followed by a backoff) */
    uint64_t queued;     /* deliveries in memory now */
    uint64_t inflight;   /* requests in flight now */
    uint64_t checkpoint; /* last stream sequence read */
};

/*
 * A dispatcher over s (borrowed) on loop (borrowed); both must outlive
 * it.  It starts working from the loop (resume, then the stream): call
 * webhook_dispatch_on_commit() from a commit listener so new records are
 * picked up at once (a 1 s scaled poll catches anything missed).  NULL
 * with a message in err when the checkpoint cannot be read or the HTTP
 * client cannot be created.
 */
struct webhook_dispatch *webhook_dispatch_new(struct store *s, struct ev_loop *loop,
                                              const struct webhook_dispatch_config *cfg, char *err,
                                              size_t errlen);
/* Stops everything (requests in flight are abandoned and stay pending in
 * the store), persists the checkpoint when possible, frees.  NULL ok. */
void webhook_dispatch_free(struct webhook_dispatch *d);
/* An app_commit_listener (arg = the dispatcher): only schedules work. */
void webhook_dispatch_on_commit(void *arg, uint64_t last_seq);
void webhook_dispatch_get_stats(const struct webhook_dispatch *d,
                                struct webhook_dispatch_stats *out);

#endif
