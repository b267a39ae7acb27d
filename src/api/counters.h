/*
 * counters.h - hot counters folded per group commit.
 *
 * Requests of one loop iteration often bump the same counter (brand
 * STATS.scanCount, a product's scanCount).  Instead of one store_update
 * per request, deltas are summed here and written at commit time as a
 * single store_update per item with one ADD action per attribute.  Until
 * then a handler that must report the post-increment value adds the
 * pending delta to what it read (api_counter_pending).
 */
#ifndef GP_API_COUNTERS_H
#define GP_API_COUNTERS_H

#include <stddef.h>

struct counters;
struct store;

struct counters *counters_new(void);
void counters_free(struct counters *c);

/* Adds delta to (pk, sk, attr) and returns the pending delta after the
 * call.  Keys longer than the store's limits are ignored (returns 0). */
double counters_add(struct counters *c, const char *pk, const char *sk, const char *attr,
                    double delta);
/* Pending delta of (pk, sk, attr), 0 when none. */
double counters_pending(const struct counters *c, const char *pk, const char *sk, const char *attr);
/* Number of pending (pk, sk, attr) entries. */
size_t counters_count(const struct counters *c);

/* Writes every pending delta: one store_update per (pk, sk) with one ADD
 * per attribute, inside whatever batch the caller has open.  The pending
 * set is emptied whether or not it succeeds (after a failure the caller
 * aborts the batch, so nothing was applied).  On success returns 0; on
 * error the first store error. */
int counters_flush(struct counters *c, struct store *s);
/* Drops every pending delta. */
void counters_clear(struct counters *c);

#endif
