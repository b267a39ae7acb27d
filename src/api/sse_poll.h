/*
 * sse_poll.h - the live push behind GET /api/stream when this process
 * cannot read the change stream (DynamoDB: Streams allows two readers per
 * shard, and they belong to the detector): a registry of Server-Sent
 * Events subscribers fed by polling the GSI1 index.
 *
 * Alerts carry GSI1PK BRAND#<brandId> and GSI1SK THREAT#<writeTime>#<id>,
 * so a brand's index partition lists its alerts in write order.  For each
 * brand that has at least one open subscriber the hub runs ONE poll every
 * SSE_POLL_PERIOD_S (scaled by GENUPROOF_TIME_SCALE, at least 10 ms),
 * shared by all of that brand's connections:
 *   GSI1 query, pk BRAND#<b>, GSI1SK between THREAT#<watermark - overlap>
 *   and THREAT#~, ascending, in bounded pages;
 * the watermark is the newest write time seen, the overlap (2 s) absorbs
 * index lag and clock skew between writers.  Alerts already sent are
 * dropped by alertId (a bounded per-brand set whose entries leave once
 * they fall out of the overlap window).  Each new alert goes out once, to
 * every open subscriber of the brand, as
 *   "id: <writeTime>_<alertId>" "event: threat" "data: <alert JSON>"
 * with the same JSON as the embedded hub (alert_write_json).
 *
 * Differences from the embedded hub (sse_hub.h), by design:
 *   - ids are <writeTime>_<alertId> (writeTime exactly as in GSI1SK), not
 *     stream sequences;
 *   - a new subscriber without Last-Event-ID starts at "now": when the
 *     brand's poll starts, everything already in the overlap window is
 *     marked as seen, not sent;
 *   - Last-Event-ID <wt>_<id> replays, once, the brand's alerts whose
 *     GSI1SK sorts after THREAT#<wt>#<id> (never that alert itself), at
 *     most SSE_POLL_REPLAY_MAX alerts and half the output cap; when there
 *     is more, a ": gap" comment follows and the stream goes live;
 *     a malformed id is ignored (no backlog);
 *   - an updated alert (a deduplicated alert whose count grows) keeps its
 *     GSI1SK and is NOT sent again;
 *   - no `scan` events (scans are not in GSI1): scans=1 is accepted and
 *     answered with a ": scans unavailable" comment;
 *   - all brands (?all=1): there is no GSI1 partition across brands, so
 *     while all-brands subscribers are open the hub reads the brand list
 *     (BRAND_INDEX) every SSE_POLL_BRANDS_S (scaled) and polls every
 *     listed brand as if it had a subscriber; a new brand's alerts reach
 *     them from the next refresh on (or at once when the brand has its
 *     own subscriber).  Each listed brand costs one query per period, so
 *     keep all-brands streams for dashboards of modest deployments.  No
 *     replay across brands: a Last-Event-ID gets ": gap".
 * Heartbeats, the per-brand stream limit and the slow-client drop (a send
 * that would overflow the connection's output cap) work as in sse_hub.
 * Queries run synchronously on the loop (like every store call): with
 * DynamoDB each costs one round trip per brand and period.
 *
 * Single-threaded: every call from the loop's thread.
 */
#ifndef GP_API_SSE_POLL_H
#define GP_API_SSE_POLL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/sse_hub.h" /* struct sse_sink_ops, SSE_HUB_* defaults */

struct ev_loop;
struct store;
struct metrics;
struct http_conn;
struct sse_poll;
struct sse_psub;

#define SSE_POLL_PERIOD_S     0.25  /* poll period per subscribed brand, before scaling */
#define SSE_POLL_OVERLAP_MS   2000  /* re-read window below the watermark (not scaled) */
#define SSE_POLL_PAGE         256   /* items per GSI1 query page */
#define SSE_POLL_PAGES        8     /* pages per poll; the rest continues next period */
#define SSE_POLL_SEEN_MAX     16384 /* alert ids remembered per brand */
#define SSE_POLL_REPLAY_MAX   2000  /* alerts replayed after a Last-Event-ID */
#define SSE_POLL_ALERT_ID_MAX 128   /* longer alert ids are skipped */
#define SSE_POLL_BRANDS_S     30.0  /* brand list refresh for ?all=1, before scaling */
#define SSE_POLL_BRANDS_MAX   4096  /* brands polled for ?all=1 */

struct sse_poll_config {
    struct store *store;             /* required, borrowed; any driver */
    struct ev_loop *loop;            /* NULL: no watchers; the caller runs sse_poll_run() and
                                      * sse_poll_heartbeat() itself (tests) */
    struct metrics *metrics;         /* NULL: none (sse_clients gauge, dropped counter) */
    size_t max_per_brand;            /* 0 -> SSE_HUB_MAX_PER_BRAND */
    size_t buffer_max;               /* the connections' output cap; 0 -> 256 KiB */
    double heartbeat_s;              /* 0 -> SSE_HUB_HEARTBEAT_S (then scaled) */
    double poll_s;                   /* 0 -> SSE_POLL_PERIOD_S (then scaled, >= 10 ms) */
    int64_t overlap_ms;              /* 0 -> SSE_POLL_OVERLAP_MS */
    int sndbuf;                      /* as in sse_hub_config */
    const struct sse_sink_ops *sink; /* NULL -> the HTTP server */
};

/* Creates the hub.  On error returns NULL with a message in err. */
struct sse_poll *sse_poll_new(const struct sse_poll_config *cfg, char *err, size_t errlen);
/* Stops the watchers and frees the hub (and any subscriber nodes still
 * registered; later callbacks for them are then invalid). */
void sse_poll_free(struct sse_poll *h);

struct sse_poll_params {
    const char *brand_id; /* required */
    bool all;             /* every brand (the caller checked the admin key) */
    bool scans;           /* accepted; no scan events in poll mode */
    const char *last_id;  /* Last-Event-ID / lastEventId as received, or NULL */
};

/*
 * Reserves a subscriber slot: pass sse_poll_stream_open /
 * sse_poll_stream_closed with *out as the response's stream callbacks.
 * On success returns 0 and *out.  ERR_TOOBIG when the brand already has
 * max_per_brand streams (or all-brands streams), ERR_INVALID for a bad
 * brand id.
 */
int sse_poll_reserve(struct sse_poll *h, const struct sse_poll_params *p, struct sse_psub **out);
/* http_response.stream_open: starts the brand's poll when needed,
 * replays after Last-Event-ID, joins the live set. */
void sse_poll_stream_open(void *sub, struct http_conn *c);
/* http_response.stream_closed: unlinks and frees the subscriber (also
 * when stream_open never ran); the brand's poll stops with its last
 * subscriber. */
void sse_poll_stream_closed(void *sub, struct http_conn *c);

/* One poll of every brand with open subscribers (what the timers do).
 * Returns 0, or the last negative ERR_* of a failed query (the brand's
 * watermark is kept; the next poll retries). */
int sse_poll_run(struct sse_poll *h);
/* Reads the brand list now (what the refresh timer does) when
 * all-brands subscribers are open. */
void sse_poll_refresh_brands(struct sse_poll *h);
/* Heartbeat frames to the open subscribers whose heartbeat is due at
 * now_ms (as sse_hub_heartbeat). */
void sse_poll_heartbeat(struct sse_poll *h, int64_t now_ms);

/* "<writeTime>_<alertId>" -> its parts (wt: 24-char ISO as in GSI1SK).
 * False when s is not of that form. */
bool sse_poll_parse_id(const char *s, char wt[25], char *id, size_t idn);

size_t sse_poll_clients(const struct sse_poll *h);
uint64_t sse_poll_dropped(const struct sse_poll *h);
/* GSI1 queries issued since creation (tests: polls are shared). */
uint64_t sse_poll_queries(const struct sse_poll *h);
/* Brands being polled now (those with open subscribers). */
size_t sse_poll_active_brands(const struct sse_poll *h);

#endif
