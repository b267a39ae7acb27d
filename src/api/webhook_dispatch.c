/*
 * webhook_dispatch.c - the webhook delivery engine (webhook_dispatch.h).
 *
 * One step (step()) runs from a zero-delay, highest-priority timer
 * whenever there may be work: after a commit, when a request finishes,
 * when a retry falls due, and on a 1 s (scaled) poll.  A step
 *   1. writes the outcomes of finished attempts (one store batch),
 *   2. reloads pending deliveries from the store if the queue is marked
 *      for it (start, overflow) and is empty,
 *   3. otherwise reads the change stream and writes new deliveries with
 *      the checkpoint, one transaction per group of records,
 *   4. starts the attempts that are due,
 *   5. arms a timer for the next due attempt.
 * Store errors back the whole engine off (doubling from 0.2 s, scaled);
 * nothing is lost because the stream and the pending index are durable.
 *
 * Deliveries in memory live in an unordered array (queue_max entries at
 * most): finding the due ones is a linear pass, which for ~1000 entries
 * costs far less than the one store write each of them leads to.
 *
 * The checkpoint moves in the same transaction as the deliveries it
 * produced.  Records that produce nothing only move it in memory; it is
 * persisted on the next delivery transaction or by the poll, so a stream
 * of ignored records does not cost one commit each.  Re-reading ignored
 * records after a crash is harmless.
 */
#include "api/webhook_dispatch.h"

#include <ev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/pager.h"
#include "core/alert.h"
#include "core/brand.h"
#include "core/ids.h"
#include "core/jsonw.h"
#include "core/keys.h"
#include "core/timeutil.h"
#include "core/webhook.h"
#include "http/client.h"
#include "store/store.h"
#include "util/backoff.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"
#include "util/timescale.h"
#include "util/xalloc.h"

#define container_of(p, type, member) ((type *)(void *)((char *)(p)-offsetof(type, member)))

/* Deliveries one stream record can produce: two events (threat_alert and
 * product_recall) to every active webhook of the brand. */
#define PER_RECORD_MAX (2 * WEBHOOK_MAX_PER_BRAND)
/* Time a step may spend reading the stream before yielding (ms). */
#define STEP_BUDGET_MS        5
#define POLL_S                1.0
#define ATTEMPT_TIMEOUT_MIN_S 0.5
#define ERR_BACKOFF_S         0.2
#define ERR_BACKOFF_MAX_S     30.0
#define BRAND_CACHE           64
#define PRODUCT_CACHE         256

enum wh_state { WH_WAIT = 0, WH_INFLIGHT, WH_WRITE };

struct wh_entry {
    struct webhook_dispatch *d;
    enum wh_state state;
    char id[WEBHOOK_ID_MAX + 1];
    char webhook_id[WEBHOOK_ID_MAX + 1];
    char brand_id[BRAND_ID_MAX + 1];
    char event[24];
    char *pk, *sk; /* of the delivery item */
    char *payload;
    size_t payload_len;
    unsigned attempts;
    cJSON *history;  /* owned array of attempt records */
    int64_t next_ms; /* wall clock of the next attempt */
    /* outcome waiting to be written (WH_WRITE) */
    long last_status;
    char last_error[WEBHOOK_ERROR_MAX + 1];
    bool delivered, failed;
    char done_iso[ISO_LEN + 1];
};

struct webhook_dispatch {
    struct store *store;
    struct ev_loop *loop;
    struct http_client *http;
    struct webhook_dispatch_config cfg;
    char reader[64];
    ev_timer kick, wake, poll;
    struct wh_entry **q;
    size_t nq;
    uint64_t read_seq;     /* last stream sequence consumed (in memory) */
    uint64_t durable_seq;  /* last checkpoint written */
    bool need_resume;      /* reload pending deliveries when the queue empties */
    int64_t backoff_until; /* mono ms: no store work before */
    double backoff_s;
    struct webhook_dispatch_stats st;
    /* Brands' hooks and products' brands, kept from one pump to the next
     * while nothing can have changed them: the store's watch empties it
     * on a write of a webhook item or a product's META, on a rollback,
     * and on another process's commit (data version).  Stores without a
     * data version get a fresh one per pump. */
    struct pump_cache *pc;
    bool pc_kept;
    struct store_dv_mark dv;
};

/* ---- small helpers ------------------------------------------------------ */

static int64_t now_ms(void)
{
    return time_now_ms();
}

static const char *str_attr(const cJSON *item, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void copy_str(char *dst, size_t n, const char *src)
{
    snprintf(dst, n, "%s", src ? src : "");
}

static void kick(struct webhook_dispatch *d)
{
    if (!ev_is_active(&d->kick) && !ev_is_pending(&d->kick)) {
        ev_timer_set(&d->kick, 0., 0.);
        ev_timer_start(d->loop, &d->kick);
    }
}

/* A store error: back off (doubling) before touching the store again. */
static void store_trouble(struct webhook_dispatch *d, const char *what, int rc)
{
    d->st.errors++;
    d->backoff_s = backoff_next(d->backoff_s, ERR_BACKOFF_S, ERR_BACKOFF_MAX_S);
    d->backoff_until = time_mono_ms() + (int64_t)(scaled(d->backoff_s) * 1000.0);
    log_warn("webhooks: %s failed (%s); retrying later", what, err_str(rc));
}

static void entry_free(struct wh_entry *e)
{
    if (!e)
        return;
    free(e->pk);
    free(e->sk);
    free(e->payload);
    cJSON_Delete(e->history);
    free(e);
}

static void queue_push(struct webhook_dispatch *d, struct wh_entry *e)
{
    d->q[d->nq++] = e;
}

static void queue_remove_at(struct webhook_dispatch *d, size_t i)
{
    d->q[i] = d->q[--d->nq];
}

static bool addr_public_cb(void *arg, const struct sockaddr *sa, socklen_t len)
{
    (void)arg;
    (void)len;
    return !webhook_addr_private(sa);
}

/* ---- attempts ----------------------------------------------------------- */

/* Records the outcome of one attempt (or of a refusal to attempt) and
 * queues it for writing. */
static void attempt_finished(struct wh_entry *e, long status, const char *error, double duration_ms,
                             bool counts)
{
    struct webhook_dispatch *d = e->d;
    int64_t now = now_ms();
    bool ok = !error && status >= 200 && status < 300;
    cJSON *h;

    if (counts)
        e->attempts++;
    e->last_status = status;
    copy_str(e->last_error, sizeof e->last_error, ok ? NULL : error);
    time_iso(now, e->done_iso);
    h = cJSON_CreateObject();
    cJSON_AddNumberToObject(h, "attempt", e->attempts);
    cJSON_AddStringToObject(h, "at", e->done_iso);
    if (status > 0)
        cJSON_AddNumberToObject(h, "status", (double)status);
    else
        cJSON_AddNullToObject(h, "status");
    if (ok)
        cJSON_AddNullToObject(h, "error");
    else
        cJSON_AddStringToObject(h, "error", e->last_error);
    cJSON_AddNumberToObject(h, "durationMs", (double)(int64_t)(duration_ms + 0.5));
    cJSON_AddItemToArray(e->history, h);
    while (cJSON_GetArraySize(e->history) > WEBHOOK_HISTORY_MAX)
        cJSON_DeleteItemFromArray(e->history, 0);

    if (ok) {
        e->delivered = true;
    } else if (!counts || e->attempts >= d->cfg.max_attempts) {
        e->failed = true;
    } else {
        double delay = d->cfg.backoff_s;
        for (unsigned i = 1; i < e->attempts; i++)
            delay *= 2;
        e->next_ms = now + (int64_t)(scaled(delay) * 1000.0);
    }
    e->state = WH_WRITE;
    kick(d);
}

static void http_done_cb(void *arg, const struct http_client_res *res)
{
    struct wh_entry *e = arg;
    char text[WEBHOOK_ERROR_MAX + 1];
    const char *error = NULL;

    e->d->st.attempts++;
    if (res->err) {
        copy_str(text, sizeof text, res->error);
        error = text;
    } else if (res->status < 200 || res->status >= 300) {
        snprintf(text, sizeof text, "HTTP %ld", res->status);
        error = text;
    }
    attempt_finished(e, res->err ? 0 : res->status, error, res->duration_ms, true);
}

/* The attempt timeout: scaled, but never under ATTEMPT_TIMEOUT_MIN_S,
 * below which a healthy receiver on a busy machine would time out. */
static double attempt_timeout(const struct webhook_dispatch *d)
{
    double t = scaled(d->cfg.timeout_s);
    return t < ATTEMPT_TIMEOUT_MIN_S ? ATTEMPT_TIMEOUT_MIN_S : t;
}

/* Starts one attempt of e.  Returns ERR_THROTTLED when the client is
 * full (e stays waiting), a store error (e stays waiting), else 0. */
static int attempt_start(struct webhook_dispatch *d, struct wh_entry *e)
{
    struct key pk, sk;
    cJSON *hook = NULL;
    const char *url, *secret;
    char ts[24], sig[WEBHOOK_SIG_LEN + 1];
    char h_ts[64], h_sig[128], h_ev[64], h_id[WEBHOOK_ID_MAX + 32];
    int rc;

    if (!key_brand_pk(&pk, e->brand_id) || !key_webhook_sk(&sk, e->webhook_id)) {
        attempt_finished(e, 0, "webhook not found", 0, false);
        return 0;
    }
    rc = store_get(d->store, pk.s, sk.s, true, &hook);
    if (rc == ERR_NOTFOUND) {
        attempt_finished(e, 0, "webhook not found", 0, false);
        return 0;
    }
    if (rc)
        return rc;
    url = str_attr(hook, "url");
    secret = str_attr(hook, "secret");
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(hook, "active"))) {
        attempt_finished(e, 0, "webhook deleted", 0, false);
        goto out;
    }
    if (!url || !secret) {
        attempt_finished(e, 0, "webhook has no url or secret", 0, false);
        goto out;
    }
    snprintf(ts, sizeof ts, "%lld", (long long)(now_ms() / 1000));
    webhook_sign(secret, ts, e->payload, e->payload_len, sig);
    snprintf(h_ts, sizeof h_ts, "X-GenuProof-Timestamp: %s", ts);
    snprintf(h_sig, sizeof h_sig, "X-GenuProof-Signature: %s", sig);
    snprintf(h_ev, sizeof h_ev, "X-GenuProof-Event: %s", e->event);
    snprintf(h_id, sizeof h_id, "X-GenuProof-Delivery: %s", e->id);
    const char *headers[] = {"Content-Type: application/json", h_ts, h_sig, h_ev, h_id};
    struct http_client_req req = {
        .method = "POST",
        .url = url,
        .headers = headers,
        .nheaders = sizeof headers / sizeof headers[0],
        .body = e->payload,
        .body_len = e->payload_len,
        .timeout_s = attempt_timeout(d),
        .addr_ok = d->cfg.allow_private ? NULL : addr_public_cb,
    };
    rc = http_client_start(d->http, &req, http_done_cb, e);
    if (rc == ERR_THROTTLED)
        goto out;
    if (rc) {
        /* the stored URL is not one the client accepts: retrying is futile */
        attempt_finished(e, 0, "invalid webhook URL", 0, false);
        rc = 0;
        goto out;
    }
    e->state = WH_INFLIGHT;
out:
    memset(sig, 0, sizeof sig);
    cJSON_Delete(hook);
    return rc;
}

static void send_due(struct webhook_dispatch *d)
{
    int64_t now = now_ms();

    for (size_t i = 0; i < d->nq; i++) {
        struct wh_entry *e = d->q[i];
        if (e->state != WH_WAIT || e->next_ms > now)
            continue;
        if (http_client_inflight(d->http) >= d->cfg.max_inflight)
            break;
        int rc = attempt_start(d, e);
        if (rc == ERR_THROTTLED)
            break;
        if (rc) {
            store_trouble(d, "reading a webhook", rc);
            break;
        }
    }
}

/* ---- writing outcomes --------------------------------------------------- */

/* Updates one delivery item (and its webhook when delivered). */
static int write_outcome(struct webhook_dispatch *d, struct wh_entry *e)
{
    bool final = e->delivered || e->failed;
    char next_iso[ISO_LEN + 1];
    cJSON *v_status, *v_attempts, *v_lstatus, *v_lerror, *v_next, *v_hist, *v_done = NULL;
    struct store_action acts[9];
    size_t n = 0;
    int rc;

    v_status = cJSON_CreateString(e->delivered ? WEBHOOK_ST_DELIVERED
                                  : e->failed  ? WEBHOOK_ST_FAILED
                                               : WEBHOOK_ST_PENDING);
    v_attempts = cJSON_CreateNumber(e->attempts);
    v_lstatus =
        e->last_status > 0 ? cJSON_CreateNumber((double)e->last_status) : cJSON_CreateNull();
    v_lerror = e->last_error[0] ? cJSON_CreateString(e->last_error) : cJSON_CreateNull();
    if (final) {
        v_next = cJSON_CreateNull();
    } else {
        time_iso(e->next_ms, next_iso);
        v_next = cJSON_CreateString(next_iso);
    }
    v_hist = e->history; /* borrowed */
    acts[n++] = (struct store_action){.kind = STORE_ACT_SET, .attr = "status", .value = v_status};
    acts[n++] =
        (struct store_action){.kind = STORE_ACT_SET, .attr = "attempts", .value = v_attempts};
    acts[n++] =
        (struct store_action){.kind = STORE_ACT_SET, .attr = "lastStatus", .value = v_lstatus};
    acts[n++] =
        (struct store_action){.kind = STORE_ACT_SET, .attr = "lastError", .value = v_lerror};
    acts[n++] =
        (struct store_action){.kind = STORE_ACT_SET, .attr = "nextAttemptAt", .value = v_next};
    acts[n++] = (struct store_action){.kind = STORE_ACT_SET, .attr = "history", .value = v_hist};
    if (e->delivered) {
        v_done = cJSON_CreateString(e->done_iso);
        acts[n++] =
            (struct store_action){.kind = STORE_ACT_SET, .attr = "deliveredAt", .value = v_done};
    }
    if (final) {
        /* leave the pending index */
        acts[n++] = (struct store_action){.kind = STORE_ACT_REMOVE, .attr = "GSI1PK"};
        acts[n++] = (struct store_action){.kind = STORE_ACT_REMOVE, .attr = "GSI1SK"};
    }
    const struct store_cond exists = {.kind = STORE_COND_EXISTS};
    rc = store_update(d->store, e->pk, e->sk, acts, n, &exists, NULL);
    if (rc == ERR_CONDITION)
        rc = 0; /* the delivery item is gone: nothing left to record */
    if (!rc && e->delivered) {
        struct key pk, sk;
        if (key_brand_pk(&pk, e->brand_id) && key_webhook_sk(&sk, e->webhook_id)) {
            const struct store_action wacts[2] = {
                {.kind = STORE_ACT_SET, .attr = "lastTriggered", .value = v_done},
                {.kind = STORE_ACT_ADD, .attr = "deliveryCount", .delta = 1},
            };
            rc = store_update(d->store, pk.s, sk.s, wacts, 2, &exists, NULL);
            if (rc == ERR_CONDITION)
                rc = 0;
        }
    }
    cJSON_Delete(v_status);
    cJSON_Delete(v_attempts);
    cJSON_Delete(v_lstatus);
    cJSON_Delete(v_lerror);
    cJSON_Delete(v_next);
    cJSON_Delete(v_done);
    return rc;
}

/* Writes every WH_WRITE outcome in one store batch; on success final
 * entries leave the queue and the others wait for their next attempt. */
static int flush_outcomes(struct webhook_dispatch *d)
{
    size_t n = 0;
    int rc;

    for (size_t i = 0; i < d->nq; i++)
        if (d->q[i]->state == WH_WRITE)
            n++;
    if (!n)
        return 0;
    rc = store_batch_begin(d->store);
    for (size_t i = 0; !rc && i < d->nq; i++)
        if (d->q[i]->state == WH_WRITE)
            rc = write_outcome(d, d->q[i]);
    if (rc) {
        store_batch_abort(d->store);
        return rc;
    }
    rc = store_batch_commit(d->store);
    if (rc)
        return rc;
    for (size_t i = 0; i < d->nq;) {
        struct wh_entry *e = d->q[i];
        if (e->state != WH_WRITE) {
            i++;
            continue;
        }
        if (e->delivered || e->failed) {
            if (e->delivered)
                d->st.delivered++;
            else
                d->st.failed++;
            queue_remove_at(d, i);
            entry_free(e);
            continue;
        }
        e->state = WH_WAIT;
        i++;
    }
    return 0;
}

/* ---- resuming pending deliveries ---------------------------------------- */

struct resume_ctx {
    struct webhook_dispatch *d;
    size_t room, seen;
    bool more;
};

static struct wh_entry *entry_from_item(struct webhook_dispatch *d, const cJSON *item)
{
    const char *id = str_attr(item, "id"), *wid = str_attr(item, "webhookId");
    const char *bid = str_attr(item, "brandId"), *ev = str_attr(item, "event");
    const char *pk = str_attr(item, "PK"), *sk = str_attr(item, "SK");
    const char *payload = str_attr(item, "payload"), *next = str_attr(item, "nextAttemptAt");
    const cJSON *att = cJSON_GetObjectItemCaseSensitive(item, "attempts");
    const cJSON *hist = cJSON_GetObjectItemCaseSensitive(item, "history");
    struct wh_entry *e;
    int64_t next_ms = 0;

    if (!webhook_id_ok(id) || !webhook_id_ok(wid) || !brand_id_ok(bid) || !webhook_event_bit(ev) ||
        !pk || !sk || !payload)
        return NULL;
    e = xcalloc(1, sizeof *e);
    e->d = d;
    copy_str(e->id, sizeof e->id, id);
    copy_str(e->webhook_id, sizeof e->webhook_id, wid);
    copy_str(e->brand_id, sizeof e->brand_id, bid);
    copy_str(e->event, sizeof e->event, ev);
    e->pk = xstrdup(pk);
    e->sk = xstrdup(sk);
    e->payload = xstrdup(payload);
    e->payload_len = strlen(payload);
    e->attempts = cJSON_IsNumber(att) && att->valuedouble > 0 ? (unsigned)att->valuedouble : 0;
    e->history = cJSON_IsArray(hist) ? cJSON_Duplicate(hist, 1) : cJSON_CreateArray();
    if (!next || time_parse_iso(next, &next_ms))
        next_ms = 0;
    e->next_ms = next_ms;
    return e;
}

static int resume_cb(void *arg, const cJSON *item)
{
    struct resume_ctx *c = arg;
    struct wh_entry *e;

    if (c->seen >= c->room) {
        c->more = true;
        return 1;
    }
    c->seen++;
    e = entry_from_item(c->d, item);
    if (!e) {
        log_warn("webhooks: skipping a malformed pending delivery");
        return 0;
    }
    if (e->attempts >= c->d->cfg.max_attempts) {
        /* crashed between the last attempt and its final write */
        e->failed = true;
        e->state = WH_WRITE;
        copy_str(e->last_error, sizeof e->last_error, "attempts exhausted");
        time_iso(now_ms(), e->done_iso);
    }
    queue_push(c->d, e);
    c->d->st.resumed++;
    return 0;
}

static int resume(struct webhook_dispatch *d)
{
    struct store_query q = {.index = STORE_INDEX_GSI1,
                            .pk = KEY_GSI1PK_DELIVERY_PENDING,
                            .sk_op = STORE_SK_ANY,
                            .forward = true};
    struct resume_ctx c = {.d = d, .room = d->cfg.queue_max - d->nq};
    int rc = pager_each(d->store, &q, c.room + 1, resume_cb, &c, NULL);

    if (rc)
        return rc;
    d->need_resume = c.more;
    if (c.seen)
        log_info("webhooks: resumed %zu pending deliveries%s", c.seen,
                 c.more ? " (more waiting)" : "");
    return 0;
}

/* ---- from stream records to deliveries ---------------------------------- */

struct hook_ref {
    char id[WEBHOOK_ID_MAX + 1];
    unsigned events;
    int64_t created_ms;
};

struct brand_hooks {
    char brand[BRAND_ID_MAX + 1];
    size_t n;
    struct hook_ref hooks[WEBHOOK_MAX_PER_BRAND];
};

struct product_brand {
    char product[WEBHOOK_ID_MAX + 1];
    char brand[BRAND_ID_MAX + 1]; /* "" when unknown */
};

/* Per-pump caches (bounded; reset when full). */
struct pump_cache {
    struct brand_hooks brands[BRAND_CACHE];
    size_t nbrands;
    struct product_brand products[PRODUCT_CACHE];
    size_t nproducts;
};

static int hooks_cb(void *arg, const cJSON *item)
{
    struct brand_hooks *b = arg;
    const char *id = str_attr(item, "id"), *created = str_attr(item, "createdAt");
    int64_t ms = 0;

    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(item, "active")) || !webhook_id_ok(id))
        return 0;
    if (b->n >= WEBHOOK_MAX_PER_BRAND)
        return 1;
    if (!created || time_parse_iso(created, &ms))
        ms = 0;
    copy_str(b->hooks[b->n].id, sizeof b->hooks[b->n].id, id);
    b->hooks[b->n].events = webhook_events_of(item);
    b->hooks[b->n].created_ms = ms;
    b->n++;
    return 0;
}

static void pc_clear(struct pump_cache *pc)
{
    pc->nbrands = 0;
    pc->nproducts = 0;
}

/* The store's watch: writes that can change what the cache holds. */
static void pc_watch(void *arg, const char *pk, const char *sk, const struct store_action *acts,
                     size_t nacts)
{
    struct webhook_dispatch *d = arg;
    if (!pk) {
        pc_clear(d->pc);
        return;
    }
    if (key_after(pk, KEY_PFX_BRAND) && key_after(sk, KEY_PFX_WEBHOOK)) {
        d->pc->nbrands = 0;
        return;
    }
    if (key_after(pk, KEY_PFX_PRODUCT) && sk && !strcmp(sk, KEY_SK_META)) {
        /* the counter folding of scans does not move a product */
        bool counters = acts && nacts;
        for (size_t i = 0; counters && i < nacts; i++)
            counters = acts[i].kind == STORE_ACT_ADD;
        if (!counters)
            d->pc->nproducts = 0;
    }
}

/* Before a pump: the cache stays only when nobody else can have written. */
static void pc_refresh(struct webhook_dispatch *d)
{
    if (!d->pc_kept || store_data_version_moved(d->store, &d->dv) != 0)
        pc_clear(d->pc);
}

static int brand_hooks(struct webhook_dispatch *d, struct pump_cache *pc, const char *brand,
                       const struct brand_hooks **out)
{
    struct store_query q = {.sk_op = STORE_SK_BEGINS, .sk = KEY_PFX_WEBHOOK, .forward = true};
    struct brand_hooks *b;
    struct key pk;
    int rc;

    *out = NULL;
    for (size_t i = 0; i < pc->nbrands; i++)
        if (!strcmp(pc->brands[i].brand, brand)) {
            *out = &pc->brands[i];
            return 0;
        }
    if (!brand_id_ok(brand) || !key_brand_pk(&pk, brand))
        return 0;
    if (pc->nbrands >= BRAND_CACHE)
        pc->nbrands = 0;
    b = &pc->brands[pc->nbrands];
    memset(b, 0, sizeof *b);
    copy_str(b->brand, sizeof b->brand, brand);
    q.pk = pk.s;
    q.consistent = true;
    rc = pager_each(d->store, &q, 0, hooks_cb, b, NULL);
    if (rc)
        return rc;
    pc->nbrands++;
    *out = b;
    return 0;
}

/* The brand of a product (via PRODUCT#<id>/META); "" when unknown. */
static int product_brand(struct webhook_dispatch *d, struct pump_cache *pc, const char *product,
                         const char **out)
{
    struct product_brand *p;
    cJSON *meta = NULL;
    struct key pk;
    int rc;

    *out = "";
    for (size_t i = 0; i < pc->nproducts; i++)
        if (!strcmp(pc->products[i].product, product)) {
            *out = pc->products[i].brand;
            return 0;
        }
    if (strlen(product) > WEBHOOK_ID_MAX || !key_product_pk(&pk, product))
        return 0;
    rc = store_get(d->store, pk.s, KEY_SK_META, false, &meta);
    if (rc && rc != ERR_NOTFOUND)
        return rc;
    if (pc->nproducts >= PRODUCT_CACHE)
        pc->nproducts = 0;
    p = &pc->products[pc->nproducts++];
    copy_str(p->product, sizeof p->product, product);
    copy_str(p->brand, sizeof p->brand, meta ? str_attr(meta, "brandId") : NULL);
    cJSON_Delete(meta);
    *out = p->brand;
    return 0;
}

/* Writes the payload of one event into b: {"event","brandId","timestamp",
 * "data"}.  ERR_TOOBIG past the cap. */
static int build_payload(struct buf *b, const char *event, const char *brand, const char *ts,
                         const struct stream_record *r, bool scan)
{
    struct jsonw w;
    const cJSON *img = r->image;

    buf_reset(b);
    jsonw_init(&w, b);
    jsonw_obj(&w);
    jsonw_kstr(&w, "event", event);
    jsonw_kstr(&w, "brandId", brand);
    jsonw_kstr(&w, "timestamp", ts);
    jsonw_key(&w, "data");
    if (scan) {
        /* never the raw IP or user agent (D04) */
        jsonw_obj(&w);
        jsonw_kjson(&w, "productId", cJSON_GetObjectItemCaseSensitive(img, "productId"));
        jsonw_kjson(&w, "timestamp", cJSON_GetObjectItemCaseSensitive(img, "timestamp"));
        jsonw_kjson(&w, "country", cJSON_GetObjectItemCaseSensitive(img, "country"));
        jsonw_kjson(&w, "city", cJSON_GetObjectItemCaseSensitive(img, "city"));
        jsonw_kjson(&w, "result", cJSON_GetObjectItemCaseSensitive(img, "result"));
        jsonw_end(&w);
    } else {
        alert_write_json(&w, img);
    }
    jsonw_end(&w);
    return jsonw_error(&w);
}

/* What one record means for webhooks. */
struct rec_events {
    unsigned bits; /* WEBHOOK_EV_* */
    const char *brand;
    char ts[ISO_LEN + 1];
    bool scan;
};

static int classify_record(struct webhook_dispatch *d, struct pump_cache *pc,
                           const struct stream_record *r, struct rec_events *out)
{
    const cJSON *img = r->image;
    const char *t;
    int rc;

    memset(out, 0, sizeof *out);
    if (!img || r->kind == STORE_REMOVE || !r->pk || !r->sk)
        return 0;
    if (r->kind == STORE_INSERT && key_after(r->pk, KEY_PFX_PRODUCT) &&
        key_after(r->sk, KEY_PFX_SCAN)) {
        const char *pid = str_attr(img, "productId");
        if (!pid)
            pid = key_after(r->pk, KEY_PFX_PRODUCT);
        /* verify writes the product's brand into the scan; older scans
         * (the original's) have none: ask the product */
        out->brand = str_attr(img, "brandId");
        if (!out->brand || !*out->brand) {
            rc = product_brand(d, pc, pid, &out->brand);
            if (rc)
                return rc;
        }
        out->bits = WEBHOOK_EV_SCAN;
        out->scan = true;
        t = str_attr(img, "timestamp");
    } else if (key_after(r->pk, KEY_PFX_THREAT) && key_after(r->sk, KEY_PFX_ALERT)) {
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(img, "resolved")))
            return 0; /* resolving is not a new threat */
        const char *type = str_attr(img, "type");
        out->brand = str_attr(img, "brandId");
        out->bits = WEBHOOK_EV_THREAT;
        if (r->kind == STORE_INSERT && type && !strcmp(type, "product_recall"))
            out->bits |= WEBHOOK_EV_RECALL;
        t = r->kind == STORE_MODIFY && str_attr(img, "lastSeen") ? str_attr(img, "lastSeen")
                                                                 : str_attr(img, "timestamp");
    } else {
        return 0;
    }
    if (!out->brand || !*out->brand) {
        out->bits = 0;
        return 0;
    }
    if (t && time_is_iso(t))
        copy_str(out->ts, sizeof out->ts, t);
    else
        time_iso(r->ts_ms, out->ts);
    return 0;
}

/* New deliveries of one pump transaction. */
struct pending_new {
    cJSON *items[STORE_TRANSACT_MAX];
    struct wh_entry *entries[STORE_TRANSACT_MAX];
    size_t n;
};

static void pending_clear(struct pending_new *p, size_t from)
{
    for (size_t i = from; i < p->n; i++) {
        cJSON_Delete(p->items[i]);
        entry_free(p->entries[i]);
    }
    p->n = from;
}

/* Adds the deliveries of record r to p.  Returns 0, or a store error. */
static int record_deliveries(struct webhook_dispatch *d, struct pump_cache *pc,
                             const struct stream_record *r, struct pending_new *p, struct buf *body)
{
    struct rec_events re;
    const struct brand_hooks *bh = NULL;
    char now_iso[ISO_LEN + 1];
    int rc;

    rc = classify_record(d, pc, r, &re);
    if (rc || !re.bits)
        return rc;
    rc = brand_hooks(d, pc, re.brand, &bh);
    if (rc || !bh || !bh->n)
        return rc;
    time_iso(now_ms(), now_iso);
    for (unsigned bit = 1; bit <= WEBHOOK_EV_RECALL; bit <<= 1) {
        if (!(re.bits & bit))
            continue;
        const char *event = webhook_event_name(bit);
        bool built = false;
        for (size_t i = 0; i < bh->n; i++) {
            const struct hook_ref *h = &bh->hooks[i];
            if (!(h->events & bit) || r->ts_ms < h->created_ms)
                continue;
            if (!built) {
                if (build_payload(body, event, re.brand, re.ts, r, re.scan)) {
                    d->st.skipped++;
                    log_warn("webhooks: %s payload over %d bytes; not delivered", event,
                             WEBHOOK_DISPATCH_PAYLOAD_MAX);
                    break;
                }
                built = true;
            }
            struct wh_entry *e = xcalloc(1, sizeof *e);
            struct webhook_delivery_fields f;
            cJSON *item;
            e->d = d;
            ids_uuid4(e->id);
            copy_str(e->webhook_id, sizeof e->webhook_id, h->id);
            copy_str(e->brand_id, sizeof e->brand_id, re.brand);
            copy_str(e->event, sizeof e->event, event);
            e->payload = xstrndup(body->data, body->len);
            e->payload_len = body->len;
            e->history = cJSON_CreateArray();
            f = (struct webhook_delivery_fields){.id = e->id,
                                                 .webhook_id = h->id,
                                                 .brand_id = re.brand,
                                                 .event = event,
                                                 .created_at = now_iso,
                                                 .payload = e->payload};
            item = webhook_delivery_item_new(&f);
            if (!item) {
                entry_free(e);
                continue;
            }
            e->pk = xstrdup(str_attr(item, "PK"));
            e->sk = xstrdup(str_attr(item, "SK"));
            e->next_ms = 0; /* due now */
            p->items[p->n] = item;
            p->entries[p->n] = e;
            p->n++;
        }
    }
    return 0;
}

/* Commits p's deliveries with the checkpoint at seq and queues them. */
static int pump_commit(struct webhook_dispatch *d, struct pending_new *p, uint64_t seq)
{
    struct store_write w[STORE_TRANSACT_MAX];
    size_t n = 0;
    int rc;

    for (size_t i = 0; i < p->n; i++)
        w[n++] = (struct store_write){
            .kind = STORE_W_PUT, .item = p->items[i], .cond = {.kind = STORE_COND_NOT_EXISTS}};
    w[n++] = (struct store_write){.kind = STORE_W_CHECKPOINT, .reader = d->reader, .seq = seq};
    rc = store_transact(d->store, w, n, NULL);
    if (rc)
        return rc;
    d->durable_seq = seq;
    for (size_t i = 0; i < p->n; i++) {
        cJSON_Delete(p->items[i]);
        queue_push(d, p->entries[i]);
        d->st.created++;
    }
    p->n = 0;
    return 0;
}

/* The records that can become deliveries (classify_record): scans
 * written, and alerts raised or updated.  The store skips the rest
 * without parsing their images. */
static const char *const scan_sk[] = {KEY_PFX_SCAN};
static const struct stream_filter deliverable = {
    .kinds = STREAM_KIND_BIT(STORE_INSERT),
    .pk_prefix = KEY_PFX_PRODUCT,
    .sk_prefixes = scan_sk,
    .nsk = 1,
    .or_else = &alert_stream_filter,
};

/* Reads the stream and writes deliveries, within the step budget. */
static int pump(struct webhook_dispatch *d)
{
    pc_refresh(d);
    struct pump_cache *pc = d->pc;
    struct pending_new *p = xcalloc(1, sizeof *p);
    struct buf body = BUF_INIT(WEBHOOK_DISPATCH_PAYLOAD_MAX);
    int64_t t0 = time_mono_ms();
    int rc = 0;

    while (time_mono_ms() - t0 < STEP_BUDGET_MS) {
        struct stream_record *recs = NULL;
        size_t nrec = 0, used = 0;
        uint64_t last = d->read_seq;

        if (d->cfg.queue_max - d->nq < PER_RECORD_MAX)
            break;
        size_t examined = 0;
        uint64_t top = d->read_seq;
        rc = store_stream_read_filtered(d->store, d->read_seq, d->cfg.batch, &deliverable, &recs,
                                        &nrec, &top, &examined);
        if (rc) {
            store_trouble(d, "reading the change stream", rc);
            break;
        }
        if (!examined) {
            store_stream_free(recs, nrec);
            break;
        }
        for (size_t i = 0; i < nrec; i++) {
            size_t before = p->n;
            if (p->n + PER_RECORD_MAX + 1 > STORE_TRANSACT_MAX ||
                d->nq + p->n + PER_RECORD_MAX > d->cfg.queue_max)
                break; /* this record waits for the next transaction */
            rc = record_deliveries(d, pc, &recs[i], p, &body);
            if (rc) {
                pending_clear(p, before);
                break;
            }
            last = recs[i].seq;
            used++;
        }
        /* Records the filter skipped need nothing: once every returned
         * one is handled the read position may pass them all. */
        if (used == nrec)
            last = top;
        store_stream_free(recs, nrec);
        if (p->n) {
            int crc = pump_commit(d, p, last);
            if (crc) {
                pending_clear(p, 0);
                store_trouble(d, "writing deliveries", crc);
                rc = crc;
                break;
            }
        }
        d->read_seq = last;
        if (rc) {
            store_trouble(d, "reading webhooks", rc);
            break;
        }
        if (!used && nrec)
            break; /* no room for what was read: wait for the queue */
    }
    buf_free(&body);
    free(p);
    return rc;
}

/* ---- the step and its timers -------------------------------------------- */

static void arm_wake(struct webhook_dispatch *d)
{
    int64_t now = now_ms(), best = -1;
    /* With the client full, due attempts wait for a completion (which
     * kicks); counting them here would spin. */
    bool full = http_client_inflight(d->http) >= d->cfg.max_inflight;
    double delay = -1;

    for (size_t i = 0; i < d->nq; i++) {
        const struct wh_entry *e = d->q[i];
        if (e->state != WH_WAIT || (full && e->next_ms <= now))
            continue;
        if (best < 0 || e->next_ms < best)
            best = e->next_ms;
    }
    if (best >= 0)
        delay = best > now ? (double)(best - now) / 1000.0 : 0.;
    if (d->backoff_until) {
        /* nothing touches the store before the backoff ends */
        double b = (double)(d->backoff_until - time_mono_ms()) / 1000.0;
        if (b < 0)
            b = 0;
        if (delay < b)
            delay = b;
    }
    ev_timer_stop(d->loop, &d->wake);
    if (delay >= 0) {
        ev_timer_set(&d->wake, delay + 0.001, 0.);
        ev_timer_start(d->loop, &d->wake);
    }
}

static void step(struct webhook_dispatch *d)
{
    int rc;

    if (store_batch_active(d->store)) {
        /* another module's batch is open: try again next iteration */
        ev_timer_stop(d->loop, &d->wake);
        ev_timer_set(&d->wake, 0.001, 0.);
        ev_timer_start(d->loop, &d->wake);
        return;
    }
    if (d->backoff_until && time_mono_ms() < d->backoff_until) {
        arm_wake(d);
        return;
    }
    d->backoff_until = 0;
    rc = flush_outcomes(d);
    if (rc) {
        store_trouble(d, "recording delivery outcomes", rc);
        arm_wake(d);
        return;
    }
    if (d->need_resume && d->nq == 0) {
        rc = resume(d);
        if (rc) {
            store_trouble(d, "loading pending deliveries", rc);
            arm_wake(d);
            return;
        }
    }
    if (!d->need_resume && pump(d) == 0 && !d->backoff_until) {
        /* more to read?  pump() stops on its budget; come back soon */
        uint64_t head = 0;
        if (!store_stream_head(d->store, &head) && head > d->read_seq &&
            d->cfg.queue_max - d->nq >= PER_RECORD_MAX)
            kick(d);
    }
    if (!d->backoff_until) {
        d->backoff_s = 0;
        send_due(d);
    }
    arm_wake(d);
}

static void kick_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    step(container_of(w, struct webhook_dispatch, kick));
}

static void wake_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    step(container_of(w, struct webhook_dispatch, wake));
}

/* Persists a checkpoint that only moved in memory. */
static void persist_checkpoint(struct webhook_dispatch *d)
{
    if (d->read_seq <= d->durable_seq || store_batch_active(d->store))
        return;
    if (!store_checkpoint_set(d->store, d->reader, d->read_seq))
        d->durable_seq = d->read_seq;
}

static void poll_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    struct webhook_dispatch *d = container_of(w, struct webhook_dispatch, poll);
    persist_checkpoint(d);
    kick(d);
}

/* ---- public API --------------------------------------------------------- */

struct webhook_dispatch *webhook_dispatch_new(struct store *s, struct ev_loop *loop,
                                              const struct webhook_dispatch_config *cfg, char *err,
                                              size_t errlen)
{
    static const struct webhook_dispatch_config defaults = {0};
    struct webhook_dispatch *d;
    int rc;

    if (!cfg)
        cfg = &defaults;
    d = xcalloc(1, sizeof *d);
    d->store = s;
    d->loop = loop;
    d->cfg = *cfg;
    if (d->cfg.timeout_s <= 0)
        d->cfg.timeout_s = WEBHOOK_DISPATCH_TIMEOUT_S;
    if (!d->cfg.max_attempts)
        d->cfg.max_attempts = WEBHOOK_DISPATCH_ATTEMPTS;
    if (d->cfg.backoff_s <= 0)
        d->cfg.backoff_s = WEBHOOK_DISPATCH_BACKOFF_S;
    if (!d->cfg.max_inflight)
        d->cfg.max_inflight = WEBHOOK_DISPATCH_INFLIGHT;
    if (!d->cfg.queue_max)
        d->cfg.queue_max = WEBHOOK_DISPATCH_QUEUE;
    if (d->cfg.queue_max < 64)
        d->cfg.queue_max = 64;
    if (!d->cfg.batch)
        d->cfg.batch = WEBHOOK_DISPATCH_BATCH;
    copy_str(d->reader, sizeof d->reader, cfg->reader ? cfg->reader : WEBHOOK_DISPATCH_READER);
    d->cfg.reader = d->reader;
    rc = store_checkpoint_get(s, d->reader, &d->read_seq);
    if (rc) {
        snprintf(err, errlen, "webhooks: cannot read the checkpoint: %s", err_str(rc));
        free(d);
        return NULL;
    }
    d->durable_seq = d->read_seq;
    struct http_client_config hc = {.max_inflight = d->cfg.max_inflight,
                                    .max_response = 16 * 1024,
                                    .user_agent = "GenuProof-Webhooks/1"};
    d->http = http_client_new(loop, &hc);
    if (!d->http) {
        snprintf(err, errlen, "webhooks: cannot create the HTTP client");
        free(d);
        return NULL;
    }
    d->q = xcalloc(d->cfg.queue_max, sizeof *d->q);
    d->need_resume = true;
    d->pc = xcalloc(1, sizeof *d->pc);
    uint64_t dv;
    d->pc_kept = store_data_version(s, &dv) == 0 && store_add_watch(s, pc_watch, d) == 0;
    ev_init(&d->kick, kick_cb);
    ev_init(&d->wake, wake_cb);
    ev_set_priority(&d->kick, EV_MAXPRI);
    ev_set_priority(&d->wake, EV_MAXPRI);
    ev_timer_init(&d->poll, poll_cb, scaled(POLL_S), scaled(POLL_S));
    ev_timer_start(loop, &d->poll);
    ev_unref(loop); /* the poll alone does not keep the loop running */
    kick(d);
    return d;
}

void webhook_dispatch_free(struct webhook_dispatch *d)
{
    if (!d)
        return;
    ev_ref(d->loop);
    ev_timer_stop(d->loop, &d->poll);
    ev_timer_stop(d->loop, &d->kick);
    ev_timer_stop(d->loop, &d->wake);
    http_client_free(d->http); /* no callbacks: in-flight stays pending */
    persist_checkpoint(d);
    for (size_t i = 0; i < d->nq; i++)
        entry_free(d->q[i]);
    free(d->q);
    if (d->pc_kept)
        store_remove_watch(d->store, pc_watch, d);
    free(d->pc);
    free(d);
}

void webhook_dispatch_on_commit(void *arg, uint64_t last_seq)
{
    struct webhook_dispatch *d = arg;
    if (last_seq > d->read_seq)
        kick(d);
}

void webhook_dispatch_get_stats(const struct webhook_dispatch *d,
                                struct webhook_dispatch_stats *out)
{
    *out = d->st;
    out->queued = d->nq;
    out->inflight = http_client_inflight(d->http);
    out->checkpoint = d->read_seq;
}
