/*
 * sqlite_pcache.c - see sqlite_pcache.h.
 *
 * Each wrapped cache holds SQLite's own cache and two facts about it:
 *   hi    an upper bound of the page numbers it holds, not counting the
 *         temporary locking-page number (0 when it holds nothing);
 *   parked how many pages currently sit under the locking-page number
 *         (B-tree balancing moves a page there and away again).
 * A truncation to limit L must drop the pages numbered >= L; when hi < L
 * and nothing is parked at or above L there are none, so the call is
 * skipped.  Otherwise it is forwarded and hi drops to L - 1.
 */
#include "store/sqlite_pcache.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include <sqlite3.h>

/* SQLite's default PENDING_BYTE (sqliteInt.h); the locking page of a
 * database with page size P is PENDING_BYTE / P + 1. */
#define PENDING_BYTE_DEFAULT 0x40000000u

struct wcache {
    sqlite3_pcache *inner;
    unsigned hi;
    unsigned lck;
    unsigned parked;
};

static sqlite3_pcache_methods2 inner_m;
static bool installed;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static atomic_uint_fast64_t n_forwarded, n_skipped;

static struct wcache *W(sqlite3_pcache *p)
{
    return (struct wcache *)p;
}

static int w_init(void *arg)
{
    (void)arg;
    return inner_m.xInit ? inner_m.xInit(inner_m.pArg) : SQLITE_OK;
}

static void w_shutdown(void *arg)
{
    (void)arg;
    if (inner_m.xShutdown)
        inner_m.xShutdown(inner_m.pArg);
}

static sqlite3_pcache *w_create(int sz_page, int sz_extra, int purgeable)
{
    struct wcache *w = sqlite3_malloc(sizeof(*w));
    if (!w)
        return NULL;
    w->inner = inner_m.xCreate(sz_page, sz_extra, purgeable);
    if (!w->inner) {
        sqlite3_free(w);
        return NULL;
    }
    w->hi = 0;
    w->parked = 0;
    w->lck = sz_page > 0 ? PENDING_BYTE_DEFAULT / (unsigned)sz_page + 1 : 0;
    return (sqlite3_pcache *)w;
}

static void w_cachesize(sqlite3_pcache *p, int n)
{
    inner_m.xCachesize(W(p)->inner, n);
}

static int w_pagecount(sqlite3_pcache *p)
{
    return inner_m.xPagecount(W(p)->inner);
}

static sqlite3_pcache_page *w_fetch(sqlite3_pcache *p, unsigned key, int create)
{
    struct wcache *w = W(p);
    sqlite3_pcache_page *pg = inner_m.xFetch(w->inner, key, create);
    if (pg && key != w->lck && key > w->hi)
        w->hi = key;
    return pg;
}

static void w_unpin(sqlite3_pcache *p, sqlite3_pcache_page *pg, int discard)
{
    inner_m.xUnpin(W(p)->inner, pg, discard);
}

static void w_rekey(sqlite3_pcache *p, sqlite3_pcache_page *pg, unsigned old_key, unsigned new_key)
{
    struct wcache *w = W(p);
    inner_m.xRekey(w->inner, pg, old_key, new_key);
    if (old_key == w->lck && w->parked)
        w->parked--;
    if (new_key == w->lck)
        w->parked++;
    else if (new_key > w->hi)
        w->hi = new_key;
}

static void w_truncate(sqlite3_pcache *p, unsigned limit)
{
    struct wcache *w = W(p);
    bool parked_above = w->parked && w->lck >= limit;
    if (w->hi < limit && !parked_above) {
        atomic_fetch_add_explicit(&n_skipped, 1, memory_order_relaxed);
        return;
    }
    atomic_fetch_add_explicit(&n_forwarded, 1, memory_order_relaxed);
    inner_m.xTruncate(w->inner, limit);
    if (parked_above)
        w->parked = 0;
    if (w->hi >= limit)
        w->hi = limit ? limit - 1 : 0;
}

static void w_destroy(sqlite3_pcache *p)
{
    struct wcache *w = W(p);
    inner_m.xDestroy(w->inner);
    sqlite3_free(w);
}

static void w_shrink(sqlite3_pcache *p)
{
    if (inner_m.xShrink)
        inner_m.xShrink(W(p)->inner);
}

static void install_once(void)
{
    static sqlite3_pcache_methods2 m;
    if (sqlite3_config(SQLITE_CONFIG_GETPCACHE2, &inner_m) != SQLITE_OK || !inner_m.xCreate ||
        !inner_m.xFetch || !inner_m.xTruncate || !inner_m.xRekey)
        return;
    m = (sqlite3_pcache_methods2){
        .iVersion = 1,
        .pArg = NULL,
        .xInit = w_init,
        .xShutdown = w_shutdown,
        .xCreate = w_create,
        .xCachesize = w_cachesize,
        .xPagecount = w_pagecount,
        .xFetch = w_fetch,
        .xUnpin = w_unpin,
        .xRekey = w_rekey,
        .xTruncate = w_truncate,
        .xDestroy = w_destroy,
        .xShrink = w_shrink,
    };
    installed = sqlite3_config(SQLITE_CONFIG_PCACHE2, &m) == SQLITE_OK;
}

bool sqlite_pcache_install(void)
{
    pthread_once(&once, install_once);
    return installed;
}

void sqlite_pcache_stats(struct sqlite_pcache_stats *out)
{
    out->truncs_forwarded = atomic_load_explicit(&n_forwarded, memory_order_relaxed);
    out->truncs_skipped = atomic_load_explicit(&n_skipped, memory_order_relaxed);
}
