/*
 * classify_driver.c - the model classifier's stream reader
 * (classify_driver.h).
 *
 * Jobs are kept in a FIFO in stream order.  Reading stops while the
 * maximum number of calls is in flight (or the FIFO is long); a finished
 * call only marks its job done.  Each step then writes, in one store
 * batch, the results of the done jobs at the head of the FIFO together
 * with the checkpoint just before the first job still running, so the
 * checkpoint never passes a record whose call has not finished.  When no
 * result needs writing the checkpoint only moves in memory and is saved
 * by the next write or the 1 s (scaled) poll: re-reading records that
 * produced nothing costs nothing.
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

#include "core/alert.h"
#include "core/brand.h"
#include "core/keys.h"
#include "core/opslog.h"
#include "core/timeutil.h"
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
#define FLAGS_MAX         16
#define ALERT_ID_MAX      128
#define TYPE_MAX          64

struct cd_job {
    struct classify_driver *d;
    uint64_t seq;
    bool in_flight, done, write;
    char *pk, *sk;
    char alert_id[ALERT_ID_MAX + 1];
    char brand_id[BRAND_ID_MAX + 1];
    char *product_id; /* may be NULL */
    char type[TYPE_MAX + 1];
    char timestamp[ISO_LEN + 1];
    cJSON *flags; /* array of strings (owned) */
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
    char reader[64];
    ev_timer kick, wake, poll;
    struct cd_job *head, *tail;
    size_t njobs, inflight;
    uint64_t read_seq, durable_seq;
    int64_t backoff_until;
    double backoff_s;
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
    free(j->pk);
    free(j->sk);
    free(j->product_id);
    free(j->narrative);
    cJSON_Delete(j->flags);
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
        log_msg(LOG_DEBUG, NULL, "classifier: %s on alert %s: rules kept", r->error, j->alert_id);
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

/* True for an alert the detector (re)classified by rules. */
static bool is_candidate(const struct stream_record *r)
{
    const cJSON *img = r->image, *ai;
    const char *src, *model;

    if (!img || (r->kind != STORE_INSERT && r->kind != STORE_MODIFY) || !r->pk || !r->sk ||
        !key_after(r->pk, KEY_PFX_THREAT) || !key_after(r->sk, KEY_PFX_ALERT))
        return false;
    src = str_attr(img, "source");
    ai = cJSON_GetObjectItemCaseSensitive(img, "aiAnalysis");
    model = str_attr(ai, "model");
    return src && !strcmp(src, "detector") && model && !strcmp(model, CLASSIFY_MODEL_RULES) &&
           !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(img, "resolved"));
}

static bool in_flight_for(const struct classify_driver *d, const char *alert_id)
{
    for (const struct cd_job *j = d->head; j; j = j->next)
        if (j->in_flight && !strcmp(j->alert_id, alert_id))
            return true;
    return false;
}

/* Builds a job for record r and starts its call.  Returns 0 (job queued,
 * possibly already done when the call could not start), 1 when the
 * record is skipped, or ERR_THROTTLED (nothing queued: read it later). */
static int start_job(struct classify_driver *d, const struct stream_record *r)
{
    const cJSON *img = r->image, *fl, *f;
    const char *id = str_attr(img, "alertId"), *brand = str_attr(img, "brandId");
    const char *type = str_attr(img, "type"), *pid = str_attr(img, "productId");
    const char *ts = str_attr(img, "lastSeen");
    const char *flags[FLAGS_MAX];
    size_t nflags = 0;
    struct cd_job *j;
    int rc;

    if (!ts || !time_is_iso(ts))
        ts = str_attr(img, "timestamp");
    if (!id || strlen(id) > ALERT_ID_MAX || !brand || !brand_id_ok(brand) || !type ||
        strlen(type) > TYPE_MAX || !ts || !time_is_iso(ts))
        return 1;
    if (in_flight_for(d, id)) {
        d->st.folded++;
        return 1;
    }
    j = xcalloc(1, sizeof *j);
    j->d = d;
    j->seq = r->seq;
    j->pk = xstrdup(r->pk);
    j->sk = xstrdup(r->sk);
    snprintf(j->alert_id, sizeof j->alert_id, "%s", id);
    snprintf(j->brand_id, sizeof j->brand_id, "%s", brand);
    j->product_id = pid ? xstrdup(pid) : NULL;
    snprintf(j->type, sizeof j->type, "%s", type);
    snprintf(j->timestamp, sizeof j->timestamp, "%s", ts);
    j->flags = cJSON_CreateArray();
    fl = cJSON_GetObjectItemCaseSensitive(img, "anomalyFlags");
    cJSON_ArrayForEach(f, fl)
    {
        if (cJSON_IsString(f) && nflags < FLAGS_MAX && strlen(f->valuestring) <= TYPE_MAX) {
            cJSON_AddItemToArray(j->flags, cJSON_CreateString(f->valuestring));
            flags[nflags++] = f->valuestring;
        }
    }
    struct classify_model_input in = {.type = type,
                                      .details = str_attr(img, "details"),
                                      .rule_severity = str_attr(img, "severity"),
                                      .flags = flags,
                                      .nflags = nflags,
                                      .country = str_attr(img, "country")};
    rc = classify_model_request(d->model, &in, model_cb, j);
    if (rc == ERR_THROTTLED) {
        job_free(j);
        return rc;
    }
    if (rc) {
        j->done = true; /* could not ask: the rules stand */
        d->st.fallbacks++;
    } else {
        j->in_flight = true;
        d->inflight++;
        d->st.requests++;
    }
    if (d->tail)
        d->tail->next = j;
    else
        d->head = j;
    d->tail = j;
    d->njobs++;
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
            if (is_candidate(&recs[i]) && start_job(d, &recs[i]) == ERR_THROTTLED)
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

static int write_result(struct classify_driver *d, const struct cd_job *j)
{
    cJSON *sev = cJSON_CreateString(j->severity), *det = cJSON_CreateString(j->narrative);
    const struct store_action acts[3] = {
        {.kind = STORE_ACT_SET, .attr = "severity", .value = sev},
        {.kind = STORE_ACT_SET, .attr = "details", .value = det},
        {.kind = STORE_ACT_SET, .attr = "aiAnalysis", .value = j->analysis},
    };
    const struct store_cond exists = {.kind = STORE_COND_EXISTS};
    const char *flags[FLAGS_MAX];
    size_t nflags = 0;
    const cJSON *f;
    char opid[32];
    cJSON *log;
    bool chain = !strcmp(j->type, "chain_gap") || !strcmp(j->type, "chain_break");
    int rc;

    rc = store_update(d->store, j->pk, j->sk, acts, 3, &exists, NULL);
    cJSON_Delete(sev);
    cJSON_Delete(det);
    if (rc == ERR_CONDITION)
        return 0; /* the alert is gone */
    if (rc)
        return rc;
    cJSON_ArrayForEach(f, j->flags)
    {
        flags[nflags++] = f->valuestring;
    }
    /* keyed by the stream record: a replay overwrites, never duplicates */
    snprintf(opid, sizeof opid, "m%" PRIu64, j->seq);
    log = opslog_item_new(&(struct opslog_fields){
        .id = opid,
        .agent = chain ? "chain_analyzer" : "threat_detector",
        .trigger = chain ? "chain_event" : "scan_event",
        .product_id = j->product_id,
        .brand_id = j->brand_id,
        .flags = flags,
        .nflags = nflags,
        .model = j->model,
        .ai_severity = j->severity_upper,
        .ai_attack_vector = j->vector,
        .has_confidence = true,
        .ai_confidence = j->confidence,
        .latency_ms = j->latency_ms,
        .timestamp = j->timestamp,
    });
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

/* ---- steps and timers --------------------------------------------------- */

static void arm_wake(struct classify_driver *d, double delay)
{
    ev_timer_stop(d->loop, &d->wake);
    ev_timer_set(&d->wake, delay, 0.);
    ev_timer_start(d->loop, &d->wake);
}

static void step(struct classify_driver *d, bool force_checkpoint)
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
    rc = flush(d, force_checkpoint);
    if (rc) {
        store_trouble(d, "writing classifications", rc);
        arm_wake(d, scaled(d->backoff_s));
        return;
    }
    read_stream(d);
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
    rc = store_checkpoint_get(s, d->reader, &d->read_seq);
    if (rc) {
        snprintf(err, errlen, "classifier: cannot read the checkpoint: %s", err_str(rc));
        free(d);
        return NULL;
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
    /* with nothing unfinished, what was read is done: keep it done */
    if (!d->head && d->read_seq > d->durable_seq && !store_batch_active(d->store))
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
    if (last_seq > d->read_seq)
        kick(d);
}

void classify_driver_get_stats(const struct classify_driver *d, struct classify_driver_stats *out)
{
    *out = d->st;
    out->checkpoint = d->read_seq;
}
