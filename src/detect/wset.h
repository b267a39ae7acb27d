/*
 * wset.h - a detector batch's effects as a list of item writes, cut into
 * DynamoDB-sized transactions.
 *
 * On DynamoDB a detector batch cannot be one transaction: TransactWriteItems
 * takes at most 100 writes and 4 MB, and never the same item twice.  The
 * writes are therefore collected in units, and wset_plan() packs whole
 * units into groups that each fit one transaction:
 *   - WSET_FREE units hold idempotent writes (a replay rewrites the same
 *     item with the same key): they may be split freely and go first;
 *   - WSET_ATOMIC units (one product's window state, alerts, dedup items
 *     and brand counter increment) are never split across groups;
 *   - the WSET_LAST unit (the shard checkpoint, the lease check, dead
 *     letters) goes into the final group.
 * Counter increments (one ADD action) on the same item within a group are
 * folded into one update; any other repeated item starts a new group.
 *
 * Not thread-safe; the set owns every item and string given to it.
 */
#ifndef GP_DETECT_WSET_H
#define GP_DETECT_WSET_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "store/store.h"

/* DynamoDB's limit on the size of one TransactWriteItems request. */
#define WSET_BYTES_MAX (4u * 1024 * 1024)

enum wset_unit_kind {
    WSET_FREE = 0, /* idempotent writes, committed first, splittable */
    WSET_ATOMIC,   /* all in one group */
    WSET_LAST      /* all in the final group */
};

struct wset;

struct wset *wset_new(void);
void wset_free(struct wset *ws);

/* Starts a new unit; the writes added next belong to it. */
void wset_unit(struct wset *ws, enum wset_unit_kind kind);

/* Adds a put of item (ownership moves to the set).  cond may be NULL; its
 * attr/value are copied.  Returns 0, or ERR_INVALID when item has no
 * string PK/SK (the item is then freed). */
int wset_put(struct wset *ws, cJSON *item, const struct store_cond *cond);
/* Adds an increment of attr on (pk, sk) by delta (UpdateItem ADD). */
void wset_add(struct wset *ws, const char *pk, const char *sk, const char *attr, double delta);
/* Adds a condition check on (pk, sk) (cond is copied). */
void wset_check(struct wset *ws, const char *pk, const char *sk, const struct store_cond *cond);

/* Writes added so far. */
size_t wset_count(const struct wset *ws);

/* The transactions of a set, in commit order. */
struct wset_plan {
    struct store_write *w; /* all groups' writes, back to back */
    size_t nw;
    size_t *end; /* group g is w[g ? end[g-1] : 0 .. end[g]) */
    size_t ngroups;
    struct store_action *acts; /* folded actions (owned) */
    size_t nacts;
};

/*
 * Packs the set into groups of at most max_writes writes (capped at
 * STORE_TRANSACT_MAX) and max_bytes bytes (0 -> WSET_BYTES_MAX): FREE
 * writes first, then the ATOMIC units in the order added, then the LAST
 * unit(s) in the final group.  No group holds an item twice.  The plan
 * borrows from ws: free it before ws.  On success returns 0.  On error
 * returns ERR_TOOBIG when one unit alone exceeds a limit (or the LAST
 * units do), with *plan empty.
 */
int wset_plan(const struct wset *ws, size_t max_writes, size_t max_bytes, struct wset_plan *plan);
void wset_plan_free(struct wset_plan *plan);

/* Writes of group g and their number. */
const struct store_write *wset_plan_group(const struct wset_plan *plan, size_t g, size_t *n);

#endif
