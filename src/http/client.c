/*
 * client.c - outbound HTTP over libcurl's multi interface on libev
 * (client.h).
 *
 * libcurl tells us which sockets to watch (CURLMOPT_SOCKETFUNCTION) and
 * when it next needs a call without socket activity
 * (CURLMOPT_TIMERFUNCTION); we map the first onto one ev_io per socket and
 * the second onto the client's single ev_timer, whose delay keeps the
 * milliseconds as a fraction of a second (an integer division would turn
 * every sub-second timeout into 0 s and spin, or into a stall).  Both
 * watcher callbacks hand the event to curl_multi_socket_action() and then
 * collect finished transfers with curl_multi_info_read(); each finished
 * transfer's callback runs there, after the transfer has left the multi
 * handle, so a callback may start new requests.
 *
 * Every transfer gets a whole-request timeout, a response-body cap
 * enforced in the write callback, http/https only, no redirects, no
 * environment proxy, and (when asked) an address filter consulted in the
 * open-socket callback, the last point before connect() where the address
 * actually used is known.
 *
 * Process-wide state: libcurl's global init, done once (pthread_once) and
 * never undone, because curl_global_cleanup() is not safe while another
 * part of the process might still use libcurl.
 */
#include "http/client.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <ev.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/timeutil.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"
#include "util/xalloc.h"

#define container_of(p, type, member) ((type *)(void *)((char *)(p)-offsetof(type, member)))

struct hc_sock {
    ev_io io;
    curl_socket_t fd;
    struct http_client *c;
    struct hc_sock *prev, *next;
};

struct hc_call {
    struct http_client *c;
    CURL *easy;
    struct curl_slist *hdrs;
    struct buf resp;
    http_client_cb cb;
    void *arg;
    http_client_addr_fn addr_ok;
    void *addr_arg;
    bool blocked; /* the address filter refused a connect */
    bool too_big; /* the body passed max_response */
    char blocked_ip[INET6_ADDRSTRLEN];
    int64_t start_us;
    char errbuf[CURL_ERROR_SIZE];
    struct hc_call *prev, *next;
};

struct http_client {
    struct ev_loop *loop;
    CURLM *multi;
    ev_timer timer;
    size_t max_inflight, max_response;
    char *user_agent;
    struct hc_call *calls;
    struct hc_sock *socks;
    size_t inflight;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc = CURLE_FAILED_INIT;

static void curl_init_once(void)
{
    curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* ---- socket and timer plumbing ------------------------------------- */

static void check_done(struct http_client *c);

static void io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    struct hc_sock *sk = container_of(w, struct hc_sock, io);
    struct http_client *c = sk->c;
    int action =
        ((revents & EV_READ) ? CURL_CSELECT_IN : 0) | ((revents & EV_WRITE) ? CURL_CSELECT_OUT : 0);
    int running = 0;

    /* sk may be freed inside (CURL_POLL_REMOVE): do not touch it after. */
    curl_multi_socket_action(c->multi, sk->fd, action, &running);
    check_done(c);
}

static void timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    struct http_client *c = container_of(w, struct http_client, timer);
    int running = 0;

    curl_multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    check_done(c);
}

static void sock_free(struct http_client *c, struct hc_sock *sk)
{
    ev_io_stop(c->loop, &sk->io);
    if (sk->prev)
        sk->prev->next = sk->next;
    else
        c->socks = sk->next;
    if (sk->next)
        sk->next->prev = sk->prev;
    free(sk);
}

/* CURLMOPT_SOCKETFUNCTION: watch s for what curl asks. */
static int multi_sock_cb(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp)
{
    (void)easy;
    struct http_client *c = userp;
    struct hc_sock *sk = socketp;

    if (what == CURL_POLL_REMOVE) {
        if (sk) {
            curl_multi_assign(c->multi, s, NULL);
            sock_free(c, sk);
        }
        return 0;
    }
    if (!sk) {
        sk = xcalloc(1, sizeof *sk);
        sk->c = c;
        sk->fd = s;
        sk->next = c->socks;
        if (c->socks)
            c->socks->prev = sk;
        c->socks = sk;
        ev_init(&sk->io, io_cb);
        curl_multi_assign(c->multi, s, sk);
    } else {
        ev_io_stop(c->loop, &sk->io);
    }
    int events = ((what & CURL_POLL_IN) ? EV_READ : 0) | ((what & CURL_POLL_OUT) ? EV_WRITE : 0);
    sk->fd = s;
    if (events) {
        ev_io_set(&sk->io, s, events);
        ev_io_start(c->loop, &sk->io);
    }
    return 0;
}

/* CURLMOPT_TIMERFUNCTION: -1 removes the timer, else fire after ms. */
static int multi_timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
    (void)multi;
    struct http_client *c = userp;

    ev_timer_stop(c->loop, &c->timer);
    if (timeout_ms >= 0) {
        ev_timer_set(&c->timer, (double)timeout_ms / 1000.0, 0.);
        ev_timer_start(c->loop, &c->timer);
    }
    return 0;
}

/* ---- per-transfer callbacks ------------------------------------------- */

static size_t write_cb(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    struct hc_call *call = userdata;
    size_t n = size * nmemb;

    if (buf_append(&call->resp, ptr, n)) {
        call->too_big = true;
        return 0; /* CURLE_WRITE_ERROR ends the transfer */
    }
    return n;
}

static void addr_text(const struct sockaddr *sa, char *out, size_t n)
{
    out[0] = '\0';
    if (sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, out,
                  (socklen_t)n);
    else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, out,
                  (socklen_t)n);
}

/* CURLOPT_OPENSOCKETFUNCTION: the filter sees the exact address curl is
 * about to connect to (after resolution, for every attempt). */
static curl_socket_t open_cb(void *clientp, curlsocktype purpose, struct curl_sockaddr *a)
{
    struct hc_call *call = clientp;

    if (purpose == CURLSOCKTYPE_IPCXN && call->addr_ok &&
        !call->addr_ok(call->addr_arg, &a->addr, a->addrlen)) {
        call->blocked = true;
        addr_text(&a->addr, call->blocked_ip, sizeof call->blocked_ip);
        return CURL_SOCKET_BAD;
    }
    return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

/* ---- completion -------------------------------------------------------- */

static void call_unlink(struct http_client *c, struct hc_call *call)
{
    if (call->prev)
        call->prev->next = call->next;
    else
        c->calls = call->next;
    if (call->next)
        call->next->prev = call->prev;
    call->prev = call->next = NULL;
}

static void call_free(struct hc_call *call)
{
    if (call->easy)
        curl_easy_cleanup(call->easy);
    curl_slist_free_all(call->hdrs);
    buf_free(&call->resp);
    free(call);
}

/* Maps a finished transfer to a result. */
static void result_of(struct hc_call *call, CURLcode code, struct http_client_res *res, char *text,
                      size_t textlen)
{
    long status = 0;

    curl_easy_getinfo(call->easy, CURLINFO_RESPONSE_CODE, &status);
    res->status = status;
    res->body = buf_cstr(&call->resp);
    res->body_len = call->resp.len;
    res->duration_ms = (double)(time_mono_us() - call->start_us) / 1000.0;
    text[0] = '\0';
    if (code == CURLE_OK) {
        res->err = 0;
    } else if (call->blocked) {
        res->err = ERR_INVALID;
        snprintf(text, textlen, "address refused: %s", call->blocked_ip);
    } else if (code == CURLE_WRITE_ERROR && call->too_big) {
        res->err = ERR_TOOBIG;
        snprintf(text, textlen, "response too large");
    } else if (code == CURLE_OPERATION_TIMEDOUT) {
        res->err = ERR_TIMEOUT;
        snprintf(text, textlen, "timeout");
    } else if (code == CURLE_UNSUPPORTED_PROTOCOL || code == CURLE_URL_MALFORMAT) {
        res->err = ERR_INVALID;
        snprintf(text, textlen, "%s", curl_easy_strerror(code));
    } else if (code == CURLE_OUT_OF_MEMORY) {
        res->err = ERR_IO;
        snprintf(text, textlen, "%s", curl_easy_strerror(code));
    } else {
        res->err = ERR_UNAVAILABLE;
        snprintf(text, textlen, "%s", call->errbuf[0] ? call->errbuf : curl_easy_strerror(code));
    }
    res->error = text;
}

/* Runs the callbacks of every finished transfer. */
static void check_done(struct http_client *c)
{
    CURLMsg *msg;
    int left = 0;

    while ((msg = curl_multi_info_read(c->multi, &left))) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        CURL *easy = msg->easy_handle;
        CURLcode code = msg->data.result; /* msg is invalid after remove */
        struct hc_call *call = NULL;
        struct http_client_res res;
        char text[CURL_ERROR_SIZE + 64];

        curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&call);
        curl_multi_remove_handle(c->multi, easy);
        if (!call) {
            curl_easy_cleanup(easy);
            continue;
        }
        call_unlink(c, call);
        c->inflight--;
        memset(&res, 0, sizeof res);
        result_of(call, code, &res, text, sizeof text);
        call->cb(call->arg, &res);
        call_free(call);
    }
}

/* ---- public API ------------------------------------------------------ */

struct http_client *http_client_new(struct ev_loop *loop, const struct http_client_config *cfg)
{
    static const struct http_client_config defaults = {0};
    struct http_client *c;

    if (!cfg)
        cfg = &defaults;
    pthread_once(&curl_once, curl_init_once);
    if (curl_init_rc != CURLE_OK) {
        log_error("libcurl initialisation failed: %s", curl_easy_strerror(curl_init_rc));
        return NULL;
    }
    c = xcalloc(1, sizeof *c);
    c->loop = loop;
    c->max_inflight = cfg->max_inflight ? cfg->max_inflight : HTTP_CLIENT_INFLIGHT_DEFAULT;
    c->max_response = cfg->max_response ? cfg->max_response : HTTP_CLIENT_RESPONSE_DEFAULT;
    c->user_agent = xstrdup(cfg->user_agent ? cfg->user_agent : "GenuProof/1");
    c->multi = curl_multi_init();
    if (!c->multi) {
        free(c->user_agent);
        free(c);
        return NULL;
    }
    ev_init(&c->timer, timer_cb);
    curl_multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, multi_sock_cb);
    curl_multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
    curl_multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, multi_timer_cb);
    curl_multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
    return c;
}

void http_client_free(struct http_client *c)
{
    if (!c)
        return;
    while (c->calls) {
        struct hc_call *call = c->calls;
        call_unlink(c, call);
        curl_multi_remove_handle(c->multi, call->easy);
        call_free(call);
    }
    curl_multi_cleanup(c->multi);
    while (c->socks)
        sock_free(c, c->socks);
    ev_timer_stop(c->loop, &c->timer);
    free(c->user_agent);
    free(c);
}

size_t http_client_inflight(const struct http_client *c)
{
    return c ? c->inflight : 0;
}

/* True for an http:// or https:// URL of sane length without spaces or
 * control characters (libcurl would refuse those later, less clearly). */
static bool url_acceptable(const char *url)
{
    size_t n;

    if (!url)
        return false;
    n = strnlen(url, HTTP_CLIENT_URL_MAX + 1);
    if (n > HTTP_CLIENT_URL_MAX)
        return false;
    if (strncasecmp(url, "http://", 7) != 0 && strncasecmp(url, "https://", 8) != 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)url[i] <= ' ' || url[i] == 0x7f)
            return false;
    return true;
}

/* Applies the per-transfer options; 0 or ERR_IO. */
static int call_setup(struct http_client *c, struct hc_call *call,
                      const struct http_client_req *req)
{
    CURL *e = call->easy;
    double t = req->timeout_s > 0 ? req->timeout_s : HTTP_CLIENT_TIMEOUT_DEFAULT;
    long timeout_ms = (long)(t * 1000.0);
    const char *method = req->method;
    CURLcode rc = CURLE_OK;

    if (timeout_ms < 1)
        timeout_ms = 1;
    if (!method)
        method = req->body ? "POST" : "GET";
    /* "Expect:" stops curl from waiting for 100-continue on larger bodies. */
    call->hdrs = curl_slist_append(call->hdrs, "Expect:");
    for (size_t i = 0; i < req->nheaders && call->hdrs; i++)
        call->hdrs = curl_slist_append(call->hdrs, req->headers[i]);
    if (!call->hdrs)
        return ERR_IO;

#define SET(opt, val)                                                                              \
    do {                                                                                           \
        if (rc == CURLE_OK)                                                                        \
            rc = curl_easy_setopt(e, opt, val);                                                    \
    } while (0)
    SET(CURLOPT_URL, req->url);
    SET(CURLOPT_PRIVATE, (void *)call);
    SET(CURLOPT_NOSIGNAL, 1L);
    SET(CURLOPT_PROTOCOLS_STR, "http,https");
    SET(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    SET(CURLOPT_FOLLOWLOCATION, 0L);
    SET(CURLOPT_PROXY, ""); /* never an environment proxy */
    SET(CURLOPT_TIMEOUT_MS, timeout_ms);
    SET(CURLOPT_USERAGENT, c->user_agent);
    SET(CURLOPT_HTTPHEADER, call->hdrs);
    SET(CURLOPT_WRITEFUNCTION, write_cb);
    SET(CURLOPT_WRITEDATA, (void *)call);
    SET(CURLOPT_ERRORBUFFER, call->errbuf);
    SET(CURLOPT_OPENSOCKETFUNCTION, open_cb);
    SET(CURLOPT_OPENSOCKETDATA, (void *)call);
    if (req->body) {
        SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
        SET(CURLOPT_COPYPOSTFIELDS, req->body);
        if (strcmp(method, "POST") != 0)
            SET(CURLOPT_CUSTOMREQUEST, method);
    } else if (strcmp(method, "GET") == 0) {
        SET(CURLOPT_HTTPGET, 1L);
    } else if (strcmp(method, "HEAD") == 0) {
        SET(CURLOPT_NOBODY, 1L);
    } else {
        SET(CURLOPT_CUSTOMREQUEST, method);
    }
#undef SET
    return rc == CURLE_OK ? 0 : ERR_IO;
}

int http_client_start(struct http_client *c, const struct http_client_req *req, http_client_cb cb,
                      void *arg)
{
    struct hc_call *call;
    int rc;

    if (!c || !req || !cb || !url_acceptable(req->url) || req->nheaders > HTTP_CLIENT_HEADERS_MAX ||
        (req->nheaders && !req->headers))
        return ERR_INVALID;
    if (c->inflight >= c->max_inflight)
        return ERR_THROTTLED;
    call = xcalloc(1, sizeof *call);
    call->c = c;
    call->cb = cb;
    call->arg = arg;
    call->addr_ok = req->addr_ok;
    call->addr_arg = req->addr_arg;
    buf_init(&call->resp, c->max_response);
    call->easy = curl_easy_init();
    rc = call->easy ? call_setup(c, call, req) : ERR_IO;
    if (rc)
        goto fail;
    call->start_us = time_mono_us();
    /* Adding only arms the timer (multi_timer_cb): the transfer and its
     * callback run later from the loop. */
    if (curl_multi_add_handle(c->multi, call->easy) != CURLM_OK) {
        rc = ERR_IO;
        goto fail;
    }
    call->next = c->calls;
    if (c->calls)
        c->calls->prev = call;
    c->calls = call;
    c->inflight++;
    return 0;
fail:
    call_free(call);
    return rc;
}
