/*
 * dlq.h - the detector's dead-letter partition.
 *
 * A change-stream record the detector cannot process (a malformed image,
 * a scan of a product that does not exist, or a record whose batch keeps
 * failing after bisection) is parked as an item
 *   PK DLQ#<YYYY-MM-DD of the parking time>, SK <parking time>#<seq20>
 *   {seq, reader, kind, pk, sk, recordTime, parkedAt, attempts, error,
 *    image (the record's image, or null when absent or too large),
 *    imageOmitted}
 * in the same transaction that moves the reader's checkpoint past it, so
 * the stream never stalls and nothing is parked twice.  The API lists
 * these items (dlq_list) and /metrics counts them.
 */
#ifndef GP_DETECT_DLQ_H
#define GP_DETECT_DLQ_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/jsonw.h"
#include "store/store.h"

/* Longest error text kept in a dead letter. */
#define DLQ_ERROR_MAX 512
/* Images larger than this (store_item_size) are not copied. */
#define DLQ_IMAGE_MAX (300 * 1024)

/*
 * Builds the dead-letter item of record r.  error is a short text (cut to
 * DLQ_ERROR_MAX bytes); parked_ms is the parking time.  The caller owns
 * the result.  NULL when a key cannot be built.
 */
cJSON *dlq_item_new(const struct stream_record *r, const char *reader, const char *error,
                    unsigned attempts, int64_t parked_ms);

/*
 * Reads up to limit (1..1000) dead letters parked on day (YYYY-MM-DD),
 * newest first.  On success returns 0 and *items is a new array the
 * caller frees.  On error returns a negative ERR_* (ERR_INVALID for a bad
 * day or limit) and *items is NULL.
 */
int dlq_list(struct store *s, const char *day, int limit, cJSON **items);

/* Writes one dead letter as {"seq","reader","kind","pk","sk","recordTime",
 * "parkedAt","attempts","error","image"} (absent attributes -> null). */
void dlq_write_json(struct jsonw *w, const cJSON *item);

/* A dead letter's "seq" (0 when it has none). */
double dlq_seq(const cJSON *item);

/* qsort() order of dead letters (const cJSON ** elements) as their
 * records came in the stream, the order a replay must keep: by stream
 * position (the Streams detector's streamPos: its sequence number, which
 * orders within and, as DynamoDB publishes them, across shards) when
 * both have one, else by seq (the SQLite stream's own order; for
 * DynamoDB records with long sequence numbers seq is a hash). */
int dlq_stream_order(const void *a, const void *b);

#endif
