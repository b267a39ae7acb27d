/*
 * sse_hub.c - Server-Sent Events subscribers fed from the change stream
 * (sse_hub.h).
 *
 * Why one shared position: 10,000 subscribers must not mean 10,000
 * stream readers.  The hub reads each record once, formats its frame once
 * into h->reg.frame and appends the same bytes to every matching connection
 * (redis pubsub does the same with its client-output-buffer limit: the
 * connection's capped output queue is the subscriber's only buffer).
 *
 * Lists: a subscriber is in at most one list at a time - its brand's live
 * list, the all-brands live list, or the replay list while it catches up
 * on a Last-Event-ID.  A subscriber moves from replay to live inside the
 * one callback in which its cursor reaches the hub's position, and the hub
 * position only moves inside sse_hub_pump(): so every record up to the
 * position reached the subscriber through replay, every later one through
 * the live fan-out, and none through both.
 *
 * Gating: a live subscriber also keeps a cursor (the last seq it got) and
 * skips records at or below it; that only matters when a client resumes
 * from an id beyond the hub's position (e.g. the hub has not pumped the
 * newest commit yet).
 *
 * Reads happen only from the pump and from stream_open (called by the
 * server right after its commit), and never beyond the newest sequence a
 * commit callback reported: a subscriber can never see an alert that is
 * not durable.  The pump runs from a prepare watcher just after the HTTP
 * server's (which commits the iteration's batch and writes its answers),
 * so an alert written by a request leaves in the same iteration; and from
 * an ev_idle at top priority (armed by the commit listener, e.g. for the
 * detector's commits later in the prepare phase), which runs before the
 * next iteration's I/O callbacks open a new store batch.
 *
 * Subscriber bookkeeping (brand table, lists, heartbeats, the
 * send-or-drop path, metrics) is shared with sse_poll.c: sse_subs.h.
 */
#include "api/sse_hub.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "api/sse_subs.h"
#include "core/brand.h"
#include "core/jsonw.h"
#include "core/keys.h"
#include "core/timeutil.h"
#include "http/sse.h"
#include "store/store.h"
#include "util/err.h"
#include "util/log.h"
#include "util/timescale.h"
#include "util/xalloc.h"

#define PRODUCT_BUCKETS (2 * SSE_HUB_PRODUCT_CACHE)
/* Wait before retrying a replay blocked on output or a failed read. */
#define RETRY_S 0.05

enum sub_state { SUB_RESERVED = 0, SUB_REPLAY, SUB_LIVE, SUB_DROPPED };
enum replay_result { REPLAY_DONE = 0, REPLAY_MORE, REPLAY_BLOCKED };

struct sse_brand {
    struct sse_bent e;     /* first: the brand table's part (id) */
    struct sse_node *live; /* live subscribers of this brand */
    size_t nsubs;          /* reserved, replaying or live: the limit counts these */
    size_t nscans;         /* live subscribers that want scan events */
};

struct sse_sub {
    struct sse_node node; /* connection, list, heartbeat queue (sse_subs.h) */
    struct sse_hub *hub;
    struct sse_brand *brand; /* NULL: all brands */
    uint64_t cursor;         /* last seq this subscriber is past */
    unsigned char state;     /* enum sub_state */
    bool scans, resume, gap_checked;
};

/* product -> brand cache entry (LRU). */
struct pc_ent {
    struct pc_ent *hnext, *lprev, *lnext;
    uint32_t hash;
    char *brand;
    char pid[];
};

struct sse_hub {
    struct sse_reg reg; /* sink, limits, heartbeats, metrics, frame */
    struct store *store;
    struct ev_loop *loop;
    uint64_t pos;     /* last record fanned out */
    uint64_t durable; /* newest durable seq reported by a commit */
    struct sse_btab bt;
    struct sse_node *all_live;
    size_t nall;       /* all-brands subscribers (reserved .. live) */
    size_t nall_scans; /* live all-brands subscribers with scans */
    size_t nscans;     /* live subscribers with scans, every class */
    struct sse_node *replay;
    struct pc_ent **ptab;
    struct pc_ent *lru_head, *lru_tail;
    size_t npc;
    ev_prepare prep;
    ev_idle idle;
    ev_timer retry;
    ev_timer tail; /* tail mode: polls the stream head (cfg.tail_s) */
    bool tailing;
};

static struct sse_sub *sub_of(struct sse_node *n)
{
    return container_of(n, struct sse_sub, node);
}

/* ---------- brands ---------- */

static struct sse_brand *brand_find(const struct sse_hub *h, const char *id)
{
    struct sse_bent *e = sse_btab_find(&h->bt, id);
    return e ? container_of(e, struct sse_brand, e) : NULL;
}

static struct sse_brand *brand_get(struct sse_hub *h, const char *id)
{
    struct sse_brand *b = brand_find(h, id);
    return b ? b : sse_btab_add(&h->bt, id, sizeof *b);
}

/* Frees the brand entry once nobody holds a slot in it. */
static void brand_release(struct sse_hub *h, struct sse_brand *b)
{
    if (b->nsubs)
        return;
    sse_btab_remove(&h->bt, &b->e);
    free(b);
}

/* ---------- subscriber lists ---------- */

static struct sse_node **list_of(struct sse_hub *h, const struct sse_sub *s)
{
    if (s->state == SUB_REPLAY)
        return &h->replay;
    if (s->state == SUB_LIVE)
        return s->brand ? &s->brand->live : &h->all_live;
    return NULL;
}

static void sub_link(struct sse_hub *h, struct sse_sub *s, enum sub_state st)
{
    s->state = (unsigned char)st;
    sse_list_push(list_of(h, s), &s->node);
    if (st == SUB_LIVE && s->scans) {
        h->nscans++;
        if (s->brand)
            s->brand->nscans++;
        else
            h->nall_scans++;
    }
}

/* Takes s out of its list (if any); its state becomes st. */
static void sub_unlink(struct sse_hub *h, struct sse_sub *s, enum sub_state st)
{
    if (s->node.list) {
        sse_list_remove(&s->node);
        if (s->state == SUB_LIVE && s->scans) {
            h->nscans--;
            if (s->brand)
                s->brand->nscans--;
            else
                h->nall_scans--;
        }
    }
    s->state = (unsigned char)st;
}

/* sse_unlink_fn: a send to n failed. */
static void sub_dropped(void *owner, struct sse_node *n)
{
    sub_unlink(owner, sub_of(n), SUB_DROPPED);
}

static bool sub_send(struct sse_hub *h, struct sse_sub *s, const void *data, size_t n)
{
    return sse_reg_send(&h->reg, &s->node, data, n);
}

/* ---------- records and frames ---------- */

static bool is_alert(const struct stream_record *r)
{
    return (r->kind == STORE_INSERT || r->kind == STORE_MODIFY) && r->image &&
           key_after(r->pk, KEY_PFX_THREAT) && key_after(r->sk, KEY_PFX_ALERT);
}

static bool is_scan(const struct stream_record *r)
{
    return r->kind == STORE_INSERT && r->image && key_after(r->pk, KEY_PFX_PRODUCT) &&
           key_after(r->sk, KEY_PFX_SCAN);
}

/* The alert's brand: from its partition key, else its brandId. */
static int alert_brand(const struct stream_record *r, char *out, size_t n)
{
    char month[8];
    if (!key_parse_threat_pk(r->pk, out, n, month) && brand_id_ok(out))
        return 0;
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(r->image, "brandId");
    if (cJSON_IsString(b) && brand_id_ok(b->valuestring) && strlen(b->valuestring) < n) {
        memcpy(out, b->valuestring, strlen(b->valuestring) + 1);
        return 0;
    }
    return ERR_INVALID;
}

/* The hub's frame = the threat frame of alert record r. */
static int format_threat(struct sse_hub *h, const struct stream_record *r)
{
    char id[24];
    snprintf(id, sizeof id, "%" PRIu64, r->seq);
    return sse_frame_threat(&h->reg.frame, id, r->image);
}

static const char *str_attr(const cJSON *item, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The hub's frame = the scan frame of scan record r (brand may be NULL). */
static int format_scan(struct sse_hub *h, const struct stream_record *r, const char *brand)
{
    struct jsonw w;
    const char *country = str_attr(r->image, "country");
    buf_reset(&h->reg.frame);
    int rc = sse_event_begin(&h->reg.frame, "scan", NULL);
    if (rc)
        return rc;
    jsonw_init(&w, &h->reg.frame);
    jsonw_obj(&w);
    jsonw_kstr(&w, "productId", str_attr(r->image, "productId"));
    jsonw_kstr(&w, "country", country ? country : "Unknown");
    jsonw_kstr(&w, "result", str_attr(r->image, "result"));
    jsonw_kstr(&w, "timestamp", str_attr(r->image, "timestamp"));
    if (brand)
        jsonw_kstr(&w, "brandId", brand);
    jsonw_end(&w);
    rc = jsonw_error(&w);
    if (!rc)
        rc = sse_event_end(&h->reg.frame);
    return rc;
}

/* ---------- product -> brand cache ---------- */

static void pc_lru_remove(struct sse_hub *h, struct pc_ent *e)
{
    if (e->lprev)
        e->lprev->lnext = e->lnext;
    else
        h->lru_head = e->lnext;
    if (e->lnext)
        e->lnext->lprev = e->lprev;
    else
        h->lru_tail = e->lprev;
    e->lprev = e->lnext = NULL;
}

static void pc_lru_front(struct sse_hub *h, struct pc_ent *e)
{
    e->lprev = NULL;
    e->lnext = h->lru_head;
    if (h->lru_head)
        h->lru_head->lprev = e;
    h->lru_head = e;
    if (!h->lru_tail)
        h->lru_tail = e;
}

static void pc_evict(struct sse_hub *h, struct pc_ent *e)
{
    struct pc_ent **pp = &h->ptab[e->hash % PRODUCT_BUCKETS];
    while (*pp && *pp != e)
        pp = &(*pp)->hnext;
    if (*pp)
        *pp = e->hnext;
    pc_lru_remove(h, e);
    h->npc--;
    free(e->brand);
    free(e);
}

/* The brand of product pid, or NULL when unknown (not found, store
 * error).  The result is valid until the next call. */
static const char *product_brand(struct sse_hub *h, const char *pid)
{
    struct key pk;
    cJSON *item = NULL;
    const char *bid;
    uint32_t hv;
    struct pc_ent *e;

    if (!pid || !key_product_pk(&pk, pid))
        return NULL;
    if (!h->ptab)
        h->ptab = xcalloc(PRODUCT_BUCKETS, sizeof *h->ptab);
    hv = sse_hash(pid);
    for (e = h->ptab[hv % PRODUCT_BUCKETS]; e; e = e->hnext)
        if (e->hash == hv && !strcmp(e->pid, pid)) {
            pc_lru_remove(h, e);
            pc_lru_front(h, e);
            return e->brand;
        }
    /* Misses are not cached: a product read fails only when it does not
     * exist yet or the store hiccups, and both can change. */
    if (store_get(h->store, pk.s, KEY_SK_META, false, &item))
        return NULL;
    bid = str_attr(item, "brandId");
    if (!bid || !brand_id_ok(bid)) {
        cJSON_Delete(item);
        return NULL;
    }
    if (h->npc >= SSE_HUB_PRODUCT_CACHE)
        pc_evict(h, h->lru_tail);
    size_t n = strlen(pid);
    e = xcalloc(1, sizeof *e + n + 1);
    memcpy(e->pid, pid, n + 1);
    e->hash = hv;
    e->brand = xstrdup(bid);
    cJSON_Delete(item);
    e->hnext = h->ptab[hv % PRODUCT_BUCKETS];
    h->ptab[hv % PRODUCT_BUCKETS] = e;
    pc_lru_front(h, e);
    h->npc++;
    return e->brand;
}

/* ---------- live fan-out ---------- */

/* Sends the hub's frame to every subscriber of list head past seq (scan
 * frames only to those who asked for scans). */
static void fanout(struct sse_hub *h, struct sse_node *head, uint64_t seq, bool scan)
{
    struct sse_node *n, *next;
    for (n = head; n; n = next) {
        struct sse_sub *s = sub_of(n);
        next = n->next; /* s may leave the list (dropped) */
        if ((scan && !s->scans) || seq <= s->cursor)
            continue;
        s->cursor = seq;
        sse_reg_send_frame(&h->reg, n);
    }
}

static void process_live(struct sse_hub *h, const struct stream_record *r)
{
    char bid[BRAND_ID_MAX + 1];
    struct sse_brand *b;
    int rc;

    if (is_alert(r)) {
        if (alert_brand(r, bid, sizeof bid))
            return;
        b = brand_find(h, bid);
        if ((!b || !b->live) && !h->all_live)
            return; /* nobody listens: no formatting at all */
        rc = format_threat(h, r);
        if (rc) {
            log_msg(LOG_WARN, NULL, "sse: cannot format alert record %" PRIu64 ": %s", r->seq,
                    err_str(rc));
            return;
        }
        if (b)
            fanout(h, b->live, r->seq, false);
        fanout(h, h->all_live, r->seq, false);
    } else if (h->nscans && is_scan(r)) {
        const char *brand = product_brand(h, str_attr(r->image, "productId"));
        b = brand ? brand_find(h, brand) : NULL;
        if ((!b || !b->nscans) && !h->nall_scans)
            return;
        rc = format_scan(h, r, brand);
        if (rc)
            return;
        if (b)
            fanout(h, b->live, r->seq, true);
        fanout(h, h->all_live, r->seq, true);
    }
}

/* ---------- replay (Last-Event-ID) ---------- */

static bool replay_wants(const struct sse_sub *s, const struct stream_record *r)
{
    char bid[BRAND_ID_MAX + 1];
    if (!is_alert(r))
        return false;
    if (!s->brand)
        return true;
    return !alert_brand(r, bid, sizeof bid) && !strcmp(bid, s->brand->e.id);
}

/*
 * Moves replaying subscriber s forward by at most *budget records, up to
 * the hub's position; joins it to the live set when it gets there.
 */
static enum replay_result replay_sub(struct sse_hub *h, struct sse_sub *s, size_t *budget)
{
    while (s->state == SUB_REPLAY && (s->cursor < h->pos) && (*budget > 0)) {
        struct stream_record *recs = NULL;
        size_t n = 0, max = *budget < SSE_HUB_CHUNK ? *budget : SSE_HUB_CHUNK;
        if (h->reg.sink->pending && h->reg.sink->pending(s->node.conn) > h->reg.buffer_max / 2)
            return REPLAY_BLOCKED;
        int rc = store_stream_read(h->store, s->cursor, max, &recs, &n);
        if (rc) {
            log_msg(LOG_WARN, NULL, "sse: replay read failed: %s", err_str(rc));
            return REPLAY_BLOCKED;
        }
        if (!s->gap_checked) {
            /* The SQLite store's sequences are dense: a first record
             * beyond cursor + 1 (or none at all below the position) means
             * the records the client missed were trimmed (retention).  A
             * spurious gap comment would be harmless: clients ignore it. */
            static const char gap[] = ": gap\n\n";
            s->gap_checked = true;
            if ((n == 0 || recs[0].seq > s->cursor + 1) && !sub_send(h, s, gap, sizeof gap - 1)) {
                store_stream_free(recs, n);
                break;
            }
        }
        *budget -= n ? n : 1;
        if (n == 0)
            s->cursor = h->pos;
        for (size_t i = 0; i < n && s->state == SUB_REPLAY; i++) {
            if (recs[i].seq > h->pos) {
                s->cursor = h->pos;
                break;
            }
            if (replay_wants(s, &recs[i])) {
                rc = format_threat(h, &recs[i]);
                if (rc)
                    log_msg(LOG_WARN, NULL, "sse: cannot format alert record %" PRIu64 ": %s",
                            recs[i].seq, err_str(rc));
                else if (!sse_reg_send_frame(&h->reg, &s->node))
                    break;
            }
            s->cursor = recs[i].seq;
        }
        store_stream_free(recs, n);
    }
    if (s->state != SUB_REPLAY)
        return REPLAY_DONE; /* dropped */
    if (s->cursor >= h->pos) {
        sub_unlink(h, s, SUB_RESERVED);
        sub_link(h, s, SUB_LIVE);
        return REPLAY_DONE;
    }
    return REPLAY_MORE;
}

/* ---------- loop integration ---------- */

static void arm_idle(struct sse_hub *h)
{
    if (h->loop && !ev_is_active(&h->idle))
        ev_idle_start(h->loop, &h->idle);
}

static void arm_retry(struct sse_hub *h)
{
    if (h->loop && !ev_is_active(&h->retry)) {
        ev_timer_set(&h->retry, scaled(RETRY_S), 0.);
        ev_timer_start(h->loop, &h->retry);
    }
}

/* Pumps; keeps the idle watcher armed while work remains. */
static void run(struct sse_hub *h)
{
    int rc = sse_hub_pump(h);
    if (rc == 1)
        arm_idle(h);
    else if (ev_is_active(&h->idle))
        ev_idle_stop(h->loop, &h->idle);
    if (rc < 0)
        arm_retry(h);
}

static void idle_cb(struct ev_loop *loop, ev_idle *w, int revents)
{
    (void)loop;
    (void)revents;
    run(container_of(w, struct sse_hub, idle));
}

/* Right after the HTTP server's prepare watcher (priority 0) committed
 * the iteration's batch: push at once, before slower prepare-phase work
 * (the detector's batches) delays the alert. */
static void prep_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
    (void)loop;
    (void)revents;
    struct sse_hub *h = container_of(w, struct sse_hub, prep);
    if (h->pos < h->durable && !store_batch_active(h->store))
        run(h);
}

static void retry_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    arm_idle(container_of(w, struct sse_hub, retry));
}

/* Tail mode: another process commits; notice its new records. */
static void tail_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    struct sse_hub *h = container_of(w, struct sse_hub, tail);
    uint64_t head;
    if (!h->reg.nopen || store_batch_active(h->store))
        return;
    if (store_stream_head(h->store, &head) == 0 && head > h->durable)
        sse_hub_commit_cb(h, head);
}

/* ---------- public API ---------- */

struct sse_hub *sse_hub_new(const struct sse_hub_config *cfg, char *err, size_t errlen)
{
    struct sse_hub *h;
    uint64_t head = 0;
    int rc;
    if (!cfg || !cfg->store) {
        snprintf(err, errlen, "sse hub: no store");
        return NULL;
    }
    rc = store_stream_head(cfg->store, &head);
    if (rc) {
        snprintf(err, errlen, "sse hub: cannot read the stream head: %s", err_str(rc));
        return NULL;
    }
    h = xcalloc(1, sizeof *h);
    h->store = cfg->store;
    h->loop = cfg->loop;
    h->pos = h->durable = head;
    sse_btab_init(&h->bt);
    if (h->loop) {
        ev_idle_init(&h->idle, idle_cb);
        ev_set_priority(&h->idle, EV_MAXPRI); /* before the iteration's I/O */
        ev_prepare_init(&h->prep, prep_cb);
        ev_set_priority(&h->prep, -1); /* after the server's (0), before the detector's */
        ev_prepare_start(h->loop, &h->prep);
        ev_unref(h->loop);
        ev_init(&h->retry, retry_cb);
        if (cfg->tail_s > 0) {
            double every = scaled(cfg->tail_s);
            if (every < 0.01)
                every = 0.01;
            ev_timer_init(&h->tail, tail_cb, every, every);
            ev_timer_start(h->loop, &h->tail);
            ev_unref(h->loop);
            h->tailing = true;
        }
    }
    struct sse_reg_config rc_ = SSE_REG_CONFIG_OF(cfg, sub_dropped, h);
    sse_reg_init(&h->reg, &rc_);
    return h;
}

static void free_list(struct sse_node *n)
{
    while (n) {
        struct sse_node *next = n->next;
        free(sub_of(n));
        n = next;
    }
}

void sse_hub_free(struct sse_hub *h)
{
    if (!h)
        return;
    sse_reg_fini(&h->reg);
    if (h->loop) {
        ev_ref(h->loop);
        ev_prepare_stop(h->loop, &h->prep);
        ev_timer_stop(h->loop, &h->retry);
        ev_idle_stop(h->loop, &h->idle);
        if (h->tailing) {
            ev_ref(h->loop);
            ev_timer_stop(h->loop, &h->tail);
        }
    }
    free_list(h->all_live);
    free_list(h->replay);
    for (size_t i = 0; i < h->bt.nbuckets; i++) {
        struct sse_bent *e = h->bt.tab[i], *next;
        for (; e; e = next) {
            struct sse_brand *b = container_of(e, struct sse_brand, e);
            next = e->hnext;
            free_list(b->live);
            free(b);
        }
    }
    sse_btab_fini(&h->bt);
    while (h->lru_head)
        pc_evict(h, h->lru_head);
    free(h->ptab);
    free(h);
}

void sse_hub_commit_cb(void *arg, uint64_t last_seq)
{
    struct sse_hub *h = arg;
    if (last_seq > h->durable)
        h->durable = last_seq;
    if (h->durable > h->pos)
        arm_idle(h);
}

int sse_hub_reserve(struct sse_hub *h, const struct sse_sub_params *p, struct sse_sub **out)
{
    struct sse_brand *b = NULL;
    *out = NULL;
    if (!p->all) {
        if (!brand_id_ok(p->brand_id))
            return ERR_INVALID;
        b = brand_get(h, p->brand_id);
        if (b->nsubs >= h->reg.max_per_brand) {
            brand_release(h, b);
            return ERR_TOOBIG;
        }
        b->nsubs++;
    } else {
        if (h->nall >= h->reg.max_per_brand)
            return ERR_TOOBIG;
        h->nall++;
    }
    struct sse_sub *s = xcalloc(1, sizeof *s);
    s->hub = h;
    s->brand = b;
    s->node.brand_id = b ? b->e.id : NULL;
    s->scans = p->scans;
    s->resume = p->resume;
    s->cursor = p->resume ? p->last_id : 0;
    s->state = SUB_RESERVED;
    *out = s;
    return 0;
}

void sse_hub_stream_open(void *arg, struct http_conn *c)
{
    struct sse_sub *s = arg;
    struct sse_hub *h = s->hub;
    size_t budget = SSE_HUB_PUMP_BUDGET;
    if (s->state != SUB_RESERVED || s->node.conn)
        return;
    if (s->resume && s->cursor > h->durable)
        s->resume = false; /* an id this stream never issued (another database?) */
    sse_reg_open(&h->reg, &s->node, c);
    if (!s->resume || s->cursor >= h->pos) {
        if (!s->resume)
            s->cursor = h->pos; /* no backlog */
        sub_link(h, s, SUB_LIVE);
        return;
    }
    sub_link(h, s, SUB_REPLAY);
    switch (replay_sub(h, s, &budget)) {
    case REPLAY_MORE:
        arm_idle(h);
        break;
    case REPLAY_BLOCKED:
        arm_retry(h);
        break;
    case REPLAY_DONE:
        break;
    }
}

void sse_hub_stream_closed(void *arg, struct http_conn *c)
{
    (void)c;
    struct sse_sub *s = arg;
    struct sse_hub *h = s->hub;
    sub_unlink(h, s, SUB_DROPPED);
    sse_reg_close(&h->reg, &s->node);
    if (s->brand) {
        s->brand->nsubs--;
        brand_release(h, s->brand);
    } else {
        h->nall--;
    }
    free(s);
}

int sse_hub_pump(struct sse_hub *h)
{
    size_t budget = SSE_HUB_PUMP_BUDGET;
    bool more = false, blocked = false;

    if (h->reg.nopen == 0) {
        /* Nobody listens: nothing to format.  A subscriber that comes
         * later starts at the position then, or replays from its
         * Last-Event-ID with its own cursor. */
        h->pos = h->durable;
        return 0;
    }
    /* Only alert writes (and scan inserts when someone follows scans)
     * are parsed; the store skips every other record in SQL. */
    static const char *const alerts_only[] = {KEY_PFX_ALERT};
    static const char *const alerts_scans[] = {KEY_PFX_ALERT, KEY_PFX_SCAN};
    struct stream_filter f = {
        .kinds = STREAM_KIND_BIT(STORE_INSERT) | STREAM_KIND_BIT(STORE_MODIFY),
        .sk_prefixes = h->nscans ? alerts_scans : alerts_only,
        .nsk = h->nscans ? 2 : 1,
    };
    while (h->pos < h->durable && budget > 0) {
        struct stream_record *recs = NULL;
        size_t n = 0, examined = 0, max = budget < SSE_HUB_CHUNK ? budget : SSE_HUB_CHUNK;
        uint64_t last = h->pos;
        int rc = store_stream_read_filtered(h->store, h->pos, max, &f, &recs, &n, &last, &examined);
        if (rc) {
            log_msg(LOG_WARN, NULL, "sse: stream read failed: %s", err_str(rc));
            return rc;
        }
        if (examined == 0) {
            /* nothing (left) at or below the durable sequence: trimmed */
            store_stream_free(recs, n);
            h->pos = h->durable;
            break;
        }
        for (size_t i = 0; i < n && recs[i].seq <= h->durable; i++)
            process_live(h, &recs[i]);
        h->pos = last < h->durable ? last : h->durable;
        store_stream_free(recs, n);
        budget -= examined;
    }
    struct sse_node *n, *next;
    for (n = h->replay; n; n = next) {
        next = n->next;
        if (budget == 0) {
            more = true;
            break;
        }
        enum replay_result r = replay_sub(h, sub_of(n), &budget);
        if (r == REPLAY_MORE)
            more = true;
        else if (r == REPLAY_BLOCKED)
            blocked = true;
    }
    if (blocked)
        arm_retry(h);
    return more || h->pos < h->durable ? 1 : 0;
}

void sse_hub_heartbeat(struct sse_hub *h, int64_t now_ms)
{
    sse_reg_heartbeat(&h->reg, now_ms);
}

long sse_hub_retry_ms(void)
{
    double f = time_scale();
    if (f >= 1.0)
        return SSE_RETRY_MS;
    long ms = lround(SSE_RETRY_MS * f);
    return ms < 1 ? 1 : ms;
}

size_t sse_hub_clients(const struct sse_hub *h)
{
    return h->reg.nopen;
}

uint64_t sse_hub_dropped(const struct sse_hub *h)
{
    return h->reg.dropped;
}

uint64_t sse_hub_position(const struct sse_hub *h)
{
    return h->pos;
}
