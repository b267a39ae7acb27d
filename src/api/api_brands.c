/*
 * api_brands.c - the brand routes (API.md §9.1-§9.5).
 *
 *   POST /api/brands          ADMIN  create E1+E2+E3 atomically, issue a brand key
 *   GET  /api/brands?id=      BRAND  profile with live counters (no key attributes, D04)
 *   GET  /api/brands/list     ADMIN  every BRAND_INDEX entry, newest first (all pages)
 *   GET  /api/brands/stats    BRAND  counts over all products and alerts (D25, D44)
 *   GET  /api/brands/scans    BRAND  scan geography of the newest products
 *
 * Counters shown are the STATS item plus the deltas still pending in the
 * current group commit, so a client sees its own increments at once.
 * /api/brands/scans keeps the original's bounds on purpose: the newest
 * BRAND_SCANS_PRODUCTS products and the newest BRAND_SCANS_PER_PRODUCT
 * scans of each (at most 10,000 scan items per request), because the
 * answer is a "where are we scanned" picture, not an exact census.
 */
#include "api/api_brands.h"

#include <stdio.h>
#include <string.h>

#include "api/brand_decode.h"
#include "api/pager.h"
#include "core/brand.h"
#include "core/ids.h"
#include "core/keys.h"
#include "core/scan.h"
#include "store/store.h"
#include "util/err.h"

#define BRAND_SCANS_PRODUCTS      200
#define BRAND_SCANS_PER_PRODUCT   50
#define BRAND_SCANS_TOP_LOCATIONS 15
#define BRAND_SCANS_TOP_HOTSPOTS  10
/* Attempts at a fresh UUID when a brand id collides (D46). */
#define BRAND_CREATE_TRIES 3

const char *api_brand_param(struct api_req *r, const char *name, const char *missing_msg)
{
    const char *id = api_query(r, name);

    if (!api_query_ok(r))
        return NULL;
    if (!id) {
        api_error(r, 400, missing_msg);
        return NULL;
    }
    if (!api_require_brand(r, id))
        return NULL;
    if (!brand_id_ok(id)) {
        api_error(r, 400, "Invalid brandId");
        return NULL;
    }
    return id;
}

/* STATS of a brand plus the pending deltas of this commit. */
static int read_counters(struct api_req *r, const char *brand_id, struct brand_counters *c)
{
    struct key pk;
    cJSON *stats = NULL;
    int rc;

    if (!key_brand_pk(&pk, brand_id))
        return ERR_INVALID;
    rc = store_get(api_store(r), pk.s, KEY_SK_STATS, true, &stats);
    if (rc && rc != ERR_NOTFOUND)
        return rc;
    brand_counters_from_stats(stats, c);
    cJSON_Delete(stats);
    c->product_count += api_counter_pending(r, pk.s, KEY_SK_STATS, "productCount");
    c->scan_count += api_counter_pending(r, pk.s, KEY_SK_STATS, "scanCount");
    c->threat_count += api_counter_pending(r, pk.s, KEY_SK_STATS, "threatCount");
    return 0;
}

/* ---- POST /api/brands ---- */

/* Writes E1+E2+E3 and the brand's APIKEY# item in one transaction, each
 * conditional on being new, so that no brand exists without its
 * credential (on DynamoDB too, where a transaction is the only way to
 * make several items appear together), and retries with a fresh id and
 * key on the (improbable) collision.  On success id holds the brand id,
 * key the brand key and *profile_out the profile item (caller frees). */
static int create_items(struct api_req *r, const struct brand_create_req *in, char id[37],
                        char key[72], cJSON **profile_out)
{
    cJSON *profile = NULL, *stats = NULL, *index = NULL, *apikey = NULL;
    int rc = ERR_CONDITION;

    *profile_out = NULL;
    for (int t = 0; t < BRAND_CREATE_TRIES && rc == ERR_CONDITION; t++) {
        ids_uuid4(id);
        struct brand_fields f = {.id = id,
                                 .name = in->name,
                                 .domain = in->domain,
                                 .industry = in->industry,
                                 .logo_url = in->logo_url,
                                 .plan = "free",
                                 .created_at = r->now_iso};
        cJSON_Delete(profile);
        cJSON_Delete(stats);
        cJSON_Delete(index);
        cJSON_Delete(apikey);
        profile = brand_profile_item_new(&f);
        stats = brand_stats_item_new(id);
        index = brand_index_item_new(&f);
        apikey = api_brand_key_item(r, id, key);
        if (!profile || !stats || !index || !apikey) {
            rc = ERR_INTERNAL;
            break;
        }
        const struct store_write w[4] = {
            {.kind = STORE_W_PUT, .item = profile, .cond = {.kind = STORE_COND_NOT_EXISTS}},
            {.kind = STORE_W_PUT, .item = stats, .cond = {.kind = STORE_COND_NOT_EXISTS}},
            {.kind = STORE_W_PUT, .item = index, .cond = {.kind = STORE_COND_NOT_EXISTS}},
            {.kind = STORE_W_PUT, .item = apikey, .cond = {.kind = STORE_COND_NOT_EXISTS}},
        };
        rc = store_transact(api_store(r), w, 4, NULL);
    }
    if (!rc) {
        *profile_out = profile;
        profile = NULL;
    } else {
        memset(key, 0, 72);
    }
    cJSON_Delete(profile);
    cJSON_Delete(stats);
    cJSON_Delete(index);
    cJSON_Delete(apikey);
    return rc;
}

static void brands_create(struct api_req *r)
{
    struct brand_create_req in;
    char err[160], id[37], key[72] = "";
    cJSON *body, *profile = NULL;
    struct jsonw *w;
    int rc;

    body = api_body(r);
    if (!body)
        return;
    if (brand_decode_create(body, &in, err, sizeof err)) {
        api_error(r, 400, err);
        return;
    }
    rc = create_items(r, &in, id, key, &profile);
    if (rc) {
        api_fail(r, "Failed to create brand", rc);
        goto out;
    }
    rc = api_audit(r, "brand.created", id, NULL, in.name);
    if (rc) {
        api_fail(r, "Failed to create brand", rc);
        goto out;
    }
    w = api_json(r, 200);
    jsonw_obj(w);
    brand_write_created_members(w, profile);
    jsonw_kstr(w, "apiKey", key);
    jsonw_end(w);
out:
    memset(key, 0, sizeof key);
    cJSON_Delete(profile);
}

/* ---- GET /api/brands?id= ---- */

static void brands_get(struct api_req *r)
{
    const char *id = api_query(r, "id");
    struct brand_counters c;
    cJSON *profile = NULL;
    struct key pk;
    int rc;

    if (!api_query_ok(r))
        return;
    if (!id) {
        api_error(r, 400, "Brand ID is required");
        return;
    }
    if (!api_require_brand(r, id))
        return;
    if (!brand_id_ok(id) || !key_brand_pk(&pk, id)) {
        api_error(r, 404, "Brand not found");
        return;
    }
    rc = store_get(api_store(r), pk.s, KEY_SK_PROFILE, true, &profile);
    if (rc == ERR_NOTFOUND) {
        api_error(r, 404, "Brand not found");
        return;
    }
    if (!rc)
        rc = read_counters(r, id, &c);
    if (rc) {
        api_fail(r, "Internal error", rc);
        goto out;
    }
    brand_write_profile_json(api_json(r, 200), profile, &c);
out:
    cJSON_Delete(profile);
}

/* ---- GET /api/brands/list ---- */

static void brands_list(struct api_req *r)
{
    const struct store_query q = {
        .pk = KEY_PK_BRAND_INDEX, .sk_op = STORE_SK_BEGINS, .sk = KEY_PFX_BRAND, .forward = false};
    cJSON *items = NULL;
    const cJSON *it;
    struct jsonw *w;
    int rc, n = 0;

    /* Sort keys are BRAND#<createdAt>#<id>: descending order is newest first. */
    rc = pager_collect(api_store(r), &q, 0, &items);
    if (rc) {
        api_fail(r, "Failed to list brands", rc);
        return;
    }
    w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_key(w, "brands");
    jsonw_arr(w);
    cJSON_ArrayForEach(it, items)
    {
        brand_write_index_entry_json(w, it);
        n++;
    }
    jsonw_end(w);
    jsonw_kint(w, "count", n);
    jsonw_end(w);
    cJSON_Delete(items);
}

/* ---- GET /api/brands/stats?brandId= ---- */

struct stats_acc {
    struct api_req *r;
    size_t products, active, recalled, transferred;
    double scans;
    size_t threats, unresolved;
};

static int stats_product_cb(void *arg, const cJSON *item)
{
    struct stats_acc *a = arg;
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(item, "status");
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(item, "scanCount");
    const cJSON *pk = cJSON_GetObjectItemCaseSensitive(item, "PK");

    a->products++;
    if (cJSON_IsString(st)) {
        if (!strcmp(st->valuestring, "active"))
            a->active++;
        else if (!strcmp(st->valuestring, "recalled"))
            a->recalled++;
        else if (!strcmp(st->valuestring, "transferred"))
            a->transferred++;
    }
    if (cJSON_IsNumber(sc))
        a->scans += sc->valuedouble;
    /* Scans of this commit not folded into the product yet. */
    if (cJSON_IsString(pk))
        a->scans += api_counter_pending(a->r, pk->valuestring, KEY_SK_META, "scanCount");
    return 0;
}

static int stats_alert_cb(void *arg, const cJSON *item)
{
    struct stats_acc *a = arg;
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(item, "resolved");

    a->threats++;
    if (!cJSON_IsTrue(res))
        a->unresolved++;
    return 0;
}

static void brands_stats(struct api_req *r)
{
    const char *id = api_brand_param(r, "brandId", "brandId required");
    struct stats_acc a = {.r = r};
    struct brand_counters c;
    struct store_query q = {.index = STORE_INDEX_GSI1, .sk_op = STORE_SK_BEGINS};
    struct key gpk;
    struct jsonw *w;
    int rc;

    if (!id)
        return;
    if (!key_brand_pk(&gpk, id)) {
        api_error(r, 400, "Invalid brandId");
        return;
    }
    q.pk = gpk.s;
    rc = read_counters(r, id, &c);
    if (!rc) {
        q.sk = KEY_PFX_PRODUCT;
        rc = pager_each(api_store(r), &q, 0, stats_product_cb, &a, NULL);
    }
    if (!rc) {
        q.sk = KEY_PFX_THREAT;
        rc = pager_each(api_store(r), &q, 0, stats_alert_cb, &a, NULL);
    }
    if (rc) {
        api_fail(r, "Failed to get stats", rc);
        return;
    }
    w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_kint(w, "productCount", (int64_t)a.products);
    jsonw_kint(w, "activeProducts", (int64_t)a.active);
    jsonw_kint(w, "recalledProducts", (int64_t)a.recalled);
    jsonw_kint(w, "transferredProducts", (int64_t)a.transferred);
    jsonw_knum(w, "totalScans", a.scans);
    jsonw_kint(w, "threatCount", (int64_t)a.threats);
    jsonw_kint(w, "unresolvedThreats", (int64_t)a.unresolved);
    jsonw_key(w, "statsCounter");
    brand_write_counters_json(w, &c);
    jsonw_end(w);
}

/* ---- GET /api/brands/scans?brandId= ---- */

struct geo_acc {
    struct scan_loc_agg *locations;
    struct scan_loc_agg *hotspots;
    size_t total;
};

static int geo_scan_cb(void *arg, const cJSON *item)
{
    struct geo_acc *g = arg;
    const cJSON *country = cJSON_GetObjectItemCaseSensitive(item, "country");
    const cJSON *result = cJSON_GetObjectItemCaseSensitive(item, "result");

    g->total++;
    if (!cJSON_IsString(country) || !scan_country_known(country->valuestring))
        return 0;
    scan_loc_agg_add_item(g->locations, item);
    /* Hotspots: the same known locations, suspicious scans only. */
    if (cJSON_IsString(result) && !strcmp(result->valuestring, "suspicious"))
        scan_loc_agg_add_item(g->hotspots, item);
    return 0;
}

static void brands_scans(struct api_req *r)
{
    const char *id = api_brand_param(r, "brandId", "brandId required");
    struct geo_acc g = {0};
    struct store_query pq = {.index = STORE_INDEX_GSI1,
                             .sk_op = STORE_SK_BEGINS,
                             .sk = KEY_PFX_PRODUCT,
                             .forward = false};
    struct store_query sq = {.sk_op = STORE_SK_BEGINS, .sk = KEY_PFX_SCAN, .forward = false};
    cJSON *products = NULL;
    const cJSON *p;
    struct key gpk;
    struct jsonw *w;
    int rc;

    if (!id)
        return;
    if (!key_brand_pk(&gpk, id)) {
        api_error(r, 400, "Invalid brandId");
        return;
    }
    pq.pk = gpk.s;
    rc = pager_collect(api_store(r), &pq, BRAND_SCANS_PRODUCTS, &products);
    if (rc) {
        api_fail(r, "Failed to fetch scans", rc);
        return;
    }
    g.locations = scan_loc_agg_new();
    g.hotspots = scan_loc_agg_new();
    cJSON_ArrayForEach(p, products)
    {
        const cJSON *ppk = cJSON_GetObjectItemCaseSensitive(p, "PK");
        if (!cJSON_IsString(ppk) || !key_after(ppk->valuestring, KEY_PFX_PRODUCT))
            continue;
        sq.pk = ppk->valuestring;
        rc = pager_each(api_store(r), &sq, BRAND_SCANS_PER_PRODUCT, geo_scan_cb, &g, NULL);
        if (rc) {
            api_fail(r, "Failed to fetch scans", rc);
            goto out;
        }
    }
    w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_key(w, "locations");
    scan_loc_agg_write(w, g.locations, BRAND_SCANS_TOP_LOCATIONS, true);
    jsonw_key(w, "threatHotspots");
    scan_loc_agg_write(w, g.hotspots, BRAND_SCANS_TOP_HOTSPOTS, false);
    jsonw_kint(w, "totalScans", (int64_t)g.total);
    jsonw_end(w);
out:
    scan_loc_agg_free(g.locations);
    scan_loc_agg_free(g.hotspots);
    cJSON_Delete(products);
}

const struct api_route api_brands_routes[] = {
    {HTTP_M_POST, "/api/brands", API_ADMIN, brands_create},
    {HTTP_M_GET, "/api/brands", API_BRAND, brands_get},
    {HTTP_M_GET, "/api/brands/list", API_ADMIN, brands_list},
    {HTTP_M_GET, "/api/brands/stats", API_BRAND, brands_stats},
    {HTTP_M_GET, "/api/brands/scans", API_BRAND, brands_scans},
    {0},
};
