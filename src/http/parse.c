/*
 * parse.c - incremental request parser around libhttp-parser (see parse.h).
 *
 * libhttp-parser hands out the request target, header names and values in
 * pieces (a piece ends wherever a read ended), so every piece is appended
 * to one capped "head" buffer with offsets remembered; the offsets become
 * NUL-terminated views in http_parse_fill().  The parser is paused in
 * on_message_complete so that exactly one request is returned at a time
 * and pipelined bytes stay with the caller.
 *
 * The header-size limit is exact: while the headers are incomplete the
 * parser is never given more than the remaining allowance, so a request
 * whose head is one byte too long fails without reading further.
 */
#include "http/parse.h"

#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/err.h"

#define PARSE_DEFAULT_HEAD (16 * 1024)
#define PARSE_DEFAULT_BODY (1024 * 1024)
/* Buffers above this size are released between requests. */
#define PARSE_KEEP_BYTES (64 * 1024)

static struct http_parse *from_hp(http_parser *hp)
{
    return (struct http_parse *)(void *)((char *)hp - offsetof(struct http_parse, hp));
}

/* Records the first error; returns -1 so the callback aborts parsing. */
static int fail(struct http_parse *p, int status, const char *msg)
{
    if (!p->err_status) {
        p->err_status = status;
        p->err_msg = msg;
    }
    return -1;
}

static int head_append(struct http_parse *p, const char *at, size_t len)
{
    if (buf_append(&p->head, at, len))
        return fail(p, 431, "Request header fields too large");
    return 0;
}

static int head_nul(struct http_parse *p)
{
    return head_append(p, "", 1);
}

static int finish_url(struct http_parse *p)
{
    if (p->url_done)
        return 0;
    p->url_done = true;
    return head_nul(p);
}

/* Terminates the header being collected, if any.  A name without any
 * value callback gets "" as value; trailing blanks of a value are cut. */
static int finish_header(struct http_parse *p)
{
    int rc = 0;
    if (p->last_cb == 1) {
        rc = head_nul(p);
        if (!rc) {
            p->value_off[p->nhdr - 1] = (uint32_t)p->head.len;
            rc = head_nul(p);
        }
    } else if (p->last_cb == 2) {
        size_t start = p->value_off[p->nhdr - 1];
        while (p->head.len > start &&
               (p->head.data[p->head.len - 1] == ' ' || p->head.data[p->head.len - 1] == '\t'))
            p->head.len--;
        rc = head_nul(p);
    }
    p->last_cb = 0;
    return rc;
}

static int count_trailer(struct http_parse *p, size_t len)
{
    p->trailer_bytes += len;
    if (p->trailer_bytes > p->lim.max_header_bytes)
        return fail(p, 431, "Request header fields too large");
    return 0;
}

static int on_message_begin(http_parser *hp)
{
    struct http_parse *p = from_hp(hp);
    p->phase = HTTP_PHASE_HEAD;
    return 0;
}

static int on_url(http_parser *hp, const char *at, size_t len)
{
    struct http_parse *p = from_hp(hp);
    if (memchr(at, '\0', len))
        return fail(p, 400, "Malformed HTTP request");
    return head_append(p, at, len);
}

static int on_header_field(http_parser *hp, const char *at, size_t len)
{
    struct http_parse *p = from_hp(hp);
    if (p->phase == HTTP_PHASE_BODY)
        return count_trailer(p, len);
    if (finish_url(p))
        return -1;
    if (p->last_cb != 1) {
        if (finish_header(p))
            return -1;
        if (p->nhdr >= p->lim.max_headers)
            return fail(p, 431, "Too many request headers");
        p->name_off[p->nhdr] = (uint32_t)p->head.len;
        p->value_off[p->nhdr] = 0;
        p->nhdr++;
        p->last_cb = 1;
    }
    return head_append(p, at, len);
}

static int on_header_value(http_parser *hp, const char *at, size_t len)
{
    struct http_parse *p = from_hp(hp);
    if (p->phase == HTTP_PHASE_BODY)
        return count_trailer(p, len);
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)at[i];
        if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
            return fail(p, 400, "Invalid character in header");
    }
    if (p->last_cb == 0)
        return fail(p, 400, "Malformed HTTP request"); /* value without a name */
    if (p->last_cb == 1) {
        if (head_nul(p))
            return -1;
        p->value_off[p->nhdr - 1] = (uint32_t)p->head.len;
        p->last_cb = 2;
    }
    return head_append(p, at, len);
}

static const char *find_header(const struct http_parse *p, const char *name)
{
    for (size_t i = 0; i < p->nhdr; i++)
        if (!strcasecmp(p->head.data + p->name_off[i], name))
            return p->head.data + p->value_off[i];
    return NULL;
}

/* Splits the target into path and query.  Origin-form targets without a
 * query use the target itself as path; otherwise a copy is appended. */
static int split_target(struct http_parse *p)
{
    const char *t = p->head.data;
    size_t tlen = strlen(t);
    const char *q = memchr(t, '?', tlen);
    size_t qpos = q ? (size_t)(q - t) : tlen;
    p->query_off = q ? (uint32_t)(qpos + 1) : (uint32_t)tlen;
    size_t pstart = 0;
    if (t[0] != '/' && t[0] != '*') {
        /* absolute-form "http://host/path?q": skip scheme and authority */
        const char *s = strstr(t, "://");
        if (s && (size_t)(s - t) < qpos) {
            const char *slash = memchr(s + 3, '/', qpos - (size_t)(s + 3 - t));
            pstart = slash ? (size_t)(slash - t) : qpos;
        }
    }
    if (pstart == 0 && !q) {
        p->path_off = 0;
        return 0;
    }
    p->path_off = (uint32_t)p->head.len;
    if (pstart == qpos) {
        /* "http://host" or "http://host?x": the path is "/" */
        if (head_append(p, "/", 1))
            return -1;
        return head_nul(p);
    }
    /* t may move when head grows: copy through an offset */
    size_t plen = qpos - pstart;
    if (buf_reserve(&p->head, plen + 1))
        return fail(p, 431, "Request header fields too large");
    memcpy(p->head.data + p->head.len, p->head.data + pstart, plen);
    p->head.len += plen;
    return head_nul(p);
}

static int on_headers_complete(http_parser *hp)
{
    struct http_parse *p = from_hp(hp);
    if (finish_url(p) || finish_header(p))
        return -1;
    p->phase = HTTP_PHASE_BODY;
    if (hp->http_major != 1)
        return fail(p, 505, "HTTP version not supported");
    if (split_target(p))
        return -1;
    bool chunked = (hp->flags & F_CHUNKED) != 0;
    bool has_len = !chunked && hp->content_length != ULLONG_MAX;
    if (has_len && hp->content_length > p->lim.max_body)
        return fail(p, 413, "Payload too large");
    if (has_len && hp->content_length > 0 && buf_reserve(&p->body, (size_t)hp->content_length))
        return fail(p, 413, "Payload too large");
    const char *expect = find_header(p, "Expect");
    if (expect && !strcasecmp(expect, "100-continue") && hp->http_minor >= 1 &&
        (chunked || (has_len && hp->content_length > 0)))
        p->expect_continue = true;
    return 0;
}

static int on_body(http_parser *hp, const char *at, size_t len)
{
    struct http_parse *p = from_hp(hp);
    if (buf_append(&p->body, at, len))
        return fail(p, 413, "Payload too large");
    return 0;
}

static int on_message_complete(http_parser *hp)
{
    struct http_parse *p = from_hp(hp);
    p->complete = true;
    http_parser_pause(hp, 1);
    return 0;
}

static const http_parser_settings parse_settings = {
    .on_message_begin = on_message_begin,
    .on_url = on_url,
    .on_header_field = on_header_field,
    .on_header_value = on_header_value,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

static void reset_request(struct http_parse *p)
{
    if (p->head.cap > PARSE_KEEP_BYTES)
        buf_free(&p->head);
    else
        buf_reset(&p->head);
    if (p->body.cap > PARSE_KEEP_BYTES)
        buf_free(&p->body);
    else
        buf_reset(&p->body);
    p->head_seen = 0;
    p->trailer_bytes = 0;
    p->path_off = p->query_off = 0;
    p->nhdr = 0;
    p->last_cb = 0;
    p->phase = HTTP_PHASE_IDLE;
    p->url_done = false;
    p->complete = false;
    p->expect_continue = false;
}

void http_parse_init(struct http_parse *p, const struct http_parse_limits *lim)
{
    memset(p, 0, sizeof *p);
    http_parser_init(&p->hp, HTTP_REQUEST);
    p->lim.max_header_bytes =
        lim && lim->max_header_bytes ? lim->max_header_bytes : PARSE_DEFAULT_HEAD;
    p->lim.max_headers = lim && lim->max_headers ? lim->max_headers : HTTP_MAX_HEADERS_CAP;
    if (p->lim.max_headers > HTTP_MAX_HEADERS_CAP)
        p->lim.max_headers = HTTP_MAX_HEADERS_CAP;
    p->lim.max_body = lim && lim->max_body ? lim->max_body : PARSE_DEFAULT_BODY;
    /* The head holds at most the raw head bytes, two NULs per header, the
     * target's NUL and a copy of the path. */
    buf_init(&p->head, 2 * p->lim.max_header_bytes + 2 * HTTP_MAX_HEADERS_CAP + 16);
    buf_init(&p->body, p->lim.max_body);
    p->phase = HTTP_PHASE_IDLE;
}

void http_parse_free(struct http_parse *p)
{
    buf_free(&p->head);
    buf_free(&p->body);
}

static void set_parser_error(struct http_parse *p)
{
    enum http_errno e = HTTP_PARSER_ERRNO(&p->hp);
    if (p->err_status)
        return;
    p->err_status = 400;
    switch (e) {
    case HPE_HEADER_OVERFLOW:
        p->err_status = 431;
        p->err_msg = "Request header fields too large";
        break;
    case HPE_INVALID_METHOD:
        p->err_msg = "Invalid HTTP method";
        break;
    case HPE_INVALID_CHUNK_SIZE:
        p->err_msg = "Invalid chunked encoding";
        break;
    case HPE_INVALID_VERSION:
        p->err_msg = "Invalid HTTP version";
        break;
    default:
        p->err_msg = "Malformed HTTP request";
        break;
    }
}

int http_parse_feed(struct http_parse *p, const char *data, size_t len, size_t *used)
{
    size_t off = 0;
    int rc = HTTP_PARSE_MORE;
    if (p->err_status) {
        rc = HTTP_PARSE_ERROR;
        goto out;
    }
    if (p->complete) {
        rc = HTTP_PARSE_DONE;
        goto out;
    }
    while (off < len) {
        bool in_head = p->phase != HTTP_PHASE_BODY;
        size_t chunk = len - off;
        if (in_head && chunk > p->lim.max_header_bytes - p->head_seen)
            chunk = p->lim.max_header_bytes - p->head_seen;
        size_t n = http_parser_execute(&p->hp, &parse_settings, data + off, chunk);
        if (n > chunk)
            n = chunk; /* defensive: never count bytes we did not give */
        off += n;
        if (in_head)
            p->head_seen += n;
        enum http_errno e = HTTP_PARSER_ERRNO(&p->hp);
        if (e == HPE_PAUSED && p->complete) {
            rc = HTTP_PARSE_DONE;
            goto out;
        }
        if (e != HPE_OK || p->err_status) {
            set_parser_error(p);
            rc = HTTP_PARSE_ERROR;
            goto out;
        }
        if (p->phase != HTTP_PHASE_BODY && p->head_seen >= p->lim.max_header_bytes) {
            fail(p, 431, "Request header fields too large");
            rc = HTTP_PARSE_ERROR;
            goto out;
        }
        if (n < chunk) {
            /* stopped without pause or error (upgrade): nothing sane follows */
            fail(p, 400, "Malformed HTTP request");
            rc = HTTP_PARSE_ERROR;
            goto out;
        }
    }
out:
    *used = off;
    return rc;
}

enum http_method http_parse_method(unsigned hp_method)
{
    switch (hp_method) {
    case HTTP_GET:
        return HTTP_M_GET;
    case HTTP_HEAD:
        return HTTP_M_HEAD;
    case HTTP_POST:
        return HTTP_M_POST;
    case HTTP_PUT:
        return HTTP_M_PUT;
    case HTTP_DELETE:
        return HTTP_M_DELETE;
    case HTTP_OPTIONS:
        return HTTP_M_OPTIONS;
    case HTTP_PATCH:
        return HTTP_M_PATCH;
    default:
        return HTTP_M_OTHER;
    }
}

void http_parse_fill(const struct http_parse *p, struct http_request *req)
{
    static const char empty[] = "";
    const char *h = p->head.data ? p->head.data : empty;
    req->method = http_parse_method(p->hp.method);
    req->method_name = http_method_str((enum gp_hp_method_)p->hp.method);
    req->target = h;
    req->path = p->head.data ? h + p->path_off : empty;
    req->query = p->head.data ? h + p->query_off : empty;
    req->nheaders = p->nhdr;
    for (size_t i = 0; i < p->nhdr; i++) {
        req->headers[i].name = h + p->name_off[i];
        req->headers[i].value = h + p->value_off[i];
    }
    req->body = p->body.data ? p->body.data : empty;
    req->body_len = p->body.len;
    req->keep_alive = http_should_keep_alive(&p->hp) && !p->hp.upgrade;
}

void http_parse_next(struct http_parse *p)
{
    if (p->complete)
        http_parser_pause(&p->hp, 0);
    reset_request(p);
}

bool http_parse_take_continue(struct http_parse *p)
{
    if (!p->expect_continue || p->complete || p->err_status || p->body.len)
        return false;
    p->expect_continue = false;
    return true;
}

enum http_parse_phase http_parse_phase(const struct http_parse *p)
{
    return p->phase;
}

int http_parse_minor(const struct http_parse *p)
{
    return p->hp.http_minor;
}

int http_parse_status(const struct http_parse *p)
{
    return p->err_status ? p->err_status : 400;
}

const char *http_parse_message(const struct http_parse *p)
{
    return p->err_msg ? p->err_msg : "Malformed HTTP request";
}

const char *http_request_header(const struct http_request *r, const char *name)
{
    for (size_t i = 0; i < r->nheaders; i++)
        if (!strcasecmp(r->headers[i].name, name))
            return r->headers[i].value;
    return NULL;
}
