/*
 * store_open.c - the store selection of `serve` and `audit` (see store_open.h).
 */
#include "cmd/store_open.h"

#include <stdio.h>
#include <string.h>

#include "core/keys.h"
#include "store/store.h"

bool cmd_store_is_dynamodb(const struct opt_values *o)
{
    const char *drv = opt_str(o, "store");
    return (drv && !strcmp(drv, "dynamodb")) || opt_given(o, "dynamodb");
}

struct store *cmd_store_open(const struct opt_values *o, bool serving, char *err, size_t errlen)
{
    struct store *s;
    char msg[512];
    const char *drv = opt_str(o, "store");
    if (opt_given(o, "store") && drv && !strcmp(drv, "sqlite") && opt_given(o, "dynamodb")) {
        snprintf(err, errlen, "--dynamodb needs --store dynamodb (not --store sqlite)");
        return NULL;
    }
    if (cmd_store_is_dynamodb(o)) {
        struct store_dynamodb_options d = {
            .endpoint = opt_str(o, "dynamodb"),
            .table = opt_str(o, "table"),
        };
        s = store_open_dynamodb(&d, msg, sizeof(msg));
        if (!s)
            snprintf(err, errlen, "dynamodb: %s", msg);
        return s;
    }
    const char *dur = opt_str(o, "durability");
    struct store_options so = {
        .path = opt_str(o, "db"),
        .durability =
            dur && !strcmp(dur, "normal") ? STORE_DURABILITY_NORMAL : STORE_DURABILITY_FULL,
        /* Ops-log entries, window states and dedup items: keys only in the
         * change stream (no reader looks into them; docs/architecture.md). */
        .stream_keys_only = key_stream_keys_only,
        /* The loop must not wait for WAL checkpoints, nor for the WAL's
         * fsync: the server holds each answer until its commit is synced
         * (store/sqlite_sync.h, http_handler.commit_ticket). */
        .background_checkpoint = serving,
        .deferred_sync = serving,
    };
    s = store_open_sqlite(&so, msg, sizeof(msg));
    if (!s)
        snprintf(err, errlen, "%s", msg);
    return s;
}
