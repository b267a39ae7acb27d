/*
 * net.h - the dashboard's connections: one SSE subscription per brand
 * (GET /api/stream?brandId=) and the REST polls and actions, all through
 * one libcurl multi handle driven by the caller's libev loop (the same
 * loop as input and redraw timers).  TUI.md §3: states, backoff with
 * jitter, server retry honoured, Last-Event-ID resume with the opaque id
 * of the latest threat, reconcile on every (re)connect and every 60 s,
 * polls at their periods.  Every period scales by GENUPROOF_TIME_SCALE.
 *
 * The net layer never interprets JSON bodies: it hands raw bytes to the
 * sink (the dashboard glue feeds them to the model).  It parses SSE with
 * tui/sse_parse.h.
 */
#ifndef GP_TUI_NET_H
#define GP_TUI_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ev_loop;

#define NET_ID_MAX 128 /* longest Last-Event-ID kept */

enum stream_state {
    ST_CONNECTING = 0,
    ST_LIVE,     /* `connected` event received */
    ST_STALLED,  /* no byte for 15 s while LIVE */
    ST_RETRYING, /* waiting for the next attempt (backoff) */
    ST_ERROR     /* HTTP 4xx other than 408/429: retried every 60 s */
};

/* The state's label: "CONNECTING", "LIVE", "STALLED", "RETRY", "ERROR". */
const char *net_state_name(enum stream_state st);

/* What the Health view and the status bar show for one brand's stream. */
struct stream_info {
    enum stream_state state;
    int64_t since_ms;      /* wall-clock ms the state was entered */
    int64_t last_byte_ms;  /* 0: never */
    int64_t last_event_ms; /* last threat */
    int64_t last_heartbeat_ms;
    int64_t next_retry_ms;    /* wall clock of the next attempt (RETRYING/ERROR) */
    unsigned attempt;         /* attempts since the last LIVE */
    unsigned long reconnects; /* LIVE entered again after the first time */
    unsigned long
        backfilled;  /* rows the reconcile found that the stream missed (set by the glue) */
    int http_status; /* last HTTP status, 0 before any */
    char last_event_id[NET_ID_MAX]; /* sent as Last-Event-ID on reconnect */
    char error[128];                /* last error text, "" if none */
};

/* The periodic or one-shot requests the dashboard makes. */
enum poll_kind {
    POLL_THREATS = 0,    /* GET /api/threats?brandId=&limit=50 (reconcile) */
    POLL_STATS,          /* GET /api/brands?id=                       30 s */
    POLL_BRAND_SCANS,    /* GET /api/brands/scans?brandId=            30 s */
    POLL_ANALYTICS,      /* GET /api/analytics?brandId=               30 s */
    POLL_AUDIT,          /* GET /api/audit?limit=3                    30 s */
    POLL_HEALTH,         /* GET /api/health                           30 s */
    POLL_OPSLOG,         /* GET /api/ops-log?limit=&days=             15 s */
    POLL_PARTITIONS,     /* GET /api/admin/partitions                 30 s */
    POLL_BRANDS,         /* GET /api/brands/list (all brands; admin)  once + 60 s */
    POLL_PRODUCT,        /* GET /api/products/verify?productId=&metadata=true  on demand */
    POLL_PRODUCT_SCANS,  /* GET /api/scans?productId=&limit=20      on demand */
    POLL_PRODUCT_EVENTS, /* GET /api/products/events?productId=     on demand */
    POLL_BRAND_PRODUCTS, /* GET /api/products/list?brandId=&limit=100 60 s, on demand */
    POLL_PROBE,          /* Health view's endpoint probes             60 s */
    POLL_ACTION,         /* POST/PATCH results (recall, resolve) */
    POLL_KIND_COUNT
};

struct net_sink {
    void *ud;
    /* An SSE event of brand index b (type "connected", "threat",
     * "heartbeat", ...; data NUL-terminated; id = the event's id or ""). */
    void (*on_event)(void *ud, size_t b, const char *type, const char *data, size_t len,
                     const char *id);
    /* A stream changed state (info is the stream's current record). */
    void (*on_state)(void *ud, size_t b, const struct stream_info *info);
    /* A request finished: status 0 = transport error (body = message).
     * b = brand index or (size_t)-1 for brand-less requests; tag = the
     * caller's tag for on-demand requests. */
    void (*on_reply)(void *ud, enum poll_kind k, size_t b, int status, const char *body, size_t len,
                     double latency_ms, uint64_t tag);
};

struct net_config {
    const char *url;     /* base URL, e.g. http://127.0.0.1:8080 */
    const char *api_key; /* sent as Authorization: Bearer, or NULL */
    bool readonly;       /* refuse every non-GET (returns ERR_DENIED) */
    int ops_days;        /* days= of the ops-log poll (1..31) */
};

struct net;

/* Creates the net layer on loop; nothing is sent until net_start.  NULL
 * with a message in err when libcurl cannot start. */
struct net *net_new(struct ev_loop *loop, const struct net_config *cfg, const struct net_sink *sink,
                    char *err, size_t errlen);
/* Cancels every transfer and timer; frees.  NULL is a no-op. */
void net_free(struct net *n);
/* Subscribes to these brands (replacing the set; index = position),
 * starts the streams and the periodic polls. */
int net_set_brands(struct net *n, const char *const *brand_ids, size_t count);
/* Starts polls that are not per brand (health, ops log, partitions, brands list). */
int net_start(struct net *n);
/* Runs every poll now (R / F5). */
void net_refresh(struct net *n);
void net_set_ops_days(struct net *n, int days);
/* Current record of stream b (NULL when out of range). */
const struct stream_info *net_stream(const struct net *n, size_t b);
size_t net_stream_count(const struct net *n);
/* One-shot GET of path+query (already encoded) reported as kind k with tag. */
int net_get(struct net *n, enum poll_kind k, size_t b, const char *path_query, uint64_t tag);
/* One-shot POST/PATCH of a JSON body (ERR_DENIED in read-only mode). */
int net_send(struct net *n, const char *method, const char *path, const char *json_body,
             uint64_t tag);
/* Which requests the net layer made (for tests and the Health view). */
unsigned long net_requests(const struct net *n);

#endif
