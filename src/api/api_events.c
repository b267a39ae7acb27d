/*
 * api_events.c - the provenance routes (API.md §9.11-§9.15).
 *
 *   GET  /api/products/events     PUBLIC  the chain in seq order + §4.4 check
 *   POST /api/products/events     BRAND   append one event (type whitelist)
 *   POST /api/products/history    BRAND   the same event on up to 50 products
 *   POST /api/products/transfer   BRAND   transferred event + status, atomic
 *   POST /api/products/recall     BRAND   recalled event + status + alert, atomic
 *
 * Every append goes through chain_append() (compare-and-swap on the chain
 * head), with the writes that must land together with the event as its
 * extras ([D22]).  history checks every product (existence and brand)
 * before it writes anything: an unknown id answers 404 and nothing is
 * appended ([D41]).
 */
#include "api/api_events.h"

#include <stdio.h>
#include <string.h>

#include "api/api_products.h"
#include "api/product_decode.h"
#include "core/alert.h"
#include "core/chain.h"
#include "core/event.h"
#include "core/keys.h"
#include "core/product.h"
#include "util/err.h"

/* ---- GET /api/products/events ---- */

void api_products_events_get(struct api_req *r)
{
    const char *pid = api_query(r, "productId");
    cJSON *events = NULL;
    const cJSON *ev;
    struct jsonw *w;
    int rc;

    if (!api_query_ok(r))
        return;
    if (!pid) {
        api_error(r, 400, "productId is required");
        return;
    }
    if (pd_id_ok(pid)) {
        rc = chain_list(api_store(r), pid, &events);
        if (rc) {
            api_fail(r, "Internal error", rc);
            return;
        }
    } else {
        events = cJSON_CreateArray(); /* cannot exist: an empty chain */
    }
    w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_key(w, "events");
    jsonw_arr(w);
    cJSON_ArrayForEach(ev, events)
    {
        event_write_list_json(w, ev);
    }
    jsonw_end(w);
    jsonw_kint(w, "count", cJSON_GetArraySize(events));
    jsonw_kbool(w, "chainValid", chain_valid(events));
    jsonw_end(w);
    cJSON_Delete(events);
}

/*
 * Loads the product addressed by a body and checks the caller may act for
 * its brand.  On success returns 0 with *out; otherwise has answered
 * (404/401/403/500) and returns non-zero.
 */
static int load_owned(struct api_req *r, const char *pid, const char *fail_msg, cJSON **out)
{
    int rc = prod_get(r, pid, out);
    if (rc == ERR_NOTFOUND) {
        api_error(r, 404, "Product not found");
        return rc;
    }
    if (rc) {
        api_fail(r, fail_msg, rc);
        return rc;
    }
    if (!api_require_brand(r, product_str(*out, "brandId"))) {
        cJSON_Delete(*out);
        *out = NULL;
        return ERR_INVALID;
    }
    return 0;
}

/* A condition-only write: the product still exists. */
static struct store_write product_exists_check(const cJSON *product)
{
    return (struct store_write){.kind = STORE_W_CHECK,
                                .pk = product_str(product, "PK"),
                                .sk = KEY_SK_META,
                                .cond = {.kind = STORE_COND_EXISTS}};
}

/* Answers an append failure: full chain -> 400, else 500. */
static void append_failed(struct api_req *r, const char *fail_msg, int rc)
{
    if (rc == ERR_TOOBIG)
        api_error(r, 400, "Provenance chain is full");
    else
        api_fail(r, fail_msg, rc);
}

/* ---- POST /api/products/events ---- */

void api_products_events_post(struct api_req *r)
{
    static const char *fail_msg = "Failed to create event";
    struct pd_event in;
    struct chain_appended app;
    cJSON *body, *product = NULL, *coords = NULL;
    struct store_write check;
    struct jsonw *w;
    char err[192];
    int rc;

    body = api_body(r);
    if (!body)
        return;
    if (pd_event(body, &in, err, sizeof err)) {
        api_error(r, 400, err);
        return;
    }
    if (load_owned(r, in.product_id, fail_msg, &product))
        return;
    if (in.has_coordinates) {
        coords = cJSON_CreateObject();
        cJSON_AddNumberToObject(coords, "lat", in.lat);
        cJSON_AddNumberToObject(coords, "lng", in.lng);
    }
    struct event_fields f = {.product_id = product_str(product, "productId"),
                             .type = in.type,
                             .actor = in.actor,
                             .timestamp = r->now_iso,
                             .data = in.data,
                             .location = in.location,
                             .with_coordinates = true,
                             .coordinates = coords};
    check = product_exists_check(product);
    rc = chain_append(api_store(r), &f, &check, 1, &app, NULL);
    if (rc == ERR_CONDITION) {
        api_error(r, 404, "Product not found");
        goto out;
    }
    if (rc) {
        append_failed(r, fail_msg, rc);
        goto out;
    }
    (void)api_audit(r, "event.appended", product_str(product, "brandId"), f.product_id, in.type);
    w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_kstr(w, "hash", app.hash);
    jsonw_kstr(w, "previousHash", app.previous_hash);
    jsonw_kstr(w, "timestamp", r->now_iso);
    jsonw_kstr(w, "type", in.type);
    jsonw_end(w);
out:
    cJSON_Delete(coords);
    cJSON_Delete(product);
}

/* ---- POST /api/products/history ---- */

void api_products_history(struct api_req *r)
{
    static const char *fail_msg = "Bulk event failed";
    struct pd_history in;
    cJSON *products[PD_BATCH_MAX] = {0};
    char hashes[PD_BATCH_MAX][CRYPTO_HEX_LEN + 1];
    cJSON *body, *data = NULL;
    struct jsonw *w;
    size_t done = 0;
    char err[192];
    int rc;

    body = api_body(r);
    if (!body)
        return;
    if (pd_history(body, &in, err, sizeof err)) {
        api_error(r, 400, err);
        return;
    }
    /* Every product must exist and belong to the caller before anything
     * is written. */
    for (size_t i = 0; i < in.n; i++)
        if (load_owned(r, in.product_ids[i], fail_msg, &products[i]))
            goto out;

    data = cJSON_CreateObject();
    cJSON_AddTrueToObject(data, "bulk");
    for (done = 0; done < in.n; done++) {
        struct chain_appended app;
        struct event_fields f = {.product_id = product_str(products[done], "productId"),
                                 .type = in.type,
                                 .actor = in.actor,
                                 .timestamp = r->now_iso,
                                 .data = data,
                                 .location = in.location};
        struct store_write check = product_exists_check(products[done]);
        rc = chain_append(api_store(r), &f, &check, 1, &app, NULL);
        if (rc) {
            append_failed(r, fail_msg, rc == ERR_CONDITION ? ERR_NOTFOUND : rc);
            goto out;
        }
        strcpy(hashes[done], app.hash);
        (void)api_audit(r, "event.appended", product_str(products[done], "brandId"), f.product_id,
                        in.type);
    }
    w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_kint(w, "processed", (int64_t)done);
    jsonw_key(w, "events");
    jsonw_arr(w);
    for (size_t i = 0; i < done; i++) {
        jsonw_obj(w);
        jsonw_kstr(w, "productId", product_str(products[i], "productId"));
        jsonw_kstr(w, "hash", hashes[i]);
        jsonw_end(w);
    }
    jsonw_end(w);
    jsonw_end(w);
out:
    for (size_t i = 0; i < in.n; i++)
        cJSON_Delete(products[i]);
    cJSON_Delete(data);
}

/* ---- POST /api/products/transfer ---- */

/* previousOwner ([D41]): the actor of the latest transferred event, else
 * the brand name.  Returned in the request arena. */
static int previous_owner(struct api_req *r, const cJSON *product, const char **out)
{
    cJSON *events = NULL;
    const cJSON *ev;
    const char *owner = product_str(product, "brandName");
    int rc;

    rc = chain_list(api_store(r), product_str(product, "productId"), &events);
    if (rc)
        return rc;
    cJSON_ArrayForEach(ev, events)
    {
        const char *type = product_str(ev, "type");
        if (type && strcmp(type, "transferred") == 0 && product_str(ev, "actor"))
            owner = product_str(ev, "actor");
    }
    *out = api_strdup(r, owner ? owner : "");
    cJSON_Delete(events);
    return 0;
}

void api_products_transfer(struct api_req *r)
{
    static const char *fail_msg = "Transfer failed";
    struct pd_transfer in;
    struct chain_appended app;
    struct store_write extra[2];
    struct store_action acts[2];
    cJSON *values[4] = {0};
    cJSON *body, *product = NULL, *data = NULL;
    const char *status, *prev_owner = NULL;
    struct jsonw *w;
    char err[192];
    int rc, n;

    body = api_body(r);
    if (!body)
        return;
    if (pd_transfer(body, &in, err, sizeof err)) {
        api_error(r, 400, err);
        return;
    }
    if (load_owned(r, in.product_id, fail_msg, &product))
        return;
    status = product_str(product, "status");
    if (status && strcmp(status, "recalled") == 0) {
        api_error(r, 400, "Cannot transfer a recalled product");
        goto out;
    }
    rc = previous_owner(r, product, &prev_owner);
    if (rc) {
        api_fail(r, fail_msg, rc);
        goto out;
    }
    data = cJSON_CreateObject();
    cJSON_AddStringToObject(data, "reason", in.reason ? in.reason : "ownership_transfer");
    cJSON_AddStringToObject(data, "previousOwner", prev_owner);
    n = prod_status_writes(r, product, "transferred", extra, acts, values);
    if (n < 0) {
        api_fail(r, fail_msg, n);
        goto out;
    }
    struct event_fields f = {.product_id = product_str(product, "productId"),
                             .type = "transferred",
                             .actor = in.new_owner,
                             .timestamp = r->now_iso,
                             .data = data,
                             .location = in.location};
    rc = chain_append(api_store(r), &f, extra, (size_t)n, &app, NULL);
    if (rc == ERR_CONDITION) {
        /* The product changed under us (recalled or deleted meanwhile). */
        api_error(r, 409, "Product was modified concurrently; retry");
        goto out;
    }
    if (rc) {
        append_failed(r, fail_msg, rc);
        goto out;
    }
    (void)api_audit(r, "product.transferred", product_str(product, "brandId"), f.product_id,
                    in.new_owner);
    w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_kbool(w, "success", true);
    jsonw_kstr(w, "hash", app.hash);
    jsonw_kstr(w, "previousHash", app.previous_hash);
    jsonw_kstr(w, "timestamp", r->now_iso);
    jsonw_kstr(w, "newOwner", in.new_owner);
    jsonw_end(w);
out:
    for (int i = 0; i < 4; i++)
        cJSON_Delete(values[i]);
    cJSON_Delete(data);
    cJSON_Delete(product);
}

/* ---- POST /api/products/recall ---- */

void api_products_recall(struct api_req *r)
{
    static const char *fail_msg = "Recall failed";
    struct pd_recall in;
    struct chain_appended app;
    struct store_write extra[3];
    struct store_action acts[2];
    cJSON *values[4] = {0};
    cJSON *body, *product = NULL, *data = NULL, *alert = NULL;
    const char *status, *brand_id;
    struct jsonw *w;
    struct key bpk;
    char err[192];
    int rc, n;

    body = api_body(r);
    if (!body)
        return;
    if (pd_recall(body, &in, err, sizeof err)) {
        api_error(r, 400, err);
        return;
    }
    if (load_owned(r, in.product_id, fail_msg, &product))
        return;
    brand_id = product_str(product, "brandId");
    status = product_str(product, "status");
    if (status && strcmp(status, "recalled") == 0) {
        api_error(r, 400, "Product already recalled");
        goto out;
    }
    data = cJSON_CreateObject();
    cJSON_AddStringToObject(data, "reason", in.reason);
    n = prod_status_writes(r, product, "recalled", extra, acts, values);
    if (n < 0) {
        api_fail(r, fail_msg, n);
        goto out;
    }
    struct alert_fields af = {
        .brand_id = brand_id,
        .type = "product_recall",
        .severity = "critical",
        .product_id = product_str(product, "productId"),
        .details =
            api_printf(r, "Product \"%s\" recalled: %s", product_str(product, "name"), in.reason),
        .timestamp = r->now_iso,
        .source = "api",
    };
    alert = alert_item_new(&af);
    if (!alert) {
        api_fail(r, fail_msg, ERR_INVALID);
        goto out;
    }
    extra[n++] = (struct store_write){
        .kind = STORE_W_PUT, .item = alert, .cond = {.kind = STORE_COND_NOT_EXISTS}};
    struct event_fields f = {.product_id = product_str(product, "productId"),
                             .type = "recalled",
                             .actor = in.issued_by ? in.issued_by : "System",
                             .timestamp = r->now_iso,
                             .data = data,
                             .omit_location = true};
    rc = chain_append(api_store(r), &f, extra, (size_t)n, &app, NULL);
    if (rc == ERR_CONDITION) {
        api_error(r, 409, "Product was modified concurrently; retry");
        goto out;
    }
    if (rc) {
        append_failed(r, fail_msg, rc);
        goto out;
    }
    if (key_brand_pk(&bpk, brand_id))
        api_counter_add(r, bpk.s, KEY_SK_STATS, "threatCount", 1);
    (void)api_audit(r, "product.recalled", brand_id, f.product_id, in.reason);
    w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_kbool(w, "success", true);
    jsonw_kstr(w, "hash", app.hash);
    jsonw_kstr(w, "timestamp", r->now_iso);
    jsonw_kstr(w, "status", "recalled");
    jsonw_end(w);
out:
    for (int i = 0; i < 4; i++)
        cJSON_Delete(values[i]);
    cJSON_Delete(alert);
    cJSON_Delete(data);
    cJSON_Delete(product);
}
