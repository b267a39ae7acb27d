/*
 * brand.c - brand items and JSON shapes.
 *
 * A brand is three items written together: the profile (E1), its live
 * counters (E2, the only place counters are maintained; the profile's own
 * productCount/scanCount stay 0 as in the original, D24) and an entry in
 * the BRAND_INDEX partition (E3) that /api/brands/list reads newest
 * first.  The profile response replaces the stale counters with the live
 * ones and never shows the key attributes (D04).
 */
#include "core/brand.h"

#include <math.h>
#include <string.h>

#include "core/keys.h"
#include "core/timeutil.h"

bool brand_id_ok(const char *id)
{
    size_t n;

    if (!id)
        return false;
    n = strlen(id);
    if (!n || n > BRAND_ID_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)id[i];
        if (c < 0x20 || c == 0x7f || c == '#')
            return false;
    }
    return true;
}

static bool fields_ok(const struct brand_fields *f)
{
    return f && brand_id_ok(f->id) && f->name && *f->name && f->domain && *f->domain &&
           f->industry && *f->industry && f->created_at && time_is_iso(f->created_at);
}

static cJSON *checked(cJSON *item, const char *last_attr)
{
    /* cJSON signals allocation failures only by missing members. */
    if (item && !cJSON_GetObjectItemCaseSensitive(item, last_attr)) {
        cJSON_Delete(item);
        return NULL;
    }
    return item;
}

cJSON *brand_profile_item_new(const struct brand_fields *f)
{
    struct key pk;
    cJSON *item;

    if (!fields_ok(f) || !key_brand_pk(&pk, f->id))
        return NULL;
    item = cJSON_CreateObject();
    if (!item)
        return NULL;
    cJSON_AddStringToObject(item, "PK", pk.s);
    cJSON_AddStringToObject(item, "SK", KEY_SK_PROFILE);
    cJSON_AddStringToObject(item, "GSI1PK", pk.s);
    cJSON_AddStringToObject(item, "GSI1SK", KEY_SK_PROFILE);
    cJSON_AddStringToObject(item, "id", f->id);
    cJSON_AddStringToObject(item, "name", f->name);
    cJSON_AddStringToObject(item, "domain", f->domain);
    cJSON_AddStringToObject(item, "industry", f->industry);
    if (f->logo_url && *f->logo_url)
        cJSON_AddStringToObject(item, "logoUrl", f->logo_url);
    else
        cJSON_AddNullToObject(item, "logoUrl");
    cJSON_AddStringToObject(item, "plan", f->plan ? f->plan : "free");
    cJSON_AddStringToObject(item, "createdAt", f->created_at);
    cJSON_AddNumberToObject(item, "productCount", 0);
    cJSON_AddNumberToObject(item, "scanCount", 0);
    return checked(item, "scanCount");
}

cJSON *brand_stats_item_new(const char *brand_id)
{
    struct key pk;
    cJSON *item;

    if (!brand_id_ok(brand_id) || !key_brand_pk(&pk, brand_id))
        return NULL;
    item = cJSON_CreateObject();
    if (!item)
        return NULL;
    cJSON_AddStringToObject(item, "PK", pk.s);
    cJSON_AddStringToObject(item, "SK", KEY_SK_STATS);
    cJSON_AddNumberToObject(item, "productCount", 0);
    cJSON_AddNumberToObject(item, "scanCount", 0);
    cJSON_AddNumberToObject(item, "threatCount", 0);
    return checked(item, "threatCount");
}

cJSON *brand_index_item_new(const struct brand_fields *f)
{
    struct key sk;
    cJSON *item;

    if (!fields_ok(f) || !key_brand_index_sk(&sk, f->created_at, f->id))
        return NULL;
    item = cJSON_CreateObject();
    if (!item)
        return NULL;
    cJSON_AddStringToObject(item, "PK", KEY_PK_BRAND_INDEX);
    cJSON_AddStringToObject(item, "SK", sk.s);
    cJSON_AddStringToObject(item, "brandId", f->id);
    cJSON_AddStringToObject(item, "name", f->name);
    cJSON_AddStringToObject(item, "domain", f->domain);
    cJSON_AddStringToObject(item, "industry", f->industry);
    cJSON_AddStringToObject(item, "plan", f->plan ? f->plan : "free");
    cJSON_AddStringToObject(item, "createdAt", f->created_at);
    return checked(item, "createdAt");
}

static double num_or_zero(const cJSON *item, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, name);
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : 0;
}

void brand_counters_from_stats(const cJSON *stats, struct brand_counters *c)
{
    c->product_count = num_or_zero(stats, "productCount");
    c->scan_count = num_or_zero(stats, "scanCount");
    c->threat_count = num_or_zero(stats, "threatCount");
}

static const char *str_attr(const cJSON *item, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

void brand_write_created_members(struct jsonw *w, const cJSON *profile)
{
    static const char *const names[] = {"id", "name", "domain", "industry", "plan", "createdAt"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        jsonw_kstr(w, names[i], str_attr(profile, names[i]));
}

static bool is_key_attr(const char *name)
{
    return !strcmp(name, "PK") || !strcmp(name, "SK") || !strcmp(name, "GSI1PK") ||
           !strcmp(name, "GSI1SK");
}

void brand_write_profile_json(struct jsonw *w, const cJSON *profile, const struct brand_counters *c)
{
    static const char *const cnames[3] = {"productCount", "scanCount", "threatCount"};
    const double cvals[3] = {c->product_count, c->scan_count, c->threat_count};
    bool written[3] = {false, false, false};
    const cJSON *a;

    jsonw_obj(w);
    /* Object spread semantics: an overwritten key keeps its position. */
    cJSON_ArrayForEach(a, profile)
    {
        size_t k;
        if (!a->string || is_key_attr(a->string))
            continue;
        for (k = 0; k < 3; k++)
            if (!strcmp(a->string, cnames[k]))
                break;
        if (k < 3) {
            if (!written[k])
                jsonw_knum(w, cnames[k], cvals[k]);
            written[k] = true;
            continue;
        }
        jsonw_kjson(w, a->string, a);
    }
    for (size_t k = 0; k < 3; k++)
        if (!written[k])
            jsonw_knum(w, cnames[k], cvals[k]);
    jsonw_end(w);
}

void brand_write_index_entry_json(struct jsonw *w, const cJSON *entry)
{
    const char *id = str_attr(entry, "id");
    const char *plan = str_attr(entry, "plan");

    if (!id || !*id)
        id = str_attr(entry, "brandId");
    jsonw_obj(w);
    jsonw_kstr(w, "id", id);
    jsonw_kstr(w, "name", str_attr(entry, "name"));
    jsonw_kstr(w, "domain", str_attr(entry, "domain"));
    jsonw_kstr(w, "industry", str_attr(entry, "industry"));
    jsonw_kstr(w, "plan", plan && *plan ? plan : "free");
    jsonw_kstr(w, "createdAt", str_attr(entry, "createdAt"));
    jsonw_end(w);
}

void brand_write_counters_json(struct jsonw *w, const struct brand_counters *c)
{
    jsonw_obj(w);
    jsonw_knum(w, "productCount", c->product_count);
    jsonw_knum(w, "scanCount", c->scan_count);
    jsonw_knum(w, "threatCount", c->threat_count);
    jsonw_end(w);
}
