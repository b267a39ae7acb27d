/*
 * test_ddb_detector.c - the DynamoDB Streams detector's commit path
 * (ddbd_apply) and its leases, on a SQLite store (same store API, no
 * DynamoDB needed): the detector scenarios give the same alerts as the
 * embedded detector; a crash between any two transactions of a batch
 * followed by a replay from the checkpoint changes no count; a worker
 * whose lease was taken over cannot move the checkpoint; the detector's
 * own alert writes become one model classification job per alert.
 */
#include "test_ddb_fixture.h"

#include "core/webhook.h"
#include "detect/classify_job.h"
#include "detect/ddb_jobs.h"

#define BRAND   "b-0001"
#define T0      "2026-06-20T10:00:00.000Z"
#define CREATED "2026-06-01T00:00:00.000Z"
#define SHARD   "shardId-0001"
#define READER  FXD_READER
#define NPROD   80

/* NPROD products scanned from 3 countries (one geographic alert each)
 * and one product scanned 12 times in an hour (one burst alert, count
 * 3), plus an unknown product (parked) and a MODIFY (ignored). */
static void write_scenario(struct fx *f)
{
    char pid[16], ts[ISO_LEN + 1];
    const char *cc[3] = {"US", "FR", "JP"};

    for (int i = 0; i < NPROD; i++) {
        snprintf(pid, sizeof(pid), "p%03d", i);
        fx_product(f, pid, BRAND, CREATED);
    }
    fx_product(f, "burst", BRAND, CREATED);
    for (int c = 0; c < 3; c++)
        for (int i = 0; i < NPROD; i++) {
            snprintf(pid, sizeof(pid), "p%03d", i);
            fx_scan(f, pid, fx_ts(ts, T0, 10 * c + i * 0.01), cc[c]);
        }
    for (int i = 0; i < 12; i++)
        fx_scan(f, "burst", fx_ts(ts, T0, 2 * i), "US");
    fx_scan(f, "ghost", fx_ts(ts, T0, 1), "US");
    fx_product(f, "burst", BRAND, CREATED); /* MODIFY */
}

/* The store's own stream as DynamoDB stream records of one shard. */
/* The expected final state of the scenario. */
static void check_results(struct fx *f, const char *last_seq)
{
    cJSON *alerts = fx_alerts(f, BRAND), *log = fx_opslog(f, "2026-06-20");
    const cJSON *burst;
    char seq[DDBS_SEQ_MAX + 1];
    bool fin, found;
    int geo = fx_count_eq(alerts, "type", "geographic_anomaly");

    assert_int_equal(geo, NPROD);
    assert_int_equal(fx_count_eq(alerts, "type", "burst_scan"), 1);
    assert_int_equal(cJSON_GetArraySize(alerts), NPROD + 1);
    burst = fx_find(alerts, "productId", "burst");
    assert_non_null(burst);
    assert_true(fx_num(burst, "count") == 3);
    assert_true(fx_threat_count(f, BRAND) == NPROD + 1);
    assert_int_equal(cJSON_GetArraySize(log), NPROD + 3);
    assert_int_equal(ddbd_checkpoint_get(f->s, READER, SHARD, seq, &fin, &found), 0);
    assert_true(found);
    assert_false(fin);
    assert_string_equal(seq, last_seq);
    cJSON_Delete(alerts);
    cJSON_Delete(log);
}

static void t_scenario_matches(void **state)
{
    struct fx *f = *state;
    struct ddbs_record *recs;
    struct det_proc_counts sum = {0};
    size_t n;

    write_scenario(f);
    recs = fxd_records(f, SHARD, &n);
    assert_int_equal(n, NPROD + 1 + 3 * NPROD + 12 + 1 + 1);
    assert_int_equal(fxd_apply_all(f, false, SHARD, recs, n, 100, NULL, NULL, &sum), 0);
    assert_int_equal(sum.scans, 3 * NPROD + 12);
    assert_int_equal(sum.replayed, 0);
    assert_int_equal(sum.parked, 1);
    check_results(f, recs[n - 1].seq);
    /* Applying everything again is a replay: nothing changes. */
    memset(&sum, 0, sizeof(sum));
    assert_int_equal(fxd_apply_all(f, false, SHARD, recs, n, 100, NULL, NULL, &sum), 0);
    assert_int_equal(sum.replayed, 3 * NPROD + 12);
    assert_int_equal(sum.alerts_created, 0);
    check_results(f, recs[n - 1].seq);
    ddbs_records_free(recs, n);
}

/* A crash before each group of a big batch, then a replay. */
static void t_crash_between_groups(void **state)
{
    struct fx *f = *state;
    struct ddbs_record *recs;
    struct fxd_crash probe = {0};
    size_t n, ngroups;

    write_scenario(f);
    recs = fxd_records(f, SHARD, &n);
    /* 100 records, then the rest in one batch: several transactions. */
    assert_int_equal(fxd_apply_all(f, false, SHARD, recs, 100, 100, NULL, NULL, NULL), 0);
    assert_int_equal(fxd_apply_all(f, false, SHARD, recs + 100, n - 100, n, NULL, &probe, NULL), 0);
    ngroups = probe.ngroups;
    assert_true(ngroups >= 3);
    check_results(f, recs[n - 1].seq);
    ddbs_records_free(recs, n);

    for (size_t at = 1; at < ngroups; at++) {
        struct fxd_crash cr = {.at = at};
        struct det_proc_counts sum = {0};
        fx_close(f);
        fx_open(f);
        write_scenario(f);
        recs = fxd_records(f, SHARD, &n);
        assert_int_equal(fxd_apply_all(f, false, SHARD, recs, 100, 100, NULL, NULL, NULL), 0);
        assert_int_equal(fxd_apply_all(f, false, SHARD, recs + 100, n - 100, n, NULL, &cr, NULL),
                         ERR_IO);
        /* Restart from the checkpoint (record 100), in smaller batches. */
        assert_int_equal(fxd_apply_all(f, false, SHARD, recs + 100, n - 100, 60, NULL, NULL, &sum),
                         0);
        assert_true(sum.replayed > 0);
        check_results(f, recs[n - 1].seq);
        ddbs_records_free(recs, n);
    }
}

/* Every delivery item of webhook w-1, and those still pending. */
static int deliveries(struct fx *f, int *pending)
{
    struct key pk;
    cJSON *all =
        fx_query_all(f, STORE_INDEX_TABLE, key_delivery_pk(&pk, "w-1"), STORE_SK_ANY, NULL);
    cJSON *p = fx_query_all(f, STORE_INDEX_GSI1, KEY_GSI1PK_DELIVERY_PENDING, STORE_SK_ANY, NULL);
    int n = cJSON_GetArraySize(all);
    *pending = cJSON_GetArraySize(p);
    cJSON_Delete(all);
    cJSON_Delete(p);
    return n;
}

/* A Streams batch whose try failed after its first transactions (the
 * work items go first) is read again.  Meanwhile the API processes may
 * have sent the deliveries that try wrote: the careful retry
 * (ddbd_target.careful, set by the detector after a failed try) leaves
 * them as they are, where a plain one would make them pending again. */
static void t_retry_keeps_sent_deliveries(void **state)
{
    struct fx *f = *state;
    const size_t scans = 3 * NPROD + 12;

    for (int careful = 1; careful >= 0; careful--) {
        struct fxd_crash cr = {.at = 1};
        struct ddbd_target t = {.reader = FXD_READER, .shard = SHARD};
        struct ddbs_record *recs;
        cJSON *sent, *done = cJSON_CreateString(WEBHOOK_ST_DELIVERED);
        const cJSON *it;
        int pending, first;
        size_t n;

        fx_close(f);
        fx_open(f);
        fx_put(f,
               webhook_item_new(&(struct webhook_fields){.id = "w-1",
                                                         .brand_id = BRAND,
                                                         .url = "https://example.com/hook",
                                                         .events = WEBHOOK_EV_SCAN,
                                                         .created_at = "2020-01-01T00:00:00.000Z",
                                                         .secret = "whsec_test"}));
        write_scenario(f);
        recs = fxd_records(f, SHARD, &n);
        struct det_proc_cfg pc = fxd_proc_cfg(f, false);
        /* the first try: only its first transaction commits */
        t.fault = fxd_crash_hook;
        t.fault_arg = &cr;
        assert_int_equal(ddbd_apply(&pc, &t, recs, n, NULL, NULL), ERR_IO);
        first = deliveries(f, &pending);
        assert_true(first > 0 && (size_t)first < scans);
        assert_int_equal(pending, first);
        /* ... and a dispatcher sends them all */
        sent = fx_query_all(f, STORE_INDEX_GSI1, KEY_GSI1PK_DELIVERY_PENDING, STORE_SK_ANY, NULL);
        cJSON_ArrayForEach(it, sent)
        {
            const struct store_action acts[3] = {
                {.kind = STORE_ACT_SET, .attr = "status", .value = done},
                {.kind = STORE_ACT_REMOVE, .attr = "GSI1PK"},
                {.kind = STORE_ACT_REMOVE, .attr = "GSI1SK"},
            };
            assert_int_equal(
                store_update(f->s, fx_str(it, "PK"), fx_str(it, "SK"), acts, 3, NULL, NULL), 0);
        }
        cJSON_Delete(sent);
        cJSON_Delete(done);

        /* the retry of the same batch */
        t.fault = NULL;
        t.careful = careful;
        assert_int_equal(ddbd_apply(&pc, &t, recs, n, NULL, NULL), 0);
        assert_int_equal(deliveries(f, &pending), (int)scans); /* one item per scan */
        if (careful)
            assert_int_equal(pending, (int)scans - first); /* the sent ones stay sent */
        else
            assert_int_equal(pending, (int)scans); /* all pending again: sent twice */
        ddbs_records_free(recs, n);
    }
}

/* Pending classification jobs, by alert id. */
static cJSON *pending_jobs(struct fx *f)
{
    return fx_query_all(f, STORE_INDEX_GSI1, KEY_GSI1PK_CLASSIFY_PENDING, STORE_SK_ANY, NULL);
}

/* The detector sees its own alert writes in later batches and turns each
 * alert into one classification job (detect/classify_job.h); a replay
 * rewrites the same items; the batches holding only its job items and
 * checkpoints are left alone. */
static void t_classify_jobs(void **state)
{
    struct fx *f = *state;
    struct ddbs_record *recs, *all, *tail;
    size_t n, nall, ntail, wanted = 0;
    cJSON *jobs, *again, *alerts;
    const cJSON *a;

    /* the jobs' ttl counts from the batch's time: the store must share
     * that clock for them to be alive */
    store_set_clock(f->s, fx_clock, NULL);
    write_scenario(f);
    recs = fxd_records(f, SHARD, &n);
    for (size_t i = 0; i < n; i++) {
        /* scans and products: no job (a scan is still wanted, for the
         * checks and as a possible webhook delivery) */
        assert_false(classify_job_candidate(&recs[i].r));
        if (!det_record_wanted(&recs[i].r))
            assert_false(ddbd_jobs_wanted(&recs[i], true));
    }
    assert_int_equal(fxd_apply_all(f, false, SHARD, recs, n, 100, NULL, NULL, NULL), 0);
    jobs = pending_jobs(f);
    assert_int_equal(cJSON_GetArraySize(jobs), 0);
    cJSON_Delete(jobs);

    /* the next batches: the detector's own writes */
    all = fxd_records(f, SHARD, &nall);
    assert_true(nall > n);
    for (size_t i = n; i < nall; i++)
        wanted += ddbd_jobs_wanted(&all[i], true);
    assert_true(wanted >= NPROD + 1); /* every alert written, some more than once */
    /* no model running anywhere: applying those records writes no job
     * (alert records stay wanted only as possible webhook deliveries) */
    {
        struct det_proc_cfg pc = fxd_proc_cfg(f, false);
        struct ddbd_target t = {.reader = FXD_READER, .shard = SHARD};
        struct det_proc_counts c = {0};
        pc.classify_jobs = false;
        assert_int_equal(ddbd_apply(&pc, &t, all + n, nall - n, &c, NULL), 0);
        jobs = pending_jobs(f);
        assert_int_equal(cJSON_GetArraySize(jobs), 0);
        cJSON_Delete(jobs);
    }
    assert_int_equal(fxd_apply_all(f, false, SHARD, all + n, nall - n, 50, NULL, NULL, NULL), 0);
    jobs = pending_jobs(f);
    assert_int_equal(cJSON_GetArraySize(jobs), NPROD + 1); /* one per alert */
    alerts = fx_alerts(f, BRAND);
    cJSON_ArrayForEach(a, alerts)
    {
        struct key k;
        const cJSON *j = fx_find(jobs, "alertId", fx_str(a, "alertId"));
        assert_non_null(j);
        assert_string_equal(fx_str(j, "PK"), key_classify_job_pk(&k, fx_str(a, "alertId")));
        assert_string_equal(fx_str(j, "alertPK"), fx_str(a, "PK"));
        assert_string_equal(fx_str(j, "alertSK"), fx_str(a, "SK"));
        /* the alert's newest state (the burst alert was updated twice) */
        assert_string_equal(fx_str(j, "details"), fx_str(a, "details"));
        assert_string_equal(fx_str(j, "claimToken"), "");
    }
    cJSON_Delete(alerts);
    /* a replay of those batches writes the same items */
    assert_int_equal(fxd_apply_all(f, false, SHARD, all + n, nall - n, 50, NULL, NULL, NULL), 0);
    again = pending_jobs(f);
    assert_int_equal(cJSON_GetArraySize(again), NPROD + 1);
    cJSON_ArrayForEach(a, jobs)
    {
        const cJSON *b = fx_find(again, "PK", fx_str(a, "PK"));
        assert_non_null(b);
        assert_string_equal(fx_str(b, "recordId"), fx_str(a, "recordId"));
        assert_string_equal(fx_str(b, "GSI1SK"), fx_str(a, "GSI1SK"));
    }
    cJSON_Delete(again);
    cJSON_Delete(jobs);

    /* what follows (job items, checkpoints) is neither checked nor work */
    tail = fxd_records(f, SHARD, &ntail);
    assert_true(ntail > nall);
    for (size_t i = nall; i < ntail; i++) {
        assert_false(det_record_wanted(&tail[i].r));
        assert_false(ddbd_jobs_wanted(&tail[i], true));
    }
    ddbs_records_free(tail, ntail);
    ddbs_records_free(all, nall);
    ddbs_records_free(recs, n);
}

static void t_leases(void **state)
{
    struct fx *f = *state;
    struct lease a, b, a2;
    struct lease_info info;
    int64_t now = FX_NOW_MS;

    assert_int_equal(lease_acquire(f->s, SHARD, "bad id", now, 1000, &a), ERR_INVALID);
    assert_int_equal(lease_acquire(f->s, SHARD, "worker-a", now, 1000, &a), 0);
    assert_int_equal(lease_peek(f->s, SHARD, &info), 0);
    assert_true(info.exists);
    assert_string_equal(info.owner, "worker-a");
    assert_true(info.expires_ms == now + 1000);
    /* Held: nobody else gets it, even the same owner name. */
    assert_int_equal(lease_acquire(f->s, SHARD, "worker-b", now + 500, 1000, &b), ERR_CONFLICT);
    assert_int_equal(lease_acquire(f->s, SHARD, "worker-a", now + 500, 1000, &a2), ERR_CONFLICT);
    assert_int_equal(lease_renew(f->s, &a, now + 900, 1000), 0);
    assert_int_equal(lease_acquire(f->s, SHARD, "worker-b", now + 1500, 1000, &b), ERR_CONFLICT);
    /* Expired: b takes over; a can neither renew nor release. */
    assert_int_equal(lease_acquire(f->s, SHARD, "worker-b", now + 1901, 1000, &b), 0);
    assert_string_not_equal(a.token, b.token);
    assert_int_equal(lease_renew(f->s, &a, now + 1950, 1000), ERR_CONDITION);
    assert_int_equal(lease_release(f->s, &a), ERR_CONDITION);
    /* Released: free at once. */
    assert_int_equal(lease_release(f->s, &b), 0);
    assert_int_equal(lease_acquire(f->s, SHARD, "worker-a", now + 2000, 1000, &a2), 0);
}

static void t_workers(void **state)
{
    struct fx *f = *state;
    int64_t now = FX_NOW_MS;
    size_t n = 99;

    /* Heartbeats carry a TTL: the store's clock must agree with ours. */
    store_set_clock(f->s, fx_clock, NULL);
    assert_int_equal(lease_workers_live(f->s, now, &n), 0);
    assert_int_equal(n, 0);
    assert_int_equal(lease_worker_beat(f->s, "w1", now, 1000), 0);
    assert_int_equal(lease_worker_beat(f->s, "w2", now + 500, 1000), 0);
    assert_int_equal(lease_workers_live(f->s, now + 900, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(lease_workers_live(f->s, now + 1200, &n), 0);
    assert_int_equal(n, 1); /* w1 stopped beating */
    assert_int_equal(lease_worker_gone(f->s, "w2"), 0);
    assert_int_equal(lease_workers_live(f->s, now + 1200, &n), 0);
    assert_int_equal(n, 0);
    assert_int_equal(lease_worker_beat(f->s, "bad id", now, 1000), ERR_INVALID);

    assert_int_equal(lease_fair_share(4, 2), 2);
    assert_int_equal(lease_fair_share(5, 2), 3);
    assert_int_equal(lease_fair_share(1, 3), 1);
    assert_int_equal(lease_fair_share(0, 3), 1);
    assert_int_equal(lease_fair_share(7, 0), 7);
}

/* A worker that lost its lease cannot commit; the new owner continues
 * from the checkpoint and the counts are exact. */
static void t_takeover(void **state)
{
    struct fx *f = *state;
    struct ddbs_record *recs;
    struct lease a, b;
    struct det_proc_counts sum = {0};
    cJSON *alerts;
    size_t n;

    write_scenario(f);
    recs = fxd_records(f, SHARD, &n);
    assert_int_equal(lease_acquire(f->s, SHARD, "worker-a", FX_NOW_MS, 1000, &a), 0);
    /* a does the first 100 records. */
    assert_int_equal(fxd_apply_all(f, false, SHARD, recs, 100, 100, &a, NULL, NULL), 0);
    /* a stalls; b takes the expired lease. */
    assert_int_equal(lease_acquire(f->s, SHARD, "worker-b", FX_NOW_MS + 5000, 1000, &b), 0);
    /* a wakes up with a small batch (one transaction): refused whole. */
    assert_int_equal(fxd_apply_all(f, false, SHARD, recs + 100, 10, 10, &a, NULL, NULL),
                     ERR_CONDITION);
    {
        char seq[DDBS_SEQ_MAX + 1];
        bool fin, found;
        assert_int_equal(ddbd_checkpoint_get(f->s, READER, SHARD, seq, &fin, &found), 0);
        assert_string_equal(seq, recs[99].seq);
    }
    /* a again, with a big batch: some product transactions may land
     * before its checkpoint is refused. */
    assert_int_equal(fxd_apply_all(f, false, SHARD, recs + 100, n - 100, n, &a, NULL, NULL),
                     ERR_CONDITION);
    /* b continues from the checkpoint. */
    assert_int_equal(fxd_apply_all(f, false, SHARD, recs + 100, n - 100, 100, &b, NULL, &sum), 0);
    check_results(f, recs[n - 1].seq);
    alerts = fx_alerts(f, BRAND);
    assert_int_equal(cJSON_GetArraySize(alerts), NPROD + 1);
    cJSON_Delete(alerts);
    ddbs_records_free(recs, n);
}

/* A closed shard read to its end is marked finished, records or not. */
static void t_finished(void **state)
{
    struct fx *f = *state;
    struct det_proc_cfg pc = fxd_proc_cfg(f, false);
    struct ddbd_target t = {
        .reader = READER, .shard = SHARD, .prev_seq = "12345", .finished = true};
    char seq[DDBS_SEQ_MAX + 1];
    bool fin, found;

    assert_int_equal(ddbd_checkpoint_get(f->s, READER, SHARD, seq, &fin, &found), 0);
    assert_false(found);
    assert_int_equal(ddbd_apply(&pc, &t, NULL, 0, NULL, NULL), 0);
    assert_int_equal(ddbd_checkpoint_get(f->s, READER, SHARD, seq, &fin, &found), 0);
    assert_true(found);
    assert_true(fin);
    assert_string_equal(seq, "12345");
}

/* A record that keeps failing is parked with the checkpoint move. */
static void t_park(void **state)
{
    struct fx *f = *state;
    struct det_proc_cfg pc = fxd_proc_cfg(f, false);
    struct ddbs_record *recs;
    struct lease l;
    struct ddbd_target t = {.reader = READER, .shard = SHARD, .lease = &l};
    char seq[DDBS_SEQ_MAX + 1];
    bool fin, found;
    cJSON *dlq;
    size_t n;

    write_scenario(f);
    recs = fxd_records(f, SHARD, &n);
    assert_int_equal(lease_acquire(f->s, SHARD, "worker-a", FX_NOW_MS, 1000, &l), 0);
    assert_int_equal(ddbd_park(&pc, &t, &recs[5], "test: bad record", 3), 0);
    assert_int_equal(ddbd_checkpoint_get(f->s, READER, SHARD, seq, &fin, &found), 0);
    assert_string_equal(seq, recs[5].seq);
    dlq = fx_query_all(f, STORE_INDEX_TABLE, "DLQ#2026-06-21", STORE_SK_ANY, NULL);
    assert_int_equal(cJSON_GetArraySize(dlq), 1);
    assert_string_equal(fx_str(cJSON_GetArrayItem(dlq, 0), "reader"), READER);
    cJSON_Delete(dlq);
    /* Not with a lost lease. */
    l.token[0] = 'X';
    assert_int_equal(ddbd_park(&pc, &t, &recs[6], "test", 3), ERR_CONDITION);
    dlq = fx_query_all(f, STORE_INDEX_TABLE, "DLQ#2026-06-21", STORE_SK_ANY, NULL);
    assert_int_equal(cJSON_GetArraySize(dlq), 1);
    cJSON_Delete(dlq);
    ddbs_records_free(recs, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(t_scenario_matches, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_crash_between_groups, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_retry_keeps_sent_deliveries, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_classify_jobs, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_leases, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_workers, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_takeover, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_finished, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_park, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
