/*
 * ddb_jobs.c - the work a batch of DynamoDB Streams records leaves for the
 * API processes (ddb_jobs.h).
 */
#include "detect/ddb_jobs.h"

#include "detect/classify_job.h"
#include "detect/webhook_fanout.h"
#include "util/err.h"

int ddbd_sink_put(const struct ddbd_sink *k, cJSON *item)
{
    if (k->careful) {
        const struct store_cond absent = {.kind = STORE_COND_NOT_EXISTS};
        int rc = store_put(k->careful, item, &absent);
        cJSON_Delete(item);
        return rc == ERR_CONDITION ? 0 : rc;
    }
    wset_unit(k->ws, WSET_FREE);
    return wset_put(k->ws, item, NULL);
}

bool ddbd_jobs_wanted(const struct ddbs_record *r, bool classify)
{
    /* an alert update may be a delivery without being a classification
     * candidate (a recall, the model's own update) */
    return (classify && classify_job_candidate(&r->r)) ||
           store_stream_match(webhook_fanout_filter(), r->r.kind, r->r.pk, r->r.sk);
}

int ddbd_jobs_collect(const struct det_proc_cfg *pc, const struct ddbs_record *recs, size_t n,
                      struct wset *ws, bool careful)
{
    const struct ddbd_sink k = {.ws = ws, .careful = careful ? pc->s : NULL};
    int rc = webhook_fanout_collect(pc->s, recs, n, pc->now_ms, &k);
    if (!rc && pc->classify_jobs)
        rc = classify_jobs_collect(recs, n, pc->now_ms, &k);
    return rc;
}
