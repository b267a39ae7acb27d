/*
 * test_detect_cache.c - the detector's window-state cache (detect/state.h)
 * and how the consumer keeps it consistent with the stored DETSTATE items:
 *   - lookups, replacement, least-recently-used eviction, clearing, and
 *     that only the used part of a state is kept (and given back intact);
 *   - a detector with a cache (large, or so small that it evicts all the
 *     time) writes exactly the states and alerts of one without;
 *   - after a failed batch, a write by another connection, or a window
 *     state written in this process without the cache (a DLQ replay), the
 *     next batch reads the stored state instead of trusting the cache.
 */
#include "test_detect_fixture.h"

#include "detect/process.h"
#include "detect/state.h"

#define T0 "2026-06-20T08:00:00.000Z"

/* ---------- the cache itself ---------- */

static void state_with(struct det_state *st, uint64_t scans, size_t ncountries)
{
    det_state_init(st);
    st->scans = scans;
    for (size_t i = 0; i < 5; i++)
        det_state_add_scan(st, 1000 + (int64_t)i, NULL);
    st->scans = scans;
    for (size_t i = 0; i < ncountries; i++) {
        snprintf(st->countries[i].code, sizeof(st->countries[i].code), "C%zu", i);
        st->countries[i].last_ms = 5000 + (int64_t)i;
    }
    st->ncountries = ncountries;
    st->has_event = true;
    st->last_event.seq = (uint32_t)scans;
    snprintf(st->last_event.actor, sizeof(st->last_event.actor), "actor-%llu",
             (unsigned long long)scans);
}

static void t_cache_get_put_replace(void **state)
{
    (void)state;
    struct det_state_cache *c = det_state_cache_new(4);
    struct det_state a, b, out;

    state_with(&a, 7, 3);
    assert_false(det_state_cache_get(c, "p1", &out));
    det_state_cache_put(c, "p1", &a);
    assert_int_equal(det_state_cache_count(c), 1);
    memset(&out, 0x5a, sizeof(out));
    assert_true(det_state_cache_get(c, "p1", &out));
    assert_memory_equal(&out, &a, sizeof(a)); /* unused countries zeroed on both */
    assert_false(det_state_cache_get(c, "p2", &out));

    /* Replacing with more countries, then fewer. */
    state_with(&b, 9, DET_COUNTRIES_MAX);
    det_state_cache_put(c, "p1", &b);
    assert_true(det_state_cache_get(c, "p1", &out));
    assert_memory_equal(&out, &b, sizeof(b));
    state_with(&b, 10, 0);
    det_state_cache_put(c, "p1", &b);
    assert_true(det_state_cache_get(c, "p1", &out));
    assert_int_equal(out.scans, 10);
    assert_int_equal(out.ncountries, 0);
    assert_string_equal(out.last_event.actor, "actor-10");
    assert_int_equal(det_state_cache_count(c), 1);

    det_state_cache_clear(c);
    assert_int_equal(det_state_cache_count(c), 0);
    assert_false(det_state_cache_get(c, "p1", &out));
    det_state_cache_put(c, "p1", &a); /* usable after clearing */
    assert_true(det_state_cache_get(c, "p1", &out));
    assert_int_equal(out.scans, 7);
    det_state_cache_free(c);
}

static void t_cache_evicts_least_recently_used(void **state)
{
    (void)state;
    struct det_state_cache *c = det_state_cache_new(3);
    struct det_state st, out;
    char pid[16];

    for (int i = 1; i <= 3; i++) {
        snprintf(pid, sizeof(pid), "p%d", i);
        state_with(&st, (uint64_t)i, (size_t)i);
        det_state_cache_put(c, pid, &st);
    }
    assert_true(det_state_cache_get(c, "p1", &out)); /* p2 is now the oldest */
    state_with(&st, 4, 1);
    det_state_cache_put(c, "p4", &st);
    assert_int_equal(det_state_cache_count(c), 3);
    assert_false(det_state_cache_get(c, "p2", &out));
    assert_true(det_state_cache_get(c, "p1", &out));
    assert_int_equal(out.scans, 1);
    assert_true(det_state_cache_get(c, "p3", &out));
    assert_int_equal(out.scans, 3);
    assert_int_equal(out.ncountries, 3);
    assert_string_equal(out.countries[2].code, "C2");
    assert_true(det_state_cache_get(c, "p4", &out));
    assert_int_equal(out.scans, 4);

    /* Many more keys than room (and than buckets): always the last 3. */
    for (int i = 0; i < 200; i++) {
        snprintf(pid, sizeof(pid), "k%d", i);
        state_with(&st, (uint64_t)(100 + i), (size_t)(i % 4));
        det_state_cache_put(c, pid, &st);
    }
    assert_int_equal(det_state_cache_count(c), 3);
    for (int i = 0; i < 200; i++) {
        snprintf(pid, sizeof(pid), "k%d", i);
        bool hit = det_state_cache_get(c, pid, &out);
        assert_true(hit == (i >= 197));
        if (hit) {
            assert_int_equal(out.scans, 100 + i);
            assert_int_equal(out.ncountries, (size_t)(i % 4));
        }
    }
    det_state_cache_free(c);
}

/* The table grows with its entries: all of them stay reachable. */
static void t_cache_grows(void **state)
{
    (void)state;
    struct det_state_cache *c = det_state_cache_new(1000);
    struct det_state st, out;
    char pid[16];

    for (int i = 0; i < 700; i++) {
        snprintf(pid, sizeof(pid), "g%d", i);
        state_with(&st, (uint64_t)i, (size_t)(i % 3));
        det_state_cache_put(c, pid, &st);
    }
    assert_int_equal(det_state_cache_count(c), 700);
    for (int i = 699; i >= 0; i--) {
        snprintf(pid, sizeof(pid), "g%d", i);
        assert_true(det_state_cache_get(c, pid, &out));
        assert_int_equal(out.scans, i);
        assert_int_equal(out.ncountries, (size_t)(i % 3));
    }
    det_state_cache_clear(c);
    assert_false(det_state_cache_get(c, "g1", &out));
    det_state_cache_free(c);
}

/* ---------- the consumer's use of it ---------- */

/* The stored window state of pid. */
static struct det_state stored_state(struct fx *f, const char *pid)
{
    struct key pk;
    struct det_state st;
    cJSON *it = NULL;

    assert_int_equal(store_get(f->s, key_product_pk(&pk, pid), KEY_SK_DETSTATE, true, &it), 0);
    det_state_from_item(&st, it);
    cJSON_Delete(it);
    return st;
}

static struct detector *detector_with(struct fx *f, size_t batch, size_t cache_max, bool off)
{
    struct detector_config c = {.batch_size = batch,
                                .clock_ms = fx_clock,
                                .state_cache_max = cache_max,
                                .no_state_cache = off};
    struct detector *d = detector_new(f->s, &c);
    assert_non_null(d);
    return d;
}

/* Products p0..p5, scans over three countries at uneven intervals. */
static void workload(struct fx *f, int from, int to)
{
    static const char *const countries[] = {"US", "FR", "JP", "US", "DE"};
    char pid[16], ts[ISO_LEN + 1];

    for (int i = from; i < to; i++) {
        int p = (i * 7) % 6;
        snprintf(pid, sizeof(pid), "p%d", p);
        fx_ts(ts, T0, (double)i * 3.0 + (double)(p * 11 % 5));
        fx_scan(f, pid, ts, countries[(i * 3 + p) % 5]);
    }
}

static void products(struct fx *f)
{
    char pid[16], ts[ISO_LEN + 1];
    for (int p = 0; p < 6; p++) {
        snprintf(pid, sizeof(pid), "p%d", p);
        fx_product(f, pid, p % 2 ? "brand-a" : "brand-b", fx_ts(ts, T0, -60.0 * 24 * 30));
    }
}

/* States and alert counts after the workload, with the given cache. */
static void outcome(size_t batch, size_t cache_max, bool off, struct det_state st[6],
                    double *threats, uint64_t *drops)
{
    struct fx f;
    struct detector *d;
    struct detector_stats ds;
    char pid[16];

    fx_open(&f);
    products(&f);
    workload(&f, 0, 120);
    d = detector_with(&f, batch, cache_max, off);
    fx_run(d);
    /* More scans later, processed by the same detector (warm cache). */
    workload(&f, 120, 300);
    fx_run(d);
    detector_get_stats(d, &ds);
    *drops = ds.state_cache_drops;
    if (off)
        assert_int_equal(ds.state_cache_size, 0);
    else
        assert_true(ds.state_cache_size == (cache_max && cache_max < 6 ? cache_max : 6));
    detector_free(d);
    for (int p = 0; p < 6; p++) {
        snprintf(pid, sizeof(pid), "p%d", p);
        st[p] = stored_state(&f, pid);
    }
    *threats = fx_threat_count(&f, "brand-a") + 1000 * fx_threat_count(&f, "brand-b");
    fx_close(&f);
}

static void t_cache_same_outcome(void **state)
{
    (void)state;
    struct det_state ref[6], got[6];
    double tref, tgot;
    uint64_t drops;

    outcome(10, 0, true, ref, &tref, &drops);
    assert_true(ref[0].scans == 50 && tref > 0);
    outcome(10, 0, false, got, &tgot, &drops);
    assert_memory_equal(got, ref, sizeof(ref));
    assert_true(tgot == tref);
    assert_int_equal(drops, 0);               /* nothing else wrote */
    outcome(7, 2, false, got, &tgot, &drops); /* constant eviction */
    assert_memory_equal(got, ref, sizeof(ref));
    assert_true(tgot == tref);
}

static int fail_once(void *arg, uint64_t first, uint64_t last)
{
    int *left = arg;
    (void)first;
    (void)last;
    if (*left > 0) {
        --*left;
        return ERR_IO;
    }
    return 0;
}

/* A failed batch empties the cache: its states never reach the cache, and
 * the retry reads what is stored. */
static void t_cache_dropped_after_failed_batch(void **state)
{
    (void)state;
    struct det_state ref[6], st;
    double tref;
    uint64_t drops;
    struct fx f;
    struct detector *d;
    struct detector_stats ds;
    int left = 0;
    char pid[16];

    outcome(10, 0, true, ref, &tref, &drops);
    fx_open(&f);
    products(&f);
    workload(&f, 0, 120);
    d = detector_with(&f, 10, 0, false);
    detector_set_fault_hook(d, fail_once, &left);
    fx_run(d);
    workload(&f, 120, 300);
    left = 1;
    fx_run(d);
    detector_get_stats(d, &ds);
    assert_int_equal(ds.errors, 1);
    assert_int_equal(ds.state_cache_drops, 1);
    detector_free(d);
    for (int p = 0; p < 6; p++) {
        snprintf(pid, sizeof(pid), "p%d", p);
        st = stored_state(&f, pid);
        assert_memory_equal(&st, &ref[p], sizeof(st));
    }
    fx_close(&f);
}

/* Writes a state for pid with a made-up scan count (a writer the
 * detector does not know about). */
static void put_state(struct store *s, const char *pid, uint64_t scans)
{
    struct det_state st;
    cJSON *it;

    det_state_init(&st);
    st.scans = scans;
    it = det_state_to_item(&st, pid);
    assert_non_null(it);
    assert_int_equal(store_put(s, it, NULL), 0);
    cJSON_Delete(it);
}

static void t_cache_sees_other_connection(void **state)
{
    (void)state;
    struct fx f;
    struct store *other;
    struct detector *d;
    struct detector_stats ds;
    struct store_options o = {.durability = STORE_DURABILITY_NORMAL};
    char err[256], ts[ISO_LEN + 1];

    fx_open(&f);
    products(&f);
    workload(&f, 0, 60);
    d = detector_with(&f, 10, 0, false);
    fx_run(d);
    assert_int_equal(stored_state(&f, "p0").scans, 10);

    /* Another process (connection) rewrites p0's state. */
    o.path = f.path;
    other = store_open_sqlite(&o, err, sizeof(err));
    assert_non_null(other);
    put_state(other, "p0", 500);
    store_close(other);
    fx_scan(&f, "p0", fx_ts(ts, T0, 1000), "US");
    fx_run(d);
    assert_int_equal(stored_state(&f, "p0").scans, 501);
    detector_get_stats(d, &ds);
    assert_int_equal(ds.state_cache_drops, 1);

    /* This connection, without the cache (what a DLQ replay does). */
    {
        struct det_proc_cfg pc = {.s = f.s, .reader = "other-reader", .now_ms = FX_NOW_MS};
        struct det_proc *p = det_proc_new(&pc);
        struct stream_record *recs = NULL;
        size_t n = 0;
        uint64_t before = det_proc_uncached_state_writes();

        assert_non_null(p);
        fx_scan(&f, "p0", fx_ts(ts, T0, 1001), "US");
        {
            uint64_t head = 0;
            assert_int_equal(store_stream_head(f.s, &head), 0);
            assert_int_equal(store_stream_read(f.s, head - 1, 1, &recs, &n), 0);
            assert_int_equal(n, 1);
        }
        assert_int_equal(store_batch_begin(f.s), 0);
        assert_int_equal(det_proc_add(p, &recs[0]), 0);
        assert_int_equal(det_proc_flush(p, 0), 0);
        assert_int_equal(store_batch_commit(f.s), 0);
        det_proc_free(p);
        store_stream_free(recs, n);
        assert_true(det_proc_uncached_state_writes() == before + 1);
    }
    assert_int_equal(stored_state(&f, "p0").scans, 502);
    /* The detector processes the same scan too (the other reader's
     * replay counted it once already): 503, not 502 from a stale cache. */
    fx_run(d);
    assert_int_equal(stored_state(&f, "p0").scans, 503);
    detector_get_stats(d, &ds);
    assert_int_equal(ds.state_cache_drops, 2);
    detector_free(d);
    fx_close(&f);
}

/* ---------- deferred state writes ---------- */

static struct detector *detector_deferring(struct fx *f, size_t batch, unsigned flush_every)
{
    /* No catch-up batches: these tests count batches of `batch`. */
    struct detector_config c = {.batch_size = batch,
                                .clock_ms = fx_clock,
                                .state_flush_batches = flush_every,
                                .catchup_batch = batch};
    struct detector *d = detector_new(f->s, &c);
    assert_non_null(d);
    return d;
}

static uint64_t states_mark(struct fx *f)
{
    uint64_t v = 0;
    assert_int_equal(
        store_checkpoint_get(f->s, DETECTOR_READER_DEFAULT DETECTOR_STATES_MARK_SUFFIX, &v), 0);
    return v;
}

static uint64_t checkpoint_of(struct fx *f)
{
    uint64_t v = 0;
    assert_int_equal(store_checkpoint_get(f->s, DETECTOR_READER_DEFAULT, &v), 0);
    return v;
}

static int count_opslog(struct fx *f)
{
    cJSON *log = fx_opslog(f, "2026-06-20");
    int n = cJSON_GetArraySize(log);
    cJSON_Delete(log);
    return n;
}

/* The stored states of p0..p5 and the threat counts equal the reference. */
static void assert_outcome(struct fx *f, const struct det_state ref[6], double tref)
{
    char pid[16];
    for (int p = 0; p < 6; p++) {
        struct det_state st;
        snprintf(pid, sizeof(pid), "p%d", p);
        st = stored_state(f, pid);
        assert_memory_equal(&st, &ref[p], sizeof(st));
    }
    assert_true(fx_threat_count(f, "brand-a") + 1000 * fx_threat_count(f, "brand-b") == tref);
}

/* Full batches defer their states (the stored items fall behind the
 * checkpoint, the mark says how far they go); the detector going idle
 * writes them, and everything equals a detector without a cache. */
static void t_deferred_same_outcome(void **state)
{
    (void)state;
    struct det_state ref[6], st;
    double tref;
    uint64_t drops;
    struct fx f;
    struct detector *d;
    struct detector_stats ds;
    size_t n = 0;

    outcome(10, 0, true, ref, &tref, &drops);
    fx_open(&f);
    products(&f);
    workload(&f, 0, 120);
    d = detector_deferring(&f, 10, 1000);
    /* Batch 1 writes (the cache starts untrusted), batches 2.. defer. */
    for (int i = 0; i < 4; i++) {
        assert_int_equal(detector_run_once(d, &n), 0);
        assert_int_equal(n, 10);
    }
    assert_true(states_mark(&f) > 0);
    assert_true(states_mark(&f) - 1 < checkpoint_of(&f)); /* stored states are behind */
    detector_get_stats(d, &ds);
    assert_true(ds.states_deferred > 0);
    assert_int_equal(ds.state_flushes, 1);
    /* A verify in this process sees the deferred state through the
     * detector, not the stale item. */
    assert_true(detector_state_peek(d, "p0", &st));
    assert_true(st.scans > stored_state(&f, "p0").scans);

    fx_run(d);
    workload(&f, 120, 300);
    fx_run(d);
    assert_int_equal(states_mark(&f) - 1, checkpoint_of(&f)); /* idle: all written */
    detector_get_stats(d, &ds);
    assert_true(ds.state_flushes >= 2 && ds.state_flushes < ds.batches);
    assert_int_equal(ds.warmups, 0);
    detector_free(d);
    assert_outcome(&f, ref, tref);
    fx_close(&f);
}

/* A detector that stops with deferred states (a crash: its memory is
 * gone) leaves the stored states at the mark; the next one re-applies the
 * records between mark and checkpoint to the states only, and ends with
 * the states, alerts, counters and ops-log entries of an uninterrupted
 * run. */
static void t_deferred_crash(void **state)
{
    (void)state;
    struct det_state ref[6];
    double tref;
    uint64_t drops;
    struct fx f, g;
    struct detector *d;
    struct detector_stats ds;
    size_t n = 0;
    int ref_ops, ref_alerts;
    cJSON *alerts;

    /* Reference: no cache at all. */
    outcome(10, 0, true, ref, &tref, &drops);
    fx_open(&g);
    products(&g);
    workload(&g, 0, 300);
    d = detector_with(&g, 10, 0, true);
    fx_run(d);
    detector_free(d);
    ref_ops = count_opslog(&g);
    alerts = fx_alerts(&g, "brand-a");
    ref_alerts = cJSON_GetArraySize(alerts);
    cJSON_Delete(alerts);
    fx_close(&g);

    fx_open(&f);
    products(&f);
    workload(&f, 0, 120);
    d = detector_deferring(&f, 10, 1000);
    for (int i = 0; i < 7; i++)
        assert_int_equal(detector_run_once(d, &n), 0);
    assert_true(states_mark(&f) - 1 < checkpoint_of(&f));
    detector_free(d); /* "crash": deferred states lost with the process */

    workload(&f, 120, 300);
    d = detector_deferring(&f, 10, 1000);
    fx_run(d);
    detector_get_stats(d, &ds);
    assert_int_equal(ds.warmups, 1);
    assert_int_equal(ds.warmup_records, 60); /* batches 2..7 */
    assert_int_equal(states_mark(&f) - 1, checkpoint_of(&f));
    detector_free(d);
    assert_outcome(&f, ref, tref);
    assert_int_equal(count_opslog(&f), ref_ops);
    alerts = fx_alerts(&f, "brand-a");
    assert_int_equal(cJSON_GetArraySize(alerts), ref_alerts);
    cJSON_Delete(alerts);
    fx_close(&f);
}

/* The same crash, but the next detector runs without a cache: it still
 * rebuilds the states from the mark before its first batch. */
static void t_deferred_crash_then_no_cache(void **state)
{
    (void)state;
    struct det_state ref[6];
    double tref;
    uint64_t drops;
    struct fx f;
    struct detector *d;
    struct detector_stats ds;
    size_t n = 0;

    outcome(10, 0, true, ref, &tref, &drops);
    fx_open(&f);
    products(&f);
    workload(&f, 0, 120);
    d = detector_deferring(&f, 10, 1000);
    for (int i = 0; i < 5; i++)
        assert_int_equal(detector_run_once(d, &n), 0);
    detector_free(d);
    workload(&f, 120, 300);
    d = detector_with(&f, 10, 0, true);
    fx_run(d);
    detector_get_stats(d, &ds);
    assert_int_equal(ds.warmups, 1);
    detector_free(d);
    assert_outcome(&f, ref, tref);
    fx_close(&f);
}

/* Another writer of window states in this process (a DLQ replay) first
 * asks the detector for its deferred writes. */
static void t_deferred_written_on_request(void **state)
{
    (void)state;
    struct fx f;
    struct detector *d;
    struct det_state st;
    size_t n = 0;

    fx_open(&f);
    products(&f);
    workload(&f, 0, 120);
    d = detector_deferring(&f, 10, 1000);
    for (int i = 0; i < 4; i++)
        assert_int_equal(detector_run_once(d, &n), 0);
    assert_true(detector_state_peek(d, "p1", &st));
    assert_true(st.scans != stored_state(&f, "p1").scans);
    assert_int_equal(store_batch_begin(f.s), 0);
    assert_int_equal(detector_write_deferred(d), 0);
    assert_int_equal(store_batch_commit(f.s), 0);
    assert_true(stored_state(&f, "p1").scans == st.scans);
    assert_int_equal(states_mark(&f) - 1, checkpoint_of(&f));
    assert_false(detector_state_peek(d, "p1", &st)); /* re-validated by the next batch */
    fx_run(d);
    detector_free(d);
    fx_close(&f);
}

/* Ten batches or more behind, the detector reads catch-up batches (up to
 * catchup_batch records); the outcome is the same. */
static void t_catchup_batches(void **state)
{
    (void)state;
    struct fx f;
    struct detector *d;
    struct detector_config c = {.batch_size = 10, .clock_ms = fx_clock, .catchup_batch = 50};
    size_t n = 0;

    fx_open(&f);
    products(&f);
    workload(&f, 0, 120);
    d = detector_new(f.s, &c);
    assert_non_null(d);
    assert_int_equal(detector_run_once(d, &n), 0);
    assert_int_equal(n, 50); /* 126 records behind: a catch-up batch */
    fx_run(d);
    /* Caught up, the next records come in normal batches. */
    {
        char ts[ISO_LEN + 1];
        for (int i = 0; i < 15; i++)
            fx_scan(&f, "p0", fx_ts(ts, T0, 2000.0 + i), "US");
        assert_int_equal(detector_run_once(d, &n), 0);
        assert_int_equal(n, 10);
        fx_run(d);
    }
    detector_free(d);
    {
        /* Same states as a detector without catch-up batches. */
        struct fx g;
        struct detector_config c2 = {.batch_size = 10, .clock_ms = fx_clock, .catchup_batch = 10};
        char pid[16], ts[ISO_LEN + 1];
        fx_open(&g);
        products(&g);
        workload(&g, 0, 120);
        d = detector_new(g.s, &c2);
        fx_run(d);
        for (int i = 0; i < 15; i++)
            fx_scan(&g, "p0", fx_ts(ts, T0, 2000.0 + i), "US");
        fx_run(d);
        detector_free(d);
        for (int p = 0; p < 6; p++) {
            struct det_state a, b;
            snprintf(pid, sizeof(pid), "p%d", p);
            a = stored_state(&f, pid);
            b = stored_state(&g, pid);
            assert_memory_equal(&a, &b, sizeof(a));
        }
        assert_true(fx_threat_count(&f, "brand-a") == fx_threat_count(&g, "brand-a"));
        assert_true(fx_threat_count(&f, "brand-b") == fx_threat_count(&g, "brand-b"));
        fx_close(&g);
    }
    fx_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_cache_get_put_replace),
        cmocka_unit_test(t_cache_evicts_least_recently_used),
        cmocka_unit_test(t_cache_grows),
        cmocka_unit_test(t_cache_same_outcome),
        cmocka_unit_test(t_cache_dropped_after_failed_batch),
        cmocka_unit_test(t_cache_sees_other_connection),
        cmocka_unit_test(t_deferred_same_outcome),
        cmocka_unit_test(t_deferred_crash),
        cmocka_unit_test(t_deferred_crash_then_no_cache),
        cmocka_unit_test(t_deferred_written_on_request),
        cmocka_unit_test(t_catchup_batches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
