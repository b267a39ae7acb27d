/*
 * api_admin.c - operator endpoints (ADMIN): the detector's dead letters.
 *
 * GET /api/admin/dlq?days=&limit= lists parked change-stream records:
 * one DLQ#<YYYY-MM-DD> partition per day for the last `days` days (1..31,
 * default 7), newest day first and newest record first inside a day,
 * cut at `limit` (1..500, default 100).
 *
 * POST /api/admin/dlq/replay {"seq": n} | {"all": true} [, "days": d]
 * runs parked records through the detector's processing again
 * (detect/dlq_replay.h) in stream order and deletes each one that
 * succeeds, in the request's group commit.  `days` (1..31, default 31)
 * bounds the partitions searched; "all" handles at most
 * ADMIN_REPLAY_MAX records per call and says whether more remain.  A
 * record that still cannot be processed stays parked and is reported
 * with the reason.  If the store fails half way through a replay the
 * whole commit is failed (app_fail_commit) so no partial effect of it
 * becomes durable.
 */
#include "api/api_admin.h"

#include <stdlib.h>
#include <string.h>

#include "api/api_partitions.h"
#include "api/app.h"
#include "api/detect_driver.h"
#include "api/pager.h"
#include "core/timeutil.h"
#include "detect/checks.h"
#include "detect/consumer.h"
#include "detect/dlq.h"
#include "detect/dlq_replay.h"
#include "store/store.h"
#include "util/err.h"

#define ADMIN_DLQ_DEFAULT_DAYS  7
#define ADMIN_DLQ_MAX_DAYS      31
#define ADMIN_DLQ_DEFAULT_LIMIT 100
#define ADMIN_DLQ_MAX_LIMIT     500
#define ADMIN_REPLAY_MAX        100
/* Dead letters read per day partition when replaying (dlq_list's cap). */
#define ADMIN_REPLAY_SCAN 1000

static void dlq_get(struct api_req *r)
{
    long days = api_query_int(r, "days", ADMIN_DLQ_DEFAULT_DAYS, 1, ADMIN_DLQ_MAX_DAYS);
    long limit = api_query_int(r, "limit", ADMIN_DLQ_DEFAULT_LIMIT, 1, ADMIN_DLQ_MAX_LIMIT);
    cJSON *all = NULL;
    const cJSON *it;
    struct jsonw *w;
    int rc = 0;

    if (!api_query_ok(r))
        return;
    all = cJSON_CreateArray();
    if (!all) {
        api_fail(r, "Internal error", ERR_NOMEM);
        return;
    }
    for (long d = 0; d < days && cJSON_GetArraySize(all) < limit; d++) {
        char day[11];
        cJSON *page = NULL;
        time_day_bucket(r->now_ms - (int64_t)d * TIME_DAY_MS, day);
        rc = dlq_list(api_store(r), day, (int)(limit - cJSON_GetArraySize(all)), &page);
        if (rc)
            break;
        pager_move_all(all, page);
    }
    if (rc) {
        api_fail(r, "Failed to read the dead-letter queue", rc);
        goto out;
    }
    w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_key(w, "records");
    jsonw_arr(w);
    cJSON_ArrayForEach(it, all)
    {
        dlq_write_json(w, it);
    }
    jsonw_end(w);
    jsonw_kint(w, "count", cJSON_GetArraySize(all));
    jsonw_kint(w, "days", days);
    jsonw_end(w);
out:
    cJSON_Delete(all);
}

/* Reads the dead letters of the last `days` days: all of them, or only
 * those of sequence `seq` (> 0).  On success *out is a new array. */
static int collect(struct api_req *r, long days, double seq, cJSON **out)
{
    cJSON *all = cJSON_CreateArray();
    int rc = all ? 0 : ERR_NOMEM;

    for (long d = 0; !rc && d < days; d++) {
        char day[11];
        cJSON *page = NULL, *it, *next;
        time_day_bucket(r->now_ms - (int64_t)d * TIME_DAY_MS, day);
        rc = dlq_list(api_store(r), day, ADMIN_REPLAY_SCAN, &page);
        if (rc)
            break;
        for (it = page->child; it; it = next) {
            next = it->next;
            if (seq > 0 && dlq_seq(it) != seq)
                continue;
            cJSON_DetachItemViaPointer(page, it);
            cJSON_AddItemToArray(all, it);
        }
        cJSON_Delete(page);
    }
    if (rc) {
        cJSON_Delete(all);
        all = NULL;
    }
    *out = all;
    return rc;
}

static void write_result(struct jsonw *w, const struct dlq_replay_result *res)
{
    jsonw_obj(w);
    jsonw_kint(w, "seq", (int64_t)res->seq);
    jsonw_kbool(w, "replayed", res->replayed);
    if (res->replayed) {
        jsonw_kint(w, "alertsCreated", (int64_t)res->counts.alerts_created);
        jsonw_kint(w, "alertsUpdated", (int64_t)res->counts.alerts_updated);
        jsonw_kint(w, "opsLog", (int64_t)res->counts.opslog);
    } else {
        jsonw_kstr(w, "error", res->error);
    }
    jsonw_end(w);
}

static void dlq_replay(struct api_req *r)
{
    cJSON *body = api_body(r);
    const cJSON *all_flag;
    double seq = 0, daysd = 0;
    long days = ADMIN_DLQ_MAX_DAYS;
    struct det_proc_cfg pc;
    struct detect_driver *drv = app_detector(r->app);
    struct dlq_replay_result *res = NULL;
    cJSON *items = NULL;
    const cJSON **vec = NULL;
    size_t n = 0, todo, replayed = 0, failed = 0;
    struct jsonw *w;
    int has_seq, has_days, rc = 0;

    if (!body)
        return;
    has_seq = api_body_num(r, body, "seq", &seq);
    if (has_seq < 0)
        return;
    has_days = api_body_num(r, body, "days", &daysd);
    if (has_days < 0)
        return;
    all_flag = cJSON_GetObjectItemCaseSensitive(body, "all");
    if (all_flag && !cJSON_IsBool(all_flag) && !cJSON_IsNull(all_flag)) {
        api_error(r, 400, "all must be a boolean");
        return;
    }
    if (has_seq && (seq < 1 || seq != (double)(int64_t)seq || seq > 9007199254740992.0)) {
        api_error(r, 400, "seq must be a positive integer");
        return;
    }
    if (!has_seq && !cJSON_IsTrue(all_flag)) {
        api_error(r, 400, "seq or all is required");
        return;
    }
    if (has_days) {
        if (daysd < 1 || daysd > ADMIN_DLQ_MAX_DAYS || daysd != (double)(long)daysd) {
            api_error(r, 400, "days must be an integer from 1 to 31");
            return;
        }
        days = (long)daysd;
    }

    rc = collect(r, days, has_seq ? seq : 0, &items);
    if (rc) {
        api_fail(r, "Failed to read the dead-letter queue", rc);
        return;
    }
    n = (size_t)cJSON_GetArraySize(items);
    if (has_seq && n == 0) {
        api_error(r, 404, "Dead letter not found");
        goto out;
    }
    /* Stream order: a product's window state must see its records in
     * the order they happened. */
    vec = calloc(n ? n : 1, sizeof *vec);
    res = calloc(n ? n : 1, sizeof *res);
    if (!vec || !res) {
        api_fail(r, "Internal error", ERR_NOMEM);
        goto out;
    }
    {
        size_t i = 0;
        const cJSON *it;
        cJSON_ArrayForEach(it, items)
        {
            vec[i++] = it;
        }
    }
    qsort(vec, n, sizeof *vec, dlq_stream_order);
    todo = has_seq ? 1 : (n < ADMIN_REPLAY_MAX ? n : ADMIN_REPLAY_MAX);

    if (drv) {
        detect_driver_proc_cfg(drv, &pc);
        /* The replay reads and writes stored window states: first make
         * them current (the detector may hold deferred writes). */
        if (detect_driver_detector(drv)) {
            rc = detector_write_deferred(detect_driver_detector(drv));
            if (rc) {
                app_fail_commit(r->app, rc);
                api_fail(r, "Replay failed", rc);
                goto out;
            }
        }
    } else {
        memset(&pc, 0, sizeof pc);
        pc.s = api_store(r);
        pc.reader = DETECTOR_READER_DEFAULT;
        /* DynamoDB: scanCount is the Streams detector's to fold, so a
         * replayed scan counts it as the detector would have. */
        pc.fold_scan_counts = store_counters_by_detector(pc.s);
        pc.velocity.min_total = DET_VELOCITY_MIN_TOTAL;
        pc.velocity.min_rate = DET_VELOCITY_MIN_RATE;
    }
    pc.now_ms = r->now_ms;
    for (size_t i = 0; i < todo; i++) {
        rc = dlq_replay_item(&pc, vec[i], &res[i]);
        if (rc) {
            /* Part of this record's writes may have joined the batch. */
            app_fail_commit(r->app, rc);
            api_fail(r, "Replay failed", rc);
            goto out;
        }
        if (res[i].replayed)
            replayed++;
        else
            failed++;
    }
    if (drv)
        detect_driver_note_replay(drv, replayed, failed);

    w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_kint(w, "replayed", (int64_t)replayed);
    jsonw_kint(w, "failed", (int64_t)failed);
    jsonw_kbool(w, "remaining", n > todo);
    jsonw_key(w, "results");
    jsonw_arr(w);
    for (size_t i = 0; i < todo; i++)
        write_result(w, &res[i]);
    jsonw_end(w);
    jsonw_end(w);
out:
    free(vec);
    free(res);
    cJSON_Delete(items);
}

const struct api_route api_admin_routes[] = {
    {HTTP_M_GET, "/api/admin/dlq", API_ADMIN, dlq_get},
    {HTTP_M_POST, "/api/admin/dlq/replay", API_ADMIN, dlq_replay},
    {HTTP_M_GET, "/api/admin/partitions", API_ADMIN, api_admin_partitions}, /* api_partitions.c */
    {0},
};
