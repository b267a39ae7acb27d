/*
 * capacity.c - rolling per-second capacity accounting per partition key
 * (see capacity.h).
 *
 * Each second owns one slot of a 60-slot ring, reused when the ring wraps
 * around.  A slot is an open-addressing table (linear probing, power-of-
 * two size, at most half full) whose entries point into a per-slot byte
 * arena holding the (truncated) keys, so charging a known key allocates
 * nothing.  Memory per slot is bounded by CAPACITY_SLOT_KEYS entries and
 * SLOT_ARENA_MAX key bytes; past either bound a key's units land on the
 * CAPACITY_OTHER entry.  Reports merge the slots of the window into a
 * temporary table, which is the only allocation on the report path.
 */
#include "store/capacity.h"

#include <stdlib.h>
#include <string.h>

#include "core/keys.h"
#include "util/err.h"
#include "util/xalloc.h"

/* Bytes of a key kept for identity and display (struct store_capacity_entry). */
#define KEY_KEEP       255
#define SLOT_ARENA_MAX (256 * 1024)
#define SLOT_TAB_MIN   64
/* A power of two; twice CAPACITY_SLOT_KEYS keeps at least half the cells
 * empty (the keys plus the other entry), so probes always terminate. */
#define SLOT_TAB_MAX (2 * CAPACITY_SLOT_KEYS)

struct cap_entry {
    uint64_t h; /* 0 marks an empty cell; real hashes are forced odd */
    uint32_t off;
    uint16_t len;
    uint8_t fam; /* enum key_family, KF_COUNT for the other entry */
    double wcu, rcu;
};

struct cap_slot {
    int64_t sec; /* the second this slot holds, INT64_MIN when unused */
    struct cap_entry *tab;
    uint32_t mask;
    uint32_t n;
    char *arena;
    size_t alen, acap;
    double tw, tr; /* slot totals */
};

struct heat_slot {
    int64_t minute; /* epoch minute, INT64_MIN when unused */
    double w[KF_COUNT], r[KF_COUNT];
};

struct capacity {
    struct cap_slot sec[CAPACITY_WINDOW_S];
    struct heat_slot heat[CAPACITY_HEAT_MINUTES];
};

static uint64_t key_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h | 1;
}

static size_t ring_index(int64_t v, size_t size)
{
    int64_t m = v % (int64_t)size;
    return (size_t)(m < 0 ? m + (int64_t)size : m);
}

struct capacity *capacity_new(void)
{
    struct capacity *c = xcalloc(1, sizeof(*c));
    for (size_t i = 0; i < CAPACITY_WINDOW_S; i++)
        c->sec[i].sec = INT64_MIN;
    for (size_t i = 0; i < CAPACITY_HEAT_MINUTES; i++)
        c->heat[i].minute = INT64_MIN;
    return c;
}

void capacity_free(struct capacity *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < CAPACITY_WINDOW_S; i++) {
        free(c->sec[i].tab);
        free(c->sec[i].arena);
    }
    free(c);
}

/* Empties a slot for a new second; a table that a burst grew and the last
 * second left mostly empty goes back to the minimum size. */
static void slot_reset(struct cap_slot *sl, int64_t sec)
{
    if (sl->tab && sl->mask + 1 > SLOT_TAB_MIN && (size_t)sl->n * 8 < sl->mask + 1) {
        free(sl->tab);
        sl->tab = NULL;
    }
    if (sl->tab && sl->n)
        memset(sl->tab, 0, (sl->mask + 1) * sizeof(*sl->tab));
    if (!sl->tab) {
        sl->tab = xcalloc(SLOT_TAB_MIN, sizeof(*sl->tab));
        sl->mask = SLOT_TAB_MIN - 1;
    }
    sl->n = 0;
    sl->alen = 0;
    sl->tw = sl->tr = 0;
    sl->sec = sec;
}

/* The slot of second sec, or NULL when sec has left the ring. */
static struct cap_slot *slot_at(struct capacity *c, int64_t sec, bool claim)
{
    struct cap_slot *sl = &c->sec[ring_index(sec, CAPACITY_WINDOW_S)];
    if (sl->sec == sec)
        return sl;
    if (!claim)
        return NULL;
    slot_reset(sl, sec);
    return sl;
}

static struct cap_entry *tab_probe(struct cap_entry *tab, uint32_t mask, const char *arena,
                                   uint64_t h, const char *k, size_t len)
{
    for (uint32_t i = (uint32_t)h & mask;; i = (i + 1) & mask) {
        struct cap_entry *e = &tab[i];
        if (!e->h)
            return e;
        if (e->h == h && e->len == len && memcmp(arena + e->off, k, len) == 0)
            return e;
    }
}

static void slot_grow(struct cap_slot *sl)
{
    uint32_t ncap = (sl->mask + 1) * 2;
    struct cap_entry *nt = xcalloc(ncap, sizeof(*nt));
    for (uint32_t i = 0; i <= sl->mask; i++) {
        struct cap_entry *e = &sl->tab[i];
        if (!e->h)
            continue;
        struct cap_entry *d = tab_probe(nt, ncap - 1, sl->arena, e->h, sl->arena + e->off, e->len);
        *d = *e;
    }
    free(sl->tab);
    sl->tab = nt;
    sl->mask = ncap - 1;
}

static struct cap_entry *slot_insert(struct cap_slot *sl, struct cap_entry *cell, uint64_t h,
                                     const char *k, size_t len, uint8_t fam)
{
    if (sl->alen + len > sl->acap) {
        size_t ncap = sl->acap ? sl->acap * 2 : 4096;
        while (ncap < sl->alen + len)
            ncap *= 2;
        sl->arena = xrealloc(sl->arena, ncap);
        sl->acap = ncap;
    }
    memcpy(sl->arena + sl->alen, k, len);
    cell->h = h;
    cell->off = (uint32_t)sl->alen;
    cell->len = (uint16_t)len;
    cell->fam = fam;
    cell->wcu = cell->rcu = 0;
    sl->alen += len;
    sl->n++;
    if ((sl->n + 1) * 2 > sl->mask + 1 && sl->mask + 1 < SLOT_TAB_MAX) {
        slot_grow(sl);
        return tab_probe(sl->tab, sl->mask, sl->arena, h, k, len);
    }
    return cell;
}

/* Finds (or, with create, adds) the entry of key k in a slot.  A new key
 * that does not fit goes to the CAPACITY_OTHER entry. */
static struct cap_entry *slot_entry(struct cap_slot *sl, const char *k, bool create)
{
    size_t len = strnlen(k, KEY_KEEP);
    uint64_t h = key_hash(k, strlen(k));
    struct cap_entry *e = tab_probe(sl->tab, sl->mask, sl->arena, h, k, len);
    if (e->h || !create)
        return e->h ? e : NULL;
    if (sl->n < CAPACITY_SLOT_KEYS && sl->alen + len <= SLOT_ARENA_MAX)
        return slot_insert(sl, e, h, k, len, (uint8_t)key_family_of(k));
    size_t olen = sizeof(CAPACITY_OTHER) - 1;
    uint64_t oh = key_hash(CAPACITY_OTHER, olen);
    e = tab_probe(sl->tab, sl->mask, sl->arena, oh, CAPACITY_OTHER, olen);
    if (e->h)
        return e;
    /* Room is guaranteed: the table holds SLOT_TAB_MAX > 2 * keys cells and
     * the arena may exceed its soft cap by these few bytes. */
    return slot_insert(sl, e, oh, CAPACITY_OTHER, olen, KF_COUNT);
}

static void heat_note(struct capacity *c, int64_t now_s, const struct cap_entry *e)
{
    if (e->fam >= KF_COUNT)
        return;
    int64_t minute = now_s >= 0 ? now_s / 60 : (now_s - 59) / 60;
    struct heat_slot *hs = &c->heat[ring_index(minute, CAPACITY_HEAT_MINUTES)];
    if (hs->minute != minute) {
        memset(hs, 0, sizeof(*hs));
        hs->minute = minute;
    }
    if (e->wcu > hs->w[e->fam])
        hs->w[e->fam] = e->wcu;
    if (e->rcu > hs->r[e->fam])
        hs->r[e->fam] = e->rcu;
}

void capacity_charge(struct capacity *c, int64_t now_s, const char *pk, double wcu, double rcu)
{
    struct cap_slot *sl = slot_at(c, now_s, true);
    struct cap_entry *e = slot_entry(sl, pk, true);
    e->wcu += wcu;
    e->rcu += rcu;
    sl->tw += wcu;
    sl->tr += rcu;
    heat_note(c, now_s, e);
}

bool capacity_would_exceed(struct capacity *c, int64_t now_s, const char *pk, double wcu,
                           double rcu, double wlim, double rlim)
{
    double cw = 0, cr = 0;
    struct cap_slot *sl = slot_at(c, now_s, false);
    if (sl) {
        const struct cap_entry *e = slot_entry(sl, pk, false);
        if (e) {
            cw = e->wcu;
            cr = e->rcu;
        }
    }
    return (wcu > 0 && cw + wcu > wlim) || (rcu > 0 && cr + rcu > rlim);
}

static int clamp_window(int window_s)
{
    if (window_s < 1)
        return 1;
    if (window_s > CAPACITY_WINDOW_S)
        return CAPACITY_WINDOW_S;
    return window_s;
}

void capacity_totals(struct capacity *c, int64_t now_s, int window_s, double *wcu, double *rcu)
{
    double tw = 0, tr = 0;
    window_s = clamp_window(window_s);
    for (int i = 0; i < window_s; i++) {
        const struct cap_slot *sl = slot_at(c, now_s - i, false);
        if (sl) {
            tw += sl->tw;
            tr += sl->tr;
        }
    }
    if (wcu)
        *wcu = tw;
    if (rcu)
        *rcu = tr;
}

/* One key of the merged window. */
struct merged {
    uint64_t h;
    const char *k;
    size_t len;
    double wcu, rcu;
};

static int merged_cmp(const void *a, const void *b)
{
    const struct merged *x = a, *y = b;
    double tx = x->wcu + x->rcu, ty = y->wcu + y->rcu;
    if (tx != ty)
        return tx > ty ? -1 : 1;
    size_t n = x->len < y->len ? x->len : y->len;
    int r = memcmp(x->k, y->k, n);
    if (r)
        return r;
    return x->len < y->len ? -1 : (x->len > y->len);
}

int capacity_top(struct capacity *c, int64_t now_s, int window_s, size_t n,
                 struct store_capacity_entry *out, size_t *nout)
{
    size_t total = 0;
    window_s = clamp_window(window_s);
    *nout = 0;
    for (int i = 0; i < window_s; i++) {
        const struct cap_slot *sl = slot_at(c, now_s - i, false);
        if (sl)
            total += sl->n;
    }
    if (!total || !n)
        return 0;
    size_t cap = 16;
    while (cap < 2 * total)
        cap *= 2;
    struct merged *tab = xcalloc(cap, sizeof(*tab));
    for (int i = 0; i < window_s; i++) {
        const struct cap_slot *sl = slot_at(c, now_s - i, false);
        for (uint32_t j = 0; sl && j <= sl->mask; j++) {
            const struct cap_entry *e = &sl->tab[j];
            if (!e->h)
                continue;
            const char *k = sl->arena + e->off;
            size_t p = (size_t)e->h & (cap - 1);
            while (tab[p].h &&
                   !(tab[p].h == e->h && tab[p].len == e->len && !memcmp(tab[p].k, k, e->len)))
                p = (p + 1) & (cap - 1);
            if (!tab[p].h) {
                tab[p].h = e->h;
                tab[p].k = k;
                tab[p].len = e->len;
            }
            tab[p].wcu += e->wcu;
            tab[p].rcu += e->rcu;
        }
    }
    /* Compact the occupied cells to the front, then sort them. */
    size_t m = 0;
    for (size_t p = 0; p < cap; p++)
        if (tab[p].h)
            tab[m++] = tab[p];
    qsort(tab, m, sizeof(*tab), merged_cmp);
    if (n > m)
        n = m;
    for (size_t i = 0; i < n; i++) {
        size_t len = tab[i].len < sizeof(out[i].pk) - 1 ? tab[i].len : sizeof(out[i].pk) - 1;
        memcpy(out[i].pk, tab[i].k, len);
        out[i].pk[len] = '\0';
        out[i].wcu = tab[i].wcu;
        out[i].rcu = tab[i].rcu;
    }
    *nout = n;
    free(tab);
    return 0;
}

size_t capacity_heat(struct capacity *c, int64_t now_s, struct store_heat_minute *out, size_t n)
{
    int64_t minute = now_s >= 0 ? now_s / 60 : (now_s - 59) / 60;
    size_t k = 0;
    for (int64_t i = 0; i < CAPACITY_HEAT_MINUTES && k < n; i++) {
        const struct heat_slot *hs = &c->heat[ring_index(minute - i, CAPACITY_HEAT_MINUTES)];
        if (hs->minute != minute - i)
            continue;
        out[k].minute_ms = hs->minute * 60000;
        memcpy(out[k].wcu_max, hs->w, sizeof(hs->w));
        memcpy(out[k].rcu_max, hs->r, sizeof(hs->r));
        k++;
    }
    return k;
}
