/*
 * classify_job.h - alerts to model classification jobs.  (Stub: to be
 * filled in.)
 */
#ifndef GP_DETECT_CLASSIFY_JOB_H
#define GP_DETECT_CLASSIFY_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "detect/wset.h"
#include "store/ddb_streams.h"

/* The classification jobs of recs[0..n) as WSET_FREE puts in ws. */
int classify_jobs_collect(const struct ddbs_record *recs, size_t n, int64_t now_ms,
                          struct wset *ws);

#endif
