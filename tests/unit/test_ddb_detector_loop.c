/*
 * test_ddb_detector_loop.c - the DynamoDB Streams detector's loop against
 * a fake Streams endpoint (mini_httpd) and a SQLite store: DescribeStream
 * pages, shard lineage (the child shard is read only after its closed
 * parent is finished), recovery from an ExpiredIteratorException through
 * AFTER_SEQUENCE_NUMBER the checkpoint, and exact alerts; and two workers
 * on four shards: the first takes them all, gives back what is above its
 * fair share once the second is alive, and every record is processed once.
 */
#include "test_detect_fixture.h"

#include <pthread.h>

#include "core/keys.h"
#include "core/webhook.h"
#include "detect/ddb_detector.h"
#include "mini_httpd.h"
#include "util/timescale.h"

#define BRAND "b-0001"
#define T0    "2026-06-20T10:00:00.000Z"

struct fake {
    pthread_mutex_t mu;
    bool parent_done;   /* the parent's last GetRecords was served */
    bool lineage_error; /* the child was touched before that */
    bool expired_sent;
    char after_seq[64]; /* SequenceNumber of the AFTER_SEQUENCE_NUMBER request */
    int describe_pages;
};

static void add_record(cJSON *arr, const char *pid, unsigned seq, double minutes,
                       const char *country)
{
    char ts[ISO_LEN + 1], sk[96], seqs[24], id[16];
    cJSON *r = cJSON_CreateObject(), *db, *keys, *img;

    fx_ts(ts, T0, minutes);
    snprintf(id, sizeof(id), "s%u", seq);
    snprintf(sk, sizeof(sk), "SCAN#%s#%s", ts, id);
    snprintf(seqs, sizeof(seqs), "%u", seq);
    cJSON_AddStringToObject(r, "eventName", "INSERT");
    db = cJSON_AddObjectToObject(r, "dynamodb");
    cJSON_AddNumberToObject(db, "ApproximateCreationDateTime", 1782000000);
    cJSON_AddStringToObject(db, "SequenceNumber", seqs);
    keys = cJSON_AddObjectToObject(db, "Keys");
    img = cJSON_AddObjectToObject(db, "NewImage");
    for (int k = 0; k < 2; k++) {
        cJSON *o = k ? img : keys;
        char pk[64];
        snprintf(pk, sizeof(pk), "PRODUCT#%s", pid);
        cJSON_AddObjectToObject(o, "PK");
        cJSON_AddStringToObject(cJSON_GetObjectItem(o, "PK"), "S", pk);
        cJSON_AddObjectToObject(o, "SK");
        cJSON_AddStringToObject(cJSON_GetObjectItem(o, "SK"), "S", sk);
    }
    {
        const char *names[] = {"productId", "timestamp", "country", "ip", "userAgent", "result"};
        const char *vals[] = {pid, ts, country, "198.51.100.1", "Mozilla/5.0", "authentic"};
        for (int k = 0; k < 6; k++) {
            cJSON *v = cJSON_AddObjectToObject(img, names[k]);
            cJSON_AddStringToObject(v, "S", vals[k]);
        }
    }
    cJSON_AddItemToArray(arr, r);
}

static void reply_json(int fd, cJSON *o)
{
    char *text = cJSON_PrintUnformatted(o);
    mini_reply(fd, 200, "application/x-amz-json-1.0", text);
    free(text);
    cJSON_Delete(o);
}

static void handler(void *arg, const struct mini_req *req, int fd)
{
    struct fake *fk = arg;
    char target[128] = "";
    cJSON *body = cJSON_Parse(req->body), *out = cJSON_CreateObject();
    const char *it = cJSON_GetStringValue(cJSON_GetObjectItem(body, "ShardIterator"));
    const char *shard = cJSON_GetStringValue(cJSON_GetObjectItem(body, "ShardId"));

    mini_header(req, "X-Amz-Target", target, sizeof(target));
    pthread_mutex_lock(&fk->mu);
    if (strstr(target, "DescribeTable")) {
        cJSON *t = cJSON_AddObjectToObject(out, "Table");
        cJSON_AddStringToObject(t, "LatestStreamArn", "arn:aws:dynamodb:local:0:table/t/stream/x");
    } else if (strstr(target, "DescribeStream")) {
        cJSON *d = cJSON_AddObjectToObject(out, "StreamDescription");
        cJSON *arr = cJSON_AddArrayToObject(d, "Shards"), *s, *range;
        const char *start =
            cJSON_GetStringValue(cJSON_GetObjectItem(body, "ExclusiveStartShardId"));
        fk->describe_pages++;
        s = cJSON_CreateObject();
        range = cJSON_AddObjectToObject(s, "SequenceNumberRange");
        if (!start) { /* page 1: the child (listed first on purpose) */
            cJSON_AddStringToObject(s, "ShardId", "shard-child");
            cJSON_AddStringToObject(s, "ParentShardId", "shard-parent");
            cJSON_AddStringToObject(range, "StartingSequenceNumber", "200");
            cJSON_AddStringToObject(d, "LastEvaluatedShardId", "shard-child");
        } else { /* page 2: the closed parent */
            cJSON_AddStringToObject(s, "ShardId", "shard-parent");
            cJSON_AddStringToObject(range, "StartingSequenceNumber", "100");
            cJSON_AddStringToObject(range, "EndingSequenceNumber", "102");
        }
        cJSON_AddItemToArray(arr, s);
    } else if (strstr(target, "GetShardIterator")) {
        const char *after = cJSON_GetStringValue(cJSON_GetObjectItem(body, "SequenceNumber"));
        char iter[96];
        if (shard && strcmp(shard, "shard-child") == 0 && !fk->parent_done)
            fk->lineage_error = true;
        if (after)
            snprintf(fk->after_seq, sizeof(fk->after_seq), "%s", after);
        snprintf(iter, sizeof(iter), "%s|%s", shard ? shard : "?", after ? after : "H");
        cJSON_AddStringToObject(out, "ShardIterator", iter);
    } else if (strstr(target, "GetRecords") && it) {
        cJSON *recs = cJSON_AddArrayToObject(out, "Records");
        if (strcmp(it, "shard-parent|H") == 0) {
            add_record(recs, "p1", 100, 0, "US");
            add_record(recs, "p1", 101, 10, "FR");
            cJSON_AddStringToObject(out, "NextShardIterator", "shard-parent|next");
        } else if (strcmp(it, "shard-parent|next") == 0) {
            fk->expired_sent = true;
            pthread_mutex_unlock(&fk->mu);
            cJSON_Delete(out);
            cJSON_Delete(body);
            mini_reply(fd, 400, "application/x-amz-json-1.0",
                       "{\"__type\":\"com.amazonaws.dynamodb.v20120810#ExpiredIteratorException\","
                       "\"message\":\"Iterator expired\"}");
            return;
        } else if (strcmp(it, "shard-parent|101") == 0) {
            add_record(recs, "p1", 102, 20, "JP"); /* closed: no next iterator */
            fk->parent_done = true;
        } else if (strcmp(it, "shard-child|H") == 0) {
            for (unsigned i = 0; i < 12; i++)
                add_record(recs, "p2", 200 + i, 2.0 * i, "US");
            cJSON_AddStringToObject(out, "NextShardIterator", "shard-child|tail");
        } else {
            cJSON_AddStringToObject(out, "NextShardIterator", it);
        }
    }
    pthread_mutex_unlock(&fk->mu);
    cJSON_Delete(body);
    reply_json(fd, out);
}

/* The detector's wake-up of this process's work-item takers. */
static void count_work(void *arg)
{
    (*(int *)arg)++;
}

static void t_loop(void **state)
{
    struct fx f;
    struct fake fk = {.mu = PTHREAD_MUTEX_INITIALIZER};
    struct mini_httpd *srv;
    struct ddb_detector *d;
    struct ddb_detector_stats st;
    char url[64], err[256], seq[DDBS_SEQ_MAX + 1];
    bool fin, found;
    cJSON *alerts, *pending;
    int rounds, woken = 0;
    (void)state;

    fx_open(&f);
    fx_product(&f, "p1", BRAND, "2026-06-01T00:00:00.000Z");
    fx_product(&f, "p2", BRAND, "2026-06-01T00:00:00.000Z");
    /* a scan webhook of the brand: every scan read leaves a delivery */
    fx_put(&f, webhook_item_new(&(struct webhook_fields){.id = "w-1",
                                                         .brand_id = BRAND,
                                                         .url = "https://example.com/hook",
                                                         .events = WEBHOOK_EV_SCAN,
                                                         .created_at = "2020-01-01T00:00:00.000Z",
                                                         .secret = "whsec_test"}));
    setenv("AWS_ACCESS_KEY_ID", "test", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "test", 1);
    setenv("AWS_REGION", "us-east-1", 1);
    srv = mini_httpd_start(handler, &fk);
    assert_non_null(srv);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", mini_httpd_port(srv));

    struct ddb_detector_config c = {.s = f.s,
                                    .endpoint = url,
                                    .table = "t",
                                    .worker_id = "w1",
                                    .clock_ms = fx_clock,
                                    .on_work = count_work,
                                    .on_work_arg = &woken};
    d = ddb_detector_new(&c, err, sizeof(err));
    assert_non_null(d);
    for (rounds = 0; rounds < 400; rounds++) {
        size_t n = 0;
        (void)ddb_detector_step(d, &n);
        ddb_detector_get_stats(d, &st);
        if (st.scans == 15 && st.shards_finished >= 1)
            break;
        usleep(2000);
    }
    assert_true(rounds < 400);
    assert_true(fk.describe_pages >= 2);
    assert_true(fk.expired_sent);
    assert_string_equal(fk.after_seq, "101");
    assert_false(fk.lineage_error);
    assert_int_equal(
        ddbd_checkpoint_get(f.s, DDBD_READER_DEFAULT, "shard-parent", seq, &fin, &found), 0);
    assert_true(fin);
    assert_string_equal(seq, "102");
    assert_int_equal(
        ddbd_checkpoint_get(f.s, DDBD_READER_DEFAULT, "shard-child", seq, &fin, &found), 0);
    assert_false(fin);
    assert_string_equal(seq, "211");
    alerts = fx_alerts(&f, BRAND);
    assert_int_equal(fx_count_eq(alerts, "type", "geographic_anomaly"), 1);
    assert_int_equal(fx_count_eq(alerts, "type", "burst_scan"), 1);
    assert_true(fx_num(fx_find(alerts, "type", "burst_scan"), "count") == 3);
    assert_true(fx_threat_count(&f, BRAND) == 2);
    cJSON_Delete(alerts);
    /* one delivery per scan, and this process's takers were woken for
     * the batches that wrote them */
    pending = fx_query_all(&f, STORE_INDEX_GSI1, KEY_GSI1PK_DELIVERY_PENDING, STORE_SK_ANY, NULL);
    assert_int_equal(cJSON_GetArraySize(pending), 15);
    cJSON_Delete(pending);
    assert_true(st.work_items == 15);
    assert_true(woken >= 2 && woken <= (int)st.batches); /* two shards at least */

    ddb_detector_free(d);
    mini_httpd_stop(srv);
    fx_close(&f);
}

/* Four open shards s0..s3, three scans each (product q<i>, three
 * countries: one geographic alert per product), then nothing more. */
static void split_handler(void *arg, const struct mini_req *req, int fd)
{
    (void)arg;
    char target[128] = "";
    cJSON *body = cJSON_Parse(req->body), *out = cJSON_CreateObject();
    const char *it = cJSON_GetStringValue(cJSON_GetObjectItem(body, "ShardIterator"));
    const char *shard = cJSON_GetStringValue(cJSON_GetObjectItem(body, "ShardId"));

    mini_header(req, "X-Amz-Target", target, sizeof(target));
    if (strstr(target, "DescribeTable")) {
        cJSON *t = cJSON_AddObjectToObject(out, "Table");
        cJSON_AddStringToObject(t, "LatestStreamArn", "arn:aws:dynamodb:local:0:table/t/stream/y");
    } else if (strstr(target, "DescribeStream")) {
        cJSON *d = cJSON_AddObjectToObject(out, "StreamDescription");
        cJSON *arr = cJSON_AddArrayToObject(d, "Shards");
        for (int i = 0; i < 4; i++) {
            char id[16], start[24];
            cJSON *sh = cJSON_CreateObject();
            snprintf(id, sizeof id, "s%d", i);
            snprintf(start, sizeof start, "%d", 100 * (i + 1));
            cJSON_AddStringToObject(sh, "ShardId", id);
            cJSON_AddStringToObject(cJSON_AddObjectToObject(sh, "SequenceNumberRange"),
                                    "StartingSequenceNumber", start);
            cJSON_AddItemToArray(arr, sh);
        }
    } else if (strstr(target, "GetShardIterator")) {
        const char *after = cJSON_GetStringValue(cJSON_GetObjectItem(body, "SequenceNumber"));
        char iter[96];
        snprintf(iter, sizeof(iter), "%s|%s", shard ? shard : "?", after ? "tail" : "H");
        cJSON_AddStringToObject(out, "ShardIterator", iter);
    } else if (strstr(target, "GetRecords") && it) {
        cJSON *recs = cJSON_AddArrayToObject(out, "Records");
        int i = it[0] == 's' && it[1] >= '0' && it[1] <= '3' ? it[1] - '0' : -1;
        if (i >= 0 && strcmp(it + 2, "|H") == 0) {
            static const char *const cc[] = {"US", "FR", "JP"};
            char pid[16];
            snprintf(pid, sizeof pid, "q%d", i);
            for (unsigned k = 0; k < 3; k++)
                add_record(recs, pid, 100 * ((unsigned)i + 1) + k, 5.0 * k, cc[k]);
        }
        char next[32];
        snprintf(next, sizeof next, "%.2s|tail", it);
        cJSON_AddStringToObject(out, "NextShardIterator", next);
    }
    cJSON_Delete(body);
    reply_json(fd, out);
}

static void t_fair_split(void **state)
{
    struct fx f;
    struct mini_httpd *srv;
    struct ddb_detector *w[2];
    struct ddb_detector_stats st[2];
    char url[64], err[256];
    cJSON *alerts;
    (void)state;

    /* Lease 2 s, a listing every second.  The real clock: heartbeats
     * carry a TTL, which the store judges by its own (real) clock. */
    time_scale_set(0.2);
    fx_open(&f);
    for (int i = 0; i < 4; i++) {
        char pid[16];
        snprintf(pid, sizeof pid, "q%d", i);
        fx_product(&f, pid, BRAND, "2026-06-01T00:00:00.000Z");
    }
    setenv("AWS_ACCESS_KEY_ID", "test", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "test", 1);
    setenv("AWS_REGION", "us-east-1", 1);
    srv = mini_httpd_start(split_handler, NULL);
    assert_non_null(srv);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", mini_httpd_port(srv));
    for (int i = 0; i < 2; i++) {
        struct ddb_detector_config c = {
            .s = f.s, .endpoint = url, .table = "t", .worker_id = i ? "w2" : "w1"};
        w[i] = ddb_detector_new(&c, err, sizeof(err));
        assert_non_null(w[i]);
    }
    /* w1 alone first: it takes every shard */
    size_t n = 0;
    (void)ddb_detector_step(w[0], &n);
    ddb_detector_get_stats(w[0], &st[0]);
    assert_int_equal(st[0].shards_owned, 4);
    int64_t until = time_mono_ms() + 30000;
    bool done = false;
    while (!done && time_mono_ms() < until) {
        for (int i = 0; i < 2; i++) {
            (void)ddb_detector_step(w[i], &n);
            ddb_detector_get_stats(w[i], &st[i]);
        }
        done =
            st[0].shards_owned == 2 && st[1].shards_owned == 2 && st[0].scans + st[1].scans == 12;
        usleep(2000);
    }
    assert_true(done);
    assert_true(st[1].leases_taken >= 2);
    /* each record once: 12 scans in all, one alert per product */
    assert_int_equal(st[0].scans + st[1].scans, 12);
    alerts = fx_alerts(&f, BRAND);
    assert_int_equal(fx_count_eq(alerts, "type", "geographic_anomaly"), 4);
    assert_true(fx_threat_count(&f, BRAND) == 4);
    cJSON_Delete(alerts);

    ddb_detector_free(w[0]);
    ddb_detector_free(w[1]);
    mini_httpd_stop(srv);
    fx_close(&f);
    time_scale_set(1.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_loop),
        cmocka_unit_test(t_fair_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
