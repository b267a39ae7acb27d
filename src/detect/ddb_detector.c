/*
 * ddb_detector.c - the DynamoDB Streams detector loop (see
 * ddb_detector.h).
 *
 * Per shard the loop keeps its lease, its iterator and the checkpoint it
 * last committed.  Any failure of a batch drops the iterator, so the
 * next try starts again from the durable checkpoint; a batch whose
 * effects do not fit a transaction is retried with half the records
 * (doubling back after each success).  Errors back off per shard,
 * doubling from 0.2 s to 30 s (scaled).
 */
#include "detect/ddb_detector.h"

#include <ev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/keys.h"
#include "core/timeutil.h"
#include "detect/classify_job.h"
#include "detect/consumer.h"
#include "detect/ddb_jobs.h"
#include "detect/dlq.h"
#include "detect/wset.h"
#include "util/err.h"
#include "util/log.h"
#include "util/timescale.h"
#include "util/xalloc.h"

#define BACKOFF_BASE_S 0.2
/* Failed tries of a lone record before it is parked in the DLQ. */
#define PARK_AFTER    3
#define BACKOFF_MAX_S 30.0
/* Time one timer callback may spend on rounds before yielding. */
#define TICK_BUDGET_MS 50

struct shard_run {
    char *id;
    char *parent;
    bool listed;   /* in the last DescribeStream */
    bool finished; /* checkpoint says read to its end */
    bool held;
    struct lease lease;
    int64_t renewed_ms; /* wall time of the last acquire/renew */
    char *iter;
    bool has_seq;
    char seq[DDBS_SEQ_MAX + 1];
    size_t limit;      /* records per GetRecords (halved on ERR_TOOBIG) */
    unsigned failures; /* consecutive failed tries */
    bool careful;      /* the last try of a batch failed: its work items may be written */
    int64_t retry_at;  /* monotonic ms; 0 = now */
};

struct ddb_detector {
    struct ddb_detector_config cfg;
    struct ddb_http *own_h; /* the client we made (cfg.h NULL) */
    char worker[LEASE_OWNER_MAX + 1];
    char reader[DETECTOR_READER_MAX + 1];
    char *table;
    char *arn;
    int64_t lease_ms;
    struct shard_run *runs;
    size_t nruns, capruns;
    int64_t next_refresh; /* monotonic ms */
    /* the classifier's presence marker (classify_job.h), as last read */
    int64_t presence_until;    /* wall ms */
    int64_t presence_check_at; /* monotonic ms: read it again from then */
    struct ddb_detector_stats st;
    struct ev_loop *loop;
    ev_timer tick;
    bool started;
};

static int64_t wall_ms(const struct ddb_detector *d)
{
    return d->cfg.clock_ms ? d->cfg.clock_ms(d->cfg.clock_arg) : time_now_ms();
}

/* ---------- checkpoints ---------- */

int ddbd_checkpoint_get(struct store *s, const char *reader, const char *shard,
                        char seq[DDBS_SEQ_MAX + 1], bool *finished, bool *found)
{
    struct key pk;
    cJSON *item = NULL;
    const cJSON *v;
    int rc;

    seq[0] = '\0';
    *finished = *found = false;
    if (!key_checkpoint_pk(&pk, reader))
        return ERR_INVALID;
    rc = store_get(s, pk.s, shard, true, &item);
    if (rc == ERR_NOTFOUND)
        return 0;
    if (rc)
        return rc;
    *found = true;
    v = cJSON_GetObjectItemCaseSensitive(item, "seq");
    if (cJSON_IsString(v) && strlen(v->valuestring) <= DDBS_SEQ_MAX)
        memcpy(seq, v->valuestring, strlen(v->valuestring) + 1);
    *finished = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(item, "finished"));
    cJSON_Delete(item);
    return 0;
}

/* Adds the checkpoint, the lease check (both in the final group). */
static int add_checkpoint(struct wset *ws, const struct det_proc_cfg *pc,
                          const struct ddbd_target *t, const char *seq)
{
    struct key pk, lpk;
    char now[ISO_LEN + 1];
    cJSON *item;
    int rc;

    if (!key_checkpoint_pk(&pk, t->reader))
        return ERR_INVALID;
    time_iso(pc->now_ms, now);
    wset_unit(ws, WSET_LAST);
    item = cJSON_CreateObject();
    cJSON_AddStringToObject(item, "PK", pk.s);
    cJSON_AddStringToObject(item, "SK", t->shard);
    if (seq && *seq)
        cJSON_AddStringToObject(item, "seq", seq);
    cJSON_AddBoolToObject(item, "finished", t->finished);
    cJSON_AddStringToObject(item, "updatedAt", now);
    rc = wset_put(ws, item, NULL);
    if (!rc && t->lease) {
        struct store_cond cond;
        cJSON *val;
        if (!lease_key(t->lease->shard, &lpk))
            return ERR_INVALID;
        lease_check_cond(t->lease, &cond, &val);
        wset_check(ws, lpk.s, KEY_SK_META, &cond);
        cJSON_Delete(val);
    }
    return rc;
}

int ddbd_apply(const struct det_proc_cfg *pc, const struct ddbd_target *t,
               const struct ddbs_record *recs, size_t n, struct det_proc_counts *counts,
               size_t *ntx)
{
    struct det_proc *p = det_proc_new(pc);
    struct wset *ws = wset_new();
    struct wset_plan plan = {0};
    size_t done = 0, before = 0, work = 0;
    int rc = p ? 0 : ERR_NOMEM;

    for (size_t i = 0; !rc && i < n; i++)
        rc = det_proc_add_at(p, &recs[i].r, recs[i].pos);
    if (!rc)
        rc = det_proc_collect(p, ws);
    if (!rc && !pc->state_only) {
        before = wset_count(ws);
        rc = ddbd_jobs_collect(pc, recs, n, ws, t->careful);
        work = wset_count(ws) - before;
    }
    if (!rc)
        rc = add_checkpoint(ws, pc, t, n ? recs[n - 1].seq : t->prev_seq);
    if (!rc)
        rc = wset_plan(ws, STORE_TRANSACT_MAX, 0, &plan);
    for (size_t g = 0; !rc && g < plan.ngroups; g++) {
        size_t nw;
        const struct store_write *w = wset_plan_group(&plan, g, &nw);
        int failed = -1;

        if (t->fault)
            rc = t->fault(t->fault_arg, g, plan.ngroups);
        if (!rc)
            rc = store_transact(pc->s, w, nw, &failed);
        if (!rc)
            done++;
        else if (rc == ERR_CONDITION && failed >= 0)
            log_debug("ddb detector: write %d of group %zu failed its condition (%s/%s)", failed, g,
                      w[failed].item ? "put" : w[failed].pk, w[failed].sk ? w[failed].sk : "");
    }
    if (!rc && counts) {
        det_proc_get_counts(p, counts);
        counts->work = work;
    }
    if (ntx)
        *ntx = done;
    wset_plan_free(&plan);
    wset_free(ws);
    det_proc_free(p);
    return rc;
}

int ddbd_park(const struct det_proc_cfg *pc, const struct ddbd_target *t,
              const struct ddbs_record *rec, const char *why, unsigned attempts)
{
    struct wset *ws = wset_new();
    struct wset_plan plan = {0};
    cJSON *item = dlq_item_new(&rec->r, t->reader, why, attempts, pc->now_ms);
    int rc = item ? 0 : ERR_INVALID;

    if (item)
        cJSON_AddStringToObject(item, "streamPos", rec->pos);

    if (!rc) {
        wset_unit(ws, WSET_LAST);
        rc = wset_put(ws, item, NULL);
    }
    if (!rc)
        rc = add_checkpoint(ws, pc, t, rec->seq);
    if (!rc)
        rc = wset_plan(ws, STORE_TRANSACT_MAX, 0, &plan);
    if (!rc && plan.ngroups != 1)
        rc = ERR_INTERNAL;
    if (!rc) {
        size_t nw;
        const struct store_write *w = wset_plan_group(&plan, 0, &nw);
        rc = store_transact(pc->s, w, nw, NULL);
    }
    wset_plan_free(&plan);
    wset_free(ws);
    return rc;
}

/* ---------- shards ---------- */

static struct shard_run *run_find(struct ddb_detector *d, const char *id)
{
    for (size_t i = 0; i < d->nruns; i++)
        if (strcmp(d->runs[i].id, id) == 0)
            return &d->runs[i];
    return NULL;
}

static bool run_finished_cb(void *arg, const char *shard)
{
    struct shard_run *r = run_find(arg, shard);
    return r && r->finished;
}

static void run_drop(struct shard_run *r)
{
    r->held = false;
    free(r->iter);
    r->iter = NULL;
}

static void run_backoff(struct ddb_detector *d, struct shard_run *r)
{
    double s = BACKOFF_BASE_S;
    for (unsigned i = 0; i < r->failures && s < BACKOFF_MAX_S; i++)
        s *= 2;
    if (s > BACKOFF_MAX_S)
        s = BACKOFF_MAX_S;
    if (r->failures < 32)
        r->failures++;
    r->retry_at = time_mono_ms() + (int64_t)(scaled(s) * 1000.0);
    d->st.errors++;
}

/* Lists the shards, learns which are finished, takes free leases. */
static int refresh(struct ddb_detector *d)
{
    struct ddbs_shard *sh = NULL;
    size_t n = 0, held = 0, cap = 0;
    int rc;

    if (!d->arn) {
        rc = ddbs_stream_arn(d->cfg.h, d->table, &d->arn);
        if (rc)
            return rc;
    }
    rc = ddbs_describe(d->cfg.h, d->arn, &sh, &n);
    if (rc == ERR_NOTFOUND) {
        free(d->arn); /* the stream was replaced: look it up again */
        d->arn = NULL;
    }
    if (rc)
        return rc;
    ddbs_sort_shards(sh, n);
    for (size_t i = 0; i < d->nruns; i++)
        d->runs[i].listed = false;
    for (size_t i = 0; i < n; i++) {
        struct shard_run *r = run_find(d, sh[i].id);
        if (!r) {
            if (d->nruns == d->capruns) {
                d->capruns = d->capruns ? d->capruns * 2 : 8;
                d->runs = xrealloc(d->runs, d->capruns * sizeof(*d->runs));
            }
            r = &d->runs[d->nruns++];
            memset(r, 0, sizeof(*r));
            r->id = xstrdup(sh[i].id);
            r->parent = sh[i].parent ? xstrdup(sh[i].parent) : NULL;
            r->limit = d->cfg.batch_size;
        }
        r->listed = true;
    }
    /* Finished shards never reopen: read the checkpoints of the others. */
    for (size_t i = 0; !rc && i < n; i++) {
        struct shard_run *r = run_find(d, sh[i].id);
        char seq[DDBS_SEQ_MAX + 1];
        bool fin, found;
        if (r->finished || r->held)
            continue;
        rc = ddbd_checkpoint_get(d->cfg.s, d->reader, r->id, seq, &fin, &found);
        if (!rc && fin) {
            r->finished = true;
            d->st.shards_finished++;
        }
    }
    /* Our fair share: ceil(readable shards / live workers). */
    if (!rc) {
        int64_t now = wall_ms(d);
        size_t live = 1, active = 0;
        if (lease_worker_beat(d->cfg.s, d->worker, now, d->lease_ms) == 0 &&
            lease_workers_live(d->cfg.s, now, &live) == 0 && live == 0)
            live = 1;
        held = 0;
        for (size_t i = 0; i < n; i++) {
            struct shard_run *r = run_find(d, sh[i].id);
            if (r->held)
                held++;
            if (!r->finished && ddbs_shard_ready(sh, n, i, run_finished_cb, d))
                active++;
        }
        cap = lease_fair_share(active, live);
        d->st.workers_live = live;
        for (size_t i = d->nruns; held > cap && i-- > 0;) {
            struct shard_run *r = &d->runs[i];
            if (!r->held)
                continue;
            /* Above our share: give one lease back for a newcomer. */
            (void)lease_release(d->cfg.s, &r->lease);
            log_msg(LOG_INFO, NULL, "ddb detector %s: gave shard %s back (%zu workers)", d->worker,
                    r->id, live);
            run_drop(r);
            held--;
            break;
        }
    }
    /* Leases, parents first (sh is sorted). */
    for (size_t i = 0; !rc && i < n && held < cap; i++) {
        struct shard_run *r = run_find(d, sh[i].id);
        int64_t now = wall_ms(d);
        bool fin, found;
        int lrc;

        if (r->finished || r->held || !ddbs_shard_ready(sh, n, i, run_finished_cb, d))
            continue;
        lrc = lease_acquire(d->cfg.s, r->id, d->worker, now, d->lease_ms, &r->lease);
        if (lrc == ERR_CONFLICT)
            continue;
        if (lrc) {
            rc = lrc;
            break;
        }
        r->held = true;
        held++;
        r->renewed_ms = now;
        r->failures = 0;
        r->retry_at = 0;
        free(r->iter);
        r->iter = NULL;
        d->st.leases_taken++;
        rc = ddbd_checkpoint_get(d->cfg.s, d->reader, r->id, r->seq, &fin, &found);
        r->has_seq = !rc && r->seq[0];
        if (!rc && fin) {
            r->finished = true;
            (void)lease_release(d->cfg.s, &r->lease);
            run_drop(r);
            held--;
            continue;
        }
        log_msg(LOG_INFO, NULL, "ddb detector %s: leased shard %s (from %s)", d->worker, r->id,
                r->has_seq ? r->seq : "TRIM_HORIZON");
    }
    ddbs_shards_free(sh, n);
    return rc;
}

static void renew_leases(struct ddb_detector *d)
{
    int64_t now = wall_ms(d);

    for (size_t i = 0; i < d->nruns; i++) {
        struct shard_run *r = &d->runs[i];
        int rc;
        if (!r->held || now - r->renewed_ms < d->lease_ms / 3)
            continue;
        rc = lease_renew(d->cfg.s, &r->lease, now, d->lease_ms);
        if (!rc) {
            r->renewed_ms = now;
        } else if (rc == ERR_CONDITION || now >= r->lease.expires_ms) {
            log_warn("ddb detector %s: lost the lease of shard %s", d->worker, r->id);
            d->st.leases_lost++;
            run_drop(r);
        }
    }
}

static void account(struct ddb_detector *d, const struct det_proc_counts *c, size_t n, size_t ntx)
{
    d->st.batches++;
    d->st.records += n;
    d->st.scans += c->scans;
    d->st.events += c->events;
    d->st.replayed += c->replayed;
    d->st.parked += c->parked;
    d->st.alerts_created += c->alerts_created;
    d->st.alerts_updated += c->alerts_updated;
    d->st.opslog += c->opslog;
    d->st.work_items += c->work;
    d->st.transactions += ntx;
    /* wake this process's own takers: the items are committed */
    if (c->work && d->cfg.on_work)
        d->cfg.on_work(d->cfg.on_work_arg);
}

/* Errors that say "try later" (or "re-read"), not "this record is bad". */
static bool transient(int rc)
{
    return rc == ERR_THROTTLED || rc == ERR_UNAVAILABLE || rc == ERR_TIMEOUT ||
           rc == ERR_CONFLICT || rc == ERR_CONDITION || rc == ERR_IO;
}

static bool any_wanted(const struct ddbs_record *recs, size_t n, bool classify)
{
    for (size_t i = 0; i < n; i++)
        if (det_record_wanted(&recs[i].r) || ddbd_jobs_wanted(&recs[i], classify))
            return true;
    return false;
}

/* Whether to write classification jobs: this process runs a model, or
 * some process keeps the presence marker alive (read at most every
 * CLASSIFY_PRESENCE_CHECK_S; a failed read keeps what was known). */
static bool classify_jobs_on(struct ddb_detector *d)
{
    int64_t mono = time_mono_ms();
    if (d->cfg.classifier_local)
        return true;
    if (mono >= d->presence_check_at) {
        cJSON *it = NULL;
        int rc = store_get(d->cfg.s, KEY_PK_CLASSIFIER, KEY_SK_PRESENCE, false, &it);
        if (!rc)
            d->presence_until = classify_presence_until(it);
        else if (rc == ERR_NOTFOUND)
            d->presence_until = 0;
        cJSON_Delete(it);
        d->presence_check_at = mono + (int64_t)(scaled(CLASSIFY_PRESENCE_CHECK_S) * 1000.0);
    }
    return d->presence_until > wall_ms(d);
}

/* Reads and commits one batch of shard r.  *processed: records done. */
static int run_shard(struct ddb_detector *d, struct shard_run *r, size_t *processed)
{
    struct ddbs_record *recs = NULL;
    size_t n = 0, ntx = 0;
    char *next = NULL;
    struct det_proc_counts counts = {0};
    struct det_proc_cfg pc = {
        .s = d->cfg.s,
        .reader = d->reader,
        .velocity = {.min_total = d->cfg.velocity_min_total, .min_rate = d->cfg.velocity_min_rate},
        .now_ms = wall_ms(d),
        .fold_scan_counts = d->cfg.fold_scan_counts,
        .opslog_changes = d->cfg.opslog_changes,
        .classify_jobs = classify_jobs_on(d),
    };
    struct ddbd_target t = {.reader = d->reader,
                            .shard = r->id,
                            .lease = &r->lease,
                            .prev_seq = r->seq,
                            .careful = r->careful};
    int rc = 0;

    if (!r->iter) {
        rc = ddbs_iterator(d->cfg.h, d->arn, r->id, r->has_seq ? r->seq : NULL, &r->iter);
        if (rc)
            goto fail;
    }
    rc = ddbs_get_records(d->cfg.h, r->id, r->iter, (int)r->limit, &recs, &n, &next);
    if (rc == ERR_TIMEOUT) { /* expired iterator: a new one from the checkpoint */
        free(r->iter);
        r->iter = NULL;
        return 0;
    }
    if (rc == ERR_NOTFOUND && r->has_seq) {
        log_warn("ddb detector %s: shard %s trimmed past checkpoint %s; reading from the oldest "
                 "record",
                 d->worker, r->id, r->seq);
        r->has_seq = false;
        free(r->iter);
        r->iter = NULL;
        return 0;
    }
    if (rc)
        goto fail;
    if (n == 0 && next) {
        free(r->iter);
        r->iter = next;
        next = NULL;
        r->failures = 0;
        goto out;
    }
    t.finished = next == NULL;
    if (!t.finished && !any_wanted(recs, n, pc.classify_jobs)) {
        /* Nothing to check and no work to hand out (e.g. the detector's
         * own job items and checkpoints): move on without a checkpoint
         * write, which would itself be a stream record.  A restart
         * re-reads these and ignores them again. */
        counts.ignored = n;
    } else {
        rc = ddbd_apply(&pc, &t, recs, n, &counts, &ntx);
        /* a failed try may have committed its first groups (the work
         * items go first): the next try of this shard must not put them
         * back as new */
        r->careful = rc != 0;
    }
    if (rc && !transient(rc) && r->limit > 1) {
        /* Bisect: retry from the checkpoint with half the records, so
         * a bad record ends up alone. */
        r->limit = n > 1 ? n / 2 : 1;
        free(r->iter);
        r->iter = NULL;
        d->st.errors++;
        rc = 0;
        goto out;
    }
    if (rc && !transient(rc) && n == 1 && r->failures + 1 >= PARK_AFTER) {
        char why[128];
        snprintf(why, sizeof(why), "batch failed %u times: %s", r->failures + 1, err_str(rc));
        t.finished = false;
        rc = ddbd_park(&pc, &t, &recs[0], why, r->failures + 1);
        if (!rc) {
            log_warn("ddb detector %s: parked record %s of shard %s (%s/%s) in the DLQ: %s",
                     d->worker, recs[0].seq, r->id, recs[0].r.pk, recs[0].r.sk, why);
            d->st.parked++;
            counts.ignored = 1;
        }
    }
    if (rc)
        goto fail;
    account(d, &counts, n, ntx);
    if (n) {
        memcpy(r->seq, recs[n - 1].seq, strlen(recs[n - 1].seq) + 1);
        r->has_seq = true;
    }
    free(r->iter);
    r->iter = next;
    next = NULL;
    r->failures = 0;
    if (r->limit < d->cfg.batch_size)
        r->limit = r->limit * 2 > d->cfg.batch_size ? d->cfg.batch_size : r->limit * 2;
    *processed += n;
    if (t.finished) {
        log_msg(LOG_INFO, NULL, "ddb detector %s: shard %s finished", d->worker, r->id);
        r->finished = true;
        d->st.shards_finished++;
        (void)lease_release(d->cfg.s, &r->lease);
        run_drop(r);
        d->next_refresh = 0; /* its children may start now */
    }
    goto out;
fail:
    log_warn("ddb detector %s: shard %s after %s: %s", d->worker, r->id,
             r->has_seq ? r->seq : "TRIM_HORIZON", err_str(rc));
    free(r->iter);
    r->iter = NULL;
    run_backoff(d, r);
out:
    free(next);
    ddbs_records_free(recs, n);
    return rc;
}

int ddb_detector_step(struct ddb_detector *d, size_t *processed)
{
    int64_t mono = time_mono_ms();
    int rc = 0, first = 0;

    *processed = 0;
    if (mono >= d->next_refresh) {
        rc = refresh(d);
        d->next_refresh = mono + (rc ? d->lease_ms / 4 : d->lease_ms / 2);
        if (rc) {
            log_warn("ddb detector %s: listing shards of %s failed: %s", d->worker, d->table,
                     err_str(rc));
            d->st.errors++;
            first = rc;
        }
    }
    renew_leases(d);
    d->st.shards_owned = 0;
    for (size_t i = 0; i < d->nruns; i++) {
        struct shard_run *r = &d->runs[i];
        if (!r->held || r->finished)
            continue;
        d->st.shards_owned++;
        if (r->retry_at && time_mono_ms() < r->retry_at)
            continue;
        rc = run_shard(d, r, processed);
        if (rc && !first)
            first = rc;
    }
    return first;
}

/* ---------- lifecycle ---------- */

struct ddb_detector *ddb_detector_new(const struct ddb_detector_config *cfg, char *err,
                                      size_t errlen)
{
    struct ddb_detector *d;
    const char *reader = cfg->reader ? cfg->reader : DDBD_READER_DEFAULT;

    if (!cfg->s || !cfg->table || !*cfg->table) {
        snprintf(err, errlen, "the detector needs a store and a table");
        return NULL;
    }
    if (cfg->worker_id && !lease_owner_valid(cfg->worker_id)) {
        snprintf(err, errlen, "invalid worker id (1..64 of A-Z a-z 0-9 . _ : -)");
        return NULL;
    }
    if (!*reader || strlen(reader) > DETECTOR_READER_MAX || strchr(reader, '#')) {
        snprintf(err, errlen, "invalid checkpoint reader name");
        return NULL;
    }
    d = xcalloc(1, sizeof(*d));
    d->cfg = *cfg;
    if (!d->cfg.h) {
        struct ddb_http_config hc = {.endpoint = cfg->endpoint, .region = cfg->region};
        d->own_h = ddb_http_new(&hc, err, errlen);
        if (!d->own_h) {
            free(d);
            return NULL;
        }
        d->cfg.h = d->own_h;
    }
    d->cfg.endpoint = d->cfg.region = NULL; /* not kept */
    if (cfg->worker_id) {
        memcpy(d->worker, cfg->worker_id, strlen(cfg->worker_id) + 1);
    } else {
        char host[40] = "host";
        (void)gethostname(host, sizeof(host) - 1);
        host[sizeof(host) - 1] = '\0';
        for (char *c = host; *c; c++)
            if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                  (*c >= '0' && *c <= '9') || *c == '.' || *c == '-'))
                *c = '-';
        snprintf(d->worker, sizeof(d->worker), "%s-%ld", host, (long)getpid());
    }
    memcpy(d->reader, reader, strlen(reader) + 1);
    d->cfg.reader = d->reader;
    d->table = xstrdup(cfg->table);
    d->cfg.table = d->table;
    d->cfg.worker_id = d->worker;
    if (!(d->cfg.lease_s > 0))
        d->cfg.lease_s = LEASE_PERIOD_DEFAULT_S;
    if (d->cfg.batch_size == 0)
        d->cfg.batch_size = DETECTOR_BATCH_DEFAULT;
    if (d->cfg.batch_size > DDBS_LIMIT_MAX)
        d->cfg.batch_size = DDBS_LIMIT_MAX;
    if (!(d->cfg.poll_s > 0))
        d->cfg.poll_s = DDBD_POLL_DEFAULT_S;
    if (!(d->cfg.velocity_min_total > 0))
        d->cfg.velocity_min_total = DET_VELOCITY_MIN_TOTAL;
    if (!(d->cfg.velocity_min_rate > 0))
        d->cfg.velocity_min_rate = DET_VELOCITY_MIN_RATE;
    d->lease_ms = (int64_t)(scaled(d->cfg.lease_s) * 1000.0);
    if (d->lease_ms < 30)
        d->lease_ms = 30;
    return d;
}

void ddb_detector_free(struct ddb_detector *d)
{
    if (!d)
        return;
    ddb_detector_stop(d);
    (void)lease_worker_gone(d->cfg.s, d->worker);
    for (size_t i = 0; i < d->nruns; i++) {
        if (d->runs[i].held)
            (void)lease_release(d->cfg.s, &d->runs[i].lease);
        free(d->runs[i].id);
        free(d->runs[i].parent);
        free(d->runs[i].iter);
    }
    free(d->runs);
    free(d->arn);
    free(d->table);
    ddb_http_free(d->own_h);
    free(d);
}

void ddb_detector_get_stats(const struct ddb_detector *d, struct ddb_detector_stats *out)
{
    *out = d->st;
}

static void tick_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct ddb_detector *d = w->data;
    int64_t t0 = time_mono_ms();
    size_t total = 0, n = 0;

    (void)revents;
    do {
        n = 0;
        (void)ddb_detector_step(d, &n);
        total += n;
    } while (n > 0 && time_mono_ms() - t0 < TICK_BUDGET_MS);
    w->repeat = n > 0 ? 0.001 : scaled(d->cfg.poll_s);
    ev_timer_again(loop, w);
    (void)total;
}

int ddb_detector_start(struct ddb_detector *d, struct ev_loop *loop)
{
    if (d->started)
        return 0;
    d->loop = loop;
    ev_init(&d->tick, tick_cb);
    d->tick.data = d;
    d->tick.repeat = 0.001;
    ev_timer_again(loop, &d->tick);
    d->started = true;
    return 0;
}

void ddb_detector_stop(struct ddb_detector *d)
{
    if (!d->started)
        return;
    ev_timer_stop(d->loop, &d->tick);
    d->started = false;
}
