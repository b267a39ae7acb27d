/*
 * brand_decode.h - pure decoders for the JSON bodies of POST /api/brands
 * and POST /api/threats/resolve (API.md §1.2 presence and type rules via
 * api/decode.h), unit-tested and fuzzed without a server.
 */
#ifndef GP_API_BRAND_DECODE_H
#define GP_API_BRAND_DECODE_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* Caps (bytes) on the brand body's strings. */
#define BRAND_NAME_MAX     256
#define BRAND_DOMAIN_MAX   256
#define BRAND_INDUSTRY_MAX 128
#define BRAND_LOGO_URL_MAX 2048
/* Cap on alert ids (ours are 32 hex chars). */
#define ALERT_ID_MAX 128

/* POST /api/brands.  Strings borrow from the body. */
struct brand_create_req {
    const char *name;
    const char *domain;
    const char *industry;
    const char *logo_url; /* NULL when absent/falsy */
};

/* POST /api/threats/resolve. */
struct threat_resolve_req {
    const char *brand_id;
    const char *alert_id;
};

/* Each returns 0 and fills *out, or ERR_INVALID with the 400 message in
 * err: "<field> must be a string" / "<field> is too long" for a present
 * field of the wrong type or size (fields checked in body order of the
 * API: name, domain, industry, logoUrl / brandId, alertId), then
 * "name, domain, and industry are required" / "brandId and alertId are
 * required" when a required field is missing, then "Invalid brandId" /
 * "Invalid alertId" for ids that could address other keys ('#', control
 * characters). */
int brand_decode_create(const cJSON *body, struct brand_create_req *out, char *err, size_t errlen);
int brand_decode_resolve(const cJSON *body, struct threat_resolve_req *out, char *err,
                         size_t errlen);

#endif
