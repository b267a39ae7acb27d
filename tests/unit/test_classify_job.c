/*
 * test_classify_job.c - model classification jobs (detect/classify_job.c):
 * which records are candidates; classify_jobs_collect turns a Streams
 * batch into one free job per alert (the alert's last candidate record
 * wins) with deterministic keys, a ttl and a record id derived from the
 * record; a replay of the batch builds the same items; the job item
 * parses back, and hostile items are refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/keys.h"
#include "detect/classify_job.h"
#include "util/err.h"

#define BRAND "b-0001"
#define T1    "2026-06-20T10:00:00.000Z"
#define T2    "2026-06-20T11:00:00.000Z"
#define NOW   1781949600000LL /* 2026-06-20T10:00:00Z */

/* An alert image as the detector writes it. */
static cJSON *alert_image(const char *id, const char *ts, const char *details, const char *model)
{
    cJSON *img = cJSON_CreateObject(), *ai, *fl;
    struct key pk, sk;
    cJSON_AddStringToObject(img, "PK", key_threat_pk(&pk, BRAND, ts));
    cJSON_AddStringToObject(img, "SK", key_alert_sk(&sk, ts, "geographic_anomaly", id));
    cJSON_AddStringToObject(img, "alertId", id);
    cJSON_AddStringToObject(img, "brandId", BRAND);
    cJSON_AddStringToObject(img, "productId", "p-1");
    cJSON_AddStringToObject(img, "type", "geographic_anomaly");
    cJSON_AddStringToObject(img, "severity", "high");
    cJSON_AddStringToObject(img, "details", details);
    cJSON_AddStringToObject(img, "country", "JP");
    cJSON_AddStringToObject(img, "source", "detector");
    cJSON_AddStringToObject(img, "timestamp", T1);
    cJSON_AddStringToObject(img, "lastSeen", ts);
    fl = cJSON_AddArrayToObject(img, "anomalyFlags");
    cJSON_AddItemToArray(fl, cJSON_CreateString("geographic_anomaly"));
    cJSON_AddItemToArray(fl, cJSON_CreateString("velocity"));
    ai = cJSON_AddObjectToObject(img, "aiAnalysis");
    cJSON_AddStringToObject(ai, "model", model);
    return img;
}

static void set_rec(struct ddbs_record *r, uint64_t seq, enum store_change kind, cJSON *img)
{
    memset(r, 0, sizeof *r);
    r->r.seq = seq;
    r->r.kind = kind;
    r->r.image = img;
    r->r.pk = strdup(cJSON_GetObjectItem(img, "PK")->valuestring);
    r->r.sk = strdup(cJSON_GetObjectItem(img, "SK")->valuestring);
    snprintf(r->seq, sizeof r->seq, "%" PRIu64, seq);
    snprintf(r->pos, sizeof r->pos, "pos-%" PRIu64, seq);
}

/* The items of a planned wset, as one array (owned by the caller). */
static cJSON *planned_items(struct wset *ws)
{
    struct wset_plan plan = {0};
    cJSON *out = cJSON_CreateArray();
    assert_int_equal(wset_plan(ws, STORE_TRANSACT_MAX, 0, &plan), 0);
    for (size_t i = 0; i < plan.nw; i++) {
        assert_int_equal(plan.w[i].kind, STORE_W_PUT);
        assert_int_equal(plan.w[i].cond.kind, STORE_COND_NONE);
        cJSON_AddItemToArray(out, cJSON_Duplicate(plan.w[i].item, 1));
    }
    wset_plan_free(&plan);
    return out;
}

static const cJSON *find_job(const cJSON *items, const char *alert_id)
{
    struct key k;
    const cJSON *it;
    key_classify_job_pk(&k, alert_id);
    cJSON_ArrayForEach(it, items)
    {
        if (!strcmp(cJSON_GetObjectItem(it, "PK")->valuestring, k.s))
            return it;
    }
    return NULL;
}

static const char *s_of(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A batch: alert a1 twice (the second record is newer), a2 once, a
 * model-classified update of a3, a resolved alert, a REMOVE, a scan. */
#define NREC 7
static void batch(struct ddbs_record *r)
{
    cJSON *resolved = alert_image("a4", T1, "x", "rules");
    cJSON *scan = cJSON_CreateObject();

    set_rec(&r[0], 101, STORE_INSERT, alert_image("a1", T1, "first", "rules"));
    set_rec(&r[1], 102, STORE_INSERT, alert_image("a2", T1, "only", "rules"));
    set_rec(&r[2], 103, STORE_MODIFY, alert_image("a3", T1, "model", "fake-1"));
    cJSON_AddBoolToObject(resolved, "resolved", true);
    set_rec(&r[3], 104, STORE_MODIFY, resolved);
    set_rec(&r[4], 105, STORE_MODIFY, alert_image("a1", T2, "second", "rules"));
    cJSON_AddStringToObject(scan, "PK", "PRODUCT#p-1");
    cJSON_AddStringToObject(scan, "SK", "SCAN#" T1 "#abcd");
    cJSON_AddStringToObject(scan, "source", "detector");
    set_rec(&r[5], 106, STORE_INSERT, scan);
    set_rec(&r[6], 107, STORE_REMOVE, alert_image("a5", T1, "gone", "rules"));
    cJSON_Delete(r[6].r.image);
    r[6].r.image = NULL;
}

static void free_batch(struct ddbs_record *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(r[i].r.pk);
        free(r[i].r.sk);
        cJSON_Delete(r[i].r.image);
    }
}

static void t_candidates(void **state)
{
    (void)state;
    struct ddbs_record r[NREC];
    batch(r);
    assert_true(classify_job_candidate(&r[0].r));
    assert_true(classify_job_candidate(&r[1].r));
    assert_false(classify_job_candidate(&r[2].r)); /* the model's own update */
    assert_false(classify_job_candidate(&r[3].r)); /* resolved */
    assert_true(classify_job_candidate(&r[4].r));
    assert_false(classify_job_candidate(&r[5].r)); /* not an alert */
    assert_false(classify_job_candidate(&r[6].r)); /* REMOVE */
    free_batch(r, NREC);
}

static void t_collect(void **state)
{
    (void)state;
    struct ddbs_record r[NREC];
    struct wset *ws = wset_new();
    cJSON *items;
    const cJSON *a1, *a2, *fl;

    batch(r);
    assert_int_equal(classify_jobs_collect(r, NREC, NOW, &(struct ddbd_sink){.ws = ws}), 0);
    items = planned_items(ws);
    /* one job per alert: a1 (twice in the batch) and a2 */
    assert_int_equal(cJSON_GetArraySize(items), 2);
    a1 = find_job(items, "a1");
    a2 = find_job(items, "a2");
    assert_non_null(a1);
    assert_non_null(a2);

    /* the last record of a1 wins: its details, time and record */
    assert_string_equal(s_of(a1, "details"), "second");
    assert_string_equal(s_of(a1, "alertTime"), T2);
    assert_string_equal(s_of(a1, "recordId"), "m105");
    assert_string_equal(s_of(a1, "alertSK"), r[4].r.sk);
    assert_string_equal(s_of(a1, "alertPK"), r[4].r.pk);
    /* keys */
    assert_string_equal(s_of(a1, "PK"), "CLASSIFY#a1");
    assert_string_equal(s_of(a1, "SK"), "JOB");
    assert_string_equal(s_of(a1, "GSI1PK"), "CLASSIFY_PENDING");
    assert_string_equal(s_of(a1, "GSI1SK"), T2 "#a1");
    assert_string_equal(s_of(a2, "GSI1SK"), T1 "#a2");
    assert_string_equal(s_of(a2, "recordId"), "m102");
    /* free, expiring in a day */
    assert_string_equal(s_of(a1, "claimToken"), "");
    assert_true(cJSON_GetObjectItem(a1, "ttl")->valuedouble == (double)(NOW / 1000 + 24 * 3600));
    /* what the model call needs */
    assert_string_equal(s_of(a1, "alertId"), "a1");
    assert_string_equal(s_of(a1, "brandId"), BRAND);
    assert_string_equal(s_of(a1, "productId"), "p-1");
    assert_string_equal(s_of(a1, "type"), "geographic_anomaly");
    assert_string_equal(s_of(a1, "severity"), "high");
    assert_string_equal(s_of(a1, "country"), "JP");
    fl = cJSON_GetObjectItem(a1, "anomalyFlags");
    assert_int_equal(cJSON_GetArraySize(fl), 2);
    assert_string_equal(cJSON_GetArrayItem(fl, 1)->valuestring, "velocity");

    /* a replay of the batch builds exactly the same items */
    struct wset *ws2 = wset_new();
    assert_int_equal(classify_jobs_collect(r, NREC, NOW, &(struct ddbd_sink){.ws = ws2}), 0);
    cJSON *again = planned_items(ws2);
    assert_int_equal(cJSON_GetArraySize(again), 2);
    assert_true(cJSON_Compare(find_job(again, "a1"), a1, 1));
    assert_true(cJSON_Compare(find_job(again, "a2"), a2, 1));

    cJSON_Delete(again);
    wset_free(ws2);
    cJSON_Delete(items);
    wset_free(ws);
    free_batch(r, NREC);
}

/* A later record that cannot make a job (no valid time) does not hide
 * the alert's earlier valid one; an empty batch adds nothing. */
static void t_collect_invalid_last(void **state)
{
    (void)state;
    struct ddbs_record r[2];
    struct wset *ws = wset_new();
    cJSON *items;

    set_rec(&r[0], 1, STORE_INSERT, alert_image("a1", T1, "ok", "rules"));
    set_rec(&r[1], 2, STORE_MODIFY, alert_image("a1", T2, "bad", "rules"));
    cJSON_ReplaceItemInObject(r[1].r.image, "lastSeen", cJSON_CreateString("yesterday"));
    cJSON_ReplaceItemInObject(r[1].r.image, "timestamp", cJSON_CreateString("never"));
    assert_int_equal(classify_jobs_collect(r, 2, NOW, &(struct ddbd_sink){.ws = ws}), 0);
    assert_int_equal(classify_jobs_collect(r, 0, NOW, &(struct ddbd_sink){.ws = ws}), 0);
    items = planned_items(ws);
    assert_int_equal(cJSON_GetArraySize(items), 1);
    assert_string_equal(s_of(cJSON_GetArrayItem(items, 0), "details"), "ok");
    cJSON_Delete(items);
    wset_free(ws);
    free_batch(r, 2);
}

static void t_parse_roundtrip(void **state)
{
    (void)state;
    struct ddbs_record r[1];
    struct classify_job j, back;
    struct classify_model_input in;
    const char *flags[CLASSIFY_JOB_FLAGS_MAX];
    cJSON *item;

    set_rec(&r[0], 42, STORE_INSERT, alert_image("a9", T1, "three countries", "rules"));
    assert_int_equal(classify_job_from_record(&r[0].r, &j), 0);
    item = classify_job_item(&j, NOW);
    assert_non_null(item);
    assert_int_equal(classify_job_parse(item, &back), 0);
    assert_string_equal(back.alert_pk, r[0].r.pk);
    assert_string_equal(back.alert_sk, r[0].r.sk);
    assert_string_equal(back.alert_id, "a9");
    assert_string_equal(back.record_id, "m42");
    assert_string_equal(back.alert_time, T1);
    assert_string_equal(back.details, "three countries");
    assert_int_equal(back.nflags, 2);
    classify_job_input(&back, &in, flags);
    assert_string_equal(in.type, "geographic_anomaly");
    assert_string_equal(in.rule_severity, "high");
    assert_string_equal(in.country, "JP");
    assert_int_equal(in.nflags, 2);
    assert_string_equal(in.flags[0], "geographic_anomaly");
    classify_job_clear(&back);
    classify_job_clear(&j);
    cJSON_Delete(item);
    free_batch(r, 1);
}

/* Overlong details are cut on a character boundary (the store takes
 * only valid UTF-8). */
static void t_details_cut(void **state)
{
    (void)state;
    struct ddbs_record r[1];
    struct classify_job j;
    char *long_details = malloc(CLASSIFY_JOB_DETAILS_MAX + 10);

    memset(long_details, 'x', CLASSIFY_JOB_DETAILS_MAX - 1);
    /* a 3-byte character across the limit */
    memcpy(long_details + CLASSIFY_JOB_DETAILS_MAX - 1, "\xe2\x82\xac", 3);
    strcpy(long_details + CLASSIFY_JOB_DETAILS_MAX + 2, "yyy");
    set_rec(&r[0], 1, STORE_INSERT, alert_image("a1", T1, long_details, "rules"));
    assert_int_equal(classify_job_from_record(&r[0].r, &j), 0);
    assert_int_equal(strlen(j.details), CLASSIFY_JOB_DETAILS_MAX - 1);
    classify_job_clear(&j);
    free(long_details);
    free_batch(r, 1);
}

/* Job items come back from the table: anything off is refused. */
static void t_parse_hostile(void **state)
{
    (void)state;
    struct ddbs_record r[1];
    struct classify_job j, back;
    cJSON *good, *bad;
    char big[CLASSIFY_JOB_DETAILS_MAX + 2];

    set_rec(&r[0], 7, STORE_INSERT, alert_image("a1", T1, "d", "rules"));
    assert_int_equal(classify_job_from_record(&r[0].r, &j), 0);
    good = classify_job_item(&j, NOW);
    memset(big, 'z', sizeof big - 1);
    big[sizeof big - 1] = '\0';

    struct {
        const char *attr;
        cJSON *val; /* NULL: remove the attribute */
    } cases[] = {
        {"alertPK", cJSON_CreateString("PRODUCT#p-1")},
        {"alertSK", cJSON_CreateString("SCAN#x")},
        {"alertPK", NULL},
        {"alertId", cJSON_CreateString("a#2")},
        {"alertId", cJSON_CreateString("other")}, /* not the one the key names */
        {"brandId", cJSON_CreateString("")},
        {"type", NULL},
        {"type", cJSON_CreateNumber(3)},
        {"alertTime", cJSON_CreateString("2026-06-20")},
        {"recordId", cJSON_CreateString("x1")},
        {"recordId", cJSON_CreateString("m")},
        {"details", cJSON_CreateString(big)},
        {"severity", cJSON_CreateString("extremely-very-high")},
        {"anomalyFlags", cJSON_CreateString("velocity")},
        {"anomalyFlags", cJSON_CreateRaw("[1]")},
        {"PK", cJSON_CreateString("CLASSIFY#zz")},
        /* another alert's keys: the model's write would land there */
        {"alertSK", cJSON_CreateString("ALERT#2026-06-20T15:00:00.000Z#burst_scan#a2")},
        {"alertSK", cJSON_CreateString("ALERT#2026-06-20T15:00:00.000Z#burst_scana1")},
        {"alertSK", cJSON_CreateString("ALERT#a1")},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bad = cJSON_Duplicate(good, 1);
        if (cases[i].val) {
            cJSON *v = cases[i].val;
            if (cJSON_IsRaw(v)) {
                cJSON *arr = cJSON_Parse(v->valuestring);
                cJSON_Delete(v);
                v = arr;
            }
            cJSON_ReplaceItemInObject(bad, cases[i].attr, v);
        } else {
            cJSON_DeleteItemFromObject(bad, cases[i].attr);
        }
        if (classify_job_parse(bad, &back) != ERR_INVALID)
            fail_msg("case %zu (%s) accepted", i, cases[i].attr);
        assert_null(back.alert_pk); /* nothing left to free */
        cJSON_Delete(bad);
    }
    /* seventeen flags: one too many */
    bad = cJSON_Duplicate(good, 1);
    cJSON *fl = cJSON_CreateArray();
    for (int i = 0; i < CLASSIFY_JOB_FLAGS_MAX + 1; i++)
        cJSON_AddItemToArray(fl, cJSON_CreateString("f"));
    cJSON_ReplaceItemInObject(bad, "anomalyFlags", fl);
    assert_int_equal(classify_job_parse(bad, &back), ERR_INVALID);
    cJSON_Delete(bad);
    assert_int_equal(classify_job_parse(NULL, &back), ERR_INVALID);

    assert_int_equal(classify_job_parse(good, &back), 0);
    classify_job_clear(&back);
    cJSON_Delete(good);
    classify_job_clear(&j);
    free_batch(r, 1);
}

/* The presence marker: its keys, "until" and ttl; a malformed one reads
 * as absent (0). */
static void t_presence(void **state)
{
    (void)state;
    int64_t now = 1780000000000LL;
    cJSON *it = classify_presence_item(now + 60000, now);
    assert_non_null(it);
    assert_string_equal(cJSON_GetObjectItem(it, "PK")->valuestring, KEY_PK_CLASSIFIER);
    assert_string_equal(cJSON_GetObjectItem(it, "SK")->valuestring, KEY_SK_PRESENCE);
    assert_true(classify_presence_until(it) == now + 60000);
    assert_true(cJSON_GetObjectItem(it, "ttl")->valuedouble > (double)(now / 1000));
    cJSON_Delete(it);
    static const char *const bad[] = {"{}", "{\"until\":\"1\"}", "{\"until\":-5}",
                                      "{\"until\":1e300}", "[]"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        it = cJSON_Parse(bad[i]);
        assert_true(classify_presence_until(it) == 0);
        cJSON_Delete(it);
    }
    assert_true(classify_presence_until(NULL) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_candidates),
        cmocka_unit_test(t_collect),
        cmocka_unit_test(t_collect_invalid_last),
        cmocka_unit_test(t_parse_roundtrip),
        cmocka_unit_test(t_details_cut),
        cmocka_unit_test(t_parse_hostile),
        cmocka_unit_test(t_presence),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
