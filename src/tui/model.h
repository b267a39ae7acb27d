/*
 * model.h - the dashboard's data: the threat ring (10,000 newest, merged
 * on alertId), per-brand poll results, and the state the keys change
 * (feed selection/follow/freeze, filter, severity floor, acks).  Pure C
 * over cJSON: no curses, no network, so every rule of TUI.md §3-§5 is
 * unit-tested here.  The glue (tui.c) feeds it what net.h delivers; the
 * views (views.h) draw from it.
 *
 * Time is always passed in (now_ms, wall clock), never read here.
 */
#ifndef GP_TUI_MODEL_H
#define GP_TUI_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tui/net.h"

struct cJSON;

#define MODEL_RING       10000 /* threats kept */
#define MODEL_BRANDS_MAX 64
#define MODEL_FLASH_MS   2000 /* new-row flash, before time scaling */

enum sev { SEV_LOW = 0, SEV_MEDIUM, SEV_HIGH, SEV_CRITICAL };

#define ROW_UNSEEN   0x01u /* not acked or opened yet */
#define ROW_BACKFILL 0x02u /* found by a reconcile, missed by the stream (↺) */
#define ROW_GAP      0x04u /* synthetic "possible gap before HH:MM:SSZ" row */
#define ROW_RESOLVED 0x08u
#define ROW_ACKED    0x10u /* acknowledged locally */

struct threat_row {
    char alert_id[64];
    uint16_t brand;     /* index into the model's brands */
    int64_t ts_ms;      /* alert timestamp (ms since epoch) */
    int64_t arrived_ms; /* when this row was inserted or last updated (flash) */
    enum sev sev;
    uint8_t flags; /* ROW_* */
    char type[40];
    char product_id[64];
    char product[64];  /* name when known, else the id */
    char location[64]; /* "city, CC" or CC or "" */
    char details[240]; /* one line: details text or a summary of a details object */
    char *raw;         /* the whole alert JSON (malloc'd), for the detail pane */
};

struct model;

/* Creates a model for n brands (ids copied; names may be NULL).  Never NULL. */
struct model *model_new(const char *const *brand_ids, const char *const *brand_names, size_t n);
void model_free(struct model *m);
/* Replaces the brand set (all-brands mode after /api/brands/list); rows of
 * brands no longer present are dropped. */
void model_set_brands(struct model *m, const char *const *ids, const char *const *names, size_t n);
size_t model_brand_count(const struct model *m);
const char *model_brand_id(const struct model *m, size_t b);
const char *model_brand_name(const struct model *m, size_t b); /* name or id */

/*
 * An SSE `threat` event of brand b (data = the alert object).  Inserts a
 * new row at the top or replaces the row with the same alertId in place.
 * Returns 1 when a row was added, 0 when one was updated, ERR_INVALID
 * for data that is not an alert object (ignored).
 */
int model_threat(struct model *m, size_t b, const char *json, size_t len, int64_t now_ms);
/*
 * A reconcile reply (/api/threats body) of brand b: merged on alertId;
 * rows the stream had not delivered are added with ROW_BACKFILL; if the
 * oldest returned alert is newer than the newest seen before, a ROW_GAP
 * row is inserted below them.  Returns the number of backfilled rows or
 * ERR_INVALID.
 */
int model_reconcile(struct model *m, size_t b, const char *json, size_t len, int64_t now_ms);
/*
 * A poll result (see net.h); kind POLL_THREATS goes to model_reconcile.
 * status 401/403 marks that data "needs an admin key"; other failures
 * keep the previous data and record the error.  The body is parsed and
 * kept (cJSON) for the views.  latency_ms is recorded (Health, Ops).
 */
void model_reply(struct model *m, enum poll_kind k, size_t b, int status, const char *body,
                 size_t len, double latency_ms, int64_t now_ms);

/* What a view needs to know about one poll result. */
enum data_state { DATA_NONE = 0, DATA_OK, DATA_DENIED, DATA_ERROR, DATA_UNSUPPORTED };
struct data_slot {
    enum data_state state;
    struct cJSON *json; /* last good body (owned by the model), NULL if none */
    int64_t at_ms;      /* when it arrived */
    double latency_ms;
    int status;
};
/* The slot of kind k for brand b (b ignored for brand-less kinds). */
const struct data_slot *model_data(const struct model *m, enum poll_kind k, size_t b);

/* --- threat ring and feed state --- */
size_t model_threat_count(const struct model *m);
/* The i-th newest row (0 = newest) of the whole ring, unfiltered. */
const struct threat_row *model_threat_at(const struct model *m, size_t i);

struct feed_state {
    bool follow;           /* selection tracks the newest row */
    bool frozen;           /* Space: the visible list does not change */
    unsigned long pending; /* rows arrived while frozen or not following (+N) */
    size_t sel;            /* index of the selected row among visible rows */
    char filter[128];      /* substring, case-insensitive; "" none */
    bool invert;           /* '!' prefix */
    enum sev floor;        /* rows below are hidden */
    int brand_only;        /* -1 all brands, else only this brand */
};
struct feed_state *model_feed(struct model *m);
const struct feed_state *model_feed_c(const struct model *m);
/* Rows that pass the filter/floor (and freeze), newest first; fills
 * out[0..max) with ring indexes usable with model_threat_at; returns the
 * total count of visible rows. */
size_t model_visible(const struct model *m, size_t *out, size_t max);
void model_feed_move(struct model *m, long delta); /* j/k/PgUp/PgDn; stops follow */
void model_feed_home(struct model *m);             /* g/Home: newest + follow */
void model_feed_end(struct model *m);              /* G */
void model_set_frozen(struct model *m, bool on);
void model_set_filter(struct model *m, const char *text); /* "!x" inverts */
void model_set_floor(struct model *m, enum sev floor);
/* Acks the selected row (a) or every visible row (A). */
void model_ack_selected(struct model *m);
void model_ack_visible(struct model *m);
/* Unseen (unacked) critical rows, for the status bar. */
size_t model_unseen_critical(const struct model *m);

/* Parses "critical"/"high"/"medium"/"low" (any case); default SEV_LOW. */
enum sev sev_parse(const char *s);
const char *sev_label(enum sev s); /* "CRIT" "HIGH" "MED" "LOW" */

/* --- additions (T3) --- */
/* Human label of an alert type ("Geo anomaly", "Burst", ...; else the
 * type itself). */
const char *model_type_label(const char *type);
/* The selected visible row, NULL when none. */
const struct threat_row *model_selected(const struct model *m);
/* The last latencies of POLL_HEALTH replies, oldest first, into out;
 * returns how many (at most max, at most 64 kept). */
size_t model_health_latencies(const struct model *m, double *out, size_t max);
/* Health view endpoint probes: the glue reports each probe by name
 * (e.g. "GET /api/ready"); up to 16 names are kept, newest result each. */
struct model_probe {
    char name[64];
    int status; /* HTTP status, 0 = transport error */
    double latency_ms;
    int64_t at_ms;
};
void model_probe(struct model *m, const char *name, int status, double latency_ms, int64_t now_ms);
size_t model_probe_count(const struct model *m);
const struct model_probe *model_probe_at(const struct model *m, size_t i);

#endif
