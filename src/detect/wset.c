/*
 * wset.c - a detector batch's writes and their packing into transactions
 * (see wset.h).
 *
 * Planning runs in two passes.  The first assigns every write to a group:
 * blocks (one FREE write, one ATOMIC unit, or all LAST units together)
 * are taken in commit order and a block that does not fit the current
 * group (too many writes or bytes, or an item already there other than a
 * foldable increment) closes it.  The second builds each group's
 * store_write array, folding the increments of one item into one update
 * whose actions sum the deltas per attribute.
 */
#include "detect/wset.h"

#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/xalloc.h"

/* Request bytes added per write beyond the item (names, conditions). */
#define WRITE_OVERHEAD 256

struct wentry {
    enum store_write_kind kind; /* PUT, UPDATE (one ADD) or CHECK */
    cJSON *item;                /* PUT */
    char *pk, *sk;              /* UPDATE, CHECK (for PUT: point into item) */
    char *attr;                 /* UPDATE */
    double delta;
    enum store_cond_kind cond_kind;
    char *cond_attr;
    cJSON *cond_value;
    size_t bytes;
    enum wset_unit_kind ukind;
    size_t unit;
};

struct wset {
    struct wentry *e;
    size_t n, cap;
    enum wset_unit_kind cur_kind;
    size_t cur_unit;
};

struct wset *wset_new(void)
{
    struct wset *ws = xcalloc(1, sizeof(*ws));
    ws->cur_kind = WSET_FREE;
    return ws;
}

void wset_free(struct wset *ws)
{
    if (!ws)
        return;
    for (size_t i = 0; i < ws->n; i++) {
        struct wentry *e = &ws->e[i];
        if (e->kind == STORE_W_PUT) {
            cJSON_Delete(e->item);
        } else {
            free(e->pk);
            free(e->sk);
        }
        free(e->attr);
        free(e->cond_attr);
        cJSON_Delete(e->cond_value);
    }
    free(ws->e);
    free(ws);
}

void wset_unit(struct wset *ws, enum wset_unit_kind kind)
{
    ws->cur_kind = kind;
    ws->cur_unit++;
}

size_t wset_count(const struct wset *ws)
{
    return ws->n;
}

static struct wentry *entry_new(struct wset *ws, enum store_write_kind kind,
                                const struct store_cond *cond)
{
    struct wentry *e;

    if (ws->n == ws->cap) {
        ws->cap = ws->cap ? ws->cap * 2 : 32;
        ws->e = xrealloc(ws->e, ws->cap * sizeof(*ws->e));
    }
    e = &ws->e[ws->n++];
    memset(e, 0, sizeof(*e));
    e->kind = kind;
    e->ukind = ws->cur_kind;
    e->unit = ws->cur_unit;
    if (cond) {
        e->cond_kind = cond->kind;
        e->cond_attr = cond->attr ? xstrdup(cond->attr) : NULL;
        e->cond_value = cond->value ? cJSON_Duplicate(cond->value, true) : NULL;
    }
    return e;
}

int wset_put(struct wset *ws, cJSON *item, const struct store_cond *cond)
{
    const cJSON *pk = cJSON_GetObjectItemCaseSensitive(item, "PK");
    const cJSON *sk = cJSON_GetObjectItemCaseSensitive(item, "SK");
    struct wentry *e;

    if (!cJSON_IsString(pk) || !cJSON_IsString(sk)) {
        cJSON_Delete(item);
        return ERR_INVALID;
    }
    e = entry_new(ws, STORE_W_PUT, cond);
    e->item = item;
    e->pk = pk->valuestring;
    e->sk = sk->valuestring;
    e->bytes = store_item_size(item) + WRITE_OVERHEAD;
    return 0;
}

void wset_add(struct wset *ws, const char *pk, const char *sk, const char *attr, double delta)
{
    struct wentry *e = entry_new(ws, STORE_W_UPDATE, NULL);
    e->pk = xstrdup(pk);
    e->sk = xstrdup(sk);
    e->attr = xstrdup(attr);
    e->delta = delta;
    e->bytes = strlen(pk) + strlen(sk) + strlen(attr) + WRITE_OVERHEAD;
}

void wset_check(struct wset *ws, const char *pk, const char *sk, const struct store_cond *cond)
{
    struct wentry *e = entry_new(ws, STORE_W_CHECK, cond);
    e->pk = xstrdup(pk);
    e->sk = xstrdup(sk);
    e->bytes = strlen(pk) + strlen(sk) + WRITE_OVERHEAD;
}

/* ---------- planning ---------- */

static bool same_item(const struct wentry *a, const struct wentry *b)
{
    return strcmp(a->pk, b->pk) == 0 && strcmp(a->sk, b->sk) == 0;
}

/* The group being filled: entry indices, distinct writes, bytes. */
struct grp {
    size_t *idx;
    size_t n, cap;
    size_t writes, bytes;
};

/*
 * Checks whether block blk[0..nb) fits into g.  Returns 1 when it fits,
 * 0 when it does not, ERR_INVALID when the block holds one item twice
 * (other than foldable increments).
 */
static int block_fits(const struct wset *ws, const struct grp *g, const size_t *blk, size_t nb,
                      size_t max_w, size_t max_b)
{
    size_t writes = 0, bytes = 0;
    bool clash = false;

    for (size_t i = 0; i < nb; i++) {
        const struct wentry *e = &ws->e[blk[i]];
        bool folded = false;
        for (size_t j = 0; j < g->n && !clash && !folded; j++) {
            const struct wentry *o = &ws->e[g->idx[j]];
            if (!same_item(e, o))
                continue;
            if (e->kind == STORE_W_UPDATE && o->kind == STORE_W_UPDATE)
                folded = true;
            else
                clash = true;
        }
        for (size_t j = 0; j < i && !folded; j++) {
            const struct wentry *o = &ws->e[blk[j]];
            if (!same_item(e, o))
                continue;
            if (e->kind == STORE_W_UPDATE && o->kind == STORE_W_UPDATE)
                folded = true;
            else
                return ERR_INVALID;
        }
        if (!folded)
            writes++;
        bytes += e->bytes;
    }
    if (clash)
        return 0;
    return g->writes + writes <= max_w && g->bytes + bytes <= max_b ? 1 : 0;
}

static void grp_take(const struct wset *ws, struct grp *g, const size_t *blk, size_t nb)
{
    for (size_t i = 0; i < nb; i++) {
        const struct wentry *e = &ws->e[blk[i]];
        bool folded = false;
        for (size_t j = 0; j < g->n && !folded; j++)
            folded = e->kind == STORE_W_UPDATE && ws->e[g->idx[j]].kind == STORE_W_UPDATE &&
                     same_item(e, &ws->e[g->idx[j]]);
        if (g->n == g->cap) {
            g->cap = g->cap ? g->cap * 2 : 64;
            g->idx = xrealloc(g->idx, g->cap * sizeof(*g->idx));
        }
        g->idx[g->n++] = blk[i];
        if (!folded)
            g->writes++;
        g->bytes += e->bytes;
    }
}

/* Appends group g's writes to the plan, folding increments per item. */
static void emit_group(const struct wset *ws, const struct grp *g, struct wset_plan *p,
                       size_t *capw, size_t *capa)
{
    for (size_t i = 0; i < g->n; i++) {
        const struct wentry *e = &ws->e[g->idx[i]];
        struct store_write *w;
        bool dup = false;

        if (e->kind == STORE_W_UPDATE) {
            for (size_t j = 0; j < i && !dup; j++)
                dup = ws->e[g->idx[j]].kind == STORE_W_UPDATE && same_item(e, &ws->e[g->idx[j]]);
            if (dup)
                continue; /* folded into the first update of the item */
        }
        if (p->nw == *capw) {
            *capw = *capw ? *capw * 2 : 64;
            p->w = xrealloc(p->w, *capw * sizeof(*p->w));
        }
        w = &p->w[p->nw++];
        memset(w, 0, sizeof(*w));
        w->kind = e->kind;
        w->cond.kind = e->cond_kind;
        w->cond.attr = e->cond_attr;
        w->cond.value = e->cond_value;
        if (e->kind == STORE_W_PUT) {
            w->item = e->item;
            continue;
        }
        w->pk = e->pk;
        w->sk = e->sk;
        if (e->kind != STORE_W_UPDATE)
            continue;
        /* Actions are stored as offsets until the array stops moving. */
        w->acts = (const struct store_action *)(uintptr_t)p->nacts;
        for (size_t j = i; j < g->n; j++) {
            const struct wentry *o = &ws->e[g->idx[j]];
            bool merged = false;
            if (o->kind != STORE_W_UPDATE || !same_item(e, o))
                continue;
            for (size_t k = p->nacts - w->nacts; k < p->nacts && !merged; k++) {
                if (strcmp(p->acts[k].attr, o->attr) == 0) {
                    p->acts[k].delta += o->delta;
                    merged = true;
                }
            }
            if (merged)
                continue;
            if (p->nacts == *capa) {
                *capa = *capa ? *capa * 2 : 64;
                p->acts = xrealloc(p->acts, *capa * sizeof(*p->acts));
            }
            p->acts[p->nacts++] =
                (struct store_action){.kind = STORE_ACT_ADD, .attr = o->attr, .delta = o->delta};
            w->nacts++;
        }
    }
}

void wset_plan_free(struct wset_plan *plan)
{
    free(plan->w);
    free(plan->end);
    free(plan->acts);
    memset(plan, 0, sizeof(*plan));
}

const struct store_write *wset_plan_group(const struct wset_plan *plan, size_t g, size_t *n)
{
    size_t first = g ? plan->end[g - 1] : 0;
    *n = plan->end[g] - first;
    return plan->w + first;
}

int wset_plan(const struct wset *ws, size_t max_writes, size_t max_bytes, struct wset_plan *plan)
{
    size_t *blk = NULL, *gend = NULL, ngroups = 0;
    struct grp *groups = NULL;
    size_t ng_cap = 0, capw = 0, capa = 0;
    int rc = 0;

    memset(plan, 0, sizeof(*plan));
    if (max_writes == 0 || max_writes > STORE_TRANSACT_MAX)
        max_writes = STORE_TRANSACT_MAX;
    if (max_bytes == 0)
        max_bytes = WSET_BYTES_MAX;
    blk = xmalloc((ws->n ? ws->n : 1) * sizeof(*blk));

    /* Pass 1: blocks in commit order (stage 0 FREE, 1 ATOMIC, 2 LAST). */
    for (int stage = 0; stage < 3 && !rc; stage++) {
        size_t i = 0;
        while (i < ws->n && !rc) {
            size_t nb = 0;
            const struct wentry *e = &ws->e[i];
            int fit;

            if ((int)e->ukind != stage) {
                i++;
                continue;
            }
            if (stage == WSET_FREE) {
                blk[nb++] = i++;
            } else if (stage == WSET_ATOMIC) {
                size_t unit = e->unit;
                while (i < ws->n && ws->e[i].unit == unit && ws->e[i].ukind == WSET_ATOMIC)
                    blk[nb++] = i++;
            } else {
                for (; i < ws->n; i++)
                    if (ws->e[i].ukind == WSET_LAST)
                        blk[nb++] = i;
            }
            if (ngroups == 0) {
                ng_cap = 8;
                groups = xcalloc(ng_cap, sizeof(*groups));
                ngroups = 1;
            }
            fit = block_fits(ws, &groups[ngroups - 1], blk, nb, max_writes, max_bytes);
            if (fit == 0 && groups[ngroups - 1].n > 0) {
                if (ngroups == ng_cap) {
                    ng_cap *= 2;
                    groups = xrealloc(groups, ng_cap * sizeof(*groups));
                }
                memset(&groups[ngroups], 0, sizeof(*groups));
                ngroups++;
                fit = block_fits(ws, &groups[ngroups - 1], blk, nb, max_writes, max_bytes);
            }
            if (fit < 0)
                rc = fit;
            else if (fit == 0)
                rc = ERR_TOOBIG;
            else
                grp_take(ws, &groups[ngroups - 1], blk, nb);
        }
    }

    /* Pass 2: the store writes of each group. */
    if (!rc && ngroups > 0) {
        gend = xmalloc(ngroups * sizeof(*gend));
        for (size_t g = 0; g < ngroups; g++) {
            emit_group(ws, &groups[g], plan, &capw, &capa);
            gend[g] = plan->nw;
        }
        for (size_t k = 0; k < plan->nw; k++)
            if (plan->w[k].kind == STORE_W_UPDATE)
                plan->w[k].acts = plan->acts + (uintptr_t)plan->w[k].acts;
        plan->end = gend;
        plan->ngroups = ngroups;
        gend = NULL;
    }
    for (size_t g = 0; g < ngroups; g++)
        free(groups[g].idx);
    free(groups);
    free(blk);
    free(gend);
    if (rc)
        wset_plan_free(plan);
    return rc;
}
