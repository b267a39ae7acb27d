/*
 * webhook_fanout.h - change records to webhook deliveries, on both stores.
 *
 * A scan insert (SCAN#) becomes verification_scan, a threat alert insert
 * or update (THREAT#/ALERT#, unless resolved) becomes threat_alert, and a
 * product_recall alert insert also product_recall, for every active
 * webhook of the record's brand that subscribes to the event and existed
 * when the record was written.  Each becomes one delivery item
 * (core/webhook.h: DELIVERY#<webhookId>, in the DELIVERY_PENDING index,
 * created free: claimToken "").
 *
 * Two callers name the deliveries differently:
 *   - the SQLite dispatcher (api/webhook_dispatch.c) writes them once, in
 *     the transaction that moves its checkpoint: random ids, createdAt
 *     the wall clock (struct wf_opts without pos);
 *   - the DynamoDB Streams detector (webhook_fanout_collect) writes them
 *     as idempotent puts before its checkpoint, so a batch read again
 *     after a crash must produce the same items: the id is derived from
 *     the record's stream position, the webhook and the event, and
 *     createdAt (part of the sort key) is the record's own time.
 *
 * The brand's webhooks (a consistent Query of BRAND#<id> / WEBHOOK#) and
 * a product's brand (its META, for a scan without brandId) are kept in a
 * struct wf_cache; the caller decides how long it may be kept.
 */
#ifndef GP_DETECT_WEBHOOK_FANOUT_H
#define GP_DETECT_WEBHOOK_FANOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/webhook.h"
#include "detect/ddb_jobs.h"
#include "store/ddb_streams.h"
#include "store/store.h"

/* Deliveries one record can produce: two events (threat_alert and
 * product_recall) to every active webhook of the brand. */
#define WF_PER_RECORD_MAX (2 * WEBHOOK_MAX_PER_BRAND)
/* Largest payload sent; a bigger event is skipped (and counted). */
#define WF_PAYLOAD_MAX (64 * 1024)
/* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" */
#define WF_ID_LEN 36

struct wf_cache;

struct wf_cache *wf_cache_new(void);
void wf_cache_free(struct wf_cache *c);
/* Forgets everything, the brands' webhooks, or the products' brands. */
void wf_cache_clear(struct wf_cache *c);
void wf_cache_forget_hooks(struct wf_cache *c);
void wf_cache_forget_products(struct wf_cache *c);

/* How a record's deliveries are named. */
struct wf_opts {
    /* NULL: random ids, createdAt = now_ms.  Else the record's stream
     * position (shard and sequence number): deterministic ids, createdAt
     * = the record's time. */
    const char *pos;
    int64_t now_ms;
    /* The record's stream time is rounded down (DynamoDB Streams: to the
     * second; DynamoDB Local: to the minute): its image's own time
     * refines it, and a webhook registered in the same second as the
     * record still gets it. */
    bool coarse_time;
};

/* Receives one delivery item, which it then owns.  Returns 0, or a
 * negative ERR_* that stops the fan-out with that error. */
typedef int (*wf_emit_fn)(void *arg, cJSON *item);

/*
 * Passes the deliveries of r to emit (at most WF_PER_RECORD_MAX).  Returns
 * 0, a store error from a lookup, or emit's error.  *skipped (may be NULL)
 * is increased for each event dropped because its payload exceeded
 * WF_PAYLOAD_MAX.
 */
int webhook_fanout_record(struct store *s, struct wf_cache *c, const struct stream_record *r,
                          const struct wf_opts *o, wf_emit_fn emit, void *arg, uint64_t *skipped);

/* The deterministic id of the delivery of (pos, webhook, event): the
 * first 16 bytes of SHA-256 over them, as a version-8 UUID. */
void webhook_fanout_id(const char *pos, const char *webhook_id, const char *event,
                       char out[WF_ID_LEN + 1]);

/* The records webhook_fanout_record() can turn into deliveries (scan
 * inserts, alert inserts and updates), for store_stream_read_filtered()
 * and store_stream_match(): the others need no look at all. */
const struct stream_filter *webhook_fanout_filter(void);

/* The DynamoDB Streams detector's part: the deliveries of recs[0..n)
 * into k (webhooks looked up in s, once per call).  A careful sink (a
 * batch read again after a failed try) puts each only if absent, so that
 * a delivery the earlier try wrote, and that may have been sent since, is
 * not made pending again. */
int webhook_fanout_collect(struct store *s, const struct ddbs_record *recs, size_t n,
                           int64_t now_ms, const struct ddbd_sink *k);

#endif
