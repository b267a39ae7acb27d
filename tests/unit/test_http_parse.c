/*
 * test_http_parse.c - the request parser (src/http/parse.c) on whole and
 * byte-by-byte split inputs: request line, query split, header lookup,
 * pipelining, bodies (Content-Length, chunked, 100-continue), the 431/413
 * limits, malformed input, and inputs that end at a guard page so any
 * over-read faults.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "http/parse.h"

#define MAX_REQS 8

/* What the feeding loop saw: copies of each request's parts. */
struct seen {
    int nreq;
    int ncontinue;
    int rc; /* last return code (ERROR, MORE, or DONE when all done) */
    int status;
    enum http_method m[MAX_REQS];
    char target[MAX_REQS][256];
    char path[MAX_REQS][256];
    char query[MAX_REQS][256];
    char host[MAX_REQS][64];
    char body[MAX_REQS][2048];
    size_t body_len[MAX_REQS];
    size_t nheaders[MAX_REQS];
    bool keep_alive[MAX_REQS];
    bool body_nul[MAX_REQS];
};

static void copy_str(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "(null)");
}

/* Feeds data in pieces of `step` bytes (0: all at once), handling every
 * request like the server does. */
static void feed_all(const struct http_parse_limits *lim, const char *data, size_t len, size_t step,
                     struct seen *out)
{
    struct http_parse p;
    static struct http_request req;
    memset(out, 0, sizeof *out);
    http_parse_init(&p, lim);
    size_t off = 0;
    out->rc = HTTP_PARSE_MORE;
    while (off < len) {
        size_t n = step && len - off > step ? step : len - off;
        size_t piece_off = 0;
        while (piece_off < n) {
            size_t used = 0;
            int rc = http_parse_feed(&p, data + off + piece_off, n - piece_off, &used);
            piece_off += used;
            out->rc = rc;
            if (rc == HTTP_PARSE_ERROR) {
                out->status = http_parse_status(&p);
                goto done;
            }
            if (rc == HTTP_PARSE_DONE) {
                int i = out->nreq;
                memset(&req, 0, sizeof req);
                http_parse_fill(&p, &req);
                if (i < MAX_REQS) {
                    out->m[i] = req.method;
                    copy_str(out->target[i], sizeof out->target[i], req.target);
                    copy_str(out->path[i], sizeof out->path[i], req.path);
                    copy_str(out->query[i], sizeof out->query[i], req.query);
                    copy_str(out->host[i], sizeof out->host[i], http_request_header(&req, "hOsT"));
                    size_t bl = req.body_len < sizeof out->body[i] - 1 ? req.body_len
                                                                       : sizeof out->body[i] - 1;
                    memcpy(out->body[i], req.body, bl);
                    out->body[i][bl] = '\0';
                    out->body_len[i] = req.body_len;
                    out->body_nul[i] = req.body[req.body_len] == '\0';
                    out->nheaders[i] = req.nheaders;
                    out->keep_alive[i] = req.keep_alive;
                }
                out->nreq++;
                http_parse_next(&p);
                continue;
            }
            if (http_parse_take_continue(&p))
                out->ncontinue++;
            break; /* MORE: the piece was consumed */
        }
        off += n;
    }
done:
    http_parse_free(&p);
}

static const size_t steps[] = {0, 1, 2, 3, 7, 64};
#define NSTEPS (sizeof steps / sizeof steps[0])

static void feed_str(const char *s, size_t step, struct seen *out)
{
    feed_all(NULL, s, strlen(s), step, out);
}

static void test_simple_get(void **state)
{
    (void)state;
    const char *r = "GET /api/health HTTP/1.1\r\nHost: example.org\r\nX-Empty:\r\n"
                    "X-Trail: value  \t\r\n\r\n";
    static struct seen s;
    for (size_t i = 0; i < NSTEPS; i++) {
        feed_str(r, steps[i], &s);
        assert_int_equal(s.nreq, 1);
        assert_int_equal(s.m[0], HTTP_M_GET);
        assert_string_equal(s.target[0], "/api/health");
        assert_string_equal(s.path[0], "/api/health");
        assert_string_equal(s.query[0], "");
        assert_string_equal(s.host[0], "example.org");
        assert_int_equal(s.nheaders[0], 3);
        assert_int_equal(s.body_len[0], 0);
        assert_true(s.body_nul[0]);
        assert_true(s.keep_alive[0]);
    }
}

static void test_query_split(void **state)
{
    (void)state;
    const char *r = "GET /api/products/verify?code=ABC%20D&x=1 HTTP/1.1\r\nHost: h\r\n\r\n";
    static struct seen s;
    for (size_t i = 0; i < NSTEPS; i++) {
        feed_str(r, steps[i], &s);
        assert_int_equal(s.nreq, 1);
        assert_string_equal(s.target[0], "/api/products/verify?code=ABC%20D&x=1");
        assert_string_equal(s.path[0], "/api/products/verify");
        assert_string_equal(s.query[0], "code=ABC%20D&x=1");
    }
    feed_str("GET /p? HTTP/1.1\r\n\r\n", 0, &s);
    assert_string_equal(s.path[0], "/p");
    assert_string_equal(s.query[0], "");
    feed_str("GET http://example.org/abs/path?q=2 HTTP/1.1\r\n\r\n", 1, &s);
    assert_int_equal(s.nreq, 1);
    assert_string_equal(s.path[0], "/abs/path");
    assert_string_equal(s.query[0], "q=2");
}

static void test_header_lookup(void **state)
{
    (void)state;
    struct http_parse p;
    struct http_request req;
    const char *r = "POST /x HTTP/1.1\r\ncontent-TYPE: application/json\r\nX-Dup: one\r\n"
                    "X-Dup: two\r\nContent-Length: 2\r\n\r\n{}";
    size_t used = 0;
    http_parse_init(&p, NULL);
    assert_int_equal(http_parse_feed(&p, r, strlen(r), &used), HTTP_PARSE_DONE);
    assert_int_equal(used, strlen(r));
    memset(&req, 0, sizeof req);
    http_parse_fill(&p, &req);
    assert_int_equal(req.method, HTTP_M_POST);
    assert_string_equal(req.method_name, "POST");
    assert_string_equal(http_request_header(&req, "Content-Type"), "application/json");
    assert_string_equal(http_request_header(&req, "CONTENT-type"), "application/json");
    assert_string_equal(http_request_header(&req, "x-dup"), "one"); /* first occurrence */
    assert_null(http_request_header(&req, "X-Missing"));
    assert_null(http_request_header(&req, "Content-Typ"));
    assert_int_equal(req.body_len, 2);
    assert_memory_equal(req.body, "{}", 3);
    http_parse_next(&p);
    assert_int_equal(http_parse_phase(&p), HTTP_PHASE_IDLE);
    http_parse_free(&p);
}

static void test_pipelined(void **state)
{
    (void)state;
    const char *r = "GET /one HTTP/1.1\r\nHost: a\r\n\r\n"
                    "POST /two HTTP/1.1\r\nHost: b\r\nContent-Length: 5\r\n\r\nhello"
                    "DELETE /three?z=9 HTTP/1.1\r\nHost: c\r\n\r\n";
    static struct seen s;
    for (size_t i = 0; i < NSTEPS; i++) {
        feed_str(r, steps[i], &s);
        assert_int_equal(s.nreq, 3);
        assert_string_equal(s.path[0], "/one");
        assert_string_equal(s.host[0], "a");
        assert_int_equal(s.m[1], HTTP_M_POST);
        assert_string_equal(s.path[1], "/two");
        assert_string_equal(s.body[1], "hello");
        assert_int_equal(s.m[2], HTTP_M_DELETE);
        assert_string_equal(s.path[2], "/three");
        assert_string_equal(s.query[2], "z=9");
        assert_string_equal(s.host[2], "c");
        assert_int_equal(s.body_len[2], 0); /* no leftovers from request 2 */
    }
}

static void test_chunked_body(void **state)
{
    (void)state;
    const char *r = "POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                    "5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n"
                    "GET /after HTTP/1.1\r\n\r\n";
    static struct seen s;
    for (size_t i = 0; i < NSTEPS; i++) {
        feed_str(r, steps[i], &s);
        assert_int_equal(s.nreq, 2);
        assert_string_equal(s.body[0], "hello world");
        assert_int_equal(s.body_len[0], 11);
        assert_true(s.body_nul[0]);
        assert_int_equal(s.nheaders[0], 2); /* trailers are not headers */
        assert_string_equal(s.path[1], "/after");
    }
}

static void test_content_length_body(void **state)
{
    (void)state;
    static char r[4096];
    static char body[1500];
    for (size_t i = 0; i < sizeof body - 1; i++)
        body[i] = (char)('a' + i % 26);
    body[sizeof body - 1] = '\0';
    snprintf(r, sizeof r, "PUT /b HTTP/1.1\r\nContent-Length: %zu\r\n\r\n%s", strlen(body), body);
    static struct seen s;
    for (size_t i = 0; i < NSTEPS; i++) {
        feed_str(r, steps[i], &s);
        assert_int_equal(s.nreq, 1);
        assert_int_equal(s.m[0], HTTP_M_PUT);
        assert_int_equal(s.body_len[0], strlen(body));
        assert_string_equal(s.body[0], body);
        assert_true(s.body_nul[0]);
    }
    /* a body that has not fully arrived leaves the parser in BODY */
    struct http_parse p;
    size_t used;
    http_parse_init(&p, NULL);
    assert_int_equal(http_parse_feed(&p, r, strlen(r) - 10, &used), HTTP_PARSE_MORE);
    assert_int_equal(used, strlen(r) - 10);
    assert_int_equal(http_parse_phase(&p), HTTP_PHASE_BODY);
    http_parse_free(&p);
}

static void test_expect_continue(void **state)
{
    (void)state;
    const char *head = "POST /e HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n";
    struct http_parse p;
    struct http_request req;
    size_t used = 0;
    http_parse_init(&p, NULL);
    assert_int_equal(http_parse_feed(&p, head, strlen(head), &used), HTTP_PARSE_MORE);
    assert_int_equal(used, strlen(head));
    assert_true(http_parse_take_continue(&p));
    assert_false(http_parse_take_continue(&p)); /* only once */
    assert_int_equal(http_parse_feed(&p, "abc", 3, &used), HTTP_PARSE_DONE);
    assert_int_equal(used, 3);
    assert_false(http_parse_take_continue(&p));
    memset(&req, 0, sizeof req);
    http_parse_fill(&p, &req);
    assert_int_equal(req.body_len, 3);
    assert_string_equal(req.body, "abc");
    http_parse_next(&p);
    /* body bytes already there: no 100 */
    assert_int_equal(http_parse_feed(&p, head, strlen(head), &used), HTTP_PARSE_MORE);
    assert_int_equal(http_parse_feed(&p, "a", 1, &used), HTTP_PARSE_MORE);
    assert_false(http_parse_take_continue(&p));
    http_parse_free(&p);
    /* without Expect, or with an empty body: never */
    static struct seen s;
    feed_str("POST /e HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc", 1, &s);
    assert_int_equal(s.nreq, 1);
    assert_int_equal(s.ncontinue, 0);
    feed_str("POST /e HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 0\r\n\r\n", 1, &s);
    assert_int_equal(s.nreq, 1);
    assert_int_equal(s.ncontinue, 0);
    /* split byte by byte: exactly one invitation, then the request */
    char full[256];
    snprintf(full, sizeof full, "%sabc", head);
    feed_str(full, 1, &s);
    assert_int_equal(s.ncontinue, 1);
    assert_int_equal(s.nreq, 1);
    assert_string_equal(s.body[0], "abc");
}

static void test_keep_alive_rules(void **state)
{
    (void)state;
    static struct seen s;
    feed_str("GET / HTTP/1.0\r\n\r\n", 0, &s);
    assert_int_equal(s.nreq, 1);
    assert_false(s.keep_alive[0]);
    feed_str("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", 0, &s);
    assert_true(s.keep_alive[0]);
    feed_str("GET / HTTP/1.1\r\nConnection: close\r\n\r\n", 0, &s);
    assert_false(s.keep_alive[0]);
    feed_str("GET / HTTP/1.1\r\n\r\n", 0, &s);
    assert_true(s.keep_alive[0]);
}

/* A request with `nheaders` headers and a head of exactly `total` bytes
 * (when total is non-zero). */
static char *make_request(size_t nheaders, size_t total)
{
    size_t cap = 64 + nheaders * 32 + total;
    char *r = malloc(cap);
    size_t n = (size_t)snprintf(r, cap, "GET / HTTP/1.1\r\n");
    for (size_t i = 0; i < nheaders; i++)
        n += (size_t)snprintf(r + n, cap - n, "X-H%zu: v\r\n", i);
    if (total) {
        /* pad with one header so that the head is `total` bytes long */
        size_t pad = total - n - strlen("X-Pad: \r\n\r\n");
        n += (size_t)snprintf(r + n, cap - n, "X-Pad: ");
        memset(r + n, 'p', pad);
        n += pad;
    }
    snprintf(r + n, cap - n, "%s\r\n", total ? "\r\n" : "");
    return r;
}

static void test_limits_header_bytes(void **state)
{
    (void)state;
    static struct seen s;
    char *exact = make_request(0, 16384);
    assert_int_equal(strlen(exact), 16384);
    char *over = make_request(0, 16385);
    for (size_t i = 0; i < NSTEPS; i++) {
        feed_str(exact, steps[i], &s);
        assert_int_equal(s.nreq, 1);
        feed_str(over, steps[i], &s);
        assert_int_equal(s.rc, HTTP_PARSE_ERROR);
        assert_int_equal(s.status, 431);
        assert_int_equal(s.nreq, 0);
    }
    /* an endless header line fails as soon as the allowance is used */
    size_t big = 100000;
    char *endless = malloc(big);
    memcpy(endless, "GET / HTTP/1.1\r\nX-A: ", 21);
    memset(endless + 21, 'a', big - 21);
    feed_all(NULL, endless, big, 4096, &s);
    assert_int_equal(s.status, 431);
    free(endless);
    free(exact);
    free(over);
}

static void test_limits_header_count(void **state)
{
    (void)state;
    static struct seen s;
    char *ok = make_request(100, 0);
    char *over = make_request(101, 0);
    for (size_t i = 0; i < NSTEPS; i++) {
        feed_str(ok, steps[i], &s);
        assert_int_equal(s.nreq, 1);
        assert_int_equal(s.nheaders[0], 100);
        feed_str(over, steps[i], &s);
        assert_int_equal(s.status, 431);
    }
    struct http_parse_limits lim = {0, 5, 0};
    char *six = make_request(6, 0);
    feed_all(&lim, six, strlen(six), 0, &s);
    assert_int_equal(s.status, 431);
    free(six);
    free(ok);
    free(over);
}

static void test_limits_body(void **state)
{
    (void)state;
    static struct seen s;
    struct http_parse_limits lim = {0, 0, 10};
    const char *declared = "POST / HTTP/1.1\r\nContent-Length: 11\r\n\r\n";
    feed_all(&lim, declared, strlen(declared), 0, &s);
    assert_int_equal(s.rc, HTTP_PARSE_ERROR);
    assert_int_equal(s.status, 413);
    const char *fits = "POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\n0123456789";
    feed_all(&lim, fits, strlen(fits), 1, &s);
    assert_int_equal(s.nreq, 1);
    assert_string_equal(s.body[0], "0123456789");
    const char *chunked = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                          "6\r\n012345\r\n5\r\n67890\r\n0\r\n\r\n";
    for (size_t i = 0; i < NSTEPS; i++) {
        feed_all(&lim, chunked, strlen(chunked), steps[i], &s);
        assert_int_equal(s.status, 413);
        assert_int_equal(s.nreq, 0);
    }
    /* the default limit is 1 MiB */
    const char *huge = "POST / HTTP/1.1\r\nContent-Length: 1048577\r\n\r\n";
    feed_str(huge, 0, &s);
    assert_int_equal(s.status, 413);
}

static void expect_400(const char *r)
{
    static struct seen s;
    for (size_t i = 0; i < NSTEPS; i++) {
        feed_all(NULL, r, strlen(r), steps[i], &s);
        assert_int_equal(s.rc, HTTP_PARSE_ERROR);
        assert_int_equal(s.status, 400);
        assert_int_equal(s.nreq, 0);
    }
}

static void test_malformed(void **state)
{
    (void)state;
    static struct seen s;
    expect_400("GARBAGE\r\n\r\n");
    expect_400("FOO / HTTP/1.1\r\n\r\n");
    expect_400("GET / HTTP/1.1\r\nBad Header\r\n\r\n");
    expect_400("GET / HTTP/1.1\r\nX-Ctl: a\x01"
               "b\r\n\r\n");
    expect_400("GET / HTTP/1.1\r\nX-Del: a\x7f\r\n\r\n");
    expect_400("GET / XTTP/1.1\r\n\r\n");
    expect_400("GET /a b HTTP/1.1\r\n\r\n");
    expect_400("POST / HTTP/1.1\r\nContent-Length: 12x\r\n\r\n");
    expect_400("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n");
    expect_400("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffffff\r\n");
    expect_400("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n");
    /* NUL inside a header value (the length covers it) */
    const char nul_hdr[] = "GET / HTTP/1.1\r\nX-Nul: a\0b\r\n\r\n";
    for (size_t i = 0; i < NSTEPS; i++) {
        feed_all(NULL, nul_hdr, sizeof nul_hdr - 1, steps[i], &s);
        assert_int_equal(s.status, 400);
    }
    const char nul_url[] = "GET /a\0b HTTP/1.1\r\n\r\n";
    feed_all(NULL, nul_url, sizeof nul_url - 1, 0, &s);
    assert_int_equal(s.status, 400);
    /* not HTTP/1.x */
    feed_str("GET / HTTP/2.0\r\n\r\n", 0, &s);
    assert_int_equal(s.status, 505);
    /* once failed, the parser stays failed */
    struct http_parse p;
    size_t used;
    http_parse_init(&p, NULL);
    assert_int_equal(http_parse_feed(&p, "XX\r\n", 4, &used), HTTP_PARSE_ERROR);
    assert_int_equal(http_parse_feed(&p, "GET / HTTP/1.1\r\n\r\n", 18, &used), HTTP_PARSE_ERROR);
    assert_int_equal(used, 0);
    assert_non_null(http_parse_message(&p));
    http_parse_free(&p);
}

/* Feeds s placed at the very end of a readable page followed by a
 * PROT_NONE page: reading one byte past the input faults. */
static void feed_at_guard(const char *s, size_t len, size_t step, struct seen *out)
{
    long pg = sysconf(_SC_PAGESIZE);
    assert_true(len <= (size_t)pg);
    char *mem =
        mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(mem != MAP_FAILED);
    assert_int_equal(mprotect(mem + pg, (size_t)pg, PROT_NONE), 0);
    char *at = mem + pg - len;
    memcpy(at, s, len);
    feed_all(NULL, at, len, step, out);
    munmap(mem, (size_t)pg * 2);
}

static void test_guard_page(void **state)
{
    (void)state;
    static struct seen s;
    static const char *inputs[] = {
        "GET /guard?x=1 HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET /guard HTTP/1.1\r\nHost: h\r\n",                            /* truncated head */
        "GET /guard HTTP/1.1\r\nHost: h",                                /* truncated value */
        "GET /gu",                                                       /* truncated target */
        "POST /g HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc",             /* truncated body */
        "POST /g HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", /* in a chunk */
        "POST /g HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nf",       /* in a chunk size */
        "GARBAGE",
    };
    for (size_t k = 0; k < sizeof inputs / sizeof inputs[0]; k++)
        for (size_t i = 0; i < NSTEPS; i++)
            feed_at_guard(inputs[k], strlen(inputs[k]), steps[i], &s);
    feed_at_guard(inputs[0], strlen(inputs[0]), 0, &s);
    assert_int_equal(s.nreq, 1);
    assert_string_equal(s.query[0], "x=1");
    feed_at_guard(inputs[4], strlen(inputs[4]), 1, &s);
    assert_int_equal(s.nreq, 0);
    assert_int_equal(s.rc, HTTP_PARSE_MORE);
}

static void test_method_map(void **state)
{
    (void)state;
    static struct seen s;
    feed_str("HEAD / HTTP/1.1\r\n\r\nOPTIONS * HTTP/1.1\r\n\r\nPATCH /p HTTP/1.1\r\n\r\n"
             "PROPFIND /x HTTP/1.1\r\n\r\n",
             0, &s);
    assert_int_equal(s.nreq, 4);
    assert_int_equal(s.m[0], HTTP_M_HEAD);
    assert_int_equal(s.m[1], HTTP_M_OPTIONS);
    assert_string_equal(s.path[1], "*");
    assert_int_equal(s.m[2], HTTP_M_PATCH);
    assert_int_equal(s.m[3], HTTP_M_OTHER);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_simple_get),          cmocka_unit_test(test_query_split),
        cmocka_unit_test(test_header_lookup),       cmocka_unit_test(test_pipelined),
        cmocka_unit_test(test_chunked_body),        cmocka_unit_test(test_content_length_body),
        cmocka_unit_test(test_expect_continue),     cmocka_unit_test(test_keep_alive_rules),
        cmocka_unit_test(test_limits_header_bytes), cmocka_unit_test(test_limits_header_count),
        cmocka_unit_test(test_limits_body),         cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_guard_page),          cmocka_unit_test(test_method_map),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
