/*
 * api_threats.c - the threat alert routes (API.md §9.24 and D26).
 *
 *   GET  /api/threats?brandId=&limit=   BRAND  newest alerts, whole §6.4 objects
 *   POST /api/threats/resolve           BRAND  {brandId, alertId} -> {"resolved":true}
 *
 * Listing reads GSI1 BRAND#<brand> / THREAT#..., newest write first,
 * which sees every alert format (monthly buckets and the original's flat
 * partition); only when that is empty is the legacy flat partition read
 * directly, as the original did.
 *
 * Resolving must find an alert by id, but no key contains the id alone
 * (the GSI1 sort key is THREAT#<write time>#<alertId>).  Rather than make
 * every alert writer maintain a pointer item, resolve walks the brand's
 * GSI1 THREAT# range from the newest alert down (pages of the query, one
 * item in memory at a time) and stops at the first match.  The cost grows
 * with the brand's alert count, but resolving is a rare, manual action and
 * recent alerts, the ones usually resolved, are found first.  Resolving
 * twice is harmless: resolvedAt keeps the first time.
 */
#include "api/api_threats.h"

#include <stdlib.h>
#include <string.h>

#include "api/api_brands.h"
#include "api/brand_decode.h"
#include "api/pager.h"
#include "core/alert.h"
#include "core/keys.h"
#include "store/store.h"
#include "util/err.h"
#include "util/xalloc.h"

#define THREATS_DEFAULT_LIMIT 50
#define THREATS_MAX_LIMIT     500

static void threats_list(struct api_req *r)
{
    const char *id = api_brand_param(r, "brandId", "brandId is required");
    long limit = api_query_int(r, "limit", THREATS_DEFAULT_LIMIT, 1, THREATS_MAX_LIMIT);
    struct store_query q = {.sk_op = STORE_SK_BEGINS, .forward = false};
    cJSON *items = NULL;
    const cJSON *it;
    struct key pk;
    struct jsonw *w;
    int rc, n = 0;

    if (!id || !api_query_ok(r))
        return;
    if (!key_brand_pk(&pk, id)) {
        api_error(r, 400, "Invalid brandId");
        return;
    }
    q.index = STORE_INDEX_GSI1;
    q.pk = pk.s;
    q.sk = KEY_PFX_THREAT;
    rc = pager_collect(api_store(r), &q, (size_t)limit, &items);
    if (!rc && cJSON_GetArraySize(items) == 0) {
        /* Legacy flat partition THREAT#<brand> / ALERT#<ts>. */
        cJSON_Delete(items);
        items = NULL;
        if (!key_threat_legacy_pk(&pk, id)) {
            api_error(r, 400, "Invalid brandId");
            return;
        }
        q.index = STORE_INDEX_TABLE;
        q.pk = pk.s;
        q.sk = KEY_PFX_ALERT;
        rc = pager_collect(api_store(r), &q, (size_t)limit, &items);
    }
    if (rc) {
        api_fail(r, "Failed to fetch threats", rc);
        return;
    }
    w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_key(w, "threats");
    jsonw_arr(w);
    cJSON_ArrayForEach(it, items)
    {
        alert_write_json(w, it);
        n++;
    }
    jsonw_end(w);
    jsonw_kint(w, "count", n);
    jsonw_end(w);
    cJSON_Delete(items);
}

struct find_alert {
    const char *alert_id;
    char *pk, *sk; /* of the match, malloc'd */
};

static int find_alert_cb(void *arg, const cJSON *item)
{
    struct find_alert *f = arg;
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(item, "alertId");
    const cJSON *pk = cJSON_GetObjectItemCaseSensitive(item, "PK");
    const cJSON *sk = cJSON_GetObjectItemCaseSensitive(item, "SK");

    if (!cJSON_IsString(id) || strcmp(id->valuestring, f->alert_id) != 0)
        return 0;
    /* Only a real alert item (THREAT# partition, ALERT# sort key). */
    if (!cJSON_IsString(pk) || !cJSON_IsString(sk) || !key_after(pk->valuestring, KEY_PFX_THREAT) ||
        !key_after(sk->valuestring, KEY_PFX_ALERT))
        return 0;
    f->pk = xstrdup(pk->valuestring);
    f->sk = xstrdup(sk->valuestring);
    return 1;
}

static void threats_resolve(struct api_req *r)
{
    struct threat_resolve_req in;
    struct find_alert f = {0};
    struct store_query q = {.index = STORE_INDEX_GSI1,
                            .sk_op = STORE_SK_BEGINS,
                            .sk = KEY_PFX_THREAT,
                            .forward = false};
    cJSON *yes = NULL, *now = NULL, *body;
    struct key pk;
    char err[160];
    struct jsonw *w;
    int rc;

    body = api_body(r);
    if (!body)
        return;
    if (brand_decode_resolve(body, &in, err, sizeof err)) {
        /* Say 403 rather than 400 to a key of another brand. */
        if (in.brand_id && !api_require_brand(r, in.brand_id))
            return;
        api_error(r, 400, err);
        return;
    }
    if (!api_require_brand(r, in.brand_id))
        return;
    if (!key_brand_pk(&pk, in.brand_id)) {
        api_error(r, 400, "Invalid brandId");
        return;
    }
    q.pk = pk.s;
    f.alert_id = in.alert_id;
    rc = pager_each(api_store(r), &q, 0, find_alert_cb, &f, NULL);
    if (rc) {
        api_fail(r, "Failed to resolve threat", rc);
        goto out;
    }
    if (!f.pk) {
        api_error(r, 404, "Alert not found");
        goto out;
    }
    yes = cJSON_CreateTrue();
    now = cJSON_CreateString(r->now_iso);
    const struct store_action acts[2] = {
        {.kind = STORE_ACT_SET, .attr = "resolved", .value = yes},
        {.kind = STORE_ACT_SET_IF_NOT_EXISTS, .attr = "resolvedAt", .value = now},
    };
    const struct store_cond exists = {.kind = STORE_COND_EXISTS};
    rc = store_update(api_store(r), f.pk, f.sk, acts, 2, &exists, NULL);
    if (rc == ERR_CONDITION) {
        api_error(r, 404, "Alert not found");
        goto out;
    }
    if (!rc)
        rc = api_audit(r, "threat.resolved", in.brand_id, NULL, in.alert_id);
    if (rc) {
        api_fail(r, "Failed to resolve threat", rc);
        goto out;
    }
    w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_kbool(w, "resolved", true);
    jsonw_end(w);
out:
    cJSON_Delete(yes);
    cJSON_Delete(now);
    free(f.pk);
    free(f.sk);
}

const struct api_route api_threats_routes[] = {
    {HTTP_M_GET, "/api/threats", API_BRAND, threats_list},
    {HTTP_M_POST, "/api/threats/resolve", API_BRAND, threats_resolve},
    {0},
};
