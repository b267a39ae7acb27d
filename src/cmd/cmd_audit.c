/*
 * cmd_audit.c - `genuproof audit`: the hot-partition report
 * (store/census.h) of a store, as a table or JSON.
 *
 * The store is chosen with serve's own options (--store, --dynamodb,
 * --table: the rows are taken from serve_options and opened with
 * cmd/store_open.h).  On SQLite it reads the database file a server is
 * using (WAL lets it run beside the server) and never writes to it.  On
 * DynamoDB it scans the table and reads its stream (store_dynamodb.c,
 * store/ddb_census.h) and reports what that cost: the consumed capacity
 * DynamoDB returned for the scan.  Exit status: 0 report printed, 1 the
 * store could not be read, 2 usage.
 */
#include "cmd/cmd_audit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/audit_server.h"
#include "cmd/options.h"
#include "cmd/store_open.h"
#include "core/timeutil.h"
#include "store/census.h"
#include "store/ddb_http.h"
#include "store/store.h"
#include "store/store_dynamodb.h"
#include "util/err.h"

static const struct opt_def audit_own_options[] = {
    {"db", OPT_STRING, "PATH", "./genuproof.db", 0, 0, NULL, NULL, 0,
     "SQLite database file to report on (read only)"},
    {"window", OPT_INT, "MIN", "60", 1, 10080, NULL, NULL, 0,
     "look at the writes of the last MIN minutes of the change stream (it keeps 24 h)"},
    {"json", OPT_FLAG, NULL, NULL, 0, 0, NULL, NULL, 0, "print the report as JSON"},
    {"url", OPT_STRING, "URL", NULL, 0, 0, NULL, NULL, 0,
     "also fold in the capacity accounting of the server at URL (GET /api/admin/partitions)"},
    {"api-key", OPT_STRING, "KEY", NULL, 0, 0, NULL, "GENUPROOF_API_KEY", 0, "admin key for --url"},
    {NULL, 0, NULL, NULL, 0, 0, NULL, NULL, 0, NULL},
};

/* The store selection rows shared with `serve`. */
static const char *const audit_serve_rows[] = {"store", "dynamodb", "table"};

#define AUDIT_ROWS 12

/* Fills rows (AUDIT_ROWS entries) with audit's own options followed by
 * serve's store selection rows, ended by a NULL row. */
static void audit_options(struct opt_def rows[AUDIT_ROWS])
{
    size_t n = 0;
    memset(rows, 0, AUDIT_ROWS * sizeof(*rows));
    for (size_t i = 0; audit_own_options[i].name; i++)
        rows[n++] = audit_own_options[i];
    for (size_t j = 0; j < sizeof audit_serve_rows / sizeof audit_serve_rows[0]; j++)
        for (size_t i = 0; serve_options[i].name; i++)
            if (!strcmp(serve_options[i].name, audit_serve_rows[j]) && n + 1 < AUDIT_ROWS)
                rows[n++] = serve_options[i];
}

/* What the audit itself cost on DynamoDB (scan and stream reads). */
static void print_cost(FILE *f, const struct ddb_http_stats *st, const char *table)
{
    fprintf(f,
            "\nAudit cost on DynamoDB table %s: %lu calls, %.1f RCU consumed by the scan, "
            "%lu retries, %lu throttled\n",
            table, st->calls, st->consumed_rcu, st->retries, st->throttles);
}

static cJSON *cost_json(const struct ddb_http_stats *st)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "calls", (double)st->calls);
    cJSON_AddNumberToObject(o, "consumedRcu", st->consumed_rcu);
    cJSON_AddNumberToObject(o, "consumedWcu", st->consumed_wcu);
    cJSON_AddNumberToObject(o, "retries", (double)st->retries);
    cJSON_AddNumberToObject(o, "throttles", (double)st->throttles);
    return o;
}

int cmd_audit(int argc, char **argv)
{
    struct opt_def rows[AUDIT_ROWS];
    struct opt_values o;
    struct ddb_http_stats st;
    struct store *s = NULL;
    struct census *c = NULL;
    cJSON *parts = NULL;
    char err[512];
    bool help = false, ddb;
    int status = 1, rc;

    audit_options(rows);
    if (opt_parse(rows, argc, argv, &o, &help, err, sizeof err)) {
        fprintf(stderr, "genuproof audit: %s\n", err);
        return 2;
    }
    if (help) {
        opt_usage(stdout, "audit",
                  "Hot-partition report: key patterns, their size and write "
                  "heat, and a risk verdict per pattern.",
                  rows);
        return 0;
    }
    if (opt_str(&o, "url") && !opt_str(&o, "api-key")) {
        fprintf(stderr, "genuproof audit: --url needs --api-key (or GENUPROOF_API_KEY)\n");
        return 2;
    }
    ddb = cmd_store_is_dynamodb(&o);
    /* SQLite would create a missing file: refuse it first. */
    if (!ddb && access(opt_str(&o, "db"), R_OK) != 0) {
        fprintf(stderr, "genuproof audit: %s: no such database\n", opt_str(&o, "db"));
        return 1;
    }
    s = cmd_store_open(&o, false, err, sizeof err); /* a plain connection: no threads */
    if (!s) {
        fprintf(stderr, "genuproof audit: %s: %s\n", ddb ? opt_str(&o, "table") : opt_str(&o, "db"),
                err);
        return 1;
    }
    c = calloc(1, sizeof *c);
    if (!c)
        goto out;
    int64_t now = time_now_ms();
    rc = census_collect(s, now - opt_int(&o, "window") * 60000, now, c);
    if (rc) {
        fprintf(stderr, "genuproof audit: cannot read the store: %s\n", err_str(rc));
        goto out;
    }
    if (!ddb || store_dynamodb_http_stats(s, &st))
        ddb = false;
    if (opt_str(&o, "url")) {
        rc =
            audit_server_fetch(opt_str(&o, "url"), opt_str(&o, "api-key"), &parts, err, sizeof err);
        if (rc) {
            fprintf(stderr, "genuproof audit: %s: %s\n", opt_str(&o, "url"), err);
            goto out;
        }
        audit_server_fold(c, parts);
    }
    if (opt_flag(&o, "json")) {
        cJSON *j = census_json(c);
        cJSON_AddStringToObject(j, "store", store_driver_name(s));
        if (ddb) {
            cJSON_AddStringToObject(j, "table", opt_str(&o, "table"));
            cJSON_AddItemToObject(j, "auditCost", cost_json(&st));
        }
        if (parts)
            cJSON_AddItemToObject(j, "serverCapacity", audit_server_json(parts));
        char *text = cJSON_PrintUnformatted(j);
        if (text)
            printf("%s\n", text);
        free(text);
        cJSON_Delete(j);
    } else {
        census_print(stdout, c);
        if (parts)
            audit_server_print(stdout, opt_str(&o, "url"), parts);
        if (ddb)
            print_cost(stdout, &st, opt_str(&o, "table"));
    }
    status = fflush(stdout) == 0 ? 0 : 1;
out:
    cJSON_Delete(parts);
    free(c);
    store_close(s);
    return status;
}
