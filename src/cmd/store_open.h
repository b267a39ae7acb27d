/*
 * store_open.h - opens the item store the `serve` options select:
 * SQLite (--store sqlite, the default: --db, --durability) or DynamoDB
 * (--store dynamodb, or any --dynamodb URL: the endpoint; --table or
 * DYNAMODB_TABLE: the table; credentials and region from the AWS
 * environment, see store/ddb_http.h).
 */
#ifndef GP_CMD_STORE_OPEN_H
#define GP_CMD_STORE_OPEN_H

#include <stdbool.h>
#include <stddef.h>

#include "cmd/options.h"

struct store;

/* True when the options select the DynamoDB driver. */
bool cmd_store_is_dynamodb(const struct opt_values *o);

/* Opens the selected store.  On error returns NULL with a message in err
 * (it names the database or table, never a secret).  serving: for a
 * server's loop (SQLite: checkpoints and WAL syncs on threads of their
 * own, so the loop waits for neither); a one-shot tool such as `audit`
 * passes false and gets a plain connection, no threads. */
struct store *cmd_store_open(const struct opt_values *o, bool serving, char *err, size_t errlen);

#endif
