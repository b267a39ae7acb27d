/*
 * test_http_server.c - the HTTP server driven over real sockets.
 *
 * Each test starts a server on 127.0.0.1:0 in its own ev loop running in a
 * thread, with a small handler: it echoes method, path and body length,
 * answers 404 on /missing, closes on /close, streams on /stream, builds a
 * large body on /big, and lets the test observe the commit hook (/commit
 * checks that commit runs before the response leaves, /fail-commit makes
 * the commit fail).  The client side is plain blocking sockets with
 * receive timeouts, so every check is bounded in time.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <ev.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "http/http.h"
#include "util/err.h"
#include "util/timescale.h"

/* ---- the server under test, in a thread -------------------------------- */

struct tsrv {
    struct ev_loop *loop;
    struct http_server *srv;
    pthread_t th;
    ev_async wake;
    atomic_int cmd; /* 1 drain, 2 stop */
    atomic_int drained;
    atomic_int commits;
    atomic_int commit_fail_next;
    atomic_int committed_flag; /* set at the end of a (slow) commit */
    atomic_int slow_commit;
    atomic_int stream_opened;
    atomic_int stream_closed;
    atomic_int handled;
    atomic_int done_calls;
    atomic_size_t done_bytes;
    /* deferred durability: commit_ticket hands out tickets while set */
    atomic_int tickets_on;
    atomic_ullong ticket;
    atomic_ullong durable_arg;
    atomic_int durable_fail;
    /* commit_later postpones while set and fewer than later_until were handled */
    atomic_int later_on, later_until, later_asked;
    /* /defer: the deferred connection (loop thread only) and what became of it */
    struct http_conn *deferred;
    atomic_int deferred_closed;
    atomic_int complete_rc;
    int port;
};

static void stream_open_cb(void *arg, struct http_conn *c)
{
    struct tsrv *t = arg;
    atomic_fetch_add(&t->stream_opened, 1);
    const char ev[] = "data: hello\n\n";
    http_conn_send(c, ev, sizeof ev - 1);
}

static void stream_closed_cb(void *arg, struct http_conn *c)
{
    (void)c;
    struct tsrv *t = arg;
    atomic_fetch_add(&t->stream_closed, 1);
}

static void deferred_closed_cb(void *arg, struct http_conn *c)
{
    struct tsrv *t = arg;
    (void)c;
    t->deferred = NULL;
    atomic_fetch_add(&t->deferred_closed, 1);
}

static void handle(void *arg, struct http_request *req, struct http_response *res)
{
    struct tsrv *t = arg;
    atomic_fetch_add(&t->handled, 1);
    if (!strcmp(req->path, "/defer")) {
        t->deferred = req->conn;
        res->deferred = true;
        res->deferred_closed = deferred_closed_cb;
        res->deferred_arg = t;
        return;
    }
    if (!strcmp(req->path, "/missing")) {
        http_response_error(res, 404, "Not found");
        return;
    }
    if (!strcmp(req->path, "/fail-commit"))
        atomic_store(&t->commit_fail_next, 1);
    if (!strcmp(req->path, "/commit")) {
        atomic_store(&t->committed_flag, 0);
        atomic_store(&t->slow_commit, 1);
    }
    if (!strcmp(req->path, "/stall")) {
        /* a handler holding the loop (a slow synchronous store call) */
        struct timespec ts = {0, 400 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (!strcmp(req->path, "/close"))
        res->close = true;
    if (!strcmp(req->path, "/stream")) {
        res->status = 200;
        res->content_type = "text/event-stream";
        http_response_header(res, "Cache-Control", "no-cache");
        res->stream = true;
        res->stream_open = stream_open_cb;
        res->stream_closed = stream_closed_cb;
        res->stream_arg = t;
        return;
    }
    if (!strcmp(req->path, "/big")) {
        res->status = 200;
        res->content_type = "application/octet-stream";
        for (int i = 0; i < 3 * 1024 * 1024 / 64; i++)
            buf_append(&res->body,
                       "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n", 64);
        return;
    }
    if (!strcmp(req->path, "/hdr"))
        http_response_header(res, "X-Test", "a\r\nInjected: %d", 1);
    res->status = 200;
    buf_printf(&res->body, "{\"method\":\"%s\",\"path\":\"%s\",\"query\":\"%s\",\"len\":%zu}",
               req->method_name, req->path, req->query, req->body_len);
}

static int commit(void *arg)
{
    struct tsrv *t = arg;
    atomic_fetch_add(&t->commits, 1);
    if (atomic_exchange(&t->slow_commit, 0)) {
        /* a buggy server would let the response out during this sleep */
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
        atomic_store(&t->committed_flag, 1);
    }
    if (atomic_exchange(&t->commit_fail_next, 0))
        return ERR_IO;
    return 0;
}

static uint64_t commit_ticket(void *arg)
{
    struct tsrv *t = arg;
    if (!atomic_load(&t->tickets_on))
        return 0;
    return (uint64_t)atomic_fetch_add(&t->ticket, 1) + 1;
}

static bool commit_later(void *arg)
{
    struct tsrv *t = arg;
    if (!atomic_load(&t->later_on))
        return false;
    atomic_fetch_add(&t->later_asked, 1);
    return atomic_load(&t->handled) < atomic_load(&t->later_until);
}

static void done(void *arg, const struct http_request *req, const struct http_response *res,
                 size_t bytes, double ms)
{
    (void)req;
    (void)res;
    (void)ms;
    struct tsrv *t = arg;
    atomic_fetch_add(&t->done_calls, 1);
    atomic_fetch_add(&t->done_bytes, bytes);
}

static void drained_cb(void *arg)
{
    struct tsrv *t = arg;
    atomic_store(&t->drained, 1);
}

static void wake_cb(struct ev_loop *loop, ev_async *w, int revents)
{
    (void)revents;
    struct tsrv *t = w->data;
    int cmd = atomic_exchange(&t->cmd, 0);
    if (cmd == 1) {
        http_server_drain(t->srv, drained_cb, t);
    } else if (cmd == 3) {
        http_server_durable(t->srv, (uint64_t)atomic_load(&t->durable_arg),
                            atomic_load(&t->durable_fail) != 0);
    } else if (cmd == 4) {
        http_server_set_early_writes(t->srv, true);
    } else if (cmd == 5 || cmd == 6) {
        /* answer the deferred request; 6 closes its connection first (dead,
         * not freed yet: the prepare phase frees it) */
        struct http_response res;
        memset(&res, 0, sizeof res);
        buf_init(&res.headers, 4096);
        buf_init(&res.body, 4096);
        res.status = 200;
        res.content_type = "text/plain";
        buf_puts(&res.body, "late");
        struct http_conn *c = t->deferred;
        if (c && cmd == 6)
            http_conn_close(c);
        atomic_store(&t->complete_rc, c ? http_conn_complete(c, &res) : 1);
        if (c)
            t->deferred = NULL;
        buf_free(&res.headers);
        buf_free(&res.body);
    } else if (cmd == 2) {
        http_server_free(t->srv);
        t->srv = NULL;
        ev_async_stop(loop, w);
        ev_break(loop, EVBREAK_ALL);
    }
}

static void *loop_thread(void *arg)
{
    struct tsrv *t = arg;
    ev_run(t->loop, 0);
    return NULL;
}

/* Starts a server; NULL when it cannot listen (e.g. no IPv6). */
static struct tsrv *tsrv_start(const struct http_server_config *cfg)
{
    struct tsrv *t = calloc(1, sizeof *t);
    char err[256];
    struct http_handler h = {.arg = t,
                             .handle = handle,
                             .commit = commit,
                             .done = done,
                             .commit_ticket = commit_ticket,
                             .commit_later = commit_later};
    t->loop = ev_loop_new(EVFLAG_AUTO);
    t->srv = http_server_new(t->loop, cfg, &h, err, sizeof err);
    if (!t->srv) {
        print_message("server: %s\n", err);
        ev_loop_destroy(t->loop);
        free(t);
        return NULL;
    }
    t->port = http_server_port(t->srv);
    ev_async_init(&t->wake, wake_cb);
    t->wake.data = t;
    ev_async_start(t->loop, &t->wake);
    pthread_create(&t->th, NULL, loop_thread, t);
    return t;
}

static void tsrv_cmd(struct tsrv *t, int cmd)
{
    atomic_store(&t->cmd, cmd);
    ev_async_send(t->loop, &t->wake);
}

static void tsrv_stop(struct tsrv *t)
{
    tsrv_cmd(t, 2);
    pthread_join(t->th, NULL);
    ev_loop_destroy(t->loop);
    free(t);
}

static struct http_server_config base_cfg(void)
{
    struct http_server_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.listen = "127.0.0.1:0";
    return cfg;
}

/* ---- client helpers ----------------------------------------------------- */

struct cli {
    int fd;
    char buf[4 * 1024 * 1024];
    size_t len;
};

struct resp {
    int status;
    char head[8192];
    char body[8192];
    size_t body_len;
    long content_length;
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int connect_to(int family, int port)
{
    int fd = socket(family, SOCK_STREAM, 0);
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    int rc;
    if (family == AF_INET6) {
        struct sockaddr_in6 a6;
        memset(&a6, 0, sizeof a6);
        a6.sin6_family = AF_INET6;
        a6.sin6_port = htons((unsigned short)port);
        a6.sin6_addr = in6addr_loopback;
        rc = connect(fd, (struct sockaddr *)&a6, sizeof a6);
    } else {
        struct sockaddr_in a4;
        memset(&a4, 0, sizeof a4);
        a4.sin_family = AF_INET;
        a4.sin_port = htons((unsigned short)port);
        a4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        rc = connect(fd, (struct sockaddr *)&a4, sizeof a4);
    }
    if (rc < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static struct cli *cli_open(int port)
{
    struct cli *c = calloc(1, sizeof *c);
    c->fd = connect_to(AF_INET, port);
    assert_true(c->fd >= 0);
    return c;
}

static void cli_close(struct cli *c)
{
    if (c->fd >= 0)
        close(c->fd);
    free(c);
}

static void send_all(int fd, const void *p, size_t n)
{
    const char *s = p;
    while (n) {
        ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
        assert_true(w > 0);
        s += w;
        n -= (size_t)w;
    }
}

static void cli_send(struct cli *c, const char *s)
{
    send_all(c->fd, s, strlen(s));
}

/* Reads more bytes into c->buf; returns bytes read, 0 on EOF, -1 on
 * timeout or error. */
static ssize_t cli_fill(struct cli *c)
{
    if (c->len >= sizeof c->buf - 1)
        return -1;
    ssize_t n = recv(c->fd, c->buf + c->len, sizeof c->buf - 1 - c->len, 0);
    if (n > 0) {
        c->len += (size_t)n;
        c->buf[c->len] = '\0';
    }
    return n;
}

static long header_long(const char *head, const char *name)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\r\n%s:", name);
    const char *p = strcasestr(head, pat);
    return p ? strtol(p + strlen(pat), NULL, 10) : -1;
}

static bool has_header(const struct resp *r, const char *line)
{
    return strcasestr(r->head, line) != NULL;
}

/* Reads one response (Content-Length framed, or up to EOF without it).
 * Returns 0, or -1 on timeout / EOF before a response. */
static int cli_read(struct cli *c, struct resp *r, bool head_request)
{
    memset(r, 0, sizeof *r);
    char *end = c->len ? strstr(c->buf, "\r\n\r\n") : NULL;
    while (!end) {
        if (cli_fill(c) <= 0)
            return -1;
        end = strstr(c->buf, "\r\n\r\n");
    }
    size_t hl = (size_t)(end - c->buf) + 4;
    assert_true(hl < sizeof r->head);
    memcpy(r->head, c->buf, hl);
    r->head[hl] = '\0';
    r->status = atoi(c->buf + 9);
    r->content_length = header_long(r->head, "Content-Length");
    size_t want = 0;
    if (!head_request && r->content_length > 0)
        want = (size_t)r->content_length;
    while (c->len - hl < want)
        if (cli_fill(c) <= 0)
            return -1;
    r->body_len = want;
    memcpy(r->body, c->buf + hl, want < sizeof r->body - 1 ? want : sizeof r->body - 1);
    memmove(c->buf, c->buf + hl + want, c->len - hl - want);
    c->len -= hl + want;
    c->buf[c->len] = '\0';
    return 0;
}

/* True when the peer closes within ms (EOF or reset). */
static bool wait_closed(int fd, int ms)
{
    int64_t end = now_ms() + ms;
    char tmp[4096];
    for (;;) {
        int left = (int)(end - now_ms());
        if (left <= 0)
            return false;
        struct pollfd pfd = {fd, POLLIN, 0};
        if (poll(&pfd, 1, left) <= 0)
            continue;
        ssize_t n = recv(fd, tmp, sizeof tmp, MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
            return true;
    }
}

/* True when nothing at all arrives within ms (connection still open). */
static bool quiet_for(int fd, int ms)
{
    struct pollfd pfd = {fd, POLLIN, 0};
    return poll(&pfd, 1, ms) == 0;
}

static struct resp g_resp;

/* ---- tests ------------------------------------------------------------- */

/* Default timeouts scaled by 0.1: header 1 s, idle 6 s, body 3 s, and
 * the linger after an error answer 0.2 s. */
static int setup(void **state)
{
    (void)state;
    time_scale_set(0.1);
    return 0;
}

static void test_keep_alive(void **state)
{
    (void)state;
    struct http_server_config cfg = base_cfg();
    struct tsrv *t = tsrv_start(&cfg);
    assert_non_null(t);
    struct cli *c = cli_open(t->port);
    cli_send(c, "GET /one?x=1 HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_int_equal(g_resp.status, 200);
    assert_string_equal(g_resp.body,
                        "{\"method\":\"GET\",\"path\":\"/one\",\"query\":\"x=1\",\"len\":0}");
    assert_true(has_header(&g_resp, "\r\nContent-Type: application/json\r\n"));
    assert_true(has_header(&g_resp, "\r\nDate: "));
    assert_false(has_header(&g_resp, "Connection: close"));
    cli_send(c, "GET /two HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_int_equal(g_resp.status, 200);
    assert_non_null(strstr(g_resp.body, "\"path\":\"/two\""));
    assert_int_equal(atomic_load(&t->handled), 2);
    assert_true(atomic_load(&t->done_calls) >= 2);
    assert_true(atomic_load(&t->done_bytes) > 100);
    /* CR/LF in a header value cannot inject a header */
    cli_send(c, "GET /hdr HTTP/1.1\r\n\r\n");
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_true(has_header(&g_resp, "\r\nX-Test: a  Injected: 1\r\n"));
    assert_false(has_header(&g_resp, "\r\nInjected"));
    cli_close(c);
    tsrv_stop(t);
}

static void test_pipelining(void **state)
{
    (void)state;
    struct http_server_config cfg = base_cfg();
    struct tsrv *t = tsrv_start(&cfg);
    struct cli *c = cli_open(t->port);
    cli_send(c, "GET /p1 HTTP/1.1\r\n\r\nPOST /p2 HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"
                "GET /p3 HTTP/1.1\r\n\r\n");
    const char *want[] = {"\"path\":\"/p1\"", "\"path\":\"/p2\"", "\"path\":\"/p3\""};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(cli_read(c, &g_resp, false), 0);
        assert_int_equal(g_resp.status, 200);
        assert_non_null(strstr(g_resp.body, want[i]));
    }
    assert_non_null(strstr(g_resp.body, "\"len\":0"));
    /* many pipelined requests in one write, answered in order */
    static char many[200 * 40];
    size_t n = 0;
    for (int i = 0; i < 200; i++)
        n += (size_t)snprintf(many + n, sizeof many - n, "GET /m%d HTTP/1.1\r\n\r\n", i);
    send_all(c->fd, many, n);
    for (int i = 0; i < 200; i++) {
        char p[32];
        snprintf(p, sizeof p, "\"path\":\"/m%d\"", i);
        assert_int_equal(cli_read(c, &g_resp, false), 0);
        assert_non_null(strstr(g_resp.body, p));
    }
    cli_close(c);
    tsrv_stop(t);
}

static void test_chunked_upload(void **state)
{
    (void)state;
    struct http_server_config cfg = base_cfg();
    struct tsrv *t = tsrv_start(&cfg);
    struct cli *c = cli_open(t->port);
    cli_send(c, "POST /up HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nWiki\r\n");
    usleep(20000); /* the rest arrives in a later read */
    cli_send(c, "5\r\npedia\r\n0\r\n\r\n");
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_int_equal(g_resp.status, 200);
    assert_non_null(strstr(g_resp.body, "\"len\":9"));
    /* Expect: 100-continue is answered before the body is sent */
    cli_send(c, "POST /e HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n");
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_int_equal(g_resp.status, 100);
    cli_send(c, "abcd");
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_int_equal(g_resp.status, 200);
    assert_non_null(strstr(g_resp.body, "\"len\":4"));
    cli_close(c);
    tsrv_stop(t);
}

static void test_limits(void **state)
{
    (void)state;
    struct http_server_config cfg = base_cfg();
    struct tsrv *t = tsrv_start(&cfg);
    /* request line + headers over 16 KiB */
    struct cli *c = cli_open(t->port);
    static char big[20000];
    memset(big, 'a', sizeof big);
    memcpy(big, "GET / HTTP/1.1\r\nX-Big: ", 23);
    memcpy(big + sizeof big - 4, "\r\n\r\n", 4);
    send_all(c->fd, big, sizeof big);
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_int_equal(g_resp.status, 431);
    assert_non_null(strstr(g_resp.body, "\"error\""));
    assert_true(has_header(&g_resp, "Connection: close"));
    assert_true(wait_closed(c->fd, 5000));
    cli_close(c);
    /* more than 100 headers */
    c = cli_open(t->port);
    cli_send(c, "GET / HTTP/1.1\r\n");
    for (int i = 0; i < 101; i++) {
        char h[32];
        snprintf(h, sizeof h, "X-%d: v\r\n", i);
        cli_send(c, h);
    }
    cli_send(c, "\r\n");
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_int_equal(g_resp.status, 431);
    cli_close(c);
    /* declared body over 1 MiB: refused before the body is read */
    c = cli_open(t->port);
    cli_send(c, "POST / HTTP/1.1\r\nContent-Length: 2000000\r\n\r\n");
    send_all(c->fd, big, 8192);
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_int_equal(g_resp.status, 413);
    assert_string_equal(g_resp.body, "{\"error\":\"Payload too large\"}");
    assert_true(wait_closed(c->fd, 5000));
    cli_close(c);
    /* malformed request: 400 JSON, then closed */
    c = cli_open(t->port);
    cli_send(c, "GARBAGE\r\n\r\n");
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_int_equal(g_resp.status, 400);
    assert_true(has_header(&g_resp, "application/json"));
    assert_true(wait_closed(c->fd, 5000));
    cli_close(c);
    c = cli_open(t->port);
    send_all(c->fd, "GET / HTTP/1.1\r\nX-A: a\0b\r\n\r\n", 29);
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_int_equal(g_resp.status, 400);
    cli_close(c);
    assert_int_equal(atomic_load(&t->handled), 0);
    tsrv_stop(t);
}

static void test_head_and_404(void **state)
{
    (void)state;
    struct http_server_config cfg = base_cfg();
    struct tsrv *t = tsrv_start(&cfg);
    struct cli *c = cli_open(t->port);
    cli_send(c, "HEAD /h HTTP/1.1\r\n\r\nGET /missing HTTP/1.1\r\n\r\n");
    assert_int_equal(cli_read(c, &g_resp, true), 0);
    assert_int_equal(g_resp.status, 200);
    assert_true(g_resp.content_length > 0); /* length of the body not sent */
    /* the next bytes are the next response, not a body */
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_int_equal(g_resp.status, 404);
    assert_true(has_header(&g_resp, "HTTP/1.1 404 Not Found\r\n"));
    assert_string_equal(g_resp.body, "{\"error\":\"Not found\"}");
    cli_close(c);
    tsrv_stop(t);
}

static void test_connection_close(void **state)
{
    (void)state;
    struct http_server_config cfg = base_cfg();
    struct tsrv *t = tsrv_start(&cfg);
    struct cli *c = cli_open(t->port);
    cli_send(c, "GET /a HTTP/1.1\r\nConnection: close\r\n\r\nGET /ignored HTTP/1.1\r\n\r\n");
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_true(has_header(&g_resp, "Connection: close"));
    assert_true(wait_closed(c->fd, 5000));
    cli_close(c);
    /* the handler asks to close */
    c = cli_open(t->port);
    cli_send(c, "GET /close HTTP/1.1\r\n\r\n");
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_true(has_header(&g_resp, "Connection: close"));
    assert_true(wait_closed(c->fd, 5000));
    cli_close(c);
    /* HTTP/1.0 closes unless keep-alive was asked for */
    c = cli_open(t->port);
    cli_send(c, "GET /old HTTP/1.0\r\n\r\n");
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_int_equal(g_resp.status, 200);
    assert_true(has_header(&g_resp, "HTTP/1.1 200 OK"));
    assert_true(wait_closed(c->fd, 5000));
    cli_close(c);
    c = cli_open(t->port);
    cli_send(c, "GET /old HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_true(has_header(&g_resp, "Connection: keep-alive"));
    cli_send(c, "GET /again HTTP/1.0\r\n\r\n");
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_non_null(strstr(g_resp.body, "/again"));
    assert_true(wait_closed(c->fd, 5000));
    cli_close(c);
    /* the peer half-closes after its request: still answered */
    c = cli_open(t->port);
    cli_send(c, "GET /half HTTP/1.1\r\n\r\n");
    shutdown(c->fd, SHUT_WR);
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_non_null(strstr(g_resp.body, "/half"));
    assert_true(wait_closed(c->fd, 5000));
    cli_close(c);
    tsrv_stop(t);
}

static void test_ipv6(void **state)
{
    (void)state;
    struct http_server_config cfg = base_cfg();
    cfg.listen = "[::1]:0";
    struct tsrv *t = tsrv_start(&cfg);
    if (!t) {
        print_message("SKIP: IPv6 loopback unavailable\n");
        return;
    }
    struct cli *c = calloc(1, sizeof *c);
    c->fd = connect_to(AF_INET6, t->port);
    assert_true(c->fd >= 0);
    cli_send(c, "GET /v6 HTTP/1.1\r\n\r\n");
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_non_null(strstr(g_resp.body, "/v6"));
    cli_close(c);
    tsrv_stop(t);
    /* a name that resolves: localhost */
    cfg.listen = "localhost:0";
    t = tsrv_start(&cfg);
    assert_non_null(t);
    c = cli_open(t->port);
    cli_send(c, "GET /name HTTP/1.1\r\n\r\n");
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_int_equal(g_resp.status, 200);
    cli_close(c);
    tsrv_stop(t);
    /* bad specifications are refused with a message */
    char err[256];
    struct http_handler h = {.handle = handle};
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    const char *bad[] = {"127.0.0.1", "::1:80", "127.0.0.1:99999", "[::1]80", "host:port"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cfg.listen = bad[i];
        err[0] = '\0';
        assert_null(http_server_new(loop, &cfg, &h, err, sizeof err));
        assert_true(err[0] != '\0');
    }
    ev_loop_destroy(loop);
}

static void test_header_timeout(void **state)
{
    (void)state;
    time_scale_set(0.01); /* header 0.1 s, idle 0.6 s, body 0.3 s */
    struct http_server_config cfg = base_cfg();
    struct tsrv *t = tsrv_start(&cfg);
    struct cli *c = cli_open(t->port);
    int64_t t0 = now_ms();
    cli_send(c, "GET /slow HTTP/1.1\r\nHost: x\r\n");
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_int_equal(g_resp.status, 408);
    int64_t el = now_ms() - t0;
    assert_true(el >= 80 && el < 3000);
    assert_true(wait_closed(c->fd, 3000));
    cli_close(c);
    /* a slow body is cut too */
    c = cli_open(t->port);
    cli_send(c, "POST /slow HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc");
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_int_equal(g_resp.status, 408);
    cli_close(c);
    tsrv_stop(t);
}

/* A connection whose request arrived while a handler held the loop past
 * its header deadline is served, not cut: the bytes were there in time. */
static void test_timeout_after_stall(void **state)
{
    (void)state;
    time_scale_set(0.01); /* header 0.1 s */
    struct http_server_config cfg = base_cfg();
    struct tsrv *t = tsrv_start(&cfg);
    struct cli *b = cli_open(t->port);
    struct timespec ts = {0, 30 * 1000 * 1000};
    nanosleep(&ts, NULL); /* b is accepted: its header clock runs */
    struct cli *a = cli_open(t->port);
    cli_send(a, "GET /stall HTTP/1.1\r\nHost: x\r\n\r\n");
    nanosleep(&ts, NULL); /* the handler holds the loop now */
    cli_send(b, "GET /after HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_int_equal(cli_read(a, &g_resp, false), 0);
    assert_int_equal(g_resp.status, 200);
    assert_int_equal(cli_read(b, &g_resp, false), 0);
    assert_int_equal(g_resp.status, 200);
    assert_non_null(strstr(g_resp.body, "/after"));
    cli_close(a);
    cli_close(b);
    tsrv_stop(t);
}

static void test_idle_timeout(void **state)
{
    (void)state;
    time_scale_set(0.01);
    struct http_server_config cfg = base_cfg();
    struct tsrv *t = tsrv_start(&cfg);
    struct cli *c = cli_open(t->port);
    cli_send(c, "GET /once HTTP/1.1\r\n\r\n");
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    int64_t t0 = now_ms();
    /* idle keep-alive: the header timeout (0.1 s) does not apply */
    assert_true(quiet_for(c->fd, 300));
    assert_true(wait_closed(c->fd, 3000));
    int64_t el = now_ms() - t0;
    assert_true(el >= 500 && el < 3000);
    cli_close(c);
    tsrv_stop(t);
}

static void raise_nofile(rlim_t want)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < want) {
        rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static void test_many_idle_connections(void **state)
{
    (void)state;
    enum { N = 1000 };
    raise_nofile(4096);
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < 2 * N + 64) {
        print_message("SKIP: RLIMIT_NOFILE too low (%lu)\n", (unsigned long)rl.rlim_cur);
        return;
    }
    time_scale_set(0.02); /* a fresh connection gets the header timeout: 0.2 s */
    struct http_server_config cfg = base_cfg();
    struct tsrv *t = tsrv_start(&cfg);
    static int fds[N];
    for (int i = 0; i < N; i++) {
        fds[i] = connect_to(AF_INET, t->port);
        assert_true(fds[i] >= 0);
    }
    /* every one of them is closed by the server */
    int64_t deadline = now_ms() + 15000;
    for (int i = 0; i < N; i++) {
        int left = (int)(deadline - now_ms());
        assert_true(wait_closed(fds[i], left > 0 ? left : 1));
        close(fds[i]);
    }
    /* wait for the server side to have reaped them all */
    for (int i = 0; i < 100; i++) {
        struct cli *c = cli_open(t->port);
        cli_send(c, "GET /after HTTP/1.1\r\n\r\n");
        assert_int_equal(cli_read(c, &g_resp, false), 0);
        assert_int_equal(g_resp.status, 200);
        cli_close(c);
        if (atomic_load(&t->handled) > 0)
            break;
    }
    tsrv_stop(t);
}

static void test_drain(void **state)
{
    (void)state;
    struct http_server_config cfg = base_cfg();
    struct tsrv *t = tsrv_start(&cfg);
    struct cli *idle[3];
    for (int i = 0; i < 3; i++) {
        idle[i] = cli_open(t->port);
        cli_send(idle[i], "GET /x HTTP/1.1\r\n\r\n");
        assert_int_equal(cli_read(idle[i], &g_resp, false), 0);
    }
    /* one connection is in the middle of a request when the drain starts */
    struct cli *busy = cli_open(t->port);
    cli_send(busy, "POST /late HTTP/1.1\r\nContent-Length: 4\r\n\r\nab");
    usleep(50000);
    tsrv_cmd(t, 1);
    for (int i = 0; i < 3; i++) {
        assert_true(wait_closed(idle[i]->fd, 5000));
        cli_close(idle[i]);
    }
    usleep(50000);
    assert_int_equal(atomic_load(&t->drained), 0);
    /* new connections are refused once the listener is closed */
    assert_true(connect_to(AF_INET, t->port) < 0);
    cli_send(busy, "cd");
    assert_int_equal(cli_read(busy, &g_resp, false), 0);
    assert_int_equal(g_resp.status, 200);
    assert_true(has_header(&g_resp, "Connection: close"));
    assert_true(wait_closed(busy->fd, 5000));
    cli_close(busy);
    for (int i = 0; i < 500 && !atomic_load(&t->drained); i++)
        usleep(10000);
    assert_int_equal(atomic_load(&t->drained), 1);
    tsrv_stop(t);
}

static void test_commit_order(void **state)
{
    (void)state;
    struct http_server_config cfg = base_cfg();
    struct tsrv *t = tsrv_start(&cfg);
    struct cli *c = cli_open(t->port);
    int before = atomic_load(&t->commits);
    cli_send(c, "GET /commit HTTP/1.1\r\n\r\n");
    /* wait for the very first byte, then look at the flag */
    struct pollfd pfd = {c->fd, POLLIN, 0};
    assert_int_equal(poll(&pfd, 1, 5000), 1);
    assert_int_equal(atomic_load(&t->committed_flag), 1);
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_int_equal(g_resp.status, 200);
    assert_true(atomic_load(&t->commits) > before);
    /* a failed commit turns the iteration's responses into 500 */
    cli_send(c, "GET /fail-commit HTTP/1.1\r\n\r\n");
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_int_equal(g_resp.status, 500);
    assert_string_equal(g_resp.body, "{\"error\":\"Internal error\"}");
    /* the connection is still usable */
    cli_send(c, "GET /fine HTTP/1.1\r\n\r\n");
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_int_equal(g_resp.status, 200);
    /* pipelined in one iteration: all replaced, framing intact */
    cli_send(c, "GET /a HTTP/1.1\r\n\r\nGET /fail-commit HTTP/1.1\r\n\r\nHEAD /b HTTP/1.1\r\n\r\n"
                "GET /c HTTP/1.1\r\n\r\n");
    int n500 = 0;
    for (int i = 0; i < 4; i++) {
        assert_int_equal(cli_read(c, &g_resp, i == 2), 0);
        n500 += g_resp.status == 500;
    }
    assert_true(n500 >= 1);
    cli_send(c, "GET /last HTTP/1.1\r\n\r\n");
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_non_null(strstr(g_resp.body, "/last"));
    /* commit is not called when nothing was handled */
    int after = atomic_load(&t->commits);
    usleep(100000);
    assert_int_equal(atomic_load(&t->commits), after);
    cli_close(c);
    tsrv_stop(t);
}

/* Whether a response is readable within ms. */
static bool readable(struct cli *c, int ms)
{
    struct pollfd pfd = {c->fd, POLLIN, 0};
    return poll(&pfd, 1, ms) == 1;
}

static void durable(struct tsrv *t, uint64_t upto, bool failed)
{
    atomic_store(&t->durable_arg, upto);
    atomic_store(&t->durable_fail, failed);
    tsrv_cmd(t, 3);
}

/* Deferred durability: an iteration's responses wait for their ticket;
 * the connection takes no further request meanwhile; a failed sync turns
 * them into 500. */
static void test_durable_hold(void **state)
{
    (void)state;
    struct http_server_config cfg = base_cfg();
    struct tsrv *t = tsrv_start(&cfg);
    struct cli *c = cli_open(t->port);
    atomic_store(&t->tickets_on, 1);
    int before = atomic_load(&t->handled);
    /* two pipelined requests in one read: handled in one iteration, held together */
    cli_send(c, "GET /one HTTP/1.1\r\n\r\nGET /two HTTP/1.1\r\n\r\n");
    assert_false(readable(c, 300));
    assert_int_equal(atomic_load(&t->handled), before + 2);
    uint64_t t1 = (uint64_t)atomic_load(&t->ticket);
    assert_true(t1 >= 1);
    /* an older ticket releases nothing */
    durable(t, t1 - 1, false);
    assert_false(readable(c, 200));
    durable(t, t1, false);
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_int_equal(g_resp.status, 200);
    assert_non_null(strstr(g_resp.body, "/one"));
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_non_null(strstr(g_resp.body, "/two"));
    /* a request arriving while the connection is held waits for the release */
    cli_send(c, "GET /held HTTP/1.1\r\n\r\n");
    assert_false(readable(c, 300));
    uint64_t t2 = (uint64_t)atomic_load(&t->ticket);
    assert_true(t2 > t1);
    int h2 = atomic_load(&t->handled);
    cli_send(c, "GET /next HTTP/1.1\r\n\r\n");
    usleep(200000);
    assert_int_equal(atomic_load(&t->handled), h2); /* not taken while held */
    durable(t, t2, false);
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_non_null(strstr(g_resp.body, "/held"));
    /* then the next request runs, and is held in turn */
    for (int i = 0; i < 200 && atomic_load(&t->handled) < h2 + 1; i++)
        usleep(5000);
    assert_int_equal(atomic_load(&t->handled), h2 + 1);
    assert_false(readable(c, 200));
    t2 = (uint64_t)atomic_load(&t->ticket);
    durable(t, t2, false);
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_non_null(strstr(g_resp.body, "/next"));
    /* a sync that failed: the held answer becomes a 500 */
    cli_send(c, "GET /three HTTP/1.1\r\n\r\n");
    assert_false(readable(c, 200));
    durable(t, t2, true);
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_int_equal(g_resp.status, 500);
    assert_string_equal(g_resp.body, "{\"error\":\"Internal error\"}");
    /* a connection that dies while held is reaped cleanly (ASan) */
    int h4 = atomic_load(&t->handled);
    struct cli *d = cli_open(t->port);
    cli_send(d, "GET /four HTTP/1.1\r\n\r\n");
    for (int i = 0; i < 200 && atomic_load(&t->handled) < h4 + 1; i++)
        usleep(5000);
    cli_close(d);
    usleep(100000);
    durable(t, (uint64_t)atomic_load(&t->ticket), false);
    /* without tickets, answers go out at once again */
    atomic_store(&t->tickets_on, 0);
    cli_send(c, "GET /five HTTP/1.1\r\n\r\n");
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_non_null(strstr(g_resp.body, "/five"));
    cli_close(c);
    tsrv_stop(t);
}

/* Waits (bounded) for the server's writer thread to have written n early answers. */
static uint64_t early_wait(struct tsrv *t, uint64_t n)
{
    for (int i = 0; i < 400 && http_server_early_writes(t->srv) < n; i++)
        usleep(5000);
    usleep(50000); /* and a moment for any it should not write */
    return http_server_early_writes(t->srv);
}

/* Early writes: the durable hook (here called from the test's thread, as
 * the store's sync thread would) has the server's writer thread write held
 * answers before the loop hears of the ticket; the loop then counts them as sent, writes what the
 * socket did not take, and the connection goes on.  A job whose connection died, or whose sync
 * failed, is taken back unsent. */
static void test_early_writes(void **state)
{
    (void)state;
    struct http_server_config cfg = base_cfg();
    struct tsrv *t = tsrv_start(&cfg);
    tsrv_cmd(t, 4);
    usleep(50000);
    struct cli *c = cli_open(t->port);
    atomic_store(&t->tickets_on, 1);
    int h = atomic_load(&t->handled);
    cli_send(c, "GET /e1 HTTP/1.1\r\n\r\n");
    for (int i = 0; i < 200 && atomic_load(&t->handled) < h + 1; i++)
        usleep(5000);
    usleep(50000); /* past the iteration's prepare: held */
    uint64_t t1 = (uint64_t)atomic_load(&t->ticket);
    assert_false(readable(c, 200));
    http_server_durable_hook(t->srv, t1 - 1); /* an older ticket writes nothing */
    assert_false(readable(c, 200));
    assert_int_equal(early_wait(t, 0), 0);
    http_server_durable_hook(t->srv, t1);
    assert_int_equal(early_wait(t, 1), 1);
    /* the loop has not been told: the answer is out all the same */
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_int_equal(g_resp.status, 200);
    assert_non_null(strstr(g_resp.body, "/e1"));
    /* still held in the loop's eyes: the next request waits */
    h = atomic_load(&t->handled);
    cli_send(c, "GET /e2 HTTP/1.1\r\n\r\n");
    usleep(150000);
    assert_int_equal(atomic_load(&t->handled), h);
    durable(t, t1, false);
    for (int i = 0; i < 200 && atomic_load(&t->handled) < h + 1; i++)
        usleep(5000);
    assert_int_equal(atomic_load(&t->handled), h + 1);
    usleep(50000);
    assert_false(readable(c, 100)); /* nothing written twice */
    uint64_t t2 = (uint64_t)atomic_load(&t->ticket);
    /* the loop learns first: it writes the answer itself */
    durable(t, t2, false);
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_non_null(strstr(g_resp.body, "/e2"));
    assert_int_equal(http_server_early_writes(t->srv), 1);
    http_server_durable_hook(t->srv, t2); /* nothing left for it */
    assert_int_equal(early_wait(t, 1), 1);

    /* a 3 MB answer: the hook writes what the socket takes, the loop the rest */
    cli_send(c, "GET /big HTTP/1.1\r\n\r\n");
    usleep(150000);
    uint64_t t3 = (uint64_t)atomic_load(&t->ticket);
    assert_true(t3 > t2);
    http_server_durable_hook(t->srv, t3);
    assert_int_equal(early_wait(t, 2), 2);
    durable(t, t3, false);
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_int_equal(g_resp.status, 200);
    assert_int_equal(g_resp.content_length, 3 * 1024 * 1024);
    assert_memory_equal(g_resp.body, "0123456789abcdef", 16);
    cli_send(c, "GET /after HTTP/1.1\r\n\r\n");
    usleep(150000);
    uint64_t t4 = (uint64_t)atomic_load(&t->ticket);
    durable(t, t4, false);
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_non_null(strstr(g_resp.body, "/after"));

    /* a failed sync: the queued job is taken back, the answer is a 500 */
    cli_send(c, "GET /fails HTTP/1.1\r\n\r\n");
    usleep(150000);
    durable(t, t4, true);
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_int_equal(g_resp.status, 500);
    http_server_durable_hook(t->srv, (uint64_t)atomic_load(&t->ticket));
    assert_int_equal(early_wait(t, 2), 2); /* /e1 and /big only */

    /* a connection that dies with its job queued is freed cleanly (ASan),
     * and the hook then finds nothing of it */
    struct cli *d = cli_open(t->port);
    h = atomic_load(&t->handled);
    cli_send(d, "GET /dies HTTP/1.1\r\n\r\n");
    for (int i = 0; i < 200 && atomic_load(&t->handled) < h + 1; i++)
        usleep(5000);
    usleep(50000);
    cli_close(d);
    usleep(100000);
    durable(t, (uint64_t)atomic_load(&t->ticket), false);
    usleep(100000);
    http_server_durable_hook(t->srv, (uint64_t)atomic_load(&t->ticket));
    assert_int_equal(early_wait(t, 2), 2);
    atomic_store(&t->tickets_on, 0);
    cli_close(c);
    tsrv_stop(t);
}

/* A postponed commit: the first request's answer waits until a later
 * iteration commits, and both requests share that one commit. */
static void test_commit_later(void **state)
{
    (void)state;
    struct http_server_config cfg = base_cfg();
    struct tsrv *t = tsrv_start(&cfg);
    struct cli *a = cli_open(t->port), *b = cli_open(t->port);
    atomic_store(&t->later_until, atomic_load(&t->handled) + 2);
    atomic_store(&t->later_on, 1);
    int commits = atomic_load(&t->commits);
    cli_send(a, "GET /first HTTP/1.1\r\n\r\n");
    assert_false(readable(a, 300));
    assert_true(atomic_load(&t->later_asked) >= 1);
    assert_int_equal(atomic_load(&t->commits), commits);
    cli_send(b, "GET /second HTTP/1.1\r\n\r\n");
    assert_int_equal(cli_read(b, &g_resp, false), 0);
    assert_non_null(strstr(g_resp.body, "/second"));
    assert_int_equal(cli_read(a, &g_resp, false), 0);
    assert_non_null(strstr(g_resp.body, "/first"));
    assert_int_equal(atomic_load(&t->commits), commits + 1);
    atomic_store(&t->later_on, 0);
    cli_close(a);
    cli_close(b);
    tsrv_stop(t);
}

static void test_stream(void **state)
{
    (void)state;
    struct http_server_config cfg = base_cfg();
    cfg.cors_origin = "*";
    struct tsrv *t = tsrv_start(&cfg);
    struct cli *c = cli_open(t->port);
    cli_send(c, "GET /stream HTTP/1.1\r\n\r\n");
    while (!strstr(c->buf, "data: hello\n\n"))
        assert_true(cli_fill(c) > 0);
    assert_non_null(strstr(c->buf, "HTTP/1.1 200 OK\r\n"));
    assert_non_null(strstr(c->buf, "Content-Type: text/event-stream\r\n"));
    assert_non_null(strstr(c->buf, "Cache-Control: no-cache\r\n"));
    assert_null(strstr(c->buf, "Content-Length"));
    assert_int_equal(atomic_load(&t->stream_opened), 1);
    assert_int_equal(atomic_load(&t->stream_closed), 0);
    cli_close(c);
    for (int i = 0; i < 500 && !atomic_load(&t->stream_closed); i++)
        usleep(10000);
    usleep(50000);
    assert_int_equal(atomic_load(&t->stream_closed), 1);
    /* a stream still open when the server is drained is closed too */
    c = cli_open(t->port);
    cli_send(c, "GET /stream HTTP/1.1\r\n\r\n");
    while (!strstr(c->buf, "data: hello\n\n"))
        assert_true(cli_fill(c) > 0);
    tsrv_cmd(t, 1);
    assert_true(wait_closed(c->fd, 5000));
    cli_close(c);
    for (int i = 0; i < 500 && !atomic_load(&t->drained); i++)
        usleep(10000);
    assert_int_equal(atomic_load(&t->stream_closed), 2);
    assert_int_equal(atomic_load(&t->drained), 1);
    tsrv_stop(t);
}

static void test_cors(void **state)
{
    (void)state;
    struct http_server_config cfg = base_cfg();
    cfg.cors_origin = "https://app.example";
    struct tsrv *t = tsrv_start(&cfg);
    struct cli *c = cli_open(t->port);
    cli_send(c, "OPTIONS /api/x HTTP/1.1\r\nOrigin: https://app.example\r\n"
                "Access-Control-Request-Method: POST\r\n"
                "Access-Control-Request-Headers: content-type, authorization\r\n\r\n");
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_int_equal(g_resp.status, 204);
    assert_true(has_header(&g_resp, "Access-Control-Allow-Origin: https://app.example\r\n"));
    assert_true(has_header(&g_resp, "Access-Control-Allow-Headers: content-type, authorization"));
    assert_true(has_header(&g_resp, "Access-Control-Allow-Methods: "));
    assert_int_equal(atomic_load(&t->handled), 0);
    cli_send(c, "GET /x HTTP/1.1\r\n\r\n");
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_true(has_header(&g_resp, "Access-Control-Allow-Origin: https://app.example\r\n"));
    cli_close(c);
    tsrv_stop(t);
    /* without cors_origin: no CORS header, OPTIONS goes to the handler */
    cfg.cors_origin = NULL;
    t = tsrv_start(&cfg);
    c = cli_open(t->port);
    cli_send(c, "OPTIONS /x HTTP/1.1\r\n\r\n");
    assert_int_equal(cli_read(c, &g_resp, false), 0);
    assert_false(has_header(&g_resp, "Access-Control"));
    assert_int_equal(atomic_load(&t->handled), 1);
    cli_close(c);
    tsrv_stop(t);
}

static void test_max_conns_and_big(void **state)
{
    (void)state;
    struct http_server_config cfg = base_cfg();
    cfg.max_conns = 2;
    struct tsrv *t = tsrv_start(&cfg);
    struct cli *a = cli_open(t->port);
    struct cli *b = cli_open(t->port);
    cli_send(a, "GET /a HTTP/1.1\r\n\r\n");
    assert_int_equal(cli_read(a, &g_resp, false), 0);
    cli_send(b, "GET /b HTTP/1.1\r\n\r\n");
    assert_int_equal(cli_read(b, &g_resp, false), 0);
    struct cli *x = cli_open(t->port);
    assert_true(wait_closed(x->fd, 5000));
    cli_close(x);
    /* a 3 MB answer read slowly arrives whole (write watcher path) */
    cli_send(a, "GET /big HTTP/1.1\r\n\r\n");
    usleep(100000);
    assert_int_equal(cli_read(a, &g_resp, false), 0);
    assert_int_equal(g_resp.status, 200);
    assert_int_equal(g_resp.content_length, 3 * 1024 * 1024);
    assert_memory_equal(g_resp.body, "0123456789abcdef", 16);
    cli_send(a, "GET /after-big HTTP/1.1\r\n\r\n");
    assert_int_equal(cli_read(a, &g_resp, false), 0);
    assert_non_null(strstr(g_resp.body, "/after-big"));
    cli_close(a);
    cli_close(b);
    tsrv_stop(t);
}

/* A deferred answer goes out after the next commit, and the connection
 * takes its next request afterwards; completing a connection that is
 * closing answers ERR_IO and deferred_closed never runs (its owner frees
 * its state once, on that return). */
static void test_deferred(void **state)
{
    struct http_server_config cfg = base_cfg();
    struct tsrv *t = tsrv_start(&cfg);
    struct resp *r = &g_resp;
    (void)state;

    struct cli *c = cli_open(t->port);
    cli_send(c, "GET /defer HTTP/1.1\r\nHost: x\r\n\r\nGET /after HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_true(quiet_for(c->fd, 200)); /* nothing until it is answered */
    int commits = atomic_load(&t->commits);
    tsrv_cmd(t, 5);
    assert_int_equal(cli_read(c, r, false), 0);
    assert_int_equal(r->status, 200);
    assert_string_equal(r->body, "late");
    assert_true(atomic_load(&t->commits) > commits);
    assert_int_equal(atomic_load(&t->complete_rc), 0);
    assert_int_equal(cli_read(c, r, false), 0); /* the pipelined request */
    assert_int_equal(r->status, 200);
    assert_non_null(strstr(r->body, "\"path\":\"/after\""));
    cli_close(c);

    /* the client goes away while deferred: deferred_closed, once */
    c = cli_open(t->port);
    cli_send(c, "GET /defer HTTP/1.1\r\nHost: x\r\n\r\n");
    for (int i = 0; i < 200 && atomic_load(&t->handled) < 3; i++)
        nanosleep(&(struct timespec){0, 5 * 1000 * 1000}, NULL);
    struct linger lg = {1, 0};
    setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg); /* reset */
    cli_close(c);
    for (int i = 0; i < 200 && atomic_load(&t->deferred_closed) < 1; i++)
        nanosleep(&(struct timespec){0, 5 * 1000 * 1000}, NULL);
    assert_int_equal(atomic_load(&t->deferred_closed), 1);

    /* completed while closing */
    c = cli_open(t->port);
    cli_send(c, "GET /defer HTTP/1.1\r\nHost: x\r\n\r\n");
    for (int i = 0; i < 200 && atomic_load(&t->handled) < 4; i++)
        nanosleep(&(struct timespec){0, 5 * 1000 * 1000}, NULL);
    tsrv_cmd(t, 6);
    assert_true(wait_closed(c->fd, 2000));
    assert_int_equal(atomic_load(&t->complete_rc), ERR_IO);
    nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
    assert_int_equal(atomic_load(&t->deferred_closed), 1); /* not again */
    cli_close(c);
    tsrv_stop(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_keep_alive, setup),
        cmocka_unit_test_setup(test_pipelining, setup),
        cmocka_unit_test_setup(test_chunked_upload, setup),
        cmocka_unit_test_setup(test_limits, setup),
        cmocka_unit_test_setup(test_head_and_404, setup),
        cmocka_unit_test_setup(test_connection_close, setup),
        cmocka_unit_test_setup(test_ipv6, setup),
        cmocka_unit_test_setup(test_header_timeout, setup),
        cmocka_unit_test_setup(test_timeout_after_stall, setup),
        cmocka_unit_test_setup(test_idle_timeout, setup),
        cmocka_unit_test_setup(test_many_idle_connections, setup),
        cmocka_unit_test_setup(test_drain, setup),
        cmocka_unit_test_setup(test_commit_order, setup),
        cmocka_unit_test_setup(test_durable_hold, setup),
        cmocka_unit_test_setup(test_early_writes, setup),
        cmocka_unit_test_setup(test_commit_later, setup),
        cmocka_unit_test_setup(test_stream, setup),
        cmocka_unit_test_setup(test_deferred, setup),
        cmocka_unit_test_setup(test_cors, setup),
        cmocka_unit_test_setup(test_max_conns_and_big, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
