/*
 * integration.c - integration types, ingest keys, the E5 item and its
 * INGESTKEY# index item, and the integration JSON shapes
 * (integration.h).
 *
 * The setup instructions are prose for a human configuring the partner's
 * portal; API.md fixes only how the key travels (header X-Ingest-Key,
 * WooCommerce's webhook secret, Stripe metadata key genuproof_key,
 * nothing for Shopify), which the steps below follow.
 */
#include "core/integration.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/brand.h"
#include "core/ids.h"
#include "core/keys.h"
#include "core/timeutil.h"

const struct integration_type integration_types[INTEGRATION_TYPES_N] = {
    {"fedex", "FedEx", "shipping", "/api/ingest/shipping"},
    {"dhl", "DHL", "shipping", "/api/ingest/shipping"},
    {"ups", "UPS", "shipping", "/api/ingest/shipping"},
    {"shopify", "Shopify", "pos", "/api/ingest/pos"},
    {"square", "Square", "pos", "/api/ingest/pos"},
    {"woocommerce", "WooCommerce", "pos", "/api/ingest/pos"},
    {"stripe", "Stripe", "pos", "/api/ingest/pos"},
    {"wms_custom", "Custom WMS", "warehouse", "/api/ingest/warehouse"},
};

const struct integration_type *integration_type_find(const char *type)
{
    for (size_t i = 0; type && i < INTEGRATION_TYPES_N; i++)
        if (strcmp(type, integration_types[i].type) == 0)
            return &integration_types[i];
    return NULL;
}

const char *integration_endpoint(const char *type)
{
    const struct integration_type *t = integration_type_find(type);
    return t ? t->endpoint : "/api/ingest/shipping";
}

void integration_key_new(char key[INTEGRATION_KEY_LEN + 1], char hash[CRYPTO_HEX_LEN + 1],
                         char prefix[INTEGRATION_KEY_PREFIX_LEN + 1])
{
    ids_ingest_key(key);
    crypto_sha256_hex(key, strlen(key), hash);
    memcpy(prefix, key, INTEGRATION_KEY_PREFIX_LEN);
    prefix[INTEGRATION_KEY_PREFIX_LEN] = '\0';
}

static bool is_hex64(const char *s)
{
    if (!s || strlen(s) != CRYPTO_HEX_LEN)
        return false;
    for (; *s; s++)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
            return false;
    return true;
}

static bool fields_ok(const struct integration_fields *f)
{
    return f && f->id && f->id[0] && !strchr(f->id, '#') && strlen(f->id) < 64 &&
           brand_id_ok(f->brand_id) && integration_type_find(f->type) && is_hex64(f->key_hash) &&
           f->key_prefix && strlen(f->key_prefix) == INTEGRATION_KEY_PREFIX_LEN && f->created_at &&
           time_is_iso(f->created_at) && (!f->config || cJSON_IsObject(f->config));
}

cJSON *integration_item_new(const struct integration_fields *f)
{
    struct key pk, sk;
    cJSON *o;

    if (!fields_ok(f) || !key_brand_pk(&pk, f->brand_id) || !key_integration_sk(&sk, f->id))
        return NULL;
    o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "PK", pk.s);
    cJSON_AddStringToObject(o, "SK", sk.s);
    cJSON_AddStringToObject(o, "id", f->id);
    cJSON_AddStringToObject(o, "brandId", f->brand_id);
    cJSON_AddStringToObject(o, "type", f->type);
    cJSON_AddStringToObject(o, "ingestKeyHash", f->key_hash);
    cJSON_AddStringToObject(o, "ingestKeyPrefix", f->key_prefix);
    cJSON_AddTrueToObject(o, "active");
    cJSON_AddItemToObject(o, "config",
                          f->config ? cJSON_Duplicate(f->config, 1) : cJSON_CreateObject());
    cJSON_AddStringToObject(o, "createdAt", f->created_at);
    cJSON_AddNullToObject(o, "lastEvent");
    cJSON_AddNumberToObject(o, "eventCount", 0);
    return o;
}

cJSON *integration_key_item_new(const struct integration_fields *f)
{
    struct key pk;
    cJSON *o;

    if (!fields_ok(f) || !key_ingestkey_pk(&pk, f->key_hash))
        return NULL;
    o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "PK", pk.s);
    cJSON_AddStringToObject(o, "SK", KEY_SK_META);
    cJSON_AddStringToObject(o, "brandId", f->brand_id);
    cJSON_AddStringToObject(o, "integrationId", f->id);
    cJSON_AddStringToObject(o, "type", f->type);
    cJSON_AddTrueToObject(o, "active");
    cJSON_AddStringToObject(o, "createdAt", f->created_at);
    return o;
}

static const char *str_attr(const cJSON *item, const char *name)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(item, name));
}

const char *integration_masked_key(const cJSON *item, char out[INTEGRATION_KEY_PREFIX_LEN + 4])
{
    const char *p = str_attr(item, "ingestKeyPrefix");
    if (!p)
        p = str_attr(item, "ingestKey");
    if (!p)
        return NULL;
    size_t n = strlen(p);
    if (n > INTEGRATION_KEY_PREFIX_LEN)
        n = INTEGRATION_KEY_PREFIX_LEN;
    memcpy(out, p, n);
    memcpy(out + n, "...", 4);
    return out;
}

/* "active" as stored (a missing attribute counts as true, like E5's
 * default). */
static bool active_of(const cJSON *item)
{
    return !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(item, "active"));
}

static double event_count_of(const cJSON *item)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, "eventCount");
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : 0;
}

void integration_write_row_json(struct jsonw *w, const cJSON *item)
{
    char masked[INTEGRATION_KEY_PREFIX_LEN + 4];

    jsonw_obj(w);
    jsonw_kstr(w, "id", str_attr(item, "id"));
    jsonw_kstr(w, "type", str_attr(item, "type"));
    jsonw_kbool(w, "active", active_of(item));
    jsonw_kstr(w, "ingestKey", integration_masked_key(item, masked));
    jsonw_kstr(w, "createdAt", str_attr(item, "createdAt"));
    jsonw_kstr(w, "lastEvent", str_attr(item, "lastEvent"));
    jsonw_knum(w, "eventCount", event_count_of(item));
    jsonw_end(w);
}

void integration_write_status_row_json(struct jsonw *w, const cJSON *item, const char *base_url)
{
    char url[512];

    snprintf(url, sizeof url, "%s%s", base_url ? base_url : "",
             integration_endpoint(str_attr(item, "type")));
    jsonw_obj(w);
    jsonw_kstr(w, "id", str_attr(item, "id"));
    jsonw_kstr(w, "type", str_attr(item, "type"));
    jsonw_kbool(w, "active", active_of(item));
    jsonw_kstr(w, "createdAt", str_attr(item, "createdAt"));
    jsonw_kstr(w, "lastEvent", str_attr(item, "lastEvent"));
    jsonw_knum(w, "eventCount", event_count_of(item));
    jsonw_kstr(w, "webhookUrl", url);
    jsonw_end(w);
}

/* How each family of partner sends the key and what it subscribes to. */
static void steps_for(const char *type, const char *name, const char *url, char s[5][320])
{
    const struct integration_type *t = integration_type_find(type);
    const char *cat = t ? t->category : "shipping";

    if (strcmp(cat, "shipping") == 0) {
        snprintf(s[0], 320, "Open the %s developer portal and create a tracking webhook", name);
        snprintf(s[1], 320, "Set the webhook URL to %s", url);
        snprintf(s[2], 320,
                 "Subscribe to the picked_up, in_transit, out_for_delivery, delivered "
                 "and exception status events");
        snprintf(s[3], 320, "Send your ingest key in the X-Ingest-Key header of every delivery");
        snprintf(s[4], 320,
                 "Put the product's productId or verificationCode in the shipment "
                 "reference so each event maps to its product");
    } else if (strcmp(cat, "pos") == 0) {
        snprintf(s[0], 320, "Open the %s admin and go to its webhook or notification settings",
                 name);
        snprintf(s[1], 320, "Create an order-paid webhook pointing to %s", url);
        snprintf(s[2], 320, "Subscribe to completed sales (order paid) events");
        if (strcmp(type, "woocommerce") == 0)
            snprintf(s[3], 320, "Paste your ingest key as the webhook secret");
        else if (strcmp(type, "stripe") == 0)
            snprintf(s[3], 320, "Add your ingest key to the checkout metadata under genuproof_key");
        else if (strcmp(type, "shopify") == 0)
            snprintf(s[3], 320,
                     "No key field is needed in Shopify; keep the ingest key for your "
                     "middleware");
        else
            snprintf(s[3], 320, "Send your ingest key in the X-Ingest-Key header");
        snprintf(s[4], 320,
                 "Store each product's verificationCode as a line-item property so "
                 "sales map to products");
    } else {
        snprintf(s[0], 320, "Open your warehouse management system's integration settings");
        snprintf(s[1], 320, "Add an outbound webhook to %s", url);
        snprintf(s[2], 320, "Send received, inspected, stored, dispatched and returned actions");
        snprintf(s[3], 320, "Send your ingest key in the X-Ingest-Key header");
        snprintf(s[4], 320, "Include the scanned productId or verificationCode with each action");
    }
}

void integration_write_instructions(struct jsonw *w, const char *type, const char *webhook_url)
{
    const struct integration_type *t = integration_type_find(type);
    char steps[5][320];
    char key[16];

    steps_for(type, t ? t->name : "partner", webhook_url ? webhook_url : "", steps);
    jsonw_obj(w);
    for (int i = 0; i < 5; i++) {
        snprintf(key, sizeof key, "step%d", i + 1);
        jsonw_kstr(w, key, steps[i]);
    }
    jsonw_end(w);
}
