/*
 * job_claim.h - work items taken by one of several processes.
 *
 * On DynamoDB the API processes share no memory and read no change
 * stream: the Streams detector writes work items (webhook deliveries,
 * classification jobs) into a sparse GSI1 partition, and every API
 * process polls that partition.  A process takes an item with a
 * conditional update that writes a fresh random claimToken and a
 * claimUntil (epoch ms), on the condition that the item still carries the
 * token the process saw (or still has none).  Of several processes that
 * saw the same item, exactly one update succeeds; the others get
 * ERR_CONDITION and leave the item alone.  The holder writes its outcome
 * on the condition that the token is still its own (claim_cond_mine), so
 * a process that stalled past claimUntil, whose item was taken over, can
 * no longer overwrite the new holder's work.  A claim that is never
 * released (the holder died) lapses at claimUntil, and the next poll of
 * any process takes the item again: work is done at least once.
 */
#ifndef GP_API_JOB_CLAIM_H
#define GP_API_JOB_CLAIM_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/keys.h"
#include "store/store.h"

#define CLAIM_TOKEN_LEN  32 /* hex digits */
#define CLAIM_ATTR_TOKEN KEY_ATTR_CLAIM_TOKEN
#define CLAIM_ATTR_UNTIL KEY_ATTR_CLAIM_UNTIL

/* Producers create work items with claimToken "" (free); a holder
 * gives an item back by setting it to "" again (claim_release_acts). */

/* True when item carries no claim ("" or no claimToken), or one that
 * lapsed (claimUntil <= now_ms, or not a number). */
bool claim_is_free(const cJSON *item, int64_t now_ms);

/*
 * Takes (pk, sk) until until_ms, if it still carries the claim seen in
 * `seen` (its claimToken, or none): on success returns 0 with the new
 * token in token.  ERR_CONDITION when the item is gone or another process
 * took it first; other store errors as they come.
 */
int claim_take(struct store *s, const char *pk, const char *sk, const cJSON *seen, int64_t until_ms,
               char token[CLAIM_TOKEN_LEN + 1]);

/*
 * claim_take, then the item as it is now (*cur, the caller's): the index
 * the caller saw it in may lag the table, so what it acts on is read
 * again, consistently.  *cur is NULL (and 0 returned) when the item
 * vanished after the claim.  Errors as claim_take's, or the read's (the
 * claim then lapses and the item is taken again).  token is "" exactly
 * when no claim was taken.
 */
int claim_take_read(struct store *s, const char *pk, const char *sk, const cJSON *seen,
                    int64_t until_ms, char token[CLAIM_TOKEN_LEN + 1], cJSON **cur);

/* Gives the claim on (pk, sk) back (claim_release_acts) if it is still
 * token's.  ERR_CONDITION when it is not (or the item is gone). */
int claim_give_back(struct store *s, const char *pk, const char *sk, const char *token);

/* The condition "claimToken == token" in *cond; *val is the value it
 * points to, for the caller to cJSON_Delete after the write. */
void claim_cond_mine(struct store_cond *cond, cJSON **val, const char *token);

/* The two actions that give a claim back (SET claimToken = "", REMOVE
 * claimUntil), for an update conditional on claim_cond_mine.  acts[0]
 * points to a static empty string. */
void claim_release_acts(struct store_action acts[2]);

#endif
