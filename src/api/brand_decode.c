/*
 * brand_decode.c - body decoders for the brand family's POST routes.
 *
 * Pure functions from a parsed body to a request struct or a 400 message:
 * type and size errors first (a present field of the wrong JSON type is
 * reported even when another field is missing), then the original's
 * "required" message, then id validation.
 */
#include "api/brand_decode.h"

#include <stdio.h>

#include "api/decode.h"
#include "core/brand.h"
#include "util/err.h"

int brand_decode_create(const cJSON *body, struct brand_create_req *out, char *err, size_t errlen)
{
    int rn, rd, ri, rl;

    *out = (struct brand_create_req){0};
    if (!cJSON_IsObject(body)) {
        snprintf(err, errlen, "Invalid JSON body");
        return ERR_INVALID;
    }
    rn = dec_str(body, "name", BRAND_NAME_MAX, &out->name, err, errlen);
    if (rn == DEC_WRONG)
        return ERR_INVALID;
    rd = dec_str(body, "domain", BRAND_DOMAIN_MAX, &out->domain, err, errlen);
    if (rd == DEC_WRONG)
        return ERR_INVALID;
    ri = dec_str(body, "industry", BRAND_INDUSTRY_MAX, &out->industry, err, errlen);
    if (ri == DEC_WRONG)
        return ERR_INVALID;
    rl = dec_str(body, "logoUrl", BRAND_LOGO_URL_MAX, &out->logo_url, err, errlen);
    if (rl == DEC_WRONG)
        return ERR_INVALID;
    if (rl != DEC_PRESENT)
        out->logo_url = NULL;
    if (rn != DEC_PRESENT || rd != DEC_PRESENT || ri != DEC_PRESENT) {
        snprintf(err, errlen, "name, domain, and industry are required");
        return ERR_INVALID;
    }
    return 0;
}

int brand_decode_resolve(const cJSON *body, struct threat_resolve_req *out, char *err,
                         size_t errlen)
{
    int rb, ra;

    *out = (struct threat_resolve_req){0};
    if (!cJSON_IsObject(body)) {
        snprintf(err, errlen, "Invalid JSON body");
        return ERR_INVALID;
    }
    rb = dec_str(body, "brandId", BRAND_ID_MAX, &out->brand_id, err, errlen);
    if (rb == DEC_WRONG)
        return ERR_INVALID;
    ra = dec_str(body, "alertId", ALERT_ID_MAX, &out->alert_id, err, errlen);
    if (ra == DEC_WRONG)
        return ERR_INVALID;
    if (rb != DEC_PRESENT || ra != DEC_PRESENT) {
        snprintf(err, errlen, "brandId and alertId are required");
        return ERR_INVALID;
    }
    if (!brand_id_ok(out->brand_id)) {
        snprintf(err, errlen, "Invalid brandId");
        return ERR_INVALID;
    }
    return 0;
}
