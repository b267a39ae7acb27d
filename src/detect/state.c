/*
 * state.c - the detector's per-product window state (see state.h): the
 * in-memory updates the checks rely on and the DETSTATE item format:
 *
 *   {"PK":"PRODUCT#<id>","SK":"DETSTATE","productId":"<id>","v":1,
 *    "scans":<n>,"recent":[<ms>,...],"countries":[["FR",<ms>],...],
 *    "lastEvent":{"seq":<n>,"hash":"..","timestamp":"..","actor":".."}}
 *
 * Times are stored as epoch milliseconds (exact in a double up to 2^53).
 */
#include "detect/state.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/keys.h"

/* Copies src into dst (capacity cap, NUL included), cutting it to fit. */
static void copy_cut(char *dst, size_t cap, const char *src)
{
    size_t n = src ? strlen(src) : 0;
    if (n >= cap)
        n = cap - 1;
    if (n)
        memcpy(dst, src, n);
    dst[n] = '\0';
}

void det_state_init(struct det_state *st)
{
    memset(st, 0, sizeof(*st));
}

bool det_country_known(const char *country)
{
    size_t n;
    if (!country)
        return false;
    n = strlen(country);
    return n > 0 && n <= DET_COUNTRY_MAX && strcmp(country, "Unknown") != 0 &&
           strcmp(country, "Local") != 0;
}

/* A millisecond time held in a JSON number, or false when it is not one. */
static bool json_ms(const cJSON *v, int64_t *out)
{
    double d;
    if (!cJSON_IsNumber(v))
        return false;
    d = v->valuedouble;
    if (!isfinite(d) || d < -9.0e15 || d > 9.0e15)
        return false;
    *out = (int64_t)d;
    return true;
}

/* Inserts ts into the ascending recent[] array, dropping the oldest time
 * when full (a time older than every remembered one is then ignored). */
static void recent_insert(struct det_state *st, int64_t ts)
{
    size_t i;
    if (st->nrecent == DET_BURST_MIN_SCANS) {
        if (ts < st->recent[0])
            return;
        memmove(&st->recent[0], &st->recent[1], (st->nrecent - 1) * sizeof(st->recent[0]));
        st->nrecent--;
    }
    i = st->nrecent;
    while (i > 0 && st->recent[i - 1] > ts) {
        st->recent[i] = st->recent[i - 1];
        i--;
    }
    st->recent[i] = ts;
    st->nrecent++;
}

/* Raises a country's last-seen time; a new country takes a free slot or
 * replaces the one seen longest ago (if that is older than ts). */
static void country_see(struct det_state *st, const char *code, int64_t ts)
{
    size_t i, oldest = 0;
    for (i = 0; i < st->ncountries; i++) {
        if (strcmp(st->countries[i].code, code) == 0) {
            if (ts > st->countries[i].last_ms)
                st->countries[i].last_ms = ts;
            return;
        }
        if (st->countries[i].last_ms < st->countries[oldest].last_ms)
            oldest = i;
    }
    if (st->ncountries < DET_COUNTRIES_MAX) {
        i = st->ncountries++;
    } else {
        if (st->countries[oldest].last_ms >= ts)
            return;
        i = oldest;
    }
    copy_cut(st->countries[i].code, sizeof(st->countries[i].code), code);
    st->countries[i].last_ms = ts;
}

void det_state_from_item(struct det_state *st, const cJSON *item)
{
    const cJSON *v, *e;
    int64_t ms;

    det_state_init(st);
    if (!cJSON_IsObject(item))
        return;
    v = cJSON_GetObjectItemCaseSensitive(item, "scans");
    if (cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble >= 0 &&
        v->valuedouble < 9.0e15)
        st->scans = (uint64_t)v->valuedouble;
    v = cJSON_GetObjectItemCaseSensitive(item, "recent");
    cJSON_ArrayForEach(e, (cJSON_IsArray(v) ? v : NULL))
    {
        if (json_ms(e, &ms))
            recent_insert(st, ms);
    }
    v = cJSON_GetObjectItemCaseSensitive(item, "countries");
    cJSON_ArrayForEach(e, (cJSON_IsArray(v) ? v : NULL))
    {
        const cJSON *c = cJSON_GetArrayItem(e, 0);
        if (cJSON_IsArray(e) && cJSON_IsString(c) && det_country_known(c->valuestring) &&
            json_ms(cJSON_GetArrayItem(e, 1), &ms))
            country_see(st, c->valuestring, ms);
    }
    v = cJSON_GetObjectItemCaseSensitive(item, "lastEvent");
    if (cJSON_IsObject(v)) {
        const cJSON *seq = cJSON_GetObjectItemCaseSensitive(v, "seq");
        const cJSON *hash = cJSON_GetObjectItemCaseSensitive(v, "hash");
        const cJSON *ts = cJSON_GetObjectItemCaseSensitive(v, "timestamp");
        const cJSON *actor = cJSON_GetObjectItemCaseSensitive(v, "actor");
        if (cJSON_IsNumber(seq) && seq->valuedouble >= 0 && seq->valuedouble <= UINT32_MAX &&
            cJSON_IsString(hash) && strlen(hash->valuestring) <= CRYPTO_HEX_LEN &&
            cJSON_IsString(ts) && time_is_iso(ts->valuestring) &&
            !time_parse_iso(ts->valuestring, &ms)) {
            st->has_event = true;
            st->last_event.seq = (uint32_t)seq->valuedouble;
            copy_cut(st->last_event.hash, sizeof(st->last_event.hash), hash->valuestring);
            copy_cut(st->last_event.timestamp, sizeof(st->last_event.timestamp), ts->valuestring);
            st->last_event.ts_ms = ms;
            copy_cut(st->last_event.actor, sizeof(st->last_event.actor),
                     cJSON_IsString(actor) ? actor->valuestring : "");
        }
    }
}

cJSON *det_state_to_item(const struct det_state *st, const char *product_id)
{
    struct key pk;
    cJSON *item, *arr, *ev;

    if (!key_product_pk(&pk, product_id))
        return NULL;
    item = cJSON_CreateObject();
    cJSON_AddStringToObject(item, "PK", pk.s);
    cJSON_AddStringToObject(item, "SK", KEY_SK_DETSTATE);
    cJSON_AddStringToObject(item, "productId", product_id);
    cJSON_AddNumberToObject(item, "v", DETSTATE_VERSION);
    cJSON_AddNumberToObject(item, "scans", (double)st->scans);
    arr = cJSON_AddArrayToObject(item, "recent");
    for (size_t i = 0; arr && i < st->nrecent; i++)
        cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)st->recent[i]));
    arr = cJSON_AddArrayToObject(item, "countries");
    for (size_t i = 0; arr && i < st->ncountries; i++) {
        cJSON *pair = cJSON_CreateArray();
        cJSON_AddItemToArray(pair, cJSON_CreateString(st->countries[i].code));
        cJSON_AddItemToArray(pair, cJSON_CreateNumber((double)st->countries[i].last_ms));
        cJSON_AddItemToArray(arr, pair);
    }
    if (st->has_event) {
        ev = cJSON_AddObjectToObject(item, "lastEvent");
        cJSON_AddNumberToObject(ev, "seq", st->last_event.seq);
        cJSON_AddStringToObject(ev, "hash", st->last_event.hash);
        cJSON_AddStringToObject(ev, "timestamp", st->last_event.timestamp);
        cJSON_AddStringToObject(ev, "actor", st->last_event.actor);
    }
    return item;
}

void det_state_add_scan(struct det_state *st, int64_t ts_ms, const char *country)
{
    st->scans++;
    recent_insert(st, ts_ms);
    if (det_country_known(country))
        country_see(st, country, ts_ms);
}

unsigned det_state_scans_between(const struct det_state *st, int64_t from_ms, int64_t to_ms)
{
    unsigned n = 0;
    for (size_t i = 0; i < st->nrecent; i++)
        if (st->recent[i] >= from_ms && st->recent[i] <= to_ms)
            n++;
    return n;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

size_t det_state_countries_between(const struct det_state *st, int64_t from_ms, int64_t to_ms,
                                   const char **out)
{
    size_t n = 0;
    for (size_t i = 0; i < st->ncountries; i++)
        if (st->countries[i].last_ms >= from_ms && st->countries[i].last_ms <= to_ms)
            out[n++] = st->countries[i].code;
    qsort(out, n, sizeof(*out), cmp_str);
    return n;
}

void det_state_set_event(struct det_state *st, const struct det_event *ev)
{
    st->has_event = true;
    st->last_event.seq = ev->seq;
    copy_cut(st->last_event.hash, sizeof(st->last_event.hash), ev->hash);
    copy_cut(st->last_event.timestamp, sizeof(st->last_event.timestamp), ev->timestamp);
    st->last_event.ts_ms = ev->ts_ms;
    copy_cut(st->last_event.actor, sizeof(st->last_event.actor), ev->actor);
}
