/*
 * cmd_table.c - `genuproof table create|describe|delete`: administration
 * of the DynamoDB table, laid out exactly like the original's (see
 * store/ddb_table.h).  The endpoint comes from --dynamodb, else
 * AWS_ENDPOINT_URL_DYNAMODB, else the region's public endpoint; the table
 * from --table, else DYNAMODB_TABLE, else "authentik".  create and delete
 * wait (bounded by --wait seconds, time-scaled) until the table is ACTIVE
 * or gone; create and describe print the table description as JSON on
 * stdout.  Exit status: 0 done, 1 failed, 2 usage.
 */
#include "cmd/cmd_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/options.h"
#include "store/ddb_http.h"
#include "store/ddb_table.h"
#include "util/err.h"

/* clang-format off */
static const struct opt_def table_options[] = {
    {"dynamodb", OPT_STRING, "URL", NULL, 0, 0, NULL, NULL, 0,
     "DynamoDB endpoint (default: AWS_ENDPOINT_URL_DYNAMODB, else the region's)"},
    {"table", OPT_STRING, "NAME", DDB_TABLE_DEFAULT, 0, 0, NULL, "DYNAMODB_TABLE", 0,
     "table name"},
    {"region", OPT_STRING, "REGION", NULL, 0, 0, NULL, NULL, 0,
     "AWS region (default: AWS_REGION, AWS_DEFAULT_REGION, us-east-1)"},
    {"wait", OPT_INT, "SEC", "120", 1, 3600, NULL, NULL, 0,
     "longest wait for the table to become ACTIVE (create) or disappear (delete)"},
    {NULL, 0, NULL, NULL, 0, 0, NULL, NULL, 0, NULL},
};
/* clang-format on */

static void usage(FILE *f)
{
    opt_usage(f, "table create|describe|delete",
              "create, describe or delete the DynamoDB table (PK/SK, GSI1, on-demand, "
              "NEW_IMAGE stream, TTL on ttl)",
              table_options);
}

static void print_json(const cJSON *v)
{
    char *text = cJSON_Print(v);
    if (text) {
        fputs(text, stdout);
        fputc('\n', stdout);
        free(text);
    }
}

int cmd_table_admin(int argc, char **argv)
{
    struct opt_values v;
    struct ddb_http *h = NULL;
    cJSON *desc = NULL;
    const char *action, *table;
    char err[512];
    bool help;
    int rc, status = 1;
    double wait_s;
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    action = argv[1];
    if (strcmp(action, "create") && strcmp(action, "describe") && strcmp(action, "delete")) {
        fprintf(stderr, "genuproof table: unknown action '%s' (create, describe, delete)\n",
                action);
        return 2;
    }
    if (opt_parse(table_options, argc - 1, argv + 1, &v, &help, err, sizeof(err))) {
        fprintf(stderr, "genuproof table: %s\n", err);
        return 2;
    }
    if (help) {
        usage(stdout);
        return 0;
    }
    table = opt_str(&v, "table");
    if (!ddb_table_name_ok(table)) {
        fprintf(stderr, "genuproof table: invalid table name (3-255 of A-Z a-z 0-9 _ . -)\n");
        return 2;
    }
    wait_s = (double)opt_int(&v, "wait");
    struct ddb_http_config cfg = {.endpoint = opt_str(&v, "dynamodb"),
                                  .region = opt_str(&v, "region")};
    h = ddb_http_new(&cfg, err, sizeof(err));
    if (!h) {
        fprintf(stderr, "genuproof table: %s\n", err);
        return 1;
    }
    if (!strcmp(action, "create")) {
        rc = ddb_table_create(h, table, wait_s, &desc);
        if (rc == ERR_CONFLICT)
            fprintf(stderr, "genuproof table: table %s already exists\n", table);
    } else if (!strcmp(action, "describe")) {
        rc = ddb_table_describe(h, table, &desc);
    } else {
        rc = ddb_table_delete(h, table, wait_s);
        if (!rc)
            printf("{\"TableName\":\"%s\",\"deleted\":true}\n", table);
    }
    if (rc == ERR_NOTFOUND)
        fprintf(stderr, "genuproof table: table %s does not exist\n", table);
    else if (rc == ERR_TIMEOUT)
        fprintf(stderr, "genuproof table: %s did not finish within %.0f s\n", table, wait_s);
    else if (rc && rc != ERR_CONFLICT)
        fprintf(stderr, "genuproof table: %s failed: %s\n", action, err_str(rc));
    if (!rc) {
        if (desc)
            print_json(desc);
        status = 0;
    }
    cJSON_Delete(desc);
    ddb_http_free(h);
    return status;
}
