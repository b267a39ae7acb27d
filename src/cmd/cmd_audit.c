/*
 * cmd_audit.c - `genuproof audit`: the hot-partition report
 * (store/census.h) of a store, as a table or JSON.
 *
 * It reads the database file a server is using (SQLite WAL lets it run
 * beside the server) and never writes to it.  Exit status: 0 report
 * printed, 1 the store could not be read, 2 usage.
 */
#include "cmd/cmd_audit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/options.h"
#include "core/timeutil.h"
#include "store/census.h"
#include "store/store.h"
#include "util/err.h"

static const struct opt_def audit_options[] = {
    {"db", OPT_STRING, "PATH", "./genuproof.db", 0, 0, NULL, NULL, 0,
     "SQLite database file to report on (read only)"},
    {"window", OPT_INT, "MIN", "60", 1, 10080, NULL, NULL, 0,
     "look at the writes of the last MIN minutes of the change stream (it keeps 24 h)"},
    {"json", OPT_FLAG, NULL, NULL, 0, 0, NULL, NULL, 0, "print the report as JSON"},
    {NULL, 0, NULL, NULL, 0, 0, NULL, NULL, 0, NULL},
};

int cmd_audit(int argc, char **argv)
{
    struct opt_values o;
    struct store_options so = {0};
    struct store *s = NULL;
    struct census *c = NULL;
    char err[512];
    bool help = false;
    int status = 1, rc;

    if (opt_parse(audit_options, argc, argv, &o, &help, err, sizeof err)) {
        fprintf(stderr, "genuproof audit: %s\n", err);
        return 2;
    }
    if (help) {
        opt_usage(stdout, "audit",
                  "Hot-partition report: key patterns, their size and write "
                  "heat, and a risk verdict per pattern.",
                  audit_options);
        return 0;
    }
    so.path = opt_str(&o, "db");
    if (access(so.path, R_OK) != 0) {
        fprintf(stderr, "genuproof audit: %s: no such database\n", so.path);
        return 1;
    }
    s = store_open_sqlite(&so, err, sizeof err);
    if (!s) {
        fprintf(stderr, "genuproof audit: %s: %s\n", so.path, err);
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
    if (opt_flag(&o, "json")) {
        cJSON *j = census_json(c);
        char *text = cJSON_PrintUnformatted(j);
        if (text)
            printf("%s\n", text);
        free(text);
        cJSON_Delete(j);
    } else {
        census_print(stdout, c);
    }
    status = fflush(stdout) == 0 ? 0 : 1;
out:
    free(c);
    store_close(s);
    return status;
}
