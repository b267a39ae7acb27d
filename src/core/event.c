/*
 * event.c - the provenance event entity: builds the stored item of an
 * event (hashing exactly what is stored, [D18]), recomputes the hash of a
 * stored item for the integrity check, and writes the event objects that
 * verify and the events listing return.  Keys come from core/keys.h.
 */
#include "core/event.h"

#include <math.h>
#include <string.h>

#include "core/keys.h"
#include "util/err.h"

const char *const event_types[EVENT_TYPES_N] = {"manufactured", "shipped", "received",
                                                "inspected",    "sold",    "transferred",
                                                "recalled",     "custom"};

bool event_type_valid(const char *type)
{
    if (!type)
        return false;
    for (size_t i = 0; i < EVENT_TYPES_N; i++)
        if (strcmp(type, event_types[i]) == 0)
            return true;
    return false;
}

static const char *str_attr(const cJSON *item, const char *attr)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(item, attr));
}

cJSON *event_item_new(const struct event_fields *f, uint32_t seq, const char *previous_hash,
                      char hash_out[CRYPTO_HEX_LEN + 1])
{
    struct key pk, sk;
    cJSON *item = NULL;

    if (!f || !f->product_id || !f->type || !f->actor || !f->timestamp || !previous_hash)
        return NULL;
    if (f->data && !cJSON_IsObject(f->data))
        return NULL;
    if (!key_product_pk(&pk, f->product_id) || !key_event_sk(&sk, f->timestamp, f->type, seq))
        return NULL;
    if (crypto_event_hash(f->product_id, f->type, f->actor, f->timestamp, f->data, previous_hash,
                          hash_out) != 0)
        return NULL;

    item = cJSON_CreateObject();
    cJSON_AddStringToObject(item, "PK", pk.s);
    cJSON_AddStringToObject(item, "SK", sk.s);
    cJSON_AddStringToObject(item, "productId", f->product_id);
    cJSON_AddStringToObject(item, "type", f->type);
    cJSON_AddStringToObject(item, "actor", f->actor);
    if (!f->omit_location) {
        if (f->location)
            cJSON_AddStringToObject(item, "location", f->location);
        else
            cJSON_AddNullToObject(item, "location");
    }
    if (f->with_coordinates) {
        if (f->coordinates)
            cJSON_AddItemToObject(item, "coordinates", cJSON_Duplicate(f->coordinates, 1));
        else
            cJSON_AddNullToObject(item, "coordinates");
    }
    cJSON_AddStringToObject(item, "timestamp", f->timestamp);
    if (f->data)
        cJSON_AddItemToObject(item, "data", cJSON_Duplicate(f->data, 1));
    else
        cJSON_AddItemToObject(item, "data", cJSON_CreateObject());
    cJSON_AddStringToObject(item, "hash", hash_out);
    cJSON_AddStringToObject(item, "previousHash", previous_hash);
    cJSON_AddNumberToObject(item, "seq", (double)seq);
    return item;
}

int event_item_hash(const cJSON *item, char out[CRYPTO_HEX_LEN + 1])
{
    const char *pid = str_attr(item, "productId");
    const char *type = str_attr(item, "type");
    const char *actor = str_attr(item, "actor");
    const char *ts = str_attr(item, "timestamp");
    const char *prev = str_attr(item, "previousHash");
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(item, "data");

    if (!pid || !type || !actor || !ts || !prev)
        return ERR_INVALID;
    /* A missing or null data is hashed as {} (what appenders store). */
    if (data && cJSON_IsNull(data))
        data = NULL;
    if (data && !cJSON_IsObject(data))
        return ERR_INVALID;
    return crypto_event_hash(pid, type, actor, ts, data, prev, out);
}

uint32_t event_item_seq(const cJSON *item)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, "seq");
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 1 ||
        v->valuedouble > (double)UINT32_MAX)
        return 0;
    return (uint32_t)v->valuedouble;
}

/* Writes attr as a string, or null when absent / not a string. */
static void kstr_or_null(struct jsonw *w, const cJSON *item, const char *attr)
{
    jsonw_kstr(w, attr, str_attr(item, attr));
}

static void kdata(struct jsonw *w, const cJSON *item)
{
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(item, "data");
    if (cJSON_IsObject(data)) {
        jsonw_kjson(w, "data", data);
    } else {
        jsonw_key(w, "data");
        jsonw_obj(w);
        jsonw_end(w);
    }
}

void event_write_verify_json(struct jsonw *w, const cJSON *item)
{
    jsonw_obj(w);
    kstr_or_null(w, item, "productId");
    kstr_or_null(w, item, "type");
    kstr_or_null(w, item, "actor");
    kstr_or_null(w, item, "location");
    kstr_or_null(w, item, "timestamp");
    kstr_or_null(w, item, "hash");
    kstr_or_null(w, item, "previousHash");
    kdata(w, item);
    jsonw_end(w);
}

void event_write_list_json(struct jsonw *w, const cJSON *item)
{
    jsonw_obj(w);
    kstr_or_null(w, item, "type");
    kstr_or_null(w, item, "actor");
    kstr_or_null(w, item, "location");
    kstr_or_null(w, item, "timestamp");
    kdata(w, item);
    kstr_or_null(w, item, "hash");
    kstr_or_null(w, item, "previousHash");
    jsonw_end(w);
}
