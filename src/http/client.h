/*
 * client.h - asynchronous outbound HTTP requests: libcurl's multi
 * interface driven by the application's libev loop (curl's
 * evhiperfifo example, with fractional-second timers).
 *
 * A request is started with http_client_start() and completes later, from
 * the loop, with one call of its callback: never from inside the start
 * call.  Every request has a whole-request timeout and a cap on the bytes
 * of response body kept; the number of requests in flight is bounded and
 * a start beyond it is refused (ERR_THROTTLED) so callers queue.  Name
 * resolution uses libcurl's threaded resolver, so nothing here blocks the
 * loop.
 *
 * Hostile targets: only http:// and https:// URLs are accepted, redirects
 * are never followed, environment proxies are ignored, and an optional
 * address filter is asked before every connect() (CURLOPT_OPENSOCKETFUNCTION),
 * so a name that resolves to a refused address (DNS rebinding included)
 * is never connected to.
 *
 * Single-threaded: call everything from the loop's thread.  Do not call
 * http_client_free() from a request callback.
 */
#ifndef GP_HTTP_CLIENT_H
#define GP_HTTP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

struct ev_loop;
struct http_client;

#define HTTP_CLIENT_INFLIGHT_DEFAULT 64
#define HTTP_CLIENT_RESPONSE_DEFAULT (1024 * 1024)
#define HTTP_CLIENT_TIMEOUT_DEFAULT  30.0
#define HTTP_CLIENT_URL_MAX          4096
#define HTTP_CLIENT_HEADERS_MAX      32

struct http_client_config {
    size_t max_inflight;    /* 0 -> HTTP_CLIENT_INFLIGHT_DEFAULT */
    size_t max_response;    /* response body bytes kept; 0 -> 1 MiB */
    const char *user_agent; /* NULL -> "GenuProof/1" */
};

/* Asked before each connect: return true to allow the address. */
typedef bool (*http_client_addr_fn)(void *arg, const struct sockaddr *sa, socklen_t len);

struct http_client_req {
    const char *method;         /* NULL -> POST with a body, else GET */
    const char *url;            /* http:// or https:// only */
    const char *const *headers; /* "Name: value" lines (copied) */
    size_t nheaders;            /* at most HTTP_CLIENT_HEADERS_MAX */
    const char *body;           /* copied; may be NULL */
    size_t body_len;
    double timeout_s;            /* whole request (already scaled); <= 0 -> 30 s */
    http_client_addr_fn addr_ok; /* NULL: any address */
    void *addr_arg;
};

struct http_client_res {
    /* 0 when a response was received (any status); else ERR_TIMEOUT,
     * ERR_UNAVAILABLE (resolve/connect/TLS/transfer failure), ERR_TOOBIG
     * (body over max_response), ERR_INVALID (address refused by the
     * filter, or a URL libcurl rejects), ERR_IO. */
    int err;
    long status;      /* HTTP status, 0 without a response */
    const char *body; /* NUL-terminated; valid during the callback only */
    size_t body_len;
    const char *error; /* short text ("" when err is 0) */
    double duration_ms;
};

typedef void (*http_client_cb)(void *arg, const struct http_client_res *res);

/* A client on loop (borrowed).  Initialises libcurl once per process
 * (curl_global_init is not thread-safe: the first client is created
 * before any other thread uses libcurl).  NULL when libcurl fails. */
struct http_client *http_client_new(struct ev_loop *loop, const struct http_client_config *cfg);
/* Aborts every request in flight without calling its callback, then
 * frees the client.  NULL is accepted. */
void http_client_free(struct http_client *c);

/*
 * Starts a request.  On success returns 0 and cb(arg, res) will be called
 * exactly once, later, from the loop.  On error returns ERR_INVALID (URL
 * missing, too long, not http/https, or too many headers), ERR_THROTTLED
 * (max_inflight requests already running) or ERR_IO (libcurl refused),
 * and cb is never called.
 */
int http_client_start(struct http_client *c, const struct http_client_req *req, http_client_cb cb,
                      void *arg);
/* Requests currently in flight. */
size_t http_client_inflight(const struct http_client *c);

#endif
