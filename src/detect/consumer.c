/*
 * consumer.c - the stream detector's batch loop (see consumer.h).
 *
 * One call of detector_run_once():
 *   1. reads the reader's checkpoint and looks at up to `span` records
 *      after it (span = the batch size, smaller while bisecting); the
 *      store returns only scan and event inserts (the rest, half of it
 *      the detector's own writes, is skipped unparsed and counted as
 *      ignored), and the checkpoint moves past everything looked at;
 *   2. opens a store batch, feeds the records to a det_proc (process.c),
 *      flushes its write set and the new checkpoint, and commits;
 *   3. on failure aborts the batch (nothing of it is written) and either
 *      retries the first half at once (bisection), or, when the batch is
 *      a single record, counts an attempt and backs off; after
 *      max_attempts the record is parked in the DLQ together with the
 *      checkpoint move, in one transaction.
 * While records up to the highest sequence of a failed batch remain, the
 * span grows back only by doubling, so a bad record is isolated in
 * O(log batch) tries and its neighbours are still processed in batches.
 */
#include "detect/consumer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/keys.h"
#include "core/timeutil.h"
#include "detect/dlq.h"
#include "detect/facts.h"
#include "detect/process.h"
#include "detect/state.h"
#include "util/err.h"
#include "util/log.h"
#include "util/timescale.h"
#include "util/xalloc.h"

/* Bisection steps of one call (2^12 > DETECTOR_BATCH_MAX). */
#define MAX_SPLITS 12

struct detector {
    struct store *s;
    struct detector_config cfg;
    char reader[DETECTOR_READER_MAX + 1];
    size_t span;            /* records to read next */
    uint64_t suspect_until; /* highest seq of a failed batch */
    unsigned attempts;      /* failed tries of the lone record at the head */
    unsigned failures;      /* consecutive failed calls (backoff exponent) */
    int64_t retry_at_ms;    /* monotonic time before which calls idle; 0 = none */
    bool running;           /* inside detector_run_once (re-entry guard) */
    detector_fault_fn fault;
    void *fault_arg;
    struct detector_stats st;
    /* Window-state cache (NULL when off or the store cannot tell other
     * writers apart) and what it was valid for: the checkpoint this
     * detector committed last, the store's data version inside that
     * batch, and the count of uncached state writes seen before it. */
    struct det_state_cache *cache;
    struct det_facts *facts; /* with the cache: META and CLAIM facts (facts.h) */
    bool cache_valid;
    uint64_t cache_cp, cache_dv, cache_gen;
    /* States mark (see "Deferred state writes" below): kept when the store
     * can tell other writers apart, i.e. wherever a cache can be used. */
    bool use_marks;
    char mark[DETECTOR_READER_MAX + sizeof(DETECTOR_STATES_MARK_SUFFIX)];
    unsigned since_flush; /* batches since the last one that wrote every state */
};

static int64_t wall_ms(const struct detector *d)
{
    return d->cfg.clock_ms ? d->cfg.clock_ms(d->cfg.clock_arg) : time_now_ms();
}

struct detector *detector_new(struct store *s, const struct detector_config *cfg)
{
    struct detector_config c = {0};
    struct detector *d;

    if (!s)
        return NULL;
    if (cfg)
        c = *cfg;
    if (!c.reader)
        c.reader = DETECTOR_READER_DEFAULT;
    if (!*c.reader || strlen(c.reader) > DETECTOR_READER_MAX)
        return NULL;
    if (c.batch_size == 0)
        c.batch_size = DETECTOR_BATCH_DEFAULT;
    if (c.batch_size > DETECTOR_BATCH_MAX)
        c.batch_size = DETECTOR_BATCH_MAX;
    if (!(c.batch_window_s >= 0))
        c.batch_window_s = 0;
    if (!(c.velocity_min_total > 0))
        c.velocity_min_total = DET_VELOCITY_MIN_TOTAL;
    if (!(c.velocity_min_rate > 0))
        c.velocity_min_rate = DET_VELOCITY_MIN_RATE;
    if (c.max_attempts == 0)
        c.max_attempts = DETECTOR_ATTEMPTS_DEFAULT;
    if (!(c.retry_base_s > 0))
        c.retry_base_s = DETECTOR_RETRY_BASE_S;
    if (!(c.retry_max_s > 0))
        c.retry_max_s = DETECTOR_RETRY_MAX_S;

    d = xcalloc(1, sizeof(*d));
    d->s = s;
    memcpy(d->reader, c.reader, strlen(c.reader) + 1);
    c.reader = d->reader;
    d->cfg = c;
    if (c.state_cache_max == 0)
        c.state_cache_max = DET_STATE_CACHE_DEFAULT;
    if (c.state_flush_batches == 0)
        c.state_flush_batches = DETECTOR_STATE_FLUSH_BATCHES;
    if (c.catchup_batch == 0)
        c.catchup_batch = DETECTOR_BATCH_MAX;
    if (c.catchup_batch > DETECTOR_BATCH_MAX)
        c.catchup_batch = DETECTOR_BATCH_MAX;
    d->cfg = c;
    d->span = c.batch_size;
    snprintf(d->mark, sizeof(d->mark), "%s%s", d->reader, DETECTOR_STATES_MARK_SUFFIX);
    {
        uint64_t v;
        d->use_marks = store_data_version(s, &v) == 0;
        if (d->use_marks && !c.no_state_cache) {
            d->cache = det_state_cache_new(c.state_cache_max);
            d->facts = det_facts_new(c.state_cache_max);
        }
    }
    return d;
}

void detector_free(struct detector *d)
{
    if (!d)
        return;
    det_state_cache_free(d->cache);
    det_facts_free(d->facts);
    free(d);
}

void detector_get_stats(const struct detector *d, struct detector_stats *out)
{
    *out = d->st;
    out->state_cache_size = d->cache ? det_state_cache_count(d->cache) : 0;
}

/* Empties the state cache (it may no longer match the stored items). */
static void cache_drop(struct detector *d)
{
    if (!d->cache)
        return;
    d->cache_valid = false;
    det_facts_clear(d->facts);
    if (det_state_cache_count(d->cache) == 0)
        return;
    det_state_cache_clear(d->cache);
    d->st.state_cache_drops++;
}

/* Inside the batch's transaction (so nobody else can write until it
 * ends): keeps the cache only when nothing but this detector can have
 * written window states since its last commit.  *dv and *gen receive
 * what the batch's commit makes the cache valid for. */
static int cache_check(struct detector *d, uint64_t after, uint64_t *dv, uint64_t *gen)
{
    int rc;

    *gen = det_proc_uncached_state_writes();
    rc = store_data_version(d->s, dv);
    if (rc)
        return rc;
    if (!d->cache_valid || after != d->cache_cp || *dv != d->cache_dv || *gen != d->cache_gen)
        cache_drop(d);
    return 0;
}

/*
 * Deferred state writes.  While the detector catches up (full batches),
 * the window states it changes stay in the cache as deferred writes
 * instead of being written by every batch; a "flush" batch writes all of
 * them at once together with the states mark: the checkpoint named
 * <reader>.states, holding (seq + 1) for "every stored window state
 * reflects exactly the records up to seq".  Flush batches: the first one
 * after the cache could not be trusted, every state_flush_batches-th, one
 * with half the cache deferred, and the one that drains the stream (so an
 * idle detector has written everything).  A missing mark means the
 * stored states are as current as the checkpoint (a database from before
 * marks, or a detector that never deferred).
 *
 * Whenever the cache cannot be trusted (a restart, a failed batch, another
 * writer) the stored states are as of the mark S, not the checkpoint C:
 * the batch first re-reads the records (S, C] and applies them to the
 * states only (no checks, nothing written: their alerts and counters were
 * committed with C), then flushes.  So a crash at any point loses no
 * state and applies no record twice.  A record parked in the DLQ is
 * parked together with a flush, so that (S, C] never holds one.
 */
static int mark_get(struct detector *d, bool *have, uint64_t *seq)
{
    uint64_t v = 0;
    int rc = store_checkpoint_get(d->s, d->mark, &v);
    if (rc)
        return rc;
    *have = v > 0;
    *seq = v ? v - 1 : 0;
    return 0;
}

static int mark_set(struct detector *d, uint64_t seq)
{
    return store_checkpoint_set(d->s, d->mark, seq + 1);
}

static const struct stream_filter wanted_filter;

/* Applies the wanted records after `from` up to `to` to the window states
 * in c (which starts with the stored states, as of `from`); writes
 * nothing.  Records trimmed from the stream meanwhile are lost to it, as
 * retention wins over checkpoints. */
static int warm_up(struct detector *d, struct det_state_cache *c, uint64_t from, uint64_t to)
{
    uint64_t pos = from;

    d->st.warmups++;
    while (pos < to) {
        struct det_proc_cfg pc = {
            .s = d->s,
            .reader = d->reader,
            .velocity = {.min_total = d->cfg.velocity_min_total,
                         .min_rate = d->cfg.velocity_min_rate},
            .now_ms = wall_ms(d),
            .cache = c,
            .facts = c == d->cache ? d->facts : NULL,
            .state_only = true,
        };
        struct stream_record *recs = NULL;
        size_t n = 0, examined = 0;
        size_t max = to - pos < DETECTOR_BATCH_MAX ? (size_t)(to - pos) : DETECTOR_BATCH_MAX;
        uint64_t last = pos;
        struct det_proc *p;
        int rc =
            store_stream_read_filtered(d->s, pos, max, &wanted_filter, &recs, &n, &last, &examined);
        if (rc)
            return rc;
        if (examined == 0) {
            log_warn("detector: stream records %llu..%llu are gone; window states rebuilt "
                     "without them",
                     (unsigned long long)pos + 1, (unsigned long long)to);
            return 0;
        }
        p = det_proc_new(&pc);
        if (!p) {
            store_stream_free(recs, n);
            return ERR_NOMEM;
        }
        for (size_t i = 0; !rc && i < n; i++)
            if (recs[i].seq <= to)
                rc = det_proc_add(p, &recs[i]);
        if (!rc)
            det_proc_cache_commit(p);
        det_proc_free(p);
        store_stream_free(recs, n);
        if (rc)
            return rc;
        d->st.warmup_records += examined;
        pos = last < to ? last : to;
    }
    return 0;
}

struct dirty_writer {
    struct detector *d;
    const struct det_proc *skip; /* states it changed are written by it */
};

static int write_dirty_one(void *arg, const char *pid, const struct det_state *st)
{
    struct dirty_writer *w = arg;
    cJSON *it;
    int rc;

    if (w->skip && det_proc_state_changed(w->skip, pid))
        return 0;
    it = det_state_to_item(st, pid);
    rc = it ? store_put(w->d->s, it, NULL) : ERR_INVALID;
    cJSON_Delete(it);
    return rc;
}

/* Writes every deferred state of c except those p (may be NULL) changed. */
static int write_dirty(struct detector *d, struct det_state_cache *c, const struct det_proc *p)
{
    struct dirty_writer w = {.d = d, .skip = p};
    return det_state_cache_dirty(c) ? det_state_cache_each_dirty(c, write_dirty_one, &w) : 0;
}

/* Inside an open batch, with the cache dropped: makes the stored states
 * current through `upto` (rebuilt from the mark) and sets the mark to
 * `mark_to`. */
static int settle_states(struct detector *d, uint64_t upto, uint64_t mark_to)
{
    bool have = false;
    uint64_t from = 0;
    int rc;

    if (!d->use_marks)
        return 0;
    rc = mark_get(d, &have, &from);
    if (!rc && have && from < upto) {
        struct det_state_cache *c = det_state_cache_new(0);
        rc = warm_up(d, c, from, upto);
        if (!rc)
            rc = write_dirty(d, c, NULL);
        det_state_cache_free(c);
    }
    if (!rc)
        rc = mark_set(d, mark_to);
    return rc;
}

bool detector_state_peek(const struct detector *d, const char *product_id, struct det_state *out)
{
    if (!d->cache || !d->cache_valid)
        return false;
    return det_state_cache_peek(d->cache, product_id, out);
}

int detector_write_deferred(struct detector *d)
{
    int rc;
    if (!d->cache || !d->cache_valid || det_state_cache_dirty(d->cache) == 0)
        return 0;
    rc = write_dirty(d, d->cache, NULL);
    if (!rc)
        rc = mark_set(d, d->cache_cp);
    /* Whether these writes commit is the caller's batch's business: the
     * next detector batch checks the mark instead of trusting the cache. */
    d->cache_valid = false;
    return rc;
}

void detector_set_fault_hook(struct detector *d, detector_fault_fn fn, void *arg)
{
    d->fault = fn;
    d->fault_arg = arg;
}

int64_t detector_retry_in_ms(const struct detector *d)
{
    int64_t now = time_mono_ms();
    return d->retry_at_ms > now ? d->retry_at_ms - now : 0;
}

/* Errors that say "try later", not "this record is bad". */
static bool transient(int rc)
{
    return rc == ERR_THROTTLED || rc == ERR_UNAVAILABLE || rc == ERR_TIMEOUT || rc == ERR_CONFLICT;
}

/* Schedules the next try after a failed call: base * 2^(failures-1),
 * capped, scaled by GENUPROOF_TIME_SCALE. */
static void backoff(struct detector *d)
{
    double s = d->cfg.retry_base_s;
    unsigned shift = d->failures > 0 ? d->failures - 1 : 0;

    if (d->failures < 64)
        d->failures++;
    for (unsigned i = 0; i < shift && s < d->cfg.retry_max_s; i++)
        s *= 2;
    if (s > d->cfg.retry_max_s)
        s = d->cfg.retry_max_s;
    d->retry_at_ms = time_mono_ms() + (int64_t)(scaled(s) * 1000.0 + 0.5);
}

/* The records det_record_wanted() accepts, as a stream filter: the
 * store skips everything else (the detector's own alerts, ops-log entries,
 * DETSTATE items ...) without parsing it.  Skipped records count as
 * ignored; the checkpoint moves past them with the batch. */
static const char *const wanted_sk[] = {KEY_PFX_SCAN, KEY_PFX_EVENT};
/* ... and every write of a product's CLAIM item, so that the claims the
 * detector remembers (facts.h) are read again after one. */
static const char *const claim_sk[] = {KEY_SK_CLAIM};
static const struct stream_filter claim_filter = {
    .pk_prefix = KEY_PFX_PRODUCT,
    .sk_prefixes = claim_sk,
    .nsk = 1,
};
static const struct stream_filter wanted_filter = {
    .kinds = STREAM_KIND_BIT(STORE_INSERT),
    .pk_prefix = KEY_PFX_PRODUCT,
    .sk_prefixes = wanted_sk,
    .nsk = sizeof(wanted_sk) / sizeof(wanted_sk[0]),
    .or_else = &claim_filter,
};

/* Runs one batch over the records after..last (of which recs[0..n) are
 * the wanted ones; n may be 0) in a store batch.  On success fills
 * *counts and returns 0; on error nothing is written. */
static int try_batch(struct detector *d, uint64_t after, uint64_t last,
                     const struct stream_record *recs, size_t n, bool drains,
                     struct det_proc_counts *counts)
{
    struct det_proc_cfg pc = {
        .s = d->s,
        .reader = d->reader,
        .velocity = {.min_total = d->cfg.velocity_min_total, .min_rate = d->cfg.velocity_min_rate},
        .now_ms = wall_ms(d),
        .opslog_changes = d->cfg.opslog_changes,
    };
    struct det_proc *p = NULL;
    struct det_state_cache *c = d->cache, *tmp = NULL;
    uint64_t dv = 0, gen = 0;
    size_t dirty_before = 0;
    bool defer = false;
    int rc = store_batch_begin(d->s);

    if (rc) {
        cache_drop(d);
        return rc;
    }
    if (d->cache)
        rc = cache_check(d, after, &dv, &gen);
    if (!rc && !d->cache_valid && d->use_marks) {
        /* Stored states may be behind the checkpoint: rebuild them. */
        bool have = false;
        uint64_t from = 0;
        rc = mark_get(d, &have, &from);
        if (!rc && have && from < after) {
            if (!c)
                c = tmp = det_state_cache_new(0);
            rc = warm_up(d, c, from, after);
        }
    }
    if (!rc && d->cache && d->cache_valid && !d->cfg.no_defer_states && !drains &&
        d->since_flush + 1 < d->cfg.state_flush_batches &&
        det_state_cache_dirty(d->cache) + n <= d->cfg.state_cache_max / 2)
        defer = true; /* (so at least half the cache stays clean: no growth) */
    pc.cache = c;
    pc.facts = d->cache ? d->facts : NULL;
    pc.defer_states = defer;
    if (c)
        dirty_before = det_state_cache_dirty(c);
    if (!rc) {
        p = det_proc_new(&pc);
        if (!p)
            rc = ERR_NOMEM;
    }
    for (size_t i = 0; !rc && i < n; i++)
        rc = det_proc_add(p, &recs[i]);
    if (!rc)
        rc = det_proc_flush(p, last);
    if (!rc && !defer && c)
        rc = write_dirty(d, c, p);
    if (!rc && !defer && d->use_marks)
        rc = mark_set(d, last);
    if (!rc && d->fault)
        rc = d->fault(d->fault_arg, after + 1, last);
    if (!rc)
        rc = store_batch_commit(d->s);
    else
        store_batch_abort(d->s);
    if (!rc) {
        det_proc_get_counts(p, counts);
        if (c) {
            det_proc_cache_commit(p);
            if (defer) {
                size_t now = det_state_cache_dirty(c);
                d->st.states_deferred += now > dirty_before ? now - dirty_before : 0;
                d->since_flush++;
            } else {
                det_state_cache_mark_clean(c);
                d->since_flush = 0;
                if (d->use_marks)
                    d->st.state_flushes++;
            }
        }
        if (d->cache) {
            d->cache_valid = true;
            d->cache_cp = last;
            d->cache_dv = dv;
            d->cache_gen = gen;
        }
    } else {
        cache_drop(d);
    }
    det_proc_free(p);
    det_state_cache_free(tmp);
    return rc;
}

/* Parks record r (which failed with err; the checkpoint is `after`) and
 * moves the checkpoint past it, atomically, with the window states made
 * current first (so the states mark never lies before a parked record). */
static int park(struct detector *d, uint64_t after, const struct stream_record *r, int err)
{
    char why[128];
    cJSON *item;
    int rc;

    snprintf(why, sizeof(why), "batch failed %u times: %s", d->attempts, err_str(err));
    item = dlq_item_new(r, d->reader, why, d->attempts, wall_ms(d));
    if (!item)
        return ERR_INVALID;
    rc = store_batch_begin(d->s);
    if (!rc) {
        rc = settle_states(d, after, r->seq);
        if (!rc)
            rc = store_put(d->s, item, NULL);
        if (!rc)
            rc = store_checkpoint_set(d->s, d->reader, r->seq);
        if (!rc)
            rc = store_batch_commit(d->s);
        else
            store_batch_abort(d->s);
    }
    cJSON_Delete(item);
    if (!rc)
        log_warn("detector: parked stream record %llu (%s/%s) in the DLQ: %s",
                 (unsigned long long)r->seq, r->pk, r->sk, why);
    return rc;
}

/* Counts a committed batch of `examined` records (the n the filter let
 * through, plus the skipped ones, which count as ignored) up to last. */
static void account(struct detector *d, uint64_t last, size_t n, size_t examined,
                    const struct det_proc_counts *c, int64_t t0_us)
{
    d->st.batches++;
    d->st.records += examined;
    d->st.scans += c->scans;
    d->st.events += c->events;
    d->st.ignored += c->ignored + (examined - n);
    d->st.alerts_created += c->alerts_created;
    d->st.alerts_updated += c->alerts_updated;
    d->st.opslog += c->opslog;
    d->st.dlq_parked += c->parked;
    d->st.checkpoint = last;
    d->st.last_batch_us = (uint64_t)(time_mono_us() - t0_us);
}

/* Parks the lone record after..last (already read as recs[0..n) when it
 * was wanted; a skipped one is read again, unfiltered). */
static int park_lone(struct detector *d, uint64_t after, const struct stream_record *recs, size_t n,
                     int err)
{
    struct stream_record *one = NULL;
    size_t k = 0;
    int rc;

    cache_drop(d); /* park() writes states past the cache's knowledge */
    if (n == 1)
        return park(d, after, &recs[0], err);
    rc = store_stream_read(d->s, after, 1, &one, &k);
    if (!rc)
        rc = k == 1 ? park(d, after, &one[0], err) : ERR_CONFLICT;
    store_stream_free(one, k);
    return rc;
}

static int run_once(struct detector *d, size_t *processed)
{
    struct stream_record *recs = NULL;
    size_t n = 0, examined = 0;
    uint64_t cp = 0, last = 0;
    int rc;

    if (d->retry_at_ms && time_mono_ms() < d->retry_at_ms)
        return 0;
    d->retry_at_ms = 0;
    rc = store_checkpoint_get(d->s, d->reader, &cp);
    if (rc)
        goto fail;
    for (int step = 0; step <= MAX_SPLITS; step++) {
        struct det_proc_counts counts = {0};
        int64_t t0 = time_mono_us();

        /* Far behind (a replay, a restart behind a busy stream): bigger
         * batches, and the store may favour throughput over commit
         * latency (store_set_bulk).  Not for a batch that is merely full:
         * a live server's batches often are, and its requests share the
         * store's commits. */
        size_t want = d->span;
        bool far = false;
        if (d->span == d->cfg.batch_size) {
            uint64_t head = 0;
            far = store_stream_head(d->s, &head) == 0 && head > cp &&
                  head - cp >= DETECTOR_BULK_LAG_BATCHES * (uint64_t)d->cfg.batch_size;
            if (far && d->cfg.catchup_batch > want)
                want = d->cfg.catchup_batch;
        }
        rc =
            store_stream_read_filtered(d->s, cp, want, &wanted_filter, &recs, &n, &last, &examined);
        if (rc) {
            d->st.errors++;
            goto fail;
        }
        if (examined == 0) {
            d->failures = 0;
            store_set_bulk(d->s, false);
            /* Idle: write what the last (full) batches deferred. */
            if (d->cache && d->cache_valid && det_state_cache_dirty(d->cache))
                rc = try_batch(d, cp, cp, NULL, 0, true, &counts);
            if (rc) {
                d->st.errors++;
                goto fail;
            }
            goto out;
        }
        if (d->cfg.batch_window_s > 0 && n > 0 && examined < d->cfg.batch_size &&
            d->span == d->cfg.batch_size) {
            /* Record times come from the store's (wall) clock.  Skipped
             * records need no waiting: only the oldest wanted one counts. */
            int64_t age = time_now_ms() - recs[0].ts_ms;
            int64_t window = (int64_t)(scaled(d->cfg.batch_window_s) * 1000.0);
            if (age >= 0 && age < window) {
                d->retry_at_ms = time_mono_ms() + (window - age);
                goto out;
            }
        }
        store_set_bulk(d->s, far && examined >= want);
        rc = try_batch(d, cp, last, recs, n, examined < want, &counts);
        if (!rc) {
            account(d, last, n, examined, &counts, t0);
            d->attempts = 0;
            d->failures = 0;
            if (last >= d->suspect_until)
                d->span = d->cfg.batch_size;
            else if (d->span < d->cfg.batch_size)
                d->span = d->span * 2 > d->cfg.batch_size ? d->cfg.batch_size : d->span * 2;
            *processed = examined;
            goto out;
        }
        d->st.errors++;
        if (transient(rc))
            goto fail;
        if (examined > 1) {
            /* Bisect: retry the first half now. */
            if (last > d->suspect_until)
                d->suspect_until = last;
            d->span = examined / 2;
            d->attempts = 0;
            d->st.bisections++;
            store_stream_free(recs, n);
            recs = NULL;
            n = 0;
            continue;
        }
        d->attempts++;
        if (d->attempts >= d->cfg.max_attempts) {
            rc = park_lone(d, cp, recs, n, rc);
            if (!rc) {
                d->st.dlq_parked++;
                d->st.records++;
                d->st.checkpoint = last;
                d->attempts = 0;
                d->failures = 0;
                *processed = 1;
                goto out;
            }
        }
        goto fail;
    }
fail:
    log_warn("detector: batch after %llu failed: %s", (unsigned long long)cp, err_str(rc));
    backoff(d);
out:
    store_stream_free(recs, n);
    return rc;
}

int detector_run_once(struct detector *d, size_t *processed)
{
    int rc;

    *processed = 0;
    /* The detector needs its own store batch; a commit callback that
     * calls back in here while our batch commits is refused too. */
    if (d->running || store_batch_active(d->s))
        return ERR_CONFLICT;
    d->running = true;
    rc = run_once(d, processed);
    d->running = false;
    return rc;
}
