/*
 * ddb_census.c - the partition census of a DynamoDB table (ddb_census.h):
 * a parallel Scan folded per partition key, and a walk of the table's
 * stream folded per partition key and second in a short window.
 *
 * The store driver (store_dynamodb.c) calls these with its HTTP client;
 * the stream is read with the Streams client of store/ddb_streams.h
 * (the one the Streams detector uses), as a read-only extra reader that
 * keeps no checkpoint and takes no lease.
 */
#include "store/ddb_census.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/ddb_streams.h"
#include "store/ddb_marshal.h"
#include "util/err.h"
#include "util/log.h"
#include "util/timescale.h"
#include "util/xalloc.h"

#define T_SCAN "DynamoDB_20120810.Scan"

/* Bounds against an endpoint that never ends a segment or a shard. */
#define SCAN_PAGES_MAX   (1u << 22)
#define STREAM_PAGES_MAX (1u << 22)
/* Empty GetRecords pages after which an open shard counts as read to
 * its tip. */
#define EMPTY_PAGES_TIP 3
/* Extra rounds after ddb_call's own retries ran out on a refused
 * GetRecords (LimitExceededException), waiting 1, 2, 4, 8 s (scaled). */
#define REFUSALS_MAX 4

/* ---------- run-length fold ---------- */

int ddbc_run_flush(struct ddbc_run *r, store_partition_cb cb, void *arg)
{
    int rc = 0;
    if (r->pk)
        rc = cb(arg, r->pk, r->items, r->bytes);
    ddbc_run_clear(r);
    return rc;
}

void ddbc_run_clear(struct ddbc_run *r)
{
    free(r->pk);
    memset(r, 0, sizeof(*r));
}

int ddbc_run_add(struct ddbc_run *r, const char *pk, uint64_t bytes, store_partition_cb cb,
                 void *arg)
{
    if (!r->pk || strcmp(r->pk, pk) != 0) {
        int rc = ddbc_run_flush(r, cb, arg);
        if (rc)
            return rc;
        r->pk = xstrdup(pk);
    }
    r->items++;
    r->bytes += bytes;
    return 0;
}

/* ---------- windowed fold ---------- */

struct secent {
    char *pk;
    int64_t sec;
    uint64_t writes, bytes;
    uint64_t hash;
};

struct ddbc_secs {
    struct secent *e; /* entries, unordered */
    size_t n, cap, max;
    size_t *slot;  /* open addressing: entry index + 1, 0 = empty */
    size_t nslot;  /* power of two, > 2 * n */
    int64_t clock; /* newest second seen */
    bool have_clock;
    uint64_t split;
};

static uint64_t sec_hash(const char *pk, int64_t sec)
{
    uint64_t h = 1469598103934665603ULL;
    for (const unsigned char *p = (const unsigned char *)pk; *p; p++)
        h = (h ^ *p) * 1099511628211ULL;
    for (int i = 0; i < 8; i++)
        h = (h ^ (((uint64_t)sec >> (8 * i)) & 0xff)) * 1099511628211ULL;
    return h;
}

static void index_rebuild(struct ddbc_secs *a, size_t want)
{
    size_t ns = 64;
    while (ns < 2 * want + 2)
        ns *= 2;
    if (ns != a->nslot) {
        free(a->slot);
        a->slot = xmalloc(ns * sizeof(*a->slot));
        a->nslot = ns;
    }
    memset(a->slot, 0, ns * sizeof(*a->slot));
    for (size_t i = 0; i < a->n; i++) {
        size_t k = (size_t)a->e[i].hash & (a->nslot - 1);
        while (a->slot[k])
            k = (k + 1) & (a->nslot - 1);
        a->slot[k] = i + 1;
    }
}

struct ddbc_secs *ddbc_secs_new(size_t max_entries)
{
    struct ddbc_secs *a = xcalloc(1, sizeof(*a));
    a->max = max_entries ? max_entries : DDBC_SECS_MAX;
    index_rebuild(a, 0);
    return a;
}

void ddbc_secs_free(struct ddbc_secs *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n; i++)
        free(a->e[i].pk);
    free(a->e);
    free(a->slot);
    free(a);
}

size_t ddbc_secs_held(const struct ddbc_secs *a)
{
    return a->n;
}

uint64_t ddbc_secs_split(const struct ddbc_secs *a)
{
    return a->split;
}

static int secent_cmp(const void *x, const void *y)
{
    const struct secent *a = x, *b = y;
    int c = strcmp(a->pk, b->pk);
    if (c)
        return c;
    return a->sec < b->sec ? -1 : a->sec > b->sec;
}

/*
 * Reports (sorted) and drops the entries with sec <= upto; those with
 * sec > complete_upto were not complete yet and count as split.  After a
 * callback error the remaining entries to report are dropped silently.
 */
static int report_upto(struct ddbc_secs *a, int64_t upto, int64_t complete_upto,
                       store_write_second_cb cb, void *arg)
{
    size_t keep = 0;
    int rc = 0;
    if (!a->n)
        return 0;
    qsort(a->e, a->n, sizeof(*a->e), secent_cmp);
    for (size_t i = 0; i < a->n; i++) {
        struct secent *x = &a->e[i];
        if (x->sec > upto) {
            a->e[keep++] = *x;
            continue;
        }
        if (x->sec > complete_upto)
            a->split++;
        if (!rc)
            rc = cb(arg, x->pk, x->sec, x->writes, x->bytes);
        free(x->pk);
    }
    a->n = keep;
    index_rebuild(a, a->n);
    return rc;
}

int ddbc_secs_flush(struct ddbc_secs *a, store_write_second_cb cb, void *arg)
{
    a->have_clock = false;
    return report_upto(a, INT64_MAX, INT64_MAX, cb, arg);
}

int ddbc_secs_add(struct ddbc_secs *a, const char *pk, int64_t second, uint64_t bytes,
                  store_write_second_cb cb, void *arg)
{
    uint64_t h;
    size_t k;
    int rc = 0;
    if (!a->have_clock) {
        a->clock = second;
        a->have_clock = true;
    } else if (second > a->clock) {
        a->clock = second;
        rc = report_upto(a, a->clock - DDBC_SLACK_S, INT64_MAX, cb, arg);
    } else if (second < a->clock - DDBC_SLACK_S) {
        /* Back in time: the walk went on to another shard. */
        rc = report_upto(a, INT64_MAX, INT64_MAX, cb, arg);
        a->clock = second;
    } else if (second == a->clock - DDBC_SLACK_S) {
        /* Late: this (key, second) may have been reported already. */
        a->split++;
    }
    if (rc)
        return rc;
    h = sec_hash(pk, second);
    k = (size_t)h & (a->nslot - 1);
    while (a->slot[k]) {
        struct secent *x = &a->e[a->slot[k] - 1];
        if (x->hash == h && x->sec == second && !strcmp(x->pk, pk)) {
            x->writes++;
            x->bytes += bytes;
            return 0;
        }
        k = (k + 1) & (a->nslot - 1);
    }
    if (a->n >= a->max) {
        /* Full: report the older seconds early, then everything. */
        int64_t complete = a->clock - DDBC_SLACK_S;
        rc = report_upto(a, a->clock - 1, complete, cb, arg);
        if (!rc && a->n >= a->max)
            rc = report_upto(a, INT64_MAX, complete, cb, arg);
        if (rc)
            return rc;
        return ddbc_secs_add(a, pk, second, bytes, cb, arg);
    }
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 256;
        a->e = xrealloc(a->e, a->cap * sizeof(*a->e));
    }
    a->e[a->n] =
        (struct secent){.pk = xstrdup(pk), .sec = second, .writes = 1, .bytes = bytes, .hash = h};
    a->n++;
    if (2 * a->n + 2 > a->nslot)
        index_rebuild(a, a->n);
    else
        a->slot[k] = a->n;
    return 0;
}

/* ---------- the Scan ---------- */

struct seg {
    cJSON *esk; /* ExclusiveStartKey of the next page */
    bool done;
    unsigned long pages;
    struct ddbc_run run;
};

static cJSON *scan_req(const char *table, int i, int total, int page_limit, const struct seg *s)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "TableName", table);
    cJSON_AddStringToObject(r, "ReturnConsumedCapacity", "TOTAL");
    if (total > 1) {
        cJSON_AddNumberToObject(r, "Segment", i);
        cJSON_AddNumberToObject(r, "TotalSegments", total);
    }
    if (page_limit > 0)
        cJSON_AddNumberToObject(r, "Limit", page_limit);
    if (s->esk)
        cJSON_AddItemToObject(r, "ExclusiveStartKey", cJSON_Duplicate(s->esk, true));
    return r;
}

/* Folds one Scan page into the segment.  On error returns ERR_INVALID
 * (malformed reply) or cb's non-zero value. */
static int scan_fold(struct seg *s, cJSON *resp, double now_s, store_partition_cb cb, void *arg)
{
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(resp, "Items"), *m;
    cJSON *lek;
    int rc = 0;
    if (items && !cJSON_IsArray(items))
        return ERR_INVALID;
    cJSON_ArrayForEach(m, items)
    {
        cJSON *it = cJSON_IsObject(m) ? ddb_unmarshal_item(m) : NULL;
        const cJSON *pk = cJSON_GetObjectItemCaseSensitive(it, "PK");
        const cJSON *ttl = cJSON_GetObjectItemCaseSensitive(it, "ttl");
        if (!cJSON_IsString(pk) || strlen(pk->valuestring) > STORE_PK_MAX)
            rc = ERR_INVALID;
        else if (!(cJSON_IsNumber(ttl) && ttl->valuedouble < now_s))
            rc = ddbc_run_add(&s->run, pk->valuestring, store_item_size(it), cb, arg);
        cJSON_Delete(it);
        if (rc)
            return rc;
    }
    cJSON_Delete(s->esk);
    s->esk = NULL;
    lek = cJSON_DetachItemFromObjectCaseSensitive(resp, "LastEvaluatedKey");
    if (cJSON_IsObject(lek) && lek->child) {
        s->esk = lek;
        if (++s->pages > SCAN_PAGES_MAX)
            return ERR_TOOBIG;
        return 0;
    }
    cJSON_Delete(lek);
    s->done = true;
    return ddbc_run_flush(&s->run, cb, arg);
}

int ddb_census_partitions(struct ddb_http *h, const char *table, int segments, int page_limit,
                          double now_s, store_partition_cb cb, void *arg)
{
    struct seg segs[DDBC_SEGMENTS_MAX];
    struct ddb_call_slot slots[DDBC_SEGMENTS_MAX];
    int map[DDBC_SEGMENTS_MAX];
    int left, rc = 0;
    if (segments < 1)
        segments = 1;
    if (segments > DDBC_SEGMENTS_MAX)
        segments = DDBC_SEGMENTS_MAX;
    memset(segs, 0, sizeof(segs));
    left = segments;
    while (!rc && left > 0) {
        size_t k = 0;
        memset(slots, 0, sizeof(slots));
        for (int i = 0; i < segments; i++) {
            if (segs[i].done)
                continue;
            slots[k].target = T_SCAN;
            slots[k].req = scan_req(table, i, segments, page_limit, &segs[i]);
            map[k++] = i;
        }
        rc = ddb_call_many(h, slots, k);
        for (size_t j = 0; j < k; j++) {
            if (!rc) {
                rc = scan_fold(&segs[map[j]], slots[j].resp, now_s, cb, arg);
                if (segs[map[j]].done)
                    left--;
            }
            cJSON_Delete((cJSON *)slots[j].req);
            cJSON_Delete(slots[j].resp);
        }
    }
    for (int i = 0; i < segments; i++) {
        cJSON_Delete(segs[i].esk);
        ddbc_run_clear(&segs[i].run);
    }
    return rc;
}

/* ---------- the stream walk ---------- */

static void sleep_s(double s)
{
    struct timespec ts;
    if (s <= 0)
        return;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static uint64_t image_bytes(const cJSON *image)
{
    char *text;
    uint64_t n;
    if (!image)
        return 0;
    text = cJSON_PrintUnformatted(image);
    n = text ? strlen(text) : 0;
    free(text);
    return n;
}

struct walk {
    struct ddb_http *h;
    const char *arn;
    int64_t since_ms, until_ms;
    struct ddbc_secs *fold;
    store_write_second_cb cb;
    void *arg;
    uint64_t records, off_minute; /* in the window; stamped off a whole minute */
};

/* Folds the records of one page; *past is set at the first record
 * stamped after until_ms.  Returns 0 or cb's non-zero value. */
static int fold_records(struct walk *w, const struct ddbs_record *recs, size_t n, char *last_seq,
                        bool *past)
{
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        const struct stream_record *r = &recs[i].r;
        memcpy(last_seq, recs[i].seq, strlen(recs[i].seq) + 1);
        if (r->ts_ms > w->until_ms) {
            *past = true;
            break;
        }
        if (r->ts_ms < w->since_ms)
            continue;
        w->records++;
        if (r->ts_ms % 60000)
            w->off_minute++;
        rc = ddbc_secs_add(w->fold, r->pk, r->ts_ms / 1000, image_bytes(r->image), w->cb, w->arg);
    }
    return rc;
}

/* Reads one shard from TRIM_HORIZON to its end, its tip (open shard) or
 * the first record after until_ms. */
static int walk_shard(struct walk *w, const struct ddbs_shard *sh)
{
    char last_seq[DDBS_SEQ_MAX + 1] = "";
    char *iter = NULL;
    unsigned long pages = 0;
    int empty = 0, refused = 0, rc;

    rc = ddbs_iterator(w->h, w->arn, sh->id, NULL, &iter);
    if (rc == ERR_NOTFOUND) /* trimmed away meanwhile */
        return 0;
    while (!rc && iter) {
        struct ddbs_record *recs = NULL;
        size_t n = 0;
        char *next = NULL;
        bool past = false;
        rc = ddbs_get_records(w->h, sh->id, iter, DDBS_LIMIT_MAX, &recs, &n, &next);
        if (rc == ERR_THROTTLED && refused < REFUSALS_MAX) {
            /* Too many readers on the shard: wait for the others. */
            log_warn("audit: stream reads of shard %s refused; backing off", sh->id);
            sleep_s(scaled((double)(1 << refused)));
            refused++;
            rc = 0;
            continue;
        }
        if (rc == ERR_TIMEOUT) { /* the iterator expired: resume after the last record */
            free(iter);
            iter = NULL;
            rc = ddbs_iterator(w->h, w->arn, sh->id, last_seq[0] ? last_seq : NULL, &iter);
            continue;
        }
        if (rc == ERR_NOTFOUND) { /* trimmed under us: the rest is gone */
            rc = 0;
            break;
        }
        if (rc)
            break;
        refused = 0;
        rc = fold_records(w, recs, n, last_seq, &past);
        ddbs_records_free(recs, n);
        free(iter);
        iter = next;
        if (rc || past)
            break;
        empty = n ? 0 : empty + 1;
        if (!sh->end_seq && empty >= EMPTY_PAGES_TIP)
            break;
        if (++pages > STREAM_PAGES_MAX)
            rc = ERR_TOOBIG;
    }
    free(iter);
    return rc;
}

int ddb_census_write_seconds(struct ddb_http *h, const char *table, int64_t since_ms,
                             int64_t until_ms, store_write_second_cb cb, void *arg)
{
    struct walk w = {.h = h, .since_ms = since_ms, .until_ms = until_ms, .cb = cb, .arg = arg};
    struct ddbs_shard *sh = NULL;
    size_t nsh = 0;
    char *arn = NULL;
    int rc;

    w.fold = ddbc_secs_new(0);
    rc = ddbs_stream_arn(h, table, &arn);
    if (rc == ERR_NOTFOUND) {
        /* No stream: the census goes on without write rates. */
        log_warn("audit: table %s has no stream: no write rates", table);
        rc = ERR_INVALID;
        goto out;
    }
    if (!rc)
        rc = ddbs_describe(h, arn, &sh, &nsh);
    if (rc)
        goto out;
    w.arn = arn;
    ddbs_sort_shards(sh, nsh);
    for (size_t i = 0; i < nsh && !rc; i++)
        rc = walk_shard(&w, &sh[i]);
    if (!rc)
        rc = ddbc_secs_flush(w.fold, cb, arg);
    if (!rc && w.records > 1 && !w.off_minute)
        log_warn("audit: every stream record is stamped on a whole minute (as DynamoDB Local "
                 "does): the per-second figures are per-minute sums");
    if (!rc && ddbc_secs_split(w.fold))
        log_info("audit: %llu (key, second) figures were reported in pieces (late or "
                 "window full): those peaks may read low",
                 (unsigned long long)ddbc_secs_split(w.fold));
out:
    ddbc_secs_free(w.fold);
    ddbs_shards_free(sh, nsh);
    free(arn);
    return rc;
}
