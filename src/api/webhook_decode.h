/*
 * webhook_decode.h - pure decoders for the JSON bodies of POST and DELETE
 * /api/webhooks (API.md §9.27, §9.29 with §1.2's presence and type
 * rules), unit-tested and fuzzed without a server.
 */
#ifndef GP_API_WEBHOOK_DECODE_H
#define GP_API_WEBHOOK_DECODE_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* Most names accepted in "events" (duplicates are folded). */
#define WEBHOOK_EVENTS_ITEMS_MAX 16

/* POST /api/webhooks.  Strings borrow from the body. */
struct webhook_create_req {
    const char *brand_id;
    const char *url;
    unsigned events; /* WEBHOOK_EV_* bits; WEBHOOK_EV_ALL when absent */
};

/* DELETE /api/webhooks. */
struct webhook_delete_req {
    const char *brand_id;
    const char *webhook_id;
};

/*
 * Each returns 0 and fills *out, or ERR_INVALID with the 400 message in
 * err.  Order: wrong types and sizes first ("<field> must be a string",
 * "<field> is too long", "events must be an array"), then the original's
 * "brandId and url required" / "brandId and webhookId required", then
 * "Invalid brandId" / "Invalid webhookId" for ids that could address
 * other keys, then (create) "events must be a non-empty subset of
 * verification_scan, threat_alert, product_recall".  The URL itself is
 * checked later (core/webhook.h webhook_url_check).
 */
int webhook_decode_create(const cJSON *body, struct webhook_create_req *out, char *err,
                          size_t errlen);
int webhook_decode_delete(const cJSON *body, struct webhook_delete_req *out, char *err,
                          size_t errlen);

#endif
