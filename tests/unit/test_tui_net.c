/*
 * test_tui_net.c - the dashboard's connections (tui/net.h) on a private
 * libev loop against a scripted server on loopback (mini_httpd.h), plus
 * the backoff function (tui/net_backoff.h) directly.
 *
 * The server's /api/stream answers according to the current scenario
 * (stream_mode); every request is recorded (method, path, Last-Event-ID,
 * Authorization, Accept, arrival time) so the tests assert what the net
 * layer sent.  Durations run at GENUPROOF_TIME_SCALE 0.02: stall 0.3 s,
 * ERROR retry 1.2 s, backoff 20, 40, 80 ms..., polls 0.3 s / 0.6 s.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ev.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/timeutil.h"
#include "mini_httpd.h"
#include "tui/net.h"
#include "tui/net_backoff.h"
#include "util/err.h"
#include "util/timescale.h"

#define SCALE 0.02

/* ---- the scripted server ----------------------------------------------- */

enum stream_mode {
    SM_HOLD,        /* connected, two threats, heartbeats every 40 ms */
    SM_ONE_DROP,    /* connected, one threat id "id-<conn>", then closes */
    SM_SILENT,      /* connected, then nothing (the connection stays open) */
    SM_403,         /* 403 {"error":"Forbidden"} */
    SM_CLOSE,       /* closes without an answer */
    SM_RETRY_CLOSE, /* "retry: 150", connected, then closes */
    SM_LATE_STORM   /* connected, heartbeats; after 300 ms a threat every 20 ms */
};

#define MAX_REC 1024

struct rec {
    char method[16];
    char path[256];
    char lei[128];
    char auth[128];
    char accept[64];
    int64_t at_ms;
};

static struct {
    pthread_mutex_t mu;
    enum stream_mode mode;
    int stream_conns;
    int ops_active, ops_max_active;
    int ops_delay_ms;
    int threats_fail;   /* that many reconciles answered with threats_status */
    int threats_status; /* 0: closed without an answer */
    size_t nrec;
    struct rec rec[MAX_REC];
    char last_body[256];
} S = {.mu = PTHREAD_MUTEX_INITIALIZER};

static struct mini_httpd *srv;
static char base_url[64];

static bool send_all(int fd, const char *s)
{
    size_t n = strlen(s);
    while (n) {
        ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
        if (w <= 0)
            return false;
        s += w;
        n -= (size_t)w;
    }
    return true;
}

static void sse_head(int fd)
{
    send_all(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                 "Cache-Control: no-cache\r\nConnection: close\r\n\r\n");
}

/* Sleeps ms in small steps; false when the server stops. */
static bool nap(int ms)
{
    int64_t end = time_mono_ms() + ms;
    while (time_mono_ms() < end) {
        if (mini_httpd_stopping(srv))
            return false;
        usleep(5000);
    }
    return !mini_httpd_stopping(srv);
}

static void stream_handler(int fd, enum stream_mode mode, int conn)
{
    char buf[256];

    switch (mode) {
    case SM_403:
        mini_reply(fd, 403, "application/json", "{\"error\":\"Forbidden\"}");
        return;
    case SM_CLOSE:
        return;
    case SM_RETRY_CLOSE:
        sse_head(fd);
        send_all(fd, "retry: 150\n\nevent: connected\ndata: {}\n\n");
        return;
    case SM_ONE_DROP:
        sse_head(fd);
        snprintf(buf, sizeof buf,
                 "event: connected\ndata: {\"brandId\":\"b\"}\n\n"
                 "event: threat\nid: id-%d\ndata: {\"n\":%d}\n\n",
                 conn, conn);
        send_all(fd, buf);
        nap(20);
        return;
    case SM_SILENT:
        sse_head(fd);
        send_all(fd, "event: connected\ndata: {}\n\n");
        while (nap(20)) {
            pthread_mutex_lock(&S.mu);
            bool still = S.mode == SM_SILENT;
            pthread_mutex_unlock(&S.mu);
            if (!still)
                return;
        }
        return;
    case SM_LATE_STORM:
        sse_head(fd);
        if (!send_all(fd, "event: connected\ndata: {\"brandId\":\"b\"}\n\n"))
            return;
        for (int i = 0; i < 6; i++) /* heartbeats keep it from looking stalled */
            if (!nap(50) || !send_all(fd, "event: heartbeat\ndata: {\"ts\":\"now\"}\n\n"))
                return;
        for (int i = 0; nap(20); i++) {
            snprintf(buf, sizeof buf, "event: threat\nid: s-%d\ndata: {\"alertId\":\"s%d\"}\n\n", i,
                     i);
            if (!send_all(fd, buf))
                return;
        }
        return;
    case SM_HOLD:
        sse_head(fd);
        if (!send_all(fd, ": hello\r\n\r\nevent: connected\r\ndata: {\"brandId\":\"b\"}\r\n\r\n"
                          "event: threat\nid: x-1\ndata: {\"alertId\":\"a1\"}\n\n"
                          "event: threat\nid: x-2\ndata: {\"alertId\":\"a2\"}\n\n"))
            return;
        while (nap(40))
            if (!send_all(fd, "event: heartbeat\ndata: {\"ts\":\"now\"}\n\n"))
                return;
        return;
    }
}

static void handler(void *arg, const struct mini_req *r, int fd)
{
    (void)arg;
    enum stream_mode mode;
    int conn = 0, delay = 0, fail_status = 0;
    bool fail = false;
    struct rec rc;

    memset(&rc, 0, sizeof rc);
    snprintf(rc.method, sizeof rc.method, "%s", r->method);
    snprintf(rc.path, sizeof rc.path, "%s", r->path);
    mini_header(r, "Last-Event-ID", rc.lei, sizeof rc.lei);
    mini_header(r, "Authorization", rc.auth, sizeof rc.auth);
    mini_header(r, "Accept", rc.accept, sizeof rc.accept);
    rc.at_ms = time_mono_ms();
    pthread_mutex_lock(&S.mu);
    if (S.nrec < MAX_REC)
        S.rec[S.nrec++] = rc;
    mode = S.mode;
    if (!strncmp(r->path, "/api/stream", 11))
        conn = ++S.stream_conns;
    if (!strcmp(r->method, "POST"))
        snprintf(S.last_body, sizeof S.last_body, "%.200s", r->body);
    if (!strncmp(r->path, "/api/threats", 12) && S.threats_fail > 0) {
        S.threats_fail--;
        fail_status = S.threats_status;
        fail = true;
    }
    if (!strncmp(r->path, "/api/ops-log", 12)) {
        S.ops_active++;
        if (S.ops_active > S.ops_max_active)
            S.ops_max_active = S.ops_active;
        delay = S.ops_delay_ms;
    }
    pthread_mutex_unlock(&S.mu);

    if (conn) {
        stream_handler(fd, mode, conn);
    } else if (!strncmp(r->path, "/api/ops-log", 12)) {
        nap(delay);
        mini_reply(fd, 200, "application/json", "{\"entries\":[]}");
        pthread_mutex_lock(&S.mu);
        S.ops_active--;
        pthread_mutex_unlock(&S.mu);
    } else if (fail && fail_status == 0) {
        return; /* closed without an answer */
    } else if (fail) {
        mini_reply(fd, fail_status, "application/json", "{\"error\":\"Unavailable\"}");
    } else if (!strncmp(r->path, "/api/threats", 12)) {
        mini_reply(fd, 200, "application/json", "{\"threats\":[],\"count\":0}");
    } else if (!strcmp(r->path, "/big")) {
        size_t n = 5u * 1024u * 1024u;
        char *body = malloc(n + 1);
        memset(body, 'x', n);
        body[n] = '\0';
        mini_reply(fd, 200, "text/plain", body);
        free(body);
    } else {
        mini_reply(fd, 200, "application/json", "{\"ok\":true}");
    }
}

static void server_reset(enum stream_mode mode)
{
    usleep(150000); /* requests of the previous test still queued arrive first */
    pthread_mutex_lock(&S.mu);
    S.mode = mode;
    S.stream_conns = 0;
    S.nrec = 0;
    S.ops_active = S.ops_max_active = 0;
    S.ops_delay_ms = 0;
    S.threats_fail = S.threats_status = 0;
    S.last_body[0] = '\0';
    pthread_mutex_unlock(&S.mu);
}

/* Requests whose path starts with prefix (and method, if given). */
static int count_req(const char *method, const char *prefix)
{
    int c = 0;
    pthread_mutex_lock(&S.mu);
    for (size_t i = 0; i < S.nrec; i++)
        if ((!method || !strcmp(S.rec[i].method, method)) &&
            !strncmp(S.rec[i].path, prefix, strlen(prefix)))
            c++;
    pthread_mutex_unlock(&S.mu);
    return c;
}

/* The i-th request (0-based) whose path starts with prefix, copied. */
static bool nth_req(const char *prefix, int i, struct rec *out)
{
    bool found = false;
    pthread_mutex_lock(&S.mu);
    for (size_t k = 0; k < S.nrec && !found; k++)
        if (!strncmp(S.rec[k].path, prefix, strlen(prefix)) && i-- == 0) {
            *out = S.rec[k];
            found = true;
        }
    pthread_mutex_unlock(&S.mu);
    return found;
}

/* ---- the sink ------------------------------------------------------------ */

#define MAX_SEEN 512

struct seen_event {
    size_t b;
    char type[32];
    char id[64];
    char data[64];
};
struct seen_reply {
    enum poll_kind k;
    size_t b;
    int status;
    size_t len;
    char body[64];
    uint64_t tag;
};

struct sink_log {
    size_t nev, nst, nrep;
    struct seen_event ev[MAX_SEEN];
    enum stream_state st[MAX_SEEN];
    struct seen_reply rep[MAX_SEEN];
    struct stream_info last_info;
    /* optional action from a callback */
    struct net *net;
    bool switch_on_threat;
};

static void on_event(void *ud, size_t b, const char *type, const char *data, size_t len,
                     const char *id)
{
    struct sink_log *L = ud;
    (void)len;
    if (L->nev < MAX_SEEN) {
        struct seen_event *e = &L->ev[L->nev++];
        e->b = b;
        snprintf(e->type, sizeof e->type, "%s", type);
        snprintf(e->id, sizeof e->id, "%s", id);
        snprintf(e->data, sizeof e->data, "%s", data);
    }
    if (L->switch_on_threat && !strcmp(type, "threat")) {
        static const char *const one[] = {"other"};
        L->switch_on_threat = false;
        assert_int_equal(net_set_brands(L->net, one, 1), 0);
    }
}

static void on_state(void *ud, size_t b, const struct stream_info *info)
{
    struct sink_log *L = ud;
    (void)b;
    if (L->nst < MAX_SEEN)
        L->st[L->nst++] = info->state;
    L->last_info = *info;
}

static void on_reply(void *ud, enum poll_kind k, size_t b, int status, const char *body, size_t len,
                     double latency_ms, uint64_t tag)
{
    struct sink_log *L = ud;
    (void)latency_ms;
    if (L->nrep < MAX_SEEN) {
        struct seen_reply *r = &L->rep[L->nrep++];
        r->k = k;
        r->b = b;
        r->status = status;
        r->len = len;
        r->tag = tag;
        snprintf(r->body, sizeof r->body, "%.*s", (int)(len < 63 ? len : 63), body);
    }
}

static int count_state(const struct sink_log *L, enum stream_state st)
{
    int c = 0;
    for (size_t i = 0; i < L->nst; i++)
        c += L->st[i] == st;
    return c;
}

static int count_reply(const struct sink_log *L, enum poll_kind k)
{
    int c = 0;
    for (size_t i = 0; i < L->nrep; i++)
        c += L->rep[i].k == k;
    return c;
}

/* ---- loop helpers ----------------------------------------------------------- */

struct fixture {
    struct ev_loop *loop;
    struct net *net;
    struct sink_log *log;
    ev_timer wake;
};

static void wake_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)w;
    (void)revents;
}

static struct fixture *fx_new(bool readonly, const char *key)
{
    struct fixture *f = calloc(1, sizeof *f);
    struct net_config cfg = {.url = base_url, .api_key = key, .readonly = readonly, .ops_days = 3};
    struct net_sink sink;
    char err[128];

    f->log = calloc(1, sizeof *f->log);
    sink = (struct net_sink){
        .ud = f->log, .on_event = on_event, .on_state = on_state, .on_reply = on_reply};
    f->loop = ev_loop_new(EVFLAG_AUTO);
    assert_non_null(f->loop);
    ev_timer_init(&f->wake, wake_cb, 0.01, 0.01);
    ev_timer_start(f->loop, &f->wake);
    f->net = net_new(f->loop, &cfg, &sink, err, sizeof err);
    assert_non_null(f->net);
    f->log->net = f->net;
    return f;
}

static void fx_free(struct fixture *f)
{
    net_free(f->net);
    ev_timer_stop(f->loop, &f->wake);
    /* nothing of the net layer may remain on the loop */
    ev_run(f->loop, EVRUN_NOWAIT);
    ev_loop_destroy(f->loop);
    free(f->log);
    free(f);
}

/* Runs the loop for s seconds. */
static void run_for(struct fixture *f, double s)
{
    int64_t end = time_mono_ms() + (int64_t)(s * 1000);
    while (time_mono_ms() < end)
        ev_run(f->loop, EVRUN_ONCE);
}

/* Runs the loop until pred(f) or timeout; returns pred's last value. */
static bool run_until(struct fixture *f, bool (*pred)(struct fixture *), double timeout_s)
{
    int64_t end = time_mono_ms() + (int64_t)(timeout_s * 1000);
    while (!pred(f) && time_mono_ms() < end)
        ev_run(f->loop, EVRUN_ONCE);
    return pred(f);
}

/* ---- backoff ------------------------------------------------------------------- */

static void test_backoff_sequence(void **state)
{
    (void)state;
    static const double want[] = {1, 2, 4, 8, 16, 30, 30, 30};
    for (unsigned i = 0; i < 8; i++)
        assert_float_equal(net_backoff_delay(i + 1, -1, 0.5, 1), want[i], 1e-9);
    assert_float_equal(net_backoff_delay(0, -1, 0.5, 1), 1.0, 1e-9);
    assert_float_equal(net_backoff_delay(1000, -1, 0.5, 1), 30.0, 1e-9);
    /* jitter bounds: -20 % .. +20 % */
    assert_float_equal(net_backoff_delay(3, -1, 0.0, 1), 3.2, 1e-9);
    assert_true(net_backoff_delay(3, -1, 0.999999, 1) < 4.8 + 1e-9);
    assert_true(net_backoff_delay(3, -1, 0.999999, 1) > 4.79);
    unsigned seed = 7;
    double lo = 1e9, hi = 0;
    for (int i = 0; i < 2000; i++) {
        double u = (double)rand_r(&seed) / ((double)RAND_MAX + 1.0);
        double d = net_backoff_delay(5, -1, u, 1);
        assert_true(d >= 16 * 0.8 - 1e-9 && d <= 16 * 1.2 + 1e-9);
        lo = d < lo ? d : lo;
        hi = d > hi ? d : hi;
    }
    assert_true(lo < 13.5 && hi > 18.5); /* the jitter really spreads */
    /* out-of-range u means no jitter */
    assert_float_equal(net_backoff_delay(2, -1, 1.5, 1), 2.0, 1e-9);
    assert_float_equal(net_backoff_delay(2, -1, -1, 1), 2.0, 1e-9);
    /* the server's retry raises the delay, never lowers it; capped at 300 s */
    assert_float_equal(net_backoff_delay(1, 3000, 0.5, 1), 3.0, 1e-9);
    assert_float_equal(net_backoff_delay(5, 3000, 0.5, 1), 16.0, 1e-9);
    assert_float_equal(net_backoff_delay(1, 86400000L, 0.5, 1), 300.0, 1e-9);
    assert_float_equal(net_backoff_delay(1, 0, 0.5, 1), 1.0, 1e-9);
    /* the table scales with GENUPROOF_TIME_SCALE, the server's retry does not */
    assert_float_equal(net_backoff_delay(4, -1, 0.5, 0.05), 0.4, 1e-9);
    assert_float_equal(net_backoff_delay(9, -1, 0.5, 0.05), 1.5, 1e-9);
    assert_float_equal(net_backoff_delay(1, 150, 0.5, 0.05), 0.15, 1e-9);
    assert_float_equal(net_backoff_delay(1, 150, 0.0, 0.05), 0.12, 1e-9);
    assert_float_equal(net_backoff_delay(2, -1, 0.5, 0), 2.0, 1e-9);
}

/* ---- streams ------------------------------------------------------------------- */

static bool has_two_threats_and_heartbeat(struct fixture *f)
{
    int threats = 0, hb = 0;
    for (size_t i = 0; i < f->log->nev; i++) {
        threats += !strcmp(f->log->ev[i].type, "threat");
        hb += !strcmp(f->log->ev[i].type, "heartbeat");
    }
    return threats >= 2 && hb >= 1 && count_reply(f->log, POLL_THREATS) >= 1;
}

static void test_live_events_in_order(void **state)
{
    (void)state;
    server_reset(SM_HOLD);
    struct fixture *f = fx_new(false, "k123");
    static const char *const brands[] = {"b one"};
    struct rec r;

    assert_int_equal(net_stream_count(f->net), 0);
    assert_int_equal(net_set_brands(f->net, brands, 1), 0);
    assert_int_equal(net_stream_count(f->net), 1);
    assert_null(net_stream(f->net, 1));
    assert_true(run_until(f, has_two_threats_and_heartbeat, 5));
    const struct stream_info *info = net_stream(f->net, 0);
    assert_int_equal(info->state, ST_LIVE);
    assert_int_equal(info->http_status, 200);
    assert_string_equal(info->last_event_id, "x-2");
    assert_true(info->last_heartbeat_ms > 0 && info->last_byte_ms > 0 && info->last_event_ms > 0);
    assert_int_equal(info->reconnects, 0);
    /* states: CONNECTING then LIVE */
    assert_true(f->log->nst >= 2);
    assert_int_equal(f->log->st[0], ST_CONNECTING);
    assert_int_equal(f->log->st[1], ST_LIVE);
    /* events in wire order, with their ids */
    assert_string_equal(f->log->ev[0].type, "connected");
    assert_string_equal(f->log->ev[1].type, "threat");
    assert_string_equal(f->log->ev[1].id, "x-1");
    assert_string_equal(f->log->ev[1].data, "{\"alertId\":\"a1\"}");
    assert_string_equal(f->log->ev[2].type, "threat");
    assert_string_equal(f->log->ev[2].id, "x-2");
    assert_string_equal(f->log->ev[3].type, "heartbeat");
    /* the request: encoded brand, SSE accept, key, no Last-Event-ID the first time */
    assert_true(nth_req("/api/stream", 0, &r));
    assert_string_equal(r.path, "/api/stream?brandId=b%20one");
    assert_string_equal(r.accept, "text/event-stream");
    assert_string_equal(r.auth, "Bearer k123");
    assert_string_equal(r.lei, "");
    /* reconcile on connect */
    assert_true(nth_req("/api/threats", 0, &r));
    assert_string_equal(r.path, "/api/threats?brandId=b%20one&limit=50");
    for (size_t i = 0; i < f->log->nrep; i++)
        if (f->log->rep[i].k == POLL_THREATS) {
            assert_int_equal(f->log->rep[i].b, 0);
            assert_int_equal(f->log->rep[i].status, 200);
        }
    assert_true(net_requests(f->net) >= 2);
    fx_free(f);
}

static bool three_lives(struct fixture *f)
{
    return count_state(f->log, ST_LIVE) >= 3 && count_reply(f->log, POLL_THREATS) >= 3;
}

static void test_reconnect_sends_latest_id(void **state)
{
    (void)state;
    server_reset(SM_ONE_DROP);
    struct fixture *f = fx_new(false, NULL);
    static const char *const brands[] = {"b"};
    struct rec r;

    assert_int_equal(net_set_brands(f->net, brands, 1), 0);
    assert_true(run_until(f, three_lives, 5));
    /* each connection resumes from the latest threat of the previous one */
    assert_true(nth_req("/api/stream", 0, &r));
    assert_string_equal(r.lei, "");
    assert_string_equal(r.auth, "");
    assert_true(nth_req("/api/stream", 1, &r));
    assert_string_equal(r.lei, "id-1");
    assert_true(nth_req("/api/stream", 2, &r));
    assert_string_equal(r.lei, "id-2");
    assert_true(count_state(f->log, ST_RETRYING) >= 2);
    assert_true(net_stream(f->net, 0)->reconnects >= 2);
    /* one reconcile per LIVE */
    assert_true(count_req("GET", "/api/threats?brandId=b&limit=50") >= 3);
    fx_free(f);
}

static bool stalled_and_back(struct fixture *f)
{
    return count_state(f->log, ST_STALLED) >= 1 && count_req(NULL, "/api/stream") >= 2;
}

static void test_stalled_after_silence(void **state)
{
    (void)state;
    server_reset(SM_SILENT);
    struct fixture *f = fx_new(false, NULL);
    static const char *const brands[] = {"b"};
    int64_t t0 = time_mono_ms();

    assert_int_equal(net_set_brands(f->net, brands, 1), 0);
    assert_true(run_until(f, stalled_and_back, 5));
    /* not before 15 s scaled (0.3 s) */
    assert_true(time_mono_ms() - t0 >= 280);
    /* LIVE -> STALLED -> RETRYING -> CONNECTING */
    size_t i = 0;
    while (i < f->log->nst && f->log->st[i] != ST_STALLED)
        i++;
    assert_true(i > 0 && i + 2 < f->log->nst + 1);
    assert_int_equal(f->log->st[i - 1], ST_LIVE);
    assert_int_equal(f->log->st[i + 1], ST_RETRYING);
    server_reset(SM_HOLD); /* lets the silent handler return */
    fx_free(f);
}

static bool in_error(struct fixture *f)
{
    return count_state(f->log, ST_ERROR) >= 1;
}

static bool two_errors(struct fixture *f)
{
    return count_state(f->log, ST_ERROR) >= 2;
}

static void test_error_on_403_retried_later(void **state)
{
    (void)state;
    server_reset(SM_403);
    struct fixture *f = fx_new(false, NULL);
    static const char *const brands[] = {"b"};

    assert_int_equal(net_set_brands(f->net, brands, 1), 0);
    assert_true(run_until(f, in_error, 3));
    const struct stream_info *info = net_stream(f->net, 0);
    int64_t t_err = time_mono_ms();
    assert_int_equal(info->state, ST_ERROR);
    assert_int_equal(info->http_status, 403);
    assert_non_null(strstr(info->error, "403"));
    /* retried after 60 s scaled (1.2 s), not on the backoff schedule */
    int64_t wait = info->next_retry_ms - info->since_ms;
    assert_true(wait >= 1100 && wait <= 1300);
    run_for(f, 0.5);
    assert_int_equal(count_req(NULL, "/api/stream"), 1);
    assert_true(run_until(f, two_errors, 3));
    assert_true(time_mono_ms() - t_err >= 1000);
    assert_int_equal(count_req(NULL, "/api/stream"), 2);
    fx_free(f);
}

static bool five_conns(struct fixture *f)
{
    (void)f;
    return count_req(NULL, "/api/stream") >= 5;
}

static void test_backoff_schedule_on_the_wire(void **state)
{
    (void)state;
    server_reset(SM_CLOSE);
    struct fixture *f = fx_new(false, NULL);
    static const char *const brands[] = {"b"};
    struct rec r[5];

    assert_int_equal(net_set_brands(f->net, brands, 1), 0);
    assert_true(run_until(f, five_conns, 5));
    for (int i = 0; i < 5; i++)
        assert_true(nth_req("/api/stream", i, &r[i]));
    /* gaps follow 1, 2, 4, 8 s * 0.02 with -20 % jitter at least */
    static const double step[] = {20, 40, 80, 160};
    int64_t total = 0;
    for (int i = 0; i < 4; i++) {
        int64_t gap = r[i + 1].at_ms - r[i].at_ms;
        assert_true(gap >= (int64_t)(step[i] * 0.8) - 2);
        total += gap;
    }
    assert_true(total < 2000);
    const struct stream_info *info = net_stream(f->net, 0);
    assert_true(info->attempt >= 5);
    assert_int_equal(info->reconnects, 0);
    fx_free(f);
}

static bool two_conns(struct fixture *f)
{
    (void)f;
    return count_req(NULL, "/api/stream") >= 2;
}

static void test_server_retry_honoured(void **state)
{
    (void)state;
    server_reset(SM_RETRY_CLOSE);
    struct fixture *f = fx_new(false, NULL);
    static const char *const brands[] = {"b"};
    struct rec a, b;

    assert_int_equal(net_set_brands(f->net, brands, 1), 0);
    assert_true(run_until(f, two_conns, 5));
    assert_true(nth_req("/api/stream", 0, &a));
    assert_true(nth_req("/api/stream", 1, &b));
    /* retry: 150 is a real duration (not scaled again): 120 ms at least
     * (-20 %), not the first step's 20 ms */
    assert_true(b.at_ms - a.at_ms >= 118);
    fx_free(f);
}

/* ---- polls ---------------------------------------------------------------------- */

static int refresh_h0, refresh_s0, refresh_p0;

static bool refreshed(struct fixture *f)
{
    (void)f;
    return count_req(NULL, "/api/health") > refresh_h0 &&
           count_req(NULL, "/api/brands?id=b") > refresh_s0 &&
           count_req(NULL, "/api/admin/partitions") > refresh_p0;
}

static bool days_changed(struct fixture *f)
{
    (void)f;
    return count_req(NULL, "/api/ops-log?limit=100&days=31") >= 1;
}

static void test_poll_periods_and_refresh(void **state)
{
    (void)state;
    server_reset(SM_HOLD);
    struct fixture *f = fx_new(false, NULL);
    static const char *const brands[] = {"b"};
    struct rec r;

    assert_int_equal(net_set_brands(f->net, brands, 1), 0);
    /* per-brand polls start with the brands, global ones only with net_start */
    run_for(f, 0.1);
    assert_int_equal(count_req(NULL, "/api/brands?id=b"), 1);
    assert_int_equal(count_req(NULL, "/api/brands/scans?brandId=b"), 1);
    assert_int_equal(count_req(NULL, "/api/analytics?brandId=b"), 1);
    /* the product names of the feed */
    assert_int_equal(count_req(NULL, "/api/products/list?brandId=b&limit=100"), 1);
    assert_int_equal(count_req(NULL, "/api/health"), 0);
    assert_int_equal(net_start(f->net), 0);
    run_for(f, 1.45);
    /* 30 s -> 0.6 s: started at 0 and 0.6 (and maybe 1.2) */
    int health = count_req(NULL, "/api/health");
    assert_true(health >= 2 && health <= 3);
    /* 15 s -> 0.3 s */
    int ops = count_req(NULL, "/api/ops-log");
    assert_true(ops >= 4 && ops <= 6);
    assert_true(nth_req("/api/ops-log", 0, &r));
    assert_string_equal(r.path, "/api/ops-log?limit=100&days=3");
    assert_true(count_req(NULL, "/api/brands?id=b") >= 2);
    assert_true(count_req(NULL, "/api/audit?limit=3") >= 2);
    assert_true(count_req(NULL, "/api/admin/partitions") >= 2);
    /* 60 s -> 1.2 s */
    int blist = count_req(NULL, "/api/brands/list");
    assert_true(blist >= 1 && blist <= 2);
    assert_true(count_req(NULL, "/api/ready") >= 1);
    assert_true(count_reply(f->log, POLL_HEALTH) >= 2);
    for (size_t i = 0; i < f->log->nrep; i++)
        if (f->log->rep[i].k == POLL_HEALTH)
            assert_int_equal(f->log->rep[i].b, (size_t)-1);
    /* the reconcile also repeats every 60 s -> 1.2 s (once on LIVE, once more) */
    assert_true(count_req(NULL, "/api/threats") >= 2);

    /* R / F5: every poll now */
    run_for(f, 0.05);
    int h0 = count_req(NULL, "/api/health"), s0 = count_req(NULL, "/api/brands?id=b");
    int p0 = count_req(NULL, "/api/admin/partitions");
    refresh_h0 = h0;
    refresh_s0 = s0;
    refresh_p0 = p0;
    net_refresh(f->net);
    assert_true(run_until(f, refreshed, 3));

    /* days change refetches the ops log with the new value */
    net_set_ops_days(f->net, 40);
    assert_true(run_until(f, days_changed, 3));
    assert_int_equal(count_req(NULL, "/api/ops-log?limit=100&days=31"), 1);
    fx_free(f);
}

/* A threat brings the brand's figures and the ops log forward (2 s -> 40
 * ms) instead of their 30 s (0.6 s) and 15 s (0.3 s) periods; a storm of
 * them polls each at most every 5 s (0.1 s). */
static void test_threat_refreshes_figures(void **state)
{
    (void)state;
    static const char *const brands[] = {"b"};
    struct rec r0, r1;

    server_reset(SM_LATE_STORM);
    struct fixture *f = fx_new(false, NULL);
    assert_int_equal(net_set_brands(f->net, brands, 1), 0);
    assert_int_equal(net_start(f->net), 0);
    run_for(f, 1.5);
    assert_true(nth_req("/api/stream", 0, &r0));
    int64_t t_stream = r0.at_ms;
    assert_true(nth_req("/api/brands?id=b", 0, &r0));
    assert_true(nth_req("/api/brands?id=b", 1, &r1));
    int64_t gap = r1.at_ms - r0.at_ms, after = r1.at_ms - t_stream;
    print_message("stats polls at +%lld and +%lld ms\n", (long long)(r0.at_ms - t_stream),
                  (long long)after);
    /* the first threat comes 300 ms after connect */
    assert_true(after >= 300 && gap < 560);
    assert_true(nth_req("/api/brands/scans?brandId=b", 1, &r1) && r1.at_ms - t_stream < 560);
    assert_true(nth_req("/api/analytics?brandId=b", 1, &r1) && r1.at_ms - t_stream < 560);
    /* a new product's name: the list is read again too (its period is 1.2 s) */
    assert_true(nth_req("/api/products/list?brandId=b", 1, &r1) && r1.at_ms - t_stream < 560);
    /* 1.2 s of storm: a poll of each per 0.1 s at most, not one per
     * threat (60); their periods alone would make 3 and 5 in 1.5 s */
    int n = count_req(NULL, "/api/brands?id=b");
    print_message("in 1.5 s: %d stats polls, %d ops-log polls\n", n,
                  count_req(NULL, "/api/ops-log"));
    assert_true(n >= 6 && n <= 16);
    n = count_req(NULL, "/api/ops-log");
    assert_true(n >= 9 && n <= 18);
    fx_free(f);
}

/* Threats requests (reconciles) seen so far, with the time of the i-th. */
static int64_t threats_at(int i)
{
    struct rec r;
    return nth_req("/api/threats", i, &r) ? r.at_ms : -1;
}

static bool two_reconciles(struct fixture *f)
{
    (void)f;
    return count_req(NULL, "/api/threats") >= 2;
}

/* A reconcile that fails on the way (no answer, 503) is tried again after
 * 5 s (0.1 s here), not a period (60 s, 1.2 s here) later; a 403 is not. */
static void test_failed_reconcile_retried_soon(void **state)
{
    (void)state;
    static const char *const brands[] = {"b"};
    static const int statuses[] = {0, 503};

    for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++) {
        server_reset(SM_HOLD);
        pthread_mutex_lock(&S.mu);
        S.threats_fail = 1;
        S.threats_status = statuses[i];
        pthread_mutex_unlock(&S.mu);
        struct fixture *f = fx_new(false, NULL);
        assert_int_equal(net_set_brands(f->net, brands, 1), 0);
        assert_true(run_until(f, two_reconciles, 1.0));
        int64_t gap = threats_at(1) - threats_at(0);
        /* 0.1 s and a tick (25 ms at most); the period would be 1.2 s */
        assert_true(gap >= 90 && gap < 600);
        /* the retry's answer reached the sink as a reply */
        run_for(f, 0.05);
        bool ok = false;
        for (size_t k = 0; k < f->log->nrep; k++)
            ok |= f->log->rep[k].k == POLL_THREATS && f->log->rep[k].status == 200;
        assert_true(ok);
        fx_free(f);
    }

    /* 403: the next reconcile waits for the period */
    server_reset(SM_HOLD);
    pthread_mutex_lock(&S.mu);
    S.threats_fail = 100;
    S.threats_status = 403;
    pthread_mutex_unlock(&S.mu);
    struct fixture *f = fx_new(false, NULL);
    assert_int_equal(net_set_brands(f->net, brands, 1), 0);
    run_for(f, 0.8);
    assert_int_equal(count_req(NULL, "/api/threats"), 1);
    fx_free(f);
}

static void test_no_pileup_when_slow(void **state)
{
    (void)state;
    /* let late requests of the previous test drain first */
    usleep(300000);
    server_reset(SM_HOLD);
    pthread_mutex_lock(&S.mu);
    /* at scale 0.1: period 1.5 s, timeout 2 s; the answer takes 1.7 s */
    S.ops_delay_ms = 1700;
    pthread_mutex_unlock(&S.mu);
    time_scale_set(0.1);
    struct fixture *f = fx_new(false, NULL);

    assert_int_equal(net_start(f->net), 0);
    run_for(f, 0.5);
    net_refresh(f->net);
    net_refresh(f->net);
    run_for(f, 3.0);
    time_scale_set(SCALE);
    pthread_mutex_lock(&S.mu);
    int max_active = S.ops_max_active;
    pthread_mutex_unlock(&S.mu);
    if (max_active != 1)
        for (size_t i = 0; i < f->log->nrep; i++)
            print_message("reply k=%d status=%d body=%s\n", (int)f->log->rep[i].k,
                          f->log->rep[i].status, f->log->rep[i].body);
    assert_int_equal(max_active, 1);
    /* at 0 and when due after the first answer (3 s); never during one */
    assert_int_equal(count_req(NULL, "/api/ops-log"), 2);
    fx_free(f);
}

static bool got_reply_kind(struct fixture *f, enum poll_kind k)
{
    return count_reply(f->log, k) >= 1;
}

static bool got_action(struct fixture *f)
{
    return got_reply_kind(f, POLL_ACTION);
}

static bool got_product(struct fixture *f)
{
    return count_reply(f->log, POLL_PRODUCT) >= 2;
}

static void test_readonly_and_actions(void **state)
{
    (void)state;
    server_reset(SM_HOLD);
    struct fixture *f = fx_new(true, NULL);

    assert_int_not_equal(net_send(f->net, "POST", "/api/products/recall", "{\"a\":1}", 1), 0);
    assert_int_not_equal(net_send(f->net, "PATCH", "/api/threats/resolve", "{}", 1), 0);
    run_for(f, 0.2);
    assert_int_equal(count_req("POST", "/"), 0);
    assert_int_equal(count_req("PATCH", "/"), 0);
    assert_int_equal(net_requests(f->net), 0);
    fx_free(f);

    f = fx_new(false, "k");
    assert_int_equal(net_send(f->net, "GET", "/api/x", NULL, 1), ERR_INVALID);
    assert_int_equal(net_send(f->net, "POST", "api/x", NULL, 1), ERR_INVALID);
    assert_int_equal(net_send(f->net, "POST", "/api/products/recall", "{\"reason\":\"r\"}", 42), 0);
    assert_true(run_until(f, got_action, 3));
    assert_int_equal(count_req("POST", "/api/products/recall"), 1);
    assert_string_equal(S.last_body, "{\"reason\":\"r\"}");
    assert_int_equal(f->log->rep[0].k, POLL_ACTION);
    assert_int_equal(f->log->rep[0].tag, 42);
    assert_int_equal(f->log->rep[0].status, 200);
    fx_free(f);
}

static void test_verify_always_with_metadata(void **state)
{
    (void)state;
    server_reset(SM_HOLD);
    struct fixture *f = fx_new(false, NULL);

    assert_int_equal(net_get(f->net, POLL_PRODUCT, 0, "/api/products/verify?productId=p1", 7), 0);
    assert_int_equal(
        net_get(f->net, POLL_PRODUCT, 0, "/api/products/verify?productId=p2&metadata=true", 8), 0);
    assert_int_equal(net_get(f->net, POLL_PRODUCT, 0, "no-slash", 9), ERR_INVALID);
    assert_int_equal(net_get(f->net, POLL_PRODUCT, 0, "/a b", 9), ERR_INVALID);
    assert_true(run_until(f, got_product, 3));
    assert_int_equal(count_req(NULL, "/api/products/verify"), 2);
    assert_int_equal(count_req(NULL, "/api/products/verify?productId=p1&metadata=true"), 1);
    assert_int_equal(count_req(NULL, "/api/products/verify?productId=p2&metadata=true"), 1);
    assert_int_equal(count_req(NULL, "/api/products/verify?productId=p2&metadata=true&"), 0);
    fx_free(f);
}

static bool got_big(struct fixture *f)
{
    return got_reply_kind(f, POLL_PRODUCT_EVENTS);
}

static void test_body_cap(void **state)
{
    (void)state;
    server_reset(SM_HOLD);
    time_scale_set(1); /* a 20 s request timeout: the cap, not the clock, ends it */
    struct fixture *f = fx_new(false, NULL);

    assert_int_equal(net_get(f->net, POLL_PRODUCT_EVENTS, 3, "/big", 5), 0);
    assert_true(run_until(f, got_big, 10));
    time_scale_set(SCALE);
    assert_int_equal(f->log->rep[0].status, 0);
    assert_int_equal(f->log->rep[0].b, 3);
    assert_int_equal(f->log->rep[0].tag, 5);
    assert_string_equal(f->log->rep[0].body, "response too large");
    fx_free(f);
}

static bool switched(struct fixture *f)
{
    return count_req(NULL, "/api/stream?brandId=other") >= 1 && f->log->nst >= 3 &&
           net_stream(f->net, 0)->state == ST_LIVE;
}

static void test_set_brands_and_free_mid_flight(void **state)
{
    (void)state;
    server_reset(SM_HOLD);
    struct fixture *f = fx_new(false, NULL);
    static const char *const two[] = {"b1", "b2"};

    assert_int_equal(net_set_brands(f->net, two, 2), 0);
    assert_int_equal(net_start(f->net), 0);
    /* replacing the set from inside a callback */
    f->log->switch_on_threat = true;
    assert_true(run_until(f, switched, 5));
    assert_int_equal(net_stream_count(f->net), 1);
    assert_int_equal(net_set_brands(f->net, NULL, 0), 0);
    assert_int_equal(net_stream_count(f->net), 0);
    assert_int_equal(net_set_brands(f->net, two, 2), 0);
    const char *bad[] = {""};
    assert_int_equal(net_set_brands(f->net, bad, 1), ERR_INVALID);
    assert_int_equal(net_get(f->net, POLL_PRODUCT_SCANS, 1, "/api/scans?productId=p&limit=20", 1),
                     0);
    run_for(f, 0.02);
    /* freed with streams, polls and a one-shot still in flight */
    fx_free(f);
    net_free(NULL);
}

static bool first_live(struct fixture *f)
{
    return net_stream_count(f->net) >= 1 && net_stream(f->net, 0)->state == ST_LIVE;
}

static bool second_live(struct fixture *f)
{
    return net_stream_count(f->net) >= 2 && net_stream(f->net, 0)->state == ST_LIVE &&
           net_stream(f->net, 1)->state == ST_LIVE;
}

static void test_set_brands_keeps_streams(void **state)
{
    (void)state;
    server_reset(SM_HOLD);
    struct fixture *f = fx_new(false, NULL);
    static const char *const one[] = {"keep"};
    static const char *const two[] = {"new", "keep"};

    assert_int_equal(net_set_brands(f->net, one, 1), 0);
    assert_true(run_until(f, first_live, 3));
    assert_string_equal(net_stream(f->net, 0)->last_event_id, "x-2");
    size_t ev0 = f->log->nev;
    assert_int_equal(net_set_brands(f->net, two, 2), 0);
    assert_true(run_until(f, second_live, 3));
    run_for(f, 0.1);
    /* the kept brand did not reconnect and moved to index 1 with its state */
    assert_int_equal(count_req(NULL, "/api/stream?brandId=keep"), 1);
    assert_int_equal(count_req(NULL, "/api/stream?brandId=new"), 1);
    assert_string_equal(net_stream(f->net, 1)->last_event_id, "x-2");
    bool hb1 = false;
    for (size_t i = ev0; i < f->log->nev; i++)
        hb1 |= f->log->ev[i].b == 1 && !strcmp(f->log->ev[i].type, "heartbeat");
    assert_true(hb1);
    fx_free(f);
}

static void test_new_rejects_bad_config(void **state)
{
    (void)state;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    struct net_sink sink = {0};
    struct net_config cfg = {.url = "ftp://x"};
    char err[128];

    assert_null(net_new(loop, &cfg, &sink, err, sizeof err));
    assert_true(err[0] != '\0');
    cfg.url = "http://a b";
    assert_null(net_new(loop, &cfg, &sink, err, sizeof err));
    cfg.url = "http://127.0.0.1:1/";
    cfg.api_key = "a\r\nX-Evil: 1";
    assert_null(net_new(loop, &cfg, &sink, err, sizeof err));
    cfg.api_key = NULL;
    struct net *n = net_new(loop, &cfg, &sink, err, sizeof err);
    assert_non_null(n);
    assert_int_equal(net_stream_count(n), 0);
    assert_null(net_stream(n, 0));
    net_free(n);
    ev_loop_destroy(loop);
}

/* ---- against tests/tools/fake_sse.py ---------------------------------------- */

struct fake {
    pid_t pid;
    int port;
    char dir[64];
    char log[96];
};

/* Starts the fake server with args; false (test skipped) without python3. */
static bool fake_start(struct fake *fk, const char *const *args, size_t nargs)
{
    int fds[2];
    char line[64];
    const char *argv[24];
    size_t a = 0;
    FILE *in;

    if (access("tests/tools/fake_sse.py", R_OK) || access("/usr/bin/python3", X_OK))
        return false;
    snprintf(fk->dir, sizeof fk->dir, "/tmp/gp-tuinet.XXXXXX");
    assert_non_null(mkdtemp(fk->dir));
    snprintf(fk->log, sizeof fk->log, "%s/log", fk->dir);
    argv[a++] = "/usr/bin/python3";
    argv[a++] = "tests/tools/fake_sse.py";
    argv[a++] = "--log";
    argv[a++] = fk->log;
    for (size_t i = 0; i < nargs && a < 23; i++)
        argv[a++] = args[i];
    argv[a] = NULL;
    assert_int_equal(pipe(fds), 0);
    fk->pid = fork();
    assert_true(fk->pid >= 0);
    if (fk->pid == 0) {
        char errf[128];
        snprintf(errf, sizeof errf, "%s/stderr", fk->dir);
        int ef = open(errf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (ef >= 0)
            dup2(ef, 2);
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(fds[1]);
    in = fdopen(fds[0], "r");
    assert_non_null(in);
    fk->port = 0;
    if (fgets(line, sizeof line, in))
        sscanf(line, "PORT %d", &fk->port);
    fclose(in);
    assert_true(fk->port > 0);
    return true;
}

static struct fake fake_srv; /* stopped by the teardown even when a check fails */

static void fake_stop(struct fake *fk)
{
    char cmd[128];
    int st;

    kill(fk->pid, SIGTERM);
    for (int i = 0; i < 300 && waitpid(fk->pid, &st, WNOHANG) == 0; i++)
        usleep(10000);
    if (waitpid(fk->pid, &st, WNOHANG) == 0) {
        kill(fk->pid, SIGKILL);
        waitpid(fk->pid, &st, 0);
    }
    snprintf(cmd, sizeof cmd, "%s/log", fk->dir);
    unlink(cmd);
    snprintf(cmd, sizeof cmd, "%s/stderr", fk->dir);
    unlink(cmd);
    rmdir(fk->dir);
    fk->pid = 0;
}

static int count_threats(const struct sink_log *L)
{
    int c = 0;
    for (size_t i = 0; i < L->nev; i++)
        c += !strcmp(L->ev[i].type, "threat");
    return c;
}

static bool nine_threats(struct fixture *f)
{
    return count_threats(f->log) >= 9 && count_state(f->log, ST_LIVE) >= 3;
}

static void test_against_fake_sse(void **state)
{
    (void)state;
    static const char *const args[] = {"--brands",     "fa", "--rate",         "40",
                                       "--drop-after", "3",  "--heartbeat-ms", "50"};
    static const char *const brands[] = {"fa"};
    struct fake *fkp = &fake_srv, fk;
    char line[512];
    long prev = -1, ids[MAX_SEEN];
    int nids = 0, streams = 0, resumed = 0;
    FILE *lf;

    if (!fake_start(fkp, args, sizeof args / sizeof args[0]))
        skip();
    fk = *fkp;
    snprintf(base_url, sizeof base_url, "http://127.0.0.1:%d", fk.port);
    struct fixture *f = fx_new(false, "fk");
    assert_int_equal(net_set_brands(f->net, brands, 1), 0);
    bool ok = run_until(f, nine_threats, 8);
    net_free(f->net);
    f->net = NULL;
    assert_true(ok);
    /* threats arrive in order and none is lost or repeated across the
     * reconnects: the fake's ids are consecutive for one brand */
    for (size_t i = 0; i < f->log->nev; i++) {
        if (strcmp(f->log->ev[i].type, "threat"))
            continue;
        long id = strtol(f->log->ev[i].id, NULL, 10);
        if (prev >= 0)
            assert_int_equal(id, prev + 1);
        prev = id;
        ids[nids++] = id;
    }
    /* each reconnect carried the id of the latest threat before it */
    lf = fopen(fk.log, "r");
    assert_non_null(lf);
    while (fgets(line, sizeof line, lf)) {
        char *lei = strstr(line, " lei=");
        if (!strstr(line, " GET /api/stream ") || !lei)
            continue;
        assert_non_null(strstr(line, "q=brandId=fa "));
        assert_non_null(strstr(line, "auth=Bearer%20fk"));
        if (streams++ > 0 && 3 * (resumed + 1) <= nids) {
            /* the k-th reconnect follows the k-th drop, after 3 threats each */
            assert_int_equal(strtol(lei + 5, NULL, 10), ids[3 * (resumed + 1) - 1]);
            resumed++;
        }
    }
    fclose(lf);
    assert_true(resumed >= 2);
    fx_free(f);
}

static int fake_teardown(void **state)
{
    (void)state;
    if (fake_srv.pid > 0)
        fake_stop(&fake_srv);
    snprintf(base_url, sizeof base_url, "http://127.0.0.1:%d/", mini_httpd_port(srv));
    return 0;
}

static int group_setup(void **state)
{
    (void)state;
    time_scale_set(SCALE);
    srv = mini_httpd_start(handler, NULL);
    if (!srv)
        return -1;
    snprintf(base_url, sizeof base_url, "http://127.0.0.1:%d/", mini_httpd_port(srv));
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    mini_httpd_stop(srv);
    time_scale_set(0);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_backoff_sequence),
        cmocka_unit_test(test_new_rejects_bad_config),
        cmocka_unit_test(test_live_events_in_order),
        cmocka_unit_test(test_reconnect_sends_latest_id),
        cmocka_unit_test(test_stalled_after_silence),
        cmocka_unit_test(test_error_on_403_retried_later),
        cmocka_unit_test(test_backoff_schedule_on_the_wire),
        cmocka_unit_test(test_server_retry_honoured),
        cmocka_unit_test(test_poll_periods_and_refresh),
        cmocka_unit_test(test_failed_reconcile_retried_soon),
        cmocka_unit_test(test_threat_refreshes_figures),
        cmocka_unit_test(test_no_pileup_when_slow),
        cmocka_unit_test(test_readonly_and_actions),
        cmocka_unit_test(test_verify_always_with_metadata),
        cmocka_unit_test(test_body_cap),
        cmocka_unit_test(test_set_brands_and_free_mid_flight),
        cmocka_unit_test(test_set_brands_keeps_streams),
        cmocka_unit_test_teardown(test_against_fake_sse, fake_teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
