/*
 * ddb_jobs.h - the work a batch of DynamoDB Streams records leaves for the
 * API processes.
 *
 * On SQLite the webhook dispatcher and the model classifier read the
 * change stream themselves.  On DynamoDB only the Streams detectors read
 * it (DynamoDB Streams serves about two readers per shard), so the
 * detector turns the records of each batch into work items in the same
 * table: webhook deliveries (detect/webhook_fanout.h) and classification
 * jobs (detect/classify_job.h), each in a sparse GSI1 pending partition,
 * created free (claimToken "").  API processes take them from there
 * (api/job_claim.h).  The items are idempotent puts (their keys derive
 * from the record), written before the batch's checkpoint: a batch read
 * again after a crash writes the same items again, and none is lost.
 */
#ifndef GP_DETECT_DDB_JOBS_H
#define GP_DETECT_DDB_JOBS_H

#include <stdbool.h>
#include <stddef.h>

#include "detect/process.h"
#include "detect/wset.h"
#include "store/ddb_streams.h"

/* Where the work items of a batch go: into the batch's write set, as
 * WSET_FREE units; or, when careful is set (the store), straight into
 * it, each only if absent (see ddbd_jobs_collect). */
struct ddbd_sink {
    struct wset *ws;
    struct store *careful;
};

/* Puts item (owned) into k.  0, or the error of the put (a careful put
 * that finds the item already there is 0: the earlier try wrote it). */
int ddbd_sink_put(const struct ddbd_sink *k, cJSON *item);

/* True when r leaves work for the API processes (a classification job
 * only when classify, see det_proc_cfg.classify_jobs): a batch holding
 * only such records (and no record the detector itself checks) must
 * still be applied, not skipped. */
bool ddbd_jobs_wanted(const struct ddbs_record *r, bool classify);

/* Adds the work items of recs[0..n) to ws (WSET_FREE units): webhook
 * deliveries, and classification jobs when pc->classify_jobs.  careful:
 * the batch is read again after a try that failed (a throttled or
 * conflicting transaction, a lost race): the earlier try may have
 * committed some of the items and the API processes may have finished
 * them since, so each is instead put into the store at once, only if
 * absent (a delivery is not sent again, a finished job is at worst asked
 * about once more).  After a crash the next reader cannot know: the
 * items are rewritten and a delivery may be sent twice, with the same id. */
int ddbd_jobs_collect(const struct det_proc_cfg *pc, const struct ddbs_record *recs, size_t n,
                      struct wset *ws, bool careful);

#endif
