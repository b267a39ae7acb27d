/*
 * state.h - the detector's per-product window state, stored as the item
 * PRODUCT#<productId>/DETSTATE.
 *
 * The checks must not grow with a product's scan history, so instead of
 * querying the product's scans the detector keeps a small, bounded
 * summary of what it has processed:
 *   - the DET_BURST_MIN_SCANS newest scan times (burst: the hour ending at
 *     a scan holds >= 10 scans iff the 10th newest scan up to it is in
 *     that hour);
 *   - the last-seen time of up to DET_COUNTRIES_MAX known countries
 *     (geo: countries last seen in the 24 h ending at the scan; when full,
 *     the country seen longest ago is forgotten);
 *   - the number of scans processed (velocity: the total as of a scan);
 *   - the last provenance event seen (chain: seq, hash, time, actor).
 * The consumer reads the item once per product per batch, updates the
 * struct in memory over the batch's records in stream order and writes
 * it once, in the batch's transaction.  Everything is a function of the
 * records processed, so a replay rebuilds the same state.
 */
#ifndef GP_DETECT_STATE_H
#define GP_DETECT_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "detect/checks.h"

/* Format version of the stored item. */
#define DETSTATE_VERSION 1

struct det_country {
    char code[DET_COUNTRY_MAX + 1];
    int64_t last_ms;
};

struct det_state {
    uint64_t scans;                      /* scans processed so far */
    size_t nrecent;                      /* entries in recent[] */
    int64_t recent[DET_BURST_MIN_SCANS]; /* newest scan times, ascending */
    bool has_event;                      /* last_event is set */
    struct det_prev_event last_event;
    uint32_t last_verdict; /* the previous scan's verdict (process.c), 0: none */
    /* Last, so that a copy may stop after the ncountries used (the state
     * cache keeps only those). */
    size_t ncountries;
    struct det_country countries[DET_COUNTRIES_MAX];
};

/* An empty state (no scans, no countries, no event). */
void det_state_init(struct det_state *st);

/*
 * Loads a state from its stored item.  Entries of the wrong type or out
 * of bounds are skipped (the item is only ever written by the detector,
 * but a damaged one must not stop the stream).  Never fails: at worst the
 * state is empty.
 */
void det_state_from_item(struct det_state *st, const cJSON *item);

/* The stored item PRODUCT#<product_id>/DETSTATE.  The caller owns the
 * result.  NULL when the key would be too long. */
cJSON *det_state_to_item(const struct det_state *st, const char *product_id);

/* True when country is a known location: a non-empty string of at most
 * DET_COUNTRY_MAX bytes other than "Unknown" and "Local". */
bool det_country_known(const char *country);

/* Records one scan at ts_ms: counts it, adds its time to the newest scan
 * times (dropping the oldest beyond DET_BURST_MIN_SCANS) and, for a known
 * country, raises that country's last-seen time. */
void det_state_add_scan(struct det_state *st, int64_t ts_ms, const char *country);

/* Number of remembered scan times in [from_ms, to_ms]. */
unsigned det_state_scans_between(const struct det_state *st, int64_t from_ms, int64_t to_ms);

/* Fills out (DET_COUNTRIES_MAX entries) with the countries whose
 * last-seen time is in [from_ms, to_ms], sorted byte-wise; returns their
 * number.  The strings point into st. */
size_t det_state_countries_between(const struct det_state *st, int64_t from_ms, int64_t to_ms,
                                   const char **out);

/* Makes ev the last event seen (hash and actor are copied, cut to fit). */
void det_state_set_event(struct det_state *st, const struct det_event *ev);

/* ---------- state cache ----------
 *
 * The embedded consumer keeps the states it wrote (or read) in memory
 * across batches, so that a product seen again needs no DETSTATE read and
 * parse.  The consumer puts a batch's states into the cache only after
 * that transaction committed, either as written (det_state_cache_put) or
 * as deferred writes (det_state_cache_stage: newer than the stored item,
 * written later by a flush, see "Deferred state writes" in consumer.c).
 * The cache holds exactly what the stored item would load to (callers put
 * det_state_from_item() of the item they wrote or would write).  The
 * consumer empties it whenever it cannot be sure the stored items are
 * still its own (a failed batch, a checkpoint or a writer it does not
 * know about, see consumer.c).  Bounded: beyond max_entries the least
 * recently used clean state is dropped.  Not thread-safe.
 */

/* Default capacity; an entry costs about 400 bytes plus 56 per country. */
#define DET_STATE_CACHE_DEFAULT 32768

struct det_state_cache;

/* A new, empty cache of at most max_entries states (0 -> default). */
struct det_state_cache *det_state_cache_new(size_t max_entries);
void det_state_cache_free(struct det_state_cache *c);
/* Copies the cached state of product_id into *out and returns true (the
 * entry becomes the most recently used); false when it is not cached. */
bool det_state_cache_get(struct det_state_cache *c, const char *product_id, struct det_state *out);
/* Caches (or replaces) the state of product_id, dropping the least
 * recently used entry when full. */
void det_state_cache_put(struct det_state_cache *c, const char *product_id,
                         const struct det_state *st);
/* Like det_state_cache_put, but the entry is marked as holding a
 * deferred write: newer than the stored item.  Such an entry is never
 * dropped to make room (beyond max_entries the cache grows instead) until
 * det_state_cache_mark_clean(). */
void det_state_cache_stage(struct det_state_cache *c, const char *product_id,
                           const struct det_state *st);
/* Entries holding a deferred write. */
size_t det_state_cache_dirty(const struct det_state_cache *c);
/* Calls fn for every entry holding a deferred write (in no particular
 * order); stops at and returns the first non-zero result. */
int det_state_cache_each_dirty(const struct det_state_cache *c,
                               int (*fn)(void *arg, const char *product_id,
                                         const struct det_state *st),
                               void *arg);
/* Every entry is now as stored (the deferred writes were committed). */
void det_state_cache_mark_clean(struct det_state_cache *c);
/* Like det_state_cache_get without touching the recency order. */
bool det_state_cache_peek(const struct det_state_cache *c, const char *product_id,
                          struct det_state *out);
/* Drops every entry (deferred writes included). */
void det_state_cache_clear(struct det_state_cache *c);
/* Entries cached now. */
size_t det_state_cache_count(const struct det_state_cache *c);

#endif
