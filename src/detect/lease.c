/*
 * lease.c - shard leases stored as table items (see lease.h).
 *
 * Acquisition replaces the whole item with a put conditional on what was
 * read (absent, or the same token); renewal and release are updates
 * conditional on our token.  A lost race is ERR_CONFLICT for acquire
 * (somebody else got it) and ERR_CONDITION for renew/release (we lost
 * it), so callers never mistake one for the other.
 */
#include "detect/lease.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ids.h"
#include "util/err.h"

bool lease_owner_valid(const char *owner)
{
    size_t n = owner ? strlen(owner) : 0;

    if (n == 0 || n > LEASE_OWNER_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = owner[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == ':' || c == '-'))
            return false;
    }
    return true;
}

bool lease_key(const char *shard, struct key *pk)
{
    size_t n = shard ? strlen(shard) : 0;
    return n > 0 && n <= LEASE_SHARD_MAX && key_lease_pk(pk, shard) != NULL;
}

static const char *str_attr(const cJSON *item, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

int lease_peek(struct store *s, const char *shard, struct lease_info *out)
{
    struct key pk;
    cJSON *item = NULL;
    const cJSON *exp;
    const char *owner;
    int rc;

    memset(out, 0, sizeof(*out));
    if (!lease_key(shard, &pk))
        return ERR_INVALID;
    rc = store_get(s, pk.s, KEY_SK_META, true, &item);
    if (rc == ERR_NOTFOUND)
        return 0;
    if (rc)
        return rc;
    out->exists = true;
    owner = str_attr(item, "owner");
    if (owner && strlen(owner) <= LEASE_OWNER_MAX)
        memcpy(out->owner, owner, strlen(owner) + 1);
    exp = cJSON_GetObjectItemCaseSensitive(item, "expiresAt");
    out->expires_ms = cJSON_IsNumber(exp) ? (int64_t)exp->valuedouble : 0;
    cJSON_Delete(item);
    return 0;
}

int lease_acquire(struct store *s, const char *shard, const char *owner, int64_t now_ms,
                  int64_t period_ms, struct lease *l)
{
    struct key pk;
    cJSON *item = NULL, *next = NULL, *old_token = NULL;
    struct store_cond cond = {.kind = STORE_COND_NOT_EXISTS};
    char suffix[17];
    int rc;

    if (!lease_owner_valid(owner) || !lease_key(shard, &pk))
        return ERR_INVALID;
    rc = store_get(s, pk.s, KEY_SK_META, true, &item);
    if (rc == ERR_NOTFOUND) {
        rc = 0;
    } else if (!rc) {
        const cJSON *exp = cJSON_GetObjectItemCaseSensitive(item, "expiresAt");
        const char *tok = str_attr(item, "token");
        int64_t until = cJSON_IsNumber(exp) ? (int64_t)exp->valuedouble : 0;
        if (until > now_ms) {
            rc = ERR_CONFLICT; /* held */
            goto out;
        }
        if (tok) {
            old_token = cJSON_CreateString(tok);
            cond = (struct store_cond){
                .kind = STORE_COND_ATTR_EQ, .attr = "token", .value = old_token};
        } else {
            cond = (struct store_cond){.kind = STORE_COND_ATTR_NOT_EXISTS, .attr = "token"};
        }
    } else {
        goto out;
    }

    ids_random_hex(8, suffix);
    memset(l, 0, sizeof(*l));
    memcpy(l->shard, shard, strlen(shard) + 1);
    snprintf(l->token, sizeof(l->token), "%s/%s", owner, suffix);
    l->expires_ms = now_ms + period_ms;
    next = cJSON_CreateObject();
    cJSON_AddStringToObject(next, "PK", pk.s);
    cJSON_AddStringToObject(next, "SK", KEY_SK_META);
    cJSON_AddStringToObject(next, "shardId", shard);
    cJSON_AddStringToObject(next, "owner", owner);
    cJSON_AddStringToObject(next, "token", l->token);
    cJSON_AddNumberToObject(next, "expiresAt", (double)l->expires_ms);
    rc = store_put(s, next, &cond);
    if (rc == ERR_CONDITION)
        rc = ERR_CONFLICT; /* another worker was faster */
out:
    cJSON_Delete(item);
    cJSON_Delete(next);
    cJSON_Delete(old_token);
    return rc;
}

/* Sets expiresAt to until on the condition that the token is ours. */
static int set_expiry(struct store *s, struct lease *l, int64_t until)
{
    struct key pk;
    cJSON *tok, *val;
    struct store_cond cond;
    struct store_action act = {.kind = STORE_ACT_SET, .attr = "expiresAt"};
    int rc;

    if (!lease_key(l->shard, &pk))
        return ERR_INVALID;
    tok = cJSON_CreateString(l->token);
    val = cJSON_CreateNumber((double)until);
    cond = (struct store_cond){.kind = STORE_COND_ATTR_EQ, .attr = "token", .value = tok};
    act.value = val;
    rc = store_update(s, pk.s, KEY_SK_META, &act, 1, &cond, NULL);
    if (!rc)
        l->expires_ms = until;
    cJSON_Delete(tok);
    cJSON_Delete(val);
    return rc;
}

int lease_renew(struct store *s, struct lease *l, int64_t now_ms, int64_t period_ms)
{
    return set_expiry(s, l, now_ms + period_ms);
}

int lease_release(struct store *s, struct lease *l)
{
    return set_expiry(s, l, 0);
}

void lease_check_cond(const struct lease *l, struct store_cond *cond, cJSON **value)
{
    *value = cJSON_CreateString(l->token);
    *cond = (struct store_cond){.kind = STORE_COND_ATTR_EQ, .attr = "token", .value = *value};
}

/* ---------- workers ---------- */

#define WORKERS_SHARD "_workers"
/* Most heartbeat pages read (a hostile table cannot keep us looping). */
#define WORKER_PAGES_MAX 100

int lease_worker_beat(struct store *s, const char *owner, int64_t now_ms, int64_t period_ms)
{
    struct key pk;
    cJSON *item;
    int rc;

    if (!lease_owner_valid(owner) || !key_lease_pk(&pk, WORKERS_SHARD))
        return ERR_INVALID;
    item = cJSON_CreateObject();
    cJSON_AddStringToObject(item, "PK", pk.s);
    cJSON_AddStringToObject(item, "SK", owner);
    cJSON_AddStringToObject(item, "owner", owner);
    cJSON_AddNumberToObject(item, "expiresAt", (double)(now_ms + period_ms));
    /* A dead worker's heartbeat is purged by the table's TTL a day on. */
    cJSON_AddNumberToObject(item, "ttl", (double)((now_ms + period_ms) / 1000 + 86400));
    rc = store_put(s, item, NULL);
    cJSON_Delete(item);
    return rc;
}

int lease_workers_live(struct store *s, int64_t now_ms, size_t *n)
{
    struct key pk;
    char *cursor = NULL;
    int rc = 0, pages = 0;

    *n = 0;
    if (!key_lease_pk(&pk, WORKERS_SHARD))
        return ERR_INVALID;
    do {
        struct store_query q = {
            .index = STORE_INDEX_TABLE, .pk = pk.s, .forward = true, .consistent = true};
        struct store_result res = {0};
        const cJSON *it;

        q.start = cursor;
        rc = store_query(s, &q, &res);
        free(cursor);
        cursor = NULL;
        if (rc)
            break;
        cJSON_ArrayForEach(it, res.items)
        {
            const cJSON *exp = cJSON_GetObjectItemCaseSensitive(it, "expiresAt");
            if (cJSON_IsNumber(exp) && exp->valuedouble > (double)now_ms)
                (*n)++;
        }
        cursor = res.next;
        res.next = NULL;
        store_result_free(&res);
    } while (cursor && ++pages < WORKER_PAGES_MAX);
    free(cursor);
    return rc;
}

int lease_worker_gone(struct store *s, const char *owner)
{
    struct key pk;

    if (!lease_owner_valid(owner) || !key_lease_pk(&pk, WORKERS_SHARD))
        return ERR_INVALID;
    return store_delete(s, pk.s, owner, NULL);
}

size_t lease_fair_share(size_t shards, size_t workers)
{
    size_t share;

    if (workers == 0)
        workers = 1;
    share = (shards + workers - 1) / workers;
    return share ? share : 1;
}
