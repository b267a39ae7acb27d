/*
 * webhook_fanout.h - stream records to webhook deliveries.  (Stub: to be
 * filled in.)
 */
#ifndef GP_DETECT_WEBHOOK_FANOUT_H
#define GP_DETECT_WEBHOOK_FANOUT_H

#include <stddef.h>
#include <stdint.h>

#include "detect/wset.h"
#include "store/ddb_streams.h"
#include "store/store.h"

/* The deliveries of recs[0..n) as WSET_FREE puts in ws. */
int webhook_fanout_collect(struct store *s, const struct ddbs_record *recs, size_t n,
                           int64_t now_ms, struct wset *ws);

#endif
