/*
 * store_int.h - what a store driver implements and what store.c lends it.
 *
 * A driver is a const struct store_ops table plus a private struct that
 * embeds struct store as its first member (the SQLite driver's struct sq,
 * later the DynamoDB one), like curl's struct Curl_ssl.  store.c checks
 * arguments, validates items, keeps the statistics and the capacity
 * accounting, and then calls the table; drivers only talk to their
 * backend.  The helpers below (conditions, update actions, cursors, item
 * checks) are shared so every driver interprets them the same way.
 *
 * Only store.c and store_*.c include this file.
 */
#ifndef GP_STORE_STORE_INT_H
#define GP_STORE_STORE_INT_H

#include "store/store.h"

struct capacity;

/* A decoded query cursor (LastEvaluatedKey).  The strings point into
 * root, which the cursor owns; free with store_cursor_free(). */
struct store_cursor {
    cJSON *root;
    const char *pk, *sk;   /* base-table key of the last item returned */
    const char *gpk, *gsk; /* its GSI1 key (GSI1 queries only, else NULL) */
};

/*
 * The driver table.  Every write function runs atomically on its own; when
 * base.batch_active is set it joins the open batch instead of committing.
 * `bytes` outputs report the item bytes the operation touched (the larger
 * of the old and the new item for writes, the sum of items read for
 * queries) so store.c can charge capacity; they may stay 0.
 */
struct store_ops {
    const char *name;
    /* The driver's query honours q->visit itself; when false, store.c
     * emulates it with a projection and the parsed items. */
    bool query_visits;
    /* Frees the driver; store.c has already released the common part. */
    void (*close)(struct store *s);
    int (*get)(struct store *s, const char *pk, const char *sk, bool consistent, cJSON **out,
               size_t *bytes);
    /* item is valid (store_check_item) and item_size is its size. */
    int (*put)(struct store *s, const cJSON *item, size_t item_size, const struct store_cond *cond,
               size_t *bytes);
    int (*del)(struct store *s, const char *pk, const char *sk, const struct store_cond *cond,
               size_t *bytes);
    int (*update)(struct store *s, const char *pk, const char *sk, const struct store_action *acts,
                  size_t nacts, const struct store_cond *cond, cJSON **new_image, size_t *bytes);
    /* cur is the decoded q->start (NULL on the first page). */
    int (*query)(struct store *s, const struct store_query *q, const struct store_cursor *cur,
                 struct store_result *res, size_t *bytes);
    /* w is validated; bytes has n entries. */
    int (*transact)(struct store *s, const struct store_write *w, size_t n, int *failed,
                    size_t *bytes);
    int (*batch_begin)(struct store *s);
    int (*batch_commit)(struct store *s);
    void (*batch_abort)(struct store *s);
    /* Optional (NULL: no sub-batches): a nested scope inside the open
     * batch; commit keeps its writes in the batch, abort undoes only
     * them.  A driver sets sub_doomed where it would doom the batch. */
    int (*sub_begin)(struct store *s);
    int (*sub_commit)(struct store *s);
    void (*sub_abort)(struct store *s);
    int (*stream_read)(struct store *s, uint64_t after, size_t max, struct stream_record **recs,
                       size_t *n);
    int (*stream_head)(struct store *s, uint64_t *seq);
    int (*checkpoint_get)(struct store *s, const char *reader, uint64_t *seq);
    int (*checkpoint_set)(struct store *s, const char *reader, uint64_t seq);
    /* Deletes records with ts_ms < cutoff_ms. */
    int (*stream_trim)(struct store *s, int64_t cutoff_ms, size_t *trimmed);
    int (*purge_expired)(struct store *s, int64_t now_ms, size_t max, size_t *purged);
    int (*health)(struct store *s);
    /* Set by drivers whose change stream is not read through this API
     * (DynamoDB: DynamoDB Streams); store_has_stream() reports it. */
    bool no_stream;
    /* Set by drivers without cross-request group commit (DynamoDB): the
     * hot scan counters are the detector's; store_counters_by_detector()
     * reports it. */
    bool counters_by_detector;
    /* Optional (NULL: store.c reads with stream_read and filters):
     * store_stream_read_filtered() without parsing skipped records. */
    int (*stream_read_filtered)(struct store *s, uint64_t after, size_t max,
                                const struct stream_filter *f, struct stream_record **recs,
                                size_t *n, uint64_t *last, size_t *examined);
    /* Optional (NULL: ERR_INVALID): the partition census of store.h. */
    int (*partitions)(struct store *s, store_partition_cb cb, void *arg);
    int (*write_seconds)(struct store *s, int64_t since_ms, store_write_second_cb cb, void *arg);
    /* Optional (NULL: ERR_INVALID): store_data_version(). */
    int (*data_version)(struct store *s, uint64_t *v);
    /* Optional (NULL: nothing to do): store_set_bulk(). */
    void (*set_bulk)(struct store *s, bool bulk);
    /* Optional (NULL: every commit is durable when it returns): deferred
     * sync, see store_sync_pending() and friends. */
    uint64_t (*sync_pending)(struct store *s);
    int (*sync_fd)(struct store *s);
    uint64_t (*sync_poll)(struct store *s, int *err);
    bool (*set_durable_hook)(struct store *s, void (*fn)(void *arg, uint64_t ticket), void *arg);
};

/* The part of every store that store.c manages. */
struct store {
    const struct store_ops *ops;
    struct capacity *cap;
    bool throttle;
    double throttle_wcu, throttle_rcu;
    int64_t retention_ms;
    store_commit_cb commit_cb;
    void *commit_arg;
    store_clock_fn clock;
    void *clock_arg;
    struct {
        store_watch_fn fn;
        void *arg;
    } watch[STORE_WATCH_MAX];
    size_t nwatch;
    /* Batch state: set by store.c around the driver's batch calls.  A
     * driver sets batch_doomed when its backend dropped the open batch
     * (e.g. SQLite rolled back on an I/O error): later writes fail until
     * the batch ends, and batch_commit reports the failure. */
    bool batch_active;
    bool batch_doomed;
    /* Sub-batch state (store_subbatch_enter): sub_mode between enter and
     * leave, sub_active while a sub-batch is open in it. */
    bool sub_mode, sub_active, sub_doomed;
    uint64_t batch_writes;
    struct store_stats stats;
};

/* Fills the common part (o may carry zeros for defaults). */
void store_base_init(struct store *s, const struct store_ops *ops, const struct store_options *o);

/* Now on the store's clock, ms since the epoch. */
int64_t store_now_ms(const struct store *s);

/* Drivers call this after every successful commit with the highest
 * committed stream sequence; it counts and forwards to the callback. */
void store_notify_commit(struct store *s, uint64_t last_seq);

/*
 * Checks an item: an object with non-empty string PK (<= STORE_PK_MAX
 * bytes) and SK (<= STORE_SK_MAX), GSI1PK/GSI1SK absent or non-empty
 * strings within the same bounds, non-empty attribute names, every string
 * and name valid UTF-8, every number finite, size <= STORE_ITEM_MAX.  On success
 * returns 0 and sets *size (may be NULL) to store_item_size(item).  On
 * error returns ERR_INVALID or ERR_TOOBIG.
 */
int store_check_item(const cJSON *item, size_t *size);

/* Evaluates a condition against the current item (NULL when absent).
 * Returns 0 when it holds, ERR_CONDITION when not. */
int store_cond_eval(const struct store_cond *c, const cJSON *cur);

/* Applies update actions to item in order.  Returns 0, or ERR_INVALID
 * (ADD on a non-number); item may then be partly modified. */
int store_apply_actions(cJSON *item, const struct store_action *acts, size_t nacts);

/* Encodes a cursor for the last item of a page (gpk/gsk NULL for table
 * queries).  Returns a malloc'd URL-safe string. */
char *store_cursor_encode(const char *pk, const char *sk, const char *gpk, const char *gsk);
/* Decodes text from store_cursor_encode.  On error (malformed, or gsi
 * and the GSI1 key is missing) returns ERR_INVALID and leaves c empty. */
int store_cursor_decode(const char *text, bool gsi, struct store_cursor *c);
void store_cursor_free(struct store_cursor *c);

#endif
