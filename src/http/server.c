/*
 * server.c - HTTP/1.1 server on libev: listening, connections, timeouts,
 * pipelining, group commit and streaming (public API in http.h).
 *
 * Life of a request: the read watcher reads up to HTTP_READ_CHUNK bytes
 * into the server's scratch buffer and feeds them to the connection's
 * parser; each complete request goes to handler->handle() and the
 * serialised response is appended to the connection's output buffer.
 * Nothing is written yet: the connection joins the "pending" list and
 * remembers where this iteration's responses start (the mark) and where
 * each one begins and ends (entries).  The ev_prepare watcher, which
 * libev runs once per iteration just before it waits for events, calls
 * handler->commit() once when anything was handled, then writes every
 * pending connection with a direct send(); a write watcher finishes what
 * the socket would not take.  When the commit fails, the responses of the
 * iteration are rewritten in place to 500 {"error":"Internal error"}.
 *
 * A handler may defer its answer (http_response.deferred): the connection
 * then stops taking requests, keeps pipelined input buffered and has no
 * timeout until http_conn_complete() queues the answer like any other
 * (held until the next commit), or until it dies and deferred_closed runs.
 *
 * Early writes (deferred durability, http_server_set_early_writes): when
 * an iteration's answers are held for a ticket, each connection whose
 * output is exactly those answers also gets a send job on a queue guarded
 * by sj_mu.  The store's sync thread, right after the sync that makes the
 * ticket durable, posts the ticket to the server's writer thread, which
 * takes the jobs and sends them (non-blocking).  The loop, on hearing of
 * the ticket, settles each job before it releases the answers: a job not
 * taken yet it takes back and writes itself (an idle loop often gets there
 * first), one being sent it waits for, and for one sent it counts what
 * went out and writes the rest.
 * A held connection takes no request, so its output does not change while
 * a job is out; the loop settles a connection's job (waiting for a send in
 * progress) before anything else writes to it or frees it.
 *
 * Connections are never freed inside their own callbacks: conn_kill()
 * stops the watchers and queues the connection on the reap list, which
 * the prepare callback empties (redis's freeClientAsync idea).
 *
 * Timeouts use one ev_timer per connection, armed lazily ("be smart about
 * timeouts" in ev.pod): the deadline is recomputed from timestamps when
 * the timer fires, and the timer is only moved when the deadline becomes
 * earlier than the armed one.  A fresh connection and a request in
 * progress get the header timeout (from the first byte), a body in
 * progress the body timeout (from the end of the headers), a kept-alive
 * connection the idle timeout, and output that does not move the body
 * timeout.  Streaming connections have none.
 */
#include "http/server.h"

#include <errno.h>
#include <ev.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "http/parse.h"
#include "http/reply.h"
#include "net/listen.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"
#include "util/timescale.h"
#include "util/xalloc.h"

#define container_of(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

enum entry_kind { ENT_HANDLER = 0, ENT_SERVER, ENT_STREAM };

/* An early write (see the file comment); fields under the server's sj_mu
 * while queued or taken. */
enum sj_state { SJ_IDLE = 0, SJ_NEW, SJ_TAKEN, SJ_DONE };
struct send_job {
    int fd;
    const char *data;
    size_t len, sent;
    enum sj_state state;
};

/* One response queued during the current iteration: [start, end) of out. */
struct out_entry {
    size_t start, end;
    unsigned char kind;
    unsigned char minor;
    bool close;
    bool head;
};

struct http_conn {
    struct http_server *srv;
    int fd;
    ev_io rio, wio;
    ev_timer tmr;
    struct http_parse parse;
    struct buf in;   /* input not processed yet (backpressure only) */
    struct buf out;  /* serialised responses / stream data */
    size_t out_sent; /* bytes of out already written */
    size_t mark;     /* while pending: start of the held responses */
    struct out_entry *ents;
    size_t nents, ents_cap;
    struct http_conn *prev, *next; /* all connections of the server */
    struct http_conn *pend_next;   /* pending list (held responses) */
    struct http_conn *reap_next;   /* reap list (dead) */
    unsigned long served;          /* requests answered */
    unsigned long phase_req;       /* value of served when phase_since was set */
    enum http_parse_phase seen_phase;
    ev_tstamp last_activity, phase_since, write_since, linger_since, timer_at;
    bool pending, dead, close_after, linger, lingering, peer_eof;
    bool held;          /* pending and past its commit: waits for durability */
    bool sj_out;        /* loop's view: sj is queued, taken or done, not settled */
    struct send_job sj; /* its early write, when held (state != SJ_IDLE) */
    bool streaming, stream_accepted, stream_open_due, in_handler;
    void (*stream_open)(void *arg, struct http_conn *c);
    void (*stream_closed)(void *arg, struct http_conn *c);
    void *stream_arg;
    /* deferred answer (http_response.deferred): what the reply needs later */
    bool deferred, d_head, d_keep;
    int d_minor;
    void (*deferred_closed)(void *arg, struct http_conn *c);
    void *deferred_arg;
    struct http_request *d_req; /* method, path, peer and start time (copies) */
    char peer_ip[64];
    int peer_port;
};

struct http_server {
    struct ev_loop *loop;
    struct http_handler h;
    struct http_parse_limits lim;
    double t_header, t_idle, t_body, t_linger, t_retry;
    size_t max_conns, stream_max;
    char *cors_origin;
    int lfd[NET_MAX_LISTEN];
    ev_io lio[NET_MAX_LISTEN];
    size_t nlisten;
    int port;
    ev_prepare prep;
    ev_timer retry; /* re-enables accept() after EMFILE */
    struct http_conn *conns;
    size_t nconns;
    struct http_conn *pend_head;
    struct http_conn *reap_head;
    /* Iterations whose responses wait for durability, oldest first: the
     * ticket and the connections (linked by pend_next). */
    struct held_group {
        uint64_t ticket;
        struct http_conn *list;
    } * held;
    size_t nheld, held_cap;
    /* Early writes: the queue of jobs not taken yet (ticket order). */
    bool early;
    pthread_mutex_t sj_mu;
    pthread_cond_t sj_cv; /* a taken job is done */
    struct sj_entry {
        uint64_t ticket;
        struct send_job *job;
    } * sjq;
    size_t nsjq, sjq_cap;
    uint64_t early_writes; /* under sj_mu */
    /* The writer thread: the durable hook posts tickets to it. */
    pthread_t sj_th;
    bool sj_th_on;
    pthread_cond_t sj_go;          /* under sj_mu: sj_ticket moved, or sj_stop */
    uint64_t sj_ticket, sj_served; /* under sj_mu */
    bool sj_stop;                  /* under sj_mu */
    /* Answers written lately whose keep-alive clients have not asked
     * again yet (http_server_expected): each written answer adds one,
     * each new request takes one; forgotten after EXPECT_TTL_S. */
    size_t expect;
    ev_tstamp expect_at;
    bool handled; /* handle() ran since the last prepare */
    bool draining, drain_done;
    void (*drain_cb)(void *arg);
    void *drain_arg;
    struct http_date_cache date;
    struct http_request req;  /* scratch, one request at a time */
    struct http_response res; /* scratch, buffers reused */
    char rbuf[HTTP_READ_CHUNK];
};

static void conn_kill(struct http_conn *c);
static void conn_timer_update(struct http_conn *c);
static void sj_settle_locked(struct http_server *s, struct http_conn *c);
static void conn_resume(struct http_conn *c);

static int64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static size_t conn_unsent(const struct http_conn *c)
{
    return c->out.len - c->out_sent;
}

/* ---- output queue --------------------------------------------------- */

/* Records a response just appended at [start, end) and puts the
 * connection on the pending list (its output is held until commit). */
static void queue_entry(struct http_conn *c, enum entry_kind kind, size_t start, bool close,
                        bool head, int minor)
{
    struct http_server *s = c->srv;
    if (!c->pending) {
        c->pending = true;
        c->mark = start;
        c->pend_next = s->pend_head;
        s->pend_head = c;
    }
    if (c->nents == c->ents_cap) {
        c->ents_cap = c->ents_cap ? c->ents_cap * 2 : 4;
        c->ents = xrealloc(c->ents, c->ents_cap * sizeof *c->ents);
    }
    struct out_entry *e = &c->ents[c->nents++];
    e->start = start;
    e->end = c->out.len;
    e->kind = (unsigned char)kind;
    e->minor = (unsigned char)(minor > 0 ? 1 : 0);
    e->close = close;
    e->head = head;
    if (conn_unsent(c) == e->end - start)
        c->write_since = ev_now(s->loop); /* output was idle: the stall clock starts */
}

static void reply_ctx(struct http_conn *c, struct http_reply_ctx *ctx, int minor, bool head,
                      bool keep)
{
    http_date_update(&c->srv->date, (time_t)ev_now(c->srv->loop));
    ctx->minor = minor;
    ctx->head = head;
    ctx->keep_alive = keep;
    ctx->date = &c->srv->date;
    ctx->cors_origin = c->srv->cors_origin;
}

/* Queues a server-made JSON error and closes after it (lingering when the
 * peer may still be sending). */
static void queue_error(struct http_conn *c, int status, const char *msg, bool linger)
{
    struct http_reply_ctx ctx;
    size_t start = c->out.len, bytes = 0;
    int minor = c->parse.hp.http_major == 1 ? http_parse_minor(&c->parse) : 1;
    reply_ctx(c, &ctx, minor, false, false);
    if (http_reply_error(&c->out, &ctx, status, msg, &bytes)) {
        conn_kill(c);
        return;
    }
    queue_entry(c, ENT_SERVER, start, true, false, minor);
    c->close_after = true;
    c->linger = linger;
}

static void queue_continue(struct http_conn *c)
{
    size_t start = c->out.len, bytes = 0;
    if (http_reply_continue(&c->out, &bytes)) {
        conn_kill(c);
        return;
    }
    queue_entry(c, ENT_SERVER, start, false, false, 1);
}

/* ---- request handling ----------------------------------------------- */

static void reset_response(struct http_response *res)
{
    res->status = 0;
    res->content_type = NULL;
    /* keep the allocations between requests, unless one got big */
    if (res->headers.cap > 64 * 1024)
        buf_free(&res->headers);
    else
        buf_reset(&res->headers);
    if (res->body.cap > 1024 * 1024)
        buf_free(&res->body);
    else
        buf_reset(&res->body);
    res->close = false;
    res->stream = false;
    res->stream_open = NULL;
    res->stream_closed = NULL;
    res->stream_arg = NULL;
    res->deferred = false;
    res->deferred_closed = NULL;
    res->deferred_arg = NULL;
}

static void call_done(struct http_conn *c, const struct http_request *req,
                      const struct http_response *res, size_t bytes)
{
    struct http_server *s = c->srv;
    if (!s->h.done)
        return;
    double ms = (double)(mono_us() - req->start_us) / 1000.0;
    s->h.done(s->h.arg, req, res, bytes, ms);
}

/* Answers a CORS preflight without involving the application. */
static void handle_preflight(struct http_conn *c, struct http_request *req, int minor)
{
    struct http_server *s = c->srv;
    struct http_reply_ctx ctx;
    size_t start = c->out.len, bytes = 0;
    bool keep = req->keep_alive && !s->draining;
    reply_ctx(c, &ctx, minor, false, keep);
    if (http_reply_preflight(&c->out, &ctx,
                             http_request_header(req, "Access-Control-Request-Headers"), &bytes)) {
        conn_kill(c);
        return;
    }
    queue_entry(c, ENT_SERVER, start, !keep, false, minor);
    if (!keep)
        c->close_after = true;
    reset_response(&s->res);
    s->res.status = 204;
    call_done(c, req, &s->res, bytes);
}

static void conn_handle(struct http_conn *c)
{
    struct http_server *s = c->srv;
    struct http_request *req = &s->req;
    struct http_response *res = &s->res;
    struct http_reply_ctx ctx;
    size_t start, bytes = 0;
    int minor = http_parse_minor(&c->parse);

    if (s->expect)
        s->expect--;
    http_parse_fill(&c->parse, req);
    memcpy(req->peer_ip, c->peer_ip, sizeof req->peer_ip);
    req->peer_port = c->peer_port;
    req->conn = c;
    req->start_us = mono_us();
    c->served++;
    bool head = req->method == HTTP_M_HEAD;

    if (s->cors_origin && req->method == HTTP_M_OPTIONS) {
        handle_preflight(c, req, minor);
        return;
    }
    reset_response(res);
    c->in_handler = true;
    s->h.handle(s->h.arg, req, res);
    c->in_handler = false;
    s->handled = true;
    if (res->status == 0)
        http_response_error(res, 500, "Internal error");
    bool keep = req->keep_alive && !res->close && !s->draining;
    if (res->stream) {
        /* the stream is ours now: stream_closed is owed exactly once */
        c->stream_accepted = true;
        c->stream_open = res->stream_open;
        c->stream_closed = res->stream_closed;
        c->stream_arg = res->stream_arg;
    }
    if (res->deferred && !res->stream) {
        /* answered later by http_conn_complete(); until then nothing more
         * is read from this connection (conn_feed stops) */
        struct http_request *dr = xcalloc(1, sizeof *dr);
        size_t plen = req->path ? strlen(req->path) : 0;
        char *path = xmalloc(plen + 1);
        memcpy(path, req->path ? req->path : "", plen + 1);
        dr->method = req->method;
        dr->method_name = req->method_name; /* a static string of the parser */
        dr->path = path;
        dr->target = path;
        dr->query = "";
        dr->body = "";
        memcpy(dr->peer_ip, req->peer_ip, sizeof dr->peer_ip);
        dr->peer_port = req->peer_port;
        dr->start_us = req->start_us;
        c->d_req = dr;
        c->deferred = true;
        c->d_head = head;
        c->d_keep = keep;
        c->d_minor = minor;
        c->deferred_closed = res->deferred_closed;
        c->deferred_arg = res->deferred_arg;
        return;
    }
    if (c->dead) /* the handler closed its own connection */
        return;
    start = c->out.len;
    if (res->stream) {
        reply_ctx(c, &ctx, minor, head, true);
        if (http_reply_stream_head(&c->out, &ctx, res, &bytes)) {
            conn_kill(c);
            return;
        }
        if (head || s->draining) {
            queue_entry(c, ENT_STREAM, start, true, head, minor);
            c->close_after = true;
        } else {
            queue_entry(c, ENT_STREAM, start, false, head, minor);
            c->streaming = true;
            c->stream_open_due = true;
        }
    } else {
        reply_ctx(c, &ctx, minor, head, keep);
        int rc = http_reply_append(&c->out, &ctx, res, &bytes);
        if (rc) {
            ctx.keep_alive = keep = false;
            rc = http_reply_error(&c->out, &ctx, 500, "Response too large", &bytes);
        }
        if (rc) {
            conn_kill(c);
            return;
        }
        queue_entry(c, ENT_HANDLER, start, !keep, head, minor);
        if (!keep)
            c->close_after = true;
    }
    call_done(c, req, res, bytes);
}

/* True when unsent output is so large that further requests must wait. */
static bool conn_blocked(const struct http_conn *c)
{
    return conn_unsent(c) > HTTP_OUT_HIGH;
}

/* Parses and handles what data holds; returns how many bytes were used
 * (the rest must wait: output backpressure).  Input arriving after the
 * connection decided to close, or on a stream, is discarded. */
static size_t conn_feed(struct http_conn *c, const char *data, size_t len)
{
    size_t off = 0;
    while (off < len) {
        if (c->dead || c->close_after || c->streaming)
            return len;
        if (conn_blocked(c) || c->deferred || c->held)
            break;
        size_t used = 0;
        int rc = http_parse_feed(&c->parse, data + off, len - off, &used);
        off += used;
        if (rc == HTTP_PARSE_MORE) {
            /* the body did not come along with the headers: invite it */
            if (http_parse_take_continue(&c->parse))
                queue_continue(c);
            break;
        }
        if (rc == HTTP_PARSE_DONE) {
            conn_handle(c);
            http_parse_next(&c->parse);
            continue;
        }
        queue_error(c, http_parse_status(&c->parse), http_parse_message(&c->parse), true);
        return len;
    }
    return off;
}

/* Tracks the parser phase so the timer knows which timeout applies. */
static void conn_note_phase(struct http_conn *c)
{
    enum http_parse_phase ph = http_parse_phase(&c->parse);
    if (ph != c->seen_phase || c->phase_req != c->served) {
        c->seen_phase = ph;
        c->phase_req = c->served;
        c->phase_since = ev_now(c->srv->loop);
    }
}

static void conn_start_reading(struct http_conn *c)
{
    if (!ev_is_active(&c->rio) && !c->dead)
        ev_io_start(c->srv->loop, &c->rio);
}

static void conn_stop_reading(struct http_conn *c)
{
    if (ev_is_active(&c->rio))
        ev_io_stop(c->srv->loop, &c->rio);
}

/* The peer sent EOF. */
static void conn_on_eof(struct http_conn *c)
{
    c->peer_eof = true;
    conn_stop_reading(c);
    if (c->lingering || c->streaming) {
        conn_kill(c);
        return;
    }
    if (c->deferred) {
        c->close_after = true; /* half-closed peer: answer, then close */
        c->linger = false;
        return;
    }
    if (c->in.len)
        return; /* pipelined requests still wait; conn_resume() finishes */
    if (c->pending || conn_unsent(c)) {
        c->close_after = true; /* answer what was asked, then close */
        c->linger = false;
        return;
    }
    conn_kill(c);
}

static void conn_on_readable(struct http_conn *c)
{
    struct http_server *s = c->srv;
    ssize_t n = recv(c->fd, s->rbuf, sizeof s->rbuf, 0);
    if (n < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            conn_kill(c);
        return;
    }
    if (n == 0) {
        conn_on_eof(c);
        return;
    }
    c->last_activity = ev_now(s->loop);
    if (c->lingering || c->streaming || c->close_after)
        return; /* nothing more is expected: discard */
    size_t used = conn_feed(c, s->rbuf, (size_t)n);
    if (used < (size_t)n && !c->dead && !c->close_after && !c->streaming) {
        /* output backpressure: keep the rest and stop reading meanwhile */
        if (buf_append(&c->in, s->rbuf + used, (size_t)n - used)) {
            conn_kill(c);
            return;
        }
        conn_stop_reading(c);
    }
    conn_note_phase(c);
    conn_timer_update(c);
}

static void read_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    (void)revents;
    conn_on_readable(container_of(w, struct http_conn, rio));
}

/* ---- early writes (see the file comment) ------------------------------ */

/* Under sj_mu: takes c's job back from the queue, or waits for the writer
 * thread to finish sending it, and counts what it sent. */
static void sj_settle_locked(struct http_server *s, struct http_conn *c)
{
    struct send_job *j = &c->sj;
    if (j->state == SJ_NEW) {
        for (size_t i = 0; i < s->nsjq; i++) {
            if (s->sjq[i].job == j) {
                memmove(&s->sjq[i], &s->sjq[i + 1], (s->nsjq - i - 1) * sizeof *s->sjq);
                s->nsjq--;
                break;
            }
        }
    }
    while (j->state == SJ_TAKEN)
        pthread_cond_wait(&s->sj_cv, &s->sj_mu);
    if (j->state == SJ_DONE && j->sent) {
        c->out_sent += j->sent;
        c->write_since = ev_now(s->loop);
    }
    j->state = SJ_IDLE;
    c->sj_out = false;
}

/* Before anything else writes to c or frees it. */
static void sj_settle(struct http_conn *c)
{
    if (!c->sj_out)
        return;
    pthread_mutex_lock(&c->srv->sj_mu);
    sj_settle_locked(c->srv, c);
    pthread_mutex_unlock(&c->srv->sj_mu);
}

/* Whether c's output is exactly the answers being held, nothing of it
 * sent, nothing else to come (no stream, no deferred answer). */
static bool sj_eligible(const struct http_conn *c)
{
    if (c->dead || c->streaming || c->stream_open_due || c->deferred || !c->nents ||
        c->out_sent != c->mark || c->out.len <= c->mark || ev_is_active(&c->wio))
        return false;
    for (size_t i = 0; i < c->nents; i++)
        if (c->ents[i].kind == ENT_STREAM)
            return false;
    return true;
}

/* Offers the held connections of list to the writer thread, for ticket. */
static void sj_offer(struct http_server *s, struct http_conn *list, uint64_t ticket)
{
    pthread_mutex_lock(&s->sj_mu);
    for (struct http_conn *c = list; c; c = c->pend_next) {
        if (c->sj_out || !sj_eligible(c))
            continue;
        if (s->nsjq == s->sjq_cap) {
            s->sjq_cap = s->sjq_cap ? s->sjq_cap * 2 : 64;
            s->sjq = xrealloc(s->sjq, s->sjq_cap * sizeof *s->sjq);
        }
        c->sj = (struct send_job){.fd = c->fd,
                                  .data = c->out.data + c->mark,
                                  .len = c->out.len - c->mark,
                                  .state = SJ_NEW};
        c->sj_out = true;
        s->sjq[s->nsjq].ticket = ticket;
        s->sjq[s->nsjq].job = &c->sj;
        s->nsjq++;
    }
    pthread_mutex_unlock(&s->sj_mu);
}

#define SJ_TAKE_MAX 64

/* Sends every queued job of a ticket <= ticket (the writer thread). */
static void sj_send_upto(struct http_server *s, uint64_t ticket)
{
    struct send_job *take[SJ_TAKE_MAX];
    size_t sent[SJ_TAKE_MAX];
    for (;;) {
        size_t n = 0, k = 0;
        pthread_mutex_lock(&s->sj_mu);
        for (size_t i = 0; i < s->nsjq; i++) {
            if (s->sjq[i].ticket <= ticket && n < SJ_TAKE_MAX) {
                s->sjq[i].job->state = SJ_TAKEN;
                take[n++] = s->sjq[i].job;
            } else {
                s->sjq[k++] = s->sjq[i];
            }
        }
        s->nsjq = k;
        pthread_mutex_unlock(&s->sj_mu);
        if (!n)
            return;
        for (size_t i = 0; i < n; i++) {
            const struct send_job *j = take[i];
            size_t off = 0;
            while (off < j->len) {
                ssize_t r = send(j->fd, j->data + off, j->len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (r < 0 && errno == EINTR)
                    continue;
                if (r <= 0)
                    break; /* full or failing: the loop writes the rest, or finds out */
                off += (size_t)r;
            }
            sent[i] = off;
        }
        pthread_mutex_lock(&s->sj_mu);
        for (size_t i = 0; i < n; i++) {
            take[i]->sent = sent[i];
            take[i]->state = SJ_DONE;
            if (sent[i])
                s->early_writes++;
        }
        pthread_cond_broadcast(&s->sj_cv);
        pthread_mutex_unlock(&s->sj_mu);
    }
}

/* The writer thread: the sync thread only posts the ticket (so that the
 * next sync is not kept waiting behind the sends), this thread sends. */
static void *sj_thread(void *arg)
{
    struct http_server *s = arg;
    pthread_mutex_lock(&s->sj_mu);
    for (;;) {
        while (!s->sj_stop && s->sj_ticket <= s->sj_served)
            pthread_cond_wait(&s->sj_go, &s->sj_mu);
        if (s->sj_stop)
            break;
        uint64_t t = s->sj_ticket;
        s->sj_served = t;
        pthread_mutex_unlock(&s->sj_mu);
        sj_send_upto(s, t);
        pthread_mutex_lock(&s->sj_mu);
    }
    pthread_mutex_unlock(&s->sj_mu);
    return NULL;
}

void http_server_durable_hook(void *arg, uint64_t ticket)
{
    struct http_server *s = arg;
    pthread_mutex_lock(&s->sj_mu);
    if (ticket > s->sj_ticket) {
        s->sj_ticket = ticket;
        pthread_cond_signal(&s->sj_go);
    }
    pthread_mutex_unlock(&s->sj_mu);
}

static void sj_thread_stop(struct http_server *s)
{
    if (!s->sj_th_on)
        return;
    pthread_mutex_lock(&s->sj_mu);
    s->sj_stop = true;
    pthread_cond_signal(&s->sj_go);
    pthread_mutex_unlock(&s->sj_mu);
    pthread_join(s->sj_th, NULL);
    s->sj_th_on = false;
    s->sj_stop = false;
}

void http_server_set_early_writes(struct http_server *s, bool on)
{
    if (on && !s->sj_th_on) {
        if (pthread_create(&s->sj_th, NULL, sj_thread, s) != 0) {
            log_warn("http: no writer thread; answers are written by the loop");
            return;
        }
        s->sj_th_on = true;
    } else if (!on) {
        sj_thread_stop(s); /* jobs still queued are taken back by the loop */
    }
    s->early = on;
}

uint64_t http_server_early_writes(struct http_server *s)
{
    pthread_mutex_lock(&s->sj_mu);
    uint64_t n = s->early_writes;
    pthread_mutex_unlock(&s->sj_mu);
    return n;
}

/* ---- writing ---------------------------------------------------------- */

/* Writes what may be written (not the held responses of a pending
 * connection).  Returns 0, or -1 when the connection died. */
static int conn_write(struct http_conn *c)
{
    sj_settle(c);
    size_t limit = c->pending ? c->mark : c->out.len;
    while (c->out_sent < limit) {
        ssize_t n = send(c->fd, c->out.data + c->out_sent, limit - c->out_sent, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            conn_kill(c);
            return -1;
        }
        c->out_sent += (size_t)n;
        c->write_since = ev_now(c->srv->loop);
    }
    if (c->pending)
        return 0; /* offsets of the held responses must not move */
    if (c->out_sent == c->out.len) {
        if (c->out.cap > 256 * 1024)
            buf_free(&c->out);
        else
            buf_reset(&c->out);
        c->out_sent = 0;
    } else if (c->out_sent > 64 * 1024 && c->out_sent * 2 > c->out.len) {
        buf_consume(&c->out, c->out_sent);
        c->out_sent = 0;
    }
    return 0;
}

/* Output is fully written and the connection wants to close. */
static void conn_finish_close(struct http_conn *c)
{
    if (!c->linger || c->peer_eof) {
        conn_kill(c);
        return;
    }
    /* half-close and drain the peer's leftovers so it sees our answer
     * instead of a reset */
    shutdown(c->fd, SHUT_WR);
    c->lingering = true;
    c->linger_since = ev_now(c->srv->loop);
    buf_free(&c->in);
    conn_start_reading(c);
}

/* After output progress: stop the write watcher when done, close, or
 * resume held-back input. */
static void conn_after_write(struct http_conn *c)
{
    struct http_server *s = c->srv;
    if (c->dead)
        return;
    if (conn_unsent(c) == 0) {
        if (ev_is_active(&c->wio))
            ev_io_stop(s->loop, &c->wio);
        c->last_activity = ev_now(s->loop);
        if (c->close_after && !c->pending) {
            if (!c->lingering)
                conn_finish_close(c);
            return;
        }
    } else if (c->pending && c->out_sent == c->mark) {
        if (ev_is_active(&c->wio))
            ev_io_stop(s->loop, &c->wio); /* the rest waits for commit */
    } else if (!ev_is_active(&c->wio)) {
        ev_io_start(s->loop, &c->wio);
    }
}

static void write_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    (void)revents;
    struct http_conn *c = container_of(w, struct http_conn, wio);
    if (conn_write(c))
        return;
    conn_after_write(c);
    if (!c->dead && c->in.len && !conn_blocked(c) && !c->pending)
        conn_resume(c);
    if (!c->dead)
        conn_timer_update(c);
}

/* Processes input that waited for the output to drain. */
static void conn_resume(struct http_conn *c)
{
    size_t used = conn_feed(c, c->in.data, c->in.len);
    if (c->dead)
        return;
    if (c->close_after || c->streaming)
        buf_free(&c->in);
    else
        buf_consume(&c->in, used);
    if (c->in.len == 0) {
        buf_free(&c->in);
        if (c->peer_eof) {
            if (c->pending || conn_unsent(c)) {
                c->close_after = true;
                c->linger = false;
            } else {
                conn_kill(c);
                return;
            }
        } else if (!c->close_after || c->linger) {
            conn_start_reading(c);
        }
    }
    conn_note_phase(c);
}

/* Writes a connection whose responses were just released (prepare). */
static void conn_flush(struct http_conn *c)
{
    if (conn_unsent(c) && conn_write(c))
        return;
    conn_after_write(c);
    if (c->dead)
        return;
    /* input held back by backpressure is resumed from the write watcher,
     * outside the prepare phase, so its responses get their own commit */
    if (c->in.len && !ev_is_active(&c->wio))
        ev_io_start(c->srv->loop, &c->wio);
    conn_timer_update(c);
}

/* Commit failed: every response of this iteration becomes a 500 (server
 * answers such as 400 or "100 Continue" are kept as they were). */
static void conn_rewrite_failed(struct http_conn *c)
{
    size_t tail = c->out.len - c->mark;
    char *saved = xmalloc(tail ? tail : 1);
    memcpy(saved, c->out.data + c->mark, tail);
    c->out.len = c->mark;
    for (size_t i = 0; i < c->nents; i++) {
        const struct out_entry *e = &c->ents[i];
        size_t bytes = 0;
        int rc;
        if (e->kind == ENT_SERVER) {
            rc = buf_append(&c->out, saved + (e->start - c->mark), e->end - e->start);
        } else {
            struct http_reply_ctx ctx;
            bool keep = !e->close && e->kind == ENT_HANDLER;
            reply_ctx(c, &ctx, e->minor, e->head, keep);
            rc = http_reply_error(&c->out, &ctx, 500, "Internal error", &bytes);
            if (e->kind == ENT_STREAM) {
                c->streaming = false;
                c->stream_open_due = false;
                c->close_after = true;
                c->linger = false;
            }
        }
        if (rc) {
            conn_kill(c);
            break;
        }
        if (e->kind == ENT_STREAM)
            break;
    }
    free(saved);
}

/* ---- timeouts ----------------------------------------------------------- */

/* The absolute time at which the connection times out; 0 for never. */
static ev_tstamp conn_deadline(const struct http_conn *c)
{
    const struct http_server *s = c->srv;
    ev_tstamp d = 0;
#define EARLIER(t)                                                                                 \
    do {                                                                                           \
        ev_tstamp t_ = (t);                                                                        \
        if (d == 0 || t_ < d)                                                                      \
            d = t_;                                                                                \
    } while (0)
    if (c->dead)
        return 0;
    if (c->lingering)
        return c->linger_since + s->t_linger;
    if (conn_unsent(c) || c->pending)
        EARLIER(c->write_since + s->t_body);
    if (c->streaming || c->deferred)
        return d; /* a deferred answer is bounded by the application */
    if (!c->close_after && !c->in.len) {
        if (c->seen_phase == HTTP_PHASE_HEAD)
            EARLIER(c->phase_since + s->t_header);
        else if (c->seen_phase == HTTP_PHASE_BODY)
            EARLIER(c->phase_since + s->t_body);
        else if (!conn_unsent(c) && !c->pending)
            EARLIER(c->last_activity + (c->served ? s->t_idle : s->t_header));
    }
    if (d == 0)
        d = c->last_activity + s->t_idle; /* safety net */
#undef EARLIER
    return d;
}

static void conn_timer_update(struct http_conn *c)
{
    struct ev_loop *loop = c->srv->loop;
    ev_tstamp d = conn_deadline(c);
    if (d == 0) {
        if (ev_is_active(&c->tmr))
            ev_timer_stop(loop, &c->tmr);
        return;
    }
    if (ev_is_active(&c->tmr) && d >= c->timer_at)
        return; /* lazily: the timer fires early and re-arms */
    ev_tstamp after = d - ev_now(loop);
    if (ev_is_active(&c->tmr))
        ev_timer_stop(loop, &c->tmr);
    ev_timer_set(&c->tmr, after > 0 ? after : 0, 0.);
    ev_timer_start(loop, &c->tmr);
    c->timer_at = d;
}

static void conn_on_timeout(struct http_conn *c)
{
    bool mid_request = c->seen_phase != HTTP_PHASE_IDLE;
    if (!c->lingering && mid_request && !c->close_after && !c->pending && !conn_unsent(c) &&
        !c->streaming) {
        queue_error(c, 408, "Request timeout", false);
        conn_stop_reading(c);
        conn_timer_update(c);
        return;
    }
    conn_kill(c);
}

static void timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)revents;
    struct http_conn *c = container_of(w, struct http_conn, tmr);
    ev_tstamp d = conn_deadline(c);
    if (d == 0)
        return;
    ev_tstamp left = d - ev_now(loop);
    if (left <= 1e-4 && ev_is_active(&c->rio)) {
        /* The loop may have been held past the deadline (a slow store
         * call) while the client's bytes were already waiting, and this
         * timer can run before the read watcher in the same iteration:
         * read them first.  Header and body deadlines count from the
         * phase's start, so a slow client still times out. */
        char one;
        if (recv(c->fd, &one, 1, MSG_PEEK | MSG_DONTWAIT) > 0) {
            conn_on_readable(c);
            if (c->dead || ev_is_active(&c->tmr))
                return; /* gone, or its timer re-armed for the new deadline */
            d = conn_deadline(c);
            if (d == 0)
                return;
            left = d - ev_now(loop);
        }
    }
    if (left <= 1e-4) {
        conn_on_timeout(c);
        return;
    }
    ev_timer_set(&c->tmr, left, 0.);
    ev_timer_start(loop, &c->tmr);
    c->timer_at = d;
}

/* ---- connection lifetime ------------------------------------------------ */

static void conn_kill(struct http_conn *c)
{
    struct http_server *s = c->srv;
    if (c->dead)
        return;
    c->dead = true;
    ev_io_stop(s->loop, &c->rio);
    ev_io_stop(s->loop, &c->wio);
    ev_timer_stop(s->loop, &c->tmr);
    c->reap_next = s->reap_head;
    s->reap_head = c;
}

static void deferred_req_free(struct http_conn *c)
{
    if (!c->d_req)
        return;
    free((char *)c->d_req->path);
    free(c->d_req);
    c->d_req = NULL;
}

static void conn_free(struct http_conn *c)
{
    struct http_server *s = c->srv;
    sj_settle(c); /* no send may be out on the descriptor closed below */
    ev_io_stop(s->loop, &c->rio);
    ev_io_stop(s->loop, &c->wio);
    ev_timer_stop(s->loop, &c->tmr);
    if (c->held) {
        for (size_t g = 0; g < s->nheld; g++) {
            for (struct http_conn **pp = &s->held[g].list; *pp; pp = &(*pp)->pend_next) {
                if (*pp == c) {
                    *pp = c->pend_next;
                    goto unlinked;
                }
            }
        }
    unlinked:
        c->held = false;
        c->pending = false;
    }
    if (c->pending) {
        /* not expected (pending lists are emptied first), but stay safe */
        for (struct http_conn **pp = &s->pend_head; *pp; pp = &(*pp)->pend_next) {
            if (*pp == c) {
                *pp = c->pend_next;
                break;
            }
        }
    }
    if (c->prev)
        c->prev->next = c->next;
    else
        s->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    s->nconns--;
    if (c->stream_accepted) {
        c->stream_accepted = false;
        if (c->stream_closed)
            c->stream_closed(c->stream_arg, c);
    }
    if (c->deferred) {
        c->deferred = false;
        if (c->deferred_closed)
            c->deferred_closed(c->deferred_arg, c);
    }
    deferred_req_free(c);
    close(c->fd);
    http_parse_free(&c->parse);
    buf_free(&c->in);
    buf_free(&c->out);
    free(c->ents);
    free(c);
}

static void conn_new(struct http_server *s, int fd, const struct sockaddr *sa, socklen_t salen)
{
    int one = 1;
    struct http_conn *c = xcalloc(1, sizeof *c);
    if (sa->sa_family == AF_INET || sa->sa_family == AF_INET6)
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->srv = s;
    c->fd = fd;
    net_addr_str(sa, salen, c->peer_ip, sizeof c->peer_ip, &c->peer_port);
    http_parse_init(&c->parse, &s->lim);
    buf_init(&c->in, s->lim.max_header_bytes + s->lim.max_body + 64 * 1024);
    buf_init(&c->out, HTTP_RESPONSE_MAX + 2 * HTTP_OUT_HIGH);
    ev_io_init(&c->rio, read_cb, fd, EV_READ);
    ev_io_init(&c->wio, write_cb, fd, EV_WRITE);
    ev_init(&c->tmr, timer_cb);
    c->last_activity = c->phase_since = c->write_since = ev_now(s->loop);
    c->seen_phase = HTTP_PHASE_IDLE;
    c->next = s->conns;
    if (s->conns)
        s->conns->prev = c;
    s->conns = c;
    s->nconns++;
    ev_io_start(s->loop, &c->rio);
    conn_timer_update(c);
}

/* ---- accepting ---------------------------------------------------------- */

static void listeners_stop(struct http_server *s)
{
    for (size_t i = 0; i < s->nlisten; i++)
        ev_io_stop(s->loop, &s->lio[i]);
}

static void refuse(int fd)
{
    static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\n"
                               "Content-Type: application/json\r\n"
                               "Content-Length: 25\r\n"
                               "Connection: close\r\n\r\n"
                               "{\"error\":\"Server busy\"}\r\n";
    ssize_t w = send(fd, busy, sizeof busy - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)w;
    close(fd);
}

static void accept_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)revents;
    struct http_server *s = w->data;
    for (int i = 0; i < 64; i++) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        int fd = accept4(w->fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
                continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                /* out of descriptors: pause accepting instead of spinning */
                log_warn("accept: %s; pausing new connections", strerror(errno));
                listeners_stop(s);
                ev_timer_set(&s->retry, s->t_retry, 0.);
                ev_timer_start(loop, &s->retry);
            }
            break;
        }
        if (s->nconns >= s->max_conns || s->draining) {
            refuse(fd);
            continue;
        }
        conn_new(s, fd, (struct sockaddr *)&ss, sl);
    }
}

static void retry_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)revents;
    struct http_server *s = w->data;
    if (s->draining)
        return;
    for (size_t i = 0; i < s->nlisten; i++)
        ev_io_start(loop, &s->lio[i]);
}

/* ---- the iteration boundary: commit, write, reap ------------------------ */

/* How long written answers count as clients about to ask again. */
#define EXPECT_TTL_S 0.002

/* Writes an iteration's responses (rewritten to 500 first when failed). */
static void release(struct http_conn *list, bool failed)
{
    for (struct http_conn *c = list; c; c = c->pend_next) {
        c->pending = false;
        c->held = false;
        if (failed && !c->dead && c->nents)
            conn_rewrite_failed(c);
        if (!c->dead && c->nents && !c->close_after && !c->streaming) {
            c->srv->expect++;
            c->srv->expect_at = ev_now(c->srv->loop);
        }
        c->nents = 0;
    }
    for (struct http_conn *c = list; c; c = c->pend_next) {
        if (c->dead)
            continue;
        if (c->stream_open_due) {
            c->stream_open_due = false;
            if (c->stream_open)
                c->stream_open(c->stream_arg, c);
        }
        if (!c->dead)
            conn_flush(c);
    }
}

/* Holds an iteration's responses until its ticket is durable: they stay
 * pending (nothing past the mark is written) and the connections take no
 * further request. */
static void hold(struct http_server *s, struct http_conn *list, uint64_t ticket)
{
    if (s->nheld == s->held_cap) {
        s->held_cap = s->held_cap ? s->held_cap * 2 : 8;
        s->held = xrealloc(s->held, s->held_cap * sizeof *s->held);
    }
    for (struct http_conn *c = list; c; c = c->pend_next)
        c->held = true;
    if (s->early && (!s->h.busy_after_commit || s->h.busy_after_commit(s->h.arg)))
        sj_offer(s, list, ticket);
    s->held[s->nheld].ticket = ticket;
    s->held[s->nheld].list = list;
    s->nheld++;
}

void http_server_durable(struct http_server *s, uint64_t durable, bool failed)
{
    size_t n = 0;
    while (n < s->nheld && (s->held[n].ticket <= durable || failed))
        n++;
    if (n == 0)
        return;
    /* Early writes first: what the writer thread sent counts as sent. */
    bool locked = false;
    for (size_t i = 0; i < n; i++) {
        for (struct http_conn *c = s->held[i].list; c; c = c->pend_next) {
            if (!c->sj_out)
                continue;
            if (!locked) {
                pthread_mutex_lock(&s->sj_mu);
                locked = true;
            }
            sj_settle_locked(s, c);
        }
    }
    if (locked)
        pthread_mutex_unlock(&s->sj_mu);
    /* Writing frees no connection (reaping waits for the prepare phase)
     * and holds nothing new: the groups can be released in place. */
    for (size_t i = 0; i < n; i++)
        release(s->held[i].list, s->held[i].ticket > durable);
    memmove(s->held, s->held + n, (s->nheld - n) * sizeof *s->held);
    s->nheld -= n;
}

size_t http_server_held_count(const struct http_server *s)
{
    size_t n = 0;
    for (size_t g = 0; g < s->nheld; g++)
        for (const struct http_conn *c = s->held[g].list; c; c = c->pend_next)
            n++;
    return n;
}

size_t http_server_expected(struct http_server *s)
{
    if (s->expect && ev_now(s->loop) - s->expect_at > scaled(EXPECT_TTL_S))
        s->expect = 0;
    return s->expect;
}

void http_server_touch(struct http_server *s)
{
    s->handled = true;
}

static void prepare_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
    (void)revents;
    struct http_server *s = container_of(w, struct http_server, prep);
    int crc = 0;
    if (s->handled && s->h.commit_later && !s->draining && s->h.commit_later(s->h.arg))
        goto reap; /* the batch stays open: responses stay pending */
    bool committed = false;
    if (s->handled) {
        s->handled = false;
        committed = true;
        if (s->h.commit)
            crc = s->h.commit(s->h.arg);
        if (crc)
            log_warn("commit failed (%s): answering 500", err_str(crc));
    }
    struct http_conn *list = s->pend_head;
    s->pend_head = NULL;
    uint64_t ticket = 0;
    if (list && !crc && s->h.commit_ticket)
        ticket = s->h.commit_ticket(s->h.arg);
    if (ticket)
        hold(s, list, ticket);
    else
        release(list, crc != 0);
    if (committed && !crc && s->h.after_commit)
        s->h.after_commit(s->h.arg);
reap:
    while (s->reap_head) {
        struct http_conn *c = s->reap_head;
        s->reap_head = c->reap_next;
        conn_free(c);
    }
    if (s->draining && !s->drain_done && s->nconns == 0) {
        s->drain_done = true;
        ev_prepare_stop(loop, &s->prep);
        if (s->drain_cb)
            s->drain_cb(s->drain_arg); /* may free the server: touch nothing after */
    }
}

/* ---- public API ------------------------------------------------------- */

struct http_server *http_server_new(struct ev_loop *loop, const struct http_server_config *cfg,
                                    const struct http_handler *h, char *err, size_t errlen)
{
    static const struct http_server_config defaults = {0};
    struct http_server *s = NULL;
    if (!cfg)
        cfg = &defaults;
    if (!loop || !h || !h->handle) {
        snprintf(err, errlen, "http_server_new: missing loop or handler");
        goto fail;
    }
    s = xcalloc(1, sizeof *s);
    pthread_mutex_init(&s->sj_mu, NULL);
    pthread_cond_init(&s->sj_cv, NULL);
    pthread_cond_init(&s->sj_go, NULL);
    s->loop = loop;
    s->h = *h;
    s->lim.max_header_bytes = cfg->max_header_bytes ? cfg->max_header_bytes : 16 * 1024;
    s->lim.max_headers = cfg->max_headers ? cfg->max_headers : HTTP_MAX_HEADERS_CAP;
    if (s->lim.max_headers > HTTP_MAX_HEADERS_CAP)
        s->lim.max_headers = HTTP_MAX_HEADERS_CAP;
    s->lim.max_body = cfg->max_body ? cfg->max_body : 1024 * 1024;
    s->t_header = scaled(cfg->header_timeout > 0 ? cfg->header_timeout : 10.0);
    s->t_idle = scaled(cfg->idle_timeout > 0 ? cfg->idle_timeout : 60.0);
    s->t_body = scaled(cfg->body_timeout > 0 ? cfg->body_timeout : 30.0);
    s->t_linger = scaled(HTTP_LINGER_SECONDS);
    s->t_retry = scaled(0.1);
    s->max_conns = cfg->max_conns ? cfg->max_conns : 20000;
    s->stream_max = cfg->stream_buffer_max ? cfg->stream_buffer_max : 256 * 1024;
    s->cors_origin = cfg->cors_origin && *cfg->cors_origin ? xstrdup(cfg->cors_origin) : NULL;
    if (s->cors_origin)
        for (char *p = s->cors_origin; *p; p++)
            if (*p == '\r' || *p == '\n')
                *p = ' ';
    buf_init(&s->res.headers, 64 * 1024);
    buf_init(&s->res.body, HTTP_RESPONSE_MAX);

    if (net_listen(cfg->listen && *cfg->listen ? cfg->listen : "127.0.0.1:8080", cfg->reuseport,
                   SOMAXCONN, s->lfd, NET_MAX_LISTEN, &s->nlisten, err, errlen))
        goto fail;
    s->port = net_local_port(s->lfd[0]);
    for (size_t i = 0; i < s->nlisten; i++) {
        ev_io_init(&s->lio[i], accept_cb, s->lfd[i], EV_READ);
        s->lio[i].data = s;
        ev_io_start(loop, &s->lio[i]);
    }
    ev_init(&s->retry, retry_cb);
    s->retry.data = s;
    ev_prepare_init(&s->prep, prepare_cb);
    ev_prepare_start(loop, &s->prep);
    return s;
fail:
    if (s) {
        pthread_mutex_destroy(&s->sj_mu);
        pthread_cond_destroy(&s->sj_cv);
        pthread_cond_destroy(&s->sj_go);
        free(s->cors_origin);
        buf_free(&s->res.headers);
        buf_free(&s->res.body);
        free(s);
    }
    return NULL;
}

int http_server_port(const struct http_server *s)
{
    return s->port;
}

size_t http_server_conn_count(const struct http_server *s)
{
    return s->nconns;
}

static void close_listeners(struct http_server *s)
{
    listeners_stop(s);
    ev_timer_stop(s->loop, &s->retry);
    for (size_t i = 0; i < s->nlisten; i++)
        close(s->lfd[i]);
    s->nlisten = 0;
}

void http_server_drain(struct http_server *s, void (*done_cb)(void *arg), void *arg)
{
    s->drain_cb = done_cb;
    s->drain_arg = arg;
    if (s->draining)
        return;
    s->draining = true;
    close_listeners(s);
    for (struct http_conn *c = s->conns; c; c = c->next) {
        if (c->dead || c->in_handler)
            continue;
        if (c->streaming) {
            conn_kill(c);
            continue;
        }
        if (c->deferred) {
            c->close_after = true; /* its answer says "Connection: close" */
            c->linger = false;
            continue;
        }
        bool mid_request = http_parse_phase(&c->parse) != HTTP_PHASE_IDLE;
        if (mid_request)
            continue; /* its response will say "Connection: close" */
        if (c->pending || conn_unsent(c)) {
            c->close_after = true; /* finish writing, then close */
            continue;
        }
        conn_kill(c);
    }
    /* prepare runs before the loop next waits and reports completion */
}

void http_server_free(struct http_server *s)
{
    if (!s)
        return;
    sj_thread_stop(s); /* before the connections its jobs point into go */
    close_listeners(s);
    ev_prepare_stop(s->loop, &s->prep);
    s->pend_head = NULL;
    s->reap_head = NULL;
    for (struct http_conn *c = s->conns; c; c = c->next)
        c->held = false;
    free(s->held);
    s->held = NULL;
    s->nheld = 0;
    while (s->conns) {
        s->conns->pending = false;
        conn_free(s->conns);
    }
    free(s->sjq);
    pthread_mutex_destroy(&s->sj_mu);
    pthread_cond_destroy(&s->sj_cv);
    pthread_cond_destroy(&s->sj_go);
    free(s->cors_origin);
    buf_free(&s->res.headers);
    buf_free(&s->res.body);
    free(s);
}

int http_conn_send(struct http_conn *c, const void *data, size_t n)
{
    if (c->dead)
        return ERR_IO;
    if (!c->streaming)
        return ERR_INVALID;
    size_t before = conn_unsent(c);
    if (before + n > c->srv->stream_max || buf_append(&c->out, data, n)) {
        conn_kill(c);
        return ERR_TOOBIG;
    }
    if (before == 0)
        c->write_since = ev_now(c->srv->loop); /* the stall clock starts */
    if (!c->pending && !ev_is_active(&c->wio)) {
        if (conn_write(c))
            return ERR_IO;
        conn_after_write(c);
    }
    /* else the prepare phase or the write watcher sends it */
    if (!c->dead)
        conn_timer_update(c);
    return 0;
}

int http_conn_complete(struct http_conn *c, struct http_response *res)
{
    struct http_server *s = c->srv;
    struct http_reply_ctx ctx;
    size_t start, bytes = 0;
    if (!c->deferred || c->in_handler)
        return ERR_INVALID;
    c->deferred = false;
    if (c->dead) {
        /* closing, not freed yet: the caller, who is done with its
         * state, hears of it here, and deferred_closed will not run */
        deferred_req_free(c);
        return ERR_IO;
    }
    if (res->status == 0)
        http_response_error(res, 500, "Internal error");
    bool keep = c->d_keep && !res->close && !s->draining && !c->close_after;
    start = c->out.len;
    reply_ctx(c, &ctx, c->d_minor, c->d_head, keep);
    int rc = http_reply_append(&c->out, &ctx, res, &bytes);
    if (rc) {
        ctx.keep_alive = keep = false;
        rc = http_reply_error(&c->out, &ctx, 500, "Response too large", &bytes);
    }
    if (rc) {
        deferred_req_free(c);
        conn_kill(c);
        return 0;
    }
    queue_entry(c, ENT_HANDLER, start, !keep, c->d_head, c->d_minor);
    if (!keep)
        c->close_after = true;
    s->handled = true; /* the iteration commits before the answer leaves */
    if (c->d_req)
        call_done(c, c->d_req, res, bytes);
    deferred_req_free(c);
    /* pipelined input that waited is resumed from the write watcher
     * (conn_flush); fresh input is read again */
    if (!c->in.len && !c->close_after && !c->peer_eof)
        conn_start_reading(c);
    conn_timer_update(c);
    return 0;
}

void http_conn_close(struct http_conn *c)
{
    conn_kill(c);
}

const char *http_conn_peer(const struct http_conn *c)
{
    return c->peer_ip;
}

size_t http_conn_pending(const struct http_conn *c)
{
    return conn_unsent(c);
}

int http_conn_set_sndbuf(struct http_conn *c, int bytes)
{
    if (c->dead || setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes))
        return ERR_IO;
    return 0;
}
