/*
 * opslog.c - ops-log items, their JSON entry shape and the statistics of
 * /api/ops-log.
 *
 * The detector records one entry per classification in a daily partition
 * OPS_LOG#<YYYY-MM-DD>.  The original keyed entries <timestamp>#<agent>,
 * so two classifications of the same agent in one millisecond overwrote
 * each other; a random id suffix makes the sort key unique.  The reader
 * scatter-gathers the daily partitions and merges them here
 * (opslog_sort_trim) before computing the statistics, where the average
 * confidence is divided by the entries that carry a confidence (D36) and
 * not by those that carry a latency.
 */
#include "core/opslog.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/ids.h"
#include "core/keys.h"
#include "core/timeutil.h"
#include "util/xalloc.h"

#define OPSLOG_ID_BYTES 4

static void add_str_or_null(cJSON *o, const char *name, const char *s)
{
    if (s)
        cJSON_AddStringToObject(o, name, s);
    else
        cJSON_AddNullToObject(o, name);
}

cJSON *opslog_item_new(const struct opslog_fields *f)
{
    char idbuf[2 * OPSLOG_ID_BYTES + 1];
    struct key pk, sk;
    const char *id;
    cJSON *item, *flags;

    if (!f || !f->agent || !*f->agent || !f->timestamp || !time_is_iso(f->timestamp))
        return NULL;
    if (f->id && *f->id) {
        id = f->id;
    } else {
        ids_random_hex(OPSLOG_ID_BYTES, idbuf);
        id = idbuf;
    }
    if (!key_opslog_pk(&pk, f->timestamp) || !key_opslog_sk(&sk, f->timestamp, f->agent, id))
        return NULL;

    item = cJSON_CreateObject();
    if (!item)
        return NULL;
    cJSON_AddStringToObject(item, "PK", pk.s);
    cJSON_AddStringToObject(item, "SK", sk.s);
    cJSON_AddStringToObject(item, "GSI1PK", KEY_PK_OPS_LOG_LEGACY);
    cJSON_AddStringToObject(item, "GSI1SK", f->timestamp);
    cJSON_AddStringToObject(item, "agent", f->agent);
    add_str_or_null(item, "trigger", f->trigger);
    add_str_or_null(item, "productId", f->product_id);
    add_str_or_null(item, "brandId", f->brand_id);
    flags = cJSON_AddArrayToObject(item, "anomalyFlags");
    for (size_t i = 0; flags && f->flags && i < f->nflags; i++)
        if (f->flags[i])
            cJSON_AddItemToArray(flags, cJSON_CreateString(f->flags[i]));
    cJSON_AddStringToObject(item, "geminiModel", f->model ? f->model : "rules");
    add_str_or_null(item, "aiSeverity", f->ai_severity);
    add_str_or_null(item, "aiAttackVector", f->ai_attack_vector);
    if (f->has_confidence && isfinite(f->ai_confidence))
        cJSON_AddNumberToObject(item, "aiConfidence", f->ai_confidence);
    else
        cJSON_AddNullToObject(item, "aiConfidence");
    cJSON_AddNumberToObject(item, "latencyMs", isfinite(f->latency_ms) ? f->latency_ms : 0);
    cJSON_AddStringToObject(item, "timestamp", f->timestamp);
    if (!flags || !cJSON_GetObjectItemCaseSensitive(item, "timestamp")) {
        cJSON_Delete(item);
        return NULL;
    }
    return item;
}

void opslog_write_entry_json(struct jsonw *w, const cJSON *item)
{
    static const char *const fields[] = {
        "agent",      "trigger",        "productId",    "brandId",   "anomalyFlags", "geminiModel",
        "aiSeverity", "aiAttackVector", "aiConfidence", "latencyMs", "timestamp"};
    jsonw_obj(w);
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        jsonw_kjson(w, fields[i], cJSON_GetObjectItemCaseSensitive(item, fields[i]));
    jsonw_end(w);
}

/* ---- merge ---- */

struct sort_ent {
    cJSON *item;
    const char *ts; /* NULL sorts last */
    size_t idx;
};

static int cmp_newest_first(const void *a, const void *b)
{
    const struct sort_ent *x = a, *y = b;
    int c;

    if (x->ts && y->ts) {
        c = strcmp(y->ts, x->ts);
        if (c)
            return c;
    } else if (x->ts || y->ts) {
        return x->ts ? -1 : 1;
    }
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

void opslog_sort_trim(cJSON *items, size_t limit)
{
    struct sort_ent *v;
    size_t n = 0, i = 0;
    cJSON *it, *next;

    if (!cJSON_IsArray(items))
        return;
    for (it = items->child; it; it = it->next)
        n++;
    if (!n)
        return;
    v = xcalloc(n, sizeof *v);
    /* Unlink every element, then add them back in order. */
    for (it = items->child; it; it = next) {
        const cJSON *ts = cJSON_GetObjectItemCaseSensitive(it, "timestamp");
        next = it->next;
        it->next = it->prev = NULL;
        v[i].item = it;
        v[i].ts = cJSON_IsString(ts) ? ts->valuestring : NULL;
        v[i].idx = i;
        i++;
    }
    items->child = NULL;
    qsort(v, n, sizeof *v, cmp_newest_first);
    for (i = 0; i < n; i++) {
        if (i < limit)
            cJSON_AddItemToArray(items, v[i].item);
        else
            cJSON_Delete(v[i].item);
    }
    free(v);
}

/* ---- statistics ---- */

double opslog_js_round(double x)
{
    double f;

    if (!isfinite(x))
        return x;
    f = floor(x);
    return x - f >= 0.5 ? f + 1 : f;
}

static void tally_add(struct opslog_tally *t, const char *key)
{
    for (size_t i = 0; i < t->len; i++) {
        if (!strcmp(t->keys[i], key)) {
            t->counts[i]++;
            return;
        }
    }
    if (t->len == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 8;
        t->keys = xrealloc(t->keys, t->cap * sizeof *t->keys);
        t->counts = xrealloc(t->counts, t->cap * sizeof *t->counts);
    }
    t->keys[t->len] = xstrdup(key);
    t->counts[t->len] = 1;
    t->len++;
}

static void tally_free(struct opslog_tally *t)
{
    for (size_t i = 0; i < t->len; i++)
        free(t->keys[i]);
    free(t->keys);
    free(t->counts);
    memset(t, 0, sizeof *t);
}

size_t opslog_tally_get(const struct opslog_tally *t, const char *key)
{
    for (size_t i = 0; i < t->len; i++)
        if (!strcmp(t->keys[i], key))
            return t->counts[i];
    return 0;
}

/* A truthy string attribute (non-empty string), else NULL. */
static const char *truthy_str(const cJSON *item, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, name);
    return cJSON_IsString(v) && v->valuestring[0] ? v->valuestring : NULL;
}

/* A finite number attribute: returns 1 and sets *out, else 0. */
static int num_attr(const cJSON *item, const char *name, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, name);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return 0;
    *out = v->valuedouble;
    return 1;
}

void opslog_stats_compute(const cJSON *items, struct opslog_stats *st)
{
    double lat_sum = 0, conf_sum = 0, d;
    size_t lat_n = 0, conf_n = 0;
    const cJSON *it;
    const char *s;

    memset(st, 0, sizeof *st);
    cJSON_ArrayForEach(it, items)
    {
        st->total++;
        s = truthy_str(it, "agent");
        tally_add(&st->agents, s ? s : "unknown");
        s = truthy_str(it, "aiSeverity");
        if (s)
            tally_add(&st->severities, s);
        s = truthy_str(it, "aiAttackVector");
        if (s)
            tally_add(&st->vectors, s);
        if (num_attr(it, "latencyMs", &d) && d != 0) {
            lat_sum += d;
            lat_n++;
        }
        /* D36: the denominator is the entries that have a confidence. */
        if (num_attr(it, "aiConfidence", &d)) {
            conf_sum += d;
            conf_n++;
        }
    }
    st->avg_latency_ms = lat_n ? opslog_js_round(lat_sum / (double)lat_n) : 0;
    st->avg_confidence = conf_n ? opslog_js_round(conf_sum / (double)conf_n) : 0;
}

void opslog_stats_free(struct opslog_stats *st)
{
    tally_free(&st->agents);
    tally_free(&st->severities);
    tally_free(&st->vectors);
}

/* True when JavaScript treats key as an array index ("0", "17", below
 * 2^32 - 1 and without leading zeros): such keys come first in an
 * object's key order, ascending. */
static int js_index_key(const char *key, unsigned long long *val)
{
    unsigned long long v = 0;
    size_t n = strlen(key);

    if (!n || n > 10 || (n > 1 && key[0] == '0'))
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (key[i] < '0' || key[i] > '9')
            return 0;
        v = v * 10 + (unsigned)(key[i] - '0');
    }
    if (v >= 4294967295ULL)
        return 0;
    *val = v;
    return 1;
}

static void write_tally(struct jsonw *w, const char *name, const struct opslog_tally *t)
{
    unsigned long long last = 0, v, best;
    int have_last = 0;
    size_t bi;

    jsonw_key(w, name);
    jsonw_obj(w);
    /* Index keys ascending: repeated selection (tallies are small). */
    for (;;) {
        bi = t->len;
        best = 0;
        for (size_t i = 0; i < t->len; i++) {
            if (!js_index_key(t->keys[i], &v) || (have_last && v <= last))
                continue;
            if (bi == t->len || v < best) {
                bi = i;
                best = v;
            }
        }
        if (bi == t->len)
            break;
        jsonw_kint(w, t->keys[bi], (int64_t)t->counts[bi]);
        last = best;
        have_last = 1;
    }
    for (size_t i = 0; i < t->len; i++)
        if (!js_index_key(t->keys[i], &v))
            jsonw_kint(w, t->keys[i], (int64_t)t->counts[i]);
    jsonw_end(w);
}

void opslog_write_stats_json(struct jsonw *w, const struct opslog_stats *st)
{
    jsonw_obj(w);
    jsonw_kint(w, "totalOperations", (int64_t)st->total);
    write_tally(w, "agentBreakdown", &st->agents);
    write_tally(w, "severityBreakdown", &st->severities);
    write_tally(w, "attackVectorBreakdown", &st->vectors);
    jsonw_knum(w, "avgLatencyMs", st->avg_latency_ms);
    jsonw_knum(w, "avgConfidence", st->avg_confidence);
    jsonw_kstr(w, "geminiModel", OPSLOG_GEMINI_MODEL);
    jsonw_end(w);
}
