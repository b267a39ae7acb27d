/*
 * metrics.c - Prometheus counters (metrics.h).
 *
 * Routes are few and static strings, so a route's slot is found by
 * pointer first and by string compare second in a small array; each slot
 * keeps a handful of (status, count) pairs and cumulative histogram
 * buckets.  Nothing allocates after metrics_new().
 */
#include "api/metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/sqlite_walbuf.h"
#include "store/store.h"
#include "util/err.h"
#include "util/xalloc.h"

#define STATUS_MAX 16

static const double lat_bounds_s[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                      0.05,   0.1,   0.25,   0.5,   1,    2.5};
#define NLAT (sizeof lat_bounds_s / sizeof lat_bounds_s[0])

static const double batch_bounds[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
#define NBATCH (sizeof batch_bounds / sizeof batch_bounds[0])

struct route_stats {
    const char *route;
    struct {
        int status;
        uint64_t count;
    } st[STATUS_MAX];
    uint64_t other_status;
    uint64_t lat[NLAT + 1]; /* per bucket (not cumulative); last = +Inf */
    double lat_sum;
    uint64_t lat_count;
};

struct metrics {
    int64_t start_ms;
    struct route_stats routes[METRICS_ROUTES_MAX];
    size_t nroutes;
    uint64_t batch[NBATCH + 1];
    double batch_sum;
    uint64_t batch_count, commit_failures;
    long sse_clients, connections;
    struct {
        metrics_source_fn fn;
        void *arg;
    } sources[METRICS_SOURCES_MAX];
    size_t nsources;
};

struct metrics *metrics_new(int64_t start_ms)
{
    struct metrics *m = xcalloc(1, sizeof *m);
    m->start_ms = start_ms;
    return m;
}

void metrics_free(struct metrics *m)
{
    free(m);
}

void metrics_add_source(struct metrics *m, metrics_source_fn fn, void *arg)
{
    if (!fn || m->nsources >= METRICS_SOURCES_MAX)
        return;
    m->sources[m->nsources].fn = fn;
    m->sources[m->nsources].arg = arg;
    m->nsources++;
}

void metrics_remove_source(struct metrics *m, metrics_source_fn fn, void *arg)
{
    for (size_t i = 0; i < m->nsources; i++) {
        if (m->sources[i].fn != fn || m->sources[i].arg != arg)
            continue;
        memmove(&m->sources[i], &m->sources[i + 1], (m->nsources - i - 1) * sizeof m->sources[0]);
        m->nsources--;
        return;
    }
}

static struct route_stats *route_slot(struct metrics *m, const char *route)
{
    if (!route)
        route = "unmatched";
    for (size_t i = 0; i < m->nroutes; i++)
        if (m->routes[i].route == route || !strcmp(m->routes[i].route, route))
            return &m->routes[i];
    if (m->nroutes < METRICS_ROUTES_MAX - 1) {
        m->routes[m->nroutes].route = route;
        return &m->routes[m->nroutes++];
    }
    /* the last slot collects everything beyond the cap */
    struct route_stats *o = &m->routes[METRICS_ROUTES_MAX - 1];
    o->route = "other";
    if (m->nroutes < METRICS_ROUTES_MAX)
        m->nroutes = METRICS_ROUTES_MAX;
    return o;
}

void metrics_request(struct metrics *m, const char *route, int status, double duration_ms)
{
    struct route_stats *r = route_slot(m, route);
    size_t i;
    for (i = 0; i < STATUS_MAX && r->st[i].status && r->st[i].status != status; i++)
        ;
    if (i < STATUS_MAX) {
        r->st[i].status = status;
        r->st[i].count++;
    } else {
        r->other_status++;
    }
    double s = duration_ms / 1000.0;
    size_t b;
    for (b = 0; b < NLAT && s > lat_bounds_s[b]; b++)
        ;
    r->lat[b]++;
    r->lat_sum += s;
    r->lat_count++;
}

void metrics_commit(struct metrics *m, size_t n, int failed)
{
    size_t b;
    for (b = 0; b < NBATCH && (double)n > batch_bounds[b]; b++)
        ;
    m->batch[b]++;
    m->batch_sum += (double)n;
    m->batch_count++;
    if (failed)
        m->commit_failures++;
}

void metrics_set_sse_clients(struct metrics *m, long n)
{
    m->sse_clients = n;
}

void metrics_set_connections(struct metrics *m, long n)
{
    m->connections = n;
}

/* Route label values are route-table paths: no quotes or backslashes,
 * but escape anyway so the text stays valid whatever a table holds. */
static void label(struct buf *out, const char *v)
{
    for (; *v; v++) {
        if (*v == '"' || *v == '\\')
            buf_putc(out, '\\');
        if (*v == '\n')
            buf_puts(out, "\\n");
        else
            buf_putc(out, *v);
    }
}

static void histogram(struct buf *out, const char *name, const char *route, const double *bounds,
                      size_t nb, const uint64_t *counts, double sum, uint64_t total)
{
    uint64_t cum = 0;
    for (size_t b = 0; b <= nb; b++) {
        cum += counts[b];
        buf_printf(out, "%s_bucket{", name);
        if (route) {
            buf_puts(out, "route=\"");
            label(out, route);
            buf_puts(out, "\",");
        }
        if (b < nb)
            buf_printf(out, "le=\"%g\"} %llu\n", bounds[b], (unsigned long long)cum);
        else
            buf_printf(out, "le=\"+Inf\"} %llu\n", (unsigned long long)cum);
    }
    buf_printf(out, "%s_sum", name);
    if (route) {
        buf_puts(out, "{route=\"");
        label(out, route);
        buf_puts(out, "\"}");
    }
    buf_printf(out, " %.6f\n%s_count", sum, name);
    if (route) {
        buf_puts(out, "{route=\"");
        label(out, route);
        buf_puts(out, "\"}");
    }
    buf_printf(out, " %llu\n", (unsigned long long)total);
}

int metrics_render(const struct metrics *m, struct store *s, struct buf *out)
{
    buf_puts(out, "# HELP genuproof_http_requests_total HTTP requests by route and status.\n"
                  "# TYPE genuproof_http_requests_total counter\n");
    for (size_t i = 0; i < m->nroutes; i++) {
        const struct route_stats *r = &m->routes[i];
        for (size_t k = 0; k < STATUS_MAX && r->st[k].status; k++) {
            buf_puts(out, "genuproof_http_requests_total{route=\"");
            label(out, r->route);
            buf_printf(out, "\",status=\"%d\"} %llu\n", r->st[k].status,
                       (unsigned long long)r->st[k].count);
        }
        if (r->other_status) {
            buf_puts(out, "genuproof_http_requests_total{route=\"");
            label(out, r->route);
            buf_printf(out, "\",status=\"other\"} %llu\n", (unsigned long long)r->other_status);
        }
    }
    buf_puts(out, "# HELP genuproof_http_request_duration_seconds Request latency by route.\n"
                  "# TYPE genuproof_http_request_duration_seconds histogram\n");
    for (size_t i = 0; i < m->nroutes; i++) {
        const struct route_stats *r = &m->routes[i];
        histogram(out, "genuproof_http_request_duration_seconds", r->route, lat_bounds_s, NLAT,
                  r->lat, r->lat_sum, r->lat_count);
    }
    buf_puts(out, "# HELP genuproof_commit_batch_requests Requests per group commit.\n"
                  "# TYPE genuproof_commit_batch_requests histogram\n");
    histogram(out, "genuproof_commit_batch_requests", NULL, batch_bounds, NBATCH, m->batch,
              m->batch_sum, m->batch_count);
    buf_printf(out,
               "# HELP genuproof_commit_failures_total Group commits that failed.\n"
               "# TYPE genuproof_commit_failures_total counter\n"
               "genuproof_commit_failures_total %llu\n",
               (unsigned long long)m->commit_failures);
    if (s) {
        struct store_stats st;
        store_get_stats(s, &st);
        static const char *const names[] = {"get",   "put",      "update", "delete",
                                            "query", "transact", "commit"};
        const uint64_t vals[] = {st.gets,    st.puts,      st.updates, st.deletes,
                                 st.queries, st.transacts, st.commits};
        buf_puts(out, "# HELP genuproof_store_operations_total Store operations by kind.\n"
                      "# TYPE genuproof_store_operations_total counter\n");
        for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
            buf_printf(out, "genuproof_store_operations_total{op=\"%s\"} %llu\n", names[i],
                       (unsigned long long)vals[i]);
        buf_printf(out,
                   "# HELP genuproof_store_errors_total Store operations that failed.\n"
                   "# TYPE genuproof_store_errors_total counter\n"
                   "genuproof_store_errors_total{kind=\"error\"} %llu\n"
                   "genuproof_store_errors_total{kind=\"throttled\"} %llu\n"
                   "genuproof_store_errors_total{kind=\"condition\"} %llu\n"
                   "# HELP genuproof_store_batch_writes_last Writes in the last committed batch.\n"
                   "# TYPE genuproof_store_batch_writes_last gauge\n"
                   "genuproof_store_batch_writes_last %llu\n"
                   "# HELP genuproof_store_wal_syncs_total fdatasync calls of the WAL sync thread "
                   "(deferred sync; 0 when commits sync inline).\n"
                   "# TYPE genuproof_store_wal_syncs_total counter\n"
                   "genuproof_store_wal_syncs_total %llu\n",
                   (unsigned long long)st.errors, (unsigned long long)st.throttled,
                   (unsigned long long)st.conditions_failed,
                   (unsigned long long)st.batch_writes_last, (unsigned long long)st.wal_syncs);
    }
    struct sqlite_walbuf_stats wb;
    sqlite_walbuf_stats(&wb); /* process-wide; all zero without a SQLite store */
    if (wb.writes_in)
        buf_printf(out,
                   "# HELP genuproof_store_wal_writes_total WAL writes SQLite asked for (asked) "
                   "and the coalesced writes made (made).\n"
                   "# TYPE genuproof_store_wal_writes_total counter\n"
                   "genuproof_store_wal_writes_total{kind=\"asked\"} %llu\n"
                   "genuproof_store_wal_writes_total{kind=\"made\"} %llu\n"
                   "# HELP genuproof_store_wal_write_errors_total WAL writes that failed.\n"
                   "# TYPE genuproof_store_wal_write_errors_total counter\n"
                   "genuproof_store_wal_write_errors_total %llu\n",
                   (unsigned long long)wb.writes_in, (unsigned long long)wb.writes_out,
                   (unsigned long long)wb.errors);
    buf_printf(out,
               "# HELP genuproof_sse_clients Connected Server-Sent Events clients.\n"
               "# TYPE genuproof_sse_clients gauge\n"
               "genuproof_sse_clients %ld\n"
               "# HELP genuproof_http_connections Open HTTP connections.\n"
               "# TYPE genuproof_http_connections gauge\n"
               "genuproof_http_connections %ld\n"
               "# HELP process_start_time_seconds Start time of the process since the epoch.\n"
               "# TYPE process_start_time_seconds gauge\n"
               "process_start_time_seconds %.3f\n",
               m->sse_clients, m->connections, (double)m->start_ms / 1000.0);
    for (size_t i = 0; i < m->nsources; i++) {
        int rc = m->sources[i].fn(m->sources[i].arg, s, out);
        if (rc)
            return rc;
    }
    /* buf appends are capped: report a truncated rendering */
    return out->max && out->len >= out->max ? ERR_TOOBIG : 0;
}
