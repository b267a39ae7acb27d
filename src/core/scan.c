/*
 * scan.c - scan rows and location aggregation.
 *
 * The original grouped scans on the text city + "," + country, so
 * ("a,b", "c") and ("a", "b,c") fell together; here the pair itself is
 * the key.  Groups live in an array in first-seen order with an
 * open-addressing index over it (FNV-1a), so aggregating the 10,000 scans
 * /api/brands/scans may read stays linear.  Ordering for output is a
 * sort on (count descending, first-seen ascending), which is what the
 * original's stable sort by count produced.
 */
#include "core/scan.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

struct loc_group {
    char *country; /* NULL allowed */
    char *city;    /* NULL allowed */
    char *last;    /* greatest timestamp seen, NULL when none */
    size_t count;
};

struct scan_loc_agg {
    struct loc_group *g; /* first-seen order */
    size_t len, cap;
    size_t *slots; /* index + 1 into g; 0 = empty */
    size_t nslots; /* power of two */
};

static const char *str_attr(const cJSON *item, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

void scan_write_row_json(struct jsonw *w, const cJSON *item)
{
    jsonw_obj(w);
    jsonw_kstr(w, "timestamp", str_attr(item, "timestamp"));
    jsonw_kstr(w, "country", str_attr(item, "country"));
    jsonw_kstr(w, "city", str_attr(item, "city"));
    jsonw_kstr(w, "result", str_attr(item, "result"));
    jsonw_end(w);
}

bool scan_country_known(const char *country)
{
    return country && *country && strcmp(country, "Unknown") != 0;
}

struct scan_loc_agg *scan_loc_agg_new(void)
{
    struct scan_loc_agg *a = xcalloc(1, sizeof *a);
    a->nslots = 64;
    a->slots = xcalloc(a->nslots, sizeof *a->slots);
    return a;
}

void scan_loc_agg_free(struct scan_loc_agg *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->len; i++) {
        free(a->g[i].country);
        free(a->g[i].city);
        free(a->g[i].last);
    }
    free(a->g);
    free(a->slots);
    free(a);
}

size_t scan_loc_agg_len(const struct scan_loc_agg *a)
{
    return a->len;
}

/* FNV-1a over one nullable string; NULL and "" hash differently. */
static uint64_t fnv_str(uint64_t h, const char *s)
{
    if (!s)
        return (h ^ 0xffu) * 1099511628211ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return (h ^ 0x01u) * 1099511628211ULL;
}

static uint64_t loc_hash(const char *country, const char *city)
{
    return fnv_str(fnv_str(14695981039346656037ULL, country), city);
}

static bool nstr_eq(const char *a, const char *b)
{
    if (!a || !b)
        return a == b;
    return strcmp(a, b) == 0;
}

static void index_insert(struct scan_loc_agg *a, size_t gi)
{
    size_t mask = a->nslots - 1;
    size_t s = (size_t)loc_hash(a->g[gi].country, a->g[gi].city) & mask;
    while (a->slots[s])
        s = (s + 1) & mask;
    a->slots[s] = gi + 1;
}

static void index_grow(struct scan_loc_agg *a)
{
    free(a->slots);
    a->nslots *= 2;
    a->slots = xcalloc(a->nslots, sizeof *a->slots);
    for (size_t i = 0; i < a->len; i++)
        index_insert(a, i);
}

void scan_loc_agg_add(struct scan_loc_agg *a, const char *country, const char *city,
                      const char *timestamp)
{
    size_t mask = a->nslots - 1;
    size_t s = (size_t)loc_hash(country, city) & mask;
    struct loc_group *g = NULL;

    for (; a->slots[s]; s = (s + 1) & mask) {
        struct loc_group *c = &a->g[a->slots[s] - 1];
        if (nstr_eq(c->country, country) && nstr_eq(c->city, city)) {
            g = c;
            break;
        }
    }
    if (!g) {
        if (a->len == a->cap) {
            a->cap = a->cap ? 2 * a->cap : 16;
            a->g = xrealloc(a->g, a->cap * sizeof *a->g);
        }
        g = &a->g[a->len];
        g->country = country ? xstrdup(country) : NULL;
        g->city = city ? xstrdup(city) : NULL;
        g->last = NULL;
        g->count = 0;
        a->len++;
        /* Keep the load factor at or below one half. */
        if (2 * a->len > a->nslots)
            index_grow(a);
        else
            index_insert(a, a->len - 1);
        g = &a->g[a->len - 1];
    }
    g->count++;
    if (timestamp && (!g->last || strcmp(timestamp, g->last) > 0)) {
        free(g->last);
        g->last = xstrdup(timestamp);
    }
}

void scan_loc_agg_add_item(struct scan_loc_agg *a, const cJSON *item)
{
    scan_loc_agg_add(a, str_attr(item, "country"), str_attr(item, "city"),
                     str_attr(item, "timestamp"));
}

struct order_ent {
    size_t count, idx;
};

static int cmp_order(const void *x, const void *y)
{
    const struct order_ent *a = x, *b = y;
    if (a->count != b->count)
        return a->count > b->count ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

void scan_loc_agg_write(struct jsonw *w, const struct scan_loc_agg *a, size_t top,
                        bool with_last_scan)
{
    struct order_ent *o = NULL;
    size_t n = a->len;

    if (n) {
        o = xmalloc(n * sizeof *o);
        for (size_t i = 0; i < n; i++) {
            o[i].count = a->g[i].count;
            o[i].idx = i;
        }
        qsort(o, n, sizeof *o, cmp_order);
    }
    jsonw_arr(w);
    for (size_t i = 0; i < n && i < top; i++) {
        const struct loc_group *g = &a->g[o[i].idx];
        jsonw_obj(w);
        jsonw_kstr(w, "country", g->country);
        jsonw_kstr(w, "city", g->city);
        jsonw_kint(w, "count", (int64_t)g->count);
        if (with_last_scan)
            jsonw_kstr(w, "lastScan", g->last);
        jsonw_end(w);
    }
    jsonw_end(w);
    free(o);
}
