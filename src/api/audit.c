/*
 * audit.c - audit trail items (audit.h) and api_audit() (api.h).
 *
 * The write joins the request's group commit like every other write, so
 * an audited change and its audit entry become durable together.  Keys
 * carry an 8-hex random suffix: two entries in the same millisecond do
 * not collide ([D15]'s lesson).
 */
#include "api/audit.h"

#include <stdio.h>
#include <string.h>

#include "api/app.h"
#include "core/ids.h"
#include "core/keys.h"
#include "store/store.h"
#include "util/err.h"

/* Cuts s to at most max bytes without splitting a UTF-8 sequence. */
static size_t utf8_cut(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n <= max)
        return n;
    n = max;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    return n;
}

static void add_str_or_null(cJSON *o, const char *k, const char *v)
{
    if (v)
        cJSON_AddStringToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}

cJSON *audit_item_new(const struct api_principal *who, const char *timestamp, const char *ip,
                      const char *action, const char *brand_id, const char *product_id,
                      const char *details)
{
    struct key pk, sk;
    char id[17];
    char actor[96];
    const char *kind;
    if (!action || !*action || !timestamp)
        return NULL;
    ids_random_hex(4, id);
    if (!key_audit_pk(&pk, timestamp) || !key_audit_sk(&sk, timestamp, id))
        return NULL;
    switch (who ? who->kind : API_ANON) {
    case API_PRINCIPAL_ADMIN:
        kind = "admin";
        snprintf(actor, sizeof actor, "admin");
        break;
    case API_PRINCIPAL_BRAND:
        kind = "brand";
        snprintf(actor, sizeof actor, "brand:%s", who->brand_id);
        break;
    case API_PRINCIPAL_INGEST:
        kind = "ingest";
        snprintf(actor, sizeof actor, "ingest:%s", who->brand_id);
        break;
    default:
        kind = "anonymous";
        snprintf(actor, sizeof actor, "anonymous");
        break;
    }
    cJSON *item = cJSON_CreateObject();
    if (!item)
        return NULL;
    cJSON_AddStringToObject(item, "PK", pk.s);
    cJSON_AddStringToObject(item, "SK", sk.s);
    cJSON_AddStringToObject(item, "action", action);
    cJSON_AddStringToObject(item, "actor", actor);
    cJSON_AddStringToObject(item, "actorKind", kind);
    add_str_or_null(item, "brandId", brand_id);
    add_str_or_null(item, "productId", product_id);
    if (details) {
        char cut[AUDIT_DETAILS_MAX + 1];
        size_t n = utf8_cut(details, AUDIT_DETAILS_MAX);
        memcpy(cut, details, n);
        cut[n] = '\0';
        cJSON_AddStringToObject(item, "details", cut);
    } else {
        cJSON_AddNullToObject(item, "details");
    }
    cJSON_AddStringToObject(item, "timestamp", timestamp);
    add_str_or_null(item, "ip", ip);
    return item;
}

int audit_write(struct store *s, const struct api_principal *who, const char *timestamp,
                const char *ip, const char *action, const char *brand_id, const char *product_id,
                const char *details)
{
    cJSON *item = audit_item_new(who, timestamp, ip, action, brand_id, product_id, details);
    if (!item)
        return ERR_INVALID;
    struct store_cond cond = {.kind = STORE_COND_NOT_EXISTS};
    int rc = store_put(s, item, &cond);
    cJSON_Delete(item);
    return rc;
}

int api_audit(struct api_req *r, const char *action, const char *brand_id, const char *product_id,
              const char *details)
{
    return audit_write(api_store(r), &r->who, r->now_iso, r->client_ip, action, brand_id,
                       product_id, details);
}
