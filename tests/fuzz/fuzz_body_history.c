/*
 * fuzz_body_history.c - POST /api/products/history bodies: raw bytes through the body parser
 * and the history decoder (api/product_decode.h); accepted bodies name 1..50 ids and a
 * declared event type.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "api/decode.h"
#include "api/product_decode.h"
#include "core/event.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct pd_history in;
    char err[192];
    cJSON *body = dec_parse_body((const char *)data, size);

    if (!body)
        return 0;
    err[0] = '\0';
    if (pd_history(body, &in, err, sizeof err) == 0) {
        if (in.n < 1 || in.n > PD_BATCH_MAX || !event_type_valid(in.type) || !in.actor)
            __builtin_trap();
        for (size_t i = 0; i < in.n; i++)
            if (!in.product_ids[i] || !in.product_ids[i][0])
                __builtin_trap();
            else
                (void)pd_id_ok(in.product_ids[i]);
    } else if (!err[0]) {
        __builtin_trap(); /* a rejection always carries a message */
    }
    cJSON_Delete(body);
    return 0;
}
