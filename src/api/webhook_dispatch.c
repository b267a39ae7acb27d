/*
 * webhook_dispatch.c - the webhook delivery engine (webhook_dispatch.h).
 *
 * One step (step()) runs from a zero-delay, highest-priority timer
 * whenever there may be work: after a commit, when a request finishes,
 * when a retry falls due, and on a 1 s (scaled) poll.  A step
 *   1. writes the outcomes of finished attempts (stream mode: one store
 *      batch; claim mode: one conditional write each, since DynamoDB has
 *      no group commit and each must stand or fall with its own claim),
 *   2. stream mode: loads pending deliveries due soon from the store
 *      when some wait there (after a start, or retries spilled from a
 *      full queue: resume(), spill()), then reads the change stream and
 *      writes new deliveries with the checkpoint, one transaction per
 *      group of records;
 *      claim mode: when a poll is due, takes due deliveries from the
 *      pending index,
 *   3. starts the attempts that are due,
 *   4. arms a timer for the next due attempt.
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
 *
 * In claim mode the memory holds only deliveries this process claimed
 * and is working on (waiting for room in the client, in flight, or with
 * an outcome to write); a retry goes back to the store, free, and the
 * poll that finds it due takes it again (maybe in another process).
 */
#include "api/webhook_dispatch.h"

#include <ev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/job_claim.h"
#include "api/pager.h"
#include "core/brand.h"
#include "core/keys.h"
#include "core/timeutil.h"
#include "core/webhook.h"
#include "detect/webhook_fanout.h"
#include "http/client.h"
#include "store/store.h"
#include "util/backoff.h"
#include "util/err.h"
#include "util/hash.h"
#include "util/log.h"
#include "util/timescale.h"
#include "util/xalloc.h"

#define container_of(p, type, member) ((type *)(void *)((char *)(p)-offsetof(type, member)))

#define PER_RECORD_MAX WF_PER_RECORD_MAX
/* Time a step may spend reading the stream before yielding (ms). */
#define STEP_BUDGET_MS        5
#define POLL_S                1.0
#define ATTEMPT_TIMEOUT_MIN_S 0.5
#define ERR_BACKOFF_S         0.2
#define ERR_BACKOFF_MAX_S     30.0
/* A claim lasts two attempt timeouts plus this (unscaled seconds): time
 * for the hook lookup, the attempt and its outcome write on a slow
 * store. */
#define CLAIM_MARGIN_S 2.0
/* Stream mode: pending deliveries left in the store (at a restart, or
 * retries spilled from a full queue) are looked for at most this often,
 * and those due within RESUME_AHEAD_S are loaded. */
#define RESUME_EVERY_S     1.0
#define RESUME_AHEAD_S     1.0
#define RESUME_WAITING_MAX 64 /* waiting retries a look passes before it stops */

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
    /* claim mode: this process's claim on the item */
    char token[CLAIM_TOKEN_LEN + 1];
    int64_t claim_until; /* wall clock ms */
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
    bool need_resume;      /* pending deliveries wait in the store, not in memory */
    int64_t resume_after;  /* mono ms: the next look for them */
    int64_t backoff_until; /* mono ms: no store work before */
    double backoff_s;
    struct webhook_dispatch_stats st;
    bool claim;    /* claim mode (webhook_dispatch.h) */
    bool poll_due; /* claim mode: look for deliveries to take */
    /* Brands' hooks and products' brands, kept from one pump to the next
     * while nothing can have changed them: the store's watch empties it
     * on a write of a webhook item or a product's META, on a rollback,
     * and on another process's commit (data version).  Stores without a
     * data version get a fresh one per pump. */
    struct wf_cache *wc;
    bool wc_kept;
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

/* Gives e's claim back without recording anything (best effort). */
static void give_back(struct webhook_dispatch *d, const struct wh_entry *e)
{
    int rc = claim_give_back(d->store, e->pk, e->sk, e->token);
    if (rc && rc != ERR_CONDITION)
        log_debug("webhooks: giving back the claim on %s failed (%s)", e->id, err_str(rc));
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
        if (d->claim && now + (int64_t)(attempt_timeout(d) * 1000.0) >= e->claim_until) {
            /* too little of the claim left for an attempt (the store was
             * in trouble meanwhile): another process may take it over
             * while this one sends.  Leave it to the next poll. */
            give_back(d, e);
            queue_remove_at(d, i--);
            entry_free(e);
            continue;
        }
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

/* Updates one delivery item (and its webhook when delivered).  In claim
 * mode the update holds only while the claim is still e's, a retry also
 * gives the claim back, and ERR_CONDITION means the claim was lost. */
static int write_outcome(struct webhook_dispatch *d, struct wh_entry *e)
{
    bool final = e->delivered || e->failed;
    char next_iso[ISO_LEN + 1];
    cJSON *v_status, *v_attempts, *v_lstatus, *v_lerror, *v_next, *v_hist, *v_done = NULL;
    cJSON *v_mine = NULL, *v_due = NULL;
    struct key due;
    struct store_action acts[11];
    struct store_cond cond = {.kind = STORE_COND_EXISTS};
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
        /* A retry moves to its due time in the pending index, which is so
         * ordered by due time (a new delivery is due at its creation): a
         * poll reading it oldest first meets every due delivery before
         * the retries that wait, however many of those there are. */
        if (key_delivery_sk(&due, next_iso, e->id))
            v_due = cJSON_CreateString(due.s);
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
        /* leave the pending index; a final item keeps its holder's token,
         * so a stale read of the index can never take it again */
        acts[n++] = (struct store_action){.kind = STORE_ACT_REMOVE, .attr = "GSI1PK"};
        acts[n++] = (struct store_action){.kind = STORE_ACT_REMOVE, .attr = "GSI1SK"};
    } else {
        if (v_due)
            acts[n++] =
                (struct store_action){.kind = STORE_ACT_SET, .attr = "GSI1SK", .value = v_due};
        if (d->claim) {
            claim_release_acts(&acts[n]);
            n += 2;
        }
    }
    if (d->claim)
        claim_cond_mine(&cond, &v_mine, e->token);
    rc = store_update(d->store, e->pk, e->sk, acts, n, &cond, NULL);
    if (rc == ERR_CONDITION && !d->claim)
        rc = 0; /* the delivery item is gone: nothing left to record */
    if (!rc && e->delivered) {
        struct key pk, sk;
        if (key_brand_pk(&pk, e->brand_id) && key_webhook_sk(&sk, e->webhook_id)) {
            const struct store_cond exists = {.kind = STORE_COND_EXISTS};
            const struct store_action wacts[2] = {
                {.kind = STORE_ACT_SET, .attr = "lastTriggered", .value = v_done},
                {.kind = STORE_ACT_ADD, .attr = "deliveryCount", .delta = 1},
            };
            int wrc = store_update(d->store, pk.s, sk.s, wacts, 2, &exists, NULL);
            if (wrc && wrc != ERR_CONDITION) {
                if (d->claim) {
                    /* the delivery is recorded and must not be sent
                     * again; only the webhook's counters miss this one */
                    d->st.errors++;
                    log_warn("webhooks: updating a webhook's counters failed (%s)", err_str(wrc));
                } else {
                    rc = wrc;
                }
            }
        }
    }
    cJSON_Delete(v_status);
    cJSON_Delete(v_attempts);
    cJSON_Delete(v_lstatus);
    cJSON_Delete(v_lerror);
    cJSON_Delete(v_next);
    cJSON_Delete(v_done);
    cJSON_Delete(v_mine);
    cJSON_Delete(v_due);
    return rc;
}

/* Counts a final outcome that was written. */
static void count_final(struct webhook_dispatch *d, const struct wh_entry *e)
{
    if (e->delivered)
        d->st.delivered++;
    else
        d->st.failed++;
}

/* Claim mode: each outcome on its own (no group commit on DynamoDB, and
 * each is conditional on its own claim).  Written entries leave memory:
 * final ones are done, and a retry was handed back to the store. */
static int flush_outcomes_claimed(struct webhook_dispatch *d)
{
    int rc = 0;

    for (size_t i = 0; i < d->nq;) {
        struct wh_entry *e = d->q[i];
        if (e->state != WH_WRITE) {
            i++;
            continue;
        }
        rc = write_outcome(d, e);
        if (rc == ERR_CONDITION) {
            /* another process took the delivery over: its outcome wins */
            d->st.lost++;
            log_debug("webhooks: claim on delivery %s lost", e->id);
            rc = 0;
        } else if (rc) {
            return rc; /* e stays to be written after the backoff */
        } else if (e->delivered || e->failed) {
            count_final(d, e);
        }
        queue_remove_at(d, i);
        entry_free(e);
        /* room was freed: look for more work */
        d->poll_due = true;
    }
    return 0;
}

/* Writes every WH_WRITE outcome in one store batch; on success final
 * entries leave the queue and the others wait for their next attempt. */
static int flush_outcomes(struct webhook_dispatch *d)
{
    size_t n = 0;
    int rc;

    if (d->claim)
        return flush_outcomes_claimed(d);
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
            count_final(d, e);
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

/* The keys of the deliveries in memory, hashed once for a look through
 * the pending index (up to queue_max items against up to queue_max
 * entries).  Entries the look adds need no place in it: the index shows
 * each item once. */
struct mem_keys {
    const struct webhook_dispatch *d;
    uint32_t *slot; /* queue position + 1; 0: empty */
    size_t mask;
};

static void mem_keys_init(struct mem_keys *k, const struct webhook_dispatch *d)
{
    size_t cap = 16;
    while (cap < 2 * d->nq)
        cap *= 2;
    k->d = d;
    k->mask = cap - 1;
    k->slot = xcalloc(cap, sizeof *k->slot);
    for (size_t i = 0; i < d->nq; i++) {
        size_t j = hash_pair(d->q[i]->pk, d->q[i]->sk) & k->mask;
        while (k->slot[j])
            j = (j + 1) & k->mask;
        k->slot[j] = (uint32_t)(i + 1);
    }
}

static void mem_keys_free(struct mem_keys *k)
{
    free(k->slot);
}

static bool in_memory(const struct mem_keys *k, const char *pk, const char *sk)
{
    for (size_t j = hash_pair(pk, sk) & k->mask; k->slot[j]; j = (j + 1) & k->mask) {
        const struct wh_entry *e = k->d->q[k->slot[j] - 1];
        if (!strcmp(e->pk, pk) && !strcmp(e->sk, sk))
            return true;
    }
    return false;
}

struct resume_ctx {
    struct webhook_dispatch *d;
    struct mem_keys keys;
    size_t room, seen, looked, waiting;
    int64_t horizon; /* wall ms: load what is due before */
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
    /* bounded before the cast: a huge or NaN count from the table is
     * "all used up", never undefined behaviour */
    e->attempts = !cJSON_IsNumber(att) || !(att->valuedouble > 0)   ? 0
                  : att->valuedouble >= (double)d->cfg.max_attempts ? d->cfg.max_attempts
                                                                    : (unsigned)att->valuedouble;
    e->history = cJSON_IsArray(hist) ? cJSON_Duplicate(hist, 1) : cJSON_CreateArray();
    if (!next || time_parse_iso(next, &next_ms))
        next_ms = 0;
    e->next_ms = next_ms;
    return e;
}

/* A pending delivery whose attempts are all used up: the process crashed
 * between the last attempt and its final write.  Queue that write. */
static void mark_if_exhausted(struct webhook_dispatch *d, struct wh_entry *e)
{
    if (e->attempts < d->cfg.max_attempts)
        return;
    e->failed = true;
    e->state = WH_WRITE;
    copy_str(e->last_error, sizeof e->last_error, "attempts exhausted");
    time_iso(now_ms(), e->done_iso);
}

static int resume_cb(void *arg, const cJSON *item)
{
    struct resume_ctx *c = arg;
    const char *pk = str_attr(item, "PK"), *sk = str_attr(item, "SK");
    const char *next = str_attr(item, "nextAttemptAt");
    int64_t next_ms = 0;
    struct wh_entry *e;

    c->looked++;
    if (pk && sk && in_memory(&c->keys, pk, sk))
        return 0; /* taken from the stream, or loaded before */
    if (next && !time_parse_iso(next, &next_ms) && next_ms > c->horizon) {
        /* a retry that waits: a later look loads it.  The index is in due
         * order, so what follows waits too; a few more are looked at for
         * items of a database written before it was (keyed by creation) */
        c->more = true;
        return ++c->waiting >= RESUME_WAITING_MAX;
    }
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
    mark_if_exhausted(c->d, e);
    queue_push(c->d, e);
    c->d->st.resumed++;
    return 0;
}

/*
 * Loads pending deliveries from the store's pending index (in due order,
 * see write_outcome) that are not in memory and are due soon, while the
 * queue has room; the look is bounded by the queue's size.  need_resume
 * stays set while some are left (a full queue, retries that wait, more
 * than one look's worth), and the next look comes RESUME_EVERY_S later.
 */
static int resume(struct webhook_dispatch *d)
{
    struct store_query q = {.index = STORE_INDEX_GSI1,
                            .pk = KEY_GSI1PK_DELIVERY_PENDING,
                            .sk_op = STORE_SK_ANY,
                            .forward = true};
    struct resume_ctx c = {.d = d,
                           .room = d->cfg.queue_max - d->nq,
                           .horizon = now_ms() + (int64_t)(scaled(RESUME_AHEAD_S) * 1000.0)};
    size_t limit = d->cfg.queue_max + 1;
    int rc;

    mem_keys_init(&c.keys, d);
    rc = pager_each(d->store, &q, limit, resume_cb, &c, NULL);
    mem_keys_free(&c.keys);
    if (rc)
        return rc;
    if (c.looked >= limit)
        c.more = true;
    d->need_resume = c.more;
    d->resume_after = time_mono_ms() + (int64_t)(scaled(RESUME_EVERY_S) * 1000.0);
    if (c.seen)
        log_info("webhooks: resumed %zu pending deliveries%s", c.seen,
                 c.more ? " (more waiting)" : "");
    return 0;
}

/* ---- claim mode: taking deliveries from the pending index ---------------- */

struct take_ctx {
    struct webhook_dispatch *d;
    struct mem_keys keys;
    size_t room, taken;
    int64_t now, until;
};

/*
 * Takes one delivery seen in the index.  The index is read eventually
 * consistently (DynamoDB GSIs are): the claim's condition guards against
 * a stale claimToken, and the item is read again (consistently) once
 * taken, so a stale attempt count or due time is never acted upon.
 */
static int take_cb(void *arg, const cJSON *seen)
{
    struct take_ctx *c = arg;
    struct webhook_dispatch *d = c->d;
    const char *pk = str_attr(seen, "PK"), *sk = str_attr(seen, "SK");
    const char *next = str_attr(seen, "nextAttemptAt");
    char token[CLAIM_TOKEN_LEN + 1];
    cJSON *item = NULL;
    struct wh_entry *e;
    int64_t next_ms = 0;
    int rc;

    if (c->taken >= c->room)
        return 1;
    if (!pk || !sk || !key_after(pk, KEY_PFX_DELIVERY) || in_memory(&c->keys, pk, sk) ||
        !claim_is_free(seen, c->now))
        return 0;
    if (next && !time_parse_iso(next, &next_ms) && next_ms > c->now)
        return 0; /* a retry not due yet */
    rc = claim_take_read(d->store, pk, sk, seen, c->until, token, &item);
    if (rc == ERR_CONDITION)
        return 0; /* another process was quicker, or the item is gone */
    if (rc || !item)
        return rc;
    e = entry_from_item(d, item);
    if (e) {
        copy_str(e->token, sizeof e->token, token);
        e->claim_until = c->until;
    }
    if (!e || !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(item, "GSI1PK")) ||
        e->next_ms > c->now) {
        /* final or rescheduled meanwhile (or malformed): not ours to send */
        if (e) {
            give_back(d, e);
        } else {
            /* take it out of the pending index (still under our claim),
             * or every process would take it again at every lapse */
            const struct store_action out[2] = {{.kind = STORE_ACT_REMOVE, .attr = "GSI1PK"},
                                                {.kind = STORE_ACT_REMOVE, .attr = "GSI1SK"}};
            struct store_cond mine;
            cJSON *v;
            claim_cond_mine(&mine, &v, token);
            rc = store_update(d->store, pk, sk, out, 2, &mine, NULL);
            cJSON_Delete(v);
            if (rc && rc != ERR_CONDITION) {
                cJSON_Delete(item);
                return rc;
            }
            d->st.errors++;
            log_warn("webhooks: a malformed pending delivery was dropped");
        }
        entry_free(e);
        cJSON_Delete(item);
        return 0;
    }
    cJSON_Delete(item);
    mark_if_exhausted(d, e);
    queue_push(d, e);
    d->st.claimed++;
    c->taken++;
    return 0;
}

/* What a poll needs to choose (the payload stays in the store until a
 * delivery is taken and read in full). */
static const char *const poll_attrs[] = {"nextAttemptAt", CLAIM_ATTR_TOKEN, CLAIM_ATTR_UNTIL};

/* Looks through the pending index for due deliveries, taking as many as
 * the queue and the HTTP client have room for.  The look is bounded by
 * queue_max items so that a run of retries not yet due at the head of
 * the partition cannot make a poll unbounded. */
static int claim_poll(struct webhook_dispatch *d)
{
    struct store_query q = {.index = STORE_INDEX_GSI1,
                            .pk = KEY_GSI1PK_DELIVERY_PENDING,
                            .sk_op = STORE_SK_ANY,
                            .forward = true,
                            .project = poll_attrs,
                            .nproject = sizeof poll_attrs / sizeof poll_attrs[0]};
    size_t inflight = http_client_inflight(d->http), busy = 0;
    struct take_ctx c = {.d = d, .now = now_ms()};

    for (size_t i = 0; i < d->nq; i++)
        if (d->q[i]->state != WH_INFLIGHT)
            busy++;
    /* the client's room, less the entries already waiting for it */
    c.room = d->cfg.max_inflight > inflight + busy ? d->cfg.max_inflight - inflight - busy : 0;
    if (c.room > d->cfg.queue_max - d->nq)
        c.room = d->cfg.queue_max - d->nq;
    d->poll_due = false;
    if (!c.room)
        return 0; /* a finished attempt polls again */
    c.until = c.now + (int64_t)((2 * attempt_timeout(d) + scaled(CLAIM_MARGIN_S)) * 1000.0);
    mem_keys_init(&c.keys, d);
    int rc = pager_each(d->store, &q, d->cfg.queue_max, take_cb, &c, NULL);
    mem_keys_free(&c.keys);
    return rc;
}

/* ---- stream mode: from stream records to deliveries ---------------------- */

/* The store's watch: writes that can change what the cache holds. */
static void wc_watch(void *arg, const char *pk, const char *sk, const struct store_action *acts,
                     size_t nacts)
{
    struct webhook_dispatch *d = arg;
    if (!pk) {
        wf_cache_clear(d->wc);
        return;
    }
    if (key_after(pk, KEY_PFX_BRAND) && key_after(sk, KEY_PFX_WEBHOOK)) {
        wf_cache_forget_hooks(d->wc);
        return;
    }
    if (key_after(pk, KEY_PFX_PRODUCT) && sk && !strcmp(sk, KEY_SK_META)) {
        /* the counter folding of scans does not move a product */
        bool counters = acts && nacts;
        for (size_t i = 0; counters && i < nacts; i++)
            counters = acts[i].kind == STORE_ACT_ADD;
        if (!counters)
            wf_cache_forget_products(d->wc);
    }
}

/* Before a pump: the cache stays only when nobody else can have written. */
static void wc_refresh(struct webhook_dispatch *d)
{
    if (!d->wc_kept || store_data_version_moved(d->store, &d->dv) != 0)
        wf_cache_clear(d->wc);
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

/* Receives one delivery of the record being read (webhook_fanout_record). */
struct pending_ctx {
    struct webhook_dispatch *d;
    struct pending_new *p;
};

static int pending_add(void *arg, cJSON *item)
{
    struct pending_ctx *c = arg;
    struct wh_entry *e = entry_from_item(c->d, item);

    if (!e || c->p->n >= STORE_TRANSACT_MAX - 1) {
        /* cannot happen: the item was just built and room was checked */
        entry_free(e);
        cJSON_Delete(item);
        return ERR_INVALID;
    }
    c->p->items[c->p->n] = item;
    c->p->entries[c->p->n] = e;
    c->p->n++;
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

/* Reads the stream and writes deliveries, within the step budget. */
static int pump(struct webhook_dispatch *d)
{
    wc_refresh(d);
    struct pending_new *p = xcalloc(1, sizeof *p);
    struct pending_ctx pctx = {.d = d, .p = p};
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
        rc = store_stream_read_filtered(d->store, d->read_seq, d->cfg.batch,
                                        webhook_fanout_filter(), &recs, &nrec, &top, &examined);
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
            const struct wf_opts o = {.now_ms = now_ms()};
            rc = webhook_fanout_record(d->store, d->wc, &recs[i], &o, pending_add, &pctx,
                                       &d->st.skipped);
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
    if (!d->claim && d->need_resume) {
        /* the next look for deliveries waiting in the store */
        double r = (double)(d->resume_after - time_mono_ms()) / 1000.0;
        if (r < 0)
            r = 0;
        if (delay < 0 || r < delay)
            delay = r;
    }
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

/* qsort_r comparator: queue positions, the latest due first. */
static int by_next_desc(const void *a, const void *b, void *arg)
{
    struct wh_entry *const *q = arg;
    int64_t x = q[*(const size_t *)a]->next_ms, y = q[*(const size_t *)b]->next_ms;
    return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * Stream mode, with no room left to read the stream: retries that wait
 * (their outcome is written, so the store holds them with their due
 * time) leave memory, the latest due first, until the stream's next
 * records and a quarter of the queue have room; resume() brings them
 * back when they are nearly due.  Without this, a receiver that is down
 * with a queue's worth of retries stopped the stream, and every other
 * webhook with it.
 */
static void spill(struct webhook_dispatch *d)
{
    int64_t keep_before = now_ms() + (int64_t)(scaled(RESUME_AHEAD_S) * 1000.0);
    size_t want = PER_RECORD_MAX + d->cfg.queue_max / 4, n = 0, out = 0, kept = 0;
    size_t *cand;

    if (d->claim || d->cfg.queue_max - d->nq >= PER_RECORD_MAX)
        return;
    cand = xcalloc(d->nq, sizeof *cand);
    for (size_t i = 0; i < d->nq; i++) {
        const struct wh_entry *e = d->q[i];
        if (e->state == WH_WAIT && e->attempts > 0 && e->next_ms > keep_before)
            cand[n++] = i;
    }
    qsort_r(cand, n, sizeof *cand, by_next_desc, d->q);
    /* the room is below PER_RECORD_MAX, so below want */
    for (; out < n && out < want - (d->cfg.queue_max - d->nq); out++) {
        entry_free(d->q[cand[out]]);
        d->q[cand[out]] = NULL;
    }
    for (size_t i = 0; i < d->nq; i++)
        if (d->q[i])
            d->q[kept++] = d->q[i];
    d->nq = kept;
    free(cand);
    if (out) {
        d->st.spilled += out;
        d->need_resume = true;
        log_info("webhooks: %zu waiting retries left memory for the store (queue full)", out);
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
    if (d->claim) {
        if (d->poll_due) {
            rc = claim_poll(d);
            if (rc) {
                store_trouble(d, "taking pending deliveries", rc);
                arm_wake(d);
                return;
            }
        }
    } else if (d->need_resume && d->nq < d->cfg.queue_max && time_mono_ms() >= d->resume_after) {
        rc = resume(d);
        if (rc) {
            store_trouble(d, "loading pending deliveries", rc);
            arm_wake(d);
            return;
        }
    }
    spill(d);
    if (!d->claim && pump(d) == 0 && !d->backoff_until) {
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
    if (d->claim)
        d->poll_due = true;
    else
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
    d->claim = cfg->claim || !store_has_stream(s);
    rc = d->claim ? 0 : store_checkpoint_get(s, d->reader, &d->read_seq);
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
    if (d->claim) {
        /* said once: which of the two ways this process delivers */
        log_info("webhooks: sending deliveries taken from the pending index (claim mode)");
        d->poll_due = true;
    } else {
        d->need_resume = true;
        d->wc = wf_cache_new();
        uint64_t dv;
        d->wc_kept = store_data_version(s, &dv) == 0 && store_add_watch(s, wc_watch, d) == 0;
    }
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
    /* attempts that finished but whose outcome is not written yet: write
     * them now, or a delivered one would be sent again after a restart
     * (or by another process) */
    if (!store_batch_active(d->store) && flush_outcomes(d))
        log_warn("webhooks: writing the last outcomes at stop failed; those deliveries may be "
                 "sent again");
    persist_checkpoint(d);
    for (size_t i = 0; i < d->nq; i++) {
        /* claim mode: hand unfinished work to the other processes now
         * rather than when the claims lapse (an abandoned attempt is
         * sent again: at least once) */
        if (d->claim && !store_batch_active(d->store))
            give_back(d, d->q[i]);
        entry_free(d->q[i]);
    }
    free(d->q);
    if (d->wc_kept)
        store_remove_watch(d->store, wc_watch, d);
    wf_cache_free(d->wc);
    free(d);
}

void webhook_dispatch_on_commit(void *arg, uint64_t last_seq)
{
    struct webhook_dispatch *d = arg;
    /* claim mode: deliveries come from the Streams detector, not from
     * this process's commits */
    if (!d->claim && last_seq > d->read_seq)
        kick(d);
}

void webhook_dispatch_poke(struct webhook_dispatch *d)
{
    if (d && d->claim) {
        d->poll_due = true;
        kick(d);
    }
}

void webhook_dispatch_get_stats(const struct webhook_dispatch *d,
                                struct webhook_dispatch_stats *out)
{
    *out = d->st;
    out->queued = d->nq;
    out->inflight = http_client_inflight(d->http);
    out->checkpoint = d->read_seq;
}
