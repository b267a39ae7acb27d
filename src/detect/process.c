/*
 * process.c - one detector batch (see process.h).
 *
 * Alerts are deduplicated per (product, type, window): the item
 * PRODUCT#<id>/ALERTKEY#<type>#<window> records the key of the alert
 * already raised.  The first hit creates the alert (count 1), its dedup
 * item and one threatCount increment for the brand; later hits, in this
 * batch or a later one, update the same alert (count, lastSeen, the union
 * of anomalyFlags, the latest narrative and analysis) and move its GSI1
 * sort key to the new write time so that readers following write order
 * see it again.  The alertId is derived from (product, type, window)
 * (sha256, 32 hex chars): unique per alert, and identical when the same
 * stream is replayed into another database.
 *
 * Ops-log sort keys end with "<seq>-<k>" (the record's stream sequence
 * and the index of the check on it), which is unique without randomness.
 *
 * Lookup tables are small arrays searched with a precomputed hash: a
 * batch holds at most DETECTOR_BATCH_MAX records.
 *
 * Global mutable state: uncached_state_writes counts flushes that wrote
 * window states without going through a state cache (a DLQ replay run by
 * an API request), so that the consumer's cache, which cannot see those
 * writes, knows to drop what it holds.  The store is single-threaded, so
 * is this counter.
 */
#include "detect/process.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alert.h"
#include "core/crypto.h"
#include "core/keys.h"
#include "core/opslog.h"
#include "core/timeutil.h"
#include "detect/checks.h"
#include "detect/chk_burst.h"
#include "detect/chk_chain.h"
#include "detect/chk_claim.h"
#include "detect/chk_geo.h"
#include "detect/chk_tamper.h"
#include "detect/classify.h"
#include "detect/dlq.h"
#include "detect/facts.h"
#include "detect/state.h"
#include "detect/wset.h"
#include "util/err.h"
#include "util/hash.h"
#include "util/xalloc.h"

/* Longest product id accepted from a partition key. */
#define PID_MAX 128
/* Events looked at when the previous event is not in the state. */
#define PREV_LOOKUP_LIMIT 8

struct det_product {
    char *pid;
    uint64_t h;
    bool exists; /* META found with a usable brandId */
    char *brand_id;
    bool has_created;
    int64_t created_ms;
    bool claim_loaded;
    struct det_claim claim;
    bool state_loaded, state_dirty;
    struct det_state state;
    char *mark_loaded;  /* collect mode: stored detPos, NULL if none */
    char *mark_new;     /* collect mode: position of the last record applied */
    unsigned scans_new; /* collect mode: scans applied in this batch (fold_scan_counts) */
};

/* Hits on an existing alert are folded here and applied to its item
 * once, at flush (alert_apply): building the item's attributes (count,
 * narrative, aiAnalysis ...) per hit only to replace them with the next
 * hit's was most of the cost of an alert under attack. */
struct det_alert {
    char *pid;
    char *dedup_sk;
    uint64_t h;
    char *window;
    cJSON *item;
    bool is_new, dirty;
    unsigned pending;                      /* hits folded, not yet applied */
    char pending_last[ISO_LEN + 1];        /* their latest timestamp */
    const char *pending_flags[DET_NTYPES]; /* flags in first-seen order */
    size_t npending_flags;
    struct classification cls; /* the last hit's classification ... */
    double latency_ms;         /* ... and its latency */
};

struct det_brand {
    char *brand_id;
    double n;
};

struct det_proc {
    struct det_proc_cfg cfg;
    char now_iso[ISO_LEN + 1];
    struct det_product **prods;
    size_t nprods, capprods;
    struct det_alert **alerts;
    size_t nalerts, capalerts;
    struct det_brand *brands;
    size_t nbrands, capbrands;
    cJSON *puts; /* ops-log and DLQ items */
    struct det_proc_counts counts;
    const char *cur_pos; /* collect mode: position of the record being added */
};

static uint64_t uncached_state_writes;

uint64_t det_proc_uncached_state_writes(void)
{
    return uncached_state_writes;
}

/* ---------- small helpers ---------- */

static const char *str_attr(const cJSON *item, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void copy_cut(char *dst, size_t cap, const char *src)
{
    size_t n = src ? strlen(src) : 0;
    if (n >= cap)
        n = cap - 1;
    if (n)
        memcpy(dst, src, n);
    dst[n] = '\0';
}

/* Grows an array of pointers/structs by one slot. */
#define GROW(arr, n, cap)                                                                          \
    do {                                                                                           \
        if ((n) == (cap)) {                                                                        \
            (cap) = (cap) ? (cap)*2 : 16;                                                          \
            (arr) = xrealloc((arr), (cap) * sizeof(*(arr)));                                       \
        }                                                                                          \
    } while (0)

/* ---------- lifecycle ---------- */

struct det_proc *det_proc_new(const struct det_proc_cfg *cfg)
{
    struct det_proc *p = xcalloc(1, sizeof(*p));
    p->cfg = *cfg;
    time_iso(cfg->now_ms, p->now_iso);
    p->puts = cJSON_CreateArray();
    if (!p->puts) {
        free(p);
        return NULL;
    }
    return p;
}

void det_proc_free(struct det_proc *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nprods; i++) {
        free(p->prods[i]->pid);
        free(p->prods[i]->brand_id);
        free(p->prods[i]->mark_loaded);
        free(p->prods[i]->mark_new);
        free(p->prods[i]);
    }
    free(p->prods);
    for (size_t i = 0; i < p->nalerts; i++) {
        free(p->alerts[i]->pid);
        free(p->alerts[i]->dedup_sk);
        free(p->alerts[i]->window);
        cJSON_Delete(p->alerts[i]->item);
        free(p->alerts[i]);
    }
    free(p->alerts);
    for (size_t i = 0; i < p->nbrands; i++)
        free(p->brands[i].brand_id);
    free(p->brands);
    cJSON_Delete(p->puts);
    free(p);
}

void det_proc_get_counts(const struct det_proc *p, struct det_proc_counts *out)
{
    *out = p->counts;
}

bool det_record_wanted(const struct stream_record *r)
{
    return r->kind == STORE_INSERT && r->image && r->pk && r->sk &&
           key_after(r->pk, KEY_PFX_PRODUCT) &&
           (key_after(r->sk, KEY_PFX_SCAN) || key_after(r->sk, KEY_PFX_EVENT));
}

/* Queues a dead letter for r; the record is otherwise skipped. */
static int park(struct det_proc *p, const struct stream_record *r, const char *why)
{
    cJSON *item = dlq_item_new(r, p->cfg.reader, why, 1, p->cfg.now_ms);
    if (!item)
        return ERR_INVALID;
    if (p->cur_pos) /* collect mode: the replay checks the shard's checkpoint */
        cJSON_AddStringToObject(item, "streamPos", p->cur_pos);
    cJSON_AddItemToArray(p->puts, item);
    p->counts.parked++;
    return 0;
}

/* ---------- per-product context ---------- */

/* Reads META: brandId and createdAt.  A one-item query projected on the
 * two attributes, so the rest of the product is never parsed; like a
 * strongly consistent get, it sees the live item or none. */
static int product_load_meta(struct det_proc *p, struct det_product *pr)
{
    static const char *const attrs[] = {"brandId", "createdAt"};
    struct key pk, bpk;
    struct store_result res = {0};
    const cJSON *meta;
    const char *brand, *created;
    int rc;

    if (!key_product_pk(&pk, pr->pid))
        return ERR_INVALID;
    const struct det_fact *known = det_facts_get(p->cfg.facts, pr->pid);
    if (known && known->meta) {
        pr->exists = true;
        pr->brand_id = xstrdup(known->brand);
        pr->has_created = known->has_created;
        pr->created_ms = known->created_ms;
        return 0;
    }
    struct store_query q = {.index = STORE_INDEX_TABLE,
                            .pk = pk.s,
                            .sk_op = STORE_SK_EQ,
                            .sk = KEY_SK_META,
                            .limit = 1,
                            .forward = true,
                            .consistent = true,
                            .project = attrs,
                            .nproject = 2};
    rc = store_query(p->cfg.s, &q, &res);
    if (rc)
        return rc;
    meta = cJSON_GetArrayItem(res.items, 0);
    if (!meta) {
        store_result_free(&res);
        return 0; /* pr->exists stays false */
    }
    brand = str_attr(meta, "brandId");
    /* Never file an alert under an invented brand ([D51]). */
    if (brand && key_brand_pk(&bpk, brand)) {
        pr->exists = true;
        pr->brand_id = xstrdup(brand);
        created = str_attr(meta, "createdAt");
        pr->has_created = created && !time_parse_iso(created, &pr->created_ms);
        /* Brand and creation time never change once the product exists. */
        det_facts_put_meta(p->cfg.facts, pr->pid, brand, pr->has_created, pr->created_ms);
    }
    store_result_free(&res);
    return 0;
}

static int product_load_state(struct det_proc *p, struct det_product *pr)
{
    struct key pk;
    cJSON *item = NULL;
    int rc;

    if (pr->state_loaded)
        return 0;
    if (p->cfg.cache && !p->cur_pos && det_state_cache_get(p->cfg.cache, pr->pid, &pr->state)) {
        pr->state_loaded = true;
        return 0;
    }
    if (!key_product_pk(&pk, pr->pid))
        return ERR_INVALID;
    rc = store_get(p->cfg.s, pk.s, KEY_SK_DETSTATE, true, &item);
    if (rc == ERR_NOTFOUND) {
        det_state_init(&pr->state);
        rc = 0;
    } else if (!rc) {
        const char *mark = str_attr(item, "detPos");
        det_state_from_item(&pr->state, item);
        if (mark && strlen(mark) <= DET_POS_MAX)
            pr->mark_loaded = xstrdup(mark);
    }
    cJSON_Delete(item);
    if (!rc)
        pr->state_loaded = true;
    return rc;
}

static int product_load_claim(struct det_proc *p, struct det_product *pr)
{
    struct key pk;
    cJSON *item = NULL;
    const char *fp, *at, *by;
    int rc;

    if (pr->claim_loaded)
        return 0;
    if (!key_product_pk(&pk, pr->pid))
        return ERR_INVALID;
    const struct det_fact *known = det_facts_get(p->cfg.facts, pr->pid);
    if (known && known->claim_known) {
        pr->claim = known->claim;
        pr->claim_loaded = true;
        return 0;
    }
    memset(&pr->claim, 0, sizeof(pr->claim));
    rc = store_get(p->cfg.s, pk.s, KEY_SK_CLAIM, true, &item);
    if (rc == ERR_NOTFOUND) {
        rc = 0;
    } else if (!rc) {
        fp = str_attr(item, "fingerprint");
        at = str_attr(item, "claimedAt");
        by = str_attr(item, "consumerName");
        /* A claim without a usable time or fingerprint is not checked. */
        if (fp && strlen(fp) == CRYPTO_HEX_LEN && at && time_is_iso(at) &&
            !time_parse_iso(at, &pr->claim.claimed_ms)) {
            pr->claim.present = true;
            memcpy(pr->claim.fingerprint, fp, CRYPTO_HEX_LEN + 1);
            memcpy(pr->claim.claimed_at, at, ISO_LEN + 1);
            copy_cut(pr->claim.claimed_by, sizeof(pr->claim.claimed_by), by ? by : "Anonymous");
        }
    }
    cJSON_Delete(item);
    if (!rc) {
        pr->claim_loaded = true;
        det_facts_put_claim(p->cfg.facts, pr->pid, &pr->claim);
    }
    return rc;
}

/* The batch's context of product pid, reading META on first use. */
static int product_get(struct det_proc *p, const char *pid, struct det_product **out)
{
    uint64_t h = hash_pair(pid, NULL);
    struct det_product *pr;
    int rc;

    for (size_t i = 0; i < p->nprods; i++) {
        if (p->prods[i]->h == h && strcmp(p->prods[i]->pid, pid) == 0) {
            *out = p->prods[i];
            return 0;
        }
    }
    pr = xcalloc(1, sizeof(*pr));
    pr->pid = xstrdup(pid);
    pr->h = h;
    rc = product_load_meta(p, pr);
    if (rc) {
        free(pr->pid);
        free(pr->brand_id);
        free(pr);
        return rc;
    }
    GROW(p->prods, p->nprods, p->capprods);
    p->prods[p->nprods++] = pr;
    *out = pr;
    return 0;
}

/* ---------- alerts ---------- */

static void brand_add(struct det_proc *p, const char *brand_id)
{
    for (size_t i = 0; i < p->nbrands; i++) {
        if (strcmp(p->brands[i].brand_id, brand_id) == 0) {
            p->brands[i].n += 1;
            return;
        }
    }
    GROW(p->brands, p->nbrands, p->capbrands);
    p->brands[p->nbrands].brand_id = xstrdup(brand_id);
    p->brands[p->nbrands].n = 1;
    p->nbrands++;
}

/* Finds the alert of (product, dedup key): in the batch, else through the
 * stored dedup item.  *out is NULL when there is none yet. */
static int alert_find(struct det_proc *p, const struct det_product *pr, const char *dedup_sk,
                      struct det_alert **out)
{
    uint64_t h = hash_pair(pr->pid, dedup_sk);
    struct key pk;
    cJSON *dd = NULL, *item = NULL;
    const char *apk, *ask;
    int rc;

    *out = NULL;
    for (size_t i = 0; i < p->nalerts; i++) {
        struct det_alert *a = p->alerts[i];
        if (a->h == h && strcmp(a->pid, pr->pid) == 0 && strcmp(a->dedup_sk, dedup_sk) == 0) {
            *out = a;
            return 0;
        }
    }
    if (!key_product_pk(&pk, pr->pid))
        return ERR_INVALID;
    rc = store_get(p->cfg.s, pk.s, dedup_sk, true, &dd);
    if (rc == ERR_NOTFOUND)
        return 0;
    if (rc)
        return rc;
    apk = str_attr(dd, "alertPK");
    ask = str_attr(dd, "alertSK");
    rc = apk && ask ? store_get(p->cfg.s, apk, ask, true, &item) : ERR_NOTFOUND;
    if (!rc) {
        struct det_alert *a = xcalloc(1, sizeof(*a));
        a->pid = xstrdup(pr->pid);
        a->dedup_sk = xstrdup(dedup_sk);
        a->h = h;
        a->window = xstrdup(str_attr(dd, "window") ? str_attr(dd, "window") : "");
        a->item = item;
        GROW(p->alerts, p->nalerts, p->capalerts);
        p->alerts[p->nalerts++] = a;
        *out = a;
    } else if (rc == ERR_NOTFOUND) {
        rc = 0; /* a dedup item without its alert: raise a new one */
    }
    cJSON_Delete(dd);
    return rc;
}

/* Replaces (or adds) attribute name of o with v (ownership moves). */
static void set_attr(cJSON *o, const char *name, cJSON *v)
{
    if (!v)
        return;
    if (cJSON_GetObjectItemCaseSensitive(o, name))
        cJSON_ReplaceItemInObjectCaseSensitive(o, name, v);
    else
        cJSON_AddItemToObject(o, name, v);
}

/* Folds one more hit into an existing alert (applied by alert_apply). */
static int alert_update(struct det_proc *p, struct det_alert *a, const char *ts,
                        const char *const *flags, size_t nflags, const struct classification *c,
                        double latency_ms)
{
    /* The write-time sort key is built (and checked) by alert_apply. */
    if (!str_attr(a->item, "alertId"))
        return ERR_INVALID;
    if (a->pending == 0 || strcmp(ts, a->pending_last) > 0)
        copy_cut(a->pending_last, sizeof(a->pending_last), ts);
    for (size_t i = 0; i < nflags; i++) {
        bool seen = false;
        for (size_t j = 0; j < a->npending_flags && !seen; j++)
            seen = strcmp(a->pending_flags[j], flags[i]) == 0;
        if (!seen && a->npending_flags < DET_NTYPES)
            a->pending_flags[a->npending_flags++] = flags[i];
    }
    a->cls = *c;
    a->latency_ms = latency_ms;
    a->pending++;
    a->dirty = true;
    p->counts.alerts_updated++;
    return 0;
}

/* Applies the folded hits to the alert's item, with the same result as
 * applying them one by one: count + hits, lastSeen raised to the latest
 * hit, anomalyFlags extended by the new flags in first-seen order, the
 * last hit's narrative and analysis, GSI1SK at the batch's write time. */
static int alert_apply(struct det_proc *p, struct det_alert *a)
{
    cJSON *it = a->item, *arr, *v, *analysis;
    const char *id = str_attr(it, "alertId");
    const char *last = str_attr(it, "lastSeen");
    struct key gsk;
    double count;

    if (a->pending == 0)
        return 0;
    if (!id || !key_threat_gsi1sk(&gsk, p->now_iso, id))
        return ERR_INVALID;
    analysis = classify_analysis_json(&a->cls, a->latency_ms);
    if (!analysis)
        return ERR_NOMEM;
    v = cJSON_GetObjectItemCaseSensitive(it, "count");
    count = cJSON_IsNumber(v) && v->valuedouble >= 1 ? v->valuedouble : 1;
    set_attr(it, "count", cJSON_CreateNumber(count + a->pending));
    if (!last || strcmp(a->pending_last, last) > 0)
        set_attr(it, "lastSeen", cJSON_CreateString(a->pending_last));
    arr = cJSON_GetObjectItemCaseSensitive(it, "anomalyFlags");
    if (!cJSON_IsArray(arr)) {
        arr = cJSON_CreateArray();
        set_attr(it, "anomalyFlags", arr);
    }
    for (size_t i = 0; arr && i < a->npending_flags; i++) {
        const cJSON *e;
        bool seen = false;
        cJSON_ArrayForEach(e, arr)
        {
            if (cJSON_IsString(e) && strcmp(e->valuestring, a->pending_flags[i]) == 0)
                seen = true;
        }
        if (!seen)
            cJSON_AddItemToArray(arr, cJSON_CreateString(a->pending_flags[i]));
    }
    set_attr(it, "details", cJSON_CreateString(a->cls.narrative));
    set_attr(it, "aiAnalysis", analysis);
    set_attr(it, "GSI1SK", cJSON_CreateString(gsk.s));
    a->pending = 0;
    a->npending_flags = 0;
    return 0;
}

/* The deterministic alert id of (product, type, window). */
static void alert_id_of(const char *pid, const char *type, const char *window, char out[33])
{
    char hex[CRYPTO_HEX_LEN + 1];
    char buf[PID_MAX + DET_WINDOW_MAX + 64];
    int n = snprintf(buf, sizeof(buf), "%s\n%s\n%s", pid, type, window);
    crypto_sha256_hex(buf, n > 0 ? (size_t)n : 0, hex);
    memcpy(out, hex, 32);
    out[32] = '\0';
}

/* What a record contributes to the alerts it raises. */
struct det_origin {
    const struct stream_record *r;
    const char *timestamp;
    const char *country, *city; /* scans only */
    const char *agent, *trigger;
};

/* What the classification of one record's hits comes to: the hit whose
 * classification is the most severe (the first of those, in check
 * order), and the time all of them took. */
struct det_verdict {
    bool any;
    int rank;
    struct classification c;
    double latency_ms;
};

static int severity_rank(const char *sev)
{
    static const char *const order[] = {"low", "medium", "high", "critical"};
    for (int i = 0; i < 4; i++)
        if (sev && !strcmp(sev, order[i]))
            return i;
    return -1;
}

static void verdict_add(struct det_verdict *v, const struct classification *c, double latency_ms)
{
    int rank = severity_rank(c->severity);
    v->latency_ms += latency_ms;
    if (!v->any || rank > v->rank) {
        v->any = true;
        v->rank = rank;
        v->c = *c;
    }
}

/* The names of the fired checks (DET_BIT set), in type order. */
static size_t fired_names(unsigned fired, const char *out[DET_NTYPES])
{
    size_t n = 0;
    for (unsigned t = 0; t < DET_NTYPES; t++)
        if (fired & DET_BIT(t))
            out[n++] = det_type_name((enum det_type)t);
    return n;
}

/* Raises or updates the alert of one hit; its classification goes into
 * the record's verdict. */
static int emit(struct det_proc *p, struct det_product *pr, const struct det_origin *o,
                const struct det_hit *hit, unsigned fired, struct det_verdict *v)
{
    const char *flags[DET_NTYPES];
    size_t nflags = fired_names(fired, flags);
    struct classification c;
    struct key dsk;
    struct det_alert *a = NULL;
    cJSON *analysis;
    double latency;
    int64_t t0;
    int rc;

    if (!key_alert_dedup_sk(&dsk, det_type_name(hit->type), hit->window))
        return ERR_INVALID;

    t0 = time_mono_us();
    classify(hit, fired, &c);
    latency = (double)(time_mono_us() - t0) / 1000.0;

    rc = alert_find(p, pr, dsk.s, &a);
    if (rc)
        return rc;
    if (a) {
        rc = alert_update(p, a, o->timestamp, flags, nflags, &c, latency);
    } else {
        char id[33];
        struct alert_fields f = {0};
        cJSON *item;

        analysis = classify_analysis_json(&c, latency);
        if (!analysis)
            return ERR_NOMEM;
        alert_id_of(pr->pid, det_type_name(hit->type), hit->window, id);
        f.alert_id = id;
        f.brand_id = pr->brand_id;
        f.type = det_type_name(hit->type);
        f.severity = c.severity;
        f.product_id = pr->pid;
        f.details = c.narrative;
        f.timestamp = o->timestamp;
        f.write_time = p->now_iso;
        f.source = "detector";
        f.country = o->country;
        f.city = o->city;
        f.ai_analysis = analysis;
        f.flags = flags;
        f.nflags = nflags;
        f.count = 1;
        f.last_seen = o->timestamp;
        item = alert_item_new(&f);
        cJSON_Delete(analysis);
        if (!item)
            return ERR_INVALID;
        a = xcalloc(1, sizeof(*a));
        a->pid = xstrdup(pr->pid);
        a->dedup_sk = xstrdup(dsk.s);
        a->h = hash_pair(pr->pid, dsk.s);
        a->window = xstrdup(hit->window);
        a->item = item;
        a->is_new = a->dirty = true;
        GROW(p->alerts, p->nalerts, p->capalerts);
        p->alerts[p->nalerts++] = a;
        brand_add(p, pr->brand_id);
        p->counts.alerts_created++;
    }
    if (rc)
        return rc;
    verdict_add(v, &c, latency);
    return 0;
}

/* Logs the classification of one record whose checks fired: one ops-log
 * entry per classified record (as the original's stream processor wrote
 * one per record), carrying every fired check in anomalyFlags and the
 * most severe hit's severity, attack vector and confidence. */
static int log_verdict(struct det_proc *p, const struct det_product *pr, const struct det_origin *o,
                       unsigned fired, const struct det_verdict *v)
{
    const char *flags[DET_NTYPES];
    size_t nflags = fired_names(fired, flags);
    const struct classification c = v->c;
    double latency = v->latency_ms;
    char opid[48];
    cJSON *log;

    if (!v->any)
        return 0;
    /* "-0": the format once had an index per fired check. */
    snprintf(opid, sizeof(opid), "%" PRIu64 "-0", o->r->seq);
    log = opslog_item_new(&(struct opslog_fields){
        .id = opid,
        .agent = o->agent,
        .trigger = o->trigger,
        .product_id = pr->pid,
        .brand_id = pr->brand_id,
        .flags = flags,
        .nflags = nflags,
        .model = CLASSIFY_MODEL_RULES,
        .ai_severity = c.severity_upper,
        .ai_attack_vector = c.attack_vector,
        .has_confidence = true,
        .ai_confidence = c.confidence,
        .latency_ms = latency,
        .timestamp = o->timestamp,
    });
    if (!log)
        return ERR_INVALID;
    cJSON_AddItemToArray(p->puts, log);
    p->counts.opslog++;
    return 0;
}

/* A scan's verdict in 32 bits (0: no check fired): what `--ops-log
 * changes` compares with the product's previous scan's. */
static uint32_t verdict_sig(unsigned fired, const struct det_verdict *v)
{
    const char *parts[2] = {v->c.severity, v->c.attack_vector};
    uint32_t nums[2] = {fired, (uint32_t)v->c.confidence};
    uint32_t h = 2166136261u;
    if (!v->any)
        return 0;
    for (size_t i = 0; i < 2; i++) {
        for (const char *s = parts[i] ? parts[i] : ""; *s; s++)
            h = (h ^ (unsigned char)*s) * 16777619u;
        h = (h ^ 0xffu) * 16777619u;
        for (int b = 0; b < 32; b += 8)
            h = (h ^ ((nums[i] >> b) & 0xffu)) * 16777619u;
    }
    return h ? h : 1;
}

/* ---------- records ---------- */

/* Collect mode: true (and counted) when the product's stored state
 * already holds the record being added. */
static bool replayed(struct det_proc *p, const struct det_product *pr)
{
    if (!p->cur_pos || !pr->mark_loaded || !det_pos_covers(pr->mark_loaded, p->cur_pos))
        return false;
    p->counts.replayed++;
    return true;
}

/* Collect mode: the product's state now includes the record. */
static void mark_applied(struct det_proc *p, struct det_product *pr)
{
    if (!p->cur_pos)
        return;
    free(pr->mark_new);
    pr->mark_new = xstrdup(p->cur_pos);
}

/* The record's timestamp: the image's when canonical, else the key's. */
static const char *record_time(const cJSON *img, const char *key_ts, int64_t *ms)
{
    const char *ts = str_attr(img, "timestamp");
    if (!ts || !time_is_iso(ts))
        ts = key_ts && time_is_iso(key_ts) ? key_ts : NULL;
    if (!ts || time_parse_iso(ts, ms))
        return NULL;
    return ts;
}

/* The scan's string attributes in one pass over the image, each as
 * str_attr() would give it (the first attribute of that name; NULL when
 * absent or not a string). */
static void scan_attrs(const cJSON *img, struct det_scan *sc)
{
    static const char *const names[] = {"country",   "city",        "ip",
                                        "userAgent", "fingerprint", "result"};
    const char **dst[] = {&sc->country,    &sc->city,        &sc->ip,
                          &sc->user_agent, &sc->fingerprint, &sc->result};
    unsigned seen = 0, all = (1u << 6) - 1;
    const cJSON *c;

    for (size_t i = 0; i < 6; i++)
        *dst[i] = NULL;
    for (c = img->child; c && seen != all; c = c->next) {
        for (size_t i = 0; i < 6; i++) {
            if ((seen & (1u << i)) || !c->string || strcmp(c->string, names[i]) != 0)
                continue;
            seen |= 1u << i;
            *dst[i] = cJSON_IsString(c) ? c->valuestring : NULL;
            break;
        }
    }
}

static int add_scan(struct det_proc *p, const struct stream_record *r, const char *pid)
{
    char key_ts[ISO_LEN + 1] = "";
    struct det_scan sc = {0};
    struct det_product *pr;
    struct det_hit hits[DET_NTYPES];
    struct det_origin o;
    struct det_verdict v = {0};
    unsigned fired = 0, n = 0;
    size_t created;
    int rc;

    if (key_parse_scan_sk(r->sk, key_ts))
        key_ts[0] = '\0';
    sc.product_id = pid;
    sc.timestamp = record_time(r->image, key_ts, &sc.ts_ms);
    if (!sc.timestamp)
        return park(p, r, "malformed scan: no valid timestamp");
    scan_attrs(r->image, &sc);

    rc = product_get(p, pid, &pr);
    if (rc)
        return rc;
    if (!pr->exists)
        return park(p, r, "product not found (or without brandId)");
    rc = product_load_state(p, pr);
    if (!rc)
        rc = product_load_claim(p, pr);
    if (rc)
        return rc;
    if (replayed(p, pr))
        return 0;
    p->counts.scans++;
    pr->scans_new++;

    det_state_add_scan(&pr->state, sc.ts_ms, sc.country);
    pr->state_dirty = true;
    if (p->cfg.state_only)
        return 0;

    /* The original Lambda's order first, then velocity. */
    if (chk_geo(&pr->state, &sc, &hits[n]))
        n++;
    if (chk_burst(&pr->state, &sc, &hits[n]))
        n++;
    if (chk_claim(&pr->claim, &sc, &hits[n]))
        n++;
    if (chk_tamper(&sc, &hits[n]))
        n++;
    if (pr->has_created &&
        chk_velocity(&p->cfg.velocity, pr->state.scans, pr->created_ms, &sc, &hits[n]))
        n++;
    for (unsigned i = 0; i < n; i++)
        fired |= DET_BIT(hits[i].type);

    o = (struct det_origin){.r = r,
                            .timestamp = sc.timestamp,
                            .country = det_country_known(sc.country) ? sc.country : NULL,
                            .city = sc.city && strlen(sc.city) <= 128 ? sc.city : NULL,
                            .agent = "threat_detector",
                            .trigger = "scan_event"};
    created = p->counts.alerts_created;
    for (unsigned i = 0; !rc && i < n; i++)
        rc = emit(p, pr, &o, &hits[i], fired, &v);
    if (!rc) {
        uint32_t sig = verdict_sig(fired, &v);
        if (!p->cfg.opslog_changes || p->counts.alerts_created != created ||
            sig != pr->state.last_verdict)
            rc = log_verdict(p, pr, &o, fired, &v);
        pr->state.last_verdict = sig;
    }
    if (!rc)
        mark_applied(p, pr);
    return rc;
}

/* Looks for event seq-1 among the few events stored just before ev (a
 * bounded query, used only when the state does not know it).  *found is
 * false when it is not there. */
static int prev_lookup(struct det_proc *p, const struct stream_record *r,
                       const struct det_event *ev, struct det_prev_event *out, bool *found)
{
    struct store_query q = {0};
    struct store_result res = {0};
    const cJSON *it;
    int rc;

    *found = false;
    q.index = STORE_INDEX_TABLE;
    q.pk = r->pk;
    q.sk_op = STORE_SK_BETWEEN;
    q.sk = KEY_PFX_EVENT;
    q.sk2 = r->sk;
    q.limit = PREV_LOOKUP_LIMIT;
    q.forward = false;
    q.consistent = true;
    rc = store_query(p->cfg.s, &q, &res);
    if (rc)
        return rc;
    cJSON_ArrayForEach(it, res.items)
    {
        const cJSON *seq = cJSON_GetObjectItemCaseSensitive(it, "seq");
        const char *hash = str_attr(it, "hash"), *ts = str_attr(it, "timestamp");
        int64_t ms;
        if (*found || !cJSON_IsNumber(seq) || seq->valuedouble != (double)(ev->seq - 1) || !hash ||
            strlen(hash) > CRYPTO_HEX_LEN || !ts || !time_is_iso(ts) || time_parse_iso(ts, &ms))
            continue;
        *found = true;
        out->seq = ev->seq - 1;
        memcpy(out->hash, hash, strlen(hash) + 1);
        memcpy(out->timestamp, ts, ISO_LEN + 1);
        out->ts_ms = ms;
        copy_cut(out->actor, sizeof(out->actor), str_attr(it, "actor"));
    }
    store_result_free(&res);
    return 0;
}

static int add_event(struct det_proc *p, const struct stream_record *r, const char *pid)
{
    char key_ts[ISO_LEN + 1] = "", key_type[64];
    struct det_event ev = {0};
    struct det_product *pr;
    struct det_prev_event prev_buf, *prev = NULL;
    struct det_hit hits[2];
    struct det_origin o;
    struct det_verdict v = {0};
    const cJSON *seq;
    uint32_t key_seq = 0;
    unsigned fired = 0;
    size_t n;
    int rc;

    if (key_parse_event_sk(r->sk, key_ts, key_type, sizeof(key_type), &key_seq))
        key_ts[0] = '\0';
    ev.product_id = pid;
    ev.timestamp = record_time(r->image, key_ts, &ev.ts_ms);
    ev.type = str_attr(r->image, "type");
    ev.actor = str_attr(r->image, "actor");
    ev.hash = str_attr(r->image, "hash");
    ev.previous_hash = str_attr(r->image, "previousHash");
    seq = cJSON_GetObjectItemCaseSensitive(r->image, "seq");
    if (cJSON_IsNumber(seq) && seq->valuedouble >= 1 && seq->valuedouble <= UINT32_MAX &&
        seq->valuedouble == (double)(uint32_t)seq->valuedouble)
        ev.seq = (uint32_t)seq->valuedouble;
    else if (!seq)
        ev.seq = key_seq;
    else
        return park(p, r, "malformed event: bad seq");
    if (!ev.timestamp)
        return park(p, r, "malformed event: no valid timestamp");
    if (!ev.hash || !ev.previous_hash || strlen(ev.hash) > CRYPTO_HEX_LEN ||
        strlen(ev.previous_hash) > CRYPTO_HEX_LEN)
        return park(p, r, "malformed event: hash or previousHash missing");

    rc = product_get(p, pid, &pr);
    if (rc)
        return rc;
    if (!pr->exists)
        return park(p, r, "product not found (or without brandId)");
    rc = product_load_state(p, pr);
    if (rc)
        return rc;
    if (replayed(p, pr))
        return 0;
    p->counts.events++;

    if (pr->state.has_event && ev.seq && ev.seq <= pr->state.last_event.seq)
        return 0; /* already seen (a re-insert): nothing new to check */
    if (p->cfg.state_only) {
        det_state_set_event(&pr->state, &ev);
        pr->state_dirty = true;
        return 0;
    }
    if (pr->state.has_event && (ev.seq == 0 || ev.seq == pr->state.last_event.seq + 1)) {
        prev = &pr->state.last_event;
    } else if (ev.seq > 1) {
        bool found;
        rc = prev_lookup(p, r, &ev, &prev_buf, &found);
        if (rc)
            return rc;
        prev = found ? &prev_buf : NULL;
    }
    n = chk_chain(prev, &ev, hits);
    for (size_t i = 0; i < n; i++)
        fired |= DET_BIT(hits[i].type);

    o = (struct det_origin){
        .r = r, .timestamp = ev.timestamp, .agent = "chain_analyzer", .trigger = "chain_event"};
    for (size_t i = 0; !rc && i < n; i++)
        rc = emit(p, pr, &o, &hits[i], fired, &v);
    if (!rc)
        rc = log_verdict(p, pr, &o, fired, &v);
    /* The hits borrow prev (the state's last event): update it last. */
    if (!rc) {
        det_state_set_event(&pr->state, &ev);
        pr->state_dirty = true;
        mark_applied(p, pr);
    }
    return rc;
}

/* A write of PRODUCT#<id>/CLAIM: the claim is read again when needed. */
static bool claim_written(struct det_proc *p, const struct stream_record *r)
{
    char pid[PID_MAX + 1];
    if (!r->pk || !r->sk || strcmp(r->sk, KEY_SK_CLAIM) != 0 ||
        key_parse_product_pk(r->pk, pid, sizeof(pid)))
        return false;
    det_facts_forget_claim(p->cfg.facts, pid);
    {
        uint64_t h = hash_pair(pid, NULL);
        for (size_t i = 0; i < p->nprods; i++)
            if (p->prods[i]->h == h && !strcmp(p->prods[i]->pid, pid))
                p->prods[i]->claim_loaded = false;
    }
    return true;
}

int det_proc_add(struct det_proc *p, const struct stream_record *r)
{
    char pid[PID_MAX + 1];

    if (claim_written(p, r)) {
        p->counts.ignored++;
        return 0;
    }
    if (!det_record_wanted(r)) {
        p->counts.ignored++;
        return 0;
    }
    if (!cJSON_IsObject(r->image))
        return park(p, r, "malformed image: not an object");
    if (key_parse_product_pk(r->pk, pid, sizeof(pid)))
        return park(p, r, "malformed partition key");
    if (key_after(r->sk, KEY_PFX_SCAN))
        return add_scan(p, r, pid);
    return add_event(p, r, pid);
}

/* ---------- flush ---------- */

/* The dedup item of a new alert (NULL when the key would be too long). */
static cJSON *dedup_item(const struct det_alert *a)
{
    struct key pk;
    cJSON *it;

    if (!key_product_pk(&pk, a->pid))
        return NULL;
    it = cJSON_CreateObject();
    cJSON_AddStringToObject(it, "PK", pk.s);
    cJSON_AddStringToObject(it, "SK", a->dedup_sk);
    cJSON_AddStringToObject(it, "productId", a->pid);
    cJSON_AddStringToObject(it, "type", str_attr(a->item, "type"));
    cJSON_AddStringToObject(it, "window", a->window);
    cJSON_AddStringToObject(it, "alertId", str_attr(a->item, "alertId"));
    cJSON_AddStringToObject(it, "alertPK", str_attr(a->item, "PK"));
    cJSON_AddStringToObject(it, "alertSK", str_attr(a->item, "SK"));
    return it;
}

static int put_dedup(struct det_proc *p, const struct det_alert *a)
{
    cJSON *it = dedup_item(a);
    int rc;

    if (!it)
        return ERR_INVALID;
    /* Unconditional: a dedup item whose alert vanished is replaced. */
    rc = store_put(p->cfg.s, it, NULL);
    cJSON_Delete(it);
    return rc;
}

int det_proc_flush(struct det_proc *p, uint64_t last_seq)
{
    int rc = 0;

    for (size_t i = 0; !rc && i < p->nprods; i++) {
        struct det_product *pr = p->prods[i];
        cJSON *it;
        if (!pr->state_dirty)
            continue;
        it = det_state_to_item(&pr->state, pr->pid);
        if (it && p->cfg.cache && p->cfg.defer_states) {
            /* Deferred: the cache gets what the item would load to. */
            det_state_from_item(&pr->state, it);
            cJSON_Delete(it);
            continue;
        }
        rc = it ? store_put(p->cfg.s, it, NULL) : ERR_INVALID;
        /* What a later read of the item would give (det_proc_cache_commit). */
        if (!rc && p->cfg.cache)
            det_state_from_item(&pr->state, it);
        else if (!rc)
            uncached_state_writes++;
        cJSON_Delete(it);
    }
    for (size_t i = 0; !rc && i < p->nalerts; i++) {
        struct det_alert *a = p->alerts[i];
        struct store_cond cond = {.kind = STORE_COND_NOT_EXISTS};
        if (!a->dirty)
            continue;
        rc = alert_apply(p, a);
        if (rc)
            break;
        /* A new alert must really be new: a second creation would mean
         * the batch was applied twice. */
        rc = store_put(p->cfg.s, a->item, a->is_new ? &cond : NULL);
        if (!rc && a->is_new)
            rc = put_dedup(p, a);
    }
    for (size_t i = 0; !rc && i < p->nbrands; i++) {
        struct key bpk;
        struct store_action act = {.kind = STORE_ACT_ADD, .attr = "threatCount"};
        act.delta = p->brands[i].n;
        rc = key_brand_pk(&bpk, p->brands[i].brand_id)
                 ? store_update(p->cfg.s, bpk.s, KEY_SK_STATS, &act, 1, NULL, NULL)
                 : ERR_INVALID;
    }
    p->counts.brands = p->nbrands;
    {
        const cJSON *it;
        cJSON_ArrayForEach(it, p->puts)
        {
            if (!rc)
                rc = store_put(p->cfg.s, it, NULL);
        }
    }
    if (!rc)
        rc = store_checkpoint_set(p->cfg.s, p->cfg.reader, last_seq);
    return rc;
}

void det_proc_cache_commit(struct det_proc *p)
{
    if (!p->cfg.cache)
        return;
    for (size_t i = 0; i < p->nprods; i++) {
        const struct det_product *pr = p->prods[i];
        if (!pr->state_loaded)
            continue;
        if (pr->state_dirty && (p->cfg.defer_states || p->cfg.state_only))
            det_state_cache_stage(p->cfg.cache, pr->pid, &pr->state);
        else
            det_state_cache_put(p->cfg.cache, pr->pid, &pr->state);
    }
}

bool det_proc_state_changed(const struct det_proc *p, const char *product_id)
{
    uint64_t h = hash_pair(product_id, NULL);
    for (size_t i = 0; i < p->nprods; i++)
        if (p->prods[i]->h == h && p->prods[i]->state_dirty &&
            !strcmp(p->prods[i]->pid, product_id))
            return true;
    return false;
}

/* ---------- collect mode ---------- */

bool det_pos_format(char *out, const char *shard, const char *seq)
{
    size_t ns = seq ? strlen(seq) : 0, nh = shard ? strlen(shard) : 0;

    if (ns == 0 || ns > DET_POS_SEQ_DIGITS || nh == 0 || nh > 128)
        return false;
    for (size_t i = 0; i < ns; i++)
        if (seq[i] < '0' || seq[i] > '9')
            return false;
    memset(out, '0', DET_POS_SEQ_DIGITS - ns);
    memcpy(out + DET_POS_SEQ_DIGITS - ns, seq, ns);
    out[DET_POS_SEQ_DIGITS] = '@';
    memcpy(out + DET_POS_SEQ_DIGITS + 1, shard, nh + 1);
    return true;
}

bool det_pos_covers(const char *stored, const char *pos)
{
    size_t ns = strlen(stored), np = strlen(pos);

    if (ns <= DET_POS_SEQ_DIGITS || np <= DET_POS_SEQ_DIGITS || stored[DET_POS_SEQ_DIGITS] != '@' ||
        pos[DET_POS_SEQ_DIGITS] != '@')
        return false;
    if (strcmp(stored + DET_POS_SEQ_DIGITS, pos + DET_POS_SEQ_DIGITS) != 0)
        return false; /* another shard */
    return memcmp(stored, pos, DET_POS_SEQ_DIGITS) >= 0;
}

int det_proc_add_at(struct det_proc *p, const struct stream_record *r, const char *pos)
{
    int rc;

    p->cur_pos = pos;
    rc = det_proc_add(p, r);
    p->cur_pos = NULL;
    return rc;
}

/* The product's unit: state, alerts, dedup items, brand increments and,
 * with fold_scan_counts, the product's scanCount. */
static int collect_product(struct det_proc *p, struct det_product *pr, struct wset *ws)
{
    size_t created = 0;
    bool any = pr->state_dirty;
    struct key bpk;
    int rc = 0;

    for (size_t i = 0; i < p->nalerts && !any; i++)
        any = p->alerts[i]->dirty && strcmp(p->alerts[i]->pid, pr->pid) == 0;
    if (!any)
        return 0;
    wset_unit(ws, WSET_ATOMIC);
    if (pr->state_dirty) {
        cJSON *it = det_state_to_item(&pr->state, pr->pid);
        struct store_cond cond = {0};
        cJSON *old = NULL;

        if (!it)
            return ERR_INVALID;
        /* Without a position of its own (a dead letter replayed) the
         * state keeps the one it had, under the same condition. */
        const char *mark = pr->mark_new ? pr->mark_new : pr->mark_loaded;
        if (mark) {
            cJSON_AddStringToObject(it, "detPos", mark);
            /* Optimistic: nobody else moved the state since we read it. */
            if (pr->mark_loaded) {
                old = cJSON_CreateString(pr->mark_loaded);
                cond =
                    (struct store_cond){.kind = STORE_COND_ATTR_EQ, .attr = "detPos", .value = old};
            } else {
                cond = (struct store_cond){.kind = STORE_COND_ATTR_NOT_EXISTS, .attr = "detPos"};
            }
        }
        rc = wset_put(ws, it, &cond);
        cJSON_Delete(old);
    }
    for (size_t i = 0; !rc && i < p->nalerts; i++) {
        struct det_alert *a = p->alerts[i];
        struct store_cond absent = {.kind = STORE_COND_NOT_EXISTS};
        cJSON *dd;

        if (!a->dirty || strcmp(a->pid, pr->pid) != 0)
            continue;
        rc = alert_apply(p, a);
        if (!rc)
            rc = wset_put(ws, cJSON_Duplicate(a->item, true), a->is_new ? &absent : NULL);
        if (rc || !a->is_new)
            continue;
        dd = dedup_item(a);
        rc = dd ? wset_put(ws, dd, NULL) : ERR_INVALID;
        created++;
    }
    if (!rc && (created || (p->cfg.fold_scan_counts && pr->scans_new))) {
        if (!key_brand_pk(&bpk, pr->brand_id))
            return ERR_INVALID;
        if (created)
            wset_add(ws, bpk.s, KEY_SK_STATS, "threatCount", (double)created);
    }
    if (!rc && p->cfg.fold_scan_counts && pr->scans_new) {
        /* Folded with every other increment of the same item in the
         * transaction (wset.h): never the item twice. */
        struct key ppk;
        if (!key_product_pk(&ppk, pr->pid))
            return ERR_INVALID;
        wset_add(ws, ppk.s, KEY_SK_META, "scanCount", (double)pr->scans_new);
        wset_add(ws, bpk.s, KEY_SK_STATS, "scanCount", (double)pr->scans_new);
    }
    return rc;
}

int det_proc_collect(struct det_proc *p, struct wset *ws)
{
    cJSON *it;
    int rc = 0;

    for (size_t i = 0; !rc && i < p->nprods; i++)
        rc = collect_product(p, p->prods[i], ws);
    p->counts.brands = p->nbrands;
    while (!rc && (it = cJSON_DetachItemFromArray(p->puts, 0)) != NULL) {
        const cJSON *pk = cJSON_GetObjectItemCaseSensitive(it, "PK");
        bool dead = cJSON_IsString(pk) && key_after(pk->valuestring, "DLQ#");
        /* Dead letters are keyed by the time they were parked: only the
         * checkpoint's transaction writes them exactly once. */
        wset_unit(ws, dead ? WSET_LAST : WSET_FREE);
        rc = wset_put(ws, it, NULL);
    }
    return rc;
}
