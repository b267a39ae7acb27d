/*
 * test_http_client.c - the libcurl-multi-on-libev client against a tiny
 * HTTP/1.1 server on loopback (tests/unit/mini_httpd.h).  Paths of the
 * test server: /ok answers 200 "hello", /500
 * answers 500, /slow answers after 3 s, /big sends 2 MB, /close hangs up
 * without answering.  The handler records the last request it read; the
 * server counts accepted connections.
 *
 * Each test runs the client's loop until it has nothing left to do
 * (ev_run returns when the last watcher stops), with an unref'd guard
 * timer that fails the test instead of hanging.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <ev.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/timeutil.h"
#include "http/client.h"
#include "mini_httpd.h"
#include "util/err.h"

/* ---- the test server (mini_httpd.h) ------------------------------------ */

struct seen {
    pthread_mutex_t mu;
    char method[16], path[256], xtest[64], ctype[64];
    char body[4096];
};

static struct mini_httpd *srv;
static struct seen seen = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void handler(void *arg, const struct mini_req *r, int fd)
{
    (void)arg;
    pthread_mutex_lock(&seen.mu);
    snprintf(seen.method, sizeof seen.method, "%s", r->method);
    snprintf(seen.path, sizeof seen.path, "%s", r->path);
    mini_header(r, "X-Test", seen.xtest, sizeof seen.xtest);
    mini_header(r, "Content-Type", seen.ctype, sizeof seen.ctype);
    size_t n = r->body_len < sizeof seen.body - 1 ? r->body_len : sizeof seen.body - 1;
    memcpy(seen.body, r->body, n);
    seen.body[n] = '\0';
    pthread_mutex_unlock(&seen.mu);

    if (!strcmp(r->path, "/ok")) {
        mini_reply(fd, 200, "text/plain", "hello");
    } else if (!strcmp(r->path, "/500")) {
        mini_reply(fd, 500, "text/plain", "nope");
    } else if (!strcmp(r->path, "/slow")) {
        for (int i = 0; i < 60 && !mini_httpd_stopping(srv); i++)
            usleep(50000);
        mini_reply(fd, 200, "text/plain", "");
    } else if (!strcmp(r->path, "/big")) {
        const size_t total = 2u * 1024 * 1024;
        char hdr[128];
        snprintf(hdr, sizeof hdr, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n", total);
        mini_send(fd, hdr, strlen(hdr));
        char *chunk = malloc(65536);
        memset(chunk, 'x', 65536);
        for (size_t sent = 0; sent < total; sent += 65536)
            mini_send(fd, chunk, 65536);
        free(chunk);
    }
    /* /close and anything else: hang up without an answer */
}

static int server_up(void **state)
{
    (void)state;
    srv = mini_httpd_start(handler, NULL);
    return srv ? 0 : -1;
}

static int server_down(void **state)
{
    (void)state;
    mini_httpd_stop(srv);
    return 0;
}

/* ---- client side helpers ------------------------------------------------ */

struct result {
    int calls;
    int err;
    long status;
    char body[64];
    size_t body_len;
    char error[256];
    double duration_ms;
};

static void done_cb(void *arg, const struct http_client_res *res)
{
    struct result *r = arg;
    r->calls++;
    r->err = res->err;
    r->status = res->status;
    r->body_len = res->body_len;
    snprintf(r->body, sizeof r->body, "%s", res->body ? res->body : "");
    snprintf(r->error, sizeof r->error, "%s", res->error ? res->error : "");
    r->duration_ms = res->duration_ms;
}

static void guard_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)w;
    (void)revents;
    ev_break(loop, EVBREAK_ALL);
    fail_msg("the client loop did not finish in time");
}

/* Runs the loop until the client has nothing in flight. */
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

static void url_of(char *out, size_t n, const char *path)
{
    snprintf(out, n, "http://127.0.0.1:%d%s", mini_httpd_port(srv), path);
}

static struct ev_loop *new_loop(void)
{
    return ev_loop_new(EVFLAG_AUTO);
}

/* ---- tests -------------------------------------------------------------- */

static void test_post_roundtrip(void **state)
{
    (void)state;
    struct ev_loop *loop = new_loop();
    struct http_client *c = http_client_new(loop, NULL);
    struct result r = {0};
    char url[128];
    const char *hdrs[] = {"X-Test: 42", "Content-Type: application/json"};
    const char *body = "{\"a\":1}";

    url_of(url, sizeof url, "/ok");
    struct http_client_req req = {.url = url,
                                  .headers = hdrs,
                                  .nheaders = 2,
                                  .body = body,
                                  .body_len = strlen(body),
                                  .timeout_s = 5};
    assert_int_equal(http_client_start(c, &req, done_cb, &r), 0);
    assert_int_equal(r.calls, 0); /* never from inside start */
    assert_int_equal(http_client_inflight(c), 1);
    run_loop(loop);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.err, 0);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "hello");
    assert_int_equal(r.body_len, 5);
    assert_string_equal(r.error, "");
    assert_int_equal(http_client_inflight(c), 0);
    pthread_mutex_lock(&seen.mu);
    assert_string_equal(seen.method, "POST");
    assert_string_equal(seen.path, "/ok");
    assert_string_equal(seen.xtest, "42");
    assert_string_equal(seen.ctype, "application/json");
    assert_string_equal(seen.body, body);
    pthread_mutex_unlock(&seen.mu);

    /* GET when there is no body */
    memset(&r, 0, sizeof r);
    struct http_client_req get = {.url = url, .timeout_s = 5};
    assert_int_equal(http_client_start(c, &get, done_cb, &r), 0);
    run_loop(loop);
    assert_int_equal(r.status, 200);
    pthread_mutex_lock(&seen.mu);
    assert_string_equal(seen.method, "GET");
    pthread_mutex_unlock(&seen.mu);

    http_client_free(c);
    ev_loop_destroy(loop);
}

static void test_error_status_is_a_response(void **state)
{
    (void)state;
    struct ev_loop *loop = new_loop();
    struct http_client *c = http_client_new(loop, NULL);
    struct result r = {0};
    char url[128];

    url_of(url, sizeof url, "/500");
    struct http_client_req req = {.url = url, .body = "x", .body_len = 1, .timeout_s = 5};
    assert_int_equal(http_client_start(c, &req, done_cb, &r), 0);
    run_loop(loop);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.err, 0);
    assert_int_equal(r.status, 500);
    assert_string_equal(r.body, "nope");
    http_client_free(c);
    ev_loop_destroy(loop);
}

static void test_timeout(void **state)
{
    (void)state;
    struct ev_loop *loop = new_loop();
    struct http_client *c = http_client_new(loop, NULL);
    struct result r = {0};
    char url[128];
    int64_t t0 = time_mono_ms();

    url_of(url, sizeof url, "/slow");
    /* a sub-second timeout must stay sub-second (no integer seconds) */
    struct http_client_req req = {.url = url, .timeout_s = 0.3};
    assert_int_equal(http_client_start(c, &req, done_cb, &r), 0);
    run_loop(loop);
    int64_t took = time_mono_ms() - t0;
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.err, ERR_TIMEOUT);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.error, "timeout");
    assert_true(took >= 250 && took < 2000);
    assert_true(r.duration_ms >= 250 && r.duration_ms < 2000);
    http_client_free(c);
    ev_loop_destroy(loop);
}

static void test_response_cap(void **state)
{
    (void)state;
    struct ev_loop *loop = new_loop();
    struct http_client_config cfg = {.max_response = 1024};
    struct http_client *c = http_client_new(loop, &cfg);
    struct result r = {0};
    char url[128];

    url_of(url, sizeof url, "/big");
    struct http_client_req req = {.url = url, .timeout_s = 5};
    assert_int_equal(http_client_start(c, &req, done_cb, &r), 0);
    run_loop(loop);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.err, ERR_TOOBIG);
    assert_true(r.body_len <= 1024);
    http_client_free(c);
    ev_loop_destroy(loop);
}

static void test_refused_and_hangup(void **state)
{
    (void)state;
    struct ev_loop *loop = new_loop();
    struct http_client *c = http_client_new(loop, NULL);
    struct result r1 = {0}, r2 = {0};
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t sl = sizeof sa;
    char url[128];

    /* a port nobody listens on */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    getsockname(fd, (struct sockaddr *)&sa, &sl);
    close(fd);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/x", ntohs(sa.sin_port));
    struct http_client_req req = {.url = url, .timeout_s = 5};
    assert_int_equal(http_client_start(c, &req, done_cb, &r1), 0);
    char url2[128];
    url_of(url2, sizeof url2, "/close");
    struct http_client_req req2 = {.url = url2, .timeout_s = 5};
    assert_int_equal(http_client_start(c, &req2, done_cb, &r2), 0);
    run_loop(loop);
    assert_int_equal(r1.calls, 1);
    assert_int_equal(r1.err, ERR_UNAVAILABLE);
    assert_true(strlen(r1.error) > 0);
    assert_int_equal(r2.calls, 1);
    assert_int_equal(r2.err, ERR_UNAVAILABLE);
    http_client_free(c);
    ev_loop_destroy(loop);
}

static int filter_calls;

static bool deny_loopback(void *arg, const struct sockaddr *sa, socklen_t len)
{
    (void)arg;
    (void)len;
    filter_calls++;
    if (sa->sa_family != AF_INET)
        return true;
    const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;
    return (ntohl(in->sin_addr.s_addr) >> 24) != 127;
}

static void test_address_filter(void **state)
{
    (void)state;
    struct ev_loop *loop = new_loop();
    struct http_client *c = http_client_new(loop, NULL);
    struct result r = {0};
    char url[128];
    int before = mini_httpd_accepted(srv);

    filter_calls = 0;
    url_of(url, sizeof url, "/ok");
    struct http_client_req req = {.url = url, .timeout_s = 5, .addr_ok = deny_loopback};
    assert_int_equal(http_client_start(c, &req, done_cb, &r), 0);
    run_loop(loop);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.err, ERR_INVALID);
    assert_string_equal(r.error, "address refused: 127.0.0.1");
    assert_true(filter_calls >= 1);
    usleep(50000);
    assert_int_equal(mini_httpd_accepted(srv), before); /* never connected */

    /* a filter that allows lets the request through */
    memset(&r, 0, sizeof r);
    req.addr_ok = NULL;
    assert_int_equal(http_client_start(c, &req, done_cb, &r), 0);
    run_loop(loop);
    assert_int_equal(r.status, 200);
    http_client_free(c);
    ev_loop_destroy(loop);
}

static void test_start_refusals(void **state)
{
    (void)state;
    struct ev_loop *loop = new_loop();
    struct http_client_config cfg = {.max_inflight = 2};
    struct http_client *c = http_client_new(loop, &cfg);
    struct result r[3];
    char url[128];
    const char *many[HTTP_CLIENT_HEADERS_MAX + 1];

    memset(r, 0, sizeof r);
    for (size_t i = 0; i <= HTTP_CLIENT_HEADERS_MAX; i++)
        many[i] = "X-A: b";
    struct http_client_req bad = {.url = "ftp://127.0.0.1/x"};
    assert_int_equal(http_client_start(c, &bad, done_cb, &r[0]), ERR_INVALID);
    bad.url = "file:///etc/passwd";
    assert_int_equal(http_client_start(c, &bad, done_cb, &r[0]), ERR_INVALID);
    bad.url = "http://exa mple.com/";
    assert_int_equal(http_client_start(c, &bad, done_cb, &r[0]), ERR_INVALID);
    bad.url = NULL;
    assert_int_equal(http_client_start(c, &bad, done_cb, &r[0]), ERR_INVALID);
    url_of(url, sizeof url, "/ok");
    struct http_client_req hdr = {
        .url = url, .headers = many, .nheaders = HTTP_CLIENT_HEADERS_MAX + 1};
    assert_int_equal(http_client_start(c, &hdr, done_cb, &r[0]), ERR_INVALID);
    assert_int_equal(r[0].calls, 0);

    /* bounded in flight */
    url_of(url, sizeof url, "/slow");
    struct http_client_req slow = {.url = url, .timeout_s = 0.3};
    assert_int_equal(http_client_start(c, &slow, done_cb, &r[0]), 0);
    assert_int_equal(http_client_start(c, &slow, done_cb, &r[1]), 0);
    assert_int_equal(http_client_start(c, &slow, done_cb, &r[2]), ERR_THROTTLED);
    run_loop(loop);
    assert_int_equal(r[0].calls, 1);
    assert_int_equal(r[1].calls, 1);
    assert_int_equal(r[2].calls, 0);
    assert_int_equal(http_client_inflight(c), 0);
    http_client_free(c);
    ev_loop_destroy(loop);
}

static int chain_left;
static struct http_client *chain_client;
static char chain_url[128];

/* A callback that starts the next request (allowed from callbacks). */
static void chain_cb(void *arg, const struct http_client_res *res)
{
    int *ok = arg;
    if (res->err == 0 && res->status == 200)
        (*ok)++;
    if (--chain_left > 0) {
        struct http_client_req req = {.url = chain_url, .timeout_s = 5};
        assert_int_equal(http_client_start(chain_client, &req, chain_cb, arg), 0);
    }
}

static void test_concurrency_and_chaining(void **state)
{
    (void)state;
    struct ev_loop *loop = new_loop();
    struct http_client *c = http_client_new(loop, NULL);
    struct result r[30];
    char url[128];

    memset(r, 0, sizeof r);
    url_of(url, sizeof url, "/ok");
    struct http_client_req req = {.url = url, .timeout_s = 5};
    for (int i = 0; i < 30; i++)
        assert_int_equal(http_client_start(c, &req, done_cb, &r[i]), 0);
    run_loop(loop);
    for (int i = 0; i < 30; i++) {
        assert_int_equal(r[i].calls, 1);
        assert_int_equal(r[i].status, 200);
    }

    int ok = 0;
    chain_left = 5;
    chain_client = c;
    url_of(chain_url, sizeof chain_url, "/ok");
    struct http_client_req first = {.url = chain_url, .timeout_s = 5};
    assert_int_equal(http_client_start(c, &first, chain_cb, &ok), 0);
    run_loop(loop);
    assert_int_equal(ok, 5);
    http_client_free(c);
    ev_loop_destroy(loop);
}

static void never_cb(void *arg, const struct http_client_res *res)
{
    (void)arg;
    (void)res;
    fail_msg("callback after http_client_free");
}

static void test_free_in_flight(void **state)
{
    (void)state;
    struct ev_loop *loop = new_loop();
    struct http_client *c = http_client_new(loop, NULL);
    char url[128];

    url_of(url, sizeof url, "/slow");
    struct http_client_req req = {.url = url, .timeout_s = 5};
    assert_int_equal(http_client_start(c, &req, never_cb, NULL), 0);
    assert_int_equal(http_client_start(c, &req, never_cb, NULL), 0);
    /* let the transfers connect and wait for the answer */
    ev_run(loop, EVRUN_NOWAIT);
    usleep(100000);
    ev_run(loop, EVRUN_NOWAIT);
    http_client_free(c);
    /* nothing of the client is left on the loop */
    assert_int_equal(ev_run(loop, EVRUN_NOWAIT), 0);
    ev_loop_destroy(loop);
    http_client_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_post_roundtrip),
        cmocka_unit_test(test_error_status_is_a_response),
        cmocka_unit_test(test_timeout),
        cmocka_unit_test(test_response_cap),
        cmocka_unit_test(test_refused_and_hangup),
        cmocka_unit_test(test_address_filter),
        cmocka_unit_test(test_start_refusals),
        cmocka_unit_test(test_concurrency_and_chaining),
        cmocka_unit_test(test_free_in_flight),
    };
    return cmocka_run_group_tests(tests, server_up, server_down);
}
