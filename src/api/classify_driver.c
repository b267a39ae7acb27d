/*
 * classify_driver.c - the model classifier (classify_driver.h): the
 * change-stream reader on SQLite, the job taker on DynamoDB.
 *
 * Stream mode.  Jobs are kept in a FIFO in stream order.  Reading stops
 * while the maximum number of calls is in flight (or the FIFO is long); a
 * finished call only marks its job done.  Each step then writes, in one
 * store batch, the results of the done jobs at the head of the FIFO
 * together with the checkpoint just before the first job still running,
 * so the checkpoint never passes a record whose call has not finished.
 * When no result needs writing the checkpoint only moves in memory and is
 * saved by the next write or the 1 s (scaled) poll: re-reading records
 * that produced nothing costs nothing.
 *
 * Jobs mode.  The list holds the jobs this process claimed, in any order.
 * The 1 s (scaled) poll, and a step after a call when the last poll left
 * free jobs behind, reads the CLASSIFY_PENDING partition of GSI1 oldest
 * first and claims free jobs while calls may start.  A finished job is
 * written at once, in one transaction: on DynamoDB a store batch is no
 * transaction (each write lands on its own), and the alert update, the
 * ops-log entry and the job's deletion must go together or not at all.
 * A job that cannot be written for a store error is tried again while
 * its claim holds; after that it is left to whoever claims it next.
 *
 * Like the webhook dispatcher, the steps run from a zero-delay timer at
 * the highest priority, so they find no other module's store batch open,
 * and wait an iteration if one is.
 */
#include "api/classify_driver.h"

#include <ev.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/job_claim.h"
#include "core/alert.h"
#include "core/keys.h"
#include "core/opslog.h"
#include "core/timeutil.h"
#include "detect/classify_job.h"
#include "store/store.h"
#include "util/backoff.h"
#include "util/err.h"
#include "util/log.h"
#include "util/timescale.h"
#include "util/xalloc.h"

#define container_of(p, type, member) ((type *)(void *)((char *)(p)-offsetof(type, member)))

#define JOBS_MAX          256
#define POLL_S            1.0
#define ERR_BACKOFF_S     0.2
#define ERR_BACKOFF_MAX_S 30.0
/* Jobs mode: GSI1 pages read per poll, and what a claim adds to twice
 * the model's timeout (the call, a retry of the writes). */
#define POLL_PAGES_MAX 4
#define CLAIM_MARGIN_S 5.0

struct cd_job {
    struct classify_driver *d;
    uint64_t seq; /* stream mode: the record */
    bool in_flight, done, write;
    struct classify_job job;
    /* jobs mode: the claim held on the job item */
    char token[CLAIM_TOKEN_LEN + 1];
    int64_t claim_until; /* epoch ms */
    /* the model's answer (write) */
    char severity[16], severity_upper[16];
    char vector[CLASSIFY_MODEL_VECTOR_MAX + 1];
    char model[CLASSIFY_MODEL_NAME_MAX + 1];
    int confidence;
    double latency_ms;
    char *narrative;
    cJSON *analysis;
    struct cd_job *next;
};

struct classify_driver {
    struct store *store;
    struct ev_loop *loop;
    struct classify_model *model;
    size_t max_inflight, batch;
    bool jobs_mode;
    bool more;      /* jobs mode: the last poll left free jobs behind */
    double claim_s; /* jobs mode: claim length (scaled) */
    char reader[64];
    ev_timer kick, wake, poll;
    struct cd_job *head, *tail;
    size_t njobs, inflight;
    uint64_t read_seq, durable_seq;
    int64_t backoff_until;
    double backoff_s;
    int64_t presence_at; /* jobs mode: monotonic ms of the next presence write */
    struct classify_driver_stats st;
};

static const char *str_attr(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void kick(struct classify_driver *d)
{
    if (!ev_is_active(&d->kick) && !ev_is_pending(&d->kick)) {
        ev_timer_set(&d->kick, 0., 0.);
        ev_timer_start(d->loop, &d->kick);
    }
}

static void store_trouble(struct classify_driver *d, const char *what, int rc)
{
    d->st.errors++;
    d->backoff_s = backoff_next(d->backoff_s, ERR_BACKOFF_S, ERR_BACKOFF_MAX_S);
    d->backoff_until = time_mono_ms() + (int64_t)(scaled(d->backoff_s) * 1000.0);
    log_warn("classifier: %s failed (%s); retrying later", what, err_str(rc));
}

static void job_free(struct cd_job *j)
{
    if (!j)
        return;
    classify_job_clear(&j->job);
    free(j->narrative);
    cJSON_Delete(j->analysis);
    free(j);
}

/* ---- model calls -------------------------------------------------------- */

static void model_cb(void *arg, const struct classify_model_result *r)
{
    struct cd_job *j = arg;
    struct classify_driver *d = j->d;

    j->in_flight = false;
    j->done = true;
    d->inflight--;
    if (r->err) {
        d->st.fallbacks++;
        log_msg(LOG_DEBUG, NULL, "classifier: %s on alert %s: rules kept", r->error,
                j->job.alert_id);
    } else {
        j->write = true;
        snprintf(j->severity, sizeof j->severity, "%s", r->severity);
        snprintf(j->severity_upper, sizeof j->severity_upper, "%s", r->severity_upper);
        snprintf(j->vector, sizeof j->vector, "%s", r->attack_vector);
        snprintf(j->model, sizeof j->model, "%s", r->model);
        j->confidence = r->confidence;
        j->latency_ms = r->latency_ms;
        j->narrative = xstrdup(r->narrative);
        j->analysis = classify_model_analysis_json(r);
    }
    kick(d);
}

static bool in_flight_for(const struct classify_driver *d, const char *alert_id)
{
    for (const struct cd_job *j = d->head; j; j = j->next)
        if (j->in_flight && !strcmp(j->job.alert_id, alert_id))
            return true;
    return false;
}

/* Asks the model about j.  0 (the call runs, or could not start and j is
 * done with the rules standing), or ERR_THROTTLED (nothing started). */
static int start_call(struct classify_driver *d, struct cd_job *j)
{
    const char *flags[CLASSIFY_JOB_FLAGS_MAX];
    struct classify_model_input in;
    int rc;

    classify_job_input(&j->job, &in, flags);
    rc = classify_model_request(d->model, &in, model_cb, j);
    if (rc == ERR_THROTTLED)
        return rc;
    if (rc) {
        j->done = true; /* could not ask: the rules stand */
        d->st.fallbacks++;
    } else {
        j->in_flight = true;
        d->inflight++;
        d->st.requests++;
    }
    return 0;
}

static void enqueue(struct classify_driver *d, struct cd_job *j)
{
    if (d->tail)
        d->tail->next = j;
    else
        d->head = j;
    d->tail = j;
    d->njobs++;
}

/* Builds a job for record r and starts its call.  Returns 0 (job queued,
 * possibly already done when the call could not start), 1 when the
 * record is skipped, or ERR_THROTTLED (nothing queued: read it later). */
static int start_job(struct classify_driver *d, const struct stream_record *r)
{
    struct cd_job *j = xcalloc(1, sizeof *j);
    int rc;

    j->d = d;
    j->seq = r->seq;
    if (classify_job_from_record(r, &j->job)) {
        job_free(j);
        return 1;
    }
    if (in_flight_for(d, j->job.alert_id)) {
        d->st.folded++;
        job_free(j);
        return 1;
    }
    rc = start_call(d, j);
    if (rc) {
        job_free(j);
        return rc;
    }
    enqueue(d, j);
    return 0;
}

/* Reads the stream while calls may start. */
static void read_stream(struct classify_driver *d)
{
    while (d->inflight < d->max_inflight && d->njobs < JOBS_MAX) {
        /* Only alert writes can be candidates: the store skips the rest
         * without parsing their images. */
        struct stream_record *recs = NULL;
        size_t n = 0, used = 0, examined = 0;
        uint64_t top = d->read_seq;
        bool stop = false;
        int rc = store_stream_read_filtered(d->store, d->read_seq, d->batch, &alert_stream_filter,
                                            &recs, &n, &top, &examined);

        if (rc) {
            store_trouble(d, "reading the change stream", rc);
            return;
        }
        for (size_t i = 0; i < n && !stop; i++) {
            if (classify_job_candidate(&recs[i]) && start_job(d, &recs[i]) == ERR_THROTTLED)
                break;
            d->read_seq = recs[i].seq;
            used++;
            stop = d->inflight >= d->max_inflight || d->njobs >= JOBS_MAX;
        }
        store_stream_free(recs, n);
        if (used == n)
            d->read_seq = top; /* the skipped records after the last one too */
        if ((!used && n) || stop || examined < d->batch)
            return;
    }
}

/* ---- writing results ---------------------------------------------------- */

/* The alert update of a model answer: severity, details and aiAnalysis
 * (acts point to *sev, *det and j->analysis; the caller deletes *sev and
 * *det). */
static void alert_acts(const struct cd_job *j, struct store_action acts[3], cJSON **sev,
                       cJSON **det)
{
    *sev = cJSON_CreateString(j->severity);
    *det = cJSON_CreateString(j->narrative);
    acts[0] = (struct store_action){.kind = STORE_ACT_SET, .attr = "severity", .value = *sev};
    acts[1] = (struct store_action){.kind = STORE_ACT_SET, .attr = "details", .value = *det};
    acts[2] =
        (struct store_action){.kind = STORE_ACT_SET, .attr = "aiAnalysis", .value = j->analysis};
}

/* The ops-log entry of a model answer, or NULL when it cannot be built.
 * Keyed by the change record the job came from: a replay overwrites it,
 * never duplicates it. */
static cJSON *opslog_for(const struct cd_job *j)
{
    const struct classify_job *cj = &j->job;
    const char *flags[CLASSIFY_JOB_FLAGS_MAX];
    bool chain = !strcmp(cj->type, "chain_gap") || !strcmp(cj->type, "chain_break");

    for (size_t i = 0; i < cj->nflags; i++)
        flags[i] = cj->flags[i];
    return opslog_item_new(&(struct opslog_fields){
        .id = cj->record_id,
        .agent = chain ? "chain_analyzer" : "threat_detector",
        .trigger = chain ? "chain_event" : "scan_event",
        .product_id = cj->product_id,
        .brand_id = cj->brand_id,
        .flags = flags,
        .nflags = cj->nflags,
        .model = j->model,
        .ai_severity = j->severity_upper,
        .ai_attack_vector = j->vector,
        .has_confidence = true,
        .ai_confidence = j->confidence,
        .latency_ms = j->latency_ms,
        .timestamp = cj->alert_time,
    });
}

/* Stream mode: inside the flush's store batch. */
static int write_result(struct classify_driver *d, const struct cd_job *j)
{
    const struct store_cond exists = {.kind = STORE_COND_EXISTS};
    struct store_action acts[3];
    cJSON *sev, *det, *log;
    int rc;

    alert_acts(j, acts, &sev, &det);
    rc = store_update(d->store, j->job.alert_pk, j->job.alert_sk, acts, 3, &exists, NULL);
    cJSON_Delete(sev);
    cJSON_Delete(det);
    if (rc == ERR_CONDITION)
        return 0; /* the alert is gone */
    if (rc)
        return rc;
    log = opslog_for(j);
    if (!log)
        return 0;
    rc = store_put(d->store, log, NULL);
    cJSON_Delete(log);
    return rc;
}

/* Writes the done jobs at the head of the FIFO with the checkpoint. */
static int flush(struct classify_driver *d, bool force_checkpoint)
{
    struct cd_job *j, *stop;
    uint64_t ckpt;
    bool any = false;
    int rc;

    for (stop = d->head; stop && stop->done; stop = stop->next)
        any |= stop->write;
    ckpt = stop ? stop->seq - 1 : d->read_seq;
    if (!any && !(force_checkpoint && ckpt > d->durable_seq)) {
        /* nothing to write: drop the done prefix, move in memory only */
        while (d->head != stop) {
            j = d->head;
            d->head = j->next;
            d->njobs--;
            job_free(j);
        }
        if (!d->head)
            d->tail = NULL;
        return 0;
    }
    rc = store_batch_begin(d->store);
    for (j = d->head; !rc && j != stop; j = j->next)
        if (j->write)
            rc = write_result(d, j);
    if (!rc && ckpt > d->durable_seq) {
        const struct store_write w = {.kind = STORE_W_CHECKPOINT, .reader = d->reader, .seq = ckpt};
        rc = store_transact(d->store, &w, 1, NULL);
    }
    if (rc) {
        store_batch_abort(d->store);
        return rc;
    }
    rc = store_batch_commit(d->store);
    if (rc)
        return rc;
    if (ckpt > d->durable_seq)
        d->durable_seq = ckpt;
    while (d->head != stop) {
        j = d->head;
        d->head = j->next;
        d->njobs--;
        if (j->write)
            d->st.reclassified++;
        job_free(j);
    }
    if (!d->head)
        d->tail = NULL;
    return 0;
}

/* ---- jobs mode ---------------------------------------------------------- */

/* The job item's key (its alert id was checked by classify_job_parse). */
static const char *job_pk(const struct cd_job *j, struct key *k)
{
    return key_classify_job_pk(k, j->job.alert_id);
}

/* Deletes the job item if the claim is still ours.  ERR_CONDITION when it
 * is not (re-put by the detector, or taken over). */
static int delete_mine(struct classify_driver *d, const char *pk, const char *token)
{
    struct store_cond mine;
    cJSON *v;
    int rc;

    claim_cond_mine(&mine, &v, token);
    rc = store_delete(d->store, pk, KEY_SK_CLASSIFY_JOB, &mine);
    cJSON_Delete(v);
    return rc;
}

/*
 * Writes a finished job: with an answer, the alert update (if the alert
 * still exists), the ops-log entry and the job's deletion (if the claim is
 * still ours) in one transaction; without one (the rules stand), only the
 * deletion.  When the claim is no longer ours the detector re-put the job
 * for a newer state of the alert (or the claim lapsed and another process
 * took it): nothing is written and the job is left for its next holder,
 * so the alert is classified again from its newest state.
 */
static int write_job(struct classify_driver *d, const struct cd_job *j)
{
    struct key k;
    const char *pk = job_pk(j, &k);
    int rc;

    if (!pk)
        return 0; /* cannot happen: checked when parsed */
    if (!j->write) {
        rc = delete_mine(d, pk, j->token);
    } else {
        struct store_action acts[3];
        struct store_cond mine;
        cJSON *sev, *det, *mv, *log = opslog_for(j);
        struct store_write w[3];
        size_t nw = 0;
        int failed = -1;

        alert_acts(j, acts, &sev, &det);
        claim_cond_mine(&mine, &mv, j->token);
        w[nw++] = (struct store_write){.kind = STORE_W_UPDATE,
                                       .pk = j->job.alert_pk,
                                       .sk = j->job.alert_sk,
                                       .acts = acts,
                                       .nacts = 3,
                                       .cond = {.kind = STORE_COND_EXISTS}};
        if (log)
            w[nw++] = (struct store_write){.kind = STORE_W_PUT, .item = log};
        w[nw++] = (struct store_write){
            .kind = STORE_W_DELETE, .pk = pk, .sk = KEY_SK_CLASSIFY_JOB, .cond = mine};
        rc = store_transact(d->store, w, nw, &failed);
        if (rc == ERR_CONDITION && failed == 0)
            rc = delete_mine(d, pk, j->token); /* the alert is gone: so is the job's point */
        else if (!rc)
            d->st.reclassified++;
        cJSON_Delete(sev);
        cJSON_Delete(det);
        cJSON_Delete(mv);
        cJSON_Delete(log);
    }
    if (rc == ERR_CONDITION) {
        d->st.superseded++;
        rc = 0;
    }
    return rc;
}

/* Writes every finished job.  A store error keeps the job for the next
 * step while its claim holds (time to retry without asking the model
 * again); past that it is dropped and whoever claims it next asks again. */
static int finish_jobs(struct classify_driver *d)
{
    struct cd_job **pp = &d->head, *j;
    int rc;

    while ((j = *pp)) {
        if (!j->done) {
            pp = &j->next;
            continue;
        }
        rc = write_job(d, j);
        if (rc && time_now_ms() < j->claim_until)
            return rc;
        if (rc)
            log_warn("classifier: the result for alert %s was not written (%s); its claim lapsed",
                     j->job.alert_id, err_str(rc));
        *pp = j->next;
        if (d->tail == j)
            d->tail = pp == &d->head ? NULL : container_of(pp, struct cd_job, next);
        d->njobs--;
        job_free(j);
    }
    return 0;
}

/* Claims the free job `seen` (as read from GSI1) and starts its call.
 * 0 (claimed and started, or left: another process was first, the job is
 * gone, malformed or its alert already has a call here), ERR_THROTTLED
 * (the model is full: the claim was given back), or a store error. */
static int take_job(struct classify_driver *d, const cJSON *seen, int64_t now)
{
    const char *pk = str_attr(seen, "PK"), *sk = str_attr(seen, "SK");
    const char *id = str_attr(seen, "alertId");
    char token[CLAIM_TOKEN_LEN + 1];
    cJSON *cur = NULL;
    struct cd_job *j;
    int rc;

    if (!pk || !sk || strcmp(sk, KEY_SK_CLASSIFY_JOB) || !key_after(pk, KEY_PFX_CLASSIFY))
        return 0; /* not a job: nothing of ours to do with it */
    if (id && in_flight_for(d, id)) {
        /* re-put while this process asks the model about the alert: one
         * call per alert at a time; taken once that call is written */
        d->st.folded++;
        return 0;
    }
    /* the job as claimed, read again: a re-put the index has not shown
     * yet carries the alert's newer state */
    rc = claim_take_read(d->store, pk, sk, seen, now + (int64_t)(d->claim_s * 1000.0), token, &cur);
    if (rc == ERR_CONDITION)
        return 0; /* another process was first, or the job is gone */
    if (token[0])
        d->st.claimed++;
    if (rc || !cur)
        return rc; /* a read error: the claim lapses and the job is taken again */
    j = xcalloc(1, sizeof *j);
    j->d = d;
    memcpy(j->token, token, sizeof token);
    j->claim_until = now + (int64_t)(d->claim_s * 1000.0);
    if (classify_job_parse(cur, &j->job)) {
        /* hostile or foreign: no retry will make it valid */
        log_warn("classifier: a malformed classification job was dropped");
        d->st.errors++;
        delete_mine(d, pk, token);
        cJSON_Delete(cur);
        job_free(j);
        return 0;
    }
    cJSON_Delete(cur);
    rc = start_call(d, j);
    if (rc == ERR_THROTTLED) {
        (void)claim_give_back(d->store, pk, sk, token); /* else it lapses */
        job_free(j);
        return rc;
    }
    enqueue(d, j);
    return 0;
}

/* What a poll needs to choose and claim a job (the job itself is read in
 * full, consistently, once claimed). */
static const char *const poll_attrs[] = {"alertId", CLAIM_ATTR_TOKEN, CLAIM_ATTR_UNTIL};

/* Reads the pending partition, oldest first, and takes free jobs while
 * calls may start. */
static void poll_jobs(struct classify_driver *d)
{
    char *cursor = NULL;
    bool more = false, stop = false;

    for (int page = 0; !stop && page < POLL_PAGES_MAX; page++) {
        struct store_query q = {.index = STORE_INDEX_GSI1,
                                .pk = KEY_GSI1PK_CLASSIFY_PENDING,
                                .forward = true,
                                .limit = (int)d->batch,
                                .start = cursor,
                                .project = poll_attrs,
                                .nproject = sizeof poll_attrs / sizeof poll_attrs[0]};
        struct store_result res = {0};
        int64_t now = time_now_ms();
        const cJSON *it;
        int rc = store_query(d->store, &q, &res);

        free(cursor);
        cursor = NULL;
        if (rc) {
            store_trouble(d, "reading classification jobs", rc);
            return;
        }
        cJSON_ArrayForEach(it, res.items)
        {
            if (d->inflight >= d->max_inflight || d->njobs >= JOBS_MAX) {
                more = stop = true;
                break;
            }
            if (!claim_is_free(it, now))
                continue;
            rc = take_job(d, it, now);
            if (rc == ERR_THROTTLED) {
                more = stop = true;
                break;
            }
            if (rc) {
                store_trouble(d, "claiming a classification job", rc);
                stop = true;
                break;
            }
        }
        if (res.next && !stop)
            cursor = xstrdup(res.next);
        store_result_free(&res);
        if (!cursor)
            break;
    }
    if (cursor)
        more = true; /* pages left for the next step */
    free(cursor);
    d->more = more;
}

/* ---- steps and timers --------------------------------------------------- */

static void arm_wake(struct classify_driver *d, double delay)
{
    ev_timer_stop(d->loop, &d->wake);
    ev_timer_set(&d->wake, delay, 0.);
    ev_timer_start(d->loop, &d->wake);
}

/* Jobs mode: keeps the presence marker alive (classify_job.h), so that
 * the Streams detectors write jobs while a model runs somewhere.  A
 * failed write is tried again at the next step. */
static void announce(struct classify_driver *d)
{
    int64_t mono = time_mono_ms(), now = time_now_ms();
    cJSON *it;
    if (mono < d->presence_at)
        return;
    it = classify_presence_item(now + (int64_t)(scaled(CLASSIFY_PRESENCE_TTL_S) * 1000.0), now);
    if (it && store_put(d->store, it, NULL) == 0)
        d->presence_at = mono + (int64_t)(scaled(CLASSIFY_PRESENCE_REFRESH_S) * 1000.0);
    cJSON_Delete(it);
}

/* One step; timer: from the poll timer (stream mode: save the checkpoint
 * even when nothing else is written; jobs mode: read the pending jobs). */
static void step(struct classify_driver *d, bool timer)
{
    int rc;

    if (store_batch_active(d->store)) {
        arm_wake(d, 0.001);
        return;
    }
    if (d->backoff_until) {
        int64_t left = d->backoff_until - time_mono_ms();
        if (left > 0) {
            arm_wake(d, (double)left / 1000.0);
            return;
        }
        d->backoff_until = 0;
    }
    rc = d->jobs_mode ? finish_jobs(d) : flush(d, timer);
    if (rc) {
        store_trouble(d, "writing classifications", rc);
        arm_wake(d, scaled(d->backoff_s));
        return;
    }
    if (!d->jobs_mode) {
        read_stream(d);
    } else {
        announce(d);
        if (timer || d->more)
            poll_jobs(d);
    }
    if (d->backoff_until)
        arm_wake(d, scaled(d->backoff_s));
    else
        d->backoff_s = 0;
}

static void kick_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    step(container_of(w, struct classify_driver, kick), false);
}

static void wake_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    step(container_of(w, struct classify_driver, wake), false);
}

static void poll_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    step(container_of(w, struct classify_driver, poll), true);
}

/* ---- public API --------------------------------------------------------- */

struct classify_driver *classify_driver_new(struct store *s, struct ev_loop *loop,
                                            const struct classify_driver_config *cfg, char *err,
                                            size_t errlen)
{
    struct classify_driver *d = xcalloc(1, sizeof *d);
    int rc;

    d->store = s;
    d->loop = loop;
    d->max_inflight = cfg->max_inflight ? cfg->max_inflight : CLASSIFY_DRIVER_INFLIGHT;
    d->batch = cfg->batch ? cfg->batch : CLASSIFY_DRIVER_BATCH;
    snprintf(d->reader, sizeof d->reader, "%s", cfg->reader ? cfg->reader : CLASSIFY_DRIVER_READER);
    d->jobs_mode = cfg->jobs || !store_has_stream(s);
    if (d->jobs_mode) {
        /* long enough for the call and the writes after it, so that in
         * the normal path no other process asks the model again */
        double t = cfg->model.timeout_s > 0 ? cfg->model.timeout_s : CLASSIFY_MODEL_TIMEOUT_S;
        d->claim_s = scaled(2.0 * t + CLAIM_MARGIN_S);
        d->more = true; /* look at once */
    } else {
        rc = store_checkpoint_get(s, d->reader, &d->read_seq);
        if (rc) {
            snprintf(err, errlen, "classifier: cannot read the checkpoint: %s", err_str(rc));
            free(d);
            return NULL;
        }
    }
    d->durable_seq = d->read_seq;
    struct classify_model_config mc = cfg->model;
    if (!mc.max_inflight)
        mc.max_inflight = d->max_inflight;
    d->model = classify_model_new(loop, &mc, err, errlen);
    if (!d->model) {
        free(d);
        return NULL;
    }
    ev_init(&d->kick, kick_cb);
    ev_init(&d->wake, wake_cb);
    ev_set_priority(&d->kick, EV_MAXPRI);
    ev_set_priority(&d->wake, EV_MAXPRI);
    ev_timer_init(&d->poll, poll_cb, scaled(POLL_S), scaled(POLL_S));
    ev_set_priority(&d->poll, EV_MAXPRI);
    ev_timer_start(loop, &d->poll);
    ev_unref(loop); /* the poll alone does not keep the loop running */
    kick(d);
    return d;
}

void classify_driver_free(struct classify_driver *d)
{
    if (!d)
        return;
    ev_ref(d->loop);
    ev_timer_stop(d->loop, &d->poll);
    ev_timer_stop(d->loop, &d->kick);
    ev_timer_stop(d->loop, &d->wake);
    classify_model_free(d->model); /* no callbacks from here on */
    /* with nothing unfinished, what was read is done: keep it done.  (Jobs
     * mode: claims still held lapse and the jobs are taken again.) */
    if (!d->jobs_mode && !d->head && d->read_seq > d->durable_seq && !store_batch_active(d->store))
        store_checkpoint_set(d->store, d->reader, d->read_seq);
    while (d->head) {
        struct cd_job *j = d->head;
        d->head = j->next;
        job_free(j);
    }
    free(d);
}

void classify_driver_on_commit(void *arg, uint64_t last_seq)
{
    struct classify_driver *d = arg;
    /* jobs mode: the jobs come from the Streams detector, not from this
     * process's commits */
    if (!d->jobs_mode && last_seq > d->read_seq)
        kick(d);
}

void classify_driver_poke(struct classify_driver *d)
{
    if (d && d->jobs_mode) {
        d->more = true;
        kick(d);
    }
}

void classify_driver_get_stats(const struct classify_driver *d, struct classify_driver_stats *out)
{
    *out = d->st;
    out->checkpoint = d->read_seq;
}
