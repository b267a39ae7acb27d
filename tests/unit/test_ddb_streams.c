/*
 * test_ddb_streams.c - DynamoDB Streams without DynamoDB: conversion of
 * stream records into the detector's records (kinds, keys, NEW_IMAGE
 * attribute values, sequence numbers and positions, malformed input),
 * DescribeStream pages, shard lineage ordering, sequence comparison.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "store/ddb_streams.h"
#include "util/err.h"

static cJSON *parse(const char *text)
{
    cJSON *j = cJSON_Parse(text);
    assert_non_null(j);
    return j;
}

static void t_insert_record(void **state)
{
    struct ddbs_record r;
    const cJSON *v;
    cJSON *j = parse(
        "{\"eventID\":\"1\",\"eventName\":\"INSERT\",\"dynamodb\":{"
        "\"ApproximateCreationDateTime\":1782000000,"
        "\"Keys\":{\"PK\":{\"S\":\"PRODUCT#p1\"},\"SK\":{\"S\":\"SCAN#2026-06-20T10:00:00.000Z#a\"}"
        "},"
        "\"NewImage\":{\"PK\":{\"S\":\"PRODUCT#p1\"},\"SK\":{\"S\":\"SCAN#2026-06-20T10:00:00.000Z#"
        "a\"},"
        "\"country\":{\"S\":\"FR\"},\"n\":{\"N\":\"42.5\"},\"ok\":{\"BOOL\":true},"
        "\"tags\":{\"L\":[{\"S\":\"x\"},{\"NULL\":true}]},\"m\":{\"M\":{\"k\":{\"N\":\"1\"}}}},"
        "\"SequenceNumber\":\"000000000000000000042\",\"StreamViewType\":\"NEW_IMAGE\"}}");
    (void)state;

    assert_int_equal(ddbs_record_from_json(j, "shardId-1", &r), 0);
    assert_int_equal(r.r.kind, STORE_INSERT);
    assert_string_equal(r.r.pk, "PRODUCT#p1");
    assert_string_equal(r.r.sk, "SCAN#2026-06-20T10:00:00.000Z#a");
    assert_true(r.r.seq == 42);
    assert_true(r.r.ts_ms == 1782000000000LL);
    assert_string_equal(r.seq, "000000000000000000042");
    assert_string_equal(r.pos, "0000000000000000000000000000000000000042@shardId-1");
    assert_true(det_record_wanted(&r.r));
    v = cJSON_GetObjectItemCaseSensitive(r.r.image, "country");
    assert_string_equal(v->valuestring, "FR");
    v = cJSON_GetObjectItemCaseSensitive(r.r.image, "n");
    assert_true(cJSON_IsNumber(v) && v->valuedouble == 42.5);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r.r.image, "ok")));
    v = cJSON_GetObjectItemCaseSensitive(r.r.image, "tags");
    assert_int_equal(cJSON_GetArraySize(v), 2);
    assert_true(cJSON_IsNull(cJSON_GetArrayItem(v, 1)));
    v = cJSON_GetObjectItemCaseSensitive(r.r.image, "m");
    assert_true(cJSON_GetObjectItemCaseSensitive(v, "k")->valuedouble == 1);
    ddbs_record_clear(&r);
    cJSON_Delete(j);
}

static void t_modify_remove(void **state)
{
    struct ddbs_record r;
    cJSON *j = parse("{\"eventName\":\"REMOVE\",\"dynamodb\":{"
                     "\"Keys\":{\"PK\":{\"S\":\"PRODUCT#p1\"},\"SK\":{\"S\":\"META\"}},"
                     "\"SequenceNumber\":\"7\"}}");
    (void)state;

    assert_int_equal(ddbs_record_from_json(j, "s", &r), 0);
    assert_int_equal(r.r.kind, STORE_REMOVE);
    assert_null(r.r.image);
    assert_false(det_record_wanted(&r.r));
    ddbs_record_clear(&r);
    cJSON_Delete(j);

    j = parse("{\"eventName\":\"MODIFY\",\"dynamodb\":{"
              "\"Keys\":{\"PK\":{\"S\":\"PRODUCT#p1\"},\"SK\":{\"S\":\"SCAN#t#a\"}},"
              "\"NewImage\":{\"PK\":{\"S\":\"PRODUCT#p1\"},\"SK\":{\"S\":\"SCAN#t#a\"}},"
              "\"SequenceNumber\":\"8\"}}");
    assert_int_equal(ddbs_record_from_json(j, "s", &r), 0);
    assert_int_equal(r.r.kind, STORE_MODIFY);
    assert_non_null(r.r.image);
    assert_false(det_record_wanted(&r.r)); /* only inserts are checked */
    ddbs_record_clear(&r);
    cJSON_Delete(j);
}

static void t_big_sequence(void **state)
{
    struct ddbs_record a, b;
    cJSON *j1 = parse("{\"eventName\":\"INSERT\",\"dynamodb\":{"
                      "\"Keys\":{\"PK\":{\"S\":\"A\"},\"SK\":{\"S\":\"B\"}},"
                      "\"SequenceNumber\":\"111600000000012345678901234\"}}");
    cJSON *j2 = parse("{\"eventName\":\"INSERT\",\"dynamodb\":{"
                      "\"Keys\":{\"PK\":{\"S\":\"A\"},\"SK\":{\"S\":\"B\"}},"
                      "\"SequenceNumber\":\"111600000000012345678901235\"}}");
    (void)state;

    /* Past 2^53: a hash of 53 bits (exact as a JSON number, as a dead
     * letter's seq must be), distinct per sequence. */
    assert_int_equal(ddbs_record_from_json(j1, "s", &a), 0);
    assert_int_equal(ddbs_record_from_json(j2, "s", &b), 0);
    assert_true(a.r.seq != b.r.seq);
    assert_true(a.r.seq >= 1 && a.r.seq <= (1ULL << 53));
    assert_true(b.r.seq >= 1 && b.r.seq <= (1ULL << 53));
    assert_true(det_pos_covers(b.pos, a.pos));
    assert_false(det_pos_covers(a.pos, b.pos));
    ddbs_record_clear(&a);
    ddbs_record_clear(&b);
    cJSON_Delete(j1);
    cJSON_Delete(j2);

    /* 2^53 itself is kept; 2^53 + 1 (16 digits) is hashed into range */
    j1 = parse("{\"eventName\":\"INSERT\",\"dynamodb\":{"
               "\"Keys\":{\"PK\":{\"S\":\"A\"},\"SK\":{\"S\":\"B\"}},"
               "\"SequenceNumber\":\"9007199254740992\"}}");
    j2 = parse("{\"eventName\":\"INSERT\",\"dynamodb\":{"
               "\"Keys\":{\"PK\":{\"S\":\"A\"},\"SK\":{\"S\":\"B\"}},"
               "\"SequenceNumber\":\"9007199254740993\"}}");
    assert_int_equal(ddbs_record_from_json(j1, "s", &a), 0);
    assert_int_equal(ddbs_record_from_json(j2, "s", &b), 0);
    assert_true(a.r.seq == (1ULL << 53));
    assert_true(b.r.seq >= 1 && b.r.seq <= (1ULL << 53) && b.r.seq != a.r.seq);
    ddbs_record_clear(&a);
    ddbs_record_clear(&b);
    cJSON_Delete(j1);
    cJSON_Delete(j2);
}

static void t_malformed(void **state)
{
    static const char *bad[] = {
        "{\"eventName\":\"INSERT\",\"dynamodb\":{\"Keys\":{\"PK\":{\"S\":\"A\"},\"SK\":{\"S\":"
        "\"B\"}}}}", /* no sequence number */
        "{\"eventName\":\"INSERT\",\"dynamodb\":{\"Keys\":{\"PK\":{\"S\":\"A\"},\"SK\":{\"S\":"
        "\"B\"}},\"SequenceNumber\":\"12a\"}}", /* not digits */
        "{\"eventName\":\"UPSERT\",\"dynamodb\":{\"Keys\":{\"PK\":{\"S\":\"A\"},\"SK\":{\"S\":"
        "\"B\"}},\"SequenceNumber\":\"1\"}}", /* unknown event */
        "{\"eventName\":\"INSERT\",\"dynamodb\":{\"Keys\":{\"PK\":{\"N\":\"1\"},\"SK\":{\"S\":"
        "\"B\"}},\"SequenceNumber\":\"1\"}}", /* key not a string */
        "{\"eventName\":\"INSERT\",\"dynamodb\":{\"Keys\":{\"PK\":{\"S\":\"A\"},\"SK\":{\"S\":"
        "\"B\"}},\"NewImage\":{\"x\":{\"Q\":1}},\"SequenceNumber\":\"1\"}}", /* bad value */
        "{\"eventName\":\"INSERT\",\"dynamodb\":{\"Keys\":{\"PK\":{\"S\":\"A\"},\"SK\":{\"S\":"
        "\"B\"}},\"SequenceNumber\":\"12345678901234567890123456789012345678901\"}}", /* 41 */
        "[]",
    };
    (void)state;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct ddbs_record r;
        cJSON *j = parse(bad[i]);
        assert_int_equal(ddbs_record_from_json(j, "s", &r), ERR_INVALID);
        assert_null(r.r.pk);
        cJSON_Delete(j);
    }
}

static void t_shard_pages(void **state)
{
    struct ddbs_shard *sh = NULL;
    size_t n = 0, cap = 0;
    char *last = NULL;
    cJSON *p1 = parse("{\"StreamDescription\":{\"Shards\":["
                      "{\"ShardId\":\"c1\",\"ParentShardId\":\"root\","
                      "\"SequenceNumberRange\":{\"StartingSequenceNumber\":\"300\"}},"
                      "{\"ShardId\":\"root\",\"SequenceNumberRange\":{"
                      "\"StartingSequenceNumber\":\"100\",\"EndingSequenceNumber\":\"299\"}}],"
                      "\"LastEvaluatedShardId\":\"root\"}}");
    cJSON *p2 = parse("{\"StreamDescription\":{\"Shards\":["
                      "{\"ShardId\":\"c2\",\"ParentShardId\":\"root\","
                      "\"SequenceNumberRange\":{\"StartingSequenceNumber\":\"301\"}},"
                      "{\"ShardId\":\"g1\",\"ParentShardId\":\"c1\","
                      "\"SequenceNumberRange\":{\"StartingSequenceNumber\":\"1000\"}},"
                      "{\"ShardId\":\"orphan\",\"ParentShardId\":\"trimmed\","
                      "\"SequenceNumberRange\":{\"StartingSequenceNumber\":\"50\"}}]}}");
    cJSON *bad = parse("{\"StreamDescription\":{\"Shards\":[{\"ParentShardId\":\"x\"}]}}");
    (void)state;

    assert_int_equal(ddbs_parse_shards(p1, &sh, &n, &cap, &last), 0);
    assert_int_equal(n, 2);
    assert_string_equal(last, "root");
    free(last);
    assert_int_equal(ddbs_parse_shards(p2, &sh, &n, &cap, &last), 0);
    assert_null(last);
    assert_int_equal(n, 5);
    assert_string_equal(sh[1].end_seq, "299");
    assert_null(sh[0].end_seq);

    ddbs_sort_shards(sh, n);
    assert_string_equal(sh[0].id, "orphan");
    assert_string_equal(sh[1].id, "root");
    assert_string_equal(sh[2].id, "c1");
    assert_string_equal(sh[3].id, "c2");
    assert_string_equal(sh[4].id, "g1");
    ddbs_shards_free(sh, n);

    sh = NULL;
    n = cap = 0;
    assert_int_equal(ddbs_parse_shards(bad, &sh, &n, &cap, &last), ERR_INVALID);
    ddbs_shards_free(sh, n);
    cJSON_Delete(p1);
    cJSON_Delete(p2);
    cJSON_Delete(bad);
}

/* finished(): the shards named in the NULL-terminated list arg. */
static bool fin_cb(void *arg, const char *shard)
{
    for (const char **s = arg; *s; s++)
        if (strcmp(*s, shard) == 0)
            return true;
    return false;
}

static void t_lineage(void **state)
{
    struct ddbs_shard sh[] = {
        {.id = "root"},
        {.id = "c1", .parent = "root"},
        {.id = "c2", .parent = "root"},
        {.id = "g1", .parent = "c1"},
        {.id = "orphan", .parent = "trimmed"},
    };
    const char *none[] = {NULL};
    const char *root_done[] = {"root", NULL};
    const char *c1_done[] = {"root", "c1", NULL};
    (void)state;

    /* Nothing finished: only shards without a listed parent. */
    assert_true(ddbs_shard_ready(sh, 5, 0, fin_cb, none));
    assert_false(ddbs_shard_ready(sh, 5, 1, fin_cb, none));
    assert_false(ddbs_shard_ready(sh, 5, 2, fin_cb, none));
    assert_false(ddbs_shard_ready(sh, 5, 3, fin_cb, none));
    assert_true(ddbs_shard_ready(sh, 5, 4, fin_cb, none));
    /* The parent finished: both children, not the grandchild. */
    assert_true(ddbs_shard_ready(sh, 5, 1, fin_cb, root_done));
    assert_true(ddbs_shard_ready(sh, 5, 2, fin_cb, root_done));
    assert_false(ddbs_shard_ready(sh, 5, 3, fin_cb, root_done));
    assert_true(ddbs_shard_ready(sh, 5, 3, fin_cb, c1_done));
}

static void t_seq_and_pos(void **state)
{
    char pos[DET_POS_MAX + 1], other[DET_POS_MAX + 1];
    (void)state;

    assert_true(ddbs_seq_cmp("9", "10") < 0);
    assert_true(ddbs_seq_cmp("0010", "10") == 0);
    assert_true(ddbs_seq_cmp("111600000000012345678901235", "111600000000012345678901234") > 0);
    assert_true(ddbs_seq_cmp("0", "000") == 0);

    assert_true(det_pos_format(pos, "s1", "500"));
    assert_true(det_pos_format(other, "s1", "499"));
    assert_true(det_pos_covers(pos, other));
    assert_true(det_pos_covers(pos, pos));
    assert_false(det_pos_covers(other, pos));
    assert_true(det_pos_format(other, "s2", "1"));
    assert_false(det_pos_covers(pos, other)); /* another shard */
    assert_false(det_pos_covers("garbage", pos));
    assert_false(det_pos_format(pos, "s1", ""));
    assert_false(det_pos_format(pos, "", "1"));
    assert_false(det_pos_format(pos, "s1", "1x"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_insert_record), cmocka_unit_test(t_modify_remove),
        cmocka_unit_test(t_big_sequence),  cmocka_unit_test(t_malformed),
        cmocka_unit_test(t_shard_pages),   cmocka_unit_test(t_lineage),
        cmocka_unit_test(t_seq_and_pos),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
