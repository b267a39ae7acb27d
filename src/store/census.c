/*
 * census.c - the hot-partition report (census.h): folds the store's
 * partition census into per-family figures, keeps the hottest keys, and
 * judges each key pattern.
 *
 * The write walk may arrive in any order (the SQLite driver sorts it by
 * key, the DynamoDB one reports it in stream-time batches), so each
 * written key keeps a small record in a hash table, up to
 * CENSUS_KEYS_MAX keys.
 */
#include "store/census.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/timeutil.h"
#include "util/err.h"
#include "util/hash.h"

/* What a family's keys are, for the verdict's explanation. */
enum shape { SHAPE_ENTITY, SHAPE_SINGLE, SHAPE_BUCKET };

static enum shape family_shape(enum key_family f)
{
    switch (f) {
    case KF_BRAND_INDEX:
    case KF_PRODUCT_INDEX:
    case KF_OPS_LOG_LEGACY:
    case KF_AUDIT_LOG:
        return SHAPE_SINGLE;
    case KF_THREAT:
    case KF_OPS_LOG:
    case KF_AUDIT:
    case KF_DLQ:
        return SHAPE_BUCKET;
    default:
        return SHAPE_ENTITY;
    }
}

static void copy_pk(char dst[CENSUS_PK_SHOW], const char *pk)
{
    size_t n = strlen(pk);
    if (n >= CENSUS_PK_SHOW) {
        /* Cut on a UTF-8 boundary. */
        n = CENSUS_PK_SHOW - 1;
        while (n > 0 && ((unsigned char)pk[n] & 0xC0) == 0x80)
            n--;
    }
    memcpy(dst, pk, n);
    dst[n] = '\0';
}

static int on_partition(void *arg, const char *pk, uint64_t items, uint64_t bytes)
{
    struct census *c = arg;
    struct census_family *f = &c->fam[key_family_of(pk)];
    f->keys++;
    f->items += items;
    f->bytes += bytes;
    if (items > f->biggest_items) {
        f->biggest_items = items;
        copy_pk(f->biggest_pk, pk);
    }
    return 0;
}

/* The written keys, followed one by one (open addressing on the shown
 * key; at most CENSUS_KEYS_MAX, later ones only count in their family). */
struct keyst {
    char *pk; /* shown (cut) key, owned; NULL = empty slot */
    uint64_t hash;
    struct census_hot hot;
};

struct walk {
    struct census *c;
    struct keyst *slot;
    size_t nslot, n; /* nslot: power of two, 0 before the first key */
};

static uint64_t pk_hash(const char *pk)
{
    return hash_str(pk);
}

/* Higher peak first, then the key in byte order. */
static bool hot_before(const struct census_hot *a, const struct census_hot *b)
{
    if (a->peak_wcu != b->peak_wcu)
        return a->peak_wcu > b->peak_wcu;
    return strcmp(a->pk, b->pk) < 0;
}

static void top_insert(struct census *c, const struct census_hot *h)
{
    size_t i;
    if (c->ntop == CENSUS_TOP && !hot_before(h, &c->top[CENSUS_TOP - 1]))
        return;
    i = c->ntop < CENSUS_TOP ? c->ntop++ : CENSUS_TOP - 1;
    while (i > 0 && hot_before(h, &c->top[i - 1])) {
        c->top[i] = c->top[i - 1];
        i--;
    }
    c->top[i] = *h;
}

static void walk_grow(struct walk *w)
{
    size_t ns = w->nslot ? 2 * w->nslot : 1024;
    struct keyst *old = w->slot;
    size_t on = w->nslot;
    w->slot = calloc(ns, sizeof(*w->slot));
    if (!w->slot) {
        w->slot = old; /* keep going with the old table */
        return;
    }
    w->nslot = ns;
    for (size_t i = 0; i < on; i++) {
        size_t k;
        if (!old[i].pk)
            continue;
        k = (size_t)old[i].hash & (ns - 1);
        while (w->slot[k].pk)
            k = (k + 1) & (ns - 1);
        w->slot[k] = old[i];
    }
    free(old);
}

/* The state of key shown, added when new; NULL when no more keys can be
 * followed. */
static struct keyst *walk_key(struct walk *w, const char *shown)
{
    uint64_t h = pk_hash(shown);
    size_t k;
    if (w->n < CENSUS_KEYS_MAX && 2 * (w->n + 1) > w->nslot)
        walk_grow(w);
    if (!w->nslot)
        return NULL;
    k = (size_t)h & (w->nslot - 1);
    while (w->slot[k].pk) {
        if (w->slot[k].hash == h && !strcmp(w->slot[k].pk, shown))
            return &w->slot[k];
        k = (k + 1) & (w->nslot - 1);
    }
    if (w->n >= CENSUS_KEYS_MAX || 2 * (w->n + 1) > w->nslot)
        return NULL;
    w->slot[k].pk = strdup(shown);
    if (!w->slot[k].pk)
        return NULL;
    w->slot[k].hash = h;
    memset(&w->slot[k].hot, 0, sizeof(w->slot[k].hot));
    memcpy(w->slot[k].hot.pk, shown, sizeof(w->slot[k].hot.pk));
    w->slot[k].hot.family = key_family_of(shown);
    w->n++;
    return &w->slot[k];
}

/* Folds the followed keys into the families' key counts and the top
 * list, and frees them. */
static void walk_finish(struct walk *w)
{
    for (size_t i = 0; i < w->nslot; i++) {
        struct keyst *k = &w->slot[i];
        if (!k->pk)
            continue;
        w->c->fam[k->hot.family].write_keys++;
        top_insert(w->c, &k->hot);
        free(k->pk);
    }
    free(w->slot);
    w->slot = NULL;
    w->nslot = w->n = 0;
}

/* One (key, second) of the write walk; the walk may come in any order
 * (SQLite: by key; DynamoDB: in stream time batches). */
static int on_write_second(void *arg, const char *pk, int64_t second, uint64_t writes,
                           uint64_t bytes)
{
    struct walk *w = arg;
    double wcu = ceil((double)bytes / 1024.0);
    char shown[CENSUS_PK_SHOW];
    struct census_family *f = &w->c->fam[key_family_of(pk)];
    struct keyst *k;
    if (wcu < (double)writes)
        wcu = (double)writes;
    copy_pk(shown, pk);
    f->writes += writes;
    if (wcu > f->peak_wcu || (wcu == f->peak_wcu && wcu > 0 && strcmp(shown, f->peak_pk) < 0)) {
        f->peak_wcu = wcu;
        f->peak_second = second;
        memcpy(f->peak_pk, shown, sizeof f->peak_pk);
    }
    k = walk_key(w, shown);
    if (!k) {
        w->c->keys_truncated = true;
        return 0;
    }
    k->hot.writes += writes;
    if (wcu > k->hot.peak_wcu) {
        k->hot.peak_wcu = wcu;
        k->hot.peak_second = second;
    }
    return 0;
}

const char *census_risk_name(enum census_risk r)
{
    static const char *const names[] = {"-", "low", "watch", "high", "critical"};
    return (unsigned)r < sizeof names / sizeof names[0] ? names[r] : "?";
}

void census_judge(struct census *c)
{
    for (int i = 0; i < KF_COUNT; i++) {
        struct census_family *f = &c->fam[i];
        double share = f->peak_wcu / CENSUS_WCU_CEILING;
        enum shape sh = family_shape((enum key_family)i);
        const char *shape_note = sh == SHAPE_SINGLE   ? "one key holds the whole family"
                                 : sh == SHAPE_BUCKET ? "one key takes all writes of its period"
                                                      : "writes spread over the family's keys";
        if (!f->writes && !f->keys) {
            f->risk = RISK_NONE;
            snprintf(f->why, sizeof f->why, "not used");
            continue;
        }
        if (share >= 0.8)
            f->risk = RISK_CRITICAL;
        else if (share >= 0.5)
            f->risk = RISK_HIGH;
        else if (share >= 0.1)
            f->risk = RISK_WATCH;
        else
            f->risk = RISK_LOW;
        /* A family with a single key cannot spread its load: it is watched
         * as soon as it is written at all. */
        if (sh == SHAPE_SINGLE && f->writes && f->risk < RISK_WATCH)
            f->risk = RISK_WATCH;
        if (f->writes)
            snprintf(f->why, sizeof f->why, "peak %.0f%% of %.0f WCU/s on one key; %s",
                     share * 100.0, CENSUS_WCU_CEILING, shape_note);
        else
            snprintf(f->why, sizeof f->why, "no writes in the window; %s", shape_note);
    }
}

int census_collect(struct store *s, int64_t since_ms, int64_t now_ms, struct census *out)
{
    struct walk w = {.c = out};
    int rc;
    memset(out, 0, sizeof *out);
    out->since_ms = since_ms;
    out->now_ms = now_ms;
    rc = store_partitions(s, on_partition, out);
    if (rc && rc != ERR_INVALID)
        return rc;
    out->have_items = rc == 0;
    rc = store_write_seconds(s, since_ms, on_write_second, &w);
    walk_finish(&w);
    if (rc && rc != ERR_INVALID)
        return rc;
    out->have_writes = rc == 0;
    if (!out->have_items && !out->have_writes)
        return ERR_INVALID;
    census_judge(out);
    return 0;
}

static void iso_of_second(int64_t second, char out[ISO_LEN + 1])
{
    if (second > 0)
        time_iso(second * 1000, out);
    else
        snprintf(out, ISO_LEN + 1, "-");
}

void census_print(FILE *f, const struct census *c)
{
    char from[ISO_LEN + 1], to[ISO_LEN + 1];
    time_iso(c->since_ms, from);
    time_iso(c->now_ms, to);
    fprintf(f, "Partition census, writes from %s to %s%s%s\n\n", from, to,
            c->have_items ? "" : " (item counts not available from this store)",
            c->have_writes ? "" : " (write rates not available from this store)");
    if (c->keys_truncated)
        fprintf(f, "(more than %d keys written: the hottest list follows the first %d)\n\n",
                CENSUS_KEYS_MAX, CENSUS_KEYS_MAX);
    fprintf(f, "%-26s %8s %9s %11s %9s %9s %8s  %-8s %s\n", "pattern", "keys", "items", "bytes",
            "writes", "peak WCU", "%ceil", "risk", "hottest key");
    for (int i = 0; i < KF_COUNT; i++) {
        const struct census_family *fm = &c->fam[i];
        if (fm->risk == RISK_NONE)
            continue;
        fprintf(f, "%-26s %8llu %9llu %11llu %9llu %9.0f %7.1f%%  %-8s %s\n",
                key_family_pattern((enum key_family)i), (unsigned long long)fm->keys,
                (unsigned long long)fm->items, (unsigned long long)fm->bytes,
                (unsigned long long)fm->writes, fm->peak_wcu,
                fm->peak_wcu * 100.0 / CENSUS_WCU_CEILING, census_risk_name(fm->risk),
                fm->peak_pk[0] ? fm->peak_pk : fm->biggest_pk);
    }
    fprintf(f, "\nVerdicts:\n");
    for (int i = 0; i < KF_COUNT; i++) {
        const struct census_family *fm = &c->fam[i];
        if (fm->risk == RISK_NONE)
            continue;
        fprintf(f, "  %-26s %-8s %s\n", key_family_pattern((enum key_family)i),
                census_risk_name(fm->risk), fm->why);
    }
    if (c->ntop) {
        fprintf(f, "\nHottest partition keys (peak WCU in one second):\n");
        for (size_t i = 0; i < c->ntop; i++) {
            char at[ISO_LEN + 1];
            iso_of_second(c->top[i].peak_second, at);
            fprintf(f, "  %6.0f WCU/s  %8llu writes  %s  %s\n", c->top[i].peak_wcu,
                    (unsigned long long)c->top[i].writes, at, c->top[i].pk);
        }
    }
}

cJSON *census_json(const struct census *c)
{
    char iso[ISO_LEN + 1];
    cJSON *root = cJSON_CreateObject(), *fams = cJSON_CreateArray(), *top = cJSON_CreateArray();
    time_iso(c->since_ms, iso);
    cJSON_AddStringToObject(root, "since", iso);
    time_iso(c->now_ms, iso);
    cJSON_AddStringToObject(root, "until", iso);
    cJSON_AddBoolToObject(root, "itemCounts", c->have_items);
    cJSON_AddBoolToObject(root, "writeRates", c->have_writes);
    cJSON_AddBoolToObject(root, "writtenKeysTruncated", c->keys_truncated);
    cJSON_AddNumberToObject(root, "ceilingWcu", CENSUS_WCU_CEILING);
    for (int i = 0; i < KF_COUNT; i++) {
        const struct census_family *fm = &c->fam[i];
        cJSON *o;
        if (fm->risk == RISK_NONE)
            continue;
        o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "pattern", key_family_pattern((enum key_family)i));
        cJSON_AddNumberToObject(o, "keys", (double)fm->keys);
        cJSON_AddNumberToObject(o, "items", (double)fm->items);
        cJSON_AddNumberToObject(o, "bytes", (double)fm->bytes);
        cJSON_AddStringToObject(o, "biggestKey", fm->biggest_pk);
        cJSON_AddNumberToObject(o, "biggestKeyItems", (double)fm->biggest_items);
        cJSON_AddNumberToObject(o, "writes", (double)fm->writes);
        cJSON_AddNumberToObject(o, "writtenKeys", (double)fm->write_keys);
        cJSON_AddNumberToObject(o, "peakWcu", fm->peak_wcu);
        cJSON_AddStringToObject(o, "peakKey", fm->peak_pk);
        iso_of_second(fm->peak_second, iso);
        cJSON_AddStringToObject(o, "peakAt", iso);
        cJSON_AddStringToObject(o, "risk", census_risk_name(fm->risk));
        cJSON_AddStringToObject(o, "why", fm->why);
        cJSON_AddItemToArray(fams, o);
    }
    for (size_t i = 0; i < c->ntop; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "key", c->top[i].pk);
        cJSON_AddStringToObject(o, "pattern", key_family_pattern(c->top[i].family));
        cJSON_AddNumberToObject(o, "peakWcu", c->top[i].peak_wcu);
        cJSON_AddNumberToObject(o, "writes", (double)c->top[i].writes);
        iso_of_second(c->top[i].peak_second, iso);
        cJSON_AddStringToObject(o, "peakAt", iso);
        cJSON_AddItemToArray(top, o);
    }
    cJSON_AddItemToObject(root, "families", fams);
    cJSON_AddItemToObject(root, "hottest", top);
    return root;
}
