/*
 * test_classify_driver.c - the model classifier in jobs mode (the
 * DynamoDB path of api/classify_driver.c) on a SQLite store, with the
 * Streams detector's job writes emulated (the store's change stream
 * through classify_jobs_collect, like ddbd_apply) and a fake
 * OpenAI-compatible model on loopback (mini_httpd.h):
 *   - a job is claimed, the model asked once, the alert gets the model's
 *     severity, details and aiAnalysis, an ops-log entry names the model,
 *     the job is deleted, and the model's own update makes no new job;
 *   - two drivers on two handles of one store: one model call per job;
 *   - a model error deletes the job and leaves the rules;
 *   - a job re-put by the detector during the call survives (nothing is
 *     written) and is classified again from the alert's newer state;
 *   - an alert deleted meanwhile is not recreated; a malformed job is
 *     dropped.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ev.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/classify_driver.h"
#include "core/keys.h"
#include "core/timeutil.h"
#include "detect/classify_job.h"
#include "mini_httpd.h"
#include "store/store.h"
#include "tmpdir.h"
#include "util/err.h"
#include "util/timescale.h"

#define BRAND "b-0001"
#define TS    "2026-06-20T10:00:00.000Z"
#define DAY   "2026-06-20"
#define MODEL "fake-1"

/* ---- the fake model ------------------------------------------------------ */

static struct mini_httpd *srv;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int calls;     /* requests seen */
static int gate_open; /* /gate/ requests wait for this */
static char last_prompt[4096];

#define ANSWER                                                                                     \
    "{\"severity\":\"critical\",\"attack_vector\":\"tag_cloning\",\"narrative\":\"A cloned "       \
    "tag.\",\"recommended_actions\":[\"Revoke the tag\"],\"confidence\":91}"

static void handler(void *arg, const struct mini_req *r, int fd)
{
    (void)arg;
    cJSON *body = cJSON_ParseWithLength(r->body, r->body_len);
    const cJSON *msgs = cJSON_GetObjectItem(body, "messages");
    const cJSON *content = cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, 1), "content");

    pthread_mutex_lock(&mu);
    calls++;
    snprintf(last_prompt, sizeof last_prompt, "%s",
             cJSON_IsString(content) ? content->valuestring : "");
    pthread_mutex_unlock(&mu);
    cJSON_Delete(body);
    if (strstr(r->path, "/gate/")) {
        for (int i = 0; i < 400 && !mini_httpd_stopping(srv); i++) {
            pthread_mutex_lock(&mu);
            int open = gate_open;
            pthread_mutex_unlock(&mu);
            if (open)
                break;
            usleep(10000);
        }
    }
    if (strstr(r->path, "/fail/")) {
        mini_reply(fd, 500, "application/json", "{\"error\":\"overloaded\"}");
        return;
    }
    cJSON *env = cJSON_CreateObject();
    cJSON *choices = cJSON_AddArrayToObject(env, "choices");
    cJSON *c0 = cJSON_CreateObject();
    cJSON *msg = cJSON_AddObjectToObject(c0, "message");
    cJSON_AddStringToObject(msg, "role", "assistant");
    cJSON_AddStringToObject(msg, "content", ANSWER);
    cJSON_AddItemToArray(choices, c0);
    char *s = cJSON_PrintUnformatted(env);
    mini_reply(fd, 200, "application/json", s);
    free(s);
    cJSON_Delete(env);
}

static int model_calls(void)
{
    pthread_mutex_lock(&mu);
    int n = calls;
    pthread_mutex_unlock(&mu);
    return n;
}

static void set_gate(int open)
{
    pthread_mutex_lock(&mu);
    gate_open = open;
    pthread_mutex_unlock(&mu);
}

/* ---- fixture -------------------------------------------------------------- */

struct fx {
    char dir[64], path[128];
    struct store *s, *s2; /* two handles: two processes */
    struct ev_loop *loop;
    uint64_t seen; /* stream records the emulated detector has read */
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);

    ut_db_dir("cdrv", f->dir, f->path);
    f->s = ut_sqlite_open(f->path);
    f->s2 = ut_sqlite_open(f->path);
    f->loop = ev_loop_new(EVFLAG_AUTO);
    srv = mini_httpd_start(handler, NULL);
    assert_non_null(srv);
    calls = 0;
    gate_open = 0;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    set_gate(1);
    mini_httpd_stop(srv);
    ev_loop_destroy(f->loop);
    store_close(f->s2);
    store_close(f->s);
    ut_rmtree(f->dir);
    free(f);
    return 0;
}

static void alert_keys(const char *id, struct key *pk, struct key *sk)
{
    key_threat_pk(pk, BRAND, TS);
    key_alert_sk(sk, TS, "geographic_anomaly", id);
}

/* An alert as the detector writes it, classified by rules. */
static void put_alert(struct fx *f, const char *id, const char *details)
{
    cJSON *a = cJSON_CreateObject(), *fl, *ai;
    struct key pk, sk;

    alert_keys(id, &pk, &sk);
    cJSON_AddStringToObject(a, "PK", pk.s);
    cJSON_AddStringToObject(a, "SK", sk.s);
    cJSON_AddStringToObject(a, "alertId", id);
    cJSON_AddStringToObject(a, "brandId", BRAND);
    cJSON_AddStringToObject(a, "productId", "p-1");
    cJSON_AddStringToObject(a, "type", "geographic_anomaly");
    cJSON_AddStringToObject(a, "severity", "high");
    cJSON_AddStringToObject(a, "details", details);
    cJSON_AddStringToObject(a, "country", "JP");
    cJSON_AddStringToObject(a, "source", "detector");
    cJSON_AddStringToObject(a, "timestamp", TS);
    cJSON_AddStringToObject(a, "lastSeen", TS);
    fl = cJSON_AddArrayToObject(a, "anomalyFlags");
    cJSON_AddItemToArray(fl, cJSON_CreateString("geographic_anomaly"));
    ai = cJSON_AddObjectToObject(a, "aiAnalysis");
    cJSON_AddStringToObject(ai, "model", "rules");
    assert_int_equal(store_put(f->s, a, NULL), 0);
    cJSON_Delete(a);
}

/* The Streams detector's part: the records written since the last pass,
 * as one batch, through classify_jobs_collect into the store.  Returns
 * the number of jobs written. */
static size_t detector_pass(struct fx *f)
{
    struct stream_record *sr = NULL;
    struct ddbs_record *recs;
    struct wset *ws = wset_new();
    struct wset_plan plan = {0};
    size_t n = 0, njobs;

    assert_int_equal(store_stream_read(f->s, f->seen, 10000, &sr, &n), 0);
    recs = calloc(n ? n : 1, sizeof *recs);
    for (size_t i = 0; i < n; i++) {
        recs[i].r = sr[i]; /* borrowed: freed with sr */
        snprintf(recs[i].seq, sizeof recs[i].seq, "%" PRIu64, sr[i].seq);
        f->seen = sr[i].seq;
    }
    assert_int_equal(classify_jobs_collect(recs, n, time_now_ms(), &(struct ddbd_sink){.ws = ws}),
                     0);
    njobs = wset_count(ws);
    if (njobs) {
        assert_int_equal(wset_plan(ws, STORE_TRANSACT_MAX, 0, &plan), 0);
        for (size_t g = 0; g < plan.ngroups; g++) {
            size_t nw;
            const struct store_write *w = wset_plan_group(&plan, g, &nw);
            assert_int_equal(store_transact(f->s, w, nw, NULL), 0);
        }
        wset_plan_free(&plan);
    }
    wset_free(ws);
    free(recs);
    store_stream_free(sr, n);
    return njobs;
}

static cJSON *get_alert(struct fx *f, const char *id)
{
    struct key pk, sk;
    cJSON *a = NULL;
    alert_keys(id, &pk, &sk);
    assert_int_equal(store_get(f->s, pk.s, sk.s, true, &a), 0);
    return a;
}

static const char *s_of(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* The alert's aiAnalysis.model ("" when none). */
static void alert_model(struct fx *f, const char *id, char *out, size_t n)
{
    cJSON *a = get_alert(f, id);
    snprintf(out, n, "%s", s_of(cJSON_GetObjectItem(a, "aiAnalysis"), "model"));
    cJSON_Delete(a);
}

/* Job items left in the pending partition. */
static int pending(struct fx *f)
{
    struct store_query q = {
        .index = STORE_INDEX_GSI1, .pk = KEY_GSI1PK_CLASSIFY_PENDING, .count_only = true};
    struct store_result res = {0};
    int n;
    assert_int_equal(store_query(f->s, &q, &res), 0);
    n = res.count;
    store_result_free(&res);
    return n;
}

static cJSON *get_job(struct fx *f, const char *id)
{
    struct key pk;
    cJSON *j = NULL;
    key_classify_job_pk(&pk, id);
    return store_get(f->s, pk.s, KEY_SK_CLASSIFY_JOB, true, &j) ? NULL : j;
}

/* Ops-log entries of the day naming model (NULL: any); *sk of the last. */
static int opslog_entries(struct fx *f, const char *model, char *sk, size_t skn)
{
    struct key pk;
    struct store_query q = {.pk = key_opslog_pk_day(&pk, DAY)};
    struct store_result res = {0};
    const cJSON *it;
    int n = 0;

    assert_int_equal(store_query(f->s, &q, &res), 0);
    cJSON_ArrayForEach(it, res.items)
    {
        if (model && strcmp(s_of(it, "geminiModel"), model))
            continue;
        n++;
        if (sk)
            snprintf(sk, skn, "%s", s_of(it, "SK"));
    }
    store_result_free(&res);
    return n;
}

/* ---- running the loop ---------------------------------------------------- */

struct waiter {
    bool (*pred)(void *arg);
    void *arg;
    bool met;
};

static void check_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)revents;
    struct waiter *wt = w->data;
    if (wt->pred(wt->arg)) {
        wt->met = true;
        ev_break(loop, EVBREAK_ALL);
    }
}

static void guard_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)w;
    (void)revents;
    ev_break(loop, EVBREAK_ALL);
}

/* Runs the loop until pred holds (checked every 5 ms) or max_s pass;
 * returns whether it held. */
static bool run_until(struct fx *f, bool (*pred)(void *), void *arg, double max_s)
{
    struct waiter wt = {.pred = pred, .arg = arg};
    ev_timer check, guard;

    ev_timer_init(&check, check_cb, 0.005, 0.005);
    check.data = &wt;
    ev_timer_init(&guard, guard_cb, max_s, 0.);
    ev_timer_start(f->loop, &check);
    ev_timer_start(f->loop, &guard);
    ev_run(f->loop, 0);
    ev_timer_stop(f->loop, &check);
    ev_timer_stop(f->loop, &guard);
    return wt.met;
}

static bool never(void *arg)
{
    (void)arg;
    return false;
}

/* Lets the drivers poll for a while (several poll periods). */
static void idle(struct fx *f, double s)
{
    run_until(f, never, NULL, s);
}

struct drivers {
    struct classify_driver *d[2];
    size_t n;
    uint64_t want; /* for the predicates */
};

static struct classify_driver_stats sum_stats(const struct drivers *ds)
{
    struct classify_driver_stats sum = {0}, st;
    for (size_t i = 0; i < ds->n; i++) {
        classify_driver_get_stats(ds->d[i], &st);
        sum.requests += st.requests;
        sum.reclassified += st.reclassified;
        sum.fallbacks += st.fallbacks;
        sum.claimed += st.claimed;
        sum.superseded += st.superseded;
        sum.errors += st.errors;
    }
    return sum;
}

static bool reclassified_reached(void *arg)
{
    const struct drivers *ds = arg;
    return sum_stats(ds).reclassified >= ds->want;
}

static bool fallbacks_reached(void *arg)
{
    const struct drivers *ds = arg;
    return sum_stats(ds).fallbacks >= ds->want;
}

static bool superseded_reached(void *arg)
{
    const struct drivers *ds = arg;
    return sum_stats(ds).superseded >= ds->want;
}

static bool calls_reached(void *arg)
{
    const struct drivers *ds = arg;
    return (uint64_t)model_calls() >= ds->want;
}

/* A jobs-mode driver on s asking the fake model under base path base. */
static struct classify_driver *driver(struct fx *f, struct store *s, const char *base,
                                      size_t inflight)
{
    char url[128], err[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", mini_httpd_port(srv), base);
    struct classify_driver_config cfg = {
        .model = {.provider = CLASSIFY_PROVIDER_OPENAI,
                  .url = url,
                  .api_key = "sk-test",
                  .model = MODEL,
                  .timeout_s = 60}, /* 3 s at the tests' time scale */
        .max_inflight = inflight,
        .jobs = true,
    };
    struct classify_driver *d = classify_driver_new(s, f->loop, &cfg, err, sizeof err);
    if (!d)
        fail_msg("classify_driver_new: %s", err);
    return d;
}

/* ---- tests ------------------------------------------------------------------ */

static void t_reclassify(void **state)
{
    struct fx *f = *state;
    struct drivers ds = {.n = 1, .want = 1};
    char model[64], sk[256], want_sk[256];
    cJSON *a;

    put_alert(f, "a1", "Scanned in 3 countries");
    assert_int_equal(detector_pass(f), 1);
    assert_int_equal(pending(f), 1);
    ds.d[0] = driver(f, f->s, "/ok/v1", 0);
    assert_true(run_until(f, reclassified_reached, &ds, 10));

    a = get_alert(f, "a1");
    assert_string_equal(s_of(a, "severity"), "critical");
    assert_string_equal(s_of(a, "details"), "A cloned tag.");
    assert_string_equal(s_of(cJSON_GetObjectItem(a, "aiAnalysis"), "model"), MODEL);
    assert_string_equal(s_of(cJSON_GetObjectItem(a, "aiAnalysis"), "attack_vector"), "tag_cloning");
    cJSON_Delete(a);
    /* the ops-log entry names the model and the job's change record */
    assert_int_equal(opslog_entries(f, MODEL, sk, sizeof sk), 1);
    snprintf(want_sk, sizeof want_sk, "%s#threat_detector#m", TS);
    assert_memory_equal(sk, want_sk, strlen(want_sk));
    assert_int_equal(pending(f), 0);
    assert_int_equal(model_calls(), 1);
    assert_true(strstr(last_prompt, "Scanned in 3 countries") != NULL);

    /* the model's own update comes back through the stream: no new job */
    assert_int_equal(detector_pass(f), 0);
    idle(f, 0.3); /* six polls */
    assert_int_equal(model_calls(), 1);
    alert_model(f, "a1", model, sizeof model);
    assert_string_equal(model, MODEL);
    struct classify_driver_stats st = sum_stats(&ds);
    assert_int_equal(st.claimed, 1);
    assert_int_equal(st.requests, 1);
    assert_int_equal(st.errors, 0);
    classify_driver_free(ds.d[0]);
}

/* Two processes polling the same jobs: each job is claimed by one of
 * them and the model is asked once per job. */
static void t_two_drivers(void **state)
{
    struct fx *f = *state;
    enum { N = 6 };
    struct drivers ds = {.n = 2, .want = N};
    char id[16], model[64];

    for (int i = 0; i < N; i++) {
        snprintf(id, sizeof id, "a%d", i);
        put_alert(f, id, "Scanned in 3 countries");
    }
    assert_int_equal(detector_pass(f), N);
    /* the calls wait at the gate: each driver fills its two slots, so
     * both must have claimed jobs before any call ends */
    ds.d[0] = driver(f, f->s, "/gate/v1", 2);
    ds.d[1] = driver(f, f->s2, "/gate/v1", 2);
    ds.want = 4;
    assert_true(run_until(f, calls_reached, &ds, 15));
    set_gate(1);
    ds.want = N;
    assert_true(run_until(f, reclassified_reached, &ds, 15));
    idle(f, 0.3);
    struct classify_driver_stats st = sum_stats(&ds), s0;
    assert_int_equal(model_calls(), N);
    assert_int_equal(st.requests, N);
    assert_int_equal(st.claimed, N);
    assert_int_equal(st.reclassified, N);
    assert_int_equal(pending(f), 0);
    assert_int_equal(opslog_entries(f, MODEL, NULL, 0), N);
    for (int i = 0; i < N; i++) {
        snprintf(id, sizeof id, "a%d", i);
        alert_model(f, id, model, sizeof model);
        assert_string_equal(model, MODEL);
    }
    /* both took part: each held two calls at the gate */
    classify_driver_get_stats(ds.d[0], &s0);
    assert_true(s0.claimed >= 2 && s0.claimed <= N - 2);
    classify_driver_free(ds.d[0]);
    classify_driver_free(ds.d[1]);
}

static void t_model_error(void **state)
{
    struct fx *f = *state;
    struct drivers ds = {.n = 1, .want = 1};
    char model[64];
    cJSON *a;

    put_alert(f, "a1", "Scanned in 3 countries");
    assert_int_equal(detector_pass(f), 1);
    ds.d[0] = driver(f, f->s, "/fail/v1", 0);
    assert_true(run_until(f, fallbacks_reached, &ds, 10));
    idle(f, 0.2);
    assert_int_equal(pending(f), 0); /* the job is done with */
    assert_int_equal(model_calls(), 1);
    a = get_alert(f, "a1");
    assert_string_equal(s_of(a, "severity"), "high");
    assert_string_equal(s_of(a, "details"), "Scanned in 3 countries");
    cJSON_Delete(a);
    alert_model(f, "a1", model, sizeof model);
    assert_string_equal(model, "rules");
    assert_int_equal(opslog_entries(f, NULL, NULL, 0), 0);
    assert_int_equal(sum_stats(&ds).reclassified, 0);
    classify_driver_free(ds.d[0]);
}

/* The detector re-puts the job (a newer state of the alert) while the
 * model is being asked: the answer about the old state is not written,
 * the job survives, and is classified again from the new state. */
static void t_reput_during_call(void **state)
{
    struct fx *f = *state;
    struct drivers ds = {.n = 1, .want = 1};
    char model[64];
    cJSON *job, *a;

    put_alert(f, "a1", "Scanned in 3 countries");
    assert_int_equal(detector_pass(f), 1);
    ds.d[0] = driver(f, f->s, "/gate/v1", 0);
    assert_true(run_until(f, calls_reached, &ds, 10)); /* the call waits at the gate */
    job = get_job(f, "a1");
    assert_non_null(job);
    assert_int_equal(strlen(s_of(job, "claimToken")), 32); /* claimed */
    cJSON_Delete(job);

    put_alert(f, "a1", "Scanned in 4 countries"); /* the detector's update */
    assert_int_equal(detector_pass(f), 1);
    job = get_job(f, "a1");
    assert_string_equal(s_of(job, "claimToken"), ""); /* free again */
    cJSON_Delete(job);
    set_gate(1);
    assert_true(run_until(f, superseded_reached, &ds, 10));
    /* nothing written from the old state; the job is still there */
    job = get_job(f, "a1");
    assert_non_null(job);
    assert_string_equal(s_of(job, "details"), "Scanned in 4 countries");
    cJSON_Delete(job);
    a = get_alert(f, "a1");
    assert_string_equal(s_of(cJSON_GetObjectItem(a, "aiAnalysis"), "model"), "rules");
    cJSON_Delete(a);
    assert_int_equal(opslog_entries(f, MODEL, NULL, 0), 0);

    /* classified again, from the newer state */
    assert_true(run_until(f, reclassified_reached, &ds, 10));
    assert_int_equal(model_calls(), 2);
    assert_true(strstr(last_prompt, "Scanned in 4 countries") != NULL);
    alert_model(f, "a1", model, sizeof model);
    assert_string_equal(model, MODEL);
    assert_int_equal(pending(f), 0);
    assert_int_equal(opslog_entries(f, MODEL, NULL, 0), 1);
    classify_driver_free(ds.d[0]);
}

/* The alert was deleted before the answer came: nothing is recreated,
 * no ops-log entry is written, and the job is done with. */
static void t_alert_gone(void **state)
{
    struct fx *f = *state;
    struct drivers ds = {.n = 1, .want = 1};
    struct key pk, sk;
    cJSON *a = NULL;

    put_alert(f, "a1", "Scanned in 3 countries");
    assert_int_equal(detector_pass(f), 1);
    alert_keys("a1", &pk, &sk);
    assert_int_equal(store_delete(f->s, pk.s, sk.s, NULL), 0);
    ds.d[0] = driver(f, f->s, "/ok/v1", 0);
    assert_true(run_until(f, calls_reached, &ds, 10));
    idle(f, 0.3);
    assert_int_equal(store_get(f->s, pk.s, sk.s, true, &a), ERR_NOTFOUND);
    assert_int_equal(pending(f), 0);
    assert_int_equal(opslog_entries(f, NULL, NULL, 0), 0);
    assert_int_equal(sum_stats(&ds).reclassified, 0);
    classify_driver_free(ds.d[0]);
}

/* A malformed job in the pending partition is dropped, not retried. */
static void t_malformed_job(void **state)
{
    struct fx *f = *state;
    struct drivers ds = {.n = 1, .want = 1};
    cJSON *bad = cJSON_CreateObject();

    cJSON_AddStringToObject(bad, "PK", "CLASSIFY#x1");
    cJSON_AddStringToObject(bad, "SK", KEY_SK_CLASSIFY_JOB);
    cJSON_AddStringToObject(bad, "GSI1PK", KEY_GSI1PK_CLASSIFY_PENDING);
    cJSON_AddStringToObject(bad, "GSI1SK", TS "#x1");
    cJSON_AddStringToObject(bad, "alertId", "x1");
    cJSON_AddStringToObject(bad, "alertPK", "PRODUCT#p-1"); /* not an alert */
    cJSON_AddStringToObject(bad, "claimToken", "");
    assert_int_equal(store_put(f->s, bad, NULL), 0);
    cJSON_Delete(bad);
    ds.d[0] = driver(f, f->s, "/ok/v1", 0);
    idle(f, 0.3);
    assert_int_equal(pending(f), 0);
    assert_int_equal(model_calls(), 0);
    struct classify_driver_stats st = sum_stats(&ds);
    assert_int_equal(st.errors, 1);
    classify_driver_free(ds.d[0]);
}

int main(void)
{
    time_scale_set(0.05);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(t_reclassify, setup, teardown),
        cmocka_unit_test_setup_teardown(t_two_drivers, setup, teardown),
        cmocka_unit_test_setup_teardown(t_model_error, setup, teardown),
        cmocka_unit_test_setup_teardown(t_reput_during_call, setup, teardown),
        cmocka_unit_test_setup_teardown(t_alert_gone, setup, teardown),
        cmocka_unit_test_setup_teardown(t_malformed_job, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
