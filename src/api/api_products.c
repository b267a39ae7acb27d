/*
 * api_products.c - the product route table and the registration and
 * listing routes (API.md §9.6, §9.7, §9.9, §9.10), plus helpers shared by
 * the other product route files.
 *
 *   POST /api/products/register   BRAND       one product, one transaction
 *   POST /api/products/batch      BRAND       up to 50, each all-or-nothing
 *   GET  /api/products/list       BRAND       newest first, all pages up to limit
 *   GET  /api/products/search     OPTIONAL    code/productId public, brandId BRAND
 *
 * The other routes of the table live in api_verify.c, api_events.c and
 * api_claims.c.
 */
#include "api/api_products.h"

#include <stdio.h>
#include <string.h>

#include "api/api_claims.h"
#include "api/api_events.h"
#include "api/api_verify.h"
#include "api/pager.h"
#include "api/product_decode.h"
#include "core/brand.h"
#include "core/keys.h"
#include "core/product.h"
#include "util/err.h"

/* Most products /api/products/search?brandId= returns (as the original). */
#define SEARCH_BRAND_LIMIT 100

/* ---- shared helpers ---- */

int prod_get(struct api_req *r, const char *product_id, cJSON **out)
{
    struct key pk;

    *out = NULL;
    if (!pd_id_ok(product_id) || !key_product_pk(&pk, product_id))
        return ERR_NOTFOUND;
    return store_get(api_store(r), pk.s, KEY_SK_META, true, out);
}

const char *prod_user_agent(struct api_req *r)
{
    const char *ua = r->http ? http_request_header(r->http, "User-Agent") : NULL;
    return ua && *ua ? ua : "unknown";
}

const char *prod_user_agent_stored(struct api_req *r)
{
    const char *ua = prod_user_agent(r);
    size_t n = strlen(ua);
    char *s;

    if (n > PROD_UA_MAX)
        n = PROD_UA_MAX;
    s = api_alloc(r, n + 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)ua[i];
        s[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    s[n] = '\0';
    return s;
}

void prod_error_flag(struct api_req *r, int status, const char *flag, const char *msg)
{
    struct jsonw *w = api_json(r, status);
    jsonw_obj(w);
    jsonw_kbool(w, flag, false);
    jsonw_kstr(w, "error", msg);
    jsonw_end(w);
}

int prod_status_writes(struct api_req *r, const cJSON *product, const char *status,
                       struct store_write *w, struct store_action acts[2], cJSON *values[4])
{
    const char *pk = product_str(product, "PK");
    const char *old = product_str(product, "status");
    const char *pid = product_str(product, "productId");
    const char *created = product_str(product, "createdAt");
    struct key isk;
    cJSON *idx = NULL;
    int n = 0, rc;

    values[0] = cJSON_CreateString(status);
    values[1] = cJSON_CreateString(r->now_iso);
    values[2] = old ? cJSON_CreateString(old) : NULL;
    values[3] = NULL;
    acts[0] = (struct store_action){.kind = STORE_ACT_SET, .attr = "status", .value = values[0]};
    acts[1] = (struct store_action){.kind = STORE_ACT_SET, .attr = "updatedAt", .value = values[1]};
    w[n++] = (struct store_write){.kind = STORE_W_UPDATE,
                                  .pk = pk,
                                  .sk = KEY_SK_META,
                                  .acts = acts,
                                  .nacts = 2,
                                  .cond = old ? (struct store_cond){.kind = STORE_COND_ATTR_EQ,
                                                                    .attr = "status",
                                                                    .value = values[2]}
                                              : (struct store_cond){.kind = STORE_COND_EXISTS}};

    /* The index entry (E13) follows the product's status when it exists. */
    if (pid && created && key_product_index_sk(&isk, created, pid)) {
        rc = store_get(api_store(r), KEY_PK_PRODUCT_INDEX, isk.s, true, &idx);
        if (rc && rc != ERR_NOTFOUND)
            return rc;
        if (rc == 0) {
            /* Only the status changes there: the first action. */
            values[3] = cJSON_CreateString(isk.s);
            w[n++] = (struct store_write){.kind = STORE_W_UPDATE,
                                          .pk = KEY_PK_PRODUCT_INDEX,
                                          .sk = cJSON_GetStringValue(values[3]),
                                          .acts = acts,
                                          .nacts = 1,
                                          .cond = {.kind = STORE_COND_EXISTS}};
        }
        cJSON_Delete(idx);
    }
    return n;
}

/* Reads the brand profile for a registration: 0 with *out, or answers
 * (404/500) and returns non-zero. */
static int load_brand(struct api_req *r, const char *brand_id, const char *fail_msg, cJSON **out)
{
    struct key pk;
    int rc;

    *out = NULL;
    if (!brand_id_ok(brand_id) || !key_brand_pk(&pk, brand_id)) {
        api_error(r, 404, "Brand not found");
        return ERR_NOTFOUND;
    }
    rc = store_get(api_store(r), pk.s, KEY_SK_PROFILE, true, out);
    if (rc == ERR_NOTFOUND)
        api_error(r, 404, "Brand not found");
    else if (rc)
        api_fail(r, fail_msg, rc);
    return rc;
}

static void count_product(struct api_req *r, const char *brand_id)
{
    struct key pk;
    if (key_brand_pk(&pk, brand_id))
        api_counter_add(r, pk.s, KEY_SK_STATS, "productCount", 1);
}

/* ---- POST /api/products/register ---- */

static void h_register(struct api_req *r)
{
    static const char *fail_msg = "Failed to register product";
    struct pd_register in;
    struct product_reg_out out;
    struct buf qr = BUF_INIT(512);
    struct jsonw qw, *w;
    cJSON *body, *brand = NULL;
    char err[192];
    int rc;

    body = api_body(r);
    if (!body)
        return;
    if (pd_register(body, &in, err, sizeof err)) {
        api_error(r, 400, err);
        return;
    }
    if (!api_require_brand(r, in.brand_id))
        return;
    if (load_brand(r, in.brand_id, fail_msg, &brand))
        return;

    struct product_reg reg = {.brand_id = in.brand_id,
                              .brand_name = product_str(brand, "name"),
                              .name = in.name,
                              .sku = in.sku,
                              .category = in.category,
                              .description = in.description,
                              .image_url = in.image_url,
                              .location = in.location,
                              .metadata = in.metadata,
                              .created_at = r->now_iso,
                              .secret = api_signing_secret(r)};
    if (!reg.brand_name)
        reg.brand_name = "";
    rc = product_register(api_store(r), &reg, &out);
    if (rc == ERR_CONFLICT) {
        char *msg = in.sku ? api_printf(r, "Product \"%s\" (SKU: %s) already exists for this brand",
                                        in.name, in.sku)
                           : api_printf(r, "Product \"%s\" already exists for this brand", in.name);
        api_error(r, 409, msg);
        goto out;
    }
    if (rc == ERR_INVALID || rc == ERR_TOOBIG) {
        /* the store refused the item (limits): the input's fault */
        api_error(r, 400, "Invalid product data");
        goto out;
    }
    if (rc) {
        api_fail(r, fail_msg, rc);
        goto out;
    }
    count_product(r, in.brand_id);
    (void)api_audit(r, "product.registered", in.brand_id, out.product_id, in.name);

    jsonw_init(&qw, &qr);
    jsonw_obj(&qw);
    jsonw_kint(&qw, "v", 1);
    jsonw_kstr(&qw, "code", out.code);
    jsonw_kstr(&qw, "pid", out.product_id);
    jsonw_end(&qw);

    w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_kstr(w, "productId", out.product_id);
    jsonw_kstr(w, "verificationCode", out.code);
    jsonw_kstr(w, "hash", out.hash);
    jsonw_kstr(w, "signature", out.signature);
    jsonw_kstr(w, "verifyUrl", api_printf(r, "%s/verify/%s", api_base_url(r), out.code));
    jsonw_kstr(w, "qrData", buf_cstr(&qr));
    jsonw_end(w);
out:
    buf_free(&qr);
    cJSON_Delete(brand);
}

/* ---- POST /api/products/batch ---- */

static void h_batch(struct api_req *r)
{
    static const char *fail_msg = "Batch registration failed";
    struct pd_batch *in = api_alloc(r, sizeof *in);
    struct product_reg_out *outs = api_alloc(r, PD_BATCH_MAX * sizeof *outs);
    const char *names[PD_BATCH_MAX];
    size_t done = 0;
    struct jsonw *w;
    cJSON *body, *brand = NULL;
    char err[192];
    int rc;

    body = api_body(r);
    if (!body)
        return;
    if (pd_batch(body, in, err, sizeof err)) {
        api_error(r, 400, err);
        return;
    }
    if (!api_require_brand(r, in->brand_id))
        return;
    if (load_brand(r, in->brand_id, fail_msg, &brand))
        return;

    for (size_t i = 0; i < in->n; i++) {
        const struct pd_batch_item *it = &in->items[i];
        if (!it->name)
            continue; /* nameless items are skipped, as in the original */
        struct product_reg reg = {.brand_id = in->brand_id,
                                  .brand_name = product_str(brand, "name"),
                                  .name = it->name,
                                  .sku = it->sku,
                                  .category = it->category,
                                  .description = it->description,
                                  .location = it->location,
                                  .metadata = it->metadata,
                                  .batch = true,
                                  .created_at = r->now_iso,
                                  .secret = api_signing_secret(r)};
        if (!reg.brand_name)
            reg.brand_name = "";
        rc = product_register(api_store(r), &reg, &outs[done]);
        if (rc == ERR_CONFLICT)
            continue; /* duplicate (of the brand or of this batch): skipped */
        if (rc == ERR_INVALID || rc == ERR_TOOBIG) {
            api_error(r, 400, "Invalid product data");
            goto out;
        }
        if (rc) {
            api_fail(r, fail_msg, rc);
            goto out;
        }
        names[done++] = it->name;
        count_product(r, in->brand_id);
    }
    if (done)
        (void)api_audit(r, "product.batch_registered", in->brand_id, NULL,
                        api_printf(r, "%zu products", done));

    w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_kint(w, "registered", (int64_t)done);
    jsonw_key(w, "products");
    jsonw_arr(w);
    for (size_t i = 0; i < done; i++) {
        jsonw_obj(w);
        jsonw_kstr(w, "productId", outs[i].product_id);
        jsonw_kstr(w, "name", names[i]);
        jsonw_kstr(w, "verificationCode", outs[i].code);
        jsonw_kstr(w, "hash", outs[i].hash);
        jsonw_end(w);
    }
    jsonw_end(w);
    jsonw_end(w);
out:
    cJSON_Delete(brand);
}

/* ---- GET /api/products/list ---- */

struct list_ctx {
    cJSON *items;
    size_t want;
};

static int list_cb(void *arg, const cJSON *item)
{
    struct list_ctx *c = arg;
    const char *pid = product_str(item, "productId");
    const cJSON *it;

    if (!pid)
        return 0;
    cJSON_ArrayForEach(it, c->items)
    {
        if (strcmp(product_str(it, "productId"), pid) == 0)
            return 0; /* repeated productId */
    }
    cJSON_AddItemToArray(c->items, cJSON_Duplicate(item, 1));
    return (size_t)cJSON_GetArraySize(c->items) >= c->want ? 1 : 0;
}

static double scans_of(struct api_req *r, const cJSON *item)
{
    const char *pk = product_str(item, "PK");
    double n = product_scan_count(item);
    if (pk)
        n += api_counter_pending(r, pk, KEY_SK_META, "scanCount");
    return n;
}

/* Lists a brand's products newest first (GSI1 BRAND#<id> / PRODUCT#...). */
static int brand_products(struct api_req *r, const char *brand_id, size_t want, cJSON **out)
{
    struct key gpk;
    struct list_ctx c = {.want = want};
    int rc;

    *out = NULL;
    if (!key_brand_pk(&gpk, brand_id))
        return ERR_INVALID;
    struct store_query q = {.index = STORE_INDEX_GSI1,
                            .pk = gpk.s,
                            .sk_op = STORE_SK_BEGINS,
                            .sk = KEY_PFX_PRODUCT,
                            .forward = false};
    c.items = cJSON_CreateArray();
    rc = pager_each(api_store(r), &q, 0, list_cb, &c, NULL);
    if (rc) {
        cJSON_Delete(c.items);
        return rc;
    }
    *out = c.items;
    return 0;
}

static void h_list(struct api_req *r)
{
    const char *brand_id = api_query(r, "brandId");
    long limit;
    cJSON *items = NULL;
    const cJSON *it;
    struct jsonw *w;
    int rc;

    if (!api_query_ok(r))
        return;
    if (!brand_id) {
        api_error(r, 400, "brandId is required");
        return;
    }
    if (!api_require_brand(r, brand_id))
        return;
    limit = api_query_int(r, "limit", 100, 1, 500);
    if (!brand_id_ok(brand_id)) {
        items = cJSON_CreateArray();
    } else {
        rc = brand_products(r, brand_id, (size_t)limit, &items);
        if (rc) {
            api_fail(r, "Failed to list products", rc);
            return;
        }
    }
    w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_key(w, "products");
    jsonw_arr(w);
    cJSON_ArrayForEach(it, items)
    {
        product_write_list_json(w, it, scans_of(r, it));
    }
    jsonw_end(w);
    jsonw_kint(w, "count", cJSON_GetArraySize(items));
    jsonw_end(w);
    cJSON_Delete(items);
}

/* ---- GET /api/products/search ---- */

static void search_one(struct api_req *r, const char *code, const char *product_id)
{
    cJSON *lookup = NULL, *product = NULL;
    struct key pk;
    struct jsonw *w;
    int rc;

    if (code) {
        if (!pd_id_ok(code) || !key_verify_pk(&pk, code)) {
            prod_error_flag(r, 404, "found", "Code not found");
            return;
        }
        rc = store_get(api_store(r), pk.s, KEY_SK_META, true, &lookup);
        if (rc == ERR_NOTFOUND) {
            prod_error_flag(r, 404, "found", "Code not found");
            return;
        }
        if (rc) {
            api_fail(r, "Search failed", rc);
            return;
        }
        product_id = product_str(lookup, "productId");
    }
    rc = prod_get(r, product_id, &product);
    if (rc == ERR_NOTFOUND) {
        prod_error_flag(r, 404, "found", "Product not found");
    } else if (rc) {
        api_fail(r, "Search failed", rc);
    } else {
        w = api_json(r, 200);
        jsonw_obj(w);
        jsonw_kbool(w, "found", true);
        jsonw_key(w, "product");
        product_write_search_json(w, product, scans_of(r, product));
        jsonw_end(w);
    }
    cJSON_Delete(product);
    cJSON_Delete(lookup);
}

static void h_search(struct api_req *r)
{
    const char *code = api_query(r, "code");
    const char *product_id = api_query(r, "productId");
    const char *brand_id = api_query(r, "brandId");
    cJSON *items = NULL;
    const cJSON *it;
    struct jsonw *w;
    int rc;

    if (!api_query_ok(r))
        return;
    if (code || product_id) {
        search_one(r, code, code ? NULL : product_id);
        return;
    }
    if (!brand_id) {
        api_error(r, 400, "Provide code, productId, or brandId");
        return;
    }
    if (!api_require_brand(r, brand_id))
        return;
    if (!brand_id_ok(brand_id)) {
        items = cJSON_CreateArray();
    } else {
        rc = brand_products(r, brand_id, SEARCH_BRAND_LIMIT, &items);
        if (rc) {
            api_fail(r, "Search failed", rc);
            return;
        }
    }
    w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_kbool(w, "found", true);
    jsonw_kint(w, "count", cJSON_GetArraySize(items));
    jsonw_key(w, "products");
    jsonw_arr(w);
    cJSON_ArrayForEach(it, items)
    {
        product_write_search_brand_json(w, it, scans_of(r, it));
    }
    jsonw_end(w);
    jsonw_end(w);
    cJSON_Delete(items);
}

const struct api_route api_products_routes[] = {
    {HTTP_M_POST, "/api/products/register", API_BRAND, h_register},
    {HTTP_M_POST, "/api/products/batch", API_BRAND, h_batch},
    {HTTP_M_GET, "/api/products/verify", API_PUBLIC_RL, api_products_verify},
    {HTTP_M_GET, "/api/products/list", API_BRAND, h_list},
    {HTTP_M_GET, "/api/products/search", API_OPTIONAL, h_search},
    {HTTP_M_GET, "/api/products/events", API_PUBLIC, api_products_events_get},
    {HTTP_M_POST, "/api/products/events", API_BRAND, api_products_events_post},
    {HTTP_M_POST, "/api/products/history", API_BRAND, api_products_history},
    {HTTP_M_POST, "/api/products/transfer", API_BRAND, api_products_transfer},
    {HTTP_M_POST, "/api/products/recall", API_BRAND, api_products_recall},
    {HTTP_M_POST, "/api/products/claim", API_PUBLIC_RL, api_products_claim_post},
    {HTTP_M_GET, "/api/products/claim", API_OPTIONAL, api_products_claim_get},
    {HTTP_M_POST, "/api/products/dispute", API_PUBLIC_RL, api_products_dispute_post},
    {HTTP_M_GET, "/api/products/dispute", API_BRAND, api_products_dispute_get},
    {0},
};
