/*
 * verify_memo.c - per-product verify snapshots, dropped when their items
 * are written (see verify_memo.h).
 *
 * One chained hash table keyed by the pk of the items an entry came from:
 * PRODUCT#<id> for a snapshot (META, EVENT#..., CLAIM all live there) and
 * VERIFY#<code> for a code's product id.  The store's watch hands over the
 * pk of every write, so dropping is one lookup.
 */
#include "api/verify_memo.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/keys.h"
#include "detect/state.h"
#include "store/store.h"
#include "util/hash.h"
#include "util/xalloc.h"

#define NBUCKETS 8192 /* a power of two, twice VERIFY_MEMO_MAX */

enum ent_kind { ENT_SNAP, ENT_CODE };

struct ent {
    char *key; /* the pk */
    uint64_t h;
    enum ent_kind kind;
    struct verify_snap *snap; /* ENT_SNAP: the memo's reference */
    char *pid;                /* ENT_CODE */
    struct ent *next;
};

struct verify_memo {
    struct store *store;
    struct ent *buckets[NBUCKETS];
    size_t n;
    struct store_dv_mark dv;
    struct verify_memo_stats st;
    char expect[KEY_MAX + 1]; /* pk of the scan verify is writing ("" none) */
};

struct verify_snap *verify_snap_new(void)
{
    struct verify_snap *s = xcalloc(1, sizeof *s);
    s->refs = 1;
    return s;
}

struct verify_snap *verify_snap_ref(struct verify_snap *s)
{
    s->refs++;
    return s;
}

void verify_snap_unref(struct verify_snap *s)
{
    if (!s || --s->refs > 0)
        return;
    free(s->pid);
    free(s->pk);
    free(s->brand_id);
    free(s->created_at);
    free(s->hash);
    free(s->product_json);
    free(s->events_json);
    cJSON_Delete(s->claim);
    free(s->win);
    free(s);
}

static void ent_free(struct ent *e)
{
    verify_snap_unref(e->snap);
    free(e->pid);
    free(e->key);
    free(e);
}

static void reset(struct verify_memo *m)
{
    if (m->n)
        m->st.resets++;
    for (size_t i = 0; i < NBUCKETS; i++) {
        struct ent *e = m->buckets[i];
        while (e) {
            struct ent *next = e->next;
            ent_free(e);
            e = next;
        }
        m->buckets[i] = NULL;
    }
    m->n = 0;
}

static struct ent **slot_of(struct verify_memo *m, const char *key, uint64_t h)
{
    struct ent **p = &m->buckets[h & (NBUCKETS - 1)];
    while (*p && ((*p)->h != h || strcmp((*p)->key, key) != 0))
        p = &(*p)->next;
    return p;
}

static void drop(struct verify_memo *m, struct ent **p)
{
    struct ent *e = *p;
    *p = e->next;
    ent_free(e);
    m->n--;
    m->st.drops++;
}

/* Only ADDs to scanCount: the counter folding of verify's scans. */
static bool scan_count_adds(const struct store_action *acts, size_t n, double *sum)
{
    *sum = 0;
    if (!acts || n == 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (acts[i].kind != STORE_ACT_ADD || strcmp(acts[i].attr, "scanCount") != 0)
            return false;
        *sum += acts[i].delta;
    }
    return true;
}

static void on_write(void *arg, const char *pk, const char *sk, const struct store_action *acts,
                     size_t nacts)
{
    struct verify_memo *m = arg;
    double sum;

    if (!pk) {
        reset(m);
        return;
    }
    if (strncmp(sk, KEY_PFX_SCAN, sizeof(KEY_PFX_SCAN) - 1) == 0) {
        /* verify's own scan joins the window; any other leaves it
         * incomplete */
        if (m->expect[0] && strcmp(pk, m->expect) == 0) {
            m->expect[0] = '\0';
        } else if (m->n) {
            struct ent *e = *slot_of(m, pk, hash_str(pk));
            if (e && e->kind == ENT_SNAP && e->snap->win) {
                free(e->snap->win);
                e->snap->win = NULL;
            }
        }
        return;
    }
    /* The other writes every counted scan makes, none of which an entry
     * reads. */
    if (strcmp(sk, KEY_SK_DETSTATE) == 0 || m->n == 0)
        return;
    struct ent **p = slot_of(m, pk, hash_str(pk));
    if (!*p)
        return;
    if ((*p)->kind == ENT_SNAP && strcmp(sk, KEY_SK_META) == 0 &&
        scan_count_adds(acts, nacts, &sum)) {
        (*p)->snap->scan_count += sum;
        return;
    }
    drop(m, p);
}

struct verify_memo *verify_memo_new(struct store *s)
{
    uint64_t v;
    if (store_data_version(s, &v))
        return NULL; /* written by anyone: nothing could be kept */
    struct verify_memo *m = xcalloc(1, sizeof *m);
    m->store = s;
    if (store_add_watch(s, on_write, m)) {
        free(m);
        return NULL;
    }
    return m;
}

void verify_memo_free(struct verify_memo *m)
{
    if (!m)
        return;
    store_remove_watch(m->store, on_write, m);
    reset(m);
    free(m);
}

bool verify_memo_usable(struct verify_memo *m)
{
    int moved = store_data_version_moved(m->store, &m->dv);
    if (moved)
        reset(m);
    return moved >= 0;
}

static struct ent *insert(struct verify_memo *m, const char *key, enum ent_kind kind)
{
    uint64_t h = hash_str(key);
    struct ent **p = slot_of(m, key, h);
    if (*p)
        drop(m, p);
    if (m->n >= VERIFY_MEMO_MAX) {
        reset(m);
        p = slot_of(m, key, h);
    }
    struct ent *e = xcalloc(1, sizeof *e);
    e->key = xstrdup(key);
    e->h = h;
    e->kind = kind;
    *p = e;
    m->n++;
    return e;
}

static struct ent *lookup(struct verify_memo *m, const char *key, enum ent_kind kind)
{
    struct ent *e = *slot_of(m, key, hash_str(key));
    if (e && e->kind == kind) {
        m->st.hits++;
        return e;
    }
    m->st.misses++;
    return NULL;
}

const char *verify_memo_code(struct verify_memo *m, const char *code)
{
    struct key k;
    if (!code || !key_verify_pk(&k, code))
        return NULL;
    struct ent *e = lookup(m, k.s, ENT_CODE);
    return e ? e->pid : NULL;
}

void verify_memo_put_code(struct verify_memo *m, const char *code, const char *pid)
{
    struct key k;
    if (!code || !pid || !key_verify_pk(&k, code))
        return;
    insert(m, k.s, ENT_CODE)->pid = xstrdup(pid);
}

struct verify_snap *verify_memo_get(struct verify_memo *m, const char *product_id)
{
    struct key k;
    if (!product_id || !key_product_pk(&k, product_id))
        return NULL;
    struct ent *e = lookup(m, k.s, ENT_SNAP);
    return e ? verify_snap_ref(e->snap) : NULL;
}

void verify_memo_put(struct verify_memo *m, const char *product_id, struct verify_snap *snap)
{
    struct key k;
    if (!snap || !product_id || !key_product_pk(&k, product_id))
        return;
    insert(m, k.s, ENT_SNAP)->snap = verify_snap_ref(snap);
}

void verify_memo_get_stats(const struct verify_memo *m, struct verify_memo_stats *out)
{
    *out = m->st;
    out->entries = m->n;
}

void verify_memo_window_set(struct verify_snap *snap, const struct det_state *st)
{
    if (!snap->win)
        snap->win = xmalloc(sizeof *snap->win);
    *snap->win = *st;
}

void verify_memo_expect_scan(struct verify_memo *m, const char *pk)
{
    if (!pk || strlen(pk) >= sizeof m->expect)
        m->expect[0] = '\0';
    else
        memcpy(m->expect, pk, strlen(pk) + 1);
}

void verify_memo_window_add(struct verify_snap *snap, int64_t ts_ms, const char *country)
{
    if (snap->win)
        det_state_add_scan(snap->win, ts_ms, country);
}
