/*
 * fuzz_body_events.c - POST /api/products/events bodies: raw bytes through the body parser
 * and the events decoder (api/product_decode.h); an accepted body must give a stored
 * event item (hash over the stored data).
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
    struct pd_event in;
    char err[192];
    cJSON *body = dec_parse_body((const char *)data, size);

    if (!body)
        return 0;
    err[0] = '\0';
    if (pd_event(body, &in, err, sizeof err) == 0) {
        char hash[CRYPTO_HEX_LEN + 1];
        cJSON *coords = NULL;
        if (!in.product_id || !event_type_valid(in.type) || !in.actor)
            __builtin_trap();
        if (in.has_coordinates) {
            coords = cJSON_CreateObject();
            cJSON_AddNumberToObject(coords, "lat", in.lat);
            cJSON_AddNumberToObject(coords, "lng", in.lng);
        }
        struct event_fields f = {.product_id = "p",
                                 .type = in.type,
                                 .actor = in.actor,
                                 .timestamp = "2026-06-20T15:00:00.000Z",
                                 .data = in.data,
                                 .location = in.location,
                                 .with_coordinates = true,
                                 .coordinates = coords};
        cJSON *item = event_item_new(&f, 1, CRYPTO_GENESIS, hash);
        if (!item)
            __builtin_trap();
        char again[CRYPTO_HEX_LEN + 1];
        if (event_item_hash(item, again) != 0 || strcmp(again, hash) != 0)
            __builtin_trap();
        cJSON_Delete(item);
        cJSON_Delete(coords);
    } else if (!err[0]) {
        __builtin_trap(); /* a rejection always carries a message */
    }
    cJSON_Delete(body);
    return 0;
}
