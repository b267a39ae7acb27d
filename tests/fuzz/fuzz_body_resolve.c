/*
 * fuzz_body_resolve.c - POST /api/threats/resolve bodies: raw bytes
 * through the body parser and the resolve decoder.  An accepted body
 * must name a brand id that builds keys.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "api/brand_decode.h"
#include "api/decode.h"
#include "core/brand.h"
#include "core/keys.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct threat_resolve_req in;
    char err[160];
    cJSON *body = dec_parse_body((const char *)data, size);

    if (!body)
        return 0;
    err[0] = '\0';
    if (brand_decode_resolve(body, &in, err, sizeof err) == 0) {
        struct key k;
        if (!brand_id_ok(in.brand_id) || !key_brand_pk(&k, in.brand_id) ||
            strlen(in.alert_id) > ALERT_ID_MAX)
            __builtin_trap();
    } else if (!err[0]) {
        __builtin_trap();
    }
    cJSON_Delete(body);
    return 0;
}
