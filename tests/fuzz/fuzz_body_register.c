/*
 * fuzz_body_register.c - POST /api/products/register bodies: raw bytes through the body parser
 * and the register decoder (api/product_decode.h); accepted bodies must hash (§3.3) and
 * name a category label.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "api/decode.h"
#include "api/product_decode.h"
#include "core/crypto.h"
#include "core/product.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct pd_register in;
    char err[192];
    cJSON *body = dec_parse_body((const char *)data, size);

    if (!body)
        return 0;
    err[0] = '\0';
    if (pd_register(body, &in, err, sizeof err) == 0) {
        char hash[CRYPTO_HEX_LEN + 1];
        if (!in.brand_id || !in.name)
            __builtin_trap();
        if (crypto_product_hash("p", in.brand_id, in.name, in.sku, in.metadata,
                                "2026-06-20T15:00:00.000Z", hash) != 0)
            __builtin_trap();
        (void)product_category_label(in.category);
    } else if (!err[0]) {
        __builtin_trap(); /* a rejection always carries a message */
    }
    cJSON_Delete(body);
    return 0;
}
