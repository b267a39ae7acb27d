/*
 * alert.c - the threat alert entity.
 *
 * Every writer of alerts (recall, dispute, the detector) builds its item
 * here, so there is exactly one stored format (API.md §6.4 Reimpl): a
 * monthly partition THREAT#<brand>#<YYYY-MM>, a sort key that carries a
 * unique alertId (no more same-millisecond overwrites, D11) and a GSI1
 * entry under BRAND#<brand> ordered by write time.  Readers (threat list,
 * SSE, TUI) write the JSON object with alert_write_json(), which also
 * copes with items in the two original formats (E14 flat partition, E15
 * Lambda bucket): attributes those lack get the documented defaults.
 */
#include "core/alert.h"

#include <math.h>
#include <string.h>

#include "core/ids.h"
#include "core/keys.h"
#include "core/timeutil.h"

/* Alert ids are 16 random bytes (32 hex chars). */
#define ALERT_ID_BYTES 16

static const char *or_default(const char *s, const char *def)
{
    return s ? s : def;
}

/* Adds a string attribute, or JSON null when s is NULL. */
static void add_str_or_null(cJSON *o, const char *name, const char *s)
{
    if (s)
        cJSON_AddStringToObject(o, name, s);
    else
        cJSON_AddNullToObject(o, name);
}

cJSON *alert_item_new(const struct alert_fields *f)
{
    char idbuf[2 * ALERT_ID_BYTES + 1];
    struct key pk, sk, gsk, gpk;
    const char *id, *write_time;
    cJSON *item = NULL, *flags;

    if (!f || !f->brand_id || !*f->brand_id || !f->type || !*f->type || !f->severity ||
        !*f->severity || !f->timestamp || !time_is_iso(f->timestamp))
        return NULL;
    write_time = f->write_time ? f->write_time : f->timestamp;
    if (!time_is_iso(write_time))
        return NULL;
    if (f->alert_id && *f->alert_id) {
        id = f->alert_id;
    } else {
        ids_random_hex(ALERT_ID_BYTES, idbuf);
        id = idbuf;
    }
    if (!key_threat_pk(&pk, f->brand_id, f->timestamp) ||
        !key_alert_sk(&sk, f->timestamp, f->type, id) || !key_brand_pk(&gpk, f->brand_id) ||
        !key_threat_gsi1sk(&gsk, write_time, id))
        return NULL;

    item = cJSON_CreateObject();
    if (!item)
        return NULL;
    cJSON_AddStringToObject(item, "PK", pk.s);
    cJSON_AddStringToObject(item, "SK", sk.s);
    cJSON_AddStringToObject(item, "GSI1PK", gpk.s);
    cJSON_AddStringToObject(item, "GSI1SK", gsk.s);
    cJSON_AddStringToObject(item, "alertId", id);
    cJSON_AddStringToObject(item, "brandId", f->brand_id);
    cJSON_AddStringToObject(item, "type", f->type);
    cJSON_AddStringToObject(item, "severity", f->severity);
    add_str_or_null(item, "productId", f->product_id && *f->product_id ? f->product_id : NULL);
    add_str_or_null(item, "details", f->details);
    cJSON_AddStringToObject(item, "timestamp", f->timestamp);
    cJSON_AddFalseToObject(item, "resolved");
    cJSON_AddStringToObject(item, "source", or_default(f->source, "api"));
    cJSON_AddStringToObject(item, "country", f->country && *f->country ? f->country : "Unknown");
    cJSON_AddStringToObject(item, "city", f->city && *f->city ? f->city : "Unknown");
    if (f->ai_analysis && !cJSON_IsNull(f->ai_analysis))
        cJSON_AddItemToObject(item, "aiAnalysis", cJSON_Duplicate(f->ai_analysis, 1));
    else
        cJSON_AddNullToObject(item, "aiAnalysis");
    flags = cJSON_AddArrayToObject(item, "anomalyFlags");
    for (size_t i = 0; f->flags && flags && i < f->nflags; i++)
        if (f->flags[i])
            cJSON_AddItemToArray(flags, cJSON_CreateString(f->flags[i]));
    cJSON_AddNumberToObject(item, "count", f->count > 0 && isfinite(f->count) ? f->count : 1);
    cJSON_AddStringToObject(item, "lastSeen", or_default(f->last_seen, f->timestamp));

    /* cJSON reports allocation failures only through missing members. */
    if (!cJSON_GetObjectItemCaseSensitive(item, "lastSeen") || !flags) {
        cJSON_Delete(item);
        return NULL;
    }
    return item;
}

/* A string attribute, or NULL when absent or not a string. */
static const char *str_attr(const cJSON *item, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Writes attribute `name` as it is stored (any JSON type), null when
 * absent. */
static void write_attr(struct jsonw *w, const cJSON *item, const char *name)
{
    jsonw_key(w, name);
    jsonw_json(w, cJSON_GetObjectItemCaseSensitive(item, name));
}

/* JavaScript truthiness of a stored attribute. */
static int truthy(const cJSON *v)
{
    if (!v || cJSON_IsNull(v) || cJSON_IsFalse(v))
        return 0;
    if (cJSON_IsNumber(v))
        return v->valuedouble != 0 && !isnan(v->valuedouble);
    if (cJSON_IsString(v))
        return v->valuestring && *v->valuestring;
    return 1;
}

void alert_write_json(struct jsonw *w, const cJSON *item)
{
    const cJSON *v;
    const char *ts = str_attr(item, "timestamp");
    const char *s;

    jsonw_obj(w);
    jsonw_kstr(w, "alertId", str_attr(item, "alertId"));
    jsonw_kstr(w, "brandId", str_attr(item, "brandId"));
    jsonw_kstr(w, "type", str_attr(item, "type"));
    jsonw_kstr(w, "severity", str_attr(item, "severity"));
    /* The original drops a missing productId; null keeps the shape fixed. */
    s = str_attr(item, "productId");
    jsonw_kstr(w, "productId", s && *s ? s : NULL);
    write_attr(w, item, "details");
    jsonw_kstr(w, "timestamp", ts);
    jsonw_kbool(w, "resolved", truthy(cJSON_GetObjectItemCaseSensitive(item, "resolved")));
    s = str_attr(item, "source");
    jsonw_kstr(w, "source", s && *s ? s : "api");
    jsonw_kstr(w, "country", str_attr(item, "country"));
    jsonw_kstr(w, "city", str_attr(item, "city"));
    v = cJSON_GetObjectItemCaseSensitive(item, "aiAnalysis");
    jsonw_kjson(w, "aiAnalysis", cJSON_IsObject(v) ? v : NULL);
    v = cJSON_GetObjectItemCaseSensitive(item, "anomalyFlags");
    jsonw_key(w, "anomalyFlags");
    if (cJSON_IsArray(v)) {
        jsonw_json(w, v);
    } else {
        jsonw_arr(w);
        jsonw_end(w);
    }
    v = cJSON_GetObjectItemCaseSensitive(item, "count");
    jsonw_knum(w, "count",
               cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble > 0 ? v->valuedouble
                                                                                   : 1);
    s = str_attr(item, "lastSeen");
    jsonw_kstr(w, "lastSeen", s && *s ? s : ts);
    jsonw_end(w);
}

static const char *const alert_sk[] = {KEY_PFX_ALERT};
const struct stream_filter alert_stream_filter = {
    .kinds = STREAM_KIND_BIT(STORE_INSERT) | STREAM_KIND_BIT(STORE_MODIFY),
    .pk_prefix = KEY_PFX_THREAT,
    .sk_prefixes = alert_sk,
    .nsk = 1,
};
