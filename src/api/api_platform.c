/*
 * api_platform.c - analytics, the activity feed and the public gallery
 * (API.md §9.41-§9.43).
 *
 *   GET /api/analytics?brandId=          ADMIN without brandId, BRAND with its own
 *   GET /api/audit?limit=                ADMIN
 *   GET /api/explore?limit=&status=&cursor=   PUBLIC
 *
 * Analytics [D35]: with brandId the brand's own products are selected
 * directly (GSI1 BRAND#<id> / PRODUCT#, newest first), never filtered out
 * of a platform-wide page; without it the newest entries of PRODUCT_INDEX.
 * The work is bounded like the original's: at most ANALYTICS_PRODUCTS
 * products and the newest ANALYTICS_SCANS scans of each of them, and
 * totalScans is exactly the number of scans read, so every bucket sums to
 * it.  Days and hours are UTC [D34].  Status comes from the product item
 * itself (brand mode) or from the index entry, which status changes keep
 * current (api_events.c) [D24].
 *
 * Audit [D37]: the audit trail written by api_audit() (AUDIT#<day>
 * partitions, newest day first, going back at most AUDIT_DAYS days) gives
 * "audit" entries; the original's feed is kept beside it: the newest 5
 * events and 5 scans of the newest 10 products, and the newest 5 alerts of
 * the newest 20 brands (the original had none).  Everything is merged by
 * timestamp, newest first, and cut to `limit`.
 *
 * Explore [D24][D44]: walks PRODUCT_INDEX newest first and reads each
 * product item for its live status and scanCount (the index never had a
 * live scanCount), keeping products whose status matches.  Pages continue
 * with an opaque `cursor` (hex of the last index key returned); the answer
 * carries "nextCursor" (null on the last page; a page may end early, with
 * a cursor, after EXPLORE_EXAMINE index entries so that a rare status
 * never makes one request read the whole index).
 */
#include "api/api_platform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/pager.h"
#include "core/keys.h"
#include "core/product.h"
#include "store/store.h"
#include "util/err.h"

#define ANALYTICS_PRODUCTS  500
#define ANALYTICS_SCANS     50
#define ANALYTICS_DAYS      7
#define ANALYTICS_COUNTRIES 10

#define AUDIT_DEFAULT_LIMIT 30
#define AUDIT_DAYS          90
#define AUDIT_PRODUCTS      10
#define AUDIT_PER_PRODUCT   5
#define AUDIT_BRANDS        20
#define AUDIT_PER_BRAND     5

#define EXPLORE_DEFAULT_LIMIT 50
#define EXPLORE_EXAMINE       5000
#define EXPLORE_CURSOR_MAX    512

#define LIMIT_MAX 500

static const char *str_attr(const cJSON *item, const char *k)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(item, k));
}

/* JS-truthy string attribute or NULL. */
static const char *truthy(const cJSON *item, const char *k)
{
    const char *s = str_attr(item, k);
    return s && *s ? s : NULL;
}

/* ---------- counting keys in first-seen order ---------- */

struct tally_ent {
    const char *key; /* request arena */
    long count;
    size_t order;
};

struct tally {
    struct tally_ent *v;
    size_t n, cap;
};

static void tally_add(struct api_req *r, struct tally *t, const char *key)
{
    for (size_t i = 0; i < t->n; i++)
        if (!strcmp(t->v[i].key, key)) {
            t->v[i].count++;
            return;
        }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        struct tally_ent *nv = api_alloc(r, cap * sizeof *nv);
        if (t->n)
            memcpy(nv, t->v, t->n * sizeof *nv);
        t->v = nv;
        t->cap = cap;
    }
    t->v[t->n] = (struct tally_ent){.key = api_strdup(r, key), .count = 1, .order = t->n};
    t->n++;
}

/* Count descending, ties in first-seen order (a stable sort, like JS). */
static int tally_cmp(const void *a, const void *b)
{
    const struct tally_ent *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static void tally_sort(struct tally *t)
{
    if (t->n > 1)
        qsort(t->v, t->n, sizeof *t->v, tally_cmp);
}

/* ---------- analytics ---------- */

struct analytics {
    struct api_req *r;
    cJSON *products; /* array of product-like items (owned) */
    long total_scans;
    char days[ANALYTICS_DAYS][11];
    long day_count[ANALYTICS_DAYS];
    long hours[24];
    struct tally countries, results;
};

static int analytics_scan(void *arg, const cJSON *scan)
{
    struct analytics *a = arg;
    const char *ts = str_attr(scan, "timestamp");
    int64_t ms;
    a->total_scans++;
    if (ts && strlen(ts) >= 10)
        for (int d = 0; d < ANALYTICS_DAYS; d++)
            if (!memcmp(ts, a->days[d], 10))
                a->day_count[d]++;
    if (ts && !time_parse_iso(ts, &ms)) {
        char iso[ISO_LEN + 1];
        time_iso(ms, iso); /* normalised to UTC */
        int h = (iso[11] - '0') * 10 + (iso[12] - '0');
        if (h >= 0 && h < 24)
            a->hours[h]++;
    }
    const char *country = truthy(scan, "country");
    tally_add(a->r, &a->countries, country ? country : "Unknown");
    const char *result = truthy(scan, "result");
    tally_add(a->r, &a->results, result ? result : "unknown");
    return 0;
}

static void analytics_get(struct api_req *r)
{
    const char *brand_id = api_query(r, "brandId");
    struct store_query q = {.sk_op = STORE_SK_BEGINS, .sk = KEY_PFX_PRODUCT, .forward = false};
    struct analytics a = {.r = r};
    struct tally cats = {0}, statuses = {0};
    struct key pk;
    const cJSON *p;
    struct jsonw *w;
    int rc;

    if (!api_query_ok(r))
        return;
    if (brand_id) {
        if (!api_require_brand(r, brand_id))
            return;
        if (!key_brand_pk(&pk, brand_id)) {
            api_error(r, 400, "Invalid brandId");
            return;
        }
        q.index = STORE_INDEX_GSI1;
        q.pk = pk.s;
    } else {
        if (!api_is_admin(r)) {
            api_error(r, 403, "Forbidden");
            return;
        }
        q.index = STORE_INDEX_TABLE;
        q.pk = KEY_PK_PRODUCT_INDEX;
    }
    rc = pager_collect(api_store(r), &q, ANALYTICS_PRODUCTS, &a.products);
    if (rc)
        goto fail;
    for (int d = 0; d < ANALYTICS_DAYS; d++)
        time_day_bucket(r->now_ms - (int64_t)(ANALYTICS_DAYS - 1 - d) * TIME_DAY_MS, a.days[d]);
    cJSON_ArrayForEach(p, a.products)
    {
        const char *pid = str_attr(p, "productId");
        struct key ppk;
        const char *cat = truthy(p, "category");
        const char *st = truthy(p, "status");
        tally_add(r, &cats, cat ? cat : "Uncategorized");
        tally_add(r, &statuses, st ? st : "active");
        if (!pid || !key_product_pk(&ppk, pid))
            continue;
        struct store_query sq = {.pk = ppk.s, .sk_op = STORE_SK_BEGINS, .sk = KEY_PFX_SCAN};
        rc = pager_each(api_store(r), &sq, ANALYTICS_SCANS, analytics_scan, &a, NULL);
        if (rc)
            goto fail;
    }
    tally_sort(&a.countries);
    tally_sort(&cats);

    w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_kint(w, "totalScans", a.total_scans);
    jsonw_kint(w, "totalProducts", cJSON_GetArraySize(a.products));
    jsonw_key(w, "dailyScans");
    jsonw_arr(w);
    for (int d = 0; d < ANALYTICS_DAYS; d++) {
        jsonw_obj(w);
        jsonw_kstr(w, "date", a.days[d]);
        jsonw_kint(w, "count", a.day_count[d]);
        jsonw_end(w);
    }
    jsonw_end(w);
    jsonw_key(w, "topCountries");
    jsonw_arr(w);
    for (size_t i = 0; i < a.countries.n && i < ANALYTICS_COUNTRIES; i++) {
        jsonw_obj(w);
        jsonw_kstr(w, "country", a.countries.v[i].key);
        jsonw_kint(w, "count", a.countries.v[i].count);
        jsonw_end(w);
    }
    jsonw_end(w);
    jsonw_key(w, "resultBreakdown");
    jsonw_obj(w);
    for (size_t i = 0; i < a.results.n; i++)
        jsonw_kint(w, a.results.v[i].key, a.results.v[i].count);
    jsonw_end(w);
    jsonw_key(w, "hourlyDistribution");
    jsonw_arr(w);
    for (int h = 0; h < 24; h++)
        jsonw_int(w, a.hours[h]);
    jsonw_end(w);
    jsonw_key(w, "categoryBreakdown");
    jsonw_arr(w);
    for (size_t i = 0; i < cats.n; i++) {
        jsonw_obj(w);
        jsonw_kstr(w, "category", cats.v[i].key);
        jsonw_kint(w, "count", cats.v[i].count);
        jsonw_end(w);
    }
    jsonw_end(w);
    jsonw_key(w, "statusBreakdown");
    jsonw_obj(w);
    for (size_t i = 0; i < statuses.n; i++)
        jsonw_kint(w, statuses.v[i].key, statuses.v[i].count);
    jsonw_end(w);
    jsonw_end(w);
    cJSON_Delete(a.products);
    return;
fail:
    cJSON_Delete(a.products);
    api_fail(r, "Failed to load analytics", rc);
}

/* ---------- audit ---------- */

enum feed_kind { FEED_AUDIT, FEED_EVENT, FEED_SCAN, FEED_ALERT };

struct feed_ent {
    enum feed_kind kind;
    const char *ts;  /* borrowed from item */
    cJSON *item;     /* owned */
    const char *pid; /* product id for events/scans (arena) */
};

struct feed {
    struct api_req *r;
    struct feed_ent *v;
    size_t n, cap;
    enum feed_kind kind; /* of the items being added */
    const char *pid;
    size_t max_this; /* cap of the current source (0: none) */
    size_t added_this;
};

static int feed_add(void *arg, const cJSON *item)
{
    struct feed *f = arg;
    const char *ts = str_attr(item, "timestamp");
    if (!ts || !*ts)
        return 0; /* items without a timestamp are dropped, as in §9.42 */
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 64;
        struct feed_ent *nv = api_alloc(f->r, cap * sizeof *nv);
        if (f->n)
            memcpy(nv, f->v, f->n * sizeof *nv);
        f->v = nv;
        f->cap = cap;
    }
    cJSON *dup = cJSON_Duplicate(item, 1);
    if (!dup)
        return ERR_NOMEM;
    f->v[f->n++] = (struct feed_ent){
        .kind = f->kind, .ts = str_attr(dup, "timestamp"), .item = dup, .pid = f->pid};
    f->added_this++;
    return f->max_this && f->added_this >= f->max_this ? 1 : 0;
}

static void feed_free(struct feed *f)
{
    for (size_t i = 0; i < f->n; i++)
        cJSON_Delete(f->v[i].item);
    f->n = 0;
}

static int feed_cmp(const void *a, const void *b)
{
    const struct feed_ent *x = a, *y = b;
    return -strcmp(x->ts, y->ts);
}

/* Runs q into the feed as kind, keeping at most max items with a
 * timestamp. */
static int feed_source(struct feed *f, const struct store_query *q, enum feed_kind kind,
                       const char *pid, size_t max)
{
    f->kind = kind;
    f->pid = pid;
    f->max_this = max;
    f->added_this = 0;
    return pager_each(api_store(f->r), q, 0, feed_add, f, NULL);
}

/* The audit trail: day partitions from today back, newest first. */
static int feed_audit_trail(struct feed *f, long limit)
{
    size_t before = f->n;
    for (int d = 0; d < AUDIT_DAYS && f->n - before < (size_t)limit; d++) {
        char day[11];
        struct key pk;
        time_day_bucket(f->r->now_ms - (int64_t)d * TIME_DAY_MS, day);
        if (!key_audit_pk_day(&pk, day))
            return ERR_INVALID;
        struct store_query q = {.pk = pk.s, .forward = false};
        int rc = feed_source(f, &q, FEED_AUDIT, NULL, (size_t)limit - (f->n - before));
        if (rc)
            return rc;
    }
    return 0;
}

/* Events and scans of the newest products (the original's fallback). */
static int feed_products(struct feed *f)
{
    struct store_query q = {.pk = KEY_PK_PRODUCT_INDEX,
                            .sk_op = STORE_SK_BEGINS,
                            .sk = KEY_PFX_PRODUCT,
                            .forward = false};
    cJSON *idx = NULL;
    const cJSON *e;
    int rc = pager_collect(api_store(f->r), &q, AUDIT_PRODUCTS, &idx);
    if (rc)
        return rc;
    cJSON_ArrayForEach(e, idx)
    {
        const char *pid = str_attr(e, "productId");
        struct key pk;
        if (!pid || !key_product_pk(&pk, pid))
            continue;
        const char *apid = api_strdup(f->r, pid);
        struct store_query eq = {.pk = pk.s, .sk_op = STORE_SK_BEGINS, .sk = KEY_PFX_EVENT};
        rc = feed_source(f, &eq, FEED_EVENT, apid, AUDIT_PER_PRODUCT);
        if (!rc) {
            struct store_query sq = {.pk = pk.s, .sk_op = STORE_SK_BEGINS, .sk = KEY_PFX_SCAN};
            rc = feed_source(f, &sq, FEED_SCAN, apid, AUDIT_PER_PRODUCT);
        }
        if (rc)
            break;
    }
    cJSON_Delete(idx);
    return rc;
}

/* Alerts of the newest brands (GSI1 BRAND#<id> / THREAT#). */
static int feed_alerts(struct feed *f)
{
    struct store_query q = {
        .pk = KEY_PK_BRAND_INDEX, .sk_op = STORE_SK_BEGINS, .sk = KEY_PFX_BRAND, .forward = false};
    cJSON *brands = NULL;
    const cJSON *b;
    int rc = pager_collect(api_store(f->r), &q, AUDIT_BRANDS, &brands);
    if (rc)
        return rc;
    cJSON_ArrayForEach(b, brands)
    {
        const char *id = str_attr(b, "brandId");
        struct key pk;
        if (!id || !key_brand_pk(&pk, id))
            continue;
        struct store_query aq = {
            .index = STORE_INDEX_GSI1, .pk = pk.s, .sk_op = STORE_SK_BEGINS, .sk = KEY_PFX_THREAT};
        rc = feed_source(f, &aq, FEED_ALERT, NULL, AUDIT_PER_BRAND);
        if (rc)
            break;
    }
    cJSON_Delete(brands);
    return rc;
}

static void feed_write(struct jsonw *w, const struct feed_ent *e)
{
    const cJSON *it = e->item;
    jsonw_obj(w);
    switch (e->kind) {
    case FEED_AUDIT:
        jsonw_kstr(w, "type", "audit");
        jsonw_kstr(w, "action", str_attr(it, "action"));
        jsonw_kstr(w, "actor", str_attr(it, "actor"));
        jsonw_kstr(w, "brandId", str_attr(it, "brandId"));
        jsonw_kstr(w, "productId", str_attr(it, "productId"));
        jsonw_knull(w, "location");
        jsonw_kstr(w, "timestamp", e->ts);
        jsonw_knull(w, "hash");
        jsonw_kstr(w, "details", str_attr(it, "details"));
        break;
    case FEED_EVENT: {
        const char *h = str_attr(it, "hash");
        jsonw_kstr(w, "type", "event");
        jsonw_kstr(w, "action", str_attr(it, "type"));
        jsonw_kstr(w, "actor", str_attr(it, "actor"));
        jsonw_kstr(w, "productId", e->pid);
        jsonw_kstr(w, "location", str_attr(it, "location"));
        jsonw_kstr(w, "timestamp", e->ts);
        jsonw_key(w, "hash");
        if (h)
            jsonw_strn(w, h, strlen(h) < 12 ? strlen(h) : 12);
        else
            jsonw_null(w);
        break;
    }
    case FEED_SCAN: {
        const char *city = truthy(it, "city"), *country = truthy(it, "country");
        jsonw_kstr(w, "type", "scan");
        jsonw_kstr(w, "action", "verification_scan");
        jsonw_knull(w, "actor");
        jsonw_kstr(w, "productId", e->pid);
        jsonw_key(w, "location");
        if (city && country) {
            char loc[512];
            snprintf(loc, sizeof loc, "%s, %s", city, country);
            jsonw_str(w, loc);
        } else {
            jsonw_null(w);
        }
        jsonw_kstr(w, "timestamp", e->ts);
        jsonw_knull(w, "hash");
        jsonw_kstr(w, "result", str_attr(it, "result"));
        break;
    }
    case FEED_ALERT: {
        const char *t = truthy(it, "type");
        jsonw_kstr(w, "type", "alert");
        jsonw_kstr(w, "action", t ? t : "unknown");
        jsonw_knull(w, "actor");
        jsonw_kstr(w, "productId", str_attr(it, "productId"));
        jsonw_knull(w, "location");
        jsonw_kstr(w, "timestamp", e->ts);
        jsonw_knull(w, "hash");
        jsonw_kstr(w, "severity", str_attr(it, "severity"));
        jsonw_kstr(w, "details", str_attr(it, "details"));
        break;
    }
    }
    jsonw_end(w);
}

static void audit_get(struct api_req *r)
{
    long limit = api_query_int(r, "limit", AUDIT_DEFAULT_LIMIT, 1, LIMIT_MAX);
    struct feed f = {.r = r};
    struct jsonw *w;
    size_t n;
    int rc;

    if (!api_query_ok(r))
        return;
    rc = feed_audit_trail(&f, limit);
    if (!rc)
        rc = feed_products(&f);
    if (!rc)
        rc = feed_alerts(&f);
    if (rc) {
        feed_free(&f);
        api_fail(r, "Failed to load audit log", rc);
        return;
    }
    if (f.n > 1)
        qsort(f.v, f.n, sizeof *f.v, feed_cmp);
    n = f.n < (size_t)limit ? f.n : (size_t)limit;
    w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_key(w, "entries");
    jsonw_arr(w);
    for (size_t i = 0; i < n; i++)
        feed_write(w, &f.v[i]);
    jsonw_end(w);
    jsonw_kint(w, "count", (int64_t)n);
    jsonw_end(w);
    feed_free(&f);
}

/* ---------- explore ---------- */

struct explore {
    struct api_req *r;
    struct jsonw *w;
    const char *status;
    long limit, count;
    size_t examined;
    char last_sk[EXPLORE_CURSOR_MAX / 2 + 1]; /* index key of the last product written/examined */
    bool full;                                /* limit reached or examine cap hit */
    bool more;                                /* an entry exists after last_sk */
    int err;
};

static void explore_write(struct jsonw *w, const cJSON *p)
{
    const char *h = str_attr(p, "hash");
    jsonw_obj(w);
    jsonw_kstr(w, "productId", str_attr(p, "productId"));
    jsonw_kstr(w, "name", str_attr(p, "name"));
    jsonw_kstr(w, "brandName", str_attr(p, "brandName"));
    jsonw_kstr(w, "sku", str_attr(p, "sku"));
    jsonw_kstr(w, "category", str_attr(p, "category"));
    jsonw_kstr(w, "description", str_attr(p, "description"));
    jsonw_kstr(w, "status", truthy(p, "status") ? str_attr(p, "status") : "active");
    jsonw_kstr(w, "verificationCode", str_attr(p, "verificationCode"));
    jsonw_key(w, "hash");
    if (h) {
        char cut[32];
        snprintf(cut, sizeof cut, "%.16s...", h);
        jsonw_str(w, cut);
    } else {
        jsonw_null(w);
    }
    jsonw_kstr(w, "createdAt", str_attr(p, "createdAt"));
    jsonw_knum(w, "scanCount", product_scan_count(p));
    jsonw_end(w);
}

static int explore_entry(void *arg, const cJSON *idx)
{
    struct explore *x = arg;
    const char *sk = str_attr(idx, "SK");
    const char *pid = str_attr(idx, "productId");
    struct key pk;
    cJSON *prod = NULL;

    if (x->full) {
        x->more = true; /* one entry past the page: the cursor is useful */
        return 1;
    }
    if (!sk || strlen(sk) >= sizeof x->last_sk)
        return 0;
    snprintf(x->last_sk, sizeof x->last_sk, "%s", sk);
    x->examined++;
    if (pid && key_product_pk(&pk, pid)) {
        int rc = store_get(api_store(x->r), pk.s, KEY_SK_META, false, &prod);
        if (rc && rc != ERR_NOTFOUND)
            return rc;
    }
    if (prod) {
        const char *st = truthy(prod, "status");
        if (!strcmp(st ? st : "active", x->status)) {
            explore_write(x->w, prod);
            x->count++;
        }
        cJSON_Delete(prod);
    }
    if (x->count >= x->limit || x->examined >= EXPLORE_EXAMINE)
        x->full = true;
    return 0;
}

/* Decodes a cursor (lowercase hex of an index key) into sk.  0 or
 * ERR_INVALID. */
static int cursor_decode(const char *c, char *sk, size_t cap)
{
    size_t n = strlen(c);
    if (n == 0 || n % 2 || n > EXPLORE_CURSOR_MAX || n / 2 >= cap)
        return ERR_INVALID;
    for (size_t i = 0; i < n / 2; i++) {
        int v = 0;
        for (int j = 0; j < 2; j++) {
            char ch = c[2 * i + (size_t)j];
            int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
            if (d < 0)
                return ERR_INVALID;
            v = v * 16 + d;
        }
        if (v == 0)
            return ERR_INVALID;
        sk[i] = (char)v;
    }
    sk[n / 2] = '\0';
    return strncmp(sk, KEY_PFX_PRODUCT, strlen(KEY_PFX_PRODUCT)) ? ERR_INVALID : 0;
}

static void explore_get(struct api_req *r)
{
    long limit = api_query_int(r, "limit", EXPLORE_DEFAULT_LIMIT, 1, LIMIT_MAX);
    const char *status = api_query(r, "status");
    const char *cursor = api_query(r, "cursor");
    char start[EXPLORE_CURSOR_MAX / 2 + 1];
    struct store_query q = {.pk = KEY_PK_PRODUCT_INDEX, .forward = false};
    struct explore x = {.r = r, .status = status ? status : "active", .limit = limit};
    int rc;

    if (!api_query_ok(r))
        return;
    if (cursor) {
        if (cursor_decode(cursor, start, sizeof start)) {
            api_error(r, 400, "Invalid cursor");
            return;
        }
        q.sk_op = STORE_SK_LT;
        q.sk = start;
    } else {
        q.sk_op = STORE_SK_BEGINS;
        q.sk = KEY_PFX_PRODUCT;
    }
    x.w = api_json(r, 200);
    jsonw_obj(x.w);
    jsonw_key(x.w, "products");
    jsonw_arr(x.w);
    rc = pager_each(api_store(r), &q, 0, explore_entry, &x, NULL);
    if (rc) {
        api_fail(r, "Failed to load products", rc);
        return;
    }
    jsonw_end(x.w);
    jsonw_kint(x.w, "count", x.count);
    jsonw_key(x.w, "nextCursor");
    if (x.more) {
        size_t n = strlen(x.last_sk);
        char *hex = api_alloc(r, 2 * n + 1);
        for (size_t i = 0; i < n; i++)
            snprintf(hex + 2 * i, 3, "%02x", (unsigned char)x.last_sk[i]);
        jsonw_str(x.w, hex);
    } else {
        jsonw_null(x.w);
    }
    jsonw_end(x.w);
}

const struct api_route api_platform_routes[] = {
    {HTTP_M_GET, "/api/analytics", API_BRAND, analytics_get},
    {HTTP_M_GET, "/api/audit", API_ADMIN, audit_get},
    {HTTP_M_GET, "/api/explore", API_PUBLIC, explore_get},
    {0},
};
