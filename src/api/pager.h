/*
 * pager.h - reading a store query across pages (D44: the original only
 * ever read the first page).  Used by the brand, threat, scan and ops-log
 * handlers, which either need every item of a range (stats) or the first
 * N items of a range (lists).
 */
#ifndef GP_API_PAGER_H
#define GP_API_PAGER_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "store/store.h"

/* Called once per item, in query order.  Return 0 to continue, 1 to
 * stop, or a negative ERR_* to stop with that error.  The item is
 * borrowed (valid during the call only). */
typedef int (*pager_fn)(void *arg, const cJSON *item);

/* Runs q (its start and limit are ignored) page after page, calling fn
 * for at most max items (0: no cap).  *seen (may be NULL) receives the
 * number of items passed to fn.  Returns 0 (also when fn stopped early)
 * or the store's / fn's negative ERR_*. */
int pager_each(struct store *s, const struct store_query *q, size_t max, pager_fn fn, void *arg,
               size_t *seen);

/* Collects the first max items (0: all) of q into a new JSON array owned
 * by the caller; on error *out is NULL and a negative ERR_* is returned. */
/* Moves every element of the array src to the end of the array dst and
 * frees src (NULL src: nothing). */
void pager_move_all(cJSON *dst, cJSON *src);

int pager_collect(struct store *s, const struct store_query *q, size_t max, cJSON **out);

#endif
