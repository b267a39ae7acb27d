/*
 * state.c - the detector's per-product window state (see state.h): the
 * in-memory updates the checks rely on and the DETSTATE item format:
 *
 *   {"PK":"PRODUCT#<id>","SK":"DETSTATE","productId":"<id>","v":1,
 *    "scans":<n>,"recent":[<ms>,...],"countries":[["FR",<ms>],...],
 *    "lastEvent":{"seq":<n>,"hash":"..","timestamp":"..","actor":".."}}
 *
 * Times are stored as epoch milliseconds (exact in a double up to 2^53).
 *
 * The state cache is a hash table (chained through entry indices) over an
 * entry array, with the entries also on a doubly linked LRU list; each
 * entry keeps only the used part of its state (the countries array is
 * last in the struct and mostly empty).
 */
#include "detect/state.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/keys.h"
#include "util/hash.h"
#include "util/xalloc.h"

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
    v = cJSON_GetObjectItemCaseSensitive(item, "lastVerdict");
    if (cJSON_IsNumber(v) && v->valuedouble >= 1 && v->valuedouble <= UINT32_MAX &&
        v->valuedouble == floor(v->valuedouble))
        st->last_verdict = (uint32_t)v->valuedouble;
}

/* Adds v under the constant name (a string literal: not copied). */
static void add_cs(cJSON *o, const char *name, cJSON *v)
{
    if (o && v)
        cJSON_AddItemToObjectCS(o, name, v);
    else
        cJSON_Delete(v);
}

cJSON *det_state_to_item(const struct det_state *st, const char *product_id)
{
    struct key pk;
    cJSON *item, *arr, *ev;

    if (!key_product_pk(&pk, product_id))
        return NULL;
    /* Attribute names are literals, added without copies: this item is
     * built once per product and batch. */
    item = cJSON_CreateObject();
    add_cs(item, "PK", cJSON_CreateString(pk.s));
    add_cs(item, "SK", cJSON_CreateString(KEY_SK_DETSTATE));
    add_cs(item, "productId", cJSON_CreateString(product_id));
    add_cs(item, "v", cJSON_CreateNumber(DETSTATE_VERSION));
    add_cs(item, "scans", cJSON_CreateNumber((double)st->scans));
    arr = cJSON_CreateArray();
    for (size_t i = 0; arr && i < st->nrecent; i++)
        cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)st->recent[i]));
    add_cs(item, "recent", arr);
    arr = cJSON_CreateArray();
    for (size_t i = 0; arr && i < st->ncountries; i++) {
        cJSON *pair = cJSON_CreateArray();
        cJSON_AddItemToArray(pair, cJSON_CreateString(st->countries[i].code));
        cJSON_AddItemToArray(pair, cJSON_CreateNumber((double)st->countries[i].last_ms));
        cJSON_AddItemToArray(arr, pair);
    }
    add_cs(item, "countries", arr);
    if (st->has_event) {
        ev = cJSON_CreateObject();
        add_cs(ev, "seq", cJSON_CreateNumber(st->last_event.seq));
        add_cs(ev, "hash", cJSON_CreateString(st->last_event.hash));
        add_cs(ev, "timestamp", cJSON_CreateString(st->last_event.timestamp));
        add_cs(ev, "actor", cJSON_CreateString(st->last_event.actor));
        add_cs(item, "lastEvent", ev);
    }
    if (st->last_verdict) {
        add_cs(item, "lastVerdict", cJSON_CreateNumber(st->last_verdict));
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

size_t det_state_countries_between(const struct det_state *st, int64_t from_ms, int64_t to_ms,
                                   const char **out)
{
    size_t n = 0;
    for (size_t i = 0; i < st->ncountries; i++)
        if (st->countries[i].last_ms >= from_ms && st->countries[i].last_ms <= to_ms)
            out[n++] = st->countries[i].code;
    /* At most DET_COUNTRIES_MAX (32) codes: an insertion sort costs less
     * than qsort's merge sort with its buffer, on every scan of a product
     * seen in many countries. */
    for (size_t i = 1; i < n; i++) {
        const char *v = out[i];
        size_t j = i;
        for (; j > 0 && strcmp(out[j - 1], v) > 0; j--)
            out[j] = out[j - 1];
        out[j] = v;
    }
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

/* ---------- state cache ---------- */

#define NIL UINT32_MAX

struct cache_ent {
    char *pid;
    uint64_t h;
    uint32_t hnext;        /* next entry of the bucket */
    uint32_t older, newer; /* LRU neighbours */
    size_t len;            /* bytes of *st that are kept */
    bool dirty;            /* newer than the stored item (deferred write) */
    struct det_state *st;  /* len bytes allocated */
};

struct det_state_cache {
    struct cache_ent *e;
    size_t n, cap, max;
    size_t ndirty;
    uint32_t *bucket;
    size_t mask;
    uint32_t newest, oldest;
};

/* Smallest bucket array; it doubles with the entries (never beyond one
 * bucket per entry of the largest size), so an idle cache stays small. */
#define BUCKETS_MIN 64

/* Sizes the bucket array to nb (a power of two) and rechains every entry. */
static void cache_rehash(struct det_state_cache *c, size_t nb)
{
    free(c->bucket);
    c->bucket = xmalloc(nb * sizeof(*c->bucket));
    memset(c->bucket, 0xff, nb * sizeof(*c->bucket));
    c->mask = nb - 1;
    for (size_t i = 0; i < c->n; i++) {
        uint32_t *b = &c->bucket[c->e[i].h & c->mask];
        c->e[i].hnext = *b;
        *b = (uint32_t)i;
    }
}

struct det_state_cache *det_state_cache_new(size_t max_entries)
{
    struct det_state_cache *c = xcalloc(1, sizeof(*c));

    if (max_entries == 0)
        max_entries = DET_STATE_CACHE_DEFAULT;
    if (max_entries > (size_t)1 << 24)
        max_entries = (size_t)1 << 24;
    c->max = max_entries;
    c->newest = c->oldest = NIL;
    cache_rehash(c, BUCKETS_MIN);
    return c;
}

void det_state_cache_clear(struct det_state_cache *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->e[i].pid);
        free(c->e[i].st);
    }
    c->n = 0;
    c->ndirty = 0;
    memset(c->bucket, 0xff, (c->mask + 1) * sizeof(*c->bucket));
    c->newest = c->oldest = NIL;
}

void det_state_cache_free(struct det_state_cache *c)
{
    if (!c)
        return;
    det_state_cache_clear(c);
    free(c->e);
    free(c->bucket);
    free(c);
}

size_t det_state_cache_count(const struct det_state_cache *c)
{
    return c->n;
}

static uint32_t cache_find(const struct det_state_cache *c, const char *pid, uint64_t h)
{
    for (uint32_t i = c->bucket[h & c->mask]; i != NIL; i = c->e[i].hnext)
        if (c->e[i].h == h && strcmp(c->e[i].pid, pid) == 0)
            return i;
    return NIL;
}

static void lru_unlink(struct det_state_cache *c, uint32_t i)
{
    struct cache_ent *e = &c->e[i];
    if (e->older != NIL)
        c->e[e->older].newer = e->newer;
    else
        c->oldest = e->newer;
    if (e->newer != NIL)
        c->e[e->newer].older = e->older;
    else
        c->newest = e->older;
}

static void lru_push(struct det_state_cache *c, uint32_t i)
{
    struct cache_ent *e = &c->e[i];
    e->newer = NIL;
    e->older = c->newest;
    if (c->newest != NIL)
        c->e[c->newest].newer = i;
    c->newest = i;
    if (c->oldest == NIL)
        c->oldest = i;
}

static void hash_unlink(struct det_state_cache *c, uint32_t i)
{
    uint32_t *link = &c->bucket[c->e[i].h & c->mask];
    while (*link != i)
        link = &c->e[*link].hnext;
    *link = c->e[i].hnext;
}

bool det_state_cache_get(struct det_state_cache *c, const char *product_id, struct det_state *out)
{
    uint32_t i = cache_find(c, product_id, hash_str(product_id));

    if (i == NIL)
        return false;
    det_state_init(out);
    memcpy(out, c->e[i].st, c->e[i].len);
    if (c->newest != i) {
        lru_unlink(c, i);
        lru_push(c, i);
    }
    return true;
}

/* The least recently used entry without a deferred write, NIL if all
 * have one. */
static uint32_t oldest_clean(const struct det_state_cache *c)
{
    uint32_t i = c->oldest;
    while (i != NIL && c->e[i].dirty)
        i = c->e[i].newer;
    return i;
}

static void cache_store(struct det_state_cache *c, const char *product_id,
                        const struct det_state *st, bool dirty)
{
    uint64_t h = hash_str(product_id);
    uint32_t i = cache_find(c, product_id, h);
    size_t nc = st->ncountries < DET_COUNTRIES_MAX ? st->ncountries : DET_COUNTRIES_MAX;
    size_t len = offsetof(struct det_state, countries) + nc * sizeof(st->countries[0]);
    uint32_t victim = NIL;
    struct cache_ent *e;

    if (i == NIL && c->n >= c->max)
        victim = oldest_clean(c);
    if (i != NIL) {
        lru_unlink(c, i);
    } else if (c->n < c->max || victim == NIL) {
        /* Room, or every entry holds a deferred write: those are never
         * dropped (the cache grows past max until the owner writes
         * them, see det_state_cache_dirty). */
        if (c->n == c->cap) {
            c->cap = c->cap ? c->cap * 2 : 64;
            if (c->cap > c->max && c->n < c->max)
                c->cap = c->max;
            c->e = xrealloc(c->e, c->cap * sizeof(*c->e));
        }
        if (c->n > c->mask)
            cache_rehash(c, (c->mask + 1) * 2); /* before the new entry exists */
        i = (uint32_t)c->n++;
        memset(&c->e[i], 0, sizeof(c->e[i]));
    } else {
        /* Full: the least recently used clean entry makes room. */
        i = victim;
        lru_unlink(c, i);
        hash_unlink(c, i);
        free(c->e[i].pid);
        c->e[i].pid = NULL;
    }
    e = &c->e[i];
    if (!e->pid) {
        e->pid = xstrdup(product_id);
        e->h = h;
        e->hnext = c->bucket[h & c->mask];
        c->bucket[h & c->mask] = i;
    }
    if (e->len != len) {
        e->st = xrealloc(e->st, len);
        e->len = len;
    }
    memcpy(e->st, st, len);
    e->st->ncountries = nc;
    if (dirty && !e->dirty) {
        e->dirty = true;
        c->ndirty++;
    }
    lru_push(c, i);
}

void det_state_cache_put(struct det_state_cache *c, const char *product_id,
                         const struct det_state *st)
{
    cache_store(c, product_id, st, false);
}

void det_state_cache_stage(struct det_state_cache *c, const char *product_id,
                           const struct det_state *st)
{
    cache_store(c, product_id, st, true);
}

size_t det_state_cache_dirty(const struct det_state_cache *c)
{
    return c->ndirty;
}

int det_state_cache_each_dirty(const struct det_state_cache *c,
                               int (*fn)(void *arg, const char *product_id,
                                         const struct det_state *st),
                               void *arg)
{
    struct det_state st;
    for (size_t i = 0; i < c->n; i++) {
        int rc;
        if (!c->e[i].dirty)
            continue;
        det_state_init(&st);
        memcpy(&st, c->e[i].st, c->e[i].len);
        rc = fn(arg, c->e[i].pid, &st);
        if (rc)
            return rc;
    }
    return 0;
}

void det_state_cache_mark_clean(struct det_state_cache *c)
{
    for (size_t i = 0; i < c->n; i++)
        c->e[i].dirty = false;
    c->ndirty = 0;
}

bool det_state_cache_peek(const struct det_state_cache *c, const char *product_id,
                          struct det_state *out)
{
    uint32_t i = cache_find(c, product_id, hash_str(product_id));
    if (i == NIL)
        return false;
    det_state_init(out);
    memcpy(out, c->e[i].st, c->e[i].len);
    return true;
}
