/*
 * simulate.h - the writes of POST /api/integrations/simulate (API.md
 * §9.35 Reimpl, [D39]): a product created like a registration but
 * without the duplicate guard or a registration genesis event, marked
 * simulated:true, whose provenance chain is a whole journey.
 *
 * Everything lands in one store_transact(): E6 product, E11 code lookup,
 * E12 hash lookup, E13 index entry, the n events (seq 1..n, the first one
 * linked to GENESIS) and the chain head.  Timestamps are never in the
 * future: createdAt = now - (n+1)*90 min and stage i (0-based) happens at
 * createdAt + (i+1)*90 min, so the last stage is 90 minutes ago.
 */
#ifndef GP_CORE_SIMULATE_H
#define GP_CORE_SIMULATE_H

#include <stddef.h>
#include <stdint.h>

#include "core/crypto.h"
#include "core/product.h"
#include "core/timeutil.h"
#include "store/store.h"

/* Most steps of a journey (custom steps included). */
#define SIM_STEPS_MAX 50
/* Minutes between two stages. */
#define SIM_STEP_MINUTES 90
/* Tracking number / order id buffers. */
#define SIM_REF_MAX 64

/* One stage, resolved: the data of its event is
 * {"source", ["carrier","trackingNumber"], ["platform","orderId"], "simulated":true}. */
struct sim_step {
    const char *type;     /* required, a declared event type */
    const char *actor;    /* required */
    const char *location; /* NULL: no location attribute */
    const char *source;   /* required */
    const char *carrier;  /* with tracking */
    const char *tracking;
    const char *platform; /* with order_id */
    const char *order_id;
};

struct sim_input {
    const char *brand_id, *brand_name, *name; /* required */
    const char *sku, *category;               /* optional */
    const struct sim_step *steps;
    size_t n; /* 1..SIM_STEPS_MAX */
    int64_t now_ms;
    const char *secret; /* signing secret */
};

struct sim_output {
    char product_id[PRODUCT_ID_MAX + 1];
    char code[PRODUCT_CODE_MAX + 1];
    char hash[CRYPTO_HEX_LEN + 1];
    char signature[CRYPTO_HEX_LEN + 1];
    char created_at[ISO_LEN + 1];
    char event_hash[SIM_STEPS_MAX][CRYPTO_HEX_LEN + 1];
};

/* The source of a custom step (§9.35): pos_webhook for sold, else
 * shipping_webhook when it has a carrier, else warehouse_webhook. */
const char *simulate_source(const char *type, const char *carrier);
/* prefix + 8 random uppercase base-36 chars (out: SIM_REF_MAX). */
void simulate_tracking_number(const char *prefix, char out[SIM_REF_MAX]);
/* prefix + the last 8 digits of now_ms (out: SIM_REF_MAX). */
void simulate_order_id(const char *prefix, int64_t now_ms, char out[SIM_REF_MAX]);

/*
 * Writes the simulated product and its journey (see above); generated
 * ids/codes are regenerated when taken ([D46]).  On success returns 0
 * and fills *out.  On error returns ERR_INVALID (missing field, bad step,
 * key too long), ERR_CONFLICT (ids kept colliding) or another negative
 * ERR_* from the store; nothing is written then.
 */
int simulate_write(struct store *s, const struct sim_input *in, struct sim_output *out);

#endif
