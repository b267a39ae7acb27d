/*
 * parse.h - incremental HTTP/1.x request parsing (the only place HTTP is
 * parsed; wraps Debian's libhttp-parser 2.9).
 *
 * One struct http_parse lives in each connection.  Bytes are fed as they
 * arrive, in pieces of any size; the parser copies the request target, the
 * headers and the body into its own capped buffers, so the caller may drop
 * its input as soon as feed() returns.  Parsing stops after each complete
 * request (HTTP_PARSE_DONE); the caller fills a struct http_request with
 * http_parse_fill(), handles it and calls http_parse_next() before feeding
 * the rest (pipelining).
 *
 * Limits: request line + headers > max_header_bytes -> 431, more than
 * max_headers headers -> 431, body (declared or received) > max_body ->
 * 413, anything malformed (bad syntax, bad chunk, control bytes or NUL in
 * headers, unknown method) -> 400.  After an error the parser stays failed.
 */
#ifndef GP_HTTP_PARSE_H
#define GP_HTTP_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* libhttp-parser names its method enum "http_method" like http.h does:
 * rename its tag while including it (its constants are HTTP_GET... and do
 * not collide with http.h's HTTP_M_*). */
#define http_method gp_hp_method_
#include <http_parser.h>
#undef http_method

#include "http/http.h"
#include "util/buf.h"

enum http_parse_rc {
    HTTP_PARSE_ERROR = -1, /* see http_parse_status()/http_parse_message() */
    HTTP_PARSE_MORE = 0,   /* everything consumed, request not complete */
    HTTP_PARSE_DONE = 1    /* a request is complete (more bytes may remain) */
};

/* Where the current request stands (timeouts key off this). */
enum http_parse_phase {
    HTTP_PHASE_IDLE = 0, /* no byte of a request seen yet */
    HTTP_PHASE_HEAD,     /* request line / headers in progress */
    HTTP_PHASE_BODY,     /* headers complete, body in progress (or done) */
};

struct http_parse_limits {
    size_t max_header_bytes; /* 0 -> 16 KiB */
    size_t max_headers;      /* 0 -> 100, capped at HTTP_MAX_HEADERS_CAP */
    size_t max_body;         /* 0 -> 1 MiB */
};

/* Embedded in the connection; treat the members as private. */
struct http_parse {
    http_parser hp;
    struct http_parse_limits lim;
    struct buf head;      /* target NUL, name NUL value NUL ..., path copy NUL */
    struct buf body;      /* NUL-terminated */
    size_t head_seen;     /* bytes fed while the headers were incomplete */
    size_t trailer_bytes; /* chunked trailers (ignored, but bounded) */
    uint32_t path_off, query_off;
    uint32_t name_off[HTTP_MAX_HEADERS_CAP];
    uint32_t value_off[HTTP_MAX_HEADERS_CAP];
    size_t nhdr;
    int last_cb; /* 0 none, 1 header field, 2 header value */
    enum http_parse_phase phase;
    bool url_done;
    bool complete;        /* paused at the end of a request */
    bool expect_continue; /* asked for 100-continue, not yet taken */
    int err_status;       /* 0, 400, 413, 431 or 505 */
    const char *err_msg;
};

/* Prepares p (no allocation happens until bytes are fed). */
void http_parse_init(struct http_parse *p, const struct http_parse_limits *lim);
/* Frees the parser's buffers; p may be re-initialised afterwards. */
void http_parse_free(struct http_parse *p);

/*
 * Feeds len bytes.  *used is set to the number of bytes consumed (the rest
 * belongs to the next request).
 * Returns HTTP_PARSE_MORE, HTTP_PARSE_DONE (call http_parse_fill(), then
 * http_parse_next()) or HTTP_PARSE_ERROR.  Never reads beyond
 * data[len - 1].
 */
int http_parse_feed(struct http_parse *p, const char *data, size_t len, size_t *used);

/* True once per request when the client sent "Expect: 100-continue", the
 * headers are complete and no body byte has arrived yet: the caller should
 * answer "HTTP/1.1 100 Continue" now. */
bool http_parse_take_continue(struct http_parse *p);

/* After HTTP_PARSE_DONE: fills the parsed parts of req (method, target,
 * path, query, headers, body, keep_alive).  The views stay valid until
 * http_parse_next()/http_parse_free().  Other members are untouched. */
void http_parse_fill(const struct http_parse *p, struct http_request *req);

/* Forgets the completed request and resumes parsing.  Big buffers are
 * released so an idle keep-alive connection holds little memory. */
void http_parse_next(struct http_parse *p);

enum http_parse_phase http_parse_phase(const struct http_parse *p);
/* HTTP minor version of the current request (HTTP/1.x). */
int http_parse_minor(const struct http_parse *p);
/* After an error: the status to answer (400, 413, 431) and a message. */
int http_parse_status(const struct http_parse *p);
const char *http_parse_message(const struct http_parse *p);

/* Maps a libhttp-parser method number to http.h's enum. */
enum http_method http_parse_method(unsigned hp_method);

#endif
