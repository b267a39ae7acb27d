/*
 * api_ingest.c - partner webhooks turned into provenance events
 * (API.md §9.30-§9.32, §4.5, [D02] [D15]-[D18] [D32]).
 *
 *   POST /api/ingest/pos        INGEST  sale -> sold
 *   POST /api/ingest/shipping   INGEST  carrier status -> shipped/received/custom
 *   POST /api/ingest/warehouse  INGEST  WMS action -> received/inspected/shipped/custom
 *
 * The X-Ingest-Key (resolved by app.c through auth.c) names an
 * integration and its brand; the product must belong to that brand (403
 * otherwise, like a brand key on another brand's product, §1.5).  With
 * --auth none and no key the caller is the admin: any product, and no
 * integration counters to update.
 *
 * The event goes through chain_append() (compare-and-swap on the chain
 * head), together with: a check that the product still exists, the
 * integration's lastEvent/eventCount update, and - when the partner sent
 * an Idempotency-Key header or an explicit timestamp - an IDEM#<digest>
 * item in the product's partition holding the 200 response.  A retried
 * delivery finds that item and gets the same response; nothing is
 * appended twice.  The response holds the event hash, which is known only
 * once the head is read: it is predicted from the head read here and, in
 * the rare case chain_append had to retry on a newer head, the IDEM item
 * is rewritten with the real hash in the same group commit.
 */
#include "api/api_ingest.h"

#include <string.h>

#include "api/api_products.h"
#include "api/ingest_decode.h"
#include "api/product_decode.h"
#include "core/chain.h"
#include "core/ids.h"
#include "core/event.h"
#include "core/keys.h"
#include "core/product.h"
#include "store/store.h"
#include "util/buf.h"
#include "util/err.h"

/* Resolves the product of a delivery: productId, else the code lookup.
 * Returns 0 with *product, or has answered (404/500) and returns
 * non-zero. */
static int resolve_product(struct api_req *r, const struct ingest_req *in, const char *fail_msg,
                           cJSON **product)
{
    const char *pid = in->product_id;
    cJSON *lookup = NULL;
    struct key pk;
    int rc;

    *product = NULL;
    if (!pid) {
        if (!ids_is_verification_code(in->code) || !key_verify_pk(&pk, in->code)) {
            api_error(r, 404, "Product not found");
            return ERR_NOTFOUND;
        }
        rc = store_get(api_store(r), pk.s, KEY_SK_META, true, &lookup);
        if (rc == 0)
            pid = api_strdup(r, product_str(lookup, "productId") ? product_str(lookup, "productId")
                                                                 : "");
        cJSON_Delete(lookup);
        if (rc == ERR_NOTFOUND || (rc == 0 && !pid[0])) {
            api_error(r, 404, "Product not found");
            return ERR_NOTFOUND;
        }
        if (rc) {
            api_fail(r, fail_msg, rc);
            return rc;
        }
    }
    rc = prod_get(r, pid, product);
    if (rc == ERR_NOTFOUND)
        api_error(r, 404, "Product not found");
    else if (rc)
        api_fail(r, fail_msg, rc);
    return rc;
}

/* The 200 body of a delivery, as JSON text in the request arena. */
static const char *response_text(struct api_req *r, const struct ingest_req *in,
                                 const char *product_id, const char *hash)
{
    struct buf b = BUF_INIT(1024);
    struct jsonw w;
    const char *out;

    jsonw_init(&w, &b);
    jsonw_obj(&w);
    jsonw_kbool(&w, "success", true);
    jsonw_kstr(&w, "eventType", in->type);
    jsonw_kstr(&w, "hash", hash);
    jsonw_kstr(&w, "productId", product_id);
    jsonw_kstr(&w, "message", in->message);
    jsonw_end(&w);
    out = jsonw_error(&w) ? NULL : api_strdup(r, buf_cstr(&b));
    buf_free(&b);
    return out;
}

/* Answers with a stored response text verbatim. */
static void reply_raw(struct api_req *r, const char *text)
{
    jsonw_raw(api_json(r, 200), text, strlen(text));
}

/* The IDEM#<digest> item: {productId, source, response, createdAt}. */
static cJSON *idem_item_new(const char *product_pk, const char *idem_sk, const char *product_id,
                            const char *source, const char *response, const char *now)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "PK", product_pk);
    cJSON_AddStringToObject(o, "SK", idem_sk);
    cJSON_AddStringToObject(o, "productId", product_id);
    cJSON_AddStringToObject(o, "source", source);
    cJSON_AddStringToObject(o, "response", response);
    cJSON_AddStringToObject(o, "createdAt", now);
    return o;
}

/* Replays the response held by an IDEM item.  Returns 0 when it answered,
 * ERR_NOTFOUND when there is no (usable) item, another ERR_* on a store
 * error (not answered). */
static int replay(struct api_req *r, const char *pk, const char *sk)
{
    cJSON *item = NULL;
    int rc = store_get(api_store(r), pk, sk, true, &item);
    if (rc == 0) {
        const char *text = product_str(item, "response");
        if (text)
            reply_raw(r, text);
        else
            rc = ERR_NOTFOUND;
    }
    cJSON_Delete(item);
    return rc;
}

/* The one handler behind the three routes. */
static void ingest(struct api_req *r, enum ingest_kind kind, const char *fail_msg)
{
    struct ingest_req in;
    struct chain_head head;
    struct chain_appended app;
    struct store_write extra[3];
    struct store_action acts[2];
    cJSON *body, *product = NULL, *idem = NULL, *ev = NULL, *now_val = NULL;
    const char *idem_key, *pid, *brand_id, *resp;
    char digest[CRYPTO_HEX_LEN + 1], predicted[CRYPTO_HEX_LEN + 1], err[200];
    struct key pk, isk, ipk, isk2;
    bool idempotent = false;
    size_t nextra = 0;
    int rc, failed = -1, idem_at = -1, integ_at = -1;

    memset(&in, 0, sizeof in);
    body = api_body(r);
    if (!body)
        return;
    if (ingest_decode(kind, body, &in, err, sizeof err)) {
        api_error(r, 400, err);
        return;
    }
    if (resolve_product(r, &in, fail_msg, &product))
        goto out;
    pid = product_str(product, "productId");
    brand_id = product_str(product, "brandId");
    if (!pid || !brand_id || !key_product_pk(&pk, pid)) {
        api_fail(r, fail_msg, ERR_INTERNAL);
        goto out;
    }
    if (api_is_ingest(r) && strcmp(r->who.brand_id, brand_id) != 0) {
        api_error(r, 403, "Forbidden");
        goto out;
    }

    idem_key = http_request_header(r->http, "Idempotency-Key");
    if (idem_key && !ingest_idem_key_ok(idem_key)) {
        api_error(r, 400, "Invalid Idempotency-Key");
        goto out;
    }
    if (ingest_idem_digest(pid, &in, idem_key, digest) == 0) {
        if (!key_idem_sk(&isk, digest)) {
            api_fail(r, fail_msg, ERR_INTERNAL);
            goto out;
        }
        idempotent = true;
        rc = replay(r, pk.s, isk.s);
        if (rc == 0)
            goto out; /* a retried delivery: the first answer again */
        if (rc != ERR_NOTFOUND) {
            api_fail(r, fail_msg, rc);
            goto out;
        }
    }

    struct event_fields f = {.product_id = pid,
                             .type = in.type,
                             .actor = in.actor,
                             .timestamp = in.has_timestamp ? in.timestamp : r->now_iso,
                             .data = in.data,
                             .location = in.location};
    rc = chain_head_read(api_store(r), pid, &head);
    if (rc) {
        api_fail(r, fail_msg, rc);
        goto out;
    }
    ev = event_item_new(&f, head.seq + 1, head.hash, predicted);
    resp = ev ? response_text(r, &in, pid, predicted) : NULL;
    if (!resp) {
        api_error(r, 400, "Invalid event data");
        goto out;
    }

    extra[nextra++] = (struct store_write){
        .kind = STORE_W_CHECK, .pk = pk.s, .sk = KEY_SK_META, .cond = {.kind = STORE_COND_EXISTS}};
    if (idempotent) {
        idem = idem_item_new(pk.s, isk.s, pid, in.source, resp, r->now_iso);
        idem_at = (int)nextra;
        extra[nextra++] = (struct store_write){
            .kind = STORE_W_PUT, .item = idem, .cond = {.kind = STORE_COND_NOT_EXISTS}};
    }
    if (api_is_ingest(r)) {
        if (!key_brand_pk(&ipk, r->who.brand_id) ||
            !key_integration_sk(&isk2, r->who.integration_id)) {
            api_fail(r, fail_msg, ERR_INTERNAL);
            goto out;
        }
        now_val = cJSON_CreateString(r->now_iso);
        acts[0] =
            (struct store_action){.kind = STORE_ACT_SET, .attr = "lastEvent", .value = now_val};
        acts[1] = (struct store_action){.kind = STORE_ACT_ADD, .attr = "eventCount", .delta = 1};
        integ_at = (int)nextra;
        extra[nextra++] = (struct store_write){.kind = STORE_W_UPDATE,
                                               .pk = ipk.s,
                                               .sk = isk2.s,
                                               .acts = acts,
                                               .nacts = 2,
                                               .cond = {.kind = STORE_COND_EXISTS}};
    }

    rc = chain_append(api_store(r), &f, extra, nextra, &app, &failed);
    if (rc == ERR_CONDITION) {
        if (failed == idem_at) {
            /* The same delivery was appended concurrently: its answer. */
            rc = replay(r, pk.s, isk.s);
            if (rc)
                api_fail(r, fail_msg, rc);
        } else if (failed == integ_at) {
            api_error(r, 401, "Unauthorized"); /* the integration is gone */
        } else {
            api_error(r, 404, "Product not found");
        }
        goto out;
    }
    if (rc == ERR_TOOBIG) {
        api_error(r, 400, "Provenance chain is full");
        goto out;
    }
    if (rc) {
        api_fail(r, fail_msg, rc);
        goto out;
    }
    if (strcmp(app.hash, predicted) != 0) {
        /* chain_append retried on a newer head: store the real answer. */
        resp = response_text(r, &in, pid, app.hash);
        if (idempotent && resp) {
            cJSON_Delete(idem);
            idem = idem_item_new(pk.s, isk.s, pid, in.source, resp, r->now_iso);
            rc = store_put(api_store(r), idem, NULL);
            if (rc) {
                api_fail(r, fail_msg, rc);
                goto out;
            }
        }
    }
    (void)api_audit(r, "ingest.event", brand_id, pid, api_printf(r, "%s %s", in.source, in.type));
    if (resp)
        reply_raw(r, resp);
    else
        api_fail(r, fail_msg, ERR_INTERNAL);
out:
    ingest_req_free(&in);
    cJSON_Delete(now_val);
    cJSON_Delete(ev);
    cJSON_Delete(idem);
    cJSON_Delete(product);
}

static void h_pos(struct api_req *r)
{
    ingest(r, INGEST_POS, "Failed to process sale event");
}

static void h_shipping(struct api_req *r)
{
    ingest(r, INGEST_SHIPPING, "Failed to process shipping event");
}

static void h_warehouse(struct api_req *r)
{
    ingest(r, INGEST_WAREHOUSE, "Failed to process warehouse event");
}

const struct api_route api_ingest_routes[] = {
    {HTTP_M_POST, "/api/ingest/pos", API_INGEST, h_pos},
    {HTTP_M_POST, "/api/ingest/shipping", API_INGEST, h_shipping},
    {HTTP_M_POST, "/api/ingest/warehouse", API_INGEST, h_warehouse},
    {0},
};
