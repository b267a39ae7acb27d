/*
 * ddb_table.h - DynamoDB table administration: the table the original
 * system uses (PK/SK string keys, GSI1 on GSI1PK/GSI1SK projecting ALL,
 * on-demand billing, a NEW_IMAGE stream, TTL on "ttl"), created, described
 * and deleted through ddb_http.
 */
#ifndef GP_STORE_DDB_TABLE_H
#define GP_STORE_DDB_TABLE_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "store/ddb_http.h"

/* Default table name (the original's), overridden by DYNAMODB_TABLE. */
#define DDB_TABLE_DEFAULT "authentik"
/* Longest table name DynamoDB accepts. */
#define DDB_TABLE_NAME_MAX 255

/* True when name is a valid DynamoDB table name ([A-Za-z0-9_.-]{3,255}). */
bool ddb_table_name_ok(const char *name);

/* Creates the table, waits (bounded by timeout_s, time-scaled) until it is
 * ACTIVE, then turns TTL on.  On success returns 0 and, when desc is not
 * NULL, the Table description (caller frees).  ERR_CONFLICT when it
 * already exists, ERR_TIMEOUT when it did not become active in time, else
 * as ddb_call. */
int ddb_table_create(struct ddb_http *h, const char *table, double timeout_s, cJSON **desc);
/* DescribeTable: the Table object in *desc (caller frees).  ERR_NOTFOUND
 * when the table does not exist. */
int ddb_table_describe(struct ddb_http *h, const char *table, cJSON **desc);
/* Deletes the table and waits (bounded) until it is gone.  ERR_NOTFOUND
 * when it did not exist. */
int ddb_table_delete(struct ddb_http *h, const char *table, double timeout_s);

#endif
