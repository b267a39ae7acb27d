/*
 * event.h - the provenance event entity (API.md E7): its stored item, its
 * hash, and the JSON shapes the endpoints return for it.
 *
 * An event item lives in its product's partition under
 * SK = EVENT#<timestamp>#<type>#<seq> (core/keys.h) and carries the
 * attributes productId, type, actor, location, coordinates (events POST
 * only), timestamp, data, hash, previousHash and seq.  The hash covers
 * exactly the stored actor and data (API.md §3.5 with the [D18] fix).
 */
#ifndef GP_CORE_EVENT_H
#define GP_CORE_EVENT_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/crypto.h"
#include "core/jsonw.h"

/* The declared event types (API.md §4.1). */
#define EVENT_TYPES_N 8
extern const char *const event_types[EVENT_TYPES_N];

/* True when type is one of the declared event types. */
bool event_type_valid(const char *type);

/* What a writer supplies for one event.  Strings are borrowed. */
struct event_fields {
    const char *product_id;   /* required */
    const char *type;         /* required */
    const char *actor;        /* required */
    const char *timestamp;    /* required, canonical ISO */
    const cJSON *data;        /* object; NULL -> {} */
    const char *location;     /* NULL -> null */
    bool omit_location;       /* recall events have no location attribute */
    bool with_coordinates;    /* write a coordinates attribute (events POST) */
    const cJSON *coordinates; /* {lat,lng} object or NULL -> null */
};

/*
 * Builds the stored item of an event with sequence number seq whose
 * previous hash is previous_hash, and writes its hash into hash_out.
 * The caller owns the result.  On error (missing field, key too long,
 * data not an object) returns NULL.
 */
cJSON *event_item_new(const struct event_fields *f, uint32_t seq, const char *previous_hash,
                      char hash_out[CRYPTO_HEX_LEN + 1]);

/* Recomputes an item's hash from its stored fields (API.md §3.5).  On
 * success returns 0 and fills out; ERR_INVALID when a field is missing
 * or has the wrong type. */
int event_item_hash(const cJSON *item, char out[CRYPTO_HEX_LEN + 1]);

/* The item's seq attribute (0 when absent, e.g. events written by the
 * original, which are ordered by sort key instead). */
uint32_t event_item_seq(const cJSON *item);

/* JSON shapes (each writes one object). */
/* verify (§9.8): productId, type, actor, location, timestamp, hash,
 * previousHash, data. */
void event_write_verify_json(struct jsonw *w, const cJSON *item);
/* events GET (§9.11): type, actor, location, timestamp, data, hash,
 * previousHash. */
void event_write_list_json(struct jsonw *w, const cJSON *item);

#endif
