/*
 * product_decode.c - the product endpoints' body decoders: field
 * presence and types (decode.h rules), the API.md error texts and their
 * order, event-type whitelist (§4.1), coordinates and size/depth bounds
 * on free-form objects (metadata, data) so that nothing hostile reaches
 * the hash or the store.
 */
#include "api/product_decode.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "api/decode.h"
#include "core/canon.h"
#include "core/event.h"
#include "util/buf.h"
#include "util/err.h"

/* Longer free text fields. */
#define PD_TEXT_MAX 4096

bool pd_id_ok(const char *s)
{
    size_t n;

    if (!s)
        return false;
    n = strlen(s);
    if (n == 0 || n > PD_ID_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f || c == '#')
            return false;
    }
    return true;
}

static int fail(char *err, size_t errlen, const char *msg)
{
    snprintf(err, errlen, "%s", msg);
    return ERR_INVALID;
}

/* A string field; NULL when missing.  Returns -1 (err filled) on a wrong
 * type or invalid text. */
static int sfield(const cJSON *b, const char *f, size_t max, const char **out, char *err,
                  size_t errlen)
{
    *out = NULL;
    return dec_str(b, f, max, out, err, errlen) == DEC_WRONG ? -1 : 0;
}

/* 1 when v nests at most PD_OBJ_DEPTH deep and holds only finite
 * numbers (the store keeps no NaN/Infinity, JSON has none), -1 when too
 * deep, -2 for a non-finite number. */
static int value_ok(const cJSON *v, int depth)
{
    const cJSON *c;
    if (depth > PD_OBJ_DEPTH)
        return -1;
    cJSON_ArrayForEach(c, v)
    {
        int rc = 1;
        if (cJSON_IsNumber(c) && !isfinite(c->valuedouble))
            return -2;
        if (cJSON_IsObject(c) || cJSON_IsArray(c))
            rc = value_ok(c, depth + 1);
        if (rc < 0)
            return rc;
    }
    return 1;
}

/* An object field (metadata/data) with the size and depth bounds.  NULL
 * when missing. */
static int ofield(const cJSON *b, const char *f, const cJSON **out, char *err, size_t errlen)
{
    struct buf tmp = BUF_INIT(PD_OBJ_MAX);
    int rc;

    *out = NULL;
    rc = dec_obj(b, f, out, err, errlen);
    if (rc == DEC_WRONG)
        return -1;
    if (rc == DEC_MISSING) {
        *out = NULL;
        return 0;
    }
    rc = value_ok(*out, 1);
    if (rc == -1) {
        snprintf(err, errlen, "%s is too deeply nested", f);
        return -1;
    }
    if (rc == -2) {
        snprintf(err, errlen, "%s holds a number out of range", f);
        return -1;
    }
    rc = canon_write(&tmp, *out);
    buf_free(&tmp);
    if (rc) {
        snprintf(err, errlen, "%s is too large", f);
        return -1;
    }
    return 0;
}

static int type_ok(const char *type, char *err, size_t errlen)
{
    if (!event_type_valid(type)) {
        fail(err, errlen, "Invalid event type");
        return 0;
    }
    return 1;
}

int pd_register(const cJSON *b, struct pd_register *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    if (sfield(b, "brandId", DEC_STR_MAX, &o->brand_id, err, errlen) ||
        sfield(b, "name", DEC_STR_MAX, &o->name, err, errlen) ||
        sfield(b, "sku", DEC_STR_MAX, &o->sku, err, errlen) ||
        sfield(b, "category", DEC_STR_MAX, &o->category, err, errlen) ||
        sfield(b, "description", PD_TEXT_MAX, &o->description, err, errlen) ||
        sfield(b, "imageUrl", DEC_STR_MAX, &o->image_url, err, errlen) ||
        sfield(b, "manufacturingLocation", DEC_STR_MAX, &o->location, err, errlen) ||
        ofield(b, "metadata", &o->metadata, err, errlen))
        return ERR_INVALID;
    if (!o->brand_id || !o->name)
        return fail(err, errlen, "brandId and name are required");
    return 0;
}

int pd_batch(const cJSON *b, struct pd_batch *o, char *err, size_t errlen)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(b, "products");
    const cJSON *it;
    char sub[160];

    o->brand_id = NULL;
    o->n = 0;
    if (sfield(b, "brandId", DEC_STR_MAX, &o->brand_id, err, errlen))
        return ERR_INVALID;
    if (!o->brand_id || !cJSON_IsArray(arr) || cJSON_GetArraySize(arr) == 0)
        return fail(err, errlen, "brandId and products array are required");
    if (cJSON_GetArraySize(arr) > PD_BATCH_MAX)
        return fail(err, errlen, "Maximum 50 products per batch");
    cJSON_ArrayForEach(it, arr)
    {
        struct pd_batch_item *p = &o->items[o->n];
        memset(p, 0, sizeof *p);
        if (!cJSON_IsObject(it))
            return fail(err, errlen, "products must be an array of objects");
        if (sfield(it, "name", DEC_STR_MAX, &p->name, sub, sizeof sub) ||
            sfield(it, "sku", DEC_STR_MAX, &p->sku, sub, sizeof sub) ||
            sfield(it, "category", DEC_STR_MAX, &p->category, sub, sizeof sub) ||
            sfield(it, "description", PD_TEXT_MAX, &p->description, sub, sizeof sub) ||
            sfield(it, "manufacturingLocation", DEC_STR_MAX, &p->location, sub, sizeof sub) ||
            ofield(it, "metadata", &p->metadata, sub, sizeof sub)) {
            snprintf(err, errlen, "products[%zu]: %s", o->n, sub);
            return ERR_INVALID;
        }
        o->n++;
    }
    return 0;
}

int pd_event(const cJSON *b, struct pd_event *o, char *err, size_t errlen)
{
    const cJSON *coords = NULL;

    memset(o, 0, sizeof *o);
    if (sfield(b, "productId", DEC_STR_MAX, &o->product_id, err, errlen) ||
        sfield(b, "type", DEC_STR_MAX, &o->type, err, errlen) ||
        sfield(b, "actor", DEC_STR_MAX, &o->actor, err, errlen) ||
        sfield(b, "location", DEC_STR_MAX, &o->location, err, errlen) ||
        ofield(b, "data", &o->data, err, errlen))
        return ERR_INVALID;
    if (dec_obj(b, "coordinates", &coords, err, errlen) == DEC_WRONG)
        return ERR_INVALID;
    if (!o->product_id || !o->type || !o->actor)
        return fail(err, errlen, "productId, type, and actor are required");
    if (!type_ok(o->type, err, errlen))
        return ERR_INVALID;
    if (coords) {
        const cJSON *lat = cJSON_GetObjectItemCaseSensitive(coords, "lat");
        const cJSON *lng = cJSON_GetObjectItemCaseSensitive(coords, "lng");
        if (!cJSON_IsNumber(lat) || !cJSON_IsNumber(lng) || !isfinite(lat->valuedouble) ||
            !isfinite(lng->valuedouble) || fabs(lat->valuedouble) > 90 ||
            fabs(lng->valuedouble) > 180)
            return fail(err, errlen,
                        "coordinates must be {lat:number,lng:number} within -90..90 and "
                        "-180..180");
        o->has_coordinates = true;
        o->lat = lat->valuedouble;
        o->lng = lng->valuedouble;
    }
    return 0;
}

int pd_history(const cJSON *b, struct pd_history *o, char *err, size_t errlen)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(b, "productIds");
    const cJSON *it;

    memset(o, 0, sizeof *o);
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) == 0)
        return fail(err, errlen, "productIds array required");
    if (sfield(b, "type", DEC_STR_MAX, &o->type, err, errlen) ||
        sfield(b, "actor", DEC_STR_MAX, &o->actor, err, errlen) ||
        sfield(b, "location", DEC_STR_MAX, &o->location, err, errlen))
        return ERR_INVALID;
    if (!o->type || !o->actor)
        return fail(err, errlen, "type and actor required");
    if (cJSON_GetArraySize(arr) > PD_BATCH_MAX)
        return fail(err, errlen, "Maximum 50 products per batch");
    cJSON_ArrayForEach(it, arr)
    {
        const char *s = cJSON_GetStringValue(it);
        if (!s || !*s || !dec_utf8_ok(s, strlen(s)) || strlen(s) > DEC_STR_MAX)
            return fail(err, errlen, "productIds must be an array of strings");
        o->product_ids[o->n++] = s;
    }
    if (!type_ok(o->type, err, errlen))
        return ERR_INVALID;
    return 0;
}

int pd_transfer(const cJSON *b, struct pd_transfer *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    if (sfield(b, "productId", DEC_STR_MAX, &o->product_id, err, errlen) ||
        sfield(b, "newOwner", DEC_STR_MAX, &o->new_owner, err, errlen) ||
        sfield(b, "location", DEC_STR_MAX, &o->location, err, errlen) ||
        sfield(b, "reason", DEC_STR_MAX, &o->reason, err, errlen))
        return ERR_INVALID;
    if (!o->product_id || !o->new_owner)
        return fail(err, errlen, "productId and newOwner are required");
    return 0;
}

int pd_recall(const cJSON *b, struct pd_recall *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    if (sfield(b, "productId", DEC_STR_MAX, &o->product_id, err, errlen) ||
        sfield(b, "reason", DEC_STR_MAX, &o->reason, err, errlen) ||
        sfield(b, "issuedBy", DEC_STR_MAX, &o->issued_by, err, errlen))
        return ERR_INVALID;
    if (!o->product_id || !o->reason)
        return fail(err, errlen, "productId and reason are required");
    return 0;
}

int pd_claim(const cJSON *b, struct pd_claim *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    if (sfield(b, "productId", DEC_STR_MAX, &o->product_id, err, errlen) ||
        sfield(b, "consumerName", DEC_STR_MAX, &o->consumer_name, err, errlen) ||
        sfield(b, "email", DEC_STR_MAX, &o->email, err, errlen))
        return ERR_INVALID;
    if (!o->product_id)
        return fail(err, errlen, "productId required");
    return 0;
}

int pd_dispute(const cJSON *b, struct pd_dispute *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    if (sfield(b, "productId", DEC_STR_MAX, &o->product_id, err, errlen) ||
        sfield(b, "consumerName", DEC_STR_MAX, &o->consumer_name, err, errlen) ||
        sfield(b, "email", DEC_STR_MAX, &o->email, err, errlen) ||
        sfield(b, "orderNumber", DEC_STR_MAX, &o->order_number, err, errlen) ||
        sfield(b, "notes", PD_TEXT_MAX, &o->notes, err, errlen))
        return ERR_INVALID;
    if (!o->product_id)
        return fail(err, errlen, "productId required");
    return 0;
}
