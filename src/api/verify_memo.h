/*
 * verify_memo.h - what a verify derives from a product's items, kept
 * between requests.
 *
 * A verify of a code reads the code's lookup item, the product's META,
 * its provenance events and its claim, re-hashes the record and the chain
 * and checks the signature: the same work for every scan of a product
 * under attack, although none of these items changes while it is being
 * scanned.  The memo keeps the outcome per product (the flags, the
 * rendered "product" and "events" values, the claim) and per code (the
 * product id), and drops an entry as soon as one of the items it came
 * from is written:
 *
 *   - this process's writes: the memo watches the store (store_set_watch)
 *     and drops the entries of any written pk, except for writes that
 *     cannot change them: scan items, the detector's window state, and
 *     the scanCount ADDs of the counter folding, which it applies to its
 *     copy of the count instead;
 *   - the scan window (the product's newest scan times and countries,
 *     for verify's geographic and burst figures): verify announces each
 *     scan it writes (verify_memo_expect_scan) and adds it to the window
 *     itself; a scan item written any other way makes the window unknown
 *     until the next walk of the product's scans;
 *   - rollbacks (a batch that failed or was aborted, a purge): the memo
 *     forgets everything;
 *   - other processes' commits: before each use the memo compares the
 *     store's data version and forgets everything when it moved.
 *
 * Stores without a data version (DynamoDB, written by anyone) get no
 * memo (verify_memo_new() says NULL).  Entries are bounded
 * (VERIFY_MEMO_MAX); a full memo is emptied and refilled.
 */
#ifndef GP_API_VERIFY_MEMO_H
#define GP_API_VERIFY_MEMO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

struct store;

#define VERIFY_MEMO_MAX 4096

/* What verify derived from a product's items.  Reference counted: the
 * memo holds one reference, each request using it another, so an entry
 * dropped while a request still renders from it stays alive. */
struct verify_snap {
    int refs;
    char *pid, *pk, *brand_id, *created_at, *hash; /* pid: META's productId */
    bool hash_match, sig_valid, chain_ok;
    double scan_count;  /* the stored scanCount, kept current by the folded ADDs */
    char *product_json; /* the response's "product" value */
    char *events_json;  /* the response's "events" value */
    cJSON *claim;       /* the CLAIM item, NULL when unclaimed */
    /* The product's scan window (detect/state.h: newest scan times and
     * countries' last-seen times) when every scan since it was built is
     * in it, else NULL (verify_memo_window_*). */
    struct det_state *win;
};

struct verify_memo_stats {
    unsigned long long hits, misses, drops, resets;
    size_t entries;
};

struct verify_memo;
struct det_state;

/* A memo watching s (store_add_watch); NULL when s has no data version
 * (DynamoDB) or no watch left. */
struct verify_memo *verify_memo_new(struct store *s);
void verify_memo_free(struct verify_memo *m);

/* Whether the memo can be used for the next reads: false for stores
 * without a data version or when reading it fails.  Forgets everything
 * when another connection committed since the last call. */
bool verify_memo_usable(struct verify_memo *m);

/* The product id of a code's lookup item, or NULL (valid until the next
 * write through the store). */
const char *verify_memo_code(struct verify_memo *m, const char *code);
void verify_memo_put_code(struct verify_memo *m, const char *code, const char *pid);

/* A new snapshot with one reference (the caller's), members empty. */
struct verify_snap *verify_snap_new(void);
struct verify_snap *verify_snap_ref(struct verify_snap *snap);
void verify_snap_unref(struct verify_snap *snap);

/* The snapshot of the product with this id (the PRODUCT#<id> partition)
 * as a new reference, or NULL. */
struct verify_snap *verify_memo_get(struct verify_memo *m, const char *product_id);
/* Keeps snap (the memo takes its own reference) for that product. */
void verify_memo_put(struct verify_memo *m, const char *product_id, struct verify_snap *snap);

void verify_memo_get_stats(const struct verify_memo *m, struct verify_memo_stats *out);

/* Scan windows.  set: snap's window becomes a copy of st (built from the
 * product's scans).  expect: the next scan item written to pk is the
 * caller's (NULL: none expected any more); any other scan write to a
 * product drops that product's window.  add: the caller's scan, written,
 * joins snap's window (no-op without one). */
void verify_memo_window_set(struct verify_snap *snap, const struct det_state *st);
void verify_memo_expect_scan(struct verify_memo *m, const char *pk);
void verify_memo_window_add(struct verify_snap *snap, int64_t ts_ms, const char *country);

#endif
