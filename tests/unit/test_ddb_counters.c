/*
 * test_ddb_counters.c - the hot scan counters folded by the DynamoDB
 * Streams detector (det_proc_cfg.fold_scan_counts), on a SQLite store
 * through the detector's own commit path (ddbd_apply): N scans of a
 * product processed in K batches give the product's scanCount N and the
 * brand's STATS scanCount the sum over its products; a replayed batch, or
 * a crash between any two transactions of a batch followed by a replay
 * from the checkpoint, adds nothing; without the flag (and with the
 * embedded SQLite detector) the detector leaves scanCount alone.
 */
#include "test_ddb_fixture.h"

#define BRAND   "b-0042"
#define T0      "2026-06-20T10:00:00.000Z"
#define CREATED "2026-06-01T00:00:00.000Z"
#define SHARD   "shardId-0042"
#define NHOT    23 /* scans of the hot product */
#define NCOLD   5  /* scans of the other product */
#define NMANY   70 /* products of the crash scenario */

static double attr_of(struct fx *f, const char *pk, const char *sk, const char *attr)
{
    cJSON *it = NULL;
    double v;

    assert_int_equal(store_get(f->s, pk, sk, true, &it), 0);
    v = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(it, attr));
    cJSON_Delete(it);
    return v;
}

static double product_scans(struct fx *f, const char *pid)
{
    struct key pk;
    return attr_of(f, key_product_pk(&pk, pid), KEY_SK_META, "scanCount");
}

/* Brand STATS scanCount (0 when the item or the attribute is absent). */
static double brand_scans(struct fx *f)
{
    struct key pk;
    cJSON *it = NULL;
    double v = 0;
    int rc = store_get(f->s, key_brand_pk(&pk, BRAND), KEY_SK_STATS, true, &it);
    if (rc == ERR_NOTFOUND)
        return 0;
    assert_int_equal(rc, 0);
    if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(it, "scanCount")))
        v = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(it, "scanCount"));
    cJSON_Delete(it);
    return v;
}

/* NHOT scans of "hot" within an hour (a burst alert, so the brand's
 * threatCount moves in the same transactions as its scanCount),
 * interleaved with NCOLD scans of "cold", a scan of an unknown product
 * (parked, not counted) and a MODIFY (ignored). */
static void write_two(struct fx *f)
{
    char ts[ISO_LEN + 1];

    fx_product(f, "hot", BRAND, CREATED);
    fx_product(f, "cold", BRAND, CREATED);
    for (int i = 0; i < NHOT; i++) {
        fx_scan(f, "hot", fx_ts(ts, T0, 2 * i), "US");
        if (i < NCOLD)
            fx_scan(f, "cold", fx_ts(ts, T0, 2 * i + 1), "US");
    }
    fx_scan(f, "ghost", fx_ts(ts, T0, 1), "US");
    fx_product(f, "cold", BRAND, CREATED); /* MODIFY, scanCount 0 again */
}

static void t_counts_exact_in_batches(void **state)
{
    struct fx *f = *state;
    const size_t batches[] = {1, 3, 7, 1000};

    for (size_t b = 0; b < sizeof(batches) / sizeof(batches[0]); b++) {
        struct ddbs_record *recs;
        struct det_proc_counts sum = {0};
        size_t n;

        if (b) {
            fx_close(f);
            fx_open(f);
        }
        write_two(f);
        recs = fxd_records(f, SHARD, &n);
        assert_int_equal(fxd_apply_all(f, true, SHARD, recs, n, batches[b], NULL, NULL, &sum), 0);
        assert_int_equal(sum.scans, NHOT + NCOLD);
        assert_true(product_scans(f, "hot") == NHOT);
        /* The MODIFY reset the stored count before the detector ran:
         * the fold lands on top of it. */
        assert_true(product_scans(f, "cold") == NCOLD);
        assert_true(brand_scans(f) == NHOT + NCOLD);
        assert_true(fx_threat_count(f, BRAND) == 1); /* the burst alert */

        /* The same records again (a replay after a crash that lost the
         * checkpoint): nothing is counted twice. */
        memset(&sum, 0, sizeof(sum));
        assert_int_equal(fxd_apply_all(f, true, SHARD, recs, n, batches[b], NULL, NULL, &sum), 0);
        assert_int_equal(sum.scans, 0);
        assert_int_equal(sum.replayed, NHOT + NCOLD);
        assert_true(product_scans(f, "hot") == NHOT);
        assert_true(product_scans(f, "cold") == NCOLD);
        assert_true(brand_scans(f) == NHOT + NCOLD);
        assert_true(fx_threat_count(f, BRAND) == 1);
        ddbs_records_free(recs, n);
    }
}

/* One replayed batch in the middle of a run adds nothing. */
static void t_replayed_batch(void **state)
{
    struct fx *f = *state;
    struct ddbs_record *recs;
    struct det_proc_counts sum = {0};
    size_t n;

    write_two(f);
    recs = fxd_records(f, SHARD, &n);
    assert_true(n > 12);
    assert_int_equal(fxd_apply_all(f, true, SHARD, recs, 12, 6, NULL, NULL, NULL), 0);
    double hot = product_scans(f, "hot"), all = brand_scans(f);
    assert_true(hot > 0 && all > hot);
    /* The second batch again. */
    assert_int_equal(fxd_apply_all(f, true, SHARD, recs + 6, 6, 6, NULL, NULL, &sum), 0);
    assert_int_equal(sum.scans, 0);
    assert_true(product_scans(f, "hot") == hot);
    assert_true(brand_scans(f) == all);
    assert_int_equal(fxd_apply_all(f, true, SHARD, recs + 12, n - 12, 6, NULL, NULL, NULL), 0);
    assert_true(product_scans(f, "hot") == NHOT);
    assert_true(brand_scans(f) == NHOT + NCOLD);
    ddbs_records_free(recs, n);
}

/* NMANY products scanned from 3 countries: one big batch needs several
 * transactions (each product's unit holds its state, alert, dedup item,
 * META scanCount and the brand's folded STATS update). */
static void write_many(struct fx *f)
{
    char pid[16], ts[ISO_LEN + 1];
    const char *cc[3] = {"US", "FR", "JP"};

    for (int i = 0; i < NMANY; i++) {
        snprintf(pid, sizeof(pid), "m%03d", i);
        fx_product(f, pid, BRAND, CREATED);
    }
    for (int c = 0; c < 3; c++)
        for (int i = 0; i < NMANY; i++) {
            snprintf(pid, sizeof(pid), "m%03d", i);
            fx_scan(f, pid, fx_ts(ts, T0, 10 * c + i * 0.01), cc[c]);
        }
}

static void check_many(struct fx *f)
{
    char pid[16];
    for (int i = 0; i < NMANY; i++) {
        snprintf(pid, sizeof(pid), "m%03d", i);
        assert_true(product_scans(f, pid) == 3);
    }
    assert_true(brand_scans(f) == 3 * NMANY);
    assert_true(fx_threat_count(f, BRAND) == NMANY);
}

/* A crash before each transaction of a batch, then a replay from the
 * checkpoint: the counts are exact. */
static void t_crash_between_groups(void **state)
{
    struct fx *f = *state;
    struct ddbs_record *recs;
    struct fxd_crash probe = {0};
    size_t n, ngroups;

    write_many(f);
    recs = fxd_records(f, SHARD, &n);
    assert_int_equal(fxd_apply_all(f, true, SHARD, recs, n, n, NULL, &probe, NULL), 0);
    ngroups = probe.ngroups;
    assert_true(ngroups >= 3);
    check_many(f);
    ddbs_records_free(recs, n);

    for (size_t at = 1; at < ngroups; at++) {
        struct fxd_crash cr = {.at = at};
        struct det_proc_counts sum = {0};
        fx_close(f);
        fx_open(f);
        write_many(f);
        recs = fxd_records(f, SHARD, &n);
        assert_int_equal(fxd_apply_all(f, true, SHARD, recs, n, n, NULL, &cr, NULL), ERR_IO);
        /* Not all of the counts landed. */
        assert_true(brand_scans(f) < 3 * NMANY);
        /* No checkpoint moved: restart from the beginning. */
        assert_int_equal(fxd_apply_all(f, true, SHARD, recs, n, 50, NULL, NULL, &sum), 0);
        assert_true(sum.replayed > 0);
        assert_int_equal(sum.scans + sum.replayed, 3 * NMANY);
        check_many(f);
        ddbs_records_free(recs, n);
    }
}

/* Without the flag, and with the embedded (SQLite) detector, the
 * detector does not touch scanCount: the request path counts there. */
static void t_flag_off(void **state)
{
    struct fx *f = *state;
    struct ddbs_record *recs;
    struct detector *d;
    size_t n;

    assert_false(store_counters_by_detector(f->s));
    write_two(f);
    recs = fxd_records(f, SHARD, &n);
    assert_int_equal(fxd_apply_all(f, false, SHARD, recs, n, 7, NULL, NULL, NULL), 0);
    assert_true(product_scans(f, "hot") == 0);
    assert_true(brand_scans(f) == 0);
    assert_true(fx_threat_count(f, BRAND) == 1);
    ddbs_records_free(recs, n);

    fx_close(f);
    fx_open(f);
    write_two(f);
    d = fx_detector(f, 5);
    assert_true(fx_run(d) > 0);
    detector_free(d);
    assert_true(product_scans(f, "hot") == 0);
    assert_true(brand_scans(f) == 0);
    assert_true(fx_threat_count(f, BRAND) == 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(t_counts_exact_in_batches, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_replayed_batch, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_crash_between_groups, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(t_flag_off, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
