/*
 * ingest_decode.h - pure decoders for the partner webhook bodies of
 * POST /api/ingest/pos|shipping|warehouse (API.md §9.30-§9.32), the
 * status/action maps, and the idempotency digest of §4.5.
 *
 * A decoder turns a parsed body into everything the handler needs to
 * append the event: the mapped event type, the stored actor, location
 * and data (hashed exactly as stored, [D18]), the canonical timestamp
 * when the partner sent one ([D16], §1.3) and the success message.  It
 * touches no store, so it is unit-tested and fuzzed on its own.
 */
#ifndef GP_API_INGEST_DECODE_H
#define GP_API_INGEST_DECODE_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/crypto.h"
#include "core/simulate.h"
#include "core/timeutil.h"

enum ingest_kind { INGEST_POS = 0, INGEST_SHIPPING, INGEST_WAREHOUSE };

/* Longest text field accepted in an ingest body (bytes). */
#define INGEST_STR_MAX 512
/* notes (warehouse) may be longer. */
#define INGEST_NOTES_MAX 2048
/* Longest Idempotency-Key header accepted. */
#define INGEST_IDEM_KEY_MAX 256

struct ingest_req {
    enum ingest_kind kind;
    const char *product_id;      /* borrowed from the body; NULL when absent */
    const char *code;            /* verificationCode, borrowed; NULL when absent */
    const char *type;            /* the mapped event type (static text) */
    const char *source;          /* data.source: pos_webhook, shipping_webhook, warehouse_webhook */
    char *actor;                 /* owned */
    char *location;              /* owned; NULL -> null */
    cJSON *data;                 /* owned object, keys in API.md order, absent values dropped */
    bool has_timestamp;          /* the partner sent a timestamp */
    char timestamp[ISO_LEN + 1]; /* its canonical form ("" when absent) */
    const char *ext1, *ext2;     /* external id of §4.5 (pos: orderId; shipping:
                                    trackingNumber, status; warehouse: action) */
    char *message;               /* owned: the 200 response's "message" */
};

/*
 * Decodes body (a JSON object) for kind.  Checks, in order: wrong types
 * and sizes ("<field> must be a string", "<field> is too long", "amount
 * must be a number"), the required fields (API.md's messages, e.g.
 * "orderId and platform are required"), the product reference
 * ("productId or verificationCode required", shipping: "... required to
 * map shipment to product"), then the timestamp ("Invalid timestamp").
 * On success returns 0 and fills *out (free with ingest_req_free); on
 * error returns ERR_INVALID with the 400 message in err and *out holds
 * nothing to free.
 */
int ingest_decode(enum ingest_kind kind, const cJSON *body, struct ingest_req *out, char *err,
                  size_t errlen);
void ingest_req_free(struct ingest_req *r);

/* §9.31: picked_up/in_transit/out_for_delivery -> shipped, delivered ->
 * received, anything else -> custom. */
const char *ingest_shipping_type(const char *status);
/* §9.32: received/stored/returned -> received, inspected -> inspected,
 * dispatched -> shipped, anything else -> custom. */
const char *ingest_warehouse_type(const char *action);

/* True when key can be an Idempotency-Key: 1..INGEST_IDEM_KEY_MAX
 * printable ASCII characters. */
bool ingest_idem_key_ok(const char *key);

/*
 * The §4.5 idempotency digest of a delivery: SHA-256 over productId,
 * source, the external id parts and either "key:<idem_key>" (when given)
 * or "ts:<timestamp>", each part length-prefixed so no two different
 * tuples share a digest.  Returns 0 and fills out, or ERR_INVALID when
 * the delivery is not idempotent (neither idem_key nor the request's
 * timestamp).
 */
int ingest_idem_digest(const char *product_id, const struct ingest_req *r, const char *idem_key,
                       char out[CRYPTO_HEX_LEN + 1]);

/* ---- integration bodies (API.md §9.33, §9.35) ---- */

/* POST /api/integrations/configure.  Strings borrow from the body. */
struct integ_configure_req {
    const char *brand_id, *type;
    const cJSON *config; /* object or NULL */
};

/*
 * Order: wrong types ("config must be a object" style messages), then
 * "brandId and type required", "Invalid brandId", "Invalid type. Must be
 * one of: fedex, ..." and "config is too large" (canonical text over
 * INTEGRATION_CONFIG_MAX).  Returns 0 or ERR_INVALID with err.
 */
int integ_decode_configure(const cJSON *body, struct integ_configure_req *out, char *err,
                           size_t errlen);

/* POST /api/integrations/simulate.  steps[] borrow from the body or the
 * compiled journeys; tracking numbers and order ids are left NULL with
 * their prefixes in tracking_prefix/order_prefix (the handler generates
 * them per request). */
struct integ_simulate_req {
    const char *brand_id, *product_name, *journey, *sku, *category;
    size_t n;
    struct sim_step steps[SIM_STEPS_MAX];
    const char *tracking_prefix[SIM_STEPS_MAX]; /* NULL: tracking given or no carrier */
    const char *order_prefix[SIM_STEPS_MAX];    /* NULL: orderId given or no platform */
};

/* Types and required fields: "brandId, productName, and journey
 * required", "Invalid brandId".  Returns 0 or ERR_INVALID with err. */
int integ_decode_simulate(const cJSON *body, struct integ_simulate_req *out, char *err,
                          size_t errlen);
/*
 * The journey's steps (checked after the brand exists, as in §9.35): a
 * template id, or "custom" with 1..SIM_STEPS_MAX step objects.  Errors:
 * "Invalid journey or no steps", "Too many steps (at most 50)",
 * "steps[<i>] must be an object", "Invalid event type",
 * "steps[<i>].actor is required", "<field> must be a string" style
 * messages.  Returns 0 (out->n, out->steps filled) or ERR_INVALID.
 */
int integ_simulate_steps(const cJSON *body, struct integ_simulate_req *out, char *err,
                         size_t errlen);

#endif
