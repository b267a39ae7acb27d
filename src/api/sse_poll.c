/*
 * sse_poll.c - Server-Sent Events subscribers fed by polling GSI1
 * (sse_poll.h).
 *
 * Per brand with subscribers there is one struct poll_brand: its live
 * subscribers, one ev_timer, the watermark (newest write time seen) and
 * the set of alert ids already fanned out.  A poll queries the window
 * [watermark - overlap, end] of the brand's alerts in GSI1 order; an id
 * in the set is dropped, any other alert is added to the set, moves the
 * watermark and is formatted once into the shared frame, whose bytes go to every
 * live subscriber.  Set entries are evicted once their write time falls
 * below the window's lower bound: no later query can return them.
 *
 * Starting a brand ("priming") runs the same query from now - overlap and
 * only fills the set: what is already in the index is old news for a new
 * subscriber.  Replay after a Last-Event-ID happens inside stream_open,
 * in one go, before the subscriber joins the live list; since no poll can
 * run in between, an alert of the replay range is either sent by the
 * replay (it is older than the brand's window, or the brand already sent
 * it to others) or left to the brand's next poll (it is in the window and
 * not yet seen), never both.
 *
 * All-brands subscribers sit in their own live list and get the frames of
 * every polled brand; while any is open, the brands of BRAND_INDEX are
 * "pinned" (polled even without subscribers of their own).
 *
 * Subscriber bookkeeping (brand table, lists, heartbeats, the
 * send-or-drop path, metrics) is shared with sse_hub.c: sse_subs.h.
 */
#include "api/sse_poll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "api/sse_subs.h"
#include "core/brand.h"
#include "core/keys.h"
#include "core/timeutil.h"
#include "store/store.h"
#include "util/err.h"
#include "util/log.h"
#include "util/timescale.h"
#include "util/xalloc.h"

#define SEEN_BUCKETS 1024
/* "<24-char write time>_<id>" */
#define EVENT_ID_MAX (ISO_LEN + 1 + SSE_POLL_ALERT_ID_MAX)

enum sub_state { SUB_RESERVED = 0, SUB_LIVE, SUB_DROPPED };

struct seen {
    struct seen *next;
    int64_t wt_ms;
    uint32_t hash;
    char id[];
};

struct poll_brand {
    struct sse_bent e; /* first: the brand table's part (id) */
    struct sse_poll *hub;
    struct sse_node *live; /* open subscribers */
    size_t nsubs;          /* reserved or open: the limit counts these */
    size_t nopen;
    bool primed;          /* the set holds what was in the window when polling started */
    bool pinned;          /* in the brand list of the all-brands subscribers */
    bool failing;         /* the last query failed (logged once per streak) */
    int64_t wm_ms;        /* watermark: newest write time seen */
    char *cursor;         /* next page of an unfinished poll, or NULL */
    char lo[ISO_LEN + 1]; /* lower bound of the poll the cursor belongs to */
    struct seen *seen[SEEN_BUCKETS];
    size_t nseen;
    int64_t seen_min_ms; /* no entry is older (valid while nseen > 0) */
    ev_timer timer;
};

struct sse_psub {
    struct sse_node node; /* connection, live list, heartbeat queue (sse_subs.h) */
    struct sse_poll *hub;
    struct sse_psub *aprev, *anext; /* every subscriber of the hub (for sse_poll_free) */
    struct poll_brand *brand;       /* NULL: all brands */
    unsigned char state;            /* enum sub_state */
    bool resume, scans;
    char resume_wt[ISO_LEN + 1];
    char resume_id[SSE_POLL_ALERT_ID_MAX + 1]; /* never sent to this subscriber */
};

struct sse_poll {
    struct sse_reg reg; /* sink, limits, heartbeats, metrics, frame */
    struct store *store;
    struct ev_loop *loop;
    double poll_s;
    int64_t overlap_ms;
    struct sse_btab bt;
    struct sse_psub *all;      /* every reserved subscriber, any state */
    struct sse_node *all_live; /* open all-brands subscribers */
    size_t nall;               /* all-brands subscribers, reserved or open */
    size_t nall_open;
    double brands_s; /* brand list refresh period (scaled) */
    ev_timer brands; /* refreshes the brand list while nall_open > 0 */
    uint64_t queries;
};

static struct sse_psub *sub_of(struct sse_node *n)
{
    return container_of(n, struct sse_psub, node);
}

static struct poll_brand *brand_of(struct sse_bent *e)
{
    return container_of(e, struct poll_brand, e);
}

/* ---------- the seen set ---------- */

static bool seen_has(const struct poll_brand *b, const char *id)
{
    uint32_t hv = sse_hash(id);
    for (const struct seen *e = b->seen[hv % SEEN_BUCKETS]; e; e = e->next)
        if (e->hash == hv && !strcmp(e->id, id))
            return true;
    return false;
}

/* Removes entries written before lo_ms (all when lo_ms is INT64_MAX). */
static void seen_sweep(struct poll_brand *b, int64_t lo_ms)
{
    int64_t min = INT64_MAX;
    if (!b->nseen || b->seen_min_ms >= lo_ms)
        return; /* nothing to evict: the usual case, no walk */
    for (size_t i = 0; i < SEEN_BUCKETS && b->nseen; i++) {
        struct seen **pp = &b->seen[i];
        while (*pp) {
            struct seen *e = *pp;
            if (e->wt_ms < lo_ms) {
                *pp = e->next;
                free(e);
                b->nseen--;
            } else {
                if (e->wt_ms < min)
                    min = e->wt_ms;
                pp = &e->next;
            }
        }
    }
    b->seen_min_ms = min;
}

/* Drops the entry with the oldest write time (the set is full). */
static void seen_evict_oldest(struct poll_brand *b)
{
    struct seen **victim = NULL;
    for (size_t i = 0; i < SEEN_BUCKETS; i++)
        for (struct seen **pp = &b->seen[i]; *pp; pp = &(*pp)->next)
            if (!victim || (*pp)->wt_ms < (*victim)->wt_ms)
                victim = pp;
    if (victim) {
        struct seen *e = *victim;
        *victim = e->next;
        free(e);
        b->nseen--;
    }
}

static void seen_add(struct poll_brand *b, const char *id, int64_t wt_ms)
{
    if (b->nseen >= SSE_POLL_SEEN_MAX) {
        log_msg(LOG_WARN, NULL, "sse poll: more than %d alerts in the overlap window of one brand",
                SSE_POLL_SEEN_MAX);
        seen_evict_oldest(b);
    }
    if (!b->nseen || wt_ms < b->seen_min_ms)
        b->seen_min_ms = wt_ms;
    size_t n = strlen(id);
    struct seen *e = xcalloc(1, sizeof *e + n + 1);
    memcpy(e->id, id, n + 1);
    e->hash = sse_hash(id);
    e->wt_ms = wt_ms;
    e->next = b->seen[e->hash % SEEN_BUCKETS];
    b->seen[e->hash % SEEN_BUCKETS] = e;
    b->nseen++;
}

/* ---------- brands ---------- */

static struct poll_brand *brand_find(const struct sse_poll *h, const char *id)
{
    struct sse_bent *e = sse_btab_find(&h->bt, id);
    return e ? brand_of(e) : NULL;
}

static void poll_cb(struct ev_loop *loop, ev_timer *w, int revents);

static struct poll_brand *brand_get(struct sse_poll *h, const char *id)
{
    struct poll_brand *b = brand_find(h, id);
    if (b)
        return b;
    b = sse_btab_add(&h->bt, id, sizeof *b);
    b->hub = h;
    ev_timer_init(&b->timer, poll_cb, h->poll_s, h->poll_s);
    return b;
}

/* Whether the brand must be polled: it has open subscribers, or it is in
 * the brand list while all-brands subscribers are open. */
static bool brand_wanted(const struct sse_poll *h, const struct poll_brand *b)
{
    return b->nopen || (b->pinned && h->nall_open);
}

/* Stops polling the brand (its last subscriber left): the set and the
 * watermark are dropped, a later subscriber primes again. */
static void brand_stop(struct sse_poll *h, struct poll_brand *b)
{
    if (h->loop && ev_is_active(&b->timer))
        ev_timer_stop(h->loop, &b->timer);
    b->primed = false;
    free(b->cursor);
    b->cursor = NULL;
    seen_sweep(b, INT64_MAX);
}

static void brand_destroy(struct poll_brand *b)
{
    seen_sweep(b, INT64_MAX);
    free(b->cursor);
    free(b);
}

/* Frees the brand entry once nobody holds a slot in it. */
static void brand_release(struct sse_poll *h, struct poll_brand *b)
{
    if (b->nsubs || b->pinned)
        return;
    brand_stop(h, b);
    sse_btab_remove(&h->bt, &b->e);
    brand_destroy(b);
}

/* ---------- subscribers ---------- */

static struct sse_node **live_list(struct sse_poll *h, struct sse_psub *s)
{
    return s->brand ? &s->brand->live : &h->all_live;
}

static void sub_link(struct sse_poll *h, struct sse_psub *s)
{
    s->state = SUB_LIVE;
    sse_list_push(live_list(h, s), &s->node);
}

/* Out of the live list (if in it); the state becomes SUB_DROPPED. */
static void sub_unlink(struct sse_psub *s)
{
    sse_list_remove(&s->node);
    s->state = SUB_DROPPED;
}

/* sse_unlink_fn: a send to n failed. */
static void sub_dropped(void *owner, struct sse_node *n)
{
    (void)owner;
    sub_unlink(sub_of(n));
}

static bool sub_send(struct sse_poll *h, struct sse_psub *s, const void *data, size_t n)
{
    return sse_reg_send(&h->reg, &s->node, data, n);
}

/* ---------- items and frames ---------- */

/* An alert item's GSI1SK parts; false for anything else. */
static bool item_parts(const cJSON *item, const char **gsk, char wt[ISO_LEN + 1],
                       char id[SSE_POLL_ALERT_ID_MAX + 1])
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, "GSI1SK");
    if (!cJSON_IsString(v))
        return false;
    *gsk = v->valuestring;
    return key_parse_threat_gsi1sk(v->valuestring, wt, id, SSE_POLL_ALERT_ID_MAX + 1) == 0;
}

/* The write time in ms; a time that does not parse counts as fallback. */
static int64_t wt_ms_of(const char *wt, int64_t fallback)
{
    int64_t ms;
    return time_parse_iso(wt, &ms) == 0 ? ms : fallback;
}

/* The hub's frame = the threat frame of item. */
static int format_threat(struct sse_poll *h, const cJSON *item, const char *wt, const char *id)
{
    char eid[EVENT_ID_MAX + 1];
    snprintf(eid, sizeof eid, "%s_%s", wt, id);
    return sse_frame_threat(&h->reg.frame, eid, item);
}

/* One page of the brand's alerts from GSI1SK lo (a key) upward. */
static int query_page(struct sse_poll *h, struct poll_brand *b, const char *lo, const char *start,
                      struct store_result *res)
{
    struct key pk, hi;
    struct store_query q = {
        .index = STORE_INDEX_GSI1,
        .pk = key_brand_pk(&pk, b->e.id),
        .sk_op = STORE_SK_BETWEEN,
        .sk = lo,
        .sk2 = key_threat_gsi1sk_hi(&hi),
        .limit = SSE_POLL_PAGE,
        .forward = true,
        .start = start,
    };
    memset(res, 0, sizeof *res);
    if (!q.pk || !q.sk || !q.sk2)
        return ERR_INVALID;
    h->queries++;
    return store_query(h->store, &q, res);
}

static void query_failed(struct poll_brand *b, int rc)
{
    if (!b->failing)
        log_msg(LOG_WARN, NULL, "sse poll: GSI1 query for brand %s failed: %s", b->e.id,
                err_str(rc));
    b->failing = true;
}

/* A new alert of a poll: into the set, the watermark, every live
 * subscriber. */
static void fan_out(struct sse_poll *h, struct poll_brand *b, const cJSON *item, const char *wt,
                    const char *id)
{
    int64_t ms = wt_ms_of(wt, b->wm_ms);
    seen_add(b, id, ms);
    if (ms > b->wm_ms)
        b->wm_ms = ms;
    int rc = format_threat(h, item, wt, id);
    if (rc) {
        log_msg(LOG_WARN, NULL, "sse poll: cannot format alert %s: %s", id, err_str(rc));
        return;
    }
    struct sse_node *n, *next;
    for (n = b->live; n; n = next) {
        struct sse_psub *s = sub_of(n);
        next = n->next; /* s may leave the list */
        if (s->resume_id[0] && !strcmp(s->resume_id, id))
            continue;
        sse_reg_send_frame(&h->reg, n);
    }
    for (n = h->all_live; n; n = next) {
        next = n->next;
        sse_reg_send_frame(&h->reg, n);
    }
}

/* Starts the brand: what the window holds now counts as seen.  0 or the
 * query's error (the brand stays unprimed; the next tick retries). */
static int prime_brand(struct sse_poll *h, struct poll_brand *b)
{
    char lo_iso[ISO_LEN + 1], wt[ISO_LEN + 1], id[SSE_POLL_ALERT_ID_MAX + 1];
    struct key lo;
    char *cursor = NULL;
    int64_t now = time_now_ms();
    int rc = 0;

    seen_sweep(b, INT64_MAX);
    b->wm_ms = now;
    time_iso(now - h->overlap_ms, lo_iso);
    if (!key_threat_gsi1sk_lo(&lo, lo_iso))
        return ERR_INTERNAL;
    do {
        struct store_result res;
        rc = query_page(h, b, lo.s, cursor, &res);
        free(cursor);
        cursor = NULL;
        if (rc) {
            query_failed(b, rc);
            break;
        }
        const cJSON *it;
        const char *gsk;
        cJSON_ArrayForEach(it, res.items)
        {
            if (!item_parts(it, &gsk, wt, id) || seen_has(b, id))
                continue;
            int64_t ms = wt_ms_of(wt, now);
            seen_add(b, id, ms);
            if (ms > b->wm_ms)
                b->wm_ms = ms;
        }
        cursor = res.next;
        res.next = NULL;
        store_result_free(&res);
    } while (cursor && b->nseen < SSE_POLL_SEEN_MAX);
    free(cursor);
    if (rc)
        return rc;
    b->failing = false;
    b->primed = true;
    return 0;
}

/* One poll of one brand: up to SSE_POLL_PAGES pages of its window (an
 * unfinished window continues at the next poll). */
static int poll_brand(struct sse_poll *h, struct poll_brand *b)
{
    char wt[ISO_LEN + 1], id[SSE_POLL_ALERT_ID_MAX + 1];
    struct key lo;
    int rc = 0;

    if (!brand_wanted(h, b))
        return 0;
    if (!b->primed)
        return prime_brand(h, b);
    if (!b->cursor)
        time_iso(b->wm_ms - h->overlap_ms, b->lo);
    if (!key_threat_gsi1sk_lo(&lo, b->lo))
        return ERR_INTERNAL;
    for (int page = 0; page < SSE_POLL_PAGES && brand_wanted(h, b); page++) {
        struct store_result res;
        rc = query_page(h, b, lo.s, b->cursor, &res);
        free(b->cursor);
        b->cursor = NULL;
        if (rc) {
            query_failed(b, rc);
            return rc;
        }
        b->failing = false;
        const cJSON *it;
        const char *gsk;
        cJSON_ArrayForEach(it, res.items)
        {
            if (item_parts(it, &gsk, wt, id) && !seen_has(b, id))
                fan_out(h, b, it, wt, id);
        }
        b->cursor = res.next;
        res.next = NULL;
        store_result_free(&res);
        if (!b->cursor)
            break;
    }
    if (!b->cursor)
        seen_sweep(b, b->wm_ms - h->overlap_ms);
    return 0;
}

/*
 * Replays to s the alerts after its Last-Event-ID (see the file
 * comment).  Stops at SSE_POLL_REPLAY_MAX alerts or half the output cap,
 * then sends ": gap".  False when s was dropped.
 */
static bool replay(struct sse_poll *h, struct sse_psub *s)
{
    static const char gap[] = ": gap\n\n";
    char wt[ISO_LEN + 1], id[SSE_POLL_ALERT_ID_MAX + 1];
    struct poll_brand *b = s->brand;
    struct key from;
    char *cursor = NULL;
    int64_t lo_b = b->wm_ms - h->overlap_ms;
    size_t sent = 0;
    bool more = false;
    int rc;

    if (!key_threat_gsi1sk(&from, s->resume_wt, s->resume_id))
        return true;
    do {
        struct store_result res;
        rc = query_page(h, b, from.s, cursor, &res);
        free(cursor);
        cursor = NULL;
        if (rc) {
            query_failed(b, rc);
            more = true;
            break;
        }
        const cJSON *it;
        const char *gsk;
        cJSON_ArrayForEach(it, res.items)
        {
            if (!item_parts(it, &gsk, wt, id) || !strcmp(gsk, from.s))
                continue;
            if (wt_ms_of(wt, INT64_MIN) >= lo_b && !seen_has(b, id))
                continue; /* the brand's next poll sends it */
            if (sent >= SSE_POLL_REPLAY_MAX ||
                (h->reg.sink->pending &&
                 h->reg.sink->pending(s->node.conn) > h->reg.buffer_max / 2)) {
                more = true;
                break;
            }
            if (format_threat(h, it, wt, id))
                continue;
            if (!sse_reg_send_frame(&h->reg, &s->node)) {
                store_result_free(&res);
                return false;
            }
            sent++;
        }
        if (!more) {
            cursor = res.next;
            res.next = NULL;
        }
        store_result_free(&res);
    } while (cursor);
    free(cursor);
    if (more)
        return sub_send(h, s, gap, sizeof gap - 1);
    return true;
}

/* ---------- the all-brands subscribers ---------- */

/* Starts polling b now (prime, timer) unless it runs already. */
static void brand_start(struct sse_poll *h, struct poll_brand *b)
{
    if (!b->primed)
        prime_brand(h, b); /* on failure the timer primes later */
    if (h->loop && !ev_is_active(&b->timer))
        ev_timer_start(h->loop, &b->timer);
}

struct id_list {
    char (*ids)[BRAND_ID_MAX + 1];
    size_t n;
};

/* store_query visitor: collects valid brand ids (bounded). */
static void collect_brand(void *arg, const char *sk, const char *value, size_t len)
{
    struct id_list *l = arg;
    (void)sk;
    if (!value || len == 0 || len > BRAND_ID_MAX || l->n >= SSE_POLL_BRANDS_MAX)
        return;
    memcpy(l->ids[l->n], value, len);
    l->ids[l->n][len] = '\0';
    if (brand_id_ok(l->ids[l->n]))
        l->n++;
}

/*
 * Reads the brand list (BRAND_INDEX, at most SSE_POLL_BRANDS_MAX brands)
 * and pins every brand in it, which starts its poll.  Brands that left
 * the list stay pinned until the last all-brands subscriber leaves.
 */
static void refresh_brands(struct sse_poll *h)
{
    struct id_list l = {.ids = xcalloc(SSE_POLL_BRANDS_MAX, sizeof *l.ids)};
    char *cursor = NULL;
    int rc;
    do {
        struct store_result res = {0};
        struct store_query q = {.pk = KEY_PK_BRAND_INDEX,
                                .sk_op = STORE_SK_BEGINS,
                                .sk = KEY_PFX_BRAND,
                                .forward = true,
                                .start = cursor,
                                .visit_attr = "brandId",
                                .visit = collect_brand,
                                .visit_arg = &l};
        h->queries++;
        rc = store_query(h->store, &q, &res);
        free(cursor);
        cursor = NULL;
        if (rc) {
            log_msg(LOG_WARN, NULL, "sse poll: cannot read the brand list: %s", err_str(rc));
            break;
        }
        cursor = res.next;
        res.next = NULL;
        store_result_free(&res);
    } while (cursor && l.n < SSE_POLL_BRANDS_MAX);
    free(cursor);
    for (size_t i = 0; i < l.n && h->nall_open; i++) {
        struct poll_brand *b = brand_get(h, l.ids[i]);
        b->pinned = true;
        brand_start(h, b);
    }
    free(l.ids);
}

/* The last all-brands subscriber left: brands only they needed stop. */
static void unpin_all(struct sse_poll *h)
{
    if (h->loop && ev_is_active(&h->brands))
        ev_timer_stop(h->loop, &h->brands);
    for (size_t i = 0; i < h->bt.nbuckets; i++) {
        struct sse_bent *e = h->bt.tab[i], *next;
        for (; e; e = next) {
            struct poll_brand *b = brand_of(e);
            next = e->hnext;
            if (!b->pinned)
                continue;
            b->pinned = false;
            if (!b->nopen)
                brand_stop(h, b);
            brand_release(h, b);
        }
    }
}

/* ---------- loop integration ---------- */

static void poll_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    struct poll_brand *b = container_of(w, struct poll_brand, timer);
    poll_brand(b->hub, b);
}

static void brands_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    struct sse_poll *h = container_of(w, struct sse_poll, brands);
    if (h->nall_open)
        refresh_brands(h);
}

/* ---------- public API ---------- */

struct sse_poll *sse_poll_new(const struct sse_poll_config *cfg, char *err, size_t errlen)
{
    struct sse_poll *h;
    if (!cfg || !cfg->store) {
        snprintf(err, errlen, "sse poll: no store");
        return NULL;
    }
    h = xcalloc(1, sizeof *h);
    h->store = cfg->store;
    h->loop = cfg->loop;
    h->overlap_ms = cfg->overlap_ms > 0 ? cfg->overlap_ms : SSE_POLL_OVERLAP_MS;
    h->poll_s = scaled(cfg->poll_s > 0 ? cfg->poll_s : SSE_POLL_PERIOD_S);
    if (h->poll_s < 0.01)
        h->poll_s = 0.01;
    h->brands_s = scaled(SSE_POLL_BRANDS_S);
    if (h->brands_s < 0.01)
        h->brands_s = 0.01;
    sse_btab_init(&h->bt);
    if (h->loop)
        ev_timer_init(&h->brands, brands_cb, h->brands_s, h->brands_s);
    struct sse_reg_config rc_ = SSE_REG_CONFIG_OF(cfg, sub_dropped, h);
    sse_reg_init(&h->reg, &rc_);
    return h;
}

void sse_poll_free(struct sse_poll *h)
{
    if (!h)
        return;
    sse_reg_fini(&h->reg);
    if (h->loop)
        ev_timer_stop(h->loop, &h->brands);
    for (size_t i = 0; i < h->bt.nbuckets; i++) {
        struct sse_bent *e = h->bt.tab[i], *next;
        for (; e; e = next) {
            struct poll_brand *b = brand_of(e);
            next = e->hnext;
            if (h->loop)
                ev_timer_stop(h->loop, &b->timer);
            brand_destroy(b);
        }
    }
    while (h->all) {
        struct sse_psub *s = h->all;
        h->all = s->anext;
        free(s);
    }
    sse_btab_fini(&h->bt);
    free(h);
}

bool sse_poll_parse_id(const char *s, char wt[25], char *id, size_t idn)
{
    const char *u;
    size_t n;
    if (!s)
        return false;
    while (*s == ' ' || *s == '\t')
        s++;
    u = strchr(s, '_');
    if (!u || (size_t)(u - s) != ISO_LEN)
        return false;
    memcpy(wt, s, ISO_LEN);
    wt[ISO_LEN] = '\0';
    if (!time_is_iso(wt))
        return false;
    u++;
    n = strcspn(u, " \t");
    if (n == 0 || n >= idn || u[n + strspn(u + n, " \t")] != '\0')
        return false;
    for (size_t i = 0; i < n; i++)
        if (u[i] == '#' || (unsigned char)u[i] < 0x21 || (unsigned char)u[i] > 0x7e)
            return false;
    memcpy(id, u, n);
    id[n] = '\0';
    return true;
}

int sse_poll_reserve(struct sse_poll *h, const struct sse_poll_params *p, struct sse_psub **out)
{
    struct poll_brand *b = NULL;
    *out = NULL;
    if (p->all) {
        if (h->nall >= h->reg.max_per_brand)
            return ERR_TOOBIG;
        h->nall++;
    } else {
        if (!brand_id_ok(p->brand_id))
            return ERR_INVALID;
        b = brand_get(h, p->brand_id);
        if (b->nsubs >= h->reg.max_per_brand) {
            brand_release(h, b);
            return ERR_TOOBIG;
        }
        b->nsubs++;
    }
    struct sse_psub *s = xcalloc(1, sizeof *s);
    s->hub = h;
    s->brand = b;
    s->node.brand_id = b ? b->e.id : NULL;
    s->scans = p->scans;
    s->resume = sse_poll_parse_id(p->last_id, s->resume_wt, s->resume_id, sizeof s->resume_id);
    if (!s->resume)
        s->resume_id[0] = s->resume_wt[0] = '\0';
    s->state = SUB_RESERVED;
    s->anext = h->all;
    if (h->all)
        h->all->aprev = s;
    h->all = s;
    *out = s;
    return 0;
}

void sse_poll_stream_open(void *arg, struct http_conn *c)
{
    static const char no_scans[] = ": scans unavailable\n\n";
    static const char gap[] = ": gap\n\n";
    struct sse_psub *s = arg;
    struct sse_poll *h = s->hub;
    struct poll_brand *b = s->brand;
    if (s->state != SUB_RESERVED || s->node.conn)
        return;
    sse_reg_open(&h->reg, &s->node, c);
    if (!b) {
        /* all brands: no replay across brands (a resume gets ": gap") */
        if (h->nall_open++ == 0) {
            refresh_brands(h);
            if (h->loop)
                ev_timer_start(h->loop, &h->brands);
        }
        if (s->scans && !sub_send(h, s, no_scans, sizeof no_scans - 1))
            return;
        if (s->resume && !sub_send(h, s, gap, sizeof gap - 1))
            return;
        sub_link(h, s);
        return;
    }
    b->nopen++;
    brand_start(h, b);
    if (s->scans && !sub_send(h, s, no_scans, sizeof no_scans - 1))
        return;
    if (s->resume && !b->primed) {
        /* the store is failing: say that the replay did not happen */
        if (!sub_send(h, s, gap, sizeof gap - 1))
            return;
    } else if (s->resume && !replay(h, s)) {
        return;
    }
    sub_link(h, s);
}

void sse_poll_stream_closed(void *arg, struct http_conn *c)
{
    (void)c;
    struct sse_psub *s = arg;
    struct sse_poll *h = s->hub;
    struct poll_brand *b = s->brand;
    sub_unlink(s);
    sse_reg_close(&h->reg, &s->node);
    if (s->node.conn) {
        if (!b) {
            if (--h->nall_open == 0)
                unpin_all(h);
        } else if (--b->nopen == 0 && !brand_wanted(h, b)) {
            brand_stop(h, b);
        }
    }
    if (b) {
        b->nsubs--;
        brand_release(h, b);
    } else {
        h->nall--;
    }
    if (s->aprev)
        s->aprev->anext = s->anext;
    else
        h->all = s->anext;
    if (s->anext)
        s->anext->aprev = s->aprev;
    free(s);
}

int sse_poll_run(struct sse_poll *h)
{
    int ret = 0;
    for (size_t i = 0; i < h->bt.nbuckets; i++)
        for (struct sse_bent *e = h->bt.tab[i]; e; e = e->hnext) {
            int rc = poll_brand(h, brand_of(e));
            if (rc)
                ret = rc;
        }
    return ret;
}

void sse_poll_refresh_brands(struct sse_poll *h)
{
    if (h->nall_open)
        refresh_brands(h);
}

void sse_poll_heartbeat(struct sse_poll *h, int64_t now_ms)
{
    sse_reg_heartbeat(&h->reg, now_ms);
}

size_t sse_poll_clients(const struct sse_poll *h)
{
    return h->reg.nopen;
}

uint64_t sse_poll_dropped(const struct sse_poll *h)
{
    return h->reg.dropped;
}

uint64_t sse_poll_queries(const struct sse_poll *h)
{
    return h->queries;
}

size_t sse_poll_active_brands(const struct sse_poll *h)
{
    size_t n = 0;
    for (size_t i = 0; i < h->bt.nbuckets; i++)
        for (struct sse_bent *e = h->bt.tab[i]; e; e = e->hnext)
            n += brand_wanted(h, brand_of(e));
    return n;
}
