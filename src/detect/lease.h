/*
 * lease.h - shard leases for the DynamoDB Streams detector, stored as
 * items of the table so that several `genuproof detect` processes split
 * a stream's shards between them.
 *
 * A lease is the item LEASE#<shardId>/META with the owner (worker id),
 * a token naming this ownership (owner plus a random suffix, new at every
 * acquisition), and expiresAt (wall clock, ms since the epoch).  Every
 * change is conditional on the token read before, so two workers can
 * never both believe they took the same lease:
 *   - acquire: when the item is absent (condition: absent), or expired
 *     (condition: token unchanged) -> new token, expiresAt = now + period;
 *   - renew: condition token == ours -> expiresAt = now + period;
 *   - release: condition token == ours -> expiresAt = 0 (free at once).
 * The detector also puts a check "token == ours" into the transaction
 * that moves the shard's checkpoint (lease_check_cond), so a worker that
 * lost its lease cannot move the checkpoint.
 *
 * Clocks: workers compare expiresAt with their own wall clock, so clocks
 * must agree to well within a lease period.
 */
#ifndef GP_DETECT_LEASE_H
#define GP_DETECT_LEASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/keys.h"
#include "store/store.h"

/* Default lease period (seconds, scaled by GENUPROOF_TIME_SCALE). */
#define LEASE_PERIOD_DEFAULT_S 10.0
/* Longest worker id and shard id. */
#define LEASE_OWNER_MAX 64
#define LEASE_SHARD_MAX 128
#define LEASE_TOKEN_MAX (LEASE_OWNER_MAX + 1 + 16)

struct lease {
    char shard[LEASE_SHARD_MAX + 1];
    char token[LEASE_TOKEN_MAX + 1];
    int64_t expires_ms; /* our view of the expiry */
};

/* What a lease item says (lease_peek). */
struct lease_info {
    bool exists;
    char owner[LEASE_OWNER_MAX + 1];
    int64_t expires_ms;
};

/* True when owner is a usable worker id: 1..64 bytes of [A-Za-z0-9._:-]. */
bool lease_owner_valid(const char *owner);

/*
 * Tries to take the lease of shard for owner until now_ms + period_ms.
 * On success returns 0 and fills *l.  Returns ERR_CONFLICT when another
 * worker holds an unexpired lease (or won a race for it), ERR_INVALID for
 * a bad owner or shard id, else the store's error.
 */
int lease_acquire(struct store *s, const char *shard, const char *owner, int64_t now_ms,
                  int64_t period_ms, struct lease *l);
/* Extends our lease to now_ms + period_ms.  ERR_CONDITION when it was
 * taken over (the lease is lost); else 0 or the store's error. */
int lease_renew(struct store *s, struct lease *l, int64_t now_ms, int64_t period_ms);
/* Gives the lease up (expiresAt = 0).  ERR_CONDITION when it was no
 * longer ours. */
int lease_release(struct store *s, struct lease *l);
/* Reads a shard's lease item. */
int lease_peek(struct store *s, const char *shard, struct lease_info *out);

/* ---------- workers ----------
 *
 * Each worker also keeps a heartbeat item LEASE#_workers/<owner> with
 * its expiry, so that workers can count each other and take only their
 * fair share of the shards (ceil(shards / live workers)): a worker above
 * its share gives leases back, one per refresh, and a newcomer picks
 * them up. */

/* Puts our heartbeat, valid until now_ms + period_ms. */
int lease_worker_beat(struct store *s, const char *owner, int64_t now_ms, int64_t period_ms);
/* Counts the workers whose heartbeat is still valid at now_ms. */
int lease_workers_live(struct store *s, int64_t now_ms, size_t *n);
/* Deletes our heartbeat (clean shutdown). */
int lease_worker_gone(struct store *s, const char *owner);
/* ceil(shards / workers), at least 1 (workers 0 counts as 1). */
size_t lease_fair_share(size_t shards, size_t workers);

/* The partition key of a shard's lease item (its sort key is META);
 * false when the shard id is unusable. */
bool lease_key(const char *shard, struct key *pk);
/* The condition "this lease is still ours", for a STORE_W_CHECK on the
 * lease item; *value is a new string the caller frees after use. */
void lease_check_cond(const struct lease *l, struct store_cond *cond, cJSON **value);

#endif
