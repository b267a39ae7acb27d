/*
 * store.h - the item store: one table of JSON attribute maps with
 * DynamoDB's semantics, a change stream, and capacity accounting.
 *
 * An item is a cJSON object holding at least the string attributes "PK"
 * and "SK"; "GSI1PK"/"GSI1SK" (strings) put it in the GSI1 index; "ttl"
 * (number, epoch seconds) makes it expire: once ttl < now (the store's
 * clock) the item is never returned, counts as absent for conditions and
 * updates, and is purged by store_purge_expired().  Sort keys compare
 * byte-wise (UTF-8 order, i.e. code point order).  Like DynamoDB, every
 * string and attribute name must be valid UTF-8 and every number finite;
 * attribute names are non-empty (ERR_INVALID otherwise).
 *
 * Drivers (SQLite now, DynamoDB later) implement struct store_ops in
 * store_int.h; these functions add what is common: argument checks,
 * capacity accounting, the optional throttling emulation and TTL
 * filtering.  Every function returns 0 or a negative ERR_* (util/err.h):
 * ERR_NOTFOUND for a missing item on get, ERR_CONDITION when a write's
 * condition fails, ERR_THROTTLED from the capacity emulation, ERR_TOOBIG
 * for limits (100 writes per transaction, 400 KB items), ERR_INVALID for
 * malformed arguments, ERR_IO/ERR_UNAVAILABLE for the backend.  No
 * function exits or aborts on a storage error.
 *
 * Ownership: items passed in are borrowed; items returned are owned by the
 * caller (cJSON_Delete / store_result_free / store_stream_free).
 *
 * Consistency (SQLite): this connection always reads its own writes.
 * Writes of other connections (other processes on the same file) are
 * seen at once by strongly consistent reads and within about 1 ms by
 * eventually consistent ones (consistent=false, GSI1 queries, the stream
 * and checkpoint reads), which share a read snapshot for that long because
 * opening one costs more than the read itself.
 *
 * Not thread-safe: one struct store per thread/process.
 */
#ifndef GP_STORE_STORE_H
#define GP_STORE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/keys.h"

struct store;

/* Largest item accepted (DynamoDB's limit). */
#define STORE_ITEM_MAX (400 * 1024)
/* Longest partition key / sort key in bytes (DynamoDB's limits); the
 * GSI1 attributes have the same bounds. */
#define STORE_PK_MAX 2048
#define STORE_SK_MAX 1024
/* Most writes in one store_transact() call. */
#define STORE_TRANSACT_MAX 100
/* A query page stops after this many bytes of items (DynamoDB's 1 MB). */
#define STORE_PAGE_BYTES (1024 * 1024)

enum store_durability {
    STORE_DURABILITY_FULL = 0, /* fsync every commit: a commit survives power loss */
    STORE_DURABILITY_NORMAL    /* survives a process crash only */
};

struct store_options {
    const char *path;                 /* SQLite file (created when missing) */
    enum store_durability durability; /* default FULL */
    int64_t stream_retention_ms;      /* 0 -> 24 h */
    bool throttle;                    /* emulate per-partition ceilings */
    double throttle_wcu;              /* 0 -> 1000 WCU/s per partition key */
    double throttle_rcu;              /* 0 -> 3000 RCU/s per partition key */
    /* Optional: items for which this returns true get change records
     * without an image (DynamoDB's KEYS_ONLY view, chosen per item): for
     * derived bookkeeping items that no stream reader looks into.  Their
     * records still exist (sequence numbers, per-second write counts,
     * kinds), with image NULL as for a REMOVE.  NULL: every record
     * carries its new image. */
    bool (*stream_keys_only)(const char *pk, const char *sk);
    /* WAL checkpoints on a thread of the store's own instead of inside the
     * COMMIT that crosses the threshold (store/sqlite_ckpt.h), so a writer
     * on an event loop never waits for one.  Falls back to SQLite's
     * automatic checkpoint when the thread cannot be had. */
    bool background_checkpoint;
    /* With durability FULL and background_checkpoint: COMMIT only writes
     * the WAL and a thread fsyncs it (store/sqlite_sync.h), so the caller
     * is not blocked meanwhile.  A commit is then durable only once
     * store_sync_poll() says so: the owner must hold its answers until
     * then (the server does, see http_handler.commit_ticket). */
    bool deferred_sync;
};

/* Opens (creating when needed) the SQLite store.  On error returns NULL
 * and writes a message into err. */
struct store *store_open_sqlite(const struct store_options *o, char *err, size_t errlen);
void store_close(struct store *s);

/* DynamoDB driver (store_dynamodb.c).  Endpoint, region and credentials
 * as in store/ddb_http.h; the table must exist (`genuproof table create`).
 * The driver has no change stream through this API (DynamoDB Streams is
 * read by the Streams consumer instead) and group commit writes through. */
struct store_dynamodb_options {
    const char *endpoint; /* NULL: AWS_ENDPOINT_URL_DYNAMODB, else the region's */
    const char *region;   /* NULL: AWS_REGION / AWS_DEFAULT_REGION / us-east-1 */
    const char *table;    /* NULL: DYNAMODB_TABLE, else "authentik" */
    const char *profile;  /* NULL: AWS_PROFILE, else "default" */
    int max_retries;      /* 0 -> 8 */
    long timeout_ms;      /* per attempt; 0 -> 10000 */
    bool throttle;        /* the capacity emulation, as in store_options */
    double throttle_wcu, throttle_rcu;
};
/* Opens the DynamoDB store and checks the table is reachable.  On error
 * returns NULL and writes a message into err. */
struct store *store_open_dynamodb(const struct store_dynamodb_options *o, char *err, size_t errlen);
/* False for drivers whose change stream cannot be read with
 * store_stream_read (DynamoDB): callers then need another consumer. */
bool store_has_stream(const struct store *s);
/* True for drivers without cross-request group commit (DynamoDB): there
 * the request path leaves the hot scan counters (a product's META
 * scanCount, its brand's STATS scanCount) to the stream detector, which
 * folds them per batch (detect/process.h, fold_scan_counts).  False for
 * SQLite, where the API folds them into the group commit. */
bool store_counters_by_detector(const struct store *s);
const char *store_driver_name(const struct store *s);

/* The store's clock (ms since the epoch): TTL expiry, stream timestamps
 * and the capacity windows use it.  Default: the wall clock.  Tests
 * install a fake one; fn NULL restores the default. */
typedef int64_t (*store_clock_fn)(void *arg);
void store_set_clock(struct store *s, store_clock_fn fn, void *arg);

/* Operation counters since open (for /metrics). */
struct store_stats {
    uint64_t gets, puts, updates, deletes, queries, transacts;
    uint64_t commits;           /* backend commits that reached the commit callback */
    uint64_t errors;            /* operations failing with anything but NOTFOUND,
                                 * CONDITION or THROTTLED */
    uint64_t throttled;         /* ERR_THROTTLED results */
    uint64_t conditions_failed; /* ERR_CONDITION results */
    uint64_t batch_writes_last; /* write operations in the last committed batch */
    uint64_t wal_syncs;         /* deferred sync: fdatasync calls of the WAL thread */
};
void store_get_stats(const struct store *s, struct store_stats *out);

/* ---------- conditions and updates ---------- */

enum store_cond_kind {
    STORE_COND_NONE = 0,
    STORE_COND_NOT_EXISTS,     /* attribute_not_exists(PK): item must be absent */
    STORE_COND_EXISTS,         /* attribute_exists(PK): item must be present */
    STORE_COND_ATTR_EQ,        /* item present and attr == value (string, number, bool) */
    STORE_COND_ATTR_NOT_EXISTS /* item absent, or present without attr */
};

struct store_cond {
    enum store_cond_kind kind;
    const char *attr;   /* ATTR_EQ / ATTR_NOT_EXISTS */
    const cJSON *value; /* ATTR_EQ */
};

enum store_action_kind {
    STORE_ACT_SET = 0,           /* SET attr = value */
    STORE_ACT_SET_IF_NOT_EXISTS, /* SET attr = if_not_exists(attr, value) */
    STORE_ACT_ADD,               /* SET attr = if_not_exists(attr, 0) + delta (ADD) */
    STORE_ACT_REMOVE             /* REMOVE attr */
};

struct store_action {
    enum store_action_kind kind;
    const char *attr;
    const cJSON *value; /* SET, SET_IF_NOT_EXISTS */
    double delta;       /* ADD */
};

/* ---------- single-item operations ---------- */

/* Gets one item.  ERR_NOTFOUND when absent or expired.  consistent=false
 * is charged half the read capacity (eventually consistent). */
int store_get(struct store *s, const char *pk, const char *sk, bool consistent, cJSON **out);
/* Puts (replaces) an item; cond may be NULL. */
int store_put(struct store *s, const cJSON *item, const struct store_cond *cond);
/* Deletes an item (absent is not an error unless cond says so). */
int store_delete(struct store *s, const char *pk, const char *sk, const struct store_cond *cond);
/* Applies actions to an item, creating it (with PK/SK only) when absent,
 * like UpdateItem.  When new_image is not NULL it receives the item after
 * the update (ReturnValues ALL_NEW). */
int store_update(struct store *s, const char *pk, const char *sk, const struct store_action *acts,
                 size_t nacts, const struct store_cond *cond, cJSON **new_image);

/* ---------- queries ---------- */

enum store_index { STORE_INDEX_TABLE = 0, STORE_INDEX_GSI1 };

enum store_sk_op {
    STORE_SK_ANY = 0, /* no sort-key condition */
    STORE_SK_EQ,
    STORE_SK_BEGINS,  /* begins_with(SK, sk) */
    STORE_SK_BETWEEN, /* sk <= SK <= sk2 */
    STORE_SK_LT,
    STORE_SK_LE,
    STORE_SK_GT,
    STORE_SK_GE
};

struct store_query {
    enum store_index index;
    const char *pk; /* PK (table) or GSI1PK (index) equality */
    enum store_sk_op sk_op;
    const char *sk;    /* operand */
    const char *sk2;   /* BETWEEN upper bound */
    int limit;         /* items evaluated per page; 0 = until STORE_PAGE_BYTES */
    bool forward;      /* true: ascending sort key (ScanIndexForward) */
    bool count_only;   /* Select COUNT: result.items stays NULL */
    bool consistent;   /* strongly consistent read (table only) */
    const char *start; /* cursor from a previous result's next, or NULL */
    /* ProjectionExpression: when nproject > 0, returned items hold only
     * PK, SK and these top-level attributes.  Capacity is still charged
     * for whole items, as DynamoDB does. */
    const char *const *project;
    size_t nproject;
    /* Optional visitor (not a DynamoDB feature): when visit is set, the
     * page's items are not built (res.items stays NULL); instead
     * visit(visit_arg, sk, value, len) runs once per item, in order, with
     * the item's sort key and its top-level string attribute visit_attr
     * (value NULL, len 0 when the item has none, or a non-string).  Both
     * are valid only during the call.  Count, cursor and capacity are those of the same
     * query without a visitor.  Not with count_only (ERR_INVALID). */
    const char *visit_attr;
    void (*visit)(void *visit_arg, const char *sk, const char *value, size_t len);
    void *visit_arg;
};

struct store_result {
    cJSON *items; /* JSON array of items (NULL for count_only) */
    int count;    /* items in this page */
    char *next;   /* opaque cursor (LastEvaluatedKey) or NULL at the end */
};

/* Runs one page of a query.  Items of a GSI1 query with equal GSI1SK are
 * ordered by PK then SK.  A page ends after q->limit items or when the
 * next item would take it past STORE_PAGE_BYTES (it always holds at least
 * one item); res->next is set exactly when at least one more matching
 * item exists (unlike DynamoDB, never for an empty last page).  The cursor
 * is URL-safe ASCII ([A-Za-z0-9_-]); one that is malformed or belongs to
 * another partition or index gives ERR_INVALID.  An inverted BETWEEN is
 * ERR_INVALID, as in DynamoDB.  Capacity: the bytes of all items read,
 * rounded up once per page.  On error *res is left empty. */
int store_query(struct store *s, const struct store_query *q, struct store_result *res);
void store_result_free(struct store_result *res);

/* ---------- transactions and group commit ---------- */

enum store_write_kind {
    STORE_W_PUT = 0,
    STORE_W_UPDATE,
    STORE_W_DELETE,
    STORE_W_CHECK,     /* condition only (ConditionCheck) */
    STORE_W_CHECKPOINT /* set a stream reader's checkpoint atomically with the rest */
};

struct store_write {
    enum store_write_kind kind;
    const cJSON *item;               /* PUT */
    const char *pk, *sk;             /* UPDATE, DELETE, CHECK */
    const struct store_action *acts; /* UPDATE */
    size_t nacts;
    struct store_cond cond;
    const char *reader; /* CHECKPOINT */
    uint64_t seq;       /* CHECKPOINT */
};

/* All-or-nothing write of up to STORE_TRANSACT_MAX writes, no item twice
 * (ERR_INVALID; also for n == 0).  Costs twice the WCU, like DynamoDB.
 * When a condition fails returns ERR_CONDITION, nothing is written (no
 * stream records either) and *failed (if not NULL) is the index of the
 * first failing write. */
int store_transact(struct store *s, const struct store_write *w, size_t n, int *failed);

/*
 * Group commit.  Between batch_begin and batch_commit every write joins
 * one backend transaction (each call stays atomic on its own and sees the
 * batch's earlier writes); batch_commit makes them durable at once.  If it
 * fails, every write since batch_begin is rolled back and the error is
 * returned: the caller must answer those requests with an error.
 * A call inside the batch that fails before writing anything (a failed
 * condition, an invalid update) leaves the batch going; one that fails
 * after part of its work reached the backend dooms the batch: later
 * writes return ERR_IO and so does batch_commit.  store_stream_read and
 * store_stream_head show committed records only, even inside a batch.
 * Drivers without cross-request transactions (DynamoDB) treat these as
 * no-ops and write through.
 */
int store_batch_begin(struct store *s);
int store_batch_commit(struct store *s);
void store_batch_abort(struct store *s);
bool store_batch_active(const struct store *s);

/*
 * Sub-batch mode, for a component that wants its own all-or-nothing
 * batches to ride in an open group-commit batch (the in-process detector
 * joining the server's commit, saving a commit per loop iteration).
 * Between store_subbatch_enter (only with a batch open; ERR_INVALID
 * otherwise, or when the driver has no sub-batches) and
 * store_subbatch_leave, store_batch_begin/commit/abort act on a nested
 * scope: commit keeps its writes in the open batch (durable only when
 * that batch commits, and no commit callback fires), abort or a failed
 * write undoes only the scope's writes, and store_batch_active reports
 * whether a scope is open.  Leaving aborts a scope still open.  If the
 * open batch later fails to commit, the scopes' writes are lost with
 * it: the component must not treat a scope's commit as durable.
 */
int store_subbatch_enter(struct store *s);
void store_subbatch_leave(struct store *s);

/* Called after each successful commit (including implicit ones outside a
 * batch) with the highest stream sequence now durable. */
typedef void (*store_commit_cb)(void *arg, uint64_t last_seq);
void store_set_commit_cb(struct store *s, store_commit_cb cb, void *arg);

/*
 * Write watch: a watcher is told of every item write made through this
 * handle as it is made (inside a batch too, before the batch commits):
 * the item's pk and sk, and for an update its actions (acts NULL for a put
 * or a delete).  It is told with pk NULL whenever items may have changed
 * in a way it was not told of: a batch or sub-batch rolled back or failed
 * to commit, expired items purged.  Writes by other connections are not
 * seen (store_data_version tells of those).  Lets a process keep derived
 * copies of items it reads often, dropping them when they change.  Up to
 * STORE_WATCH_MAX watchers per handle (add returns ERR_TOOBIG beyond);
 * remove takes the same fn and arg.
 */
#define STORE_WATCH_MAX 4
typedef void (*store_watch_fn)(void *arg, const char *pk, const char *sk,
                               const struct store_action *acts, size_t nacts);
int store_add_watch(struct store *s, store_watch_fn fn, void *arg);
void store_remove_watch(struct store *s, store_watch_fn fn, void *arg);

/*
 * Deferred sync (store_options.deferred_sync).  Each commit that wrote
 * something gets a ticket (1, 2, ...); the commit callback fires for it
 * only once it is synced, from store_sync_poll().  Without deferred sync
 * every commit is durable when it returns: pending is 0, fd -1, poll 0.
 */
/* The newest commit's ticket when it is not known durable yet, else 0. */
uint64_t store_sync_pending(struct store *s);
/* A descriptor that becomes readable when syncs make progress (or fail);
 * -1 without deferred sync. */
int store_sync_fd(struct store *s);
/* Takes in sync progress: fires the commit callback for the commits now
 * durable and returns the highest durable ticket.  *err (may be NULL)
 * receives the sticky sync error, 0 when none: tickets above the
 * returned one then never become durable and commits fail from then on. */
uint64_t store_sync_poll(struct store *s, int *err);
/* Has fn(arg, ticket) run on the sync thread right after each successful
 * sync and before its tickets count as durable (sqlite_sync.h, "Durable
 * hook"); fn NULL clears it, waiting for a running call to return.  The
 * hook must not call the store.  Returns false (nothing set) without
 * deferred sync. */
bool store_set_durable_hook(struct store *s, void (*fn)(void *arg, uint64_t ticket), void *arg);

/* ---------- change stream ---------- */

/* INSERT: the item did not exist (an expired item the writer saw as
 * absent counts as not existing; a blind put over an expired item not yet
 * purged is a MODIFY, as in DynamoDB).  MODIFY: it replaced an item.
 * REMOVE: a delete or a TTL purge of an existing item. */
enum store_change { STORE_INSERT = 0, STORE_MODIFY, STORE_REMOVE };

struct stream_record {
    uint64_t seq;  /* strictly increasing, never reused */
    int64_t ts_ms; /* write time on the store's clock (inside the commit) */
    enum store_change kind;
    char *pk, *sk;
    cJSON *image; /* NEW_IMAGE; NULL for REMOVE */
};

/* Reads up to max (capped at 10000) committed records with seq > after,
 * ascending.  *recs is NULL when *n is 0. */
int store_stream_read(struct store *s, uint64_t after, size_t max, struct stream_record **recs,
                      size_t *n);
void store_stream_free(struct stream_record *recs, size_t n);

/* Which records store_stream_read_filtered() returns: those whose kind is
 * in kinds (bit 1u << enum store_change; 0 = every kind), whose pk begins
 * with pk_prefix (NULL = any) and whose sk begins with one of the nsk
 * sk_prefixes (nsk 0 = any). */
struct stream_filter {
    unsigned kinds;
    const char *pk_prefix;
    const char *const *sk_prefixes;
    size_t nsk;
    /* Another filter a record may match instead (NULL: none). */
    const struct stream_filter *or_else;
};
#define STREAM_KIND_BIT(k) (1u << (unsigned)(k))
/* Like store_stream_read, but looks at up to max committed records with
 * seq > after and returns (parsed) only those matching f; the others are
 * skipped without parsing their images.  *last receives the highest seq
 * looked at (after when none) and *examined how many records were looked
 * at, so a reader that has handled the returned records may move its
 * checkpoint to *last.  *recs is NULL when *n is 0. */
int store_stream_read_filtered(struct store *s, uint64_t after, size_t max,
                               const struct stream_filter *f, struct stream_record **recs,
                               size_t *n, uint64_t *last, size_t *examined);
/* Whether a record with these fields matches f (f NULL matches all). */
bool store_stream_match(const struct stream_filter *f, enum store_change kind, const char *pk,
                        const char *sk);
/* Highest committed sequence ever assigned (0 for a new store); trimming
 * does not lower it. */
int store_stream_head(struct store *s, uint64_t *seq);
/* A number that changes whenever another connection (another process on
 * the same file) committed to the store since the previous call; this
 * connection's own commits leave it as it is.  Inside a batch it is read
 * under the batch's write lock.  Lets a writer that caches what it wrote
 * know whether someone else may have written meanwhile.  ERR_INVALID for
 * drivers without it (DynamoDB). */
int store_data_version(struct store *s, uint64_t *v);
/* A caller's last look at the data version (store_data_version_moved). */
struct store_dv_mark {
    bool known;
    uint64_t v;
};
/* For in-process copies of stored items: 1 when another connection may
 * have committed since the mark's last look (always on the first look),
 * 0 when not, a negative ERR_* when the store cannot tell (no data
 * version: DynamoDB; the mark is then forgotten).  Copies go on 1 and
 * cannot be kept on an error. */
int store_data_version_moved(struct store *s, struct store_dv_mark *m);
/* A hint from a writer that many writes follow in a row (a stream reader
 * catching up) or no longer do: the driver may trade commit latency for
 * throughput while it holds.  SQLite: the WAL is checkpointed every
 * STORE_SQLITE_BULK_CHECKPOINT pages instead of every 1,000, so hot pages
 * are copied to the database once per checkpoint rather than ten times;
 * each checkpoint then takes longer.  No effect on durability. */
void store_set_bulk(struct store *s, bool bulk);
/* A reader's durable checkpoint (0 when it has none).  Readers are names
 * of 1..256 bytes.  Checkpoints are bookkeeping: writing one makes no
 * stream record; inside a batch it commits with the batch. */
int store_checkpoint_get(struct store *s, const char *reader, uint64_t *seq);
int store_checkpoint_set(struct store *s, const char *reader, uint64_t seq);
/* Deletes records older than the retention period (relative to now_ms).
 * Retention wins over checkpoints, as in DynamoDB Streams: a reader more
 * than the retention period behind loses records.  Sequence numbers are
 * never reused, even when every record was trimmed. */
int store_stream_trim(struct store *s, int64_t now_ms, size_t *trimmed);

/* ---------- maintenance ---------- */

/* Deletes up to max items whose ttl < now (epoch s); each deletion is a
 * REMOVE stream record, like DynamoDB's TTL. */
int store_purge_expired(struct store *s, int64_t now_ms, size_t max, size_t *purged);
/* A cheap round trip to the backend; latency in ms. */
int store_health(struct store *s, double *latency_ms);

/* ---------- capacity accounting ----------
 *
 * Every operation charges its partition key in a rolling per-second
 * window kept for 60 s: gets and queries RCU, puts/updates/deletes WCU
 * (the larger of the old and new item; a failed condition still costs),
 * transactions twice the WCU.  At most 4096 keys are tracked per second;
 * more are summed under "<other>".  With throttling on, an operation that
 * would take its key past the ceiling within the current second fails
 * with ERR_THROTTLED before touching the backend (reads are checked with
 * their minimum charge, their size being unknown until read).
 */

struct store_capacity_entry {
    char pk[256]; /* partition key (truncated to 255 bytes for display) */
    double wcu;   /* write capacity units consumed in the window */
    double rcu;   /* read capacity units consumed in the window */
};

/* DynamoDB item size in bytes: attribute names + values (strings as
 * UTF-8 bytes, numbers ~ 1 byte per 2 digits + 1, booleans/null 1,
 * lists/maps 3 + contents + 1 per element). */
size_t store_item_size(const cJSON *item);
/* WCU for writing `bytes` (1 per started KB, min 1); RCU for reading
 * `bytes` (1 per started 4 KB, min 1; halved when eventually consistent). */
double store_wcu(size_t bytes);
double store_rcu(size_t bytes, bool consistent);
/* Top n partition keys by wcu+rcu over the last window_s seconds
 * (clamped to 1..60), descending, ties by key.  *nout receives the number
 * written. */
int store_capacity_top(struct store *s, int window_s, size_t n, struct store_capacity_entry *out,
                       size_t *nout);
/* Totals consumed over the last window_s seconds. */
void store_capacity_totals(struct store *s, int window_s, double *wcu, double *rcu);
/* Partition heat: for one minute, the most WCU/RCU a single partition key
 * of each key family (core/keys.h) consumed within one second. */
struct store_heat_minute {
    int64_t minute_ms; /* start of the minute, ms since the epoch */
    double wcu_max[KF_COUNT];
    double rcu_max[KF_COUNT];
};
/* Fills up to n minutes of the last 30 that saw traffic, most recent
 * first; *nout receives the number written. */
int store_capacity_heat(struct store *s, size_t n, struct store_heat_minute *out, size_t *nout);
/* Turns the per-partition ceiling emulation on or off. */
void store_set_throttle(struct store *s, bool on);

/* ---------- partition census (genuproof audit) ----------
 *
 * Offline questions about the whole table, for the hot-partition report:
 * how many items and bytes each partition key holds, and how many writes
 * each key took per second according to the change stream (which keeps
 * the retention period, 24 h by default).  Both walk a lot of data: not
 * for request paths.  A callback returning non-zero stops the walk and
 * the function returns that value.  Drivers without them return
 * ERR_INVALID ("not supported by this store").
 */
typedef int (*store_partition_cb)(void *arg, const char *pk, uint64_t items, uint64_t bytes);
int store_partitions(struct store *s, store_partition_cb cb, void *arg);
/* Writes per partition key and second since since_ms (stream time):
 * writes = records, bytes = sum of their new images' JSON length.  Each
 * (key, second) comes once, in no promised order (SQLite: by key, then
 * second; DynamoDB: in batches of stream time, see store/ddb_census.h). */
typedef int (*store_write_second_cb)(void *arg, const char *pk, int64_t second, uint64_t writes,
                                     uint64_t bytes);
int store_write_seconds(struct store *s, int64_t since_ms, store_write_second_cb cb, void *arg);

#endif
