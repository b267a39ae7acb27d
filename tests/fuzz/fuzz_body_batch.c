/*
 * fuzz_body_batch.c - POST /api/products/batch bodies: raw bytes through the body parser
 * and the batch decoder (api/product_decode.h); every accepted named item must hash.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "api/decode.h"
#include "api/product_decode.h"
#include "core/crypto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct pd_batch in;
    char err[192];
    cJSON *body = dec_parse_body((const char *)data, size);

    if (!body)
        return 0;
    err[0] = '\0';
    if (pd_batch(body, &in, err, sizeof err) == 0) {
        if (!in.brand_id || in.n < 1 || in.n > PD_BATCH_MAX)
            __builtin_trap();
        for (size_t i = 0; i < in.n; i++) {
            char hash[CRYPTO_HEX_LEN + 1];
            if (in.items[i].name &&
                crypto_product_hash("p", in.brand_id, in.items[i].name, in.items[i].sku,
                                    in.items[i].metadata, "2026-06-20T15:00:00.000Z", hash) != 0)
                __builtin_trap();
        }
    } else if (!err[0]) {
        __builtin_trap(); /* a rejection always carries a message */
    }
    cJSON_Delete(body);
    return 0;
}
