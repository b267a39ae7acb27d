/*
 * http.h - HTTP/1.1 server on libev (parsing with libhttp-parser).
 *
 * The server owns connections; the application sees complete requests
 * and fills responses.  Requests of a connection are answered in order
 * (keep-alive and pipelining).  Every response produced during one loop
 * iteration is held back until the iteration's commit hook has run (group
 * commit, see http_handler.commit), then all are written at once.
 *
 * Limits (http_server_config) are enforced with JSON errors:
 *   request line + headers > max_header_bytes -> 431, more than
 *   max_headers headers -> 431, body > max_body -> 413, malformed -> 400,
 *   header timeout / slow body -> connection closed (408 when nothing of a
 *   response is pending), idle keep-alive timeout -> closed.  Error
 *   answers close the connection.  A new connection that sends nothing
 *   gets the header timeout; output that makes no progress for
 *   body_timeout closes the connection.
 * All durations are multiplied by GENUPROOF_TIME_SCALE.
 *
 * The server answers by itself: "100 Continue" (Expect: 100-continue),
 * CORS preflights (OPTIONS when cors_origin is set: 204, handle() is not
 * called, done() is), and 503 beyond max_conns.
 *
 * Single-threaded: every function here must be called from the loop's
 * thread.  Never call http_server_free() from handle(), commit(), done()
 * or a stream callback (drain's done_cb may).
 */
#ifndef GP_HTTP_HTTP_H
#define GP_HTTP_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

struct ev_loop;
struct http_server;
struct http_conn;

enum http_method {
    HTTP_M_OTHER = 0,
    HTTP_M_GET,
    HTTP_M_HEAD,
    HTTP_M_POST,
    HTTP_M_PUT,
    HTTP_M_DELETE,
    HTTP_M_OPTIONS,
    HTTP_M_PATCH
};

#define HTTP_MAX_HEADERS_CAP 100

struct http_header {
    const char *name;  /* NUL-terminated view into the connection's buffer */
    const char *value; /* NUL-terminated, surrounding whitespace trimmed */
};

/* A complete request.  All pointers are views valid only during the
 * handle() (and done()) call; copy what must outlive it. */
struct http_request {
    enum http_method method;
    const char *method_name;
    const char *target; /* raw request target, e.g. "/api/x?a=1" */
    const char *path;   /* target up to '?', not decoded */
    const char *query;  /* after '?', "" when none, not decoded */
    struct http_header headers[HTTP_MAX_HEADERS_CAP];
    size_t nheaders;
    const char *body; /* NUL-terminated (the NUL is not part of body_len) */
    size_t body_len;
    char peer_ip[64]; /* socket peer address ("127.0.0.1", "::1") */
    int peer_port;
    bool keep_alive;
    struct http_conn *conn;
    int64_t start_us; /* monotonic time the request was complete */
};

/* Case-insensitive header lookup; first occurrence; NULL when absent. */
const char *http_request_header(const struct http_request *r, const char *name);

/* Response being built by the application. */
struct http_response {
    int status;
    const char *content_type; /* default "application/json" */
    struct buf headers;       /* extra "Name: value\r\n" lines */
    struct buf body;
    bool close; /* close the connection after this response */
    /* Streaming (SSE): when set, the head is sent with no Content-Length
     * (status default 200, content_type default text/event-stream, then
     * body if any), the connection stays open and stream_open(arg, conn)
     * is called once the head has been queued after the commit; the
     * application then writes with http_conn_send() and is told of the
     * close via stream_closed.  stream_closed(arg, conn) is called exactly
     * once for every response the server accepted with stream set, even
     * when stream_open never ran (commit failed, HEAD request, draining);
     * conn is invalid after it returns.  Input on a streaming connection
     * is discarded; the connection has no idle timeout. */
    bool stream;
    void (*stream_open)(void *arg, struct http_conn *c);
    void (*stream_closed)(void *arg, struct http_conn *c);
    void *stream_arg;
    /* Deferred answer (handlers that wait for an outbound request): when
     * handle() sets deferred (and not stream), nothing is sent for this
     * request now and done() is not called yet; the application answers
     * later, from the loop but never from inside handle(), with
     * http_conn_complete().  Meanwhile the connection handles no further
     * request (pipelined input waits) and has no timeout: the application
     * bounds the wait itself.  If the connection dies first (peer reset,
     * server freed), deferred_closed(arg, conn) is called exactly once and
     * conn must not be used afterwards. */
    bool deferred;
    void (*deferred_closed)(void *arg, struct http_conn *c);
    void *deferred_arg;
};

/* Adds a header line (value printf-formatted; CR/LF in it are replaced
 * by spaces). */
void http_response_header(struct http_response *res, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Sets status and a JSON body {"error": msg}. */
void http_response_error(struct http_response *res, int status, const char *msg);
const char *http_status_text(int status);

struct http_handler {
    void *arg;
    /* Called for each complete request; must fill res (status 0 -> 500). */
    void (*handle)(void *arg, struct http_request *req, struct http_response *res);
    /* Called once per loop iteration in which handle() ran, before any of
     * that iteration's responses is written.  A non-zero return means the
     * writes were not made durable: each such response is replaced by
     * 500 {"error":"Internal error"} (stream responses are closed). */
    int (*commit)(void *arg);
    /* Called after each response is queued (access log, metrics). */
    void (*done)(void *arg, const struct http_request *req, const struct http_response *res,
                 size_t bytes, double duration_ms);
    /* Optional, for stores whose commits become durable later (deferred
     * sync): called after a successful commit, returns the ticket at
     * which this iteration's writes, and whatever its requests read,
     * are durable, or 0 when they already are.  The iteration's
     * responses are then held (their connections take no further
     * request) until http_server_durable() reports that ticket. */
    uint64_t (*commit_ticket)(void *arg);
    /* Optional: asked before an iteration's commit; true postpones it, so
     * the requests of the next iterations join the same batch and their
     * responses wait with it (while an earlier commit's sync is still
     * running, committing now would only make a smaller batch wait for the
     * same disk).  The owner must make sure a later iteration comes (the
     * sync's completion wakes the loop) and bound the wait. */
    bool (*commit_later)(void *arg);
    /* Optional: called after a successful commit once its answers are
     * held (or written), for work that should not delay them (the
     * detector's run carried past the commit). */
    void (*after_commit)(void *arg);
    /* Optional, with early writes (http_server_set_early_writes): whether
     * after_commit is going to keep the loop busy.  Only then are the held
     * answers offered to the writer thread; an idle loop writes them as
     * soon as it hears of their sync (NULL: always offer). */
    bool (*busy_after_commit)(void *arg);
};

struct http_server_config {
    const char *listen;       /* "HOST:PORT", "[::1]:PORT"; default 127.0.0.1:8080 */
    size_t max_header_bytes;  /* default 16 KiB */
    size_t max_headers;       /* default 100 */
    size_t max_body;          /* default 1 MiB */
    double header_timeout;    /* default 10 s */
    double idle_timeout;      /* default 60 s */
    double body_timeout;      /* default 30 s */
    size_t max_conns;         /* default 20000 */
    size_t stream_buffer_max; /* per streaming connection, default 256 KiB */
    const char *cors_origin;  /* NULL: no CORS headers */
    bool reuseport;           /* SO_REUSEPORT (serve --workers) */
};

/* Binds and starts accepting on loop.  NULL on error (message in err). */
struct http_server *http_server_new(struct ev_loop *loop, const struct http_server_config *cfg,
                                    const struct http_handler *h, char *err, size_t errlen);
/* The bound port (useful with port 0). */
int http_server_port(const struct http_server *s);
/* Stops accepting (closes the listening sockets); in-flight requests
 * finish and their answers carry "Connection: close"; idle and streaming
 * connections are closed; done_cb runs from the loop (never from inside
 * this call) once no connection is left.  done_cb may free the server. */
void http_server_drain(struct http_server *s, void (*done_cb)(void *arg), void *arg);
void http_server_free(struct http_server *s);
size_t http_server_conn_count(const struct http_server *s);
/* Deferred durability (http_handler.commit_ticket): writes the responses
 * held for tickets up to durable.  With failed, the responses held for
 * later tickets will never be durable: they become 500 {"error":
 * "Internal error"} (streams are closed) and are written too. */
void http_server_durable(struct http_server *s, uint64_t durable, bool failed);
/* Early writes (optional, deferred durability): from now on the held
 * answers are also offered to a writer thread of the server's, which
 * http_server_durable_hook() wakes; a store's sync thread calls that
 * right after a sync, before the loop hears of it (store_set_durable_hook).
 * The loop then spends no system call on the answers the writer got to
 * first, and their clients get them without waiting for a busy loop.
 * What the socket would not take, or the writer did not reach, the loop
 * writes as before at http_server_durable().  Off (the default) nothing
 * changes; turning it off joins the thread. */
void http_server_set_early_writes(struct http_server *s, bool on);
/* The durable hook: has the writer thread write every answer held for a
 * ticket <= ticket (any thread; returns at once). */
void http_server_durable_hook(void *arg, uint64_t ticket);
/* Answers written by the hook so far (metrics, tests). */
uint64_t http_server_early_writes(struct http_server *s);
/* Responses held for durability right now (metrics, tests). */
size_t http_server_held_count(const struct http_server *s);
/* Keep-alive clients answered in the last couple of milliseconds that
 * have not sent their next request yet: requests likely to come at once
 * (http_handler.commit_later's hint for a busy server). */
size_t http_server_expected(struct http_server *s);
/* The handler left writes open for the next commit outside any request
 * (work carried past a commit): the server commits them under the usual
 * rules (http_handler.commit_later), as if a request had been handled. */
void http_server_touch(struct http_server *s);

/* Streaming connections: queues bytes and tries to write them at once.
 * ERR_TOOBIG when the connection's unsent output would exceed
 * stream_buffer_max (the connection is then closed and stream_closed
 * called later from the loop); ERR_IO when the connection is already
 * closing; ERR_INVALID when it is not a streaming connection. */
int http_conn_send(struct http_conn *c, const void *data, size_t n);
/* Answers a deferred request (see http_response.deferred): res is sent
 * like a handler's response, after the next commit; done() is then called
 * with a request holding only method, method_name, path, peer_ip,
 * peer_port and start_us.  res is not kept.  Returns 0; ERR_IO when the
 * connection is already closing (nothing is sent, and deferred_closed,
 * which had not run yet, will not run: the caller frees its state as on
 * success); or ERR_INVALID when c has no deferred request
 * (deferred_closed has run, or it was completed already). */
int http_conn_complete(struct http_conn *c, struct http_response *res);
/* Closes a connection (deferred to the loop's prepare phase). */
void http_conn_close(struct http_conn *c);
/* The peer's numeric IP address ("127.0.0.1", "::1"). */
const char *http_conn_peer(const struct http_conn *c);
/* Bytes queued on the connection and not yet written. */
size_t http_conn_pending(const struct http_conn *c);
/* Sets the socket's kernel send buffer (SO_SNDBUF; Linux doubles it and
 * stops autotuning it).  Streams use it so that a client that stops
 * reading is caught by stream_buffer_max instead of parking megabytes in
 * the kernel.  0 or ERR_IO. */
int http_conn_set_sndbuf(struct http_conn *c, int bytes);

#endif
