/*
 * api_scans.c - GET /api/scans?productId=&limit= (API.md §9.23).
 *
 * The newest `limit` scans of one product (1..500, default 50) as rows
 * without the raw ip or user agent, and their locations grouped by
 * (city, country), Unknown included, top 10.  The route is BRAND: the
 * product is read first to learn its brand, so a key of another brand
 * gets 403 and no scan data.
 */
#include "api/api_scans.h"

#include <string.h>

#include "api/pager.h"
#include "core/keys.h"
#include "core/scan.h"
#include "store/store.h"
#include "util/err.h"

#define SCANS_DEFAULT_LIMIT 50
#define SCANS_MAX_LIMIT     500
#define SCANS_TOP_LOCATIONS 10
/* Product ids are 32 hex chars; anything this long is not one. */
#define SCANS_PRODUCT_ID_MAX 128

/* True when id could be a product id (no '#', no control characters). */
static bool product_id_ok(const char *id)
{
    size_t n = strlen(id);

    if (!n || n > SCANS_PRODUCT_ID_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)id[i];
        if (c < 0x20 || c == 0x7f || c == '#')
            return false;
    }
    return true;
}

/* Reads the product's brandId.  ERR_NOTFOUND when there is no product. */
static int product_brand(struct api_req *r, const char *pk, const char **brand_id)
{
    cJSON *product = NULL;
    const cJSON *b;
    int rc;

    *brand_id = NULL;
    rc = store_get(api_store(r), pk, KEY_SK_META, true, &product);
    if (rc)
        return rc;
    b = cJSON_GetObjectItemCaseSensitive(product, "brandId");
    if (cJSON_IsString(b))
        *brand_id = api_strdup(r, b->valuestring);
    cJSON_Delete(product);
    return *brand_id ? 0 : ERR_INTERNAL;
}

static void scans_get(struct api_req *r)
{
    const char *pid = api_query(r, "productId");
    long limit = api_query_int(r, "limit", SCANS_DEFAULT_LIMIT, 1, SCANS_MAX_LIMIT);
    struct store_query q = {.sk_op = STORE_SK_BEGINS, .sk = KEY_PFX_SCAN, .forward = false};
    struct scan_loc_agg *locs = NULL;
    const char *brand_id;
    cJSON *scans = NULL;
    const cJSON *it;
    struct key pk;
    struct jsonw *w;
    int rc, n = 0;

    if (!api_query_ok(r))
        return;
    if (!pid) {
        api_error(r, 400, "productId is required");
        return;
    }
    if (!product_id_ok(pid) || !key_product_pk(&pk, pid)) {
        api_error(r, 404, "Product not found");
        return;
    }
    rc = product_brand(r, pk.s, &brand_id);
    if (rc == ERR_NOTFOUND) {
        api_error(r, 404, "Product not found");
        return;
    }
    if (rc) {
        api_fail(r, "Failed to fetch scans", rc);
        return;
    }
    if (!api_require_brand(r, brand_id))
        return;
    q.pk = pk.s;
    rc = pager_collect(api_store(r), &q, (size_t)limit, &scans);
    if (rc) {
        api_fail(r, "Failed to fetch scans", rc);
        return;
    }
    locs = scan_loc_agg_new();
    w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_key(w, "scans");
    jsonw_arr(w);
    cJSON_ArrayForEach(it, scans)
    {
        scan_write_row_json(w, it);
        scan_loc_agg_add_item(locs, it);
        n++;
    }
    jsonw_end(w);
    jsonw_key(w, "locations");
    scan_loc_agg_write(w, locs, SCANS_TOP_LOCATIONS, true);
    jsonw_kint(w, "totalScans", n);
    jsonw_end(w);
    scan_loc_agg_free(locs);
    cJSON_Delete(scans);
}

const struct api_route api_scans_routes[] = {
    {HTTP_M_GET, "/api/scans", API_BRAND, scans_get},
    {0},
};
