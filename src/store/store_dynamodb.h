/*
 * store_dynamodb.h - the DynamoDB driver of the item store.
 *
 * The constructor, store_open_dynamodb(), is declared in store.h with the
 * rest of the store API.  This header names the driver's pieces that
 * tests and tools use: the expression builder (conditions and update
 * actions as DynamoDB expressions) and the partition holding stream
 * readers' checkpoints.
 *
 * Item layout: exactly the original's (ddb_marshal.h), one DynamoDB item
 * per store item, keys PK/SK, index GSI1 on GSI1PK/GSI1SK.
 *
 * Semantics that differ from the SQLite driver, by DynamoDB's nature:
 *   - group commit (store_batch_*) writes through: every write is applied
 *     when made, batch_commit only reports, batch_abort undoes nothing;
 *   - no change stream through store_stream_read (ERR_UNAVAILABLE):
 *     DynamoDB Streams is read by the Streams consumer; store_stream_head
 *     reports 0 and store_stream_trim trims nothing;
 *   - TTL purging is DynamoDB's own job: store_purge_expired purges none;
 *     expired items are still hidden from reads, conditions and updates;
 *   - checkpoints are items in the partition STORE_DDB_CHECKPOINT_PK;
 *   - the partition census (store_partitions, store_write_seconds) scans
 *     the table and reads its DynamoDB stream (store/ddb_census.h).
 */
#ifndef GP_STORE_STORE_DYNAMODB_H
#define GP_STORE_STORE_DYNAMODB_H

#include <cjson/cJSON.h>

#include "core/keys.h"
#include "store/store.h"
#include "util/buf.h"

#define STORE_DDB_CHECKPOINT_PK KEY_PK_STORE_CHECKPOINT

/* Placeholders (#nK / :vK) collected while building expressions. */
struct ddb_expr {
    cJSON *names;  /* ExpressionAttributeNames */
    cJSON *values; /* ExpressionAttributeValues */
    int nn, nv;
    double now_s; /* the store's clock, for the TTL terms */
};

void ddb_expr_init(struct ddb_expr *x, double now_s);
void ddb_expr_free(struct ddb_expr *x);
/* Moves the collected names/values into req (only when non-empty). */
void ddb_expr_attach(struct ddb_expr *x, cJSON *req);

/* Appends the ConditionExpression for c (NULL or NONE: nothing) to b,
 * treating an item whose numeric ttl is below now_s as absent.  With
 * live, the expression also requires the item not to be expired (for
 * updates, which must not modify an expired item).  Returns 0 or
 * ERR_NOMEM/ERR_TOOBIG/ERR_INVALID. */
int ddb_expr_cond(struct ddb_expr *x, struct buf *b, const struct store_cond *c, bool live);
/* Appends the UpdateExpression of the actions to b (empty for none),
 * adding the canonical companions of metadata/data. */
int ddb_expr_update(struct ddb_expr *x, struct buf *b, const struct store_action *a, size_t n);

/* The driver's HTTP client statistics (calls, retries, consumed
 * capacity summed from the replies) since open: what `genuproof audit`
 * reports as its own cost.  ERR_INVALID when s is not a DynamoDB store. */
struct ddb_http_stats;
int store_dynamodb_http_stats(const struct store *s, struct ddb_http_stats *out);

#endif
