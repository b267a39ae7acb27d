/*
 * cmd_detect.c - `genuproof detect`: the stream detector as a process of
 * its own, reading the table's DynamoDB stream (detect/ddb_detector.h).
 * Run several to split the shards (each leases the shards it reads; a
 * dead one's shards are taken over within two lease periods); run the
 * server with --no-detector then.  Logs JSON lines on stderr, runs until
 * SIGTERM or SIGINT, then releases its leases and exits 0.
 */
#include "cmd/cmd_detect.h"

#include <ev.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cmd/options.h"
#include "detect/ddb_detector.h"
#include "store/ddb_http.h"
#include "store/ddb_table.h"
#include "store/store.h"
#include "util/err.h"
#include "util/log.h"

/* clang-format off */
static const struct opt_def detect_options[] = {
    {"dynamodb", OPT_STRING, "URL", NULL, 0, 0, NULL, NULL, 0,
     "DynamoDB endpoint (default: AWS_ENDPOINT_URL_DYNAMODB, else the region's)"},
    {"table", OPT_STRING, "NAME", DDB_TABLE_DEFAULT, 0, 0, NULL, "DYNAMODB_TABLE", 0,
     "table whose stream is read"},
    {"region", OPT_STRING, "REGION", NULL, 0, 0, NULL, NULL, 0,
     "AWS region (default: AWS_REGION, AWS_DEFAULT_REGION, us-east-1)"},
    {"worker-id", OPT_STRING, "ID", NULL, 0, 0, NULL, "GENUPROOF_WORKER_ID", 0,
     "lease owner name (default: <host>-<pid>)"},
    {"lease-s", OPT_INT, "SEC", "10", 1, 3600, NULL, NULL, 0,
     "shard lease period; a dead worker's shards move within two periods"},
    {"batch", OPT_INT, "N", "100", 1, 1000, NULL, NULL, 0,
     "stream records per batch (GetRecords Limit)"},
    OPT_DEF_OPS_LOG,
    {"poll-ms", OPT_INT, "MS", "250", 10, 60000, NULL, NULL, 0,
     "wait between polls of an idle shard (scaled by GENUPROOF_TIME_SCALE)"},
    {NULL, 0, NULL, NULL, 0, 0, NULL, NULL, 0, NULL},
};
/* clang-format on */

static void usage(FILE *f)
{
    opt_usage(f, "detect",
              "run the threat detector on the table's DynamoDB stream (leased shards, "
              "exactly-once effects)",
              detect_options);
}

static void stop_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
    (void)w;
    (void)revents;
    ev_break(loop, EVBREAK_ALL);
}

int cmd_detect(int argc, char **argv)
{
    struct opt_values v;
    struct ddb_http *h = NULL;
    struct store *s = NULL;
    struct ddb_detector *d = NULL;
    struct ev_loop *loop = NULL;
    ev_signal sigterm, sigint;
    char err[512];
    bool help;
    int status = 1;

    if (opt_parse(detect_options, argc, argv, &v, &help, err, sizeof(err))) {
        fprintf(stderr, "genuproof detect: %s\n", err);
        usage(stderr);
        return 2;
    }
    if (help) {
        usage(stdout);
        return 0;
    }
    if (!ddb_table_name_ok(opt_str(&v, "table"))) {
        fprintf(stderr, "genuproof detect: invalid table name\n");
        return 2;
    }
    if (opt_str(&v, "worker-id") && !lease_owner_valid(opt_str(&v, "worker-id"))) {
        fprintf(stderr, "genuproof detect: invalid worker id (1..64 of A-Z a-z 0-9 . _ : -)\n");
        return 2;
    }
    {
        struct ddb_http_config hc = {.endpoint = opt_str(&v, "dynamodb"),
                                     .region = opt_str(&v, "region")};
        struct store_dynamodb_options so = {.endpoint = opt_str(&v, "dynamodb"),
                                            .region = opt_str(&v, "region"),
                                            .table = opt_str(&v, "table")};
        h = ddb_http_new(&hc, err, sizeof(err));
        if (h)
            s = store_open_dynamodb(&so, err, sizeof(err));
    }
    if (!h || !s) {
        log_error("detect: %s", err);
        goto out;
    }
    {
        struct ddb_detector_config dc = {.s = s,
                                         .h = h,
                                         .table = opt_str(&v, "table"),
                                         .worker_id = opt_str(&v, "worker-id"),
                                         .lease_s = (double)opt_int(&v, "lease-s"),
                                         .batch_size = (size_t)opt_int(&v, "batch"),
                                         .poll_s = (double)opt_int(&v, "poll-ms") / 1000.0,
                                         .fold_scan_counts = store_counters_by_detector(s),
                                         .opslog_changes = opt_opslog_changes(&v)};
        d = ddb_detector_new(&dc, err, sizeof(err));
    }
    if (!d) {
        log_error("detect: %s", err);
        goto out;
    }
    loop = ev_loop_new(EVFLAG_AUTO);
    if (!loop) {
        log_error("detect: cannot create the event loop");
        goto out;
    }
    signal(SIGPIPE, SIG_IGN);
    ev_signal_init(&sigterm, stop_cb, SIGTERM);
    ev_signal_init(&sigint, stop_cb, SIGINT);
    ev_signal_start(loop, &sigterm);
    ev_signal_start(loop, &sigint);
    ddb_detector_start(d, loop);
    log_info("detect: reading the stream of table %s", opt_str(&v, "table"));
    ev_run(loop, 0);
    {
        struct ddb_detector_stats st;
        char extra[512];
        ddb_detector_get_stats(d, &st);
        snprintf(extra, sizeof(extra),
                 "\"records\":%llu,\"scans\":%llu,\"events\":%llu,\"replayed\":%llu,"
                 "\"alertsCreated\":%llu,\"alertsUpdated\":%llu,\"transactions\":%llu,"
                 "\"leasesTaken\":%llu,\"leasesLost\":%llu,\"errors\":%llu",
                 (unsigned long long)st.records, (unsigned long long)st.scans,
                 (unsigned long long)st.events, (unsigned long long)st.replayed,
                 (unsigned long long)st.alerts_created, (unsigned long long)st.alerts_updated,
                 (unsigned long long)st.transactions, (unsigned long long)st.leases_taken,
                 (unsigned long long)st.leases_lost, (unsigned long long)st.errors);
        log_msg(LOG_INFO, extra, "detect: stopping");
    }
    ev_signal_stop(loop, &sigterm);
    ev_signal_stop(loop, &sigint);
    status = 0;
out:
    ddb_detector_free(d);
    if (loop)
        ev_loop_destroy(loop);
    store_close(s);
    ddb_http_free(h);
    return status;
}
