/*
 * api_verify.c - GET /api/products/verify: consumer verification (API.md
 * §5 with the Reimpl rules).
 *
 * authentic = hash matches && signature valid && chain intact ([D20]).
 * A counted scan (not metadata=true) writes one scan item with a unique
 * key ([D15]) and bumps the product's and the brand's scanCount through
 * the group-commit counters; the response reports the post-increment
 * count ([D27]).  On a store without group commit (DynamoDB,
 * store_counters_by_detector) the request writes the scan item only: the
 * stream detector folds both counters per batch, and the reported count
 * is the stored one + 1, lagging by the detector's latency.  Warnings
 * are computed here but verify writes no alert: the detector raises
 * alerts from the change stream, once per window.
 * The work per request is bounded: with the in-process detector keeping
 * up, both figures come from its per-product window state (one small
 * item).  Otherwise they come from the same kind of window (detect/
 * state.h) built by one walk of at most VERIFY_GEO_LIMIT scans of the
 * last 24 h, the newest, whatever the product's history; the verify memo
 * keeps that window and each verify adds its own scan to it, so the next
 * scans of the product read nothing (a scan written any other way, or
 * by another process, makes the memo walk again).  The current scan is
 * added explicitly ([D28]).
 */
#include "api/api_verify.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_products.h"
#include "api/app.h"
#include "api/detect_driver.h"
#include "api/product_decode.h"
#include "api/verify_memo.h"
#include "core/canon.h"
#include "core/chain.h"
#include "core/crypto.h"
#include "core/event.h"
#include "core/ids.h"
#include "core/jsonw.h"
#include "core/keys.h"
#include "core/product.h"
#include "detect/consumer.h"
#include "detect/state.h"
#include "store/store.h"
#include "util/err.h"
#include "util/xalloc.h"

#define WARN_MAX       8
#define SCAN_PUT_TRIES 3

struct verify_state {
    bool metadata;
    const char *warnings[WARN_MAX];
    size_t nwarn;
};

static void warn(struct verify_state *v, const char *msg)
{
    if (v->nwarn < WARN_MAX)
        v->warnings[v->nwarn++] = msg;
}

/* JavaScript's x.toFixed(1) for the velocity message (ties go up). */
static void to_fixed1(double x, char out[64])
{
    double t = x * 10, f = floor(t);
    fmt_fixed(t - f == 0.5 ? (f + 1) / 10 : x, 1, out, 64);
}

/* The product's scans of the last 24 h, newest first (at most
 * VERIFY_GEO_LIMIT), as the store's visitor hands them over: each scan's
 * key (its time) and country, without building the items. */
struct scan_walk {
    struct {
        int64_t ms;
        char country[DET_COUNTRY_MAX + 1];
    } s[VERIFY_GEO_LIMIT];
    size_t n;
};

static void walk_visit(void *arg, const char *sk, const char *value, size_t len)
{
    struct scan_walk *w = arg;
    char ts[25];
    int64_t ms;
    if (w->n >= VERIFY_GEO_LIMIT || key_parse_scan_sk(sk, ts) || time_parse_iso(ts, &ms))
        return;
    w->s[w->n].ms = ms;
    /* a country too long to be known counts as none (det_country_known) */
    if (value && len <= DET_COUNTRY_MAX && !memchr(value, '\0', len)) {
        memcpy(w->s[w->n].country, value, len);
        w->s[w->n].country[len] = '\0';
    } else {
        w->s[w->n].country[0] = '\0';
    }
    w->n++;
}

/*
 * The product's scan window (detect/state.h) from its scans of the last
 * 24 h: at most VERIFY_GEO_LIMIT of them, the newest, replayed oldest
 * first, which gives the newest scan times (the burst figure) and the
 * countries' last-seen times (the geographic one).
 */
static int walk_window(struct api_req *r, const char *pk, struct det_state *st)
{
    char from[ISO_LEN + 1];
    struct key lo, hi;
    struct store_result res = {0};
    struct scan_walk *w = xcalloc(1, sizeof *w);
    int rc;

    det_state_init(st);
    time_iso(r->now_ms - TIME_DAY_MS, from);
    if (!key_scan_lo(&lo, from) || !key_scan_hi(&hi, r->now_iso)) {
        free(w);
        return ERR_INVALID;
    }
    struct store_query q = {.index = STORE_INDEX_TABLE,
                            .pk = pk,
                            .sk_op = STORE_SK_BETWEEN,
                            .sk = lo.s,
                            .sk2 = hi.s,
                            .limit = VERIFY_GEO_LIMIT,
                            .forward = false,
                            .consistent = true,
                            .visit_attr = "country",
                            .visit = walk_visit,
                            .visit_arg = w};
    rc = store_query(api_store(r), &q, &res);
    store_result_free(&res);
    for (size_t i = w->n; !rc && i > 0; i--)
        det_state_add_scan(st, w->s[i - 1].ms, w->s[i - 1].country);
    free(w);
    return rc;
}

/* The figures of a window for this request: scans of the last hour
 * before this one, and the known countries of the last 24 h with this
 * request's included. */
static void window_figures(struct api_req *r, const struct det_state *win, size_t *countries,
                           int *recent)
{
    struct det_state st = *win;
    const char *names[DET_COUNTRIES_MAX];
    *recent = (int)det_state_scans_between(&st, r->now_ms - TIME_HOUR_MS, r->now_ms);
    det_state_add_scan(&st, r->now_ms, r->country[0] ? r->country : "Unknown");
    *countries = det_state_countries_between(&st, r->now_ms - TIME_DAY_MS, r->now_ms, names);
}

/*
 * The geographic and burst figures from the detector's per-product window
 * state (detect/state.h) instead of walking the product's scans: one
 * small item read, whatever the attack rate.  Only when this process runs
 * the detector and it is keeping up (at most VERIFY_STATE_MAX_LAG stream
 * records behind the head): the state then misses at most the scans
 * committed since the detector's last batch, a few milliseconds of
 * traffic.  Returns false when the state cannot be used (no detector,
 * lagging, read error); the caller then uses the memo's window or walks
 * the scans.
 */
static bool from_detector_state(struct api_req *r, const char *pk, size_t *countries, int *recent)
{
    struct detect_driver *dd = app_detector(r->app);
    struct detector_stats ds;
    struct det_state st;
    uint64_t head = 0;
    cJSON *item = NULL;

    if (!dd || store_stream_head(api_store(r), &head))
        return false;
    detector_get_stats(detect_driver_detector(dd), &ds);
    if (head > ds.checkpoint + VERIFY_STATE_MAX_LAG)
        return false;
    /* The detector's own copy first: it may hold writes not stored yet. */
    char pid[KEY_MAX + 1];
    if (key_parse_product_pk(pk, pid, sizeof(pid)) ||
        !detector_state_peek(detect_driver_detector(dd), pid, &st)) {
        int rc = store_get(api_store(r), pk, KEY_SK_DETSTATE, true, &item);
        if (rc && rc != ERR_NOTFOUND)
            return false;
        det_state_init(&st);
        if (item)
            det_state_from_item(&st, item);
        cJSON_Delete(item);
    }
    window_figures(r, &st, countries, recent);
    return true;
}

/* Writes the scan item E8 (unique SCAN#<ts>#<scanId> key). */
static int put_scan(struct api_req *r, const struct verify_snap *snap, bool authentic)
{
    const char *pid = snap->pid;
    struct key pk, sk;
    int rc = ERR_CONDITION;

    if (!key_product_pk(&pk, pid))
        return ERR_INVALID;
    for (int i = 0; i < SCAN_PUT_TRIES && rc == ERR_CONDITION; i++) {
        char scan_id[9];
        ids_random_hex(4, scan_id);
        if (!key_scan_sk(&sk, r->now_iso, scan_id))
            return ERR_INVALID;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "PK", pk.s);
        cJSON_AddStringToObject(o, "SK", sk.s);
        cJSON_AddStringToObject(o, "productId", pid);
        cJSON_AddStringToObject(o, "timestamp", r->now_iso);
        cJSON_AddStringToObject(o, "ip", r->client_ip[0] ? r->client_ip : "unknown");
        cJSON_AddStringToObject(o, "country", r->country[0] ? r->country : "Unknown");
        cJSON_AddStringToObject(o, "city", r->city[0] ? r->city : "Unknown");
        cJSON_AddStringToObject(o, "userAgent", prod_user_agent_stored(r));
        cJSON_AddStringToObject(o, "result", authentic ? "authentic" : "suspicious");
        cJSON_AddStringToObject(o, "scanId", scan_id);
        /* The device fingerprint over the full User-Agent (the stored
         * userAgent is cut), so the detector's claim check compares what
         * the claim compared. */
        char fp[CRYPTO_HEX_LEN + 1];
        crypto_fingerprint(r->client_ip[0] ? r->client_ip : "unknown", prod_user_agent(r), fp);
        cJSON_AddStringToObject(o, "fingerprint", fp);
        if (snap->brand_id)
            cJSON_AddStringToObject(o, "brandId", snap->brand_id);
        struct store_cond cond = {.kind = STORE_COND_NOT_EXISTS};
        rc = store_put(api_store(r), o, &cond);
        cJSON_Delete(o);
    }
    return rc;
}

/* The counted-scan part of §5 step 7: anomaly reads, the scan write, the
 * counters (unless the detector keeps them), and the geographic/burst/
 * velocity warnings.  *scans is the post-increment scanCount. */
static int count_scan(struct api_req *r, struct verify_state *v, struct verify_snap *snap,
                      bool authentic, double *scans)
{
    struct verify_memo *memo = app_verify_memo(r->app);
    const char *pk = snap->pk;
    const char *created = snap->created_at;
    struct key bpk;
    size_t countries = 0;
    int recent = 0, rc;

    rc = 0;
    if (!from_detector_state(r, pk, &countries, &recent)) {
        /* The memo's window (kept by the scans below) or a walk, which
         * the memo keeps for the next scans. */
        if (!snap->win) {
            struct det_state st;
            rc = walk_window(r, pk, &st);
            if (!rc && memo)
                verify_memo_window_set(snap, &st);
            if (!rc)
                window_figures(r, &st, &countries, &recent);
        } else {
            window_figures(r, snap->win, &countries, &recent);
        }
    }
    if (!rc) {
        /* Announced only when there is a window to keep (the detector's
         * path has none): another scan write drops it. */
        bool keep = memo && snap->win;
        if (keep)
            verify_memo_expect_scan(memo, pk);
        rc = put_scan(r, snap, authentic);
        if (keep)
            verify_memo_expect_scan(memo, NULL);
    }
    if (rc)
        return rc;
    verify_memo_window_add(snap, r->now_ms, r->country[0] ? r->country : "Unknown");
    if (store_counters_by_detector(api_store(r))) {
        /* DynamoDB: the detector folds both counters from the stream. */
        *scans = snap->scan_count + 1;
    } else {
        *scans = snap->scan_count + api_counter_add(r, pk, KEY_SK_META, "scanCount", 1);
        if (key_brand_pk(&bpk, snap->brand_id))
            api_counter_add(r, bpk.s, KEY_SK_STATS, "scanCount", 1);
    }

    if (countries >= 3)
        warn(v, api_printf(r, "Product scanned from %zu different countries in 24h", countries));
    if (recent + 1 >= 10)
        warn(v, api_printf(r, "Unusual scan volume: %d scans in the last hour", recent + 1));

    int64_t created_ms;
    if (created && time_parse_iso(created, &created_ms) == 0) {
        double days = (double)(r->now_ms - created_ms) / (double)TIME_DAY_MS;
        if (days < 1)
            days = 1;
        double rate = *scans / days;
        if (*scans > 20 && rate > 5) {
            char total[CANON_NUM_MAX], rtxt[64];
            canon_number_str(*scans, total);
            to_fixed1(rate, rtxt);
            warn(v, api_printf(r,
                               "Abnormal scan velocity: %s total scans (%s/day avg). A single "
                               "authentic product typically has fewer scans. This may indicate "
                               "cloned tags.",
                               total, rtxt));
        }
    }
    return 0;
}

static void write_claim(struct api_req *r, struct jsonw *w, const cJSON *claim,
                        const char *brand_id, bool is_claimant)
{
    jsonw_key(w, "claim");
    jsonw_obj(w);
    jsonw_kbool(w, "claimed", claim != NULL);
    if (claim) {
        jsonw_kstr(w, "claimedAt", product_str(claim, "claimedAt"));
        /* The claimant's name only for the owning brand ([D04]). */
        jsonw_kstr(w, "claimedBy",
                   api_is_brand(r, brand_id) ? product_str(claim, "consumerName") : NULL);
    }
    jsonw_kbool(w, "isClaimant", is_claimant);
    jsonw_end(w);
}

/* Renders a value through a jsonw of its own into a C string. */
static char *render(const cJSON *item, void (*fn)(struct jsonw *, const cJSON *))
{
    struct buf b;
    struct jsonw w;
    buf_init(&b, 0);
    jsonw_init(&w, &b);
    fn(&w, item);
    if (jsonw_error(&w)) {
        buf_free(&b);
        return NULL;
    }
    return buf_steal(&b);
}

static void write_events(struct jsonw *w, const cJSON *events)
{
    const cJSON *ev;
    jsonw_arr(w);
    cJSON_ArrayForEach(ev, events)
    {
        event_write_verify_json(w, ev);
    }
    jsonw_end(w);
}

static char *dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

/*
 * Reads what verify derives from a product's items (META, the events,
 * the claim) into a new snapshot: the hash, signature and chain checks and
 * the rendered "product" and "events" values.  ERR_NOTFOUND without the
 * product.
 */
static int snap_load(struct api_req *r, const char *product_id, struct verify_snap **out)
{
    cJSON *product = NULL, *events = NULL, *claim = NULL;
    struct verify_snap *s;
    int rc;

    *out = NULL;
    rc = prod_get(r, product_id, &product);
    if (rc)
        return rc;
    rc = chain_list(api_store(r), product_id, &events);
    if (!rc) {
        rc = store_get(api_store(r), product_str(product, "PK"), KEY_SK_CLAIM, true, &claim);
        if (rc == ERR_NOTFOUND)
            rc = 0;
    }
    if (rc)
        goto out;
    s = verify_snap_new();
    product_check(product, api_signing_secret(r), &s->hash_match, &s->sig_valid);
    s->chain_ok = chain_valid(events);
    s->pid = dup_or_null(product_str(product, "productId"));
    s->pk = dup_or_null(product_str(product, "PK"));
    s->brand_id = dup_or_null(product_str(product, "brandId"));
    s->created_at = dup_or_null(product_str(product, "createdAt"));
    s->hash = dup_or_null(product_str(product, "hash"));
    s->scan_count = product_scan_count(product);
    s->product_json = render(product, product_write_verify_json);
    s->events_json = render(events, write_events);
    s->claim = claim;
    claim = NULL;
    if (!s->pk || !s->product_json || !s->events_json) {
        verify_snap_unref(s);
        rc = ERR_INVALID;
        goto out;
    }
    *out = s;
out:
    cJSON_Delete(product);
    cJSON_Delete(events);
    cJSON_Delete(claim);
    return rc;
}

/* The product id a code's lookup item names (from the memo when it has
 * it), copied into the request's arena.  ERR_NOTFOUND for an unknown or
 * malformed code. */
static int code_product(struct api_req *r, struct verify_memo *memo, const char *code,
                        const char **pid)
{
    cJSON *lookup = NULL;
    struct key pk;
    const char *id = memo ? verify_memo_code(memo, code) : NULL;
    int rc = 0;

    if (!id) {
        if (!pd_id_ok(code) || !key_verify_pk(&pk, code))
            return ERR_NOTFOUND;
        rc = store_get(api_store(r), pk.s, KEY_SK_META, true, &lookup);
        if (rc)
            return rc;
        id = product_str(lookup, "productId");
        if (id && memo)
            verify_memo_put_code(memo, code, id);
    }
    *pid = id ? api_printf(r, "%s", id) : NULL;
    cJSON_Delete(lookup);
    return 0;
}

void api_products_verify(struct api_req *r)
{
    static const char *fail_msg = "Verification failed";
    const char *code = api_query(r, "code");
    const char *product_id = api_query(r, "productId");
    const char *meta = api_query(r, "metadata");
    struct verify_memo *memo = app_verify_memo(r->app);
    struct verify_snap *snap = NULL;
    struct verify_state v = {0};
    bool authentic, is_claimant = false;
    struct jsonw *w;
    double scans;
    int rc;

    if (!api_query_ok(r))
        return;
    v.metadata = meta && strcmp(meta, "true") == 0;
    if (!code && !product_id) {
        api_error(r, 400, "code or productId is required");
        return;
    }
    if (code) {
        rc = code_product(r, memo, code, &product_id);
        if (rc == ERR_NOTFOUND) {
            prod_error_flag(r, 404, "authentic", "Invalid verification code");
            return;
        }
        if (rc) {
            api_fail(r, fail_msg, rc);
            return;
        }
    }
    snap = memo ? verify_memo_get(memo, product_id) : NULL;
    if (!snap) {
        rc = snap_load(r, product_id, &snap);
        if (rc == ERR_NOTFOUND) {
            prod_error_flag(r, 404, "authentic", "Product not found");
            return;
        }
        if (rc) {
            api_fail(r, fail_msg, rc);
            return;
        }
        if (memo)
            verify_memo_put(memo, product_id, snap);
    }
    authentic = snap->hash_match && snap->sig_valid && snap->chain_ok;

    if (snap->claim) {
        char fp[CRYPTO_HEX_LEN + 1];
        const char *stored = product_str(snap->claim, "fingerprint");
        crypto_fingerprint(r->client_ip[0] ? r->client_ip : "unknown", prod_user_agent(r), fp);
        is_claimant = stored && crypto_ct_streq(fp, stored);
    }

    if (v.metadata) {
        scans = snap->scan_count + api_counter_pending(r, snap->pk, KEY_SK_META, "scanCount");
    } else {
        rc = count_scan(r, &v, snap, authentic, &scans);
        if (rc) {
            api_fail(r, fail_msg, rc);
            goto out;
        }
    }
    if (!snap->hash_match)
        warn(&v, "Product record hash mismatch \xe2\x80\x94 possible tampering");
    if (snap->claim && !v.metadata && !is_claimant)
        warn(&v, "This product has been registered to another consumer. If you purchased this "
                 "product new, it may be a counterfeit with a cloned tag.");

    w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_kbool(w, "authentic", authentic);
    jsonw_key(w, "product");
    jsonw_raw(w, snap->product_json, strlen(snap->product_json));
    jsonw_key(w, "events");
    jsonw_raw(w, snap->events_json, strlen(snap->events_json));
    jsonw_key(w, "warnings");
    jsonw_arr(w);
    for (size_t i = 0; i < v.nwarn; i++)
        jsonw_str(w, v.warnings[i]);
    jsonw_end(w);
    jsonw_knum(w, "scanCount", scans);
    jsonw_key(w, "certificate");
    jsonw_obj(w);
    jsonw_kstr(w, "hash", snap->hash);
    jsonw_kbool(w, "signatureValid", snap->sig_valid);
    jsonw_kbool(w, "chainIntegrity", snap->chain_ok);
    jsonw_end(w);
    write_claim(r, w, snap->claim, snap->brand_id, is_claimant);
    jsonw_end(w);
out:
    verify_snap_unref(snap);
}
