/*
 * chain.h - a product's provenance chain (API.md §4, Reimpl §4.4/§4.5).
 *
 * Each event has a per-product, 1-based, gap-free sequence number; chain
 * order is seq order.  The head of the chain is a small item
 * PRODUCT#<id>/CHAIN {productId, seq, hash}.  Appending is one
 * store_transact(): put the event (condition: its key is new) and the new
 * head (condition: head.seq is still the seq we read, or no head item
 * exists yet), plus any extra writes the caller needs to be atomic with
 * the event (status update, alert, idempotency record ...).  A lost race
 * re-reads the head and retries (CHAIN_APPEND_TRIES times).
 *
 * Products written by the original have events without seq and no head
 * item: their order is sort-key order and the head is derived from them.
 */
#ifndef GP_CORE_CHAIN_H
#define GP_CORE_CHAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/crypto.h"
#include "core/event.h"
#include "store/store.h"

/* Attempts of chain_append() before it gives up with ERR_CONFLICT. */
#define CHAIN_APPEND_TRIES 5
/* Most events a chain may hold (listing and append refuse more with
 * ERR_TOOBIG), so that reading a chain stays bounded. */
#define CHAIN_MAX_EVENTS 10000

struct chain_head {
    uint32_t seq;                  /* 0 for an empty chain */
    char hash[CRYPTO_HEX_LEN + 1]; /* GENESIS for an empty chain */
    bool has_item;                 /* a CHAIN item exists */
};

struct chain_appended {
    uint32_t seq;
    char hash[CRYPTO_HEX_LEN + 1];
    char previous_hash[CRYPTO_HEX_LEN + 1];
};

/* The head item {PK, SK=CHAIN, productId, seq, hash}; caller owns it.
 * NULL when the key would be too long. */
cJSON *chain_head_item_new(const char *product_id, uint32_t seq, const char *hash);

/*
 * Reads the head of a product's chain (the CHAIN item, or derived from
 * the events when there is none).  On success returns 0 and fills *out;
 * on error a negative ERR_* from the store.
 */
int chain_head_read(struct store *s, const char *product_id, struct chain_head *out);

/*
 * Lists a product's events in chain order (seq order; events without seq
 * first, in sort-key order).  On success returns 0 and *out is a new
 * array the caller frees (empty for an unknown product).  On error
 * returns a negative ERR_* (ERR_TOOBIG past CHAIN_MAX_EVENTS) and *out is
 * NULL.
 */
int chain_list(struct store *s, const char *product_id, cJSON **out);

/*
 * Integrity check of API.md §4.4 (Reimpl) over events in chain order:
 * the first previousHash is GENESIS, every stored hash equals the
 * recomputed one, and each previousHash equals the preceding hash.  An
 * empty chain is valid.
 */
bool chain_valid(const cJSON *events);

/*
 * The items of a new chain's first event: the event with seq 1 and
 * previousHash GENESIS (*event_out) and the head item (*head_out).  The
 * registration transaction puts both with NOT_EXISTS conditions.  On
 * success returns 0 (caller owns both items) and fills hash_out; on error
 * ERR_INVALID and both outputs are NULL.
 */
int chain_genesis_items(const struct event_fields *f, cJSON **event_out, cJSON **head_out,
                        char hash_out[CRYPTO_HEX_LEN + 1]);

/*
 * Appends one event to the chain of f->product_id.  extra[0..nextra) are
 * written in the same transaction (at most STORE_TRANSACT_MAX - 2; they
 * must not address the event or the CHAIN item).  On success returns 0
 * and fills *out.  On error returns:
 *   ERR_CONDITION - a condition of extra[*failed_extra] failed (nothing
 *                   written);
 *   ERR_CONFLICT  - still racing after CHAIN_APPEND_TRIES attempts;
 *   ERR_TOOBIG    - the chain holds CHAIN_MAX_EVENTS events, or an item
 *                   is too large;
 *   ERR_INVALID   - bad fields;
 *   another negative ERR_* from the store.
 */
int chain_append(struct store *s, const struct event_fields *f, const struct store_write *extra,
                 size_t nextra, struct chain_appended *out, int *failed_extra);

#endif
