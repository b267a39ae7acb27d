/*
 * metrics.h - counters and histograms for GET /metrics (Prometheus text
 * format 0.0.4).
 *
 * Per route (the route pattern, "unmatched" for 404s): requests by status
 * and a latency histogram.  Per process: group-commit batch sizes
 * (requests per commit), SSE clients, start time, and the store's
 * operation counters (store_get_stats) read at render time.
 * Single-threaded like the loop that owns it.
 */
#ifndef GP_API_METRICS_H
#define GP_API_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

struct metrics;
struct store;

/* Most distinct routes tracked; more fall into "other". */
#define METRICS_ROUTES_MAX 128

struct metrics *metrics_new(int64_t start_ms);
void metrics_free(struct metrics *m);

/* route: a route table path (static storage) or NULL for "unmatched". */
void metrics_request(struct metrics *m, const char *route, int status, double duration_ms);
/* One group commit covering n requests; failed = the commit failed. */
void metrics_commit(struct metrics *m, size_t n, int failed);
void metrics_set_sse_clients(struct metrics *m, long n);
void metrics_set_connections(struct metrics *m, long n);

/*
 * Extra metric families rendered after the built-in ones (detector,
 * webhook dispatcher, ...): fn appends complete "# HELP/# TYPE" blocks
 * to out and returns 0 or a negative ERR_*.  s is the store given to
 * metrics_render (may be NULL).  At most METRICS_SOURCES_MAX sources;
 * a source must be removed before its arg is freed.
 */
#define METRICS_SOURCES_MAX 8
typedef int (*metrics_source_fn)(void *arg, struct store *s, struct buf *out);
void metrics_add_source(struct metrics *m, metrics_source_fn fn, void *arg);
void metrics_remove_source(struct metrics *m, metrics_source_fn fn, void *arg);

/* Appends the exposition text to out (store may be NULL).  Returns 0 or
 * ERR_TOOBIG (out's cap). */
int metrics_render(const struct metrics *m, struct store *s, struct buf *out);

#endif
