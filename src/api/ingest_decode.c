/*
 * ingest_decode.c - partner webhook bodies to provenance events
 * (ingest_decode.h).
 *
 * The stored data objects follow API.md §4.3 key for key, with values the
 * partner did not send left out (as JSON.stringify drops undefined).  The
 * shipping event keeps the original's stored actor "<carrier>
 * (<trackingNumber>)" and stored data (with carrier); since the chain
 * module hashes what is stored, the [D18] mismatch cannot occur.
 */
#include "api/ingest_decode.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/decode.h"
#include "core/brand.h"
#include "core/event.h"
#include "core/integration.h"
#include "core/journeys_data.h"
#include "util/err.h"
#include "util/xalloc.h"

static const struct {
    const char *from, *to;
} shipping_map[] = {
    {"picked_up", "shipped"},  {"in_transit", "shipped"}, {"out_for_delivery", "shipped"},
    {"delivered", "received"}, {"exception", "custom"},
};

static const struct {
    const char *from, *to;
} warehouse_map[] = {
    {"received", "received"},  {"inspected", "inspected"}, {"stored", "received"},
    {"dispatched", "shipped"}, {"returned", "received"},
};

const char *ingest_shipping_type(const char *status)
{
    for (size_t i = 0; status && i < sizeof shipping_map / sizeof shipping_map[0]; i++)
        if (strcmp(status, shipping_map[i].from) == 0)
            return shipping_map[i].to;
    return "custom";
}

const char *ingest_warehouse_type(const char *action)
{
    for (size_t i = 0; action && i < sizeof warehouse_map / sizeof warehouse_map[0]; i++)
        if (strcmp(action, warehouse_map[i].from) == 0)
            return warehouse_map[i].to;
    return "custom";
}

bool ingest_idem_key_ok(const char *key)
{
    size_t n = key ? strlen(key) : 0;
    if (n == 0 || n > INGEST_IDEM_KEY_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)key[i] < 0x20 || (unsigned char)key[i] >= 0x7f)
            return false;
    return true;
}

static char *xprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

/* One string field: stops the decoder (returns false) on a wrong type or
 * size; *out is NULL when absent/falsy. */
static bool str_field(const cJSON *body, const char *field, size_t max, const char **out, char *err,
                      size_t errlen)
{
    return dec_str(body, field, max, out, err, errlen) != DEC_WRONG;
}

static void add_opt_str(cJSON *o, const char *k, const char *v)
{
    if (v)
        cJSON_AddStringToObject(o, k, v);
}

static int fail(char *err, size_t errlen, const char *msg)
{
    snprintf(err, errlen, "%s", msg);
    return ERR_INVALID;
}

/* The fields every kind shares: product reference and timestamp text. */
struct common {
    const char *product_id, *code, *timestamp;
};

static bool common_fields(const cJSON *body, struct common *c, char *err, size_t errlen)
{
    return str_field(body, "productId", INGEST_STR_MAX, &c->product_id, err, errlen) &&
           str_field(body, "verificationCode", INGEST_STR_MAX, &c->code, err, errlen) &&
           str_field(body, "timestamp", INGEST_STR_MAX, &c->timestamp, err, errlen);
}

/* Product reference and timestamp checks, after the required fields. */
static int finish_common(const struct common *c, struct ingest_req *out, const char *ref_msg,
                         char *err, size_t errlen)
{
    if (!c->product_id && !c->code)
        return fail(err, errlen, ref_msg);
    out->product_id = c->product_id;
    out->code = c->code;
    if (c->timestamp) {
        int64_t ms;
        if (time_parse_iso(c->timestamp, &ms) != 0)
            return fail(err, errlen, "Invalid timestamp");
        time_iso(ms, out->timestamp);
        out->has_timestamp = true;
    }
    return 0;
}

static int decode_pos(const cJSON *body, struct ingest_req *out, char *err, size_t errlen)
{
    const char *order_id, *platform, *store_name, *store_location, *currency;
    const cJSON *amount = cJSON_GetObjectItemCaseSensitive(body, "amount");
    struct common c;
    int rc;

    if (!str_field(body, "orderId", INGEST_STR_MAX, &order_id, err, errlen) ||
        !str_field(body, "platform", INGEST_STR_MAX, &platform, err, errlen) ||
        !str_field(body, "storeName", INGEST_STR_MAX, &store_name, err, errlen) ||
        !str_field(body, "storeLocation", INGEST_STR_MAX, &store_location, err, errlen) ||
        !str_field(body, "currency", INGEST_STR_MAX, &currency, err, errlen) ||
        !common_fields(body, &c, err, errlen))
        return ERR_INVALID;
    /* amount 0 is a real amount: only absent or null drop the key. */
    if (amount && !cJSON_IsNull(amount) && !cJSON_IsNumber(amount))
        return fail(err, errlen, "amount must be a number");
    if (!order_id || !platform)
        return fail(err, errlen, "orderId and platform are required");
    rc = finish_common(&c, out, "productId or verificationCode required", err, errlen);
    if (rc)
        return rc;
    out->type = "sold";
    out->source = "pos_webhook";
    out->actor = store_name ? xstrdup(store_name) : xprintf("%s Store", platform);
    out->location = store_location ? xstrdup(store_location) : NULL;
    out->data = cJSON_CreateObject();
    cJSON_AddStringToObject(out->data, "orderId", order_id);
    cJSON_AddStringToObject(out->data, "platform", platform);
    if (cJSON_IsNumber(amount))
        cJSON_AddNumberToObject(out->data, "amount", amount->valuedouble);
    add_opt_str(out->data, "currency", currency);
    cJSON_AddStringToObject(out->data, "source", out->source);
    out->ext1 = order_id;
    out->message = xprintf("Sale event from %s (order %s) recorded", platform, order_id);
    return 0;
}

static int decode_shipping(const cJSON *body, struct ingest_req *out, char *err, size_t errlen)
{
    const char *tracking, *carrier, *status, *location, *city, *country, *signed_by;
    struct common c;
    int rc;

    if (!str_field(body, "trackingNumber", INGEST_STR_MAX, &tracking, err, errlen) ||
        !str_field(body, "carrier", INGEST_STR_MAX, &carrier, err, errlen) ||
        !str_field(body, "status", INGEST_STR_MAX, &status, err, errlen) ||
        !str_field(body, "location", INGEST_STR_MAX, &location, err, errlen) ||
        !str_field(body, "city", INGEST_STR_MAX, &city, err, errlen) ||
        !str_field(body, "country", INGEST_STR_MAX, &country, err, errlen) ||
        !str_field(body, "signedBy", INGEST_STR_MAX, &signed_by, err, errlen) ||
        !common_fields(body, &c, err, errlen))
        return ERR_INVALID;
    if (!tracking || !carrier || !status)
        return fail(err, errlen, "trackingNumber, carrier, and status are required");
    rc = finish_common(&c, out, "productId or verificationCode required to map shipment to product",
                       err, errlen);
    if (rc)
        return rc;
    out->type = ingest_shipping_type(status);
    out->source = "shipping_webhook";
    out->actor = xprintf("%s (%s)", carrier, tracking);
    if (location)
        out->location = xstrdup(location);
    else if (city && country)
        out->location = xprintf("%s, %s", city, country);
    else if (city || country)
        out->location = xstrdup(city ? city : country);
    out->data = cJSON_CreateObject();
    cJSON_AddStringToObject(out->data, "trackingNumber", tracking);
    cJSON_AddStringToObject(out->data, "carrier", carrier);
    cJSON_AddStringToObject(out->data, "carrierStatus", status);
    add_opt_str(out->data, "signedBy", signed_by);
    cJSON_AddStringToObject(out->data, "source", out->source);
    out->ext1 = tracking;
    out->ext2 = status;
    out->message = xprintf("Shipping event \"%s\" from %s recorded for product", status, carrier);
    return 0;
}

static int decode_warehouse(const cJSON *body, struct ingest_req *out, char *err, size_t errlen)
{
    const char *action, *name, *location, *bay, *inspector, *notes;
    struct common c;
    int rc;

    if (!str_field(body, "action", INGEST_STR_MAX, &action, err, errlen) ||
        !str_field(body, "warehouseName", INGEST_STR_MAX, &name, err, errlen) ||
        !str_field(body, "warehouseLocation", INGEST_STR_MAX, &location, err, errlen) ||
        !str_field(body, "bay", INGEST_STR_MAX, &bay, err, errlen) ||
        !str_field(body, "inspectorId", INGEST_STR_MAX, &inspector, err, errlen) ||
        !str_field(body, "notes", INGEST_NOTES_MAX, &notes, err, errlen) ||
        !common_fields(body, &c, err, errlen))
        return ERR_INVALID;
    if (!action || !name)
        return fail(err, errlen, "action and warehouseName are required");
    rc = finish_common(&c, out, "productId or verificationCode required", err, errlen);
    if (rc)
        return rc;
    out->type = ingest_warehouse_type(action);
    out->source = "warehouse_webhook";
    out->actor = xstrdup(name);
    out->location = location ? xstrdup(location) : NULL;
    out->data = cJSON_CreateObject();
    cJSON_AddStringToObject(out->data, "action", action);
    add_opt_str(out->data, "bay", bay);
    add_opt_str(out->data, "inspectorId", inspector);
    add_opt_str(out->data, "notes", notes);
    cJSON_AddStringToObject(out->data, "source", out->source);
    out->ext1 = action;
    out->message = xprintf("Warehouse event \"%s\" from %s recorded", action, name);
    return 0;
}

int ingest_decode(enum ingest_kind kind, const cJSON *body, struct ingest_req *out, char *err,
                  size_t errlen)
{
    int rc;

    memset(out, 0, sizeof *out);
    out->kind = kind;
    if (errlen)
        err[0] = '\0';
    if (!cJSON_IsObject(body))
        return fail(err, errlen, "Invalid JSON body");
    switch (kind) {
    case INGEST_POS:
        rc = decode_pos(body, out, err, errlen);
        break;
    case INGEST_SHIPPING:
        rc = decode_shipping(body, out, err, errlen);
        break;
    case INGEST_WAREHOUSE:
        rc = decode_warehouse(body, out, err, errlen);
        break;
    default:
        rc = fail(err, errlen, "Invalid ingest kind");
        break;
    }
    if (rc) {
        ingest_req_free(out);
        memset(out, 0, sizeof *out);
        out->kind = kind;
    }
    return rc;
}

void ingest_req_free(struct ingest_req *r)
{
    if (!r)
        return;
    free(r->actor);
    free(r->location);
    free(r->message);
    cJSON_Delete(r->data);
    r->actor = r->location = r->message = NULL;
    r->data = NULL;
}

/* Appends "<len>:<text>;" so that no two tuples serialise alike. */
static void part(char *buf, size_t cap, size_t *used, const char *tag, const char *s)
{
    if (!s)
        s = "";
    int n = snprintf(buf + *used, cap - *used, "%s%zu:%s;", tag, strlen(s), s);
    if (n > 0)
        *used += (size_t)n < cap - *used ? (size_t)n : cap - *used - 1;
}

int ingest_idem_digest(const char *product_id, const struct ingest_req *r, const char *idem_key,
                       char out[CRYPTO_HEX_LEN + 1])
{
    /* Every part is bounded (ids/fields <= INGEST_STR_MAX, key <=
     * INGEST_IDEM_KEY_MAX), so the buffer never truncates. */
    char buf[6 * (INGEST_STR_MAX + 32) + INGEST_IDEM_KEY_MAX];
    size_t used = 0;

    if (!product_id || !r || (!idem_key && !r->has_timestamp) ||
        strlen(product_id) > INGEST_STR_MAX)
        return ERR_INVALID;
    if (idem_key && !ingest_idem_key_ok(idem_key))
        return ERR_INVALID;
    buf[0] = '\0';
    part(buf, sizeof buf, &used, "p", product_id);
    part(buf, sizeof buf, &used, "s", r->source);
    part(buf, sizeof buf, &used, "e", r->ext1);
    part(buf, sizeof buf, &used, "f", r->ext2);
    if (idem_key)
        part(buf, sizeof buf, &used, "key", idem_key);
    else
        part(buf, sizeof buf, &used, "ts", r->timestamp);
    crypto_sha256_hex(buf, used, out);
    return 0;
}

/* ---- integration bodies ---- */

int integ_decode_configure(const cJSON *body, struct integ_configure_req *out, char *err,
                           size_t errlen)
{
    char *text = NULL;
    int rc = 0;

    memset(out, 0, sizeof *out);
    if (errlen)
        err[0] = '\0';
    if (!cJSON_IsObject(body))
        return fail(err, errlen, "Invalid JSON body");
    if (!str_field(body, "brandId", INGEST_STR_MAX, &out->brand_id, err, errlen) ||
        !str_field(body, "type", INGEST_STR_MAX, &out->type, err, errlen) ||
        dec_obj(body, "config", &out->config, err, errlen) == DEC_WRONG)
        return ERR_INVALID;
    if (!out->brand_id || !out->type)
        return fail(err, errlen, "brandId and type required");
    if (!brand_id_ok(out->brand_id))
        return fail(err, errlen, "Invalid brandId");
    if (!integration_type_find(out->type))
        return fail(err, errlen,
                    "Invalid type. Must be one of: fedex, dhl, ups, shopify, square, "
                    "woocommerce, stripe, wms_custom");
    if (out->config) {
        text = cJSON_PrintUnformatted(out->config);
        if (!text || strlen(text) > INTEGRATION_CONFIG_MAX)
            rc = fail(err, errlen, "config is too large");
        cJSON_free(text);
    }
    return rc;
}

int integ_decode_simulate(const cJSON *body, struct integ_simulate_req *out, char *err,
                          size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (errlen)
        err[0] = '\0';
    if (!cJSON_IsObject(body))
        return fail(err, errlen, "Invalid JSON body");
    if (!str_field(body, "brandId", INGEST_STR_MAX, &out->brand_id, err, errlen) ||
        !str_field(body, "productName", INGEST_STR_MAX, &out->product_name, err, errlen) ||
        !str_field(body, "journey", INGEST_STR_MAX, &out->journey, err, errlen) ||
        !str_field(body, "sku", INGEST_STR_MAX, &out->sku, err, errlen) ||
        !str_field(body, "category", INGEST_STR_MAX, &out->category, err, errlen))
        return ERR_INVALID;
    if (!out->brand_id || !out->product_name || !out->journey)
        return fail(err, errlen, "brandId, productName, and journey required");
    if (!brand_id_ok(out->brand_id))
        return fail(err, errlen, "Invalid brandId");
    return 0;
}

static int template_steps(const struct journey *j, struct integ_simulate_req *out)
{
    for (size_t i = 0; i < j->nstages && i < SIM_STEPS_MAX; i++) {
        const struct journey_stage *st = &j->stages[i];
        struct sim_step *s = &out->steps[i];
        s->type = st->type;
        s->actor = st->actor;
        s->location = st->location;
        s->source = st->source ? st->source : simulate_source(st->type, st->carrier);
        s->carrier = st->carrier;
        s->platform = st->platform;
        out->tracking_prefix[i] =
            st->carrier ? (st->tracking_prefix ? st->tracking_prefix : "") : NULL;
        out->order_prefix[i] = st->platform ? (st->order_prefix ? st->order_prefix : "") : NULL;
    }
    out->n = j->nstages < SIM_STEPS_MAX ? j->nstages : SIM_STEPS_MAX;
    return 0;
}

/* Step i of a custom journey: a field of it, with the step's index in
 * any type error. */
static bool step_str(const cJSON *step, size_t i, const char *field, const char **out, char *err,
                     size_t errlen)
{
    char name[64];
    snprintf(name, sizeof name, "steps[%zu].%s", i, field);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(step, field);
    *out = NULL;
    if (!v || cJSON_IsNull(v) || cJSON_IsFalse(v) || (cJSON_IsNumber(v) && v->valuedouble == 0))
        return true;
    if (!cJSON_IsString(v)) {
        snprintf(err, errlen, "%s must be a string", name);
        return false;
    }
    if (!v->valuestring[0])
        return true;
    if (strlen(v->valuestring) > INGEST_STR_MAX ||
        !dec_utf8_ok(v->valuestring, strlen(v->valuestring))) {
        snprintf(err, errlen, "%s is too long", name);
        return false;
    }
    *out = v->valuestring;
    return true;
}

int integ_simulate_steps(const cJSON *body, struct integ_simulate_req *out, char *err,
                         size_t errlen)
{
    const cJSON *steps, *step;
    size_t i = 0;

    for (size_t j = 0; j < JOURNEYS_N; j++)
        if (out->journey && strcmp(out->journey, journeys[j].id) == 0)
            return template_steps(&journeys[j], out);
    if (!out->journey || strcmp(out->journey, "custom") != 0)
        return fail(err, errlen, "Invalid journey or no steps");
    steps = cJSON_GetObjectItemCaseSensitive(body, "steps");
    if (!cJSON_IsArray(steps) || cJSON_GetArraySize(steps) == 0)
        return fail(err, errlen, "Invalid journey or no steps");
    if (cJSON_GetArraySize(steps) > SIM_STEPS_MAX)
        return fail(err, errlen, "Too many steps (at most 50)");
    cJSON_ArrayForEach(step, steps)
    {
        struct sim_step *s = &out->steps[i];
        const char *tracking, *order_id;
        if (!cJSON_IsObject(step)) {
            snprintf(err, errlen, "steps[%zu] must be an object", i);
            return ERR_INVALID;
        }
        if (!step_str(step, i, "type", &s->type, err, errlen) ||
            !step_str(step, i, "actor", &s->actor, err, errlen) ||
            !step_str(step, i, "location", &s->location, err, errlen) ||
            !step_str(step, i, "carrier", &s->carrier, err, errlen) ||
            !step_str(step, i, "trackingNumber", &tracking, err, errlen) ||
            !step_str(step, i, "platform", &s->platform, err, errlen) ||
            !step_str(step, i, "orderId", &order_id, err, errlen))
            return ERR_INVALID;
        if (!event_type_valid(s->type))
            return fail(err, errlen, "Invalid event type");
        if (!s->actor) {
            snprintf(err, errlen, "steps[%zu].actor is required", i);
            return ERR_INVALID;
        }
        s->source = simulate_source(s->type, s->carrier);
        s->tracking = s->carrier ? tracking : NULL;
        s->order_id = s->platform ? order_id : NULL;
        out->tracking_prefix[i] = s->carrier && !tracking ? "TRK-" : NULL;
        out->order_prefix[i] = s->platform && !order_id ? "ORD-" : NULL;
        i++;
    }
    out->n = i;
    return 0;
}
