/*
 * fuzz_body_brand.c - POST /api/brands bodies: raw bytes through the body
 * parser and the brand decoder; accepted bodies are turned into the three
 * brand items and the creation response, as the handler does.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "api/brand_decode.h"
#include "api/decode.h"
#include "core/brand.h"
#include "util/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct brand_create_req in;
    char err[160];
    cJSON *body = dec_parse_body((const char *)data, size);

    if (!body)
        return 0;
    if (brand_decode_create(body, &in, err, sizeof err) == 0) {
        struct brand_fields f = {.id = "5019622c-9860-4b83-a5c6-adb82ebd0412",
                                 .name = in.name,
                                 .domain = in.domain,
                                 .industry = in.industry,
                                 .logo_url = in.logo_url,
                                 .created_at = "2026-06-20T14:00:00.000Z"};
        cJSON *p = brand_profile_item_new(&f), *x = brand_index_item_new(&f);
        struct brand_counters c = {1, 2, 3};
        struct buf b = BUF_INIT(1 << 20);
        struct jsonw w;

        /* Every accepted body must give items. */
        if (!p || !x)
            __builtin_trap();
        jsonw_init(&w, &b);
        jsonw_obj(&w);
        brand_write_created_members(&w, p);
        jsonw_end(&w);
        brand_write_profile_json(&w, p, &c);
        brand_write_index_entry_json(&w, x);
        if (jsonw_error(&w))
            __builtin_trap();
        buf_free(&b);
        cJSON_Delete(p);
        cJSON_Delete(x);
    } else if (!err[0]) {
        __builtin_trap(); /* a rejection always carries a message */
    }
    cJSON_Delete(body);
    return 0;
}
