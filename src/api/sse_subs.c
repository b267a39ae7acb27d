/*
 * sse_subs.c - subscriber registry and fan-out helpers shared by the two
 * SSE hubs (sse_subs.h).
 *
 * The heartbeat queue keeps every open subscriber ordered by the time its
 * next heartbeat is due: a subscriber served goes to the tail, due one
 * period later, so the queue stays sorted without any search.  The timer
 * ticks ten times per period and serves only the head of the queue that
 * is due: 10,000 subscribers cost ten small slices per period instead of
 * one long stall of the loop.
 */
#include "api/sse_subs.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api/metrics.h"
#include "core/alert.h"
#include "core/canon.h"
#include "core/jsonw.h"
#include "core/timeutil.h"
#include "http/http.h"
#include "http/sse.h"
#include "store/store.h"
#include "util/err.h"
#include "util/log.h"
#include "util/timescale.h"
#include "util/xalloc.h"

/* Largest frame: an alert item is at most STORE_ITEM_MAX bytes; its JSON
 * can grow by escaping, so leave generous room. */
#define FRAME_MAX         (4 * STORE_ITEM_MAX)
#define BRAND_BUCKETS_MIN 64

/* The default sink: the HTTP server. */
static const struct sse_sink_ops http_sink = {
    .send = http_conn_send,
    .close = http_conn_close,
    .pending = http_conn_pending,
    .peer = http_conn_peer,
    .set_sndbuf = http_conn_set_sndbuf,
};

uint32_t sse_hash(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 16777619u;
    }
    return h;
}

/* ---------- owner lists ---------- */

void sse_list_push(struct sse_node **head, struct sse_node *n)
{
    n->list = head;
    n->prev = NULL;
    n->next = *head;
    if (*head)
        (*head)->prev = n;
    *head = n;
}

void sse_list_remove(struct sse_node *n)
{
    if (n->list) {
        if (n->prev)
            n->prev->next = n->next;
        else
            *n->list = n->next;
        if (n->next)
            n->next->prev = n->prev;
    }
    n->prev = n->next = NULL;
    n->list = NULL;
}

/* ---------- metrics ---------- */

/* metrics_source_fn: the dropped-clients counter (the clients gauge is
 * metrics.c's own). */
static int metrics_cb(void *arg, struct store *s, struct buf *out)
{
    (void)s;
    const struct sse_reg *r = arg;
    return buf_printf(out,
                      "# HELP genuproof_sse_dropped_total SSE clients dropped for a full output "
                      "buffer.\n"
                      "# TYPE genuproof_sse_dropped_total counter\n"
                      "genuproof_sse_dropped_total %" PRIu64 "\n",
                      r->dropped);
}

static void update_gauge(struct sse_reg *r)
{
    if (r->metrics)
        metrics_set_sse_clients(r->metrics, (long)r->nopen);
}

/* ---------- heartbeat queue ---------- */

static void hbq_append(struct sse_reg *r, struct sse_node *n, int64_t due)
{
    n->hb_due = due;
    n->hnext = NULL;
    n->hprev = r->hb_tail;
    if (r->hb_tail)
        r->hb_tail->hnext = n;
    else
        r->hb_head = n;
    r->hb_tail = n;
    n->in_hbq = true;
    if (r->loop && !ev_is_active(&r->hb))
        ev_timer_start(r->loop, &r->hb);
}

static void hbq_unlink(struct sse_reg *r, struct sse_node *n)
{
    if (n->hprev)
        n->hprev->hnext = n->hnext;
    else
        r->hb_head = n->hnext;
    if (n->hnext)
        n->hnext->hprev = n->hprev;
    else
        r->hb_tail = n->hprev;
    n->hprev = n->hnext = NULL;
    n->in_hbq = false;
}

/* Out of the queue (if in it); the timer stops with the last one. */
static void hbq_remove(struct sse_reg *r, struct sse_node *n)
{
    if (!n->in_hbq)
        return;
    hbq_unlink(r, n);
    if (r->loop && !r->hb_head && ev_is_active(&r->hb))
        ev_timer_stop(r->loop, &r->hb);
}

static void hb_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    sse_reg_heartbeat(container_of(w, struct sse_reg, hb), time_now_ms());
}

/* ---------- registry ---------- */

void sse_reg_init(struct sse_reg *r, const struct sse_reg_config *cfg)
{
    memset(r, 0, sizeof *r);
    r->loop = cfg->loop;
    r->metrics = cfg->metrics;
    r->sink = cfg->sink ? cfg->sink : &http_sink;
    r->max_per_brand = cfg->max_per_brand ? cfg->max_per_brand : SSE_HUB_MAX_PER_BRAND;
    r->buffer_max = cfg->buffer_max ? cfg->buffer_max : 256 * 1024;
    r->sndbuf = cfg->sndbuf ? cfg->sndbuf : SSE_HUB_SNDBUF;
    r->hb_ms =
        llround(1000.0 * scaled(cfg->heartbeat_s > 0 ? cfg->heartbeat_s : SSE_HUB_HEARTBEAT_S));
    if (r->hb_ms < 10)
        r->hb_ms = 10;
    r->unlink = cfg->unlink;
    r->owner = cfg->owner;
    buf_init(&r->frame, FRAME_MAX);
    if (r->loop) {
        double tick = (double)r->hb_ms / 1000.0 / 10.0;
        ev_timer_init(&r->hb, hb_cb, tick, tick); /* runs while anyone is subscribed */
    }
    if (r->metrics)
        metrics_add_source(r->metrics, metrics_cb, r);
    update_gauge(r);
}

void sse_reg_fini(struct sse_reg *r)
{
    if (r->metrics) {
        metrics_set_sse_clients(r->metrics, 0);
        metrics_remove_source(r->metrics, metrics_cb, r);
    }
    if (r->loop)
        ev_timer_stop(r->loop, &r->hb);
    buf_free(&r->frame);
}

void sse_reg_open(struct sse_reg *r, struct sse_node *n, struct http_conn *c)
{
    n->conn = c;
    r->nopen++;
    update_gauge(r);
    hbq_append(r, n, time_now_ms() + r->hb_ms);
    if (r->sndbuf > 0 && r->sink->set_sndbuf)
        r->sink->set_sndbuf(c, r->sndbuf); /* best effort */
}

void sse_reg_close(struct sse_reg *r, struct sse_node *n)
{
    hbq_remove(r, n);
    if (n->conn) {
        r->nopen--;
        update_gauge(r);
    }
}

/* A send failed: the connection is closing (the server reports
 * stream_closed later).  ERR_TOOBIG means the client could not keep up. */
static void drop(struct sse_reg *r, struct sse_node *n, int rc)
{
    if (rc == ERR_TOOBIG) {
        struct buf x = BUF_INIT(1024);
        int e = buf_puts(&x, "\"brandId\":");
        if (!e)
            e = n->brand_id ? canon_cstring(&x, n->brand_id) : buf_puts(&x, "null");
        if (!e)
            e = buf_puts(&x, ",\"peer\":");
        if (!e)
            e = canon_cstring(&x, r->sink->peer ? r->sink->peer(n->conn) : "");
        if (!e)
            e = buf_printf(&x, ",\"bufferMax\":%zu", r->buffer_max);
        log_msg(LOG_WARN, e ? NULL : buf_cstr(&x), "sse client dropped");
        buf_free(&x);
        r->dropped++;
    }
    r->unlink(r->owner, n);
    hbq_remove(r, n);
}

bool sse_reg_send(struct sse_reg *r, struct sse_node *n, const void *data, size_t len)
{
    int rc = r->sink->send(n->conn, data, len);
    if (rc)
        drop(r, n, rc);
    return rc == 0;
}

bool sse_reg_send_frame(struct sse_reg *r, struct sse_node *n)
{
    return sse_reg_send(r, n, r->frame.data, r->frame.len);
}

void sse_reg_heartbeat(struct sse_reg *r, int64_t now_ms)
{
    char iso[ISO_LEN + 1];
    if (!r->hb_head || r->hb_head->hb_due > now_ms)
        return;
    time_iso(now_ms, iso);
    buf_reset(&r->frame);
    if (sse_event_begin(&r->frame, "heartbeat", NULL) ||
        buf_printf(&r->frame, "{\"ts\":\"%s\"}", iso) || sse_event_end(&r->frame))
        return;
    /* each one served goes to the tail, due later than now: this ends */
    while (r->hb_head && r->hb_head->hb_due <= now_ms) {
        struct sse_node *n = r->hb_head;
        hbq_unlink(r, n); /* to the tail, the timer keeps running */
        hbq_append(r, n, now_ms + r->hb_ms);
        sse_reg_send_frame(r, n);
    }
}

int sse_frame_threat(struct buf *frame, const char *event_id, const cJSON *item)
{
    struct jsonw w;
    buf_reset(frame);
    int rc = sse_event_begin(frame, "threat", event_id);
    if (rc)
        return rc;
    jsonw_init(&w, frame);
    alert_write_json(&w, item);
    rc = jsonw_error(&w);
    if (!rc)
        rc = sse_event_end(frame);
    return rc;
}

/* ---------- brand table ---------- */

void sse_btab_init(struct sse_btab *t)
{
    t->nbuckets = BRAND_BUCKETS_MIN;
    t->n = 0;
    t->tab = xcalloc(t->nbuckets, sizeof *t->tab);
}

void sse_btab_fini(struct sse_btab *t)
{
    free(t->tab);
    t->tab = NULL;
    t->nbuckets = t->n = 0;
}

struct sse_bent *sse_btab_find(const struct sse_btab *t, const char *id)
{
    uint32_t hv = sse_hash(id);
    for (struct sse_bent *e = t->tab[hv & (t->nbuckets - 1)]; e; e = e->hnext)
        if (e->hash == hv && !strcmp(e->id, id))
            return e;
    return NULL;
}

static void btab_rehash(struct sse_btab *t, size_t nbuckets)
{
    struct sse_bent **nt = xcalloc(nbuckets, sizeof *nt);
    for (size_t i = 0; i < t->nbuckets; i++) {
        struct sse_bent *e = t->tab[i], *next;
        for (; e; e = next) {
            next = e->hnext;
            e->hnext = nt[e->hash & (nbuckets - 1)];
            nt[e->hash & (nbuckets - 1)] = e;
        }
    }
    free(t->tab);
    t->tab = nt;
    t->nbuckets = nbuckets;
}

void *sse_btab_add(struct sse_btab *t, const char *id, size_t size)
{
    if (t->n >= t->nbuckets)
        btab_rehash(t, t->nbuckets * 2);
    size_t n = strlen(id);
    struct sse_bent *e = xcalloc(1, size + n + 1);
    e->id = (char *)e + size;
    memcpy(e->id, id, n + 1);
    e->hash = sse_hash(id);
    e->hnext = t->tab[e->hash & (t->nbuckets - 1)];
    t->tab[e->hash & (t->nbuckets - 1)] = e;
    t->n++;
    return e;
}

void sse_btab_remove(struct sse_btab *t, struct sse_bent *e)
{
    struct sse_bent **pp = &t->tab[e->hash & (t->nbuckets - 1)];
    while (*pp && *pp != e)
        pp = &(*pp)->hnext;
    if (*pp) {
        *pp = e->hnext;
        t->n--;
    }
    e->hnext = NULL;
}
