/*
 * ddb_streams.h - reading a table's DynamoDB stream: the stream's ARN,
 * its shards (DescribeStream, all pages), shard iterators and GetRecords,
 * and the conversion of a stream record into the detector's
 * struct stream_record (detect/process.h works on those).
 *
 * Shard lineage: when a shard splits, its children name it as parent;
 * the records of one item follow the lineage, so a child must only be
 * read once its parent has been read to its end.  ddbs_shard_ready()
 * says whether a shard may be read given which shards are finished.
 *
 * Sequence numbers are decimal strings of up to 40 digits (they do not
 * fit 64 bits); ddbs_seq_cmp() orders them.  A record's stream_record.seq
 * is its sequence number when it fits in 63 bits, else a 63-bit hash of
 * shard and sequence number: unique in practice, used only to name the
 * record's ops-log entries and dead letters.
 */
#ifndef GP_STORE_DDB_STREAMS_H
#define GP_STORE_DDB_STREAMS_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "detect/process.h"
#include "store/ddb_http.h"
#include "store/store.h"

/* Bounds on what a (hostile) endpoint may send. */
#define DDBS_SHARDS_MAX 10000
#define DDBS_PAGES_MAX  1000
#define DDBS_SEQ_MAX    DET_POS_SEQ_DIGITS
#define DDBS_LIMIT_MAX  1000 /* GetRecords Limit */

struct ddbs_shard {
    char *id;
    char *parent;    /* NULL: none */
    char *start_seq; /* NULL when absent */
    char *end_seq;   /* NULL: the shard is still open */
};

/* One stream record. */
struct ddbs_record {
    struct stream_record r;     /* pk, sk, image owned */
    char seq[DDBS_SEQ_MAX + 1]; /* the SequenceNumber */
    char pos[DET_POS_MAX + 1];  /* det_pos_format(shard, seq) */
};

/* The table's latest stream ARN (DescribeTable).  ERR_NOTFOUND when the
 * table has no stream or does not exist.  *arn is the caller's. */
int ddbs_stream_arn(struct ddb_http *h, const char *table, char **arn);

/* All shards of the stream, in the order DescribeStream returned them,
 * following LastEvaluatedShardId.  On success the caller frees *out with
 * ddbs_shards_free.  ERR_TOOBIG past DDBS_SHARDS_MAX/DDBS_PAGES_MAX. */
int ddbs_describe(struct ddb_http *h, const char *arn, struct ddbs_shard **out, size_t *n);
void ddbs_shards_free(struct ddbs_shard *sh, size_t n);

/* Parses one DescribeStream reply's StreamDescription into shards
 * appended to *sh (capacity *cap, count *n); *last receives
 * LastEvaluatedShardId (NULL when none, caller frees).  ERR_INVALID for a
 * malformed reply. */
int ddbs_parse_shards(const cJSON *reply, struct ddbs_shard **sh, size_t *n, size_t *cap,
                      char **last);

/* Sorts shards so that every parent present comes before its children
 * (by starting sequence number, then id). */
void ddbs_sort_shards(struct ddbs_shard *sh, size_t n);

/* True when shard i may be read: it has no parent, its parent is not in
 * the list (trimmed), or finished(arg, parent) says the parent is done. */
bool ddbs_shard_ready(const struct ddbs_shard *sh, size_t n, size_t i,
                      bool (*finished)(void *arg, const char *shard), void *arg);

/* A shard iterator: AFTER_SEQUENCE_NUMBER after_seq, or TRIM_HORIZON
 * when after_seq is NULL.  *iter is the caller's. */
int ddbs_iterator(struct ddb_http *h, const char *arn, const char *shard, const char *after_seq,
                  char **iter);

/*
 * One GetRecords call of at most limit records (1..DDBS_LIMIT_MAX).  On
 * success returns 0 with the records (converted; *recs NULL when *n is 0)
 * and *next the next iterator, NULL when the shard is closed and read to
 * its end.  ERR_TIMEOUT when the iterator expired (get a new one from the
 * checkpoint), ERR_NOTFOUND when the records were trimmed or the stream
 * is gone, else ddb_call's error.  Records that cannot be converted
 * (no keys or sequence number) are left out.
 */
int ddbs_get_records(struct ddb_http *h, const char *shard, const char *iter, int limit,
                     struct ddbs_record **recs, size_t *n, char **next);

/* Converts one Records[] element read from shard.  On success returns 0
 * and fills *out (free with ddbs_record_clear).  ERR_INVALID when the
 * record is malformed (missing keys, sequence number, event name). */
int ddbs_record_from_json(const cJSON *rec, const char *shard, struct ddbs_record *out);
void ddbs_record_clear(struct ddbs_record *r);
void ddbs_records_free(struct ddbs_record *recs, size_t n);

/* Compares decimal sequence numbers numerically (<0, 0, >0). */
int ddbs_seq_cmp(const char *a, const char *b);

#endif
