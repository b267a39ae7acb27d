/*
 * sse_hub.h - the live push behind GET /api/stream: a registry of
 * Server-Sent Events subscribers (per brand, all-brands, with or without
 * scan events) fed from the store's change stream.
 *
 * The hub keeps ONE position in the change stream, shared by every
 * subscriber (it starts at the stream head when the hub is created).  The
 * app's commit listener (sse_hub_commit_cb) only records the newest
 * durable sequence and schedules the pump on the loop; the pump reads the
 * stream from the hub's position in chunks, formats each relevant record
 * once into an SSE frame and hands the same bytes to every matching
 * subscriber:
 *   - an INSERT or MODIFY of an alert (PK THREAT#..., SK ALERT#...) ->
 *     "id: <seq>" "event: threat" "data: <alert JSON of API.md §6.4>" for
 *     the alert's brand and the all-brands subscribers;
 *   - an INSERT of a scan (PK PRODUCT#<id>, SK SCAN#...) -> "event: scan"
 *     data {"productId","country","result","timestamp","brandId"} (no IP)
 *     for subscribers that asked for scans; the product's brand comes from
 *     a small bounded LRU cache in front of the product item.
 * A subscriber that resumes (Last-Event-ID L) first replays, from the
 * stream, the alerts of its brand with seq > L up to the hub's position
 * and only then joins the live set, so nothing is missed or sent twice;
 * when records after L were already trimmed a ": gap" comment comes first.
 * A send that would overflow the connection's output cap drops the
 * subscriber (logged, counted).  A heartbeat frame goes to every
 * subscriber every 3 s (scaled by GENUPROOF_TIME_SCALE).
 *
 * Memory per subscriber is one small node (struct sse_sub); brands are
 * shared entries that live while they have subscribers.
 *
 * Single-threaded: every call from the loop's thread.
 */
#ifndef GP_API_SSE_HUB_H
#define GP_API_SSE_HUB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

struct ev_loop;
struct store;
struct metrics;
struct http_conn;
struct sse_hub;
struct sse_sub;

#define SSE_HUB_MAX_PER_BRAND 1000  /* default concurrent streams per brand (and for ?all=1) */
#define SSE_HUB_HEARTBEAT_S   3.0   /* heartbeat period before scaling */
#define SSE_HUB_CHUNK         256   /* stream records read per store call */
#define SSE_HUB_PUMP_BUDGET   4096  /* records per pump call before yielding to the loop */
#define SSE_HUB_PRODUCT_CACHE 4096  /* product -> brand entries kept */
#define SSE_HUB_SNDBUF        32768 /* kernel send buffer of a stream socket (see below) */

/* Where frames go.  The default (cfg.sink NULL) is the HTTP server:
 * http_conn_send / http_conn_close / http_conn_pending / http_conn_peer.
 * Unit tests plug in their own.  send returns 0, or ERR_TOOBIG when the
 * connection's output cap would be exceeded (the sink closes the
 * connection and reports sse_hub_stream_closed() later), or another error
 * when the connection is already closing.  set_sndbuf may be NULL. */
struct sse_sink_ops {
    int (*send)(struct http_conn *c, const void *data, size_t n);
    void (*close)(struct http_conn *c);
    size_t (*pending)(const struct http_conn *c);
    const char *(*peer)(const struct http_conn *c);
    int (*set_sndbuf)(struct http_conn *c, int bytes);
};

struct sse_hub_config {
    struct store *store;     /* required, borrowed */
    struct ev_loop *loop;    /* NULL: no watchers; the caller runs sse_hub_pump() and
                              * sse_hub_heartbeat() itself (tests) */
    struct metrics *metrics; /* NULL: none (sse_clients gauge, dropped counter) */
    size_t max_per_brand;    /* 0 -> SSE_HUB_MAX_PER_BRAND */
    size_t buffer_max;       /* the connections' output cap (http stream_buffer_max);
                              * replay pauses above half of it; 0 -> 256 KiB */
    double heartbeat_s;      /* 0 -> SSE_HUB_HEARTBEAT_S (then scaled) */
    /* SO_SNDBUF of each stream socket: 0 -> SSE_HUB_SNDBUF, < 0 -> kernel
     * autotuning.  Left to autotuning, a client that stops reading parks up
     * to the kernel's wmem maximum (4 MiB by default) before buffer_max
     * sees anything; alert streams need little bandwidth. */
    int sndbuf;
    const struct sse_sink_ops *sink; /* NULL -> the HTTP server */
    /* Tail mode (serve --workers on one database file): another process
     * commits the writes, so no commit listener will fire here; the hub
     * then polls the stream head every tail_s seconds (scaled, at least
     * 10 ms) while it has subscribers.  0: off (in-process commits). */
    double tail_s;
};

/* Creates the hub positioned at the stream head.  On error returns NULL
 * with a message in err. */
struct sse_hub *sse_hub_new(const struct sse_hub_config *cfg, char *err, size_t errlen);
/* Stops the watchers and frees the hub.  Every subscriber must have been
 * closed before (http_server_free() reports them all), else their nodes
 * are freed too and later callbacks for them are invalid. */
void sse_hub_free(struct sse_hub *h);

/* app_commit_listener: notes last_seq as durable and schedules the pump
 * (an ev_idle watcher); never reads the store itself. */
void sse_hub_commit_cb(void *arg, uint64_t last_seq);

/* What a new stream asks for. */
struct sse_sub_params {
    const char *brand_id; /* required unless all */
    bool all;             /* every brand (the caller checked the admin key) */
    bool scans;           /* also "scan" events */
    bool resume;          /* last_id is valid (Last-Event-ID / lastEventId) */
    uint64_t last_id;
};

/*
 * Reserves a subscriber slot for a stream response being built: pass
 * sse_hub_stream_open / sse_hub_stream_closed with *out as the response's
 * stream callbacks.  On success returns 0 and *out.  ERR_TOOBIG when the
 * brand (or the all-brands class) already has max_per_brand streams,
 * ERR_INVALID when the parameters are unusable.
 */
int sse_hub_reserve(struct sse_hub *h, const struct sse_sub_params *p, struct sse_sub **out);
/* http_response.stream_open: the head has been queued; replays what the
 * subscriber missed (Last-Event-ID) and joins it to the live set. */
void sse_hub_stream_open(void *sub, struct http_conn *c);
/* http_response.stream_closed: unlinks and frees the subscriber (also
 * when stream_open never ran). */
void sse_hub_stream_closed(void *sub, struct http_conn *c);

/*
 * Reads the change stream from the hub's position up to the newest
 * durable sequence (at most SSE_HUB_PUMP_BUDGET records), fans frames out,
 * then advances replaying subscribers.  Returns 1 when work remains (call
 * again), 0 when idle, or a negative ERR_* from the store (the position
 * is kept; a later call retries).
 */
int sse_hub_pump(struct sse_hub *h);
/* Sends a heartbeat frame {"ts":"<ISO of now_ms>"} to every open
 * subscriber whose heartbeat is due at now_ms (wall clock): one per
 * heartbeat period, the first one period after the stream opened.  The
 * hub's timer calls it ten times per period, so a large audience is
 * served in slices. */
void sse_hub_heartbeat(struct sse_hub *h, int64_t now_ms);

/* The "retry:" hint: 3000 ms, scaled down when GENUPROOF_TIME_SCALE < 1. */
long sse_hub_retry_ms(void);

/* Open subscribers (streams whose head went out and are not closed). */
size_t sse_hub_clients(const struct sse_hub *h);
/* Subscribers dropped for a full output buffer since creation. */
uint64_t sse_hub_dropped(const struct sse_hub *h);
/* The hub's position in the change stream (last record fanned out). */
uint64_t sse_hub_position(const struct sse_hub *h);

#endif
