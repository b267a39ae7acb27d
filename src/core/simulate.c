/*
 * simulate.c - a simulated product with a whole journey, written in one
 * transaction (simulate.h).
 *
 * Unlike the original, ids and tracking numbers are generated per request
 * and no event is dated in the future ([D39]); the product carries
 * simulated:true (outside the hash) so that listings can tell it from a
 * registered one, and it gets its E12 hash lookup like a registration.
 */
#include "core/simulate.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/chain.h"
#include "core/event.h"
#include "core/ids.h"
#include "core/keys.h"
#include "util/err.h"

#define SIM_TRIES 5

const char *simulate_source(const char *type, const char *carrier)
{
    if (type && strcmp(type, "sold") == 0)
        return "pos_webhook";
    return carrier ? "shipping_webhook" : "warehouse_webhook";
}

void simulate_tracking_number(const char *prefix, char out[SIM_REF_MAX])
{
    static const char b36[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    unsigned char r[8];
    char tail[9];

    ids_random(r, sizeof r);
    for (int i = 0; i < 8; i++)
        tail[i] = b36[r[i] % 36];
    tail[8] = '\0';
    snprintf(out, SIM_REF_MAX, "%.40s%s", prefix ? prefix : "", tail);
}

void simulate_order_id(const char *prefix, int64_t now_ms, char out[SIM_REF_MAX])
{
    int64_t v = now_ms < 0 ? -now_ms : now_ms;
    snprintf(out, SIM_REF_MAX, "%.40s%08" PRId64, prefix ? prefix : "", v % 100000000);
}

static void add_str_or_null(cJSON *o, const char *k, const char *v)
{
    if (v && *v)
        cJSON_AddStringToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}

static cJSON *product_item(const struct sim_input *in, const struct sim_output *o)
{
    struct key pk, gpk, gsk;
    cJSON *it;

    if (!key_product_pk(&pk, o->product_id) || !key_brand_pk(&gpk, in->brand_id) ||
        !key_product_gsi1sk(&gsk, o->created_at))
        return NULL;
    it = cJSON_CreateObject();
    cJSON_AddStringToObject(it, "PK", pk.s);
    cJSON_AddStringToObject(it, "SK", KEY_SK_META);
    cJSON_AddStringToObject(it, "GSI1PK", gpk.s);
    cJSON_AddStringToObject(it, "GSI1SK", gsk.s);
    cJSON_AddStringToObject(it, "productId", o->product_id);
    cJSON_AddStringToObject(it, "brandId", in->brand_id);
    cJSON_AddStringToObject(it, "brandName", in->brand_name);
    cJSON_AddStringToObject(it, "name", in->name);
    add_str_or_null(it, "sku", in->sku);
    add_str_or_null(it, "category", product_category_label(in->category));
    cJSON_AddStringToObject(it, "verificationCode", o->code);
    cJSON_AddStringToObject(it, "hash", o->hash);
    cJSON_AddStringToObject(it, "signature", o->signature);
    cJSON_AddStringToObject(it, "status", "active");
    cJSON_AddItemToObject(it, "metadata", cJSON_CreateObject());
    cJSON_AddStringToObject(it, "createdAt", o->created_at);
    cJSON_AddStringToObject(it, "updatedAt", o->created_at);
    cJSON_AddNumberToObject(it, "scanCount", 0);
    cJSON_AddTrueToObject(it, "simulated");
    return it;
}

static cJSON *lookup_item(const char *pk, bool gsi1, const char *pid, const char *brand_id)
{
    cJSON *it = cJSON_CreateObject();
    cJSON_AddStringToObject(it, "PK", pk);
    cJSON_AddStringToObject(it, "SK", KEY_SK_META);
    if (gsi1) {
        cJSON_AddStringToObject(it, "GSI1PK", pk);
        cJSON_AddStringToObject(it, "GSI1SK", KEY_SK_META);
    }
    cJSON_AddStringToObject(it, "productId", pid);
    cJSON_AddStringToObject(it, "brandId", brand_id);
    return it;
}

static cJSON *index_item(const struct sim_input *in, const struct sim_output *o)
{
    struct key sk;
    cJSON *it;

    if (!key_product_index_sk(&sk, o->created_at, o->product_id))
        return NULL;
    it = cJSON_CreateObject();
    cJSON_AddStringToObject(it, "PK", KEY_PK_PRODUCT_INDEX);
    cJSON_AddStringToObject(it, "SK", sk.s);
    cJSON_AddStringToObject(it, "productId", o->product_id);
    cJSON_AddStringToObject(it, "brandId", in->brand_id);
    cJSON_AddStringToObject(it, "name", in->name);
    cJSON_AddStringToObject(it, "brandName", in->brand_name);
    add_str_or_null(it, "sku", in->sku);
    add_str_or_null(it, "category", product_category_label(in->category));
    cJSON_AddNullToObject(it, "description");
    cJSON_AddStringToObject(it, "status", "active");
    cJSON_AddStringToObject(it, "verificationCode", o->code);
    cJSON_AddStringToObject(it, "hash", o->hash);
    cJSON_AddStringToObject(it, "createdAt", o->created_at);
    cJSON_AddNumberToObject(it, "scanCount", 0);
    cJSON_AddTrueToObject(it, "simulated");
    return it;
}

static cJSON *step_data(const struct sim_step *st)
{
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "source", st->source);
    if (st->carrier) {
        cJSON_AddStringToObject(d, "carrier", st->carrier);
        add_str_or_null(d, "trackingNumber", st->tracking);
    }
    if (st->platform) {
        cJSON_AddStringToObject(d, "platform", st->platform);
        add_str_or_null(d, "orderId", st->order_id);
    }
    cJSON_AddTrueToObject(d, "simulated");
    return d;
}

enum { SW_PRODUCT, SW_CODE, SW_HASH, SW_INDEX, SW_HEAD, SW_FIXED };

/* One attempt with fresh ids.  *failed: the failing write on
 * ERR_CONDITION. */
static int write_once(struct store *s, const struct sim_input *in, struct sim_output *o,
                      int *failed)
{
    cJSON *items[SW_FIXED + SIM_STEPS_MAX] = {0};
    struct store_write w[SW_FIXED + SIM_STEPS_MAX];
    struct key code_pk, hash_pk;
    char prev[CRYPTO_HEX_LEN + 1];
    size_t n = SW_FIXED + in->n;
    int64_t created = in->now_ms - (int64_t)(in->n + 1) * SIM_STEP_MINUTES * 60000;
    int rc = ERR_INVALID;

    ids_product_id(o->product_id);
    ids_verification_code(o->code);
    time_iso(created, o->created_at);
    if (crypto_product_hash(o->product_id, in->brand_id, in->name, in->sku ? in->sku : "", NULL,
                            o->created_at, o->hash) != 0)
        goto out;
    crypto_product_signature(in->secret, o->hash, o->signature);
    if (!key_verify_pk(&code_pk, o->code) || !key_hash_pk(&hash_pk, o->hash))
        goto out;
    items[SW_PRODUCT] = product_item(in, o);
    items[SW_CODE] = lookup_item(code_pk.s, true, o->product_id, in->brand_id);
    items[SW_HASH] = lookup_item(hash_pk.s, false, o->product_id, in->brand_id);
    items[SW_INDEX] = index_item(in, o);
    strcpy(prev, CRYPTO_GENESIS);
    for (size_t i = 0; i < in->n; i++) {
        const struct sim_step *st = &in->steps[i];
        char ts[ISO_LEN + 1];
        cJSON *data = step_data(st);
        time_iso(created + (int64_t)(i + 1) * SIM_STEP_MINUTES * 60000, ts);
        struct event_fields f = {.product_id = o->product_id,
                                 .type = st->type,
                                 .actor = st->actor,
                                 .timestamp = ts,
                                 .data = data,
                                 .location = st->location,
                                 .omit_location = !st->location};
        items[SW_FIXED + i] = event_item_new(&f, (uint32_t)(i + 1), prev, o->event_hash[i]);
        cJSON_Delete(data);
        if (!items[SW_FIXED + i])
            goto out;
        strcpy(prev, o->event_hash[i]);
    }
    items[SW_HEAD] = chain_head_item_new(o->product_id, (uint32_t)in->n, prev);
    for (size_t i = 0; i < n; i++) {
        if (!items[i])
            goto out;
        w[i] = (struct store_write){
            .kind = STORE_W_PUT, .item = items[i], .cond = {.kind = STORE_COND_NOT_EXISTS}};
    }
    rc = store_transact(s, w, n, failed);
out:
    for (size_t i = 0; i < SW_FIXED + SIM_STEPS_MAX; i++)
        cJSON_Delete(items[i]);
    return rc;
}

static bool input_ok(const struct sim_input *in)
{
    if (!in || !in->brand_id || !in->brand_name || !in->name || !in->name[0] || !in->secret ||
        !in->steps || in->n == 0 || in->n > SIM_STEPS_MAX)
        return false;
    for (size_t i = 0; i < in->n; i++) {
        const struct sim_step *st = &in->steps[i];
        if (!event_type_valid(st->type) || !st->actor || !st->actor[0] || !st->source)
            return false;
    }
    return true;
}

int simulate_write(struct store *s, const struct sim_input *in, struct sim_output *out)
{
    int rc = ERR_INVALID;

    memset(out, 0, sizeof *out);
    if (!input_ok(in))
        return ERR_INVALID;
    for (int attempt = 0; attempt < SIM_TRIES; attempt++) {
        int failed = -1;
        rc = write_once(s, in, out, &failed);
        if (rc != ERR_CONDITION)
            return rc;
        /* A generated id or code was taken (astronomically rare): new ones. */
        rc = ERR_CONFLICT;
    }
    return rc;
}
