/*
 * fuzz_http_request.c - arbitrary bytes through the request parser
 * (src/http/parse.c), the same path the server takes: feed, fill, answer
 * with the reply serialiser, next request.  The input is fed twice: whole,
 * then in pieces whose size comes from the input length, so both the
 * one-read and the split-read paths run.  No crash, no leak, no over-read.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "http/parse.h"
#include "http/reply.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void run(const char *in, size_t size, size_t step)
{
    static struct http_request req;
    struct http_parse p;
    struct http_parse_limits lim = {2048, 20, 4096};
    struct http_response res;
    struct buf out;
    struct http_date_cache date = {0};
    http_date_update(&date, 0);
    http_parse_init(&p, &lim);
    buf_init(&out, 1 << 20);
    memset(&res, 0, sizeof res);
    buf_init(&res.headers, 4096);
    buf_init(&res.body, 1 << 16);
    size_t off = 0;
    bool failed = false;
    while (off < size && !failed) {
        size_t n = size - off < step ? size - off : step;
        size_t done = 0;
        while (done < n) {
            size_t used = 0;
            int rc = http_parse_feed(&p, in + off + done, n - done, &used);
            done += used;
            if (rc == HTTP_PARSE_ERROR) {
                size_t bytes;
                struct http_reply_ctx ctx = {1, false, false, &date, NULL};
                http_reply_error(&out, &ctx, http_parse_status(&p), http_parse_message(&p), &bytes);
                failed = true;
                break;
            }
            if (rc == HTTP_PARSE_MORE) {
                (void)http_parse_take_continue(&p);
                break;
            }
            memset(&req, 0, sizeof req);
            http_parse_fill(&p, &req);
            /* touch every view the way a handler would */
            size_t sum = strlen(req.target) + strlen(req.path) + strlen(req.query);
            for (size_t i = 0; i < req.nheaders; i++)
                sum += strlen(req.headers[i].name) + strlen(req.headers[i].value);
            (void)http_request_header(&req, "content-type");
            buf_reset(&res.body);
            buf_reset(&res.headers);
            res.status = sum % 2 ? 200 : 404;
            http_response_header(&res, "X-Path", "%s", req.path);
            buf_append(&res.body, req.body, req.body_len);
            size_t bytes;
            struct http_reply_ctx ctx = {1, req.method == HTTP_M_HEAD, req.keep_alive, &date, "*"};
            http_reply_append(&out, &ctx, &res, &bytes);
            if (out.len > (1 << 19))
                buf_reset(&out);
            http_parse_next(&p);
        }
        off += n;
    }
    buf_free(&res.headers);
    buf_free(&res.body);
    buf_free(&out);
    http_parse_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *in = (const char *)data;
    run(in, size, size ? size : 1);
    run(in, size, 1 + size % 13);
    return 0;
}
