/*
 * sqlite_pcache.h - a thin wrapper around SQLite's own page cache that
 * skips needless full-cache truncations at commit.
 *
 * Why.  At the end of every write transaction SQLite truncates its page
 * cache to the database size (pager_end_transaction).  The default cache
 * (pcache1) remembers the largest page number it ever held, and when that
 * is far above the limit it walks its whole hash table.  B-tree balancing
 * parks a page under a temporary number far above any real page (the
 * locking page, PENDING_BYTE / page size + 1) while it swaps two pages, so
 * after any page split the remembered maximum is ~262,145 and the next
 * commit walks every cached page: with a 32 MB cache about 8,000 headers,
 * 7 % of the server's CPU under a write-heavy load (docs/benchmarks.md).
 *
 * What.  The wrapper keeps its own exact upper bound of the page numbers
 * in the cache (every page enters through xFetch or xRekey) and forwards
 * xTruncate only when some page may be at or above the limit.  Everything
 * else is forwarded unchanged, so caching, eviction and memory accounting
 * stay SQLite's.
 *
 * sqlite_pcache_install() must run before SQLite initializes (before the
 * first sqlite3_open*); it is idempotent and thread-safe, and returns
 * false when it was too late (SQLite already initialized by someone else),
 * in which case SQLite's cache is used as it is.
 */
#ifndef GENUPROOF_STORE_SQLITE_PCACHE_H
#define GENUPROOF_STORE_SQLITE_PCACHE_H

#include <stdbool.h>
#include <stdint.h>

bool sqlite_pcache_install(void);

/* Counters for tests: truncations forwarded and skipped, process-wide. */
struct sqlite_pcache_stats {
    uint64_t truncs_forwarded, truncs_skipped;
};
void sqlite_pcache_stats(struct sqlite_pcache_stats *out);

#endif
