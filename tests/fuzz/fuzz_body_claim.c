/*
 * fuzz_body_claim.c - POST /api/products/claim bodies: raw bytes through the body parser
 * and the claim decoder (api/product_decode.h); accepted bodies carry a productId.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "api/decode.h"
#include "api/product_decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct pd_claim in;
    char err[192];
    cJSON *body = dec_parse_body((const char *)data, size);

    if (!body)
        return 0;
    err[0] = '\0';
    if (pd_claim(body, &in, err, sizeof err) == 0) {
        if (!in.product_id)
            __builtin_trap();
        (void)pd_id_ok(in.product_id);
    } else if (!err[0]) {
        __builtin_trap(); /* a rejection always carries a message */
    }
    cJSON_Delete(body);
    return 0;
}
