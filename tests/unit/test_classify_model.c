/*
 * test_classify_model.c - the optional model classifier against fake
 * Gemini and OpenAI-compatible endpoints on loopback (mini_httpd.h):
 * request shapes (path, key header, model, prompt, generation settings),
 * reply parsing and its strict checks, and every failure that must leave
 * the caller with the rules (HTTP error, garbage, timeout, invalid
 * fields, a full client), plus configuration refusals.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ev.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "detect/classify_model.h"
#include "mini_httpd.h"
#include "util/err.h"

/* ---- fake model endpoints ---------------------------------------------- */

struct seen {
    pthread_mutex_t mu;
    char path[256], key[128], auth[128];
    cJSON *body;
};

static struct mini_httpd *srv;
static struct seen seen = {.mu = PTHREAD_MUTEX_INITIALIZER};

#define GOOD_REPLY                                                                                 \
    "{\"severity\":\"HIGH\",\"attack_vector\":\"tag_cloning\",\"narrative\":\"The same tag was "   \
    "scanned in three countries within a day.\",\"recommended_actions\":[\"Disable the tag\","     \
    "\"Notify the brand\"],\"confidence\":87}"

static void handler(void *arg, const struct mini_req *r, int fd)
{
    (void)arg;
    pthread_mutex_lock(&seen.mu);
    snprintf(seen.path, sizeof seen.path, "%s", r->path);
    mini_header(r, "x-goog-api-key", seen.key, sizeof seen.key);
    mini_header(r, "Authorization", seen.auth, sizeof seen.auth);
    cJSON_Delete(seen.body);
    seen.body = cJSON_ParseWithLength(r->body, r->body_len);
    pthread_mutex_unlock(&seen.mu);

    if (strstr(r->path, "/gem/")) {
        cJSON *env = cJSON_CreateObject();
        cJSON *cand = cJSON_AddArrayToObject(env, "candidates");
        cJSON *c0 = cJSON_CreateObject();
        cJSON *content = cJSON_AddObjectToObject(c0, "content");
        cJSON *parts = cJSON_AddArrayToObject(content, "parts");
        cJSON *p0 = cJSON_CreateObject();
        cJSON_AddStringToObject(p0, "text", "```json\n" GOOD_REPLY "\n```");
        cJSON_AddItemToArray(parts, p0);
        cJSON_AddItemToArray(cand, c0);
        char *s = cJSON_PrintUnformatted(env);
        mini_reply(fd, 200, "application/json", s);
        free(s);
        cJSON_Delete(env);
    } else if (strstr(r->path, "/oa/")) {
        cJSON *env = cJSON_CreateObject();
        cJSON *choices = cJSON_AddArrayToObject(env, "choices");
        cJSON *c0 = cJSON_CreateObject();
        cJSON *msg = cJSON_AddObjectToObject(c0, "message");
        cJSON_AddStringToObject(msg, "role", "assistant");
        cJSON_AddStringToObject(msg, "content", GOOD_REPLY);
        cJSON_AddItemToArray(choices, c0);
        char *s = cJSON_PrintUnformatted(env);
        mini_reply(fd, 200, "application/json", s);
        free(s);
        cJSON_Delete(env);
    } else if (strstr(r->path, "/garbage/")) {
        mini_reply(fd, 200, "application/json",
                   "{\"choices\":[{\"message\":{\"content\":\"I think it is bad.\"}}]}");
    } else if (strstr(r->path, "/fail/")) {
        mini_reply(fd, 500, "application/json", "{\"error\":\"overloaded\"}");
    } else if (strstr(r->path, "/slow/")) {
        for (int i = 0; i < 60 && !mini_httpd_stopping(srv); i++)
            usleep(50000);
        mini_reply(fd, 200, "application/json", "{}");
    }
}

static int up(void **state)
{
    (void)state;
    srv = mini_httpd_start(handler, NULL);
    return srv ? 0 : -1;
}

static int down(void **state)
{
    (void)state;
    mini_httpd_stop(srv);
    cJSON_Delete(seen.body);
    seen.body = NULL;
    return 0;
}

/* ---- helpers ------------------------------------------------------------ */

struct got {
    int calls, err;
    char error[128], model[64], severity[16], severity_upper[16], vector[64], narrative[256];
    char action0[64];
    size_t nactions;
    int confidence;
    char *analysis;
};

static void got_cb(void *arg, const struct classify_model_result *r)
{
    struct got *g = arg;
    g->calls++;
    g->err = r->err;
    snprintf(g->error, sizeof g->error, "%s", r->error ? r->error : "");
    snprintf(g->model, sizeof g->model, "%s", r->model ? r->model : "");
    if (!r->err) {
        snprintf(g->severity, sizeof g->severity, "%s", r->severity);
        snprintf(g->severity_upper, sizeof g->severity_upper, "%s", r->severity_upper);
        snprintf(g->vector, sizeof g->vector, "%s", r->attack_vector);
        snprintf(g->narrative, sizeof g->narrative, "%s", r->narrative);
        snprintf(g->action0, sizeof g->action0, "%s", r->nactions ? r->actions[0] : "");
        g->nactions = r->nactions;
        g->confidence = r->confidence;
        cJSON *a = classify_model_analysis_json(r);
        g->analysis = cJSON_PrintUnformatted(a);
        cJSON_Delete(a);
    }
}

static const char *const flags[] = {"geographic_anomaly", "burst_scan"};
static const struct classify_model_input input = {
    .type = "geographic_anomaly",
    .details = "Scanned in 3 countries (CH, FR, US) within 24 hours",
    .rule_severity = "high",
    .flags = flags,
    .nflags = 2,
    .country = "US",
};

static void guard_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)w;
    (void)revents;
    ev_break(loop, EVBREAK_ALL);
    fail_msg("the loop did not finish in time");
}

static void run_loop(struct ev_loop *loop)
{
    ev_timer guard;
    ev_timer_init(&guard, guard_cb, 15.0, 0.);
    ev_timer_start(loop, &guard);
    ev_unref(loop);
    ev_run(loop, 0);
    ev_ref(loop);
    ev_timer_stop(loop, &guard);
}

/* One request through a model configured for base path `base`. */
static void classify_once(enum classify_provider p, const char *base, const char *key,
                          const char *model, double timeout_s, struct got *g)
{
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    char url[128], err[160];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", mini_httpd_port(srv), base);
    struct classify_model_config cfg = {
        .provider = p, .url = url, .api_key = key, .model = model, .timeout_s = timeout_s};
    struct classify_model *m = classify_model_new(loop, &cfg, err, sizeof err);
    assert_non_null(m);
    memset(g, 0, sizeof *g);
    assert_int_equal(classify_model_request(m, &input, got_cb, g), 0);
    assert_int_equal(g->calls, 0);
    run_loop(loop);
    assert_int_equal(g->calls, 1);
    classify_model_free(m);
    ev_loop_destroy(loop);
}

/* ---- tests -------------------------------------------------------------- */

static void test_gemini_roundtrip(void **state)
{
    (void)state;
    struct got g;

    classify_once(CLASSIFY_PROVIDER_GEMINI, "/gem/v1beta/", "k1", "test-model", 5, &g);
    assert_int_equal(g.err, 0);
    assert_string_equal(g.model, "test-model");
    assert_string_equal(g.severity, "high");
    assert_string_equal(g.severity_upper, "HIGH");
    assert_string_equal(g.vector, "tag_cloning");
    assert_int_equal(g.nactions, 2);
    assert_string_equal(g.action0, "Disable the tag");
    assert_int_equal(g.confidence, 87);
    assert_non_null(strstr(g.analysis, "\"model\":\"test-model\""));
    assert_non_null(strstr(g.analysis, "\"severity\":\"high\""));
    free(g.analysis);

    pthread_mutex_lock(&seen.mu);
    assert_string_equal(seen.path, "/gem/v1beta/models/test-model:generateContent");
    assert_string_equal(seen.key, "k1");
    assert_string_equal(seen.auth, "");
    cJSON *cfg = cJSON_GetObjectItem(seen.body, "generationConfig");
    assert_true(cJSON_GetObjectItem(cfg, "temperature")->valuedouble == 0.2);
    assert_int_equal(cJSON_GetObjectItem(cfg, "maxOutputTokens")->valueint, 500);
    cJSON *text = cJSON_GetObjectItem(
        cJSON_GetArrayItem(
            cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(seen.body, "contents"), 0),
                                "parts"),
            0),
        "text");
    assert_true(cJSON_IsString(text));
    assert_non_null(strstr(text->valuestring, "geographic_anomaly"));
    assert_non_null(strstr(text->valuestring, "3 countries"));
    assert_non_null(strstr(text->valuestring, "burst_scan"));
    pthread_mutex_unlock(&seen.mu);
}

static void test_openai_roundtrip(void **state)
{
    (void)state;
    struct got g;

    classify_once(CLASSIFY_PROVIDER_OPENAI, "/oa/v1", "k2", "m2", 5, &g);
    assert_int_equal(g.err, 0);
    assert_string_equal(g.severity, "high");
    assert_int_equal(g.confidence, 87);
    free(g.analysis);
    pthread_mutex_lock(&seen.mu);
    assert_string_equal(seen.path, "/oa/v1/chat/completions");
    assert_string_equal(seen.auth, "Bearer k2");
    assert_string_equal(seen.key, "");
    assert_string_equal(cJSON_GetObjectItem(seen.body, "model")->valuestring, "m2");
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(seen.body, "response_format"), "type")->valuestring,
        "json_object");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(seen.body, "messages")), 2);
    pthread_mutex_unlock(&seen.mu);
}

static void test_failures_fall_back(void **state)
{
    (void)state;
    struct got g;

    classify_once(CLASSIFY_PROVIDER_OPENAI, "/fail/v1", "k", NULL, 5, &g);
    assert_int_not_equal(g.err, 0);
    assert_string_equal(g.error, "HTTP 500");
    assert_string_equal(g.model, CLASSIFY_OPENAI_MODEL);

    classify_once(CLASSIFY_PROVIDER_OPENAI, "/garbage/v1", "k", NULL, 5, &g);
    assert_int_equal(g.err, ERR_INVALID);
    assert_string_equal(g.error, "unusable model output");

    classify_once(CLASSIFY_PROVIDER_GEMINI, "/oa/v1", "k", NULL, 5, &g);
    assert_int_equal(g.err, ERR_INVALID); /* wrong envelope for the provider */

    classify_once(CLASSIFY_PROVIDER_GEMINI, "/slow/v1", "k", NULL, 0.3, &g);
    assert_int_equal(g.err, ERR_TIMEOUT);
    assert_string_equal(g.error, "timeout");
}

static int parse(const char *text, struct classify_model_result *r)
{
    cJSON *hold = NULL;
    memset(r, 0, sizeof *r);
    int rc = classify_model_parse_text(text, r, &hold);
    cJSON_Delete(hold);
    return rc;
}

static void test_reply_checks(void **state)
{
    (void)state;
    struct classify_model_result r;

    assert_int_equal(parse(GOOD_REPLY, &r), 0);
    assert_int_equal(parse("Sure! " GOOD_REPLY " Hope it helps.", &r), 0);
    assert_int_equal(parse("{\"severity\":\"Critical\",\"attack_vector\":\"x\",\"narrative\":\"n\","
                           "\"confidence\":0.9}",
                           &r),
                     0);
    assert_string_equal(r.severity, "critical");
    assert_int_equal(r.confidence, 90);
    assert_int_equal(r.nactions, 0);

    const char *bad[] = {
        NULL,
        "",
        "no json here",
        "[1,2]",
        "{\"severity\":\"severe\",\"attack_vector\":\"x\",\"narrative\":\"n\",\"confidence\":5}",
        "{\"severity\":\"low\",\"attack_vector\":\"x;rm\",\"narrative\":\"n\",\"confidence\":5}",
        "{\"severity\":\"low\",\"attack_vector\":\"\",\"narrative\":\"n\",\"confidence\":5}",
        "{\"severity\":\"low\",\"attack_vector\":\"x\",\"narrative\":\"a\\u0001b\",\"confidence\":"
        "5}",
        "{\"severity\":\"low\",\"attack_vector\":\"x\",\"narrative\":\"n\",\"confidence\":101}",
        "{\"severity\":\"low\",\"attack_vector\":\"x\",\"narrative\":\"n\",\"confidence\":\"50\"}",
        "{\"severity\":\"low\",\"attack_vector\":\"x\",\"narrative\":\"n\"}",
        "{\"severity\":\"low\",\"attack_vector\":\"x\",\"narrative\":\"n\",\"confidence\":5,"
        "\"recommended_actions\":\"do it\"}",
        "{\"severity\":\"low\",\"attack_vector\":\"x\",\"narrative\":\"n\",\"confidence\":5,"
        "\"recommended_actions\":[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\"]}",
        "{\"severity\":\"low\",\"attack_vector\":\"x\",\"narrative\":\"n\",\"confidence\":5,"
        "\"recommended_actions\":[1]}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (parse(bad[i], &r) != ERR_INVALID)
            fail_msg("accepted bad reply %zu", i);

    /* a narrative longer than the rule classifier's buffer */
    char *big = malloc(CLASSIFY_NARRATIVE_MAX + 200);
    int n = snprintf(big, 100,
                     "{\"severity\":\"low\",\"attack_vector\":\"x\",\"confidence\":5,"
                     "\"narrative\":\"");
    memset(big + n, 'a', CLASSIFY_NARRATIVE_MAX);
    strcpy(big + n + CLASSIFY_NARRATIVE_MAX, "\"}");
    assert_int_equal(parse(big, &r), ERR_INVALID);
    free(big);
}

static void test_config(void **state)
{
    (void)state;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    enum classify_provider p;
    char err[160];
    struct classify_model *m;

    assert_int_equal(classify_provider_parse("gemini", &p), 0);
    assert_int_equal(p, CLASSIFY_PROVIDER_GEMINI);
    assert_int_equal(classify_provider_parse("openai", &p), 0);
    assert_int_equal(classify_provider_parse("rules", &p), 0);
    assert_int_equal(p, CLASSIFY_PROVIDER_RULES);
    assert_int_equal(classify_provider_parse("claude", &p), ERR_INVALID);
    assert_string_equal(classify_provider_name(CLASSIFY_PROVIDER_OPENAI), "openai");

    struct classify_model_config c = {.provider = CLASSIFY_PROVIDER_RULES};
    assert_null(classify_model_new(loop, &c, err, sizeof err));
    unsetenv("GEMINI_API_KEY");
    c.provider = CLASSIFY_PROVIDER_GEMINI;
    assert_null(classify_model_new(loop, &c, err, sizeof err));
    assert_string_equal(err, "classifier: no API key (set GEMINI_API_KEY)");
    setenv("GEMINI_API_KEY", "from-env", 1);
    m = classify_model_new(loop, &c, err, sizeof err);
    assert_non_null(m);
    assert_string_equal(classify_model_name(m), CLASSIFY_GEMINI_MODEL);
    classify_model_free(m);
    unsetenv("GEMINI_API_KEY");
    c.url = "ftp://x/";
    c.api_key = "k";
    assert_null(classify_model_new(loop, &c, err, sizeof err));
    c.url = "http://127.0.0.1:1/";
    c.model = "../../admin";
    assert_null(classify_model_new(loop, &c, err, sizeof err));
    assert_string_equal(err, "classifier: invalid model name");
    /* an explicit URL needs no key (local OpenAI-compatible servers) */
    c.model = NULL;
    c.api_key = NULL;
    c.provider = CLASSIFY_PROVIDER_OPENAI;
    unsetenv("OPENAI_API_KEY");
    m = classify_model_new(loop, &c, err, sizeof err);
    assert_non_null(m);
    classify_model_free(m);
    ev_loop_destroy(loop);
}

static void never_cb(void *arg, const struct classify_model_result *r)
{
    (void)arg;
    (void)r;
    fail_msg("callback after classify_model_free");
}

static void test_bounded_and_free_in_flight(void **state)
{
    (void)state;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    char url[128], err[160];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/slow/v1", mini_httpd_port(srv));
    struct classify_model_config cfg = {
        .provider = CLASSIFY_PROVIDER_OPENAI, .url = url, .timeout_s = 5, .max_inflight = 2};
    struct classify_model *m = classify_model_new(loop, &cfg, err, sizeof err);

    assert_non_null(m);
    assert_int_equal(classify_model_request(m, &input, never_cb, NULL), 0);
    assert_int_equal(classify_model_request(m, &input, never_cb, NULL), 0);
    assert_int_equal(classify_model_request(m, &input, never_cb, NULL), ERR_THROTTLED);
    ev_run(loop, EVRUN_NOWAIT);
    classify_model_free(m);
    assert_int_equal(ev_run(loop, EVRUN_NOWAIT), 0);
    ev_loop_destroy(loop);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemini_roundtrip),
        cmocka_unit_test(test_openai_roundtrip),
        cmocka_unit_test(test_failures_fall_back),
        cmocka_unit_test(test_reply_checks),
        cmocka_unit_test(test_config),
        cmocka_unit_test(test_bounded_and_free_in_flight),
    };
    return cmocka_run_group_tests(tests, up, down);
}
