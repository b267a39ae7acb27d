/*
 * fuzz_body_webhook.c - POST and DELETE /api/webhooks bodies: raw bytes
 * through the body parser, both webhook decoders and (for an accepted
 * create body) the URL parser.  An accepted body must name ids that
 * build keys, a non-empty subset of the three events and a URL within
 * its bound; a refused one must say why.  Name resolution is not
 * exercised here (webhook_url_parse only).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "api/decode.h"
#include "api/webhook_decode.h"
#include "core/brand.h"
#include "core/keys.h"
#include "core/webhook.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct webhook_create_req c;
    struct webhook_delete_req d;
    struct webhook_url u;
    struct key k;
    char err[200];
    cJSON *body = dec_parse_body((const char *)data, size);

    if (!body)
        return 0;
    err[0] = '\0';
    if (webhook_decode_create(body, &c, err, sizeof err) == 0) {
        if (!brand_id_ok(c.brand_id) || !key_brand_pk(&k, c.brand_id) || !c.url || !*c.url ||
            strlen(c.url) > WEBHOOK_URL_MAX || !c.events || (c.events & ~WEBHOOK_EV_ALL))
            __builtin_trap();
        err[0] = '\0';
        if (webhook_url_parse(c.url, &u, err, sizeof err) == 0) {
            if (!u.host[0] || strlen(u.host) > WEBHOOK_HOST_MAX || strchr(c.url, ' '))
                __builtin_trap();
        } else if (!err[0]) {
            __builtin_trap();
        }
    } else if (!err[0]) {
        __builtin_trap();
    }
    err[0] = '\0';
    if (webhook_decode_delete(body, &d, err, sizeof err) == 0) {
        if (!brand_id_ok(d.brand_id) || !webhook_id_ok(d.webhook_id) ||
            !key_webhook_sk(&k, d.webhook_id) || !key_delivery_pk(&k, d.webhook_id))
            __builtin_trap();
    } else if (!err[0]) {
        __builtin_trap();
    }
    cJSON_Delete(body);
    return 0;
}
