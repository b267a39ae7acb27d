/*
 * test_dlq_replay.c - replaying dead letters (detect/dlq_replay.h): a
 * record parked because its product was missing is refused while the
 * cause remains (nothing written, the dead letter stays), and once the
 * product exists it is processed exactly like the consumer would have
 * (alert, threatCount, ops log), its dead letter is deleted and the
 * checkpoint does not move; records ahead of the checkpoint and dead
 * letters without an image are refused.
 */
#include "test_detect_fixture.h"

#include "detect/checks.h"
#include "detect/dlq.h"
#include "detect/dlq_replay.h"
#include "store/ddb_streams.h"

#define BRAND "5019622c-9860-4b83-a5c6-adb82ebd0412"
#define PID   "e084595c97320cfcc85309943f345760"
#define DAY   "2026-06-21"

static struct det_proc_cfg proc_cfg(struct fx *f)
{
    struct det_proc_cfg c = {
        .s = f->s,
        .reader = "ignored",
        .velocity = {.min_total = DET_VELOCITY_MIN_TOTAL, .min_rate = DET_VELOCITY_MIN_RATE},
        .now_ms = FX_NOW_MS,
    };
    return c;
}

static cJSON *dead_letters(struct fx *f)
{
    cJSON *dl = NULL;
    assert_int_equal(dlq_list(f->s, DAY, 100, &dl), 0);
    return dl;
}

/* Parks one tampered scan of PID (whose META does not exist yet). */
static cJSON *park_one(struct fx *f)
{
    struct detector *d = fx_detector(f, 10);
    struct detector_stats st;
    cJSON *dl;

    fx_scan_full(f, PID, "2026-06-20T10:00:00.000Z", "US", "198.51.100.7", "UA", "suspicious");
    fx_run(d);
    detector_get_stats(d, &st);
    assert_int_equal(st.dlq_parked, 1);
    detector_free(d);
    dl = dead_letters(f);
    assert_int_equal(cJSON_GetArraySize(dl), 1);
    return dl;
}

static void replay_in_batch(struct fx *f, const cJSON *item, struct dlq_replay_result *res,
                            int want_rc)
{
    struct det_proc_cfg c = proc_cfg(f);
    assert_int_equal(store_batch_begin(f->s), 0);
    assert_int_equal(dlq_replay_item(&c, item, res), want_rc);
    assert_int_equal(store_batch_commit(f->s), 0);
}

static void test_refused_then_replayed(void **state)
{
    (void)state;
    struct fx f;
    struct dlq_replay_result res;
    uint64_t cp_before = 0, cp_after = 0;
    cJSON *dl, *alerts, *ops;

    fx_open(&f);
    dl = park_one(&f);
    assert_int_equal(store_checkpoint_get(f.s, DETECTOR_READER_DEFAULT, &cp_before), 0);

    /* still no product: refused, nothing written */
    replay_in_batch(&f, cJSON_GetArrayItem(dl, 0), &res, 0);
    assert_false(res.replayed);
    assert_non_null(strstr(res.error, "still cannot be processed"));
    assert_true(res.seq > 0);
    alerts = fx_alerts(&f, BRAND);
    assert_int_equal(cJSON_GetArraySize(alerts), 0);
    cJSON_Delete(alerts);
    {
        cJSON *again = dead_letters(&f);
        assert_int_equal(cJSON_GetArraySize(again), 1);
        cJSON_Delete(again);
    }

    /* fixed: the replay raises the alert and removes the dead letter */
    fx_product(&f, PID, BRAND, "2026-06-01T00:00:00.000Z");
    replay_in_batch(&f, cJSON_GetArrayItem(dl, 0), &res, 0);
    assert_true(res.replayed);
    assert_int_equal(res.counts.scans, 1);
    assert_int_equal(res.counts.alerts_created, 1);
    assert_int_equal(res.counts.opslog, 1);
    alerts = fx_alerts(&f, BRAND);
    assert_int_equal(cJSON_GetArraySize(alerts), 1);
    assert_string_equal(fx_str(cJSON_GetArrayItem(alerts, 0), "type"), "hash_tampering");
    assert_string_equal(fx_str(cJSON_GetArrayItem(alerts, 0), "severity"), "critical");
    assert_string_equal(fx_str(cJSON_GetArrayItem(alerts, 0), "productId"), PID);
    cJSON_Delete(alerts);
    assert_true(fx_threat_count(&f, BRAND) == 1);
    ops = fx_opslog(&f, "2026-06-20");
    assert_int_equal(cJSON_GetArraySize(ops), 1);
    cJSON_Delete(ops);
    {
        cJSON *none = dead_letters(&f);
        assert_int_equal(cJSON_GetArraySize(none), 0);
        cJSON_Delete(none);
    }
    assert_int_equal(store_checkpoint_get(f.s, DETECTOR_READER_DEFAULT, &cp_after), 0);
    assert_true(cp_after == cp_before);

    /* the same dead letter again: processing would count the scan twice,
     * but it is gone, and the detector itself never sees it again */
    {
        struct detector *d = fx_detector(&f, 10);
        struct detector_stats st;
        fx_run(d);
        detector_get_stats(d, &st);
        assert_int_equal(st.alerts_created, 0);
        detector_free(d);
    }
    assert_true(fx_threat_count(&f, BRAND) == 1);
    cJSON_Delete(dl);
    fx_close(&f);
}

static void test_ahead_of_checkpoint_refused(void **state)
{
    (void)state;
    struct fx f;
    struct dlq_replay_result res;
    struct stream_record r = {0};
    cJSON *img, *item, *alerts;

    fx_open(&f);
    fx_product(&f, PID, BRAND, "2026-06-01T00:00:00.000Z");
    img = cJSON_CreateObject();
    cJSON_AddStringToObject(img, "PK", "PRODUCT#" PID);
    cJSON_AddStringToObject(img, "SK", "SCAN#2026-06-20T10:00:00.000Z#00000001");
    cJSON_AddStringToObject(img, "timestamp", "2026-06-20T10:00:00.000Z");
    cJSON_AddStringToObject(img, "result", "suspicious");
    r.seq = 1000; /* the checkpoint is 0 */
    r.ts_ms = FX_NOW_MS;
    r.kind = STORE_INSERT;
    r.pk = "PRODUCT#" PID;
    r.sk = "SCAN#2026-06-20T10:00:00.000Z#00000001";
    r.image = img;
    item = dlq_item_new(&r, DETECTOR_READER_DEFAULT, "test", 1, FX_NOW_MS);
    assert_non_null(item);
    replay_in_batch(&f, item, &res, 0);
    assert_false(res.replayed);
    assert_int_equal(res.seq, 1000);
    assert_non_null(strstr(res.error, "ahead of the reader's checkpoint"));
    alerts = fx_alerts(&f, BRAND);
    assert_int_equal(cJSON_GetArraySize(alerts), 0);
    cJSON_Delete(alerts);

    /* no image kept: refused */
    cJSON_ReplaceItemInObjectCaseSensitive(item, "image", cJSON_CreateNull());
    replay_in_batch(&f, item, &res, 0);
    assert_false(res.replayed);
    assert_non_null(strstr(res.error, "image was not kept"));

    /* malformed dead letter */
    cJSON_DeleteItemFromObjectCaseSensitive(item, "seq");
    replay_in_batch(&f, item, &res, 0);
    assert_false(res.replayed);
    assert_non_null(strstr(res.error, "malformed"));

    cJSON_Delete(item);
    cJSON_Delete(img);
    fx_close(&f);
}

static double attr_num(struct fx *f, const char *pk, const char *sk, const char *attr)
{
    cJSON *it = NULL;
    double n = -1;
    if (store_get(f->s, pk, sk, true, &it) == 0)
        n = cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(it, attr))
                ? cJSON_GetObjectItemCaseSensitive(it, attr)->valuedouble
                : -1;
    cJSON_Delete(it);
    return n;
}

/* The Streams detector's checkpoint of one shard (ddb_detector.c's item). */
static void shard_checkpoint(struct fx *f, const char *reader, const char *shard, const char *seq)
{
    struct key pk;
    cJSON *it = cJSON_CreateObject();
    cJSON_AddStringToObject(it, "PK", key_checkpoint_pk(&pk, reader));
    cJSON_AddStringToObject(it, "SK", shard);
    cJSON_AddStringToObject(it, "seq", seq);
    cJSON_AddFalseToObject(it, "finished");
    assert_int_equal(store_put(f->s, it, NULL), 0);
    cJSON_Delete(it);
}

/* A dead letter of the Streams detector (DynamoDB): it carries its stream
 * position, is behind its reader once that shard's checkpoint covers the
 * position, and with counters folded by the detector its replay counts
 * the scan in the product's and the brand's scanCount, keeps the window
 * state's position and deletes the dead letter in the same transaction. */
static void test_streams_dead_letter(void **state)
{
    (void)state;
    struct fx f;
    struct dlq_replay_result res;
    struct ddbs_record rec;
    struct key ppk, bpk;
    char pos[DET_POS_MAX + 1], mark[DET_POS_MAX + 1];
    cJSON *item, *st;

    fx_open(&f);
    fx_product(&f, PID, BRAND, "2026-06-01T00:00:00.000Z");
    key_product_pk(&ppk, PID);
    key_brand_pk(&bpk, BRAND);
    assert_true(det_pos_format(mark, "shardId-A", "300000000000000499900"));
    /* the product's window state, written by a later batch of the shard */
    st = cJSON_CreateObject();
    cJSON_AddStringToObject(st, "PK", ppk.s);
    cJSON_AddStringToObject(st, "SK", KEY_SK_DETSTATE);
    cJSON_AddStringToObject(st, "detPos", mark);
    assert_int_equal(store_put(f.s, st, NULL), 0);
    cJSON_Delete(st);

    /* as DynamoDB Streams delivers it: a 21-digit sequence number */
    cJSON *sr = cJSON_Parse("{\"eventName\":\"INSERT\",\"dynamodb\":{"
                            "\"Keys\":{\"PK\":{\"S\":\"PRODUCT#" PID
                            "\"},\"SK\":{\"S\":\"SCAN#2026-06-20T10:00:00.000Z#5\"}},"
                            "\"NewImage\":{\"PK\":{\"S\":\"PRODUCT#" PID
                            "\"},\"SK\":{\"S\":\"SCAN#2026-06-20T10:00:00.000Z#5\"},"
                            "\"productId\":{\"S\":\"" PID
                            "\"},\"timestamp\":{\"S\":\"2026-06-20T10:00:00.000Z\"},"
                            "\"country\":{\"S\":\"US\"},\"result\":{\"S\":\"suspicious\"}},"
                            "\"SequenceNumber\":\"300000000000000499659\"}}");
    assert_non_null(sr);
    assert_int_equal(ddbs_record_from_json(sr, "shardId-A", &rec), 0);
    cJSON_Delete(sr);
    memcpy(pos, rec.pos, strlen(rec.pos) + 1);
    item = dlq_item_new(&rec.r, "streams", "product not found (or without brandId)", 1, FX_NOW_MS);
    assert_non_null(item);
    /* exact as a JSON number, so that {"seq": n} finds it */
    assert_true(cJSON_GetObjectItemCaseSensitive(item, "seq")->valuedouble <= 9007199254740992.0);
    cJSON_AddStringToObject(item, "streamPos", pos);
    assert_int_equal(store_put(f.s, item, NULL), 0);

    struct det_proc_cfg c = proc_cfg(&f);
    c.fold_scan_counts = true;

    /* no checkpoint of the shard, then one before the record: ahead */
    assert_int_equal(dlq_replay_item(&c, item, &res), 0);
    assert_false(res.replayed);
    assert_non_null(strstr(res.error, "ahead of the reader's checkpoint"));
    shard_checkpoint(&f, "streams", "shardId-A", "300000000000000499658");
    assert_int_equal(dlq_replay_item(&c, item, &res), 0);
    assert_false(res.replayed);
    /* another shard's checkpoint does not count */
    shard_checkpoint(&f, "streams", "shardId-B", "99");
    assert_int_equal(dlq_replay_item(&c, item, &res), 0);
    assert_false(res.replayed);
    assert_true(fx_threat_count(&f, BRAND) == 0);

    /* the shard's checkpoint past it: replayed */
    shard_checkpoint(&f, "streams", "shardId-A", "300000000000000499700");
    assert_int_equal(dlq_replay_item(&c, item, &res), 0);
    assert_true(res.replayed);
    assert_int_equal(res.counts.alerts_created, 1);
    assert_true(fx_threat_count(&f, BRAND) == 1);
    assert_true(attr_num(&f, ppk.s, KEY_SK_META, "scanCount") == 1);
    assert_true(attr_num(&f, bpk.s, KEY_SK_STATS, "scanCount") == 1);
    {
        cJSON *ds = NULL;
        assert_int_equal(store_get(f.s, ppk.s, KEY_SK_DETSTATE, true, &ds), 0);
        assert_string_equal(fx_str(ds, "detPos"), mark);
        cJSON_Delete(ds);
        cJSON *d = NULL;
        assert_int_equal(store_get(f.s, fx_str(item, "PK"), fx_str(item, "SK"), true, &d),
                         ERR_NOTFOUND);
    }
    cJSON_Delete(item);
    ddbs_record_clear(&rec);
    fx_close(&f);
}

/* A dead letter of the Streams detector for the record of sequence
 * number seq (21 digits) in shard. */
static cJSON *streams_letter(const char *shard, const char *seq)
{
    char buf[1024];
    struct ddbs_record rec;
    snprintf(buf, sizeof buf,
             "{\"eventName\":\"INSERT\",\"dynamodb\":{"
             "\"Keys\":{\"PK\":{\"S\":\"PRODUCT#p\"},\"SK\":{\"S\":\"SCAN#x\"}},"
             "\"NewImage\":{\"PK\":{\"S\":\"PRODUCT#p\"},\"SK\":{\"S\":\"SCAN#x\"}},"
             "\"SequenceNumber\":\"%s\"}}",
             seq);
    cJSON *sr = cJSON_Parse(buf);
    assert_int_equal(ddbs_record_from_json(sr, shard, &rec), 0);
    cJSON_Delete(sr);
    cJSON *item = dlq_item_new(&rec.r, "streams", "e", 1, FX_NOW_MS);
    assert_non_null(item);
    cJSON_AddStringToObject(item, "streamPos", rec.pos);
    ddbs_record_clear(&rec);
    return item;
}

/* Replays keep the stream's order: for DynamoDB's long sequence numbers
 * seq is a hash, so the order is the stream position's. */
static void test_replay_order(void **state)
{
    (void)state;
    char sa[32], sb[32];
    cJSON *a = NULL, *b = NULL;
    /* two records of one shard, a before b, whose seq hashes disagree */
    for (int i = 1; i < 1000 && !a; i++) {
        snprintf(sa, sizeof sa, "3000000000000004%05d", i);
        snprintf(sb, sizeof sb, "3000000000000004%05d", i + 1);
        cJSON *x = streams_letter("shardId-A", sa), *y = streams_letter("shardId-A", sb);
        if (cJSON_GetObjectItemCaseSensitive(x, "seq")->valuedouble >
            cJSON_GetObjectItemCaseSensitive(y, "seq")->valuedouble) {
            a = x;
            b = y;
        } else {
            cJSON_Delete(x);
            cJSON_Delete(y);
        }
    }
    assert_non_null(a);
    const cJSON *v[2] = {b, a};
    qsort(v, 2, sizeof *v, dlq_stream_order);
    assert_ptr_equal(v[0], a);
    assert_ptr_equal(v[1], b);
    /* across shards: the sequence number first */
    cJSON *c = streams_letter("shardId-0", "300000000000000500000");
    const cJSON *w[3] = {c, b, a};
    qsort(w, 3, sizeof *w, dlq_stream_order);
    assert_ptr_equal(w[0], a);
    assert_ptr_equal(w[1], b);
    assert_ptr_equal(w[2], c);
    /* without stream positions (the SQLite stream): by seq */
    cJSON *p = cJSON_CreateObject(), *q = cJSON_CreateObject();
    cJSON_AddNumberToObject(p, "seq", 7);
    cJSON_AddNumberToObject(q, "seq", 5);
    const cJSON *u[2] = {p, q};
    qsort(u, 2, sizeof *u, dlq_stream_order);
    assert_ptr_equal(u[0], q);
    cJSON_Delete(a);
    cJSON_Delete(b);
    cJSON_Delete(c);
    cJSON_Delete(p);
    cJSON_Delete(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refused_then_replayed),
        cmocka_unit_test(test_ahead_of_checkpoint_refused),
        cmocka_unit_test(test_streams_dead_letter),
        cmocka_unit_test(test_replay_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
