/*
 * webhook_fanout.c - stream records to webhook deliveries
 * (webhook_fanout.h).  (Stub: to be filled in.)
 */
#include "detect/webhook_fanout.h"

int webhook_fanout_collect(struct store *s, const struct ddbs_record *recs, size_t n,
                           int64_t now_ms, struct wset *ws)
{
    (void)s;
    (void)recs;
    (void)n;
    (void)now_ms;
    (void)ws;
    return 0;
}
