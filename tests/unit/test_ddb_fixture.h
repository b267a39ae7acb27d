/*
 * test_ddb_fixture.h - helpers of the tests of the DynamoDB Streams
 * detector's commit path (ddbd_apply) on the detector fixture's SQLite
 * store: the store's change stream as the DynamoDB records of one shard,
 * and a loop applying them in batches, optionally with a fault hook that
 * fails before a chosen transaction group.  Header-only, like
 * test_detect_fixture.h.
 */
#ifndef GP_TEST_DDB_FIXTURE_H
#define GP_TEST_DDB_FIXTURE_H

#include "test_detect_fixture.h"

#include "detect/ddb_detector.h"
#include "detect/lease.h"
#include "detect/process.h"

#define FXD_READER "streams"

/* The store's whole change stream as DynamoDB records of shard. */
FX_UNUSED static struct ddbs_record *fxd_records(struct fx *f, const char *shard, size_t *n)
{
    struct stream_record *sr = NULL;
    struct ddbs_record *out;
    size_t k = 0;

    assert_int_equal(store_stream_read(f->s, 0, 10000, &sr, &k), 0);
    out = calloc(k ? k : 1, sizeof(*out));
    assert_non_null(out);
    for (size_t i = 0; i < k; i++) {
        out[i].r = sr[i];
        out[i].r.pk = strdup(sr[i].pk);
        out[i].r.sk = strdup(sr[i].sk);
        out[i].r.image = sr[i].image ? cJSON_Duplicate(sr[i].image, 1) : NULL;
        snprintf(out[i].seq, sizeof(out[i].seq), "%" PRIu64 "00000", sr[i].seq);
        assert_true(det_pos_format(out[i].pos, shard, out[i].seq));
    }
    store_stream_free(sr, k);
    *n = k;
    return out;
}

/* The processing configuration of these tests (fold: fold_scan_counts). */
FX_UNUSED static struct det_proc_cfg fxd_proc_cfg(struct fx *f, bool fold)
{
    struct det_proc_cfg pc = {
        .s = f->s,
        .reader = FXD_READER,
        .velocity = {.min_total = DET_VELOCITY_MIN_TOTAL, .min_rate = DET_VELOCITY_MIN_RATE},
        .now_ms = FX_NOW_MS,
        .fold_scan_counts = fold,
        /* as when a model runs somewhere (t_classify_jobs turns it off) */
        .classify_jobs = true};
    return pc;
}

/* A crash before transaction group `at` (0: never); ngroups is the
 * number of groups the last batch had. */
struct fxd_crash {
    size_t at;
    size_t ngroups;
};

FX_UNUSED static int fxd_crash_hook(void *arg, size_t g, size_t ngroups)
{
    struct fxd_crash *c = arg;
    c->ngroups = ngroups;
    return c->at && g == c->at ? ERR_IO : 0;
}

/* Applies recs in batches of `batch` records to shard under lease l (may
 * be NULL); cr (may be NULL) hooks every batch.  Adds each batch's
 * counts to *sum (may be NULL).  Returns the first batch's error. */
FX_UNUSED static int fxd_apply_all(struct fx *f, bool fold, const char *shard,
                                   const struct ddbs_record *recs, size_t n, size_t batch,
                                   const struct lease *l, struct fxd_crash *cr,
                                   struct det_proc_counts *sum)
{
    struct det_proc_cfg pc = fxd_proc_cfg(f, fold);
    for (size_t i = 0; i < n; i += batch) {
        size_t m = n - i < batch ? n - i : batch;
        struct det_proc_counts c = {0};
        struct ddbd_target t = {.reader = FXD_READER, .shard = shard, .lease = l};
        int rc;
        if (cr) {
            t.fault = fxd_crash_hook;
            t.fault_arg = cr;
        }
        rc = ddbd_apply(&pc, &t, recs + i, m, &c, NULL);
        if (rc)
            return rc;
        if (sum) {
            sum->scans += c.scans;
            sum->replayed += c.replayed;
            sum->alerts_created += c.alerts_created;
            sum->parked += c.parked;
        }
    }
    return 0;
}

#endif
