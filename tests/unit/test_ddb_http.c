/*
 * test_ddb_http.c - the DynamoDB client without DynamoDB: error
 * classification, the full-jitter delays, and calls against a scripted
 * loopback server (a thread) that answers throttling, 5xx and condition
 * failures - retries happen, a write is reported failed when the retry
 * budget runs out (never dropped silently), requests are signed and carry
 * the target, and ddb_call_many runs a group with per-slot results.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "store/ddb_http.h"
#include "util/err.h"
#include "util/timescale.h"

static void t_classify(void **state)
{
    (void)state;
    struct {
        int status;
        const char *type;
        const char *body;
        int rc;
        bool retry;
    } cases[] = {
        {400, "ProvisionedThroughputExceededException", NULL, ERR_THROTTLED, true},
        {400, "ThrottlingException", NULL, ERR_THROTTLED, true},
        {400, "RequestLimitExceeded", NULL, ERR_THROTTLED, true},
        {500, "InternalServerError", NULL, ERR_UNAVAILABLE, true},
        {503, "", NULL, ERR_UNAVAILABLE, true},
        {0, "", NULL, ERR_UNAVAILABLE, true},
        {400, "ConditionalCheckFailedException", NULL, ERR_CONDITION, false},
        {400, "ValidationException", NULL, ERR_INVALID, false},
        {400, "ResourceNotFoundException", NULL, ERR_NOTFOUND, false},
        {400, "ResourceInUseException", NULL, ERR_CONFLICT, false},
        {400, "TransactionCanceledException",
         "{\"CancellationReasons\":[{\"Code\":\"None\"},{\"Code\":\"ConditionalCheckFailed\"}]}",
         ERR_CONDITION, false},
        {400, "TransactionCanceledException",
         "{\"CancellationReasons\":[{\"Code\":\"TransactionConflict\"}]}", ERR_CONFLICT, true},
        {400, "TransactionCanceledException",
         "{\"CancellationReasons\":[{\"Code\":\"ValidationError\"}]}", ERR_INVALID, false},
        {400, "AccessDeniedException", NULL, ERR_INVALID, false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ddb_error e = {.http_status = cases[i].status};
        cJSON *body = cases[i].body ? cJSON_Parse(cases[i].body) : NULL;
        snprintf(e.type, sizeof(e.type), "%s", cases[i].type);
        int rc = ddb_error_classify(&e, body);
        if (rc != cases[i].rc || e.retryable != cases[i].retry)
            print_error("case %zu (%s): rc %d retry %d\n", i, cases[i].type, rc, e.retryable);
        assert_int_equal(rc, cases[i].rc);
        assert_int_equal(e.retryable, cases[i].retry);
        cJSON_Delete(body);
    }
}

static void t_backoff(void **state)
{
    (void)state;
    /* Full jitter: uniform in [0, min(cap, base * 2^n)]. */
    assert_true(ddb_backoff_delay(0, 0) == 0);
    assert_true(ddb_backoff_delay(0, 1) == 0.05);
    assert_true(ddb_backoff_delay(3, 1) == 0.4);
    assert_true(ddb_backoff_delay(3, 0.5) == 0.2);
    assert_true(ddb_backoff_delay(20, 1) == 5.0);
    assert_true(ddb_backoff_delay(1000, 1) == 5.0);
    assert_true(ddb_backoff_delay(2, 7) == 0.2); /* u clamped */
}

/* ---------- scripted server ---------- */

struct reply {
    int status;
    const char *body;
};

struct fake {
    int fd, port;
    pthread_t th;
    pthread_mutex_t mu;
    const struct reply *script;
    size_t nscript, next; /* replies cycle through the script */
    int requests;
    bool signed_ok, target_ok;
    volatile bool stop;
};

static void *serve_fake(void *arg)
{
    struct fake *f = arg;
    while (!f->stop) {
        int c = accept(f->fd, NULL, NULL);
        char buf[65536];
        size_t got = 0;
        if (c < 0)
            continue;
        /* Headers, then Content-Length bytes of body. */
        for (;;) {
            ssize_t r = recv(c, buf + got, sizeof(buf) - 1 - got, 0);
            if (r <= 0)
                break;
            got += (size_t)r;
            buf[got] = '\0';
            char *end = strstr(buf, "\r\n\r\n");
            if (end) {
                char *cl = strcasestr(buf, "content-length:");
                size_t need = cl ? (size_t)atol(cl + 15) : 0;
                if (got >= (size_t)(end + 4 - buf) + need)
                    break;
            }
        }
        if (got == 0) {
            close(c);
            continue;
        }
        pthread_mutex_lock(&f->mu);
        const struct reply *rp = &f->script[f->next % f->nscript];
        f->next++;
        f->requests++;
        if (!strstr(buf, "Authorization: AWS4-HMAC-SHA256 Credential=testkey/"))
            f->signed_ok = false;
        if (!strstr(buf, "X-Amz-Target: DynamoDB_20120810."))
            f->target_ok = false;
        pthread_mutex_unlock(&f->mu);
        char out[1024];
        int n = snprintf(out, sizeof(out),
                         "HTTP/1.1 %d X\r\nContent-Type: application/x-amz-json-1.0\r\n"
                         "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
                         rp->status, strlen(rp->body), rp->body);
        (void)!send(c, out, (size_t)n, MSG_NOSIGNAL);
        close(c);
    }
    return NULL;
}

static void fake_start(struct fake *f, const struct reply *script, size_t n)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);
    memset(f, 0, sizeof(*f));
    f->script = script;
    f->nscript = n;
    f->signed_ok = f->target_ok = true;
    pthread_mutex_init(&f->mu, NULL);
    f->fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(f->fd >= 0);
    assert_int_equal(bind(f->fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(f->fd, 64), 0);
    getsockname(f->fd, (struct sockaddr *)&a, &al);
    f->port = ntohs(a.sin_port);
    pthread_create(&f->th, NULL, serve_fake, f);
}

static void fake_stop(struct fake *f)
{
    f->stop = true;
    shutdown(f->fd, SHUT_RDWR);
    /* Unblock accept(). */
    int c = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
                            .sin_port = htons((uint16_t)f->port)};
    (void)!connect(c, (struct sockaddr *)&a, sizeof(a));
    close(c);
    pthread_join(f->th, NULL);
    close(f->fd);
    pthread_mutex_destroy(&f->mu);
}

static struct ddb_http *client_for(struct fake *f, int retries)
{
    char url[64], err[256];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", f->port);
    struct ddb_http_config cfg = {.endpoint = url, .max_retries = retries, .timeout_ms = 5000};
    struct ddb_http *h = ddb_http_new(&cfg, err, sizeof(err));
    if (!h)
        print_error("%s\n", err);
    assert_non_null(h);
    return h;
}

#define THROTTLE                                                                                   \
    {                                                                                              \
        400, "{\"__type\":\"com.amazonaws.dynamodb.v20120810#ThrottlingException\","               \
             "\"message\":\"slow down\"}"                                                          \
    }

static void t_retries(void **state)
{
    (void)state;
    static const struct reply script[] = {
        THROTTLE,
        {500, "{\"__type\":\"InternalServerError\"}"},
        THROTTLE,
        {200, "{\"ConsumedCapacity\":{\"TableName\":\"t\",\"CapacityUnits\":2}}"},
    };
    struct fake f;
    struct ddb_http_stats st;
    fake_start(&f, script, 4);
    struct ddb_http *h = client_for(&f, 5);
    cJSON *req = cJSON_Parse("{\"TableName\":\"t\"}"), *resp = NULL;
    struct ddb_error e;
    assert_int_equal(ddb_call(h, "DynamoDB_20120810.PutItem", req, &resp, &e), 0);
    assert_non_null(resp);
    cJSON_Delete(resp);
    ddb_http_stats(h, &st);
    assert_int_equal(st.calls, 1);
    assert_int_equal(st.retries, 3);
    assert_int_equal(st.throttles, 2);
    assert_true(st.consumed_wcu == 2);
    assert_int_equal(f.requests, 4);
    assert_true(f.signed_ok);
    assert_true(f.target_ok);
    cJSON_Delete(req);
    ddb_http_free(h);
    fake_stop(&f);
}

static void t_retries_run_out(void **state)
{
    (void)state;
    static const struct reply script[] = {THROTTLE};
    static const struct reply cond[] = {
        {400, "{\"__type\":\"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException\","
              "\"message\":\"The conditional request failed\"}"}};
    struct fake f;
    fake_start(&f, script, 1);
    struct ddb_http *h = client_for(&f, 3);
    cJSON *req = cJSON_Parse("{\"TableName\":\"t\"}"), *resp = NULL;
    struct ddb_error e;
    /* The write is reported failed, after 1 + 3 attempts. */
    assert_int_equal(ddb_call(h, "DynamoDB_20120810.PutItem", req, &resp, &e), ERR_THROTTLED);
    assert_string_equal(e.type, "ThrottlingException");
    assert_string_equal(e.message, "slow down");
    assert_int_equal(e.http_status, 400);
    assert_int_equal(f.requests, 4);
    cJSON_Delete(resp);
    ddb_http_free(h);
    fake_stop(&f);
    /* A condition failure is final at once. */
    fake_start(&f, cond, 1);
    h = client_for(&f, 3);
    resp = NULL;
    assert_int_equal(ddb_call(h, "DynamoDB_20120810.PutItem", req, &resp, &e), ERR_CONDITION);
    assert_int_equal(f.requests, 1);
    cJSON_Delete(resp);
    ddb_http_free(h);
    fake_stop(&f);
    /* Nobody listening: transport errors are retried, then UNAVAILABLE. */
    fake_start(&f, script, 1);
    h = client_for(&f, 2);
    fake_stop(&f);
    resp = NULL;
    assert_int_equal(ddb_call(h, "DynamoDB_20120810.GetItem", req, &resp, &e), ERR_UNAVAILABLE);
    assert_int_equal(e.http_status, 0);
    assert_null(resp);
    ddb_http_free(h);
    cJSON_Delete(req);
}

static void t_call_many(void **state)
{
    (void)state;
    /* Every third answer throttles; each slot retries on its own. */
    static const struct reply script[] = {
        {200, "{\"Item\":{\"v\":{\"N\":\"1\"}}}"},
        {200, "{\"Item\":{\"v\":{\"N\":\"1\"}}}"},
        THROTTLE,
    };
    struct fake f;
    struct ddb_call_slot slots[40];
    cJSON *req = cJSON_Parse("{\"TableName\":\"t\"}");
    fake_start(&f, script, 3);
    struct ddb_http *h = client_for(&f, 8);
    memset(slots, 0, sizeof(slots));
    for (size_t i = 0; i < 40; i++) {
        slots[i].target = "DynamoDB_20120810.GetItem";
        slots[i].req = req;
    }
    assert_int_equal(ddb_call_many(h, slots, 40), 0);
    for (size_t i = 0; i < 40; i++) {
        assert_int_equal(slots[i].rc, 0);
        assert_non_null(cJSON_GetObjectItemCaseSensitive(slots[i].resp, "Item"));
        cJSON_Delete(slots[i].resp);
    }
    assert_true(f.requests > 40);
    ddb_http_free(h);
    fake_stop(&f);
    /* A slot whose retries run out reports its own error. */
    static const struct reply always[] = {THROTTLE};
    fake_start(&f, always, 1);
    h = client_for(&f, 1);
    memset(slots, 0, sizeof(slots));
    slots[0].target = slots[1].target = "DynamoDB_20120810.GetItem";
    slots[0].req = slots[1].req = req;
    assert_int_equal(ddb_call_many(h, slots, 2), ERR_THROTTLED);
    assert_int_equal(slots[0].rc, ERR_THROTTLED);
    assert_int_equal(slots[1].rc, ERR_THROTTLED);
    assert_string_equal(slots[1].err.type, "ThrottlingException");
    cJSON_Delete(slots[0].resp);
    cJSON_Delete(slots[1].resp);
    ddb_http_free(h);
    fake_stop(&f);
    cJSON_Delete(req);
}

static void t_no_credentials(void **state)
{
    (void)state;
    char err[256];
    unsetenv("AWS_ACCESS_KEY_ID");
    setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials", 1);
    struct ddb_http_config cfg = {.endpoint = "http://127.0.0.1:1"};
    assert_null(ddb_http_new(&cfg, err, sizeof(err)));
    assert_non_null(strstr(err, "credentials"));
    setenv("AWS_ACCESS_KEY_ID", "testkey", 1);
    cfg.endpoint = "not a url";
    assert_null(ddb_http_new(&cfg, err, sizeof(err)));
    unsetenv("AWS_SHARED_CREDENTIALS_FILE");
}

int main(void)
{
    setenv("AWS_ACCESS_KEY_ID", "testkey", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "testsecret", 1);
    unsetenv("AWS_SESSION_TOKEN");
    time_scale_set(0.01);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_classify),  cmocka_unit_test(t_backoff),
        cmocka_unit_test(t_retries),   cmocka_unit_test(t_retries_run_out),
        cmocka_unit_test(t_call_many), cmocka_unit_test(t_no_credentials),
    };
    return cmocka_run_group_tests_name("ddb_http", tests, NULL, NULL);
}
