/*
 * webhook_decode.c - body decoders of the webhook routes
 * (webhook_decode.h): type and size errors first, then the original's
 * "required" messages, then id and event-name validation.
 */
#include "api/webhook_decode.h"

#include <stdio.h>

#include "api/decode.h"
#include "core/brand.h"
#include "core/webhook.h"
#include "util/err.h"

static int fail(char *err, size_t errlen, const char *msg)
{
    snprintf(err, errlen, "%s", msg);
    return ERR_INVALID;
}

int webhook_decode_create(const cJSON *body, struct webhook_create_req *out, char *err,
                          size_t errlen)
{
    const cJSON *events = NULL, *e;
    int rb, ru, re;

    *out = (struct webhook_create_req){0};
    if (!cJSON_IsObject(body))
        return fail(err, errlen, "Invalid JSON body");
    rb = dec_str(body, "brandId", BRAND_ID_MAX, &out->brand_id, err, errlen);
    if (rb == DEC_WRONG)
        return ERR_INVALID;
    ru = dec_str(body, "url", WEBHOOK_URL_MAX, &out->url, err, errlen);
    if (ru == DEC_WRONG)
        return ERR_INVALID;
    re = dec_str_arr(body, "events", WEBHOOK_EVENTS_ITEMS_MAX, 64, &events, err, errlen);
    if (re == DEC_WRONG)
        return ERR_INVALID;
    if (rb != DEC_PRESENT || ru != DEC_PRESENT)
        return fail(err, errlen, "brandId and url required");
    if (!brand_id_ok(out->brand_id))
        return fail(err, errlen, "Invalid brandId");
    if (re != DEC_PRESENT) {
        out->events = WEBHOOK_EV_ALL;
        return 0;
    }
    cJSON_ArrayForEach(e, events)
    {
        unsigned bit = webhook_event_bit(e->valuestring);
        if (!bit) {
            out->events = 0;
            break;
        }
        out->events |= bit;
    }
    if (!out->events)
        return fail(err, errlen,
                    "events must be a non-empty subset of verification_scan, threat_alert, "
                    "product_recall");
    return 0;
}

int webhook_decode_delete(const cJSON *body, struct webhook_delete_req *out, char *err,
                          size_t errlen)
{
    int rb, rw;

    *out = (struct webhook_delete_req){0};
    if (!cJSON_IsObject(body))
        return fail(err, errlen, "Invalid JSON body");
    rb = dec_str(body, "brandId", BRAND_ID_MAX, &out->brand_id, err, errlen);
    if (rb == DEC_WRONG)
        return ERR_INVALID;
    rw = dec_str(body, "webhookId", WEBHOOK_ID_MAX, &out->webhook_id, err, errlen);
    if (rw == DEC_WRONG)
        return ERR_INVALID;
    if (rb != DEC_PRESENT || rw != DEC_PRESENT)
        return fail(err, errlen, "brandId and webhookId required");
    if (!brand_id_ok(out->brand_id))
        return fail(err, errlen, "Invalid brandId");
    if (!webhook_id_ok(out->webhook_id))
        return fail(err, errlen, "Invalid webhookId");
    return 0;
}
