/*
 * sse_subs.h - the subscriber bookkeeping both SSE hubs share: the
 * change-stream hub (sse_hub.c) and the GSI1-polling hub (sse_poll.c)
 * differ in where alerts come from, not in how subscribers are kept.
 *
 * Pieces:
 *   - struct sse_node: the part of a subscriber the registry knows (its
 *     connection, its place in one owner list, its place in the heartbeat
 *     queue).  Each hub embeds one in its own subscriber struct and gets
 *     back to it with container_of.
 *   - struct sse_reg: sink, limits, output cap, the heartbeat queue and its
 *     timer, the open-subscriber gauge and the dropped counter (a metrics
 *     source), and the frame buffer that fan-out formats into once.
 *     sse_reg_send() is the one send-or-drop path: a failed send logs (for
 *     a full output buffer), counts, asks the owner to unlink the node from
 *     its lists (cfg.unlink) and takes it out of the heartbeat queue.
 *   - struct sse_btab: the brand table (id -> entry), a power-of-two
 *     chained hash table that doubles as it fills; the entries are the
 *     hubs' own structs with a struct sse_bent first.
 *   - sse_frame_threat(): the "threat" frame of an alert item.
 *
 * Single-threaded: every call from the loop's thread.
 */
#ifndef GP_API_SSE_SUBS_H
#define GP_API_SSE_SUBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include <ev.h>

#include "api/sse_hub.h" /* struct sse_sink_ops, SSE_HUB_* defaults */
#include "util/buf.h"

#ifndef container_of
#define container_of(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))
#endif

struct metrics;
struct http_conn;

/* The registry's view of one subscriber (zeroed by its owner). */
struct sse_node {
    struct http_conn *conn;         /* NULL until the stream opened */
    struct sse_node *prev, *next;   /* the owner list the node is in */
    struct sse_node **list;         /* head of that list; NULL: in none */
    struct sse_node *hprev, *hnext; /* heartbeat queue */
    int64_t hb_due;                 /* wall-clock ms of the next heartbeat */
    const char *brand_id;           /* for the drop log; NULL: all brands */
    bool in_hbq;
};

/* Pushes n at the front of the list at *head (n must be in none). */
void sse_list_push(struct sse_node **head, struct sse_node *n);
/* Takes n out of its list; nothing when it is in none. */
void sse_list_remove(struct sse_node *n);

/* Called when a send fails: the owner takes n out of its lists and marks
 * it dropped (the connection is closing; stream_closed follows). */
typedef void (*sse_unlink_fn)(void *owner, struct sse_node *n);

struct sse_reg_config {
    struct ev_loop *loop;            /* NULL: no heartbeat timer (tests) */
    struct metrics *metrics;         /* NULL: none */
    const struct sse_sink_ops *sink; /* NULL -> the HTTP server */
    size_t max_per_brand;            /* 0 -> SSE_HUB_MAX_PER_BRAND */
    size_t buffer_max;               /* 0 -> 256 KiB */
    double heartbeat_s;              /* 0 -> SSE_HUB_HEARTBEAT_S (then scaled, >= 10 ms) */
    int sndbuf;                      /* 0 -> SSE_HUB_SNDBUF, < 0: kernel autotuning */
    sse_unlink_fn unlink;            /* required */
    void *owner;                     /* unlink's first argument */
};

/* The registry's part of a hub's config c (struct sse_hub_config and
 * struct sse_poll_config name these fields alike), with unlink_fn and
 * owner_ptr: an initializer. */
#define SSE_REG_CONFIG_OF(c, unlink_fn, owner_ptr)                                                 \
    {                                                                                              \
        .loop = (c)->loop, .metrics = (c)->metrics, .sink = (c)->sink,                             \
        .max_per_brand = (c)->max_per_brand, .buffer_max = (c)->buffer_max,                        \
        .heartbeat_s = (c)->heartbeat_s, .sndbuf = (c)->sndbuf, .unlink = (unlink_fn),             \
        .owner = (owner_ptr)                                                                       \
    }

/* Fields are read by the hubs; change them only through the functions. */
struct sse_reg {
    struct ev_loop *loop;
    struct metrics *metrics;
    const struct sse_sink_ops *sink;
    size_t max_per_brand, buffer_max;
    int sndbuf;
    int64_t hb_ms; /* heartbeat period, scaled */
    size_t nopen;  /* open subscribers */
    uint64_t dropped;
    struct sse_node *hb_head, *hb_tail; /* open subscribers, by heartbeat due time */
    struct buf frame;                   /* the frame being fanned out */
    sse_unlink_fn unlink;
    void *owner;
    ev_timer hb;
};

/* Sets r up from cfg (defaults filled in), registers the dropped counter
 * with the metrics and zeroes the gauge.  Cannot fail. */
void sse_reg_init(struct sse_reg *r, const struct sse_reg_config *cfg);
/* Unregisters the metrics, stops the heartbeat timer, frees the frame.
 * The nodes belong to the owner. */
void sse_reg_fini(struct sse_reg *r);

/* The stream of n opened on c: counts it, queues its first heartbeat one
 * period from now and sets the socket's send buffer (best effort). */
void sse_reg_open(struct sse_reg *r, struct sse_node *n, struct http_conn *c);
/* The stream of n closed: out of the heartbeat queue, and uncounted when
 * it had opened.  The owner unlinks it from its own lists. */
void sse_reg_close(struct sse_reg *r, struct sse_node *n);

/* Sends data to n.  True when sent; false when the send failed and n was
 * dropped (see the file comment). */
bool sse_reg_send(struct sse_reg *r, struct sse_node *n, const void *data, size_t len);
/* sse_reg_send of r->frame. */
bool sse_reg_send_frame(struct sse_reg *r, struct sse_node *n);

/* Heartbeat frames {"ts":"<ISO of now_ms>"} to the open subscribers whose
 * heartbeat is due at now_ms; each served one is due one period later.
 * The timer runs it ten times per period, so a large audience is served
 * in slices. */
void sse_reg_heartbeat(struct sse_reg *r, int64_t now_ms);

/* frame = "id: <event_id>" "event: threat" "data: <alert JSON of item>"
 * (alert_write_json).  0, or a negative ERR_* (frame content undefined). */
int sse_frame_threat(struct buf *frame, const char *event_id, const cJSON *item);

/* FNV-1a of a string. */
uint32_t sse_hash(const char *s);

/* ---------- the brand table ---------- */

/* First member of a hub's brand entry. */
struct sse_bent {
    struct sse_bent *hnext;
    uint32_t hash;
    char *id; /* stored in the same allocation */
};

struct sse_btab {
    struct sse_bent **tab; /* nbuckets chains (iterate them to visit every entry) */
    size_t nbuckets, n;
};

void sse_btab_init(struct sse_btab *t);
/* Frees the buckets; the entries must have been freed (or are freed by
 * the caller first, by walking tab). */
void sse_btab_fini(struct sse_btab *t);
/* The entry of id, or NULL. */
struct sse_bent *sse_btab_find(const struct sse_btab *t, const char *id);
/* Adds a new zeroed entry of size bytes (size >= sizeof(struct sse_bent),
 * the sse_bent first) with a copy of id, and returns it; id must not be
 * in the table.  Free it with free() after sse_btab_remove(). */
void *sse_btab_add(struct sse_btab *t, const char *id, size_t size);
/* Takes e out of the table (does not free it). */
void sse_btab_remove(struct sse_btab *t, struct sse_bent *e);

#endif
