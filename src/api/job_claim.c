/*
 * job_claim.c - work items taken by one of several processes
 * (job_claim.h).
 */
#include "api/job_claim.h"

#include <string.h>

#include "core/ids.h"
#include "util/err.h"

bool claim_is_free(const cJSON *item, int64_t now_ms)
{
    const cJSON *tok = cJSON_GetObjectItemCaseSensitive(item, CLAIM_ATTR_TOKEN);
    const cJSON *until = cJSON_GetObjectItemCaseSensitive(item, CLAIM_ATTR_UNTIL);

    if (!cJSON_IsString(tok) || !tok->valuestring[0])
        return true; /* never claimed, or given back ("") */
    return !cJSON_IsNumber(until) || until->valuedouble <= (double)now_ms;
}

int claim_take(struct store *s, const char *pk, const char *sk, const cJSON *seen, int64_t until_ms,
               char token[CLAIM_TOKEN_LEN + 1])
{
    const cJSON *old = cJSON_GetObjectItemCaseSensitive(seen, CLAIM_ATTR_TOKEN);
    struct store_cond cond;
    cJSON *tok, *until, *img = NULL;
    int rc;

    ids_random_hex(CLAIM_TOKEN_LEN / 2, token);
    tok = cJSON_CreateString(token);
    until = cJSON_CreateNumber((double)until_ms);
    if (cJSON_IsString(old))
        cond =
            (struct store_cond){.kind = STORE_COND_ATTR_EQ, .attr = CLAIM_ATTR_TOKEN, .value = old};
    else
        cond = (struct store_cond){.kind = STORE_COND_ATTR_NOT_EXISTS, .attr = CLAIM_ATTR_TOKEN};
    const struct store_action acts[2] = {
        {.kind = STORE_ACT_SET, .attr = CLAIM_ATTR_TOKEN, .value = tok},
        {.kind = STORE_ACT_SET, .attr = CLAIM_ATTR_UNTIL, .value = until},
    };
    rc = store_update(s, pk, sk, acts, 2, &cond, &img);
    if (!rc && !cJSON_IsString(old) && img && cJSON_GetArraySize(img) <= 4) {
        /* ATTR_NOT_EXISTS also holds when the item is gone, and the
         * update (an upsert) then created a bare item holding only PK,
         * SK and the claim: delete it again.  Producers write
         * claimToken "" so that this path is only for items written
         * without one. */
        struct store_cond mine;
        cJSON *v;
        claim_cond_mine(&mine, &v, token);
        int drc = store_delete(s, pk, sk, &mine);
        cJSON_Delete(v);
        rc = drc && drc != ERR_CONDITION ? drc : ERR_CONDITION;
    }
    cJSON_Delete(img);
    cJSON_Delete(tok);
    cJSON_Delete(until);
    if (rc)
        token[0] = '\0';
    return rc;
}

int claim_take_read(struct store *s, const char *pk, const char *sk, const cJSON *seen,
                    int64_t until_ms, char token[CLAIM_TOKEN_LEN + 1], cJSON **cur)
{
    int rc = claim_take(s, pk, sk, seen, until_ms, token);

    *cur = NULL;
    if (rc)
        return rc;
    rc = store_get(s, pk, sk, true, cur);
    return rc == ERR_NOTFOUND ? 0 : rc;
}

int claim_give_back(struct store *s, const char *pk, const char *sk, const char *token)
{
    struct store_action acts[2];
    struct store_cond mine;
    cJSON *v;
    int rc;

    claim_release_acts(acts);
    claim_cond_mine(&mine, &v, token);
    rc = store_update(s, pk, sk, acts, 2, &mine, NULL);
    cJSON_Delete(v);
    return rc;
}

void claim_cond_mine(struct store_cond *cond, cJSON **val, const char *token)
{
    *val = cJSON_CreateString(token);
    *cond =
        (struct store_cond){.kind = STORE_COND_ATTR_EQ, .attr = CLAIM_ATTR_TOKEN, .value = *val};
}

void claim_release_acts(struct store_action acts[2])
{
    /* a constant node: nothing to allocate or free */
    static char none[] = "";
    static const cJSON empty = {.type = cJSON_String, .valuestring = none};
    acts[0] =
        (struct store_action){.kind = STORE_ACT_SET, .attr = CLAIM_ATTR_TOKEN, .value = &empty};
    acts[1] = (struct store_action){.kind = STORE_ACT_REMOVE, .attr = CLAIM_ATTR_UNTIL};
}
