/*
 * api_ops.c - GET /api/ops-log?limit=&days= (API.md §9.25), ADMIN.
 *
 * Entries live in one partition per UTC day (OPS_LOG#<YYYY-MM-DD>).  The
 * reader asks each of the last `days` days (1..31, default 7; the
 * original had no bound, D30) for its newest `limit` entries (1..500,
 * default 50), merges them newest first and keeps `limit`.  When that is
 * empty it falls back to the legacy OPS_LOG partition.  The response adds
 * "buckets": for every day queried (newest first), its day, partition
 * key, number of items read, how long that query took and whether it
 * failed, so an operator can see which daily partition is hot, slow or
 * broken; and "legacyFallback", true when the legacy partition was read.
 * A day whose query fails is reported with status "error" and the others
 * are still served; only when every day fails is the answer a 500.
 */
#include "api/api_ops.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "api/pager.h"
#include "core/keys.h"
#include "core/opslog.h"
#include "core/timeutil.h"
#include "store/store.h"
#include "util/err.h"

#define OPS_DEFAULT_LIMIT 50
#define OPS_MAX_LIMIT     500
#define OPS_DEFAULT_DAYS  7
#define OPS_MAX_DAYS      31

struct ops_bucket {
    char date[11];
    struct key pk;
    int items;
    double latency_ms;
    bool failed;
};

static void ops_log(struct api_req *r)
{
    long limit = api_query_int(r, "limit", OPS_DEFAULT_LIMIT, 1, OPS_MAX_LIMIT);
    long days = api_query_int(r, "days", OPS_DEFAULT_DAYS, 1, OPS_MAX_DAYS);
    struct ops_bucket b[OPS_MAX_DAYS];
    struct store_query q = {.sk_op = STORE_SK_ANY, .forward = false};
    struct opslog_stats st;
    cJSON *all = NULL, *page = NULL;
    const cJSON *it;
    struct jsonw *w;
    long failed = 0;
    bool legacy = false;
    int rc = 0, rc_last = 0;

    if (!api_query_ok(r))
        return;
    all = cJSON_CreateArray();
    if (!all) {
        api_fail(r, "Failed to load ops log", ERR_NOMEM);
        return;
    }
    for (long i = 0; i < days; i++) {
        int64_t t0;
        int qrc;

        memset(&b[i], 0, sizeof b[i]);
        time_day_bucket(r->now_ms - i * TIME_DAY_MS, b[i].date);
        if (!key_opslog_pk_day(&b[i].pk, b[i].date)) {
            rc = ERR_INTERNAL;
            break;
        }
        q.pk = b[i].pk.s;
        t0 = time_mono_us();
        qrc = pager_collect(api_store(r), &q, (size_t)limit, &page);
        b[i].latency_ms = (double)(time_mono_us() - t0) / 1000.0;
        if (qrc) {
            /* this day is reported as failed; the others still count */
            b[i].failed = true;
            failed++;
            rc_last = qrc;
            continue;
        }
        b[i].items = cJSON_GetArraySize(page);
        pager_move_all(all, page);
        page = NULL;
    }
    if (!rc && failed == days)
        rc = rc_last;
    if (!rc)
        opslog_sort_trim(all, (size_t)limit);
    if (!rc && cJSON_GetArraySize(all) == 0) {
        legacy = true;
        q.pk = KEY_PK_OPS_LOG_LEGACY;
        rc = pager_collect(api_store(r), &q, (size_t)limit, &page);
        if (!rc) {
            pager_move_all(all, page);
            page = NULL;
        }
    }
    if (rc) {
        api_fail(r, "Failed to load ops log", rc);
        cJSON_Delete(all);
        return;
    }

    opslog_stats_compute(all, &st);
    w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_key(w, "entries");
    jsonw_arr(w);
    cJSON_ArrayForEach(it, all)
    {
        opslog_write_entry_json(w, it);
    }
    jsonw_end(w);
    jsonw_key(w, "stats");
    opslog_write_stats_json(w, &st);
    jsonw_key(w, "buckets");
    jsonw_arr(w);
    for (long i = 0; i < days; i++) {
        jsonw_obj(w);
        jsonw_kstr(w, "day", b[i].date);
        jsonw_kstr(w, "date", b[i].date); /* the first name of "day", kept for clients */
        jsonw_kstr(w, "pk", b[i].pk.s);
        jsonw_kint(w, "items", b[i].items);
        /* Microsecond resolution is plenty. */
        jsonw_knum(w, "latencyMs", round(b[i].latency_ms * 1000.0) / 1000.0);
        jsonw_kstr(w, "status", b[i].failed ? "error" : "ok");
        jsonw_end(w);
    }
    jsonw_end(w);
    jsonw_kbool(w, "legacyFallback", legacy);
    jsonw_end(w);
    opslog_stats_free(&st);
    cJSON_Delete(all);
}

const struct api_route api_ops_routes[] = {
    {HTTP_M_GET, "/api/ops-log", API_ADMIN, ops_log},
    {0},
};
