/*
 * reply.h - HTTP/1.1 response serialisation: status line, the standard
 * headers (Date, Content-Type, Content-Length, Connection, CORS), the
 * application's extra headers and the body, appended to a connection's
 * output buffer.  Also the cached Date header and JSON error bodies.
 */
#ifndef GP_HTTP_REPLY_H
#define GP_HTTP_REPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "http/http.h"
#include "util/buf.h"

/* "Date: <IMF-fixdate>\r\n", formatted at most once per second. */
struct http_date_cache {
    time_t sec;
    size_t len;
    char line[64];
};

/* Refreshes dc when now is a different second than last time. */
void http_date_update(struct http_date_cache *dc, time_t now);

/* How the response is framed for this request. */
struct http_reply_ctx {
    int minor;       /* HTTP/1.<minor> of the request */
    bool head;       /* HEAD: headers only */
    bool keep_alive; /* false -> "Connection: close" */
    const struct http_date_cache *date;
    const char *cors_origin; /* NULL: no CORS headers */
};

/*
 * Appends the complete response res to out.  Status 0 is sent as 500.
 * On success returns 0 and sets *bytes to the bytes appended.  On error
 * (ERR_TOOBIG: out's cap) out is left as it was.
 */
int http_reply_append(struct buf *out, const struct http_reply_ctx *ctx,
                      const struct http_response *res, size_t *bytes);

/* Appends status with body {"error": msg}; same contract as above. */
int http_reply_error(struct buf *out, const struct http_reply_ctx *ctx, int status, const char *msg,
                     size_t *bytes);

/* Appends the head of a streaming response (no Content-Length,
 * "Connection: keep-alive") followed by res->body, if any. */
int http_reply_stream_head(struct buf *out, const struct http_reply_ctx *ctx,
                           const struct http_response *res, size_t *bytes);

/* Appends the 204 answer to a CORS preflight; req_headers is the request's
 * Access-Control-Request-Headers (may be NULL; echoed when harmless). */
int http_reply_preflight(struct buf *out, const struct http_reply_ctx *ctx, const char *req_headers,
                         size_t *bytes);

/* Appends "HTTP/1.1 100 Continue". */
int http_reply_continue(struct buf *out, size_t *bytes);

/* Appends s as the inside of a JSON string (quotes not included). */
int http_json_escape(struct buf *out, const char *s);

#endif
