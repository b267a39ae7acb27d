/*
 * ddb_census.h - the partition census of store.h (store_partitions,
 * store_write_seconds) for a DynamoDB table, used by the DynamoDB driver
 * behind `genuproof audit`.
 *
 * Items and bytes per partition key come from a Scan of the table, run
 * as parallel segments (ddb_call_many) with ReturnConsumedCapacity, so
 * the scan's own cost shows in ddb_http_stats().  A key's items arrive
 * together within one segment (a key lives in one partition and a Scan
 * reads a partition in sort-key order), so each segment keeps only its
 * running key (struct ddbc_run).
 *
 * Writes per key and second come from the table's stream (DynamoDB
 * Streams, store/ddb_streams.h), read from TRIM_HORIZON up to the time
 * the walk started, shard after shard (parents first).  Records are
 * folded per (key, second) in a short window (struct ddbc_secs): a
 * shard's records come in time order, so a (key, second) older than the
 * newest second by more than the slack is complete and reported at once.
 * Memory is bounded by the writes of a few seconds, never the whole
 * stream.  The walk is an extra stream reader: DynamoDB serves about two
 * readers per shard, so GetRecords may fail with LimitExceededException;
 * the walk then backs off (and finally gives up with ERR_THROTTLED).
 */
#ifndef GP_STORE_DDB_CENSUS_H
#define GP_STORE_DDB_CENSUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/ddb_http.h"
#include "store/store.h"

/* Parallel Scan segments used by the driver. */
#define DDBC_SEGMENTS     4
#define DDBC_SEGMENTS_MAX 16
/* A (key, second) is complete once the walk has seen a record this many
 * seconds newer (ApproximateCreationDateTime has 1 s resolution). */
#define DDBC_SLACK_S 2
/* Default cap on (key, second) entries held at once. */
#define DDBC_SECS_MAX (1u << 18)

/* ---------- run-length fold of a Scan segment ---------- */

struct ddbc_run {
    char *pk; /* running key (owned), NULL before the first item */
    uint64_t items, bytes;
};

/* Adds one item of pk with bytes.  When pk differs from the running key,
 * the running key is reported through cb first.  Returns 0 or cb's
 * non-zero value. */
int ddbc_run_add(struct ddbc_run *r, const char *pk, uint64_t bytes, store_partition_cb cb,
                 void *arg);
/* Reports the running key (if any) and clears it.  Returns 0 or cb's
 * non-zero value. */
int ddbc_run_flush(struct ddbc_run *r, store_partition_cb cb, void *arg);
void ddbc_run_clear(struct ddbc_run *r);

/* ---------- windowed fold of stream records ---------- */

struct ddbc_secs;

/* A fold holding at most max_entries (key, second) entries (0: the
 * default DDBC_SECS_MAX). */
struct ddbc_secs *ddbc_secs_new(size_t max_entries);
void ddbc_secs_free(struct ddbc_secs *a);

/*
 * Adds one record of pk at second with bytes.  Entries older than the
 * newest second seen minus DDBC_SLACK_S are reported through cb (sorted
 * by key, then second) and dropped; when the time goes back by more than
 * the slack (the walk moved to another shard) every entry is reported.
 * When the fold is full, entries are reported early (a (key, second)
 * may then be reported in more than one piece; ddbc_secs_split counts
 * those).  Returns 0 or cb's non-zero value.
 */
int ddbc_secs_add(struct ddbc_secs *a, const char *pk, int64_t second, uint64_t bytes,
                  store_write_second_cb cb, void *arg);
/* Reports every entry (sorted by key, then second) and empties the fold.
 * Returns 0 or cb's non-zero value. */
int ddbc_secs_flush(struct ddbc_secs *a, store_write_second_cb cb, void *arg);
/* Entries currently held; entries reported before they were complete. */
size_t ddbc_secs_held(const struct ddbc_secs *a);
uint64_t ddbc_secs_split(const struct ddbc_secs *a);

/* ---------- the walks ---------- */

/*
 * Scans table with segments parallel segments (clamped to
 * 1..DDBC_SEGMENTS_MAX), pages of at most page_limit items (0: DynamoDB's
 * 1 MB pages only), and reports every partition key with its items and
 * bytes (store_item_size) through cb, leaving out items whose numeric ttl
 * is below now_s.  Order: keys in scan order within a segment, segments
 * interleaved.  On error returns the call's ERR_* (ERR_INVALID for a
 * malformed reply) or cb's non-zero value.
 */
int ddb_census_partitions(struct ddb_http *h, const char *table, int segments, int page_limit,
                          double now_s, store_partition_cb cb, void *arg);

/*
 * Reads the stream of table from TRIM_HORIZON and reports, through cb,
 * writes (records) and bytes (the JSON length of each NewImage) per
 * partition key and second for records stamped in [since_ms, until_ms].
 * Reports come in batches sorted by key and second, but not in one
 * global order.  ERR_INVALID (as for a store without the walk) when the
 * table has no stream, ERR_THROTTLED
 * when GetRecords kept being refused, else the call's ERR_* or cb's
 * non-zero value.
 */
int ddb_census_write_seconds(struct ddb_http *h, const char *table, int64_t since_ms,
                             int64_t until_ms, store_write_second_cb cb, void *arg);

#endif
