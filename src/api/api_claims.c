/*
 * api_claims.c - consumer ownership claims and disputes (API.md
 * §9.16-§9.19).
 *
 *   POST /api/products/claim     PUBLIC (RL)  conditional insert: one winner ([D48])
 *   GET  /api/products/claim     OPTIONAL     consumerName only for the brand ([D04])
 *   POST /api/products/dispute   PUBLIC (RL)  dispute + claim update + alert, atomic
 *   GET  /api/products/dispute   BRAND        newest 20 disputes
 *
 * The device fingerprint is sha256(client ip ":" user agent) with the one
 * client-IP rule of the platform ([D47]); e-mails are stored only as the
 * platform's peppered hash ([D05]).
 */
#include "api/api_claims.h"

#include <stdio.h>
#include <string.h>

#include "api/api_products.h"
#include "api/product_decode.h"
#include "core/alert.h"
#include "core/crypto.h"
#include "core/ids.h"
#include "core/keys.h"
#include "core/product.h"
#include "util/err.h"

#define DISPUTES_LIMIT 20

static const char *client_ip(struct api_req *r)
{
    return r->client_ip[0] ? r->client_ip : "unknown";
}

/* Reads PRODUCT#<id>/CLAIM: 0 with *out, ERR_NOTFOUND, or a store error. */
static int get_claim(struct api_req *r, const cJSON *product, cJSON **out)
{
    *out = NULL;
    return store_get(api_store(r), product_str(product, "PK"), KEY_SK_CLAIM, true, out);
}

static void answer_claimed(struct api_req *r, const cJSON *claim)
{
    struct jsonw *w = api_json(r, 409);
    jsonw_obj(w);
    jsonw_kstr(w, "error", "Product already claimed");
    jsonw_kbool(w, "claimed", true);
    jsonw_kstr(w, "claimedAt", product_str(claim, "claimedAt"));
    jsonw_end(w);
}

/* Loads a product for the public routes: 0 with *out, else answered. */
static int load_product(struct api_req *r, const char *pid, const char *fail_msg, cJSON **out)
{
    int rc = prod_get(r, pid, out);
    if (rc == ERR_NOTFOUND)
        api_error(r, 404, "Product not found");
    else if (rc)
        api_fail(r, fail_msg, rc);
    return rc;
}

/* ---- POST /api/products/claim ---- */

void api_products_claim_post(struct api_req *r)
{
    static const char *fail_msg = "Failed to claim product";
    struct pd_claim in;
    cJSON *body, *product = NULL, *claim = NULL, *item = NULL, *v_true = NULL, *v_now = NULL;
    char fp[CRYPTO_HEX_LEN + 1], email[CRYPTO_HEX_LEN + 1];
    struct jsonw *w;
    char err[192];
    int rc, failed = -1;

    body = api_body(r);
    if (!body)
        return;
    if (pd_claim(body, &in, err, sizeof err)) {
        api_error(r, 400, err);
        return;
    }
    if (load_product(r, in.product_id, fail_msg, &product))
        return;
    rc = get_claim(r, product, &claim);
    if (rc == 0) {
        answer_claimed(r, claim);
        goto out;
    }
    if (rc != ERR_NOTFOUND) {
        api_fail(r, fail_msg, rc);
        goto out;
    }

    crypto_fingerprint(client_ip(r), prod_user_agent(r), fp);
    if (in.email)
        api_email_hash(r, in.email, email);
    item = cJSON_CreateObject();
    cJSON_AddStringToObject(item, "PK", product_str(product, "PK"));
    cJSON_AddStringToObject(item, "SK", KEY_SK_CLAIM);
    cJSON_AddStringToObject(item, "productId", product_str(product, "productId"));
    cJSON_AddStringToObject(item, "brandId", product_str(product, "brandId"));
    cJSON_AddStringToObject(item, "consumerName",
                            in.consumer_name ? in.consumer_name : "Anonymous");
    if (in.email)
        cJSON_AddStringToObject(item, "email", email);
    else
        cJSON_AddNullToObject(item, "email");
    cJSON_AddStringToObject(item, "fingerprint", fp);
    cJSON_AddStringToObject(item, "ip", client_ip(r));
    cJSON_AddStringToObject(item, "claimedAt", r->now_iso);

    v_true = cJSON_CreateTrue();
    v_now = cJSON_CreateString(r->now_iso);
    struct store_action acts[2] = {
        {.kind = STORE_ACT_SET, .attr = "claimed", .value = v_true},
        {.kind = STORE_ACT_SET, .attr = "claimedAt", .value = v_now},
    };
    struct store_write wr[2] = {
        {.kind = STORE_W_PUT, .item = item, .cond = {.kind = STORE_COND_NOT_EXISTS}},
        {.kind = STORE_W_UPDATE,
         .pk = product_str(product, "PK"),
         .sk = KEY_SK_META,
         .acts = acts,
         .nacts = 2,
         .cond = {.kind = STORE_COND_EXISTS}},
    };
    rc = store_transact(api_store(r), wr, 2, &failed);
    if (rc == ERR_CONDITION && failed == 0) {
        /* Lost the race: the winner's claim is there now. */
        cJSON_Delete(claim);
        claim = NULL;
        rc = get_claim(r, product, &claim);
        if (rc == 0)
            answer_claimed(r, claim);
        else
            api_fail(r, fail_msg, rc);
        goto out;
    }
    if (rc == ERR_CONDITION) {
        api_error(r, 404, "Product not found");
        goto out;
    }
    if (rc) {
        api_fail(r, fail_msg, rc);
        goto out;
    }
    (void)api_audit(r, "product.claimed", product_str(product, "brandId"),
                    product_str(product, "productId"), NULL);
    w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_kbool(w, "success", true);
    jsonw_kstr(w, "claimedAt", r->now_iso);
    jsonw_kstr(w, "message",
               "Product claimed. Future scans from other devices will show a warning.");
    jsonw_end(w);
out:
    cJSON_Delete(v_true);
    cJSON_Delete(v_now);
    cJSON_Delete(item);
    cJSON_Delete(claim);
    cJSON_Delete(product);
}

/* ---- GET /api/products/claim ---- */

void api_products_claim_get(struct api_req *r)
{
    const char *pid = api_query(r, "productId");
    cJSON *claim = NULL;
    struct key pk;
    struct jsonw *w;
    int rc = ERR_NOTFOUND;

    if (!api_query_ok(r))
        return;
    if (!pid) {
        api_error(r, 400, "productId required");
        return;
    }
    if (pd_id_ok(pid) && key_product_pk(&pk, pid))
        rc = store_get(api_store(r), pk.s, KEY_SK_CLAIM, true, &claim);
    if (rc && rc != ERR_NOTFOUND) {
        api_fail(r, "Internal error", rc);
        return;
    }
    w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_kbool(w, "claimed", claim != NULL);
    if (claim) {
        const char *brand = product_str(claim, "brandId");
        cJSON *product = NULL;
        /* Claims always carry brandId; read the product for older ones. */
        if (!brand && prod_get(r, pid, &product) == 0)
            brand = api_strdup(r, product_str(product, "brandId"));
        cJSON_Delete(product);
        jsonw_kstr(w, "claimedAt", product_str(claim, "claimedAt"));
        jsonw_kstr(w, "consumerName",
                   brand && api_is_brand(r, brand) ? product_str(claim, "consumerName") : NULL);
    }
    jsonw_end(w);
    cJSON_Delete(claim);
}

/* ---- POST /api/products/dispute ---- */

void api_products_dispute_post(struct api_req *r)
{
    static const char *fail_msg = "Failed to submit dispute";
    struct pd_dispute in;
    cJSON *body, *product = NULL, *claim = NULL, *item = NULL, *alert = NULL, *orig;
    cJSON *v_true = NULL, *v_now = NULL;
    char fp[CRYPTO_HEX_LEN + 1], email[CRYPTO_HEX_LEN + 1], suffix[9];
    const char *brand_id, *name, *dispute_id, *details;
    struct key sk, bpk;
    struct jsonw *w;
    char err[192];
    int rc, failed = -1;

    body = api_body(r);
    if (!body)
        return;
    if (pd_dispute(body, &in, err, sizeof err)) {
        api_error(r, 400, err);
        return;
    }
    if (load_product(r, in.product_id, fail_msg, &product))
        return;
    rc = get_claim(r, product, &claim);
    if (rc == ERR_NOTFOUND) {
        api_error(r, 400, "No existing claim to dispute");
        goto out;
    }
    if (rc) {
        api_fail(r, fail_msg, rc);
        goto out;
    }
    crypto_fingerprint(client_ip(r), prod_user_agent(r), fp);
    if (product_str(claim, "fingerprint") &&
        crypto_ct_streq(fp, product_str(claim, "fingerprint"))) {
        api_error(r, 400, "You are the original claimant"); /* [D49] */
        goto out;
    }

    brand_id = product_str(product, "brandId");
    name = in.consumer_name ? in.consumer_name : "Anonymous";
    ids_random_hex(4, suffix);
    dispute_id = api_printf(r, "%s#%s", r->now_iso, suffix);
    if (!key_dispute_sk(&sk, r->now_iso, suffix)) {
        api_fail(r, fail_msg, ERR_INVALID);
        goto out;
    }
    if (in.email)
        api_email_hash(r, in.email, email);
    item = cJSON_CreateObject();
    cJSON_AddStringToObject(item, "PK", product_str(product, "PK"));
    cJSON_AddStringToObject(item, "SK", sk.s);
    cJSON_AddStringToObject(item, "disputeId", dispute_id);
    cJSON_AddStringToObject(item, "productId", product_str(product, "productId"));
    cJSON_AddStringToObject(item, "brandId", brand_id);
    cJSON_AddStringToObject(item, "consumerName", name);
    if (in.email)
        cJSON_AddStringToObject(item, "email", email);
    else
        cJSON_AddNullToObject(item, "email");
    if (in.order_number)
        cJSON_AddStringToObject(item, "orderNumber", in.order_number);
    else
        cJSON_AddNullToObject(item, "orderNumber");
    if (in.notes)
        cJSON_AddStringToObject(item, "notes", in.notes);
    else
        cJSON_AddNullToObject(item, "notes");
    cJSON_AddStringToObject(item, "fingerprint", fp);
    cJSON_AddStringToObject(item, "ip", client_ip(r));
    cJSON_AddStringToObject(item, "status", "open");
    cJSON_AddStringToObject(item, "createdAt", r->now_iso);
    orig = cJSON_AddObjectToObject(item, "originalClaim");
    if (product_str(claim, "claimedAt"))
        cJSON_AddStringToObject(orig, "claimedAt", product_str(claim, "claimedAt"));
    else
        cJSON_AddNullToObject(orig, "claimedAt");
    if (product_str(claim, "consumerName"))
        cJSON_AddStringToObject(orig, "claimedBy", product_str(claim, "consumerName"));
    else
        cJSON_AddNullToObject(orig, "claimedBy");

    details = api_printf(
        r,
        "Ownership dispute on \"%s\". Original claim: %s (%s). Disputant: %s%s%s. "
        "One of these is likely a counterfeit with a cloned tag.",
        product_str(product, "name") ? product_str(product, "name") : "",
        product_str(claim, "consumerName") ? product_str(claim, "consumerName") : "Anonymous",
        product_str(claim, "claimedAt") ? product_str(claim, "claimedAt") : "", name,
        in.order_number ? ". Order: " : "", in.order_number ? in.order_number : "");
    struct alert_fields af = {.brand_id = brand_id,
                              .type = "ownership_dispute",
                              .severity = "critical",
                              .product_id = product_str(product, "productId"),
                              .details = details,
                              .timestamp = r->now_iso,
                              .source = "api"};
    alert = alert_item_new(&af);
    if (!alert) {
        api_fail(r, fail_msg, ERR_INVALID);
        goto out;
    }

    v_true = cJSON_CreateTrue();
    v_now = cJSON_CreateString(r->now_iso);
    struct store_action acts[3] = {
        {.kind = STORE_ACT_SET, .attr = "disputed", .value = v_true},
        {.kind = STORE_ACT_SET, .attr = "disputedAt", .value = v_now},
        {.kind = STORE_ACT_ADD, .attr = "disputeCount", .delta = 1},
    };
    struct store_write wr[3] = {
        {.kind = STORE_W_PUT, .item = item, .cond = {.kind = STORE_COND_NOT_EXISTS}},
        {.kind = STORE_W_UPDATE,
         .pk = product_str(product, "PK"),
         .sk = KEY_SK_CLAIM,
         .acts = acts,
         .nacts = 3,
         .cond = {.kind = STORE_COND_EXISTS}},
        {.kind = STORE_W_PUT, .item = alert, .cond = {.kind = STORE_COND_NOT_EXISTS}},
    };
    rc = store_transact(api_store(r), wr, 3, &failed);
    if (rc) {
        api_fail(r, fail_msg, rc);
        goto out;
    }
    if (key_brand_pk(&bpk, brand_id))
        api_counter_add(r, bpk.s, KEY_SK_STATS, "threatCount", 1);
    (void)api_audit(r, "product.disputed", brand_id, product_str(product, "productId"), dispute_id);
    w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_kbool(w, "success", true);
    jsonw_kstr(w, "disputeId", dispute_id);
    jsonw_kstr(w, "status", "open");
    jsonw_kstr(w, "message",
               "Dispute submitted. The brand has been notified and will "
               "investigate. You may be contacted to verify your purchase.");
    jsonw_end(w);
out:
    cJSON_Delete(v_true);
    cJSON_Delete(v_now);
    cJSON_Delete(alert);
    cJSON_Delete(item);
    cJSON_Delete(claim);
    cJSON_Delete(product);
}

/* ---- GET /api/products/dispute ---- */

void api_products_dispute_get(struct api_req *r)
{
    const char *pid = api_query(r, "productId");
    cJSON *product = NULL;
    struct store_result res = {0};
    const cJSON *it;
    struct jsonw *w;
    int rc;

    if (!api_query_ok(r))
        return;
    if (!pid) {
        api_error(r, 400, "productId required");
        return;
    }
    if (load_product(r, pid, "Internal error", &product))
        return;
    if (!api_require_brand(r, product_str(product, "brandId")))
        goto out;
    struct store_query q = {.index = STORE_INDEX_TABLE,
                            .pk = product_str(product, "PK"),
                            .sk_op = STORE_SK_BEGINS,
                            .sk = KEY_PFX_DISPUTE,
                            .limit = DISPUTES_LIMIT,
                            .forward = false,
                            .consistent = true};
    rc = store_query(api_store(r), &q, &res);
    if (rc) {
        api_fail(r, "Internal error", rc);
        goto out;
    }
    w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_key(w, "disputes");
    jsonw_arr(w);
    cJSON_ArrayForEach(it, res.items)
    {
        const cJSON *orig = cJSON_GetObjectItemCaseSensitive(it, "originalClaim");
        jsonw_obj(w);
        jsonw_kstr(w, "consumerName", product_str(it, "consumerName"));
        jsonw_kstr(w, "orderNumber", product_str(it, "orderNumber"));
        jsonw_kstr(w, "status", product_str(it, "status"));
        jsonw_kstr(w, "createdAt", product_str(it, "createdAt"));
        jsonw_key(w, "originalClaim");
        jsonw_obj(w);
        jsonw_kstr(w, "claimedAt", product_str(orig, "claimedAt"));
        jsonw_kstr(w, "claimedBy", product_str(orig, "claimedBy"));
        jsonw_end(w);
        jsonw_kstr(w, "notes", product_str(it, "notes"));
        jsonw_end(w);
    }
    jsonw_end(w);
    jsonw_kint(w, "count", res.count);
    jsonw_end(w);
out:
    store_result_free(&res);
    cJSON_Delete(product);
}
