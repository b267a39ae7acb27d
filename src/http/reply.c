/*
 * reply.c - response serialisation (see reply.h) and the response-building
 * helpers of http.h (http_response_header, http_response_error,
 * http_status_text).
 *
 * Every response is one contiguous run in the connection's output buffer,
 * built with plain appends (no printf on the hot path): the status line
 * comes from a table, the Date line from a per-second cache, and the
 * Content-Length digits are formatted by hand.  A failed append rolls the
 * buffer back to where it was so the connection never holds half a reply.
 */
#include "http/reply.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/err.h"

struct status_entry {
    int code;
    const char *text;
};

/* Reason phrases (RFC 9110 section 15). */
static const struct status_entry status_table[] = {
    {100, "Continue"},
    {101, "Switching Protocols"},
    {200, "OK"},
    {201, "Created"},
    {202, "Accepted"},
    {204, "No Content"},
    {206, "Partial Content"},
    {301, "Moved Permanently"},
    {302, "Found"},
    {303, "See Other"},
    {304, "Not Modified"},
    {307, "Temporary Redirect"},
    {308, "Permanent Redirect"},
    {400, "Bad Request"},
    {401, "Unauthorized"},
    {402, "Payment Required"},
    {403, "Forbidden"},
    {404, "Not Found"},
    {405, "Method Not Allowed"},
    {406, "Not Acceptable"},
    {408, "Request Timeout"},
    {409, "Conflict"},
    {410, "Gone"},
    {411, "Length Required"},
    {412, "Precondition Failed"},
    {413, "Content Too Large"},
    {414, "URI Too Long"},
    {415, "Unsupported Media Type"},
    {416, "Range Not Satisfiable"},
    {417, "Expectation Failed"},
    {422, "Unprocessable Content"},
    {425, "Too Early"},
    {426, "Upgrade Required"},
    {428, "Precondition Required"},
    {429, "Too Many Requests"},
    {431, "Request Header Fields Too Large"},
    {500, "Internal Server Error"},
    {501, "Not Implemented"},
    {502, "Bad Gateway"},
    {503, "Service Unavailable"},
    {504, "Gateway Timeout"},
    {505, "HTTP Version Not Supported"},
};

const char *http_status_text(int status)
{
    for (size_t i = 0; i < sizeof status_table / sizeof status_table[0]; i++)
        if (status_table[i].code == status)
            return status_table[i].text;
    if (status >= 100 && status < 200)
        return "Informational";
    if (status >= 200 && status < 300)
        return "Success";
    if (status >= 300 && status < 400)
        return "Redirection";
    if (status >= 400 && status < 500)
        return "Client Error";
    return "Server Error";
}

static const char wday_names[7][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
static const char month_names[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

void http_date_update(struct http_date_cache *dc, time_t now)
{
    struct tm tm;
    if (dc->len && dc->sec == now)
        return;
    gmtime_r(&now, &tm);
    int n = snprintf(dc->line, sizeof dc->line, "Date: %s, %02d %s %04d %02d:%02d:%02d GMT\r\n",
                     wday_names[tm.tm_wday % 7], tm.tm_mday, month_names[tm.tm_mon % 12],
                     tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
    dc->len = n > 0 && (size_t)n < sizeof dc->line ? (size_t)n : 0;
    dc->sec = now;
}

static int put_status_line(struct buf *out, int status)
{
    char line[96];
    if (status < 100 || status > 999)
        status = 500;
    int n = snprintf(line, sizeof line, "HTTP/1.1 %d %s\r\n", status, http_status_text(status));
    if (n < 0 || (size_t)n >= sizeof line)
        return ERR_INTERNAL;
    return buf_append(out, line, (size_t)n);
}

/* Fast path for the statuses nearly every response uses. */
static int put_status(struct buf *out, int status)
{
    static const char s200[] = "HTTP/1.1 200 OK\r\n";
    static const char s404[] = "HTTP/1.1 404 Not Found\r\n";
    if (status == 200)
        return buf_append(out, s200, sizeof s200 - 1);
    if (status == 404)
        return buf_append(out, s404, sizeof s404 - 1);
    return put_status_line(out, status);
}

/* Date, Connection and CORS lines shared by every kind of response. */
static int put_common(struct buf *out, const struct http_reply_ctx *ctx, bool streaming)
{
    int rc = 0;
    if (ctx->date && ctx->date->len)
        rc = buf_append(out, ctx->date->line, ctx->date->len);
    if (!rc) {
        if (streaming || (ctx->keep_alive && ctx->minor == 0))
            rc = buf_puts(out, "Connection: keep-alive\r\n");
        else if (!ctx->keep_alive)
            rc = buf_puts(out, "Connection: close\r\n");
    }
    if (!rc && ctx->cors_origin) {
        rc = buf_puts(out, "Access-Control-Allow-Origin: ");
        if (!rc)
            rc = buf_puts(out, ctx->cors_origin);
        if (!rc)
            rc = buf_puts(out, "\r\n");
    }
    return rc;
}

static bool status_has_body(int status)
{
    return !(status < 200 || status == 204 || status == 304);
}

int http_reply_append(struct buf *out, const struct http_reply_ctx *ctx,
                      const struct http_response *res, size_t *bytes)
{
    size_t start = out->len;
    int status = res->status ? res->status : 500;
    bool body_ok = status_has_body(status);
    int rc = put_status(out, status);
    if (!rc)
        rc = put_common(out, ctx, false);
    if (!rc && body_ok) {
        rc = buf_puts(out, "Content-Type: ");
        if (!rc)
            rc = buf_puts(out, res->content_type ? res->content_type : "application/json");
        if (!rc)
            rc = buf_puts(out, "\r\nContent-Length: ");
        if (!rc)
            rc = buf_put_u64(out, res->body.len);
        if (!rc)
            rc = buf_puts(out, "\r\n");
    }
    if (!rc && res->headers.len)
        rc = buf_append(out, res->headers.data, res->headers.len);
    if (!rc)
        rc = buf_append(out, "\r\n", 2);
    if (!rc && body_ok && !ctx->head && res->body.len)
        rc = buf_append(out, res->body.data, res->body.len);
    if (rc) {
        out->len = start;
        if (out->data)
            out->data[start] = '\0';
        return rc;
    }
    *bytes = out->len - start;
    return 0;
}

int http_json_escape(struct buf *out, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    int rc = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && !rc; p++) {
        if (*p == '"' || *p == '\\') {
            char e[2] = {'\\', (char)*p};
            rc = buf_append(out, e, 2);
        } else if (*p < 0x20) {
            char e[6] = {'\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 15]};
            rc = buf_append(out, e, 6);
        } else {
            rc = buf_putc(out, (char)*p);
        }
    }
    return rc;
}

int http_reply_error(struct buf *out, const struct http_reply_ctx *ctx, int status, const char *msg,
                     size_t *bytes)
{
    struct http_response res;
    memset(&res, 0, sizeof res);
    buf_init(&res.headers, 0);
    buf_init(&res.body, 4096);
    http_response_error(&res, status, msg);
    int rc = http_reply_append(out, ctx, &res, bytes);
    buf_free(&res.body);
    return rc;
}

int http_reply_stream_head(struct buf *out, const struct http_reply_ctx *ctx,
                           const struct http_response *res, size_t *bytes)
{
    size_t start = out->len;
    int rc = put_status(out, res->status ? res->status : 200);
    if (!rc)
        rc = put_common(out, ctx, true);
    if (!rc) {
        rc = buf_puts(out, "Content-Type: ");
        if (!rc)
            rc = buf_puts(out, res->content_type ? res->content_type : "text/event-stream");
        if (!rc)
            rc = buf_puts(out, "\r\n");
    }
    if (!rc && res->headers.len)
        rc = buf_append(out, res->headers.data, res->headers.len);
    if (!rc)
        rc = buf_append(out, "\r\n", 2);
    if (!rc && !ctx->head && res->body.len)
        rc = buf_append(out, res->body.data, res->body.len);
    if (rc) {
        out->len = start;
        if (out->data)
            out->data[start] = '\0';
        return rc;
    }
    *bytes = out->len - start;
    return 0;
}

/* A header list worth echoing: header-name characters, commas and
 * blanks only, and short. */
static bool safe_header_list(const char *s)
{
    size_t n = 0;
    for (; s[n]; n++) {
        unsigned char ch = (unsigned char)s[n];
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                  (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == ',' || ch == ' ';
        if (!ok || n >= 512)
            return false;
    }
    return n > 0;
}

int http_reply_preflight(struct buf *out, const struct http_reply_ctx *ctx, const char *req_headers,
                         size_t *bytes)
{
    size_t start = out->len;
    const char *allow = req_headers && safe_header_list(req_headers)
                            ? req_headers
                            : "Authorization, Content-Type, X-Ingest-Key";
    int rc = put_status(out, 204);
    if (!rc)
        rc = put_common(out, ctx, false);
    if (!rc)
        rc = buf_puts(out, "Access-Control-Allow-Methods: GET, HEAD, POST, PUT, PATCH, DELETE, "
                           "OPTIONS\r\nAccess-Control-Allow-Headers: ");
    if (!rc)
        rc = buf_puts(out, allow);
    if (!rc)
        rc = buf_puts(out, "\r\nAccess-Control-Max-Age: 600\r\n\r\n");
    if (rc) {
        out->len = start;
        if (out->data)
            out->data[start] = '\0';
        return rc;
    }
    *bytes = out->len - start;
    return 0;
}

int http_reply_continue(struct buf *out, size_t *bytes)
{
    static const char line[] = "HTTP/1.1 100 Continue\r\n\r\n";
    int rc = buf_append(out, line, sizeof line - 1);
    if (!rc)
        *bytes = sizeof line - 1;
    return rc;
}

/* Replaces CR and LF in [from, len) by spaces (no header injection). */
static void scrub_controls(struct buf *b, size_t from)
{
    for (size_t i = from; i < b->len; i++)
        if (b->data[i] == '\r' || b->data[i] == '\n')
            b->data[i] = ' ';
}

void http_response_header(struct http_response *res, const char *name, const char *fmt, ...)
{
    size_t start = res->headers.len;
    int rc = buf_puts(&res->headers, name);
    if (!rc) {
        scrub_controls(&res->headers, start);
        rc = buf_puts(&res->headers, ": ");
    }
    size_t vstart = res->headers.len;
    if (!rc) {
        va_list ap;
        va_start(ap, fmt);
        rc = buf_vprintf(&res->headers, fmt, ap);
        va_end(ap);
    }
    if (!rc) {
        scrub_controls(&res->headers, vstart);
        rc = buf_puts(&res->headers, "\r\n");
    }
    if (rc) {
        /* over the cap: drop the partial line rather than send garbage */
        res->headers.len = start;
        if (res->headers.data)
            res->headers.data[start] = '\0';
    }
}

void http_response_error(struct http_response *res, int status, const char *msg)
{
    res->status = status;
    res->content_type = "application/json";
    buf_reset(&res->body);
    int rc = buf_puts(&res->body, "{\"error\":\"");
    if (!rc)
        rc = http_json_escape(&res->body, msg ? msg : "");
    if (!rc)
        rc = buf_puts(&res->body, "\"}");
    if (rc) {
        buf_reset(&res->body);
        buf_puts(&res->body, "{\"error\":\"Internal error\"}");
    }
}
