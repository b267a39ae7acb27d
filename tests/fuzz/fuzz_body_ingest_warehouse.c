/*
 * fuzz_body_ingest_warehouse.c - POST /api/ingest/warehouse bodies: raw bytes through
 * the body parser and ingest_decode(INGEST_WAREHOUSE).  An accepted body must
 * give a declared event type, an actor, a data object with the right
 * source, a product reference, a canonical timestamp when one was sent,
 * and an idempotency digest exactly when it is idempotent; a refused one
 * must say why.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "api/decode.h"
#include "api/ingest_decode.h"
#include "core/event.h"
#include "core/timeutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ingest_req in;
    char err[200], digest[CRYPTO_HEX_LEN + 1];
    cJSON *body = dec_parse_body((const char *)data, size);

    if (!body)
        return 0;
    err[0] = '\0';
    if (ingest_decode(INGEST_WAREHOUSE, body, &in, err, sizeof err) == 0) {
        const char *src = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(in.data, "source"));
        if (!event_type_valid(in.type) || !in.actor || !in.actor[0] || !in.message ||
            !cJSON_IsObject(in.data) || !src || strcmp(src, in.source) != 0 ||
            (!in.product_id && !in.code) || !in.ext1)
            __builtin_trap();
        if (in.has_timestamp != (time_is_iso(in.timestamp) != 0))
            __builtin_trap();
        if ((ingest_idem_digest("p", &in, NULL, digest) == 0) != in.has_timestamp)
            __builtin_trap();
        if (ingest_idem_digest("p", &in, "k", digest) != 0 || strlen(digest) != CRYPTO_HEX_LEN)
            __builtin_trap();
        ingest_req_free(&in);
    } else if (!err[0] || in.data || in.actor) {
        __builtin_trap();
    }
    cJSON_Delete(body);
    return 0;
}
