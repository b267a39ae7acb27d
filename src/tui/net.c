/*
 * net.c - the dashboard's connections (net.h): one SSE stream per brand
 * and the REST polls, all on one libcurl multi handle driven by the
 * caller's libev loop.
 *
 * The libcurl glue follows http/client.c (CURLMOPT_SOCKETFUNCTION onto one
 * ev_io per socket, CURLMOPT_TIMERFUNCTION onto one ev_timer with
 * fractional seconds); that client is not reused because it keeps whole
 * bodies and cannot stream or cancel one transfer.
 *
 * libcurl refuses calls on the multi handle from inside its own callbacks,
 * and a sink callback may start requests, so the write callbacks only
 * store bytes: stream bytes go to the stream's input buffer and are parsed
 * (and the sink called) after curl_multi_socket_action() has returned;
 * finished transfers are reported the same way.  Nothing calls the sink
 * from inside libcurl.
 *
 * A stream: CONNECTING (request sent) -> LIVE on the `connected` event ->
 * STALLED when no byte came for 15 s (the transfer is then dropped) ->
 * RETRYING (backoff of net_backoff.h, the server's retry honoured as the
 * real duration it is; the level
 * drops back to the first step after 60 s LIVE) -> CONNECTING ...; an HTTP
 * 4xx other than 408/429 gives ERROR, retried every 60 s.  Entering LIVE
 * runs the reconcile poll (POLL_THREATS) at once; a reconcile that gets
 * no answer, or a 408, 429 or 5xx, is tried again after 5 s instead of
 * its 60 s period.  Every period goes through scaled().
 *
 * Polls: one tick timer checks the due time of every periodic poll (per
 * brand or global) and the stall deadline of every stream.  A poll whose
 * previous request of the same kind (and brand) is still in flight is
 * skipped, so a slow server never piles requests up; on-demand requests
 * are capped at NET_ONDEMAND_MAX in flight.  Response bodies are capped
 * at NET_BODY_MAX (larger -> status 0 "response too large").
 *
 * net_set_brands() may be called from a sink callback: replaced streams
 * are cancelled at once and freed on the next entry from the loop.
 * net_free() must not be called from a sink callback.
 */
#include "tui/net.h"

#include <curl/curl.h>
#include <ev.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/timeutil.h"
#include "tui/net_backoff.h"
#include "tui/sse_parse.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"
#include "util/timescale.h"
#include "util/xalloc.h"

#define container_of(p, type, member) ((type *)(void *)((char *)(p)-offsetof(type, member)))

/* util/err.h has no ERR_DENIED (net.h names it): read-only refusals use
 * ERR_INVALID until the lead adds one. */
#define NET_ERR_DENIED ERR_INVALID

#define NET_BODY_MAX       (4u * 1024u * 1024u) /* a poll's response body */
#define NET_STREAM_IN_MAX  (2u * 1024u * 1024u) /* stream bytes not yet parsed */
#define NET_ERRBODY_MAX    4096u                /* body of a refused stream kept */
#define NET_ONDEMAND_MAX   16                   /* one-shot requests in flight */
#define NET_URL_MAX        4096
#define NET_BRAND_MAX      256 /* longest brand id */
#define NET_BRANDS_MAX     256 /* most streams */
#define NET_STALL_S        15.0
#define NET_LIVE_RESET_S   60.0
#define NET_ERROR_RETRY_S  60.0
#define NET_POLL_TIMEOUT_S 20.0
#define NET_CONNECT_S      10.0
#define NET_TICK_S         0.5
/* A reconcile that failed on the way (no answer, 408, 429, 5xx) is tried
 * again this soon rather than a whole period later: it is what finds the
 * threats a reconnect missed. */
#define NET_RECONCILE_RETRY_S 5.0
/* A threat event brings the brand's figures (stats, scans, analytics)
 * and the ops log forward to this soon, but no sooner than
 * NET_THREAT_GAP_S after their last poll: a storm of alerts costs each of
 * them one poll per gap. */
#define NET_THREAT_REFRESH_S 2.0
#define NET_THREAT_GAP_S     5.0

struct nsock {
    ev_io io;
    curl_socket_t fd;
    struct net *n;
    struct nsock *prev, *next;
};

enum xfer_type { X_POLL, X_ONDEMAND, X_STREAM };

struct stream;

struct xfer {
    struct net *n;
    CURL *easy;
    struct curl_slist *hdrs;
    struct buf body;
    enum xfer_type type;
    enum poll_kind kind;
    size_t b;
    uint64_t tag;
    struct stream *s; /* X_STREAM, and X_POLL of a brand */
    int64_t start_us;
    bool too_big;
    char errbuf[CURL_ERROR_SIZE];
    struct xfer *prev, *next;
};

struct stream {
    struct net *n;
    size_t idx;
    char *brand;
    struct stream_info info;
    struct sse_parser *parser;
    struct xfer *x; /* the open stream transfer, NULL between attempts */
    struct buf in;  /* received, not yet parsed */
    bool status_checked, status_ok, overflow;
    bool ever_live;
    bool dead; /* replaced by net_set_brands; freed at the next loop entry */
    ev_timer retry;
    unsigned fails;         /* consecutive failures (backoff level) */
    long server_retry_ms;   /* -1: none */
    int64_t live_mono;      /* when LIVE was entered, 0 if not LIVE */
    int64_t start_mono;     /* when the attempt started */
    int64_t last_byte_mono; /* 0: none in this attempt */
    bool inflight[POLL_KIND_COUNT];
    int64_t due[POLL_KIND_COUNT];    /* monotonic ms, 0 = now */
    int64_t polled[POLL_KIND_COUNT]; /* when each per-brand poll last started (0: never) */
    struct stream *next_dead;
};

struct net {
    struct ev_loop *loop;
    CURLM *multi;
    ev_timer curl_timer;
    ev_timer tick;
    struct nsock *socks;
    struct xfer *xfers;
    char *url;
    char *auth;
    bool readonly;
    int ops_days;
    struct net_sink sink;
    struct stream **streams;
    size_t nstreams;
    unsigned long gen; /* bumped by net_set_brands */
    struct stream *dead;
    bool started;
    bool g_inflight[POLL_KIND_COUNT];
    int64_t g_due[POLL_KIND_COUNT];
    int64_t g_polled[POLL_KIND_COUNT]; /* when each global poll last started (0: never) */
    unsigned probes_inflight;
    size_t ondemand;
    unsigned long requests;
    uint64_t rng;
};

/* Periods in unscaled seconds; 0 = on demand only. */
static const double poll_period[POLL_KIND_COUNT] = {
    [POLL_THREATS] = 60, [POLL_STATS] = 30,  [POLL_BRAND_SCANS] = 30,    [POLL_ANALYTICS] = 30,
    [POLL_AUDIT] = 30,   [POLL_HEALTH] = 30, [POLL_OPSLOG] = 15,         [POLL_PARTITIONS] = 30,
    [POLL_BRANDS] = 60,  [POLL_PROBE] = 60,  [POLL_BRAND_PRODUCTS] = 60,
};

static bool per_brand(enum poll_kind k)
{
    return k == POLL_THREATS || k == POLL_STATS || k == POLL_BRAND_SCANS || k == POLL_ANALYTICS ||
           k == POLL_BRAND_PRODUCTS;
}

/* The Health view's non-mutating probes; the reply's tag is the index. */
static const char *const probe_paths[] = {"/api/ready", "/api/catalog/categories",
                                          "/api/integrations/journeys"};
#define NPROBES (sizeof probe_paths / sizeof probe_paths[0])

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc = CURLE_FAILED_INIT;

static void curl_init_once(void)
{
    curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static int64_t ms_of(double s)
{
    return (int64_t)(s * 1000.0 + 0.5);
}

/* Uniform in [0, 1) (xorshift64*). */
static double rand01(struct net *n)
{
    n->rng ^= n->rng >> 12;
    n->rng ^= n->rng << 25;
    n->rng ^= n->rng >> 27;
    return (double)((n->rng * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

static void after_curl(struct net *n);
static void reap_dead(struct net *n);
static void stream_connect(struct stream *s);

/* ---- libcurl <-> libev plumbing ------------------------------------ */

static void io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    struct nsock *sk = container_of(w, struct nsock, io);
    struct net *n = sk->n;
    int action =
        ((revents & EV_READ) ? CURL_CSELECT_IN : 0) | ((revents & EV_WRITE) ? CURL_CSELECT_OUT : 0);
    int running = 0;

    reap_dead(n);
    curl_multi_socket_action(n->multi, sk->fd, action, &running); /* may free sk */
    after_curl(n);
}

static void curl_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    struct net *n = container_of(w, struct net, curl_timer);
    int running = 0;

    reap_dead(n);
    curl_multi_socket_action(n->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    after_curl(n);
}

static void sock_free(struct net *n, struct nsock *sk)
{
    ev_io_stop(n->loop, &sk->io);
    if (sk->prev)
        sk->prev->next = sk->next;
    else
        n->socks = sk->next;
    if (sk->next)
        sk->next->prev = sk->prev;
    free(sk);
}

static int multi_sock_cb(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp)
{
    (void)easy;
    struct net *n = userp;
    struct nsock *sk = socketp;

    if (what == CURL_POLL_REMOVE) {
        if (sk) {
            curl_multi_assign(n->multi, s, NULL);
            sock_free(n, sk);
        }
        return 0;
    }
    if (!sk) {
        sk = xcalloc(1, sizeof *sk);
        sk->n = n;
        sk->next = n->socks;
        if (n->socks)
            n->socks->prev = sk;
        n->socks = sk;
        ev_init(&sk->io, io_cb);
        curl_multi_assign(n->multi, s, sk);
    } else {
        ev_io_stop(n->loop, &sk->io);
    }
    int events = ((what & CURL_POLL_IN) ? EV_READ : 0) | ((what & CURL_POLL_OUT) ? EV_WRITE : 0);
    sk->fd = s;
    if (events) {
        ev_io_set(&sk->io, s, events);
        ev_io_start(n->loop, &sk->io);
    }
    return 0;
}

static int multi_timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
    (void)multi;
    struct net *n = userp;

    ev_timer_stop(n->loop, &n->curl_timer);
    if (timeout_ms >= 0) {
        ev_timer_set(&n->curl_timer, (double)timeout_ms / 1000.0, 0.);
        ev_timer_start(n->loop, &n->curl_timer);
    }
    return 0;
}

/* ---- transfers ------------------------------------------------------- */

static void xfer_unlink(struct net *n, struct xfer *x)
{
    if (x->prev)
        x->prev->next = x->next;
    else
        n->xfers = x->next;
    if (x->next)
        x->next->prev = x->prev;
    x->prev = x->next = NULL;
}

static void xfer_free(struct xfer *x)
{
    if (x->easy)
        curl_easy_cleanup(x->easy);
    curl_slist_free_all(x->hdrs);
    buf_free(&x->body);
    free(x);
}

/* Drops a transfer in flight without reporting it (not from a curl callback). */
static void xfer_abort(struct net *n, struct xfer *x)
{
    curl_multi_remove_handle(n->multi, x->easy);
    xfer_unlink(n, x);
    if (x->type == X_ONDEMAND && n->ondemand)
        n->ondemand--;
    xfer_free(x);
}

static size_t body_write_cb(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    struct xfer *x = userdata;
    size_t len = size * nmemb;

    if (buf_append(&x->body, ptr, len)) {
        x->too_big = true;
        return 0; /* CURLE_WRITE_ERROR ends the transfer */
    }
    return len;
}

/* Stream bytes: kept for after_curl(); a non-200 answer's body is kept
 * (bounded) for the error text. */
static size_t stream_write_cb(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    struct xfer *x = userdata;
    struct stream *s = x->s;
    size_t len = size * nmemb;

    if (!s->status_checked) {
        long code = 0;
        curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &code);
        s->status_checked = true;
        s->status_ok = code == 200;
        s->info.http_status = (int)code;
    }
    s->last_byte_mono = time_mono_ms();
    s->info.last_byte_ms = time_now_ms();
    if (!s->status_ok)
        return buf_append(&x->body, ptr, len) ? 0 : len;
    if (buf_append(&s->in, ptr, len)) {
        s->overflow = true;
        return 0;
    }
    return len;
}

/* Percent-encodes s (everything but unreserved characters) onto b. */
static int put_escaped(struct buf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    int rc = 0;

    for (; *s && !rc; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '.' || c == '_' || c == '~') {
            rc = buf_putc(b, (char)c);
        } else {
            rc = buf_putc(b, '%');
            if (!rc)
                rc = buf_putc(b, hex[c >> 4]);
            if (!rc)
                rc = buf_putc(b, hex[c & 15]);
        }
    }
    return rc;
}

/*
 * Creates and adds a transfer of url (method NULL = GET).  On success
 * returns the transfer, already linked and counted; on failure NULL.
 */
static struct xfer *xfer_start(struct net *n, enum xfer_type type, const char *url,
                               const char *method, const char *json_body, const char *const *extra,
                               size_t nextra)
{
    struct xfer *x = xcalloc(1, sizeof *x);
    CURLcode rc = CURLE_OK;
    CURL *e;

    x->n = n;
    x->type = type;
    buf_init(&x->body, type == X_STREAM ? NET_ERRBODY_MAX : NET_BODY_MAX);
    x->easy = e = curl_easy_init();
    if (!e)
        goto fail;
    x->hdrs = curl_slist_append(NULL, "Expect:");
    if (x->hdrs && n->auth)
        x->hdrs = curl_slist_append(x->hdrs, n->auth);
    if (x->hdrs && json_body)
        x->hdrs = curl_slist_append(x->hdrs, "Content-Type: application/json");
    for (size_t i = 0; i < nextra && x->hdrs; i++)
        x->hdrs = curl_slist_append(x->hdrs, extra[i]);
    if (!x->hdrs)
        goto fail;
#define SET(opt, val)                                                                              \
    do {                                                                                           \
        if (rc == CURLE_OK)                                                                        \
            rc = curl_easy_setopt(e, opt, val);                                                    \
    } while (0)
    SET(CURLOPT_URL, url);
    SET(CURLOPT_PRIVATE, (void *)x);
    SET(CURLOPT_NOSIGNAL, 1L);
    SET(CURLOPT_PROTOCOLS_STR, "http,https");
    SET(CURLOPT_FOLLOWLOCATION, 0L);
    SET(CURLOPT_PROXY, "");
    SET(CURLOPT_USERAGENT, "GenuProof-TUI/1");
    SET(CURLOPT_HTTPHEADER, x->hdrs);
    SET(CURLOPT_ERRORBUFFER, x->errbuf);
    SET(CURLOPT_CONNECTTIMEOUT_MS, (long)ms_of(scaled(NET_CONNECT_S)));
    if (type == X_STREAM) {
        SET(CURLOPT_WRITEFUNCTION, stream_write_cb);
        SET(CURLOPT_TCP_KEEPALIVE, 1L);
    } else {
        SET(CURLOPT_WRITEFUNCTION, body_write_cb);
        SET(CURLOPT_TIMEOUT_MS, (long)ms_of(scaled(NET_POLL_TIMEOUT_S)));
    }
    SET(CURLOPT_WRITEDATA, (void *)x);
    if (!method || !strcmp(method, "GET")) {
        SET(CURLOPT_HTTPGET, 1L);
    } else {
        const char *body = json_body ? json_body : "";
        SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
        SET(CURLOPT_COPYPOSTFIELDS, body);
        if (strcmp(method, "POST") != 0)
            SET(CURLOPT_CUSTOMREQUEST, method);
    }
#undef SET
    if (rc != CURLE_OK)
        goto fail;
    x->start_us = time_mono_us();
    if (curl_multi_add_handle(n->multi, e) != CURLM_OK)
        goto fail;
    x->next = n->xfers;
    if (n->xfers)
        n->xfers->prev = x;
    n->xfers = x;
    n->requests++;
    return x;
fail:
    xfer_free(x);
    return NULL;
}

/* ---- streams ------------------------------------------------------------ */

/* Records state st and tells the sink.  Returns false when the sink
 * replaced the stream set (s must not be used for anything else then). */
static bool set_state(struct stream *s, enum stream_state st)
{
    struct net *n = s->n;

    if (s->info.state != st)
        s->info.since_ms = time_now_ms();
    s->info.state = st;
    if (n->sink.on_state)
        n->sink.on_state(n->sink.ud, s->idx, &s->info);
    return !s->dead;
}

static void start_poll(struct net *n, struct stream *s, enum poll_kind k);

/* Waits delay_s (scaled already) in state st before the next attempt. */
static void schedule_retry(struct stream *s, double delay_s, enum stream_state st)
{
    struct net *n = s->n;

    ev_timer_stop(n->loop, &s->retry);
    ev_timer_set(&s->retry, delay_s, 0.);
    ev_timer_start(n->loop, &s->retry);
    s->info.next_retry_ms = time_now_ms() + ms_of(delay_s);
    set_state(s, st);
}

/* The stream transfer is over (x already removed and freed): ERROR or
 * RETRYING with the next delay.  why: text when the transfer failed. */
static void stream_ended(struct stream *s, const char *why, long retry_after_s)
{
    struct net *n = s->n;
    int status = s->info.http_status;
    int64_t now = time_mono_ms();

    if (s->live_mono && now - s->live_mono >= ms_of(scaled(NET_LIVE_RESET_S)))
        s->fails = 0;
    s->live_mono = 0;
    s->status_checked = false;
    buf_reset(&s->in);
    if (status >= 400 && status < 500 && status != 408 && status != 429) {
        snprintf(s->info.error, sizeof s->info.error, "HTTP %d%s%s", status, why ? ": " : "",
                 why ? why : "");
        schedule_retry(s, scaled(NET_ERROR_RETRY_S), ST_ERROR);
        return;
    }
    s->fails++;
    /* the server's retry and Retry-After are real durations: not scaled */
    double d = net_backoff_delay(s->fails, s->server_retry_ms, rand01(n), time_scale());
    if (status == 429 && retry_after_s > 0)
        d = d > (double)retry_after_s ? d : (retry_after_s > 300 ? 300.0 : (double)retry_after_s);
    if (why)
        snprintf(s->info.error, sizeof s->info.error, "%s", why);
    else if (status && status != 200)
        snprintf(s->info.error, sizeof s->info.error, "HTTP %d", status);
    else
        snprintf(s->info.error, sizeof s->info.error, "stream closed by the server");
    schedule_retry(s, d, ST_RETRYING);
}

static void retry_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    struct stream *s = container_of(w, struct stream, retry);

    reap_dead(s->n);
    stream_connect(s);
}

static void stream_connect(struct stream *s)
{
    struct net *n = s->n;
    struct buf url = BUF_INIT(NET_URL_MAX);
    char lei[NET_ID_MAX + 32];
    const char *hdrs[3];
    size_t nh = 0;
    int rc;

    ev_timer_stop(n->loop, &s->retry);
    rc = buf_printf(&url, "%s/api/stream?brandId=", n->url);
    if (!rc)
        rc = put_escaped(&url, s->brand);
    hdrs[nh++] = "Accept: text/event-stream";
    hdrs[nh++] = "Cache-Control: no-cache";
    if (s->info.last_event_id[0]) {
        snprintf(lei, sizeof lei, "Last-Event-ID: %s", s->info.last_event_id);
        hdrs[nh++] = lei;
    }
    s->status_checked = s->status_ok = s->overflow = false;
    s->live_mono = 0;
    s->last_byte_mono = 0;
    s->start_mono = time_mono_ms();
    buf_reset(&s->in);
    sse_parser_reset(s->parser);
    s->info.attempt++;
    s->info.next_retry_ms = 0;
    s->x = rc ? NULL : xfer_start(n, X_STREAM, buf_cstr(&url), NULL, NULL, hdrs, nh);
    buf_free(&url);
    if (!s->x) {
        s->info.http_status = 0;
        stream_ended(s, "cannot start the request", 0);
        return;
    }
    s->x->s = s;
    s->x->b = s->idx;
    set_state(s, ST_CONNECTING);
}

static void go_live(struct stream *s)
{
    struct net *n = s->n;

    s->info.attempt = 0;
    s->info.error[0] = '\0';
    if (s->ever_live)
        s->info.reconnects++;
    s->ever_live = true;
    s->live_mono = time_mono_ms();
    if (!set_state(s, ST_LIVE))
        return;
    s->due[POLL_THREATS] = time_mono_ms() + ms_of(scaled(poll_period[POLL_THREATS]));
    start_poll(n, s, POLL_THREATS);
}

/* Brings a poll due at *due, last started at polled, forward to soon but
 * no sooner than NET_THREAT_GAP_S after polled. */
static void bring_forward(int64_t *due, int64_t polled, int64_t soon)
{
    int64_t at = polled + ms_of(scaled(NET_THREAT_GAP_S));
    if (at < soon)
        at = soon;
    if (at < *due)
        *due = at;
}

/* A threat arrived for s: its brand's figures have moved too (and its
 * product may be new: the list names it), and the detector's
 * classification of it is in the ops log. */
static void threat_refresh(struct stream *s)
{
    static const enum poll_kind kinds[] = {POLL_STATS, POLL_BRAND_SCANS, POLL_ANALYTICS,
                                           POLL_BRAND_PRODUCTS};
    struct net *n = s->n;
    int64_t soon = time_mono_ms() + ms_of(scaled(NET_THREAT_REFRESH_S));

    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        bring_forward(&s->due[kinds[i]], s->polled[kinds[i]], soon);
    if (n->started)
        bring_forward(&n->g_due[POLL_OPSLOG], n->g_polled[POLL_OPSLOG], soon);
}

static int on_sse(const struct sse_event *ev, void *ud)
{
    struct stream *s = ud;
    struct net *n = s->n;
    int64_t now = time_now_ms();

    if (!strcmp(ev->type, "connected")) {
        if (s->info.state != ST_LIVE) {
            go_live(s);
            if (s->dead)
                return -1;
        }
    } else if (!strcmp(ev->type, "threat")) {
        size_t idlen = strlen(ev->last_event_id);
        if (idlen > 0 && idlen < NET_ID_MAX)
            memcpy(s->info.last_event_id, ev->last_event_id, idlen + 1);
        s->info.last_event_ms = now;
        threat_refresh(s);
    } else if (!strcmp(ev->type, "heartbeat")) {
        s->info.last_heartbeat_ms = now;
    }
    if (n->sink.on_event)
        n->sink.on_event(n->sink.ud, s->idx, ev->type, ev->data, ev->data_len, ev->last_event_id);
    return s->dead ? -1 : 0;
}

/* Parses what the write callback stored (outside libcurl).  Returns false
 * when the sink replaced the stream set. */
static bool stream_parse(struct stream *s)
{
    long r;

    if (!s->in.len)
        return !s->dead;
    if (s->info.state == ST_STALLED && !set_state(s, ST_LIVE))
        return false;
    /* The parser copies what it keeps, so the buffer can be reset after. */
    sse_parser_feed(s->parser, s->in.data, s->in.len);
    if (s->dead)
        return false;
    buf_reset(&s->in);
    r = sse_parser_retry_ms(s->parser);
    if (r >= 0)
        s->server_retry_ms = r;
    return true;
}

/* ---- polls ------------------------------------------------------------ */

/* Builds the path+query of poll k (of stream s when per brand). */
static int poll_path(struct net *n, struct stream *s, enum poll_kind k, size_t probe,
                     struct buf *out)
{
    int rc = 0;

    switch (k) {
    case POLL_THREATS:
        rc = buf_puts(out, "/api/threats?brandId=");
        break;
    case POLL_STATS:
        rc = buf_puts(out, "/api/brands?id=");
        break;
    case POLL_BRAND_SCANS:
        rc = buf_puts(out, "/api/brands/scans?brandId=");
        break;
    case POLL_ANALYTICS:
        rc = buf_puts(out, "/api/analytics?brandId=");
        break;
    case POLL_BRAND_PRODUCTS: /* names for the feed, the Chain view's list */
        rc = buf_puts(out, "/api/products/list?brandId=");
        break;
    case POLL_AUDIT:
        return buf_puts(out, "/api/audit?limit=3");
    case POLL_HEALTH:
        return buf_puts(out, "/api/health");
    case POLL_OPSLOG:
        return buf_printf(out, "/api/ops-log?limit=100&days=%d", n->ops_days);
    case POLL_PARTITIONS:
        return buf_puts(out, "/api/admin/partitions");
    case POLL_BRANDS:
        return buf_puts(out, "/api/brands/list");
    case POLL_PROBE:
        return buf_puts(out, probe_paths[probe]);
    default:
        return ERR_INVALID;
    }
    if (!rc)
        rc = put_escaped(out, s->brand);
    if (!rc && k == POLL_THREATS)
        rc = buf_puts(out, "&limit=50");
    if (!rc && k == POLL_BRAND_PRODUCTS)
        rc = buf_puts(out, "&limit=100");
    return rc;
}

static struct xfer *start_path(struct net *n, enum xfer_type type, const char *path,
                               const char *method, const char *body)
{
    struct buf url = BUF_INIT(NET_URL_MAX);
    struct xfer *x = NULL;

    if (!buf_printf(&url, "%s%s", n->url, path))
        x = xfer_start(n, type, buf_cstr(&url), method, body, NULL, 0);
    buf_free(&url);
    return x;
}

/* Starts periodic poll k (per brand for s, else global) unless the same
 * one is in flight. */
static void start_poll(struct net *n, struct stream *s, enum poll_kind k)
{
    size_t nreq = k == POLL_PROBE ? NPROBES : 1;

    if (s ? s->inflight[k] : (k == POLL_PROBE ? n->probes_inflight > 0 : n->g_inflight[k]))
        return;
    for (size_t i = 0; i < nreq; i++) {
        struct buf path = BUF_INIT(NET_URL_MAX);
        struct xfer *x = NULL;
        if (!poll_path(n, s, k, i, &path))
            x = start_path(n, X_POLL, buf_cstr(&path), NULL, NULL);
        buf_free(&path);
        if (!x) {
            log_warn("tui: cannot start poll %d", (int)k);
            continue;
        }
        x->kind = k;
        x->s = s;
        x->b = s ? s->idx : (size_t)-1;
        x->tag = i;
        if (s)
            s->inflight[k] = true;
        else if (k == POLL_PROBE)
            n->probes_inflight++;
        else
            n->g_inflight[k] = true;
    }
}

/* Runs every periodic poll that is due (all of them with force). */
static void run_due_polls(struct net *n, bool force)
{
    int64_t now = time_mono_ms();
    unsigned long gen = n->gen;

    for (int k = 0; k < POLL_KIND_COUNT; k++) {
        if (!poll_period[k] || per_brand((enum poll_kind)k) || !n->started)
            continue;
        if (force || now >= n->g_due[k]) {
            n->g_due[k] = now + ms_of(scaled(poll_period[k]));
            n->g_polled[k] = now;
            start_poll(n, NULL, (enum poll_kind)k);
        }
    }
    for (size_t i = 0; i < n->nstreams && n->gen == gen; i++) {
        struct stream *s = n->streams[i];
        for (int k = 0; k < POLL_KIND_COUNT; k++) {
            if (!poll_period[k] || !per_brand((enum poll_kind)k))
                continue;
            if (force || now >= s->due[k]) {
                s->due[k] = now + ms_of(scaled(poll_period[k]));
                s->polled[k] = now;
                start_poll(n, s, (enum poll_kind)k);
            }
        }
    }
}

/* Drops stream transfers that saw no byte for 15 s (STALLED, then RETRYING). */
static void check_stalls(struct net *n)
{
    int64_t now = time_mono_ms();
    int64_t limit = ms_of(scaled(NET_STALL_S));
    unsigned long gen = n->gen;

    for (size_t i = 0; i < n->nstreams && n->gen == gen; i++) {
        struct stream *s = n->streams[i];
        int64_t ref = s->last_byte_mono ? s->last_byte_mono : s->start_mono;
        if (!s->x || now - ref < limit)
            continue;
        xfer_abort(n, s->x);
        s->x = NULL;
        if (s->info.state == ST_LIVE && !set_state(s, ST_STALLED))
            return;
        stream_ended(s, s->live_mono ? "stalled: no data for 15 s" : "no answer", 0);
    }
}

static void tick_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    struct net *n = container_of(w, struct net, tick);

    reap_dead(n);
    check_stalls(n);
    run_due_polls(n, false);
}

static void start_tick(struct net *n)
{
    double t = scaled(NET_TICK_S);

    if (ev_is_active(&n->tick))
        return;
    if (t < 0.01)
        t = 0.01;
    ev_timer_set(&n->tick, t, t);
    ev_timer_start(n->loop, &n->tick);
}

/* ---- completion -------------------------------------------------------- */

static void error_text(struct xfer *x, CURLcode code, char *out, size_t len)
{
    if (x->too_big)
        snprintf(out, len, "response too large");
    else if (code == CURLE_OPERATION_TIMEDOUT)
        snprintf(out, len, "timeout");
    else
        snprintf(out, len, "%s", x->errbuf[0] ? x->errbuf : curl_easy_strerror(code));
}

static void finish_stream(struct net *n, struct xfer *x, CURLcode code)
{
    struct stream *s = x->s;
    char why[CURL_ERROR_SIZE + 32];
    long status = 0;
    curl_off_t ra = -1;

    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(x->easy, CURLINFO_RETRY_AFTER, &ra);
    s->info.http_status = (int)status;
    s->x = NULL;
    why[0] = '\0';
    if (s->overflow)
        snprintf(why, sizeof why, "stream data not consumed");
    else if (code != CURLE_OK && !(status && status != 200 && code == CURLE_WRITE_ERROR))
        error_text(x, code, why, sizeof why);
    xfer_free(x);
    (void)n;
    stream_ended(s, why[0] ? why : NULL, ra > 0 ? (long)ra : 0);
}

/* Whether a finished reconcile failed in a way worth trying again soon:
 * no answer (refused, timed out, reset) or a transient status.  A 4xx
 * such as 401/403 waits for the next period: retrying cannot help. */
static bool reconcile_failed(CURLcode code, CURL *easy)
{
    long status = 0;
    if (code != CURLE_OK)
        return true;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    return status == 408 || status == 429 || status >= 500;
}

/* Brings the next reconcile of s forward to NET_RECONCILE_RETRY_S. */
static void reconcile_soon(struct stream *s)
{
    int64_t soon = time_mono_ms() + ms_of(scaled(NET_RECONCILE_RETRY_S));
    if (s->due[POLL_THREATS] > soon)
        s->due[POLL_THREATS] = soon;
}

static void finish_poll(struct net *n, struct xfer *x, CURLcode code)
{
    char text[CURL_ERROR_SIZE + 32];
    long status = 0;
    double ms = (double)(time_mono_us() - x->start_us) / 1000.0;
    enum poll_kind k = x->kind;
    size_t b = x->s ? x->s->idx : x->b;
    uint64_t tag = x->tag;

    if (x->type == X_ONDEMAND) {
        if (n->ondemand)
            n->ondemand--;
    } else if (x->s) {
        x->s->inflight[k] = false;
        if (k == POLL_THREATS && reconcile_failed(code, x->easy))
            reconcile_soon(x->s);
    } else if (k == POLL_PROBE) {
        if (n->probes_inflight)
            n->probes_inflight--;
    } else {
        n->g_inflight[k] = false;
    }
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
    if (code == CURLE_OK) {
        if (n->sink.on_reply)
            n->sink.on_reply(n->sink.ud, k, b, (int)status, buf_cstr(&x->body), x->body.len, ms,
                             tag);
    } else {
        error_text(x, code, text, sizeof text);
        if (n->sink.on_reply)
            n->sink.on_reply(n->sink.ud, k, b, 0, text, strlen(text), ms, tag);
    }
    xfer_free(x);
}

/* After libcurl ran: parse stream bytes, then report finished transfers. */
static void after_curl(struct net *n)
{
    unsigned long gen = n->gen;
    CURLMsg *msg;
    int left = 0;

    /* a sink callback may replace the set: parse the new set again */
    for (int pass = 0; pass < 4; pass++) {
        gen = n->gen;
        for (size_t i = 0; i < n->nstreams && n->gen == gen; i++)
            if (!stream_parse(n->streams[i]))
                break;
        if (n->gen == gen)
            break;
    }
    while ((msg = curl_multi_info_read(n->multi, &left))) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        CURL *easy = msg->easy_handle;
        CURLcode code = msg->data.result; /* msg is invalid after remove */
        struct xfer *x = NULL;

        curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&x);
        curl_multi_remove_handle(n->multi, easy);
        if (!x) {
            curl_easy_cleanup(easy);
            continue;
        }
        xfer_unlink(n, x);
        if (x->type == X_STREAM) {
            /* bytes of the last read first */
            if (!stream_parse(x->s)) {
                xfer_free(x);
                continue;
            }
            finish_stream(n, x, code);
        } else {
            finish_poll(n, x, code);
        }
    }
}

/* ---- stream set ---------------------------------------------------------- */

static void stream_kill(struct net *n, struct stream *s)
{
    ev_timer_stop(n->loop, &s->retry);
    for (struct xfer *x = n->xfers, *nx; x; x = nx) {
        nx = x->next;
        if (x->s == s)
            xfer_abort(n, x);
    }
    s->x = NULL;
    s->dead = true;
    s->next_dead = n->dead;
    n->dead = s;
}

static void stream_free(struct stream *s)
{
    sse_parser_free(s->parser);
    buf_free(&s->in);
    free(s->brand);
    free(s);
}

static void reap_dead(struct net *n)
{
    while (n->dead) {
        struct stream *s = n->dead;
        n->dead = s->next_dead;
        stream_free(s);
    }
}

/* ---- public API ------------------------------------------------------- */

struct net *net_new(struct ev_loop *loop, const struct net_config *cfg, const struct net_sink *sink,
                    char *err, size_t errlen)
{
    struct net *n = NULL;
    size_t ulen;

    if (err && errlen)
        err[0] = '\0';
    if (!loop || !cfg || !cfg->url || !sink) {
        if (err)
            snprintf(err, errlen, "missing loop, configuration or sink");
        return NULL;
    }
    ulen = strnlen(cfg->url, NET_URL_MAX);
    if (ulen >= NET_URL_MAX - 512 ||
        (strncasecmp(cfg->url, "http://", 7) != 0 && strncasecmp(cfg->url, "https://", 8) != 0)) {
        if (err)
            snprintf(err, errlen, "the URL must start with http:// or https://");
        return NULL;
    }
    for (size_t i = 0; i < ulen; i++) {
        if ((unsigned char)cfg->url[i] <= ' ' || cfg->url[i] == 0x7f) {
            if (err)
                snprintf(err, errlen, "the URL contains a space or a control character");
            return NULL;
        }
    }
    if (cfg->api_key && (strlen(cfg->api_key) > 1024 || strpbrk(cfg->api_key, "\r\n"))) {
        if (err)
            snprintf(err, errlen, "the API key is too long or contains a line break");
        return NULL;
    }
    pthread_once(&curl_once, curl_init_once);
    if (curl_init_rc != CURLE_OK) {
        if (err)
            snprintf(err, errlen, "libcurl: %s", curl_easy_strerror(curl_init_rc));
        return NULL;
    }
    n = xcalloc(1, sizeof *n);
    n->multi = curl_multi_init();
    if (!n->multi) {
        free(n);
        if (err)
            snprintf(err, errlen, "libcurl: cannot create a multi handle");
        return NULL;
    }
    n->loop = loop;
    n->url = xstrndup(cfg->url, ulen);
    while (ulen > 0 && n->url[ulen - 1] == '/')
        n->url[--ulen] = '\0';
    if (cfg->api_key && cfg->api_key[0]) {
        size_t l = strlen(cfg->api_key) + 32;
        n->auth = xmalloc(l);
        snprintf(n->auth, l, "Authorization: Bearer %s", cfg->api_key);
    }
    n->readonly = cfg->readonly;
    n->ops_days = cfg->ops_days < 1 ? 7 : cfg->ops_days > 31 ? 31 : cfg->ops_days;
    n->sink = *sink;
    n->rng = (uint64_t)time_mono_us() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)n;
    if (!n->rng)
        n->rng = 0x9e3779b97f4a7c15ULL;
    ev_init(&n->curl_timer, curl_timer_cb);
    ev_init(&n->tick, tick_cb);
    curl_multi_setopt(n->multi, CURLMOPT_SOCKETFUNCTION, multi_sock_cb);
    curl_multi_setopt(n->multi, CURLMOPT_SOCKETDATA, n);
    curl_multi_setopt(n->multi, CURLMOPT_TIMERFUNCTION, multi_timer_cb);
    curl_multi_setopt(n->multi, CURLMOPT_TIMERDATA, n);
    return n;
}

void net_free(struct net *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->nstreams; i++)
        stream_kill(n, n->streams[i]);
    free(n->streams);
    reap_dead(n);
    while (n->xfers)
        xfer_abort(n, n->xfers);
    curl_multi_cleanup(n->multi);
    while (n->socks)
        sock_free(n, n->socks);
    ev_timer_stop(n->loop, &n->curl_timer);
    ev_timer_stop(n->loop, &n->tick);
    free(n->url);
    free(n->auth);
    free(n);
}

int net_set_brands(struct net *n, const char *const *brand_ids, size_t count)
{
    struct stream **ns = NULL;
    bool *fresh = NULL;
    unsigned long gen;
    int64_t now;

    if (!n || (count && !brand_ids) || count > NET_BRANDS_MAX)
        return ERR_INVALID;
    for (size_t i = 0; i < count; i++)
        if (!brand_ids[i] || !brand_ids[i][0] ||
            strnlen(brand_ids[i], NET_BRAND_MAX + 1) > NET_BRAND_MAX)
            return ERR_INVALID;
    if (count) {
        ns = xcalloc(count, sizeof *ns);
        fresh = xcalloc(count, sizeof *fresh);
    }
    /* A brand already subscribed keeps its stream (connection, state,
     * Last-Event-ID); only its index may change. */
    for (size_t i = 0; i < count; i++) {
        for (size_t j = 0; j < n->nstreams; j++) {
            struct stream *o = n->streams[j];
            if (o && !strcmp(o->brand, brand_ids[i])) {
                ns[i] = o;
                o->idx = i;
                n->streams[j] = NULL;
                break;
            }
        }
    }
    for (size_t j = 0; j < n->nstreams; j++)
        if (n->streams[j])
            stream_kill(n, n->streams[j]);
    free(n->streams);
    n->gen++;
    now = time_mono_ms();
    for (size_t i = 0; i < count; i++) {
        if (ns[i])
            continue;
        struct stream *s = xcalloc(1, sizeof *s);
        s->n = n;
        s->idx = i;
        s->brand = xstrdup(brand_ids[i]);
        s->parser = sse_parser_new(on_sse, s);
        s->server_retry_ms = -1;
        buf_init(&s->in, NET_STREAM_IN_MAX);
        ev_init(&s->retry, retry_cb);
        s->info.state = ST_CONNECTING;
        s->info.since_ms = time_now_ms();
        /* reconcile on LIVE, then every 60 s; the other polls now */
        s->due[POLL_THREATS] = now + ms_of(scaled(poll_period[POLL_THREATS]));
        ns[i] = s;
        fresh[i] = true;
    }
    n->streams = ns;
    n->nstreams = count;
    gen = n->gen;
    for (size_t i = 0; i < count && n->gen == gen; i++)
        if (fresh[i])
            stream_connect(ns[i]);
    free(fresh);
    if (n->gen == gen)
        run_due_polls(n, false);
    start_tick(n);
    return 0;
}

int net_start(struct net *n)
{
    if (!n)
        return ERR_INVALID;
    if (!n->started) {
        n->started = true;
        memset(n->g_due, 0, sizeof n->g_due);
        run_due_polls(n, false);
    }
    start_tick(n);
    return 0;
}

void net_refresh(struct net *n)
{
    if (n)
        run_due_polls(n, true);
}

void net_set_ops_days(struct net *n, int days)
{
    if (!n)
        return;
    n->ops_days = days < 1 ? 1 : days > 31 ? 31 : days;
    if (n->started) {
        n->g_due[POLL_OPSLOG] = time_mono_ms() + ms_of(scaled(poll_period[POLL_OPSLOG]));
        start_poll(n, NULL, POLL_OPSLOG);
    }
}

const struct stream_info *net_stream(const struct net *n, size_t b)
{
    return n && b < n->nstreams ? &n->streams[b]->info : NULL;
}

size_t net_stream_count(const struct net *n)
{
    return n ? n->nstreams : 0;
}

/* True for a path+query that starts with '/' and has no space or control
 * character. */
static bool path_ok(const char *p)
{
    size_t len;

    if (!p || p[0] != '/')
        return false;
    len = strnlen(p, NET_URL_MAX);
    if (len >= NET_URL_MAX - 64)
        return false;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)p[i] <= ' ' || p[i] == 0x7f)
            return false;
    return true;
}

/* True when query q (after '?', may be NULL) has metadata=true. */
static bool has_metadata(const char *q)
{
    while (q && *q) {
        if (!strncmp(q, "metadata=true", 13) && (q[13] == '\0' || q[13] == '&'))
            return true;
        q = strchr(q, '&');
        if (q)
            q++;
    }
    return false;
}

int net_get(struct net *n, enum poll_kind k, size_t b, const char *path_query, uint64_t tag)
{
    struct buf p = BUF_INIT(NET_URL_MAX);
    struct xfer *x = NULL;
    const char *q;
    int rc;

    if (!n || !path_ok(path_query) || (int)k < 0 || k >= POLL_KIND_COUNT)
        return ERR_INVALID;
    if (n->ondemand >= NET_ONDEMAND_MAX)
        return ERR_THROTTLED;
    rc = buf_puts(&p, path_query);
    /* Product reads never record a scan: verify always carries metadata=true. */
    q = strchr(path_query, '?');
    if (!rc && !strncmp(path_query, "/api/products/verify", 20) &&
        (path_query[20] == '\0' || path_query[20] == '?') && !has_metadata(q ? q + 1 : NULL))
        rc = buf_puts(&p, q ? "&metadata=true" : "?metadata=true");
    if (!rc) {
        x = start_path(n, X_ONDEMAND, buf_cstr(&p), NULL, NULL);
        rc = x ? 0 : ERR_IO;
    }
    buf_free(&p);
    if (rc)
        return rc;
    x->kind = k;
    x->b = b;
    x->tag = tag;
    n->ondemand++;
    return 0;
}

int net_send(struct net *n, const char *method, const char *path, const char *json_body,
             uint64_t tag)
{
    struct xfer *x;

    if (!n || !method || !path_ok(path))
        return ERR_INVALID;
    if (strcmp(method, "POST") && strcmp(method, "PATCH") && strcmp(method, "PUT") &&
        strcmp(method, "DELETE"))
        return ERR_INVALID;
    if (n->readonly)
        return NET_ERR_DENIED;
    if (json_body && strlen(json_body) > NET_BODY_MAX)
        return ERR_TOOBIG;
    if (n->ondemand >= NET_ONDEMAND_MAX)
        return ERR_THROTTLED;
    x = start_path(n, X_ONDEMAND, path, method, json_body ? json_body : "{}");
    if (!x)
        return ERR_IO;
    x->kind = POLL_ACTION;
    x->b = (size_t)-1;
    x->tag = tag;
    n->ondemand++;
    return 0;
}

unsigned long net_requests(const struct net *n)
{
    return n ? n->requests : 0;
}

const char *net_state_name(enum stream_state st)
{
    switch (st) {
    case ST_CONNECTING:
        return "CONNECTING";
    case ST_LIVE:
        return "LIVE";
    case ST_STALLED:
        return "STALLED";
    case ST_RETRYING:
        return "RETRY";
    case ST_ERROR:
        break;
    }
    return "ERROR";
}
