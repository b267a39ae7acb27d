/*
 * classify_job.c - alerts to model classification jobs
 * (classify_job.h).  (Stub: to be filled in.)
 */
#include "detect/classify_job.h"

int classify_jobs_collect(const struct ddbs_record *recs, size_t n, int64_t now_ms, struct wset *ws)
{
    (void)recs;
    (void)n;
    (void)now_ms;
    (void)ws;
    return 0;
}
