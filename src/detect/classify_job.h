/*
 * classify_job.h - model classification jobs: which alerts the optional
 * model classifier (--classifier gemini|openai) asks about, what it needs
 * to know of each, and, on DynamoDB, the job item that carries it from
 * the Streams detector to the API processes.
 *
 * A candidate is a change record of an alert the detector wrote with a
 * rule classification: an INSERT or MODIFY of THREAT#.../ALERT#... whose
 * image has source "detector" and aiAnalysis.model "rules" and is not
 * resolved.  The model's own update (aiAnalysis.model = the model) is no
 * candidate, so a classification never feeds itself.
 *
 * On SQLite the classifier reads the change stream and builds jobs in
 * memory (classify_job_from_record).  On DynamoDB the API processes
 * cannot read the stream, so the Streams detector turns every candidate
 * of a batch into a job item (classify_jobs_collect):
 *   PK CLASSIFY#<alertId>, SK JOB, GSI1PK CLASSIFY_PENDING,
 *   GSI1SK <alert time>#<alertId>, claimToken "", ttl now + 1 day,
 * plus the alert's keys and the fields of the model's prompt.  One item
 * per alert: a later record of the same alert re-puts it (with claimToken
 * "" again), so updates that arrive before a classifier takes the job are
 * folded into one model call.  API processes take jobs with claims
 * (api/job_claim.h) and delete them when done; a job nobody takes (no
 * model classifier running) expires with its ttl.
 *
 * The item is built and parsed only here; it comes back from the table,
 * so classify_job_parse checks every field like any hostile input.
 */
#ifndef GP_DETECT_CLASSIFY_JOB_H
#define GP_DETECT_CLASSIFY_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/brand.h"
#include "core/timeutil.h"
#include "detect/classify_model.h"
#include "detect/ddb_jobs.h"
#include "store/ddb_streams.h"
#include "store/store.h"

#define CLASSIFY_JOB_ID_MAX       128  /* alertId */
#define CLASSIFY_JOB_TYPE_MAX     64   /* alert type, each anomaly flag */
#define CLASSIFY_JOB_SEVERITY_MAX 15   /* the rules' severity */
#define CLASSIFY_JOB_COUNTRY_MAX  64   /* country of the alert */
#define CLASSIFY_JOB_DETAILS_MAX  2048 /* the rule narrative (longer: cut) */
#define CLASSIFY_JOB_FLAGS_MAX    16   /* anomaly flags kept */
#define CLASSIFY_JOB_RID_MAX      24   /* "m" + 20 digits */
/* A job nobody takes is gone after this long (no classifier running). */
#define CLASSIFY_JOB_TTL_S (24 * 3600)

/* What the model call and the writes after it need. */
struct classify_job {
    char *alert_pk, *alert_sk; /* THREAT#... / ALERT#... */
    char alert_id[CLASSIFY_JOB_ID_MAX + 1];
    char brand_id[BRAND_ID_MAX + 1];
    char *product_id; /* NULL when the alert has none */
    char type[CLASSIFY_JOB_TYPE_MAX + 1];
    char *details;                                     /* NULL when none */
    char rule_severity[CLASSIFY_JOB_SEVERITY_MAX + 1]; /* "" when none */
    char country[CLASSIFY_JOB_COUNTRY_MAX + 1];        /* "" when none */
    char alert_time[ISO_LEN + 1];                      /* lastSeen, else timestamp */
    /* Names the model's ops-log entry, derived from the change record
     * ("m<seq>"): a replay of the record overwrites the entry instead of
     * adding one. */
    char record_id[CLASSIFY_JOB_RID_MAX + 1];
    char flags[CLASSIFY_JOB_FLAGS_MAX][CLASSIFY_JOB_TYPE_MAX + 1];
    size_t nflags;
};

/* True for a record of an alert the detector (re)classified by rules. */
bool classify_job_candidate(const struct stream_record *r);

/* Fills *j from candidate record r (its image and seq).  0, or
 * ERR_INVALID when a required field is missing or out of bounds (alertId,
 * brandId, type, an ISO lastSeen/timestamp); *j is then empty.  Clear
 * with classify_job_clear. */
int classify_job_from_record(const struct stream_record *r, struct classify_job *j);

/* The job item of j, free (claimToken ""), expiring CLASSIFY_JOB_TTL_S
 * after now_ms.  NULL when a key cannot be built.  The caller owns it. */
cJSON *classify_job_item(const struct classify_job *j, int64_t now_ms);

/* Parses a job item read from the table into *j.  0, or ERR_INVALID for
 * anything malformed or out of bounds (*j is then empty). */
int classify_job_parse(const cJSON *item, struct classify_job *j);

void classify_job_clear(struct classify_job *j);

/* The model's input for j; flags (CLASSIFY_JOB_FLAGS_MAX entries) holds
 * the pointers in->flags refers to.  Valid while j is. */
void classify_job_input(const struct classify_job *j, struct classify_model_input *in,
                        const char *flags[CLASSIFY_JOB_FLAGS_MAX]);

/*
 * The presence marker (KEY_PK_CLASSIFIER / KEY_SK_PRESENCE): written by
 * every API process that runs a model, every CLASSIFY_PRESENCE_REFRESH_S
 * (scaled), with "until" = now + CLASSIFY_PRESENCE_TTL_S (scaled) and a
 * ttl; read by the Streams detectors at most every
 * CLASSIFY_PRESENCE_CHECK_S (scaled), which write jobs only while "until"
 * is in the future.  Without any model running, no job is written (no
 * write capacity spent, no day of stale jobs for a model started later).
 */
#define CLASSIFY_PRESENCE_REFRESH_S 20.0
#define CLASSIFY_PRESENCE_TTL_S     60.0
#define CLASSIFY_PRESENCE_CHECK_S   10.0
/* The marker item, valid until until_ms. */
cJSON *classify_presence_item(int64_t until_ms, int64_t now_ms);
/* Its "until" (epoch ms); 0 for a missing or malformed item. */
int64_t classify_presence_until(const cJSON *item);

/* The classification jobs of a Streams batch, put into sink (see
 * ddbd_sink_put): one per alert with a candidate record in recs[0..n),
 * built from the alert's last candidate record there (a transaction
 * cannot write one item twice, and the last record is the alert's newest
 * state).  Records that are no candidates or fail
 * classify_job_from_record are skipped.  0, or the error of the put. */
int classify_jobs_collect(const struct ddbs_record *recs, size_t n, int64_t now_ms,
                          const struct ddbd_sink *sink);

#endif
