/*
 * integration.h - the integration entity (API.md E5, §9.33-§9.36): the
 * eight integration types, the ingest key, the stored items and the JSON
 * shapes of an integration.
 *
 * An ingest key ("aik_" + 32 hex chars from 16 CSPRNG bytes) is shown
 * once, in the configure response.  The store keeps only its SHA-256 and
 * its first 8 characters (for the masked listing): the E5 item holds
 * ingestKeyHash and ingestKeyPrefix, and the index item
 * INGESTKEY#<sha256>/META {brandId, integrationId, active, createdAt}
 * (core/keys.h key_ingestkey_pk) lets api/auth.c resolve a presented key
 * with one get.  Both items are written in one transaction.
 */
#ifndef GP_CORE_INTEGRATION_H
#define GP_CORE_INTEGRATION_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/crypto.h"
#include "core/jsonw.h"

#define INTEGRATION_TYPES_N 8
/* "aik_" + 32 hex */
#define INTEGRATION_KEY_LEN 36
/* Characters of the key kept for masking. */
#define INTEGRATION_KEY_PREFIX_LEN 8
/* Largest canonical text of a config object (bytes). */
#define INTEGRATION_CONFIG_MAX (8 * 1024)

struct integration_type {
    const char *type;     /* fedex, dhl, ups, shopify, square, woocommerce, stripe, wms_custom */
    const char *name;     /* FedEx ... */
    const char *category; /* shipping | pos | warehouse */
    const char *endpoint; /* /api/ingest/<category> */
};

/* The table of §9 Integrations, in its order. */
extern const struct integration_type integration_types[INTEGRATION_TYPES_N];

/* The entry of a type name, NULL when unknown. */
const struct integration_type *integration_type_find(const char *type);
/* The ingest endpoint of a type (unknown types: the shipping endpoint,
 * as §9.36 says). */
const char *integration_endpoint(const char *type);

/* A new ingest key (shown once) with its SHA-256 hex and masking prefix. */
void integration_key_new(char key[INTEGRATION_KEY_LEN + 1], char hash[CRYPTO_HEX_LEN + 1],
                         char prefix[INTEGRATION_KEY_PREFIX_LEN + 1]);

struct integration_fields {
    const char *id;         /* required: UUID */
    const char *brand_id;   /* required */
    const char *type;       /* required: one of integration_types */
    const char *key_hash;   /* required: SHA-256 hex of the key */
    const char *key_prefix; /* required: first 8 chars of the key */
    const cJSON *config;    /* object or NULL -> {} */
    const char *created_at; /* required, canonical ISO */
};

/* E5 BRAND#<brand>/INTEGRATION#<id>: id, brandId, type, ingestKeyHash,
 * ingestKeyPrefix, active true, config, createdAt, lastEvent null,
 * eventCount 0.  Caller owns it; NULL when a field is missing/invalid. */
cJSON *integration_item_new(const struct integration_fields *f);
/* INGESTKEY#<hash>/META: brandId, integrationId, type, active true,
 * createdAt.  Caller owns it; NULL when a field is missing/invalid. */
cJSON *integration_key_item_new(const struct integration_fields *f);

/* The masked key of a stored integration: prefix + "...", from
 * ingestKeyPrefix or (items written by the original) the first 8 chars
 * of a plaintext ingestKey; NULL when the item has neither ([D31]). */
const char *integration_masked_key(const cJSON *item, char out[INTEGRATION_KEY_PREFIX_LEN + 4]);

/* §9.34 row: {"id","type","active","ingestKey" (masked or null),
 * "createdAt","lastEvent","eventCount"}. */
void integration_write_row_json(struct jsonw *w, const cJSON *item);
/* §9.36 configured row: {"id","type","active","createdAt","lastEvent",
 * "eventCount" (0 default),"webhookUrl": base + endpoint}. */
void integration_write_status_row_json(struct jsonw *w, const cJSON *item, const char *base_url);
/* The five setup steps of a type as {"step1":...,"step5":...}. */
void integration_write_instructions(struct jsonw *w, const char *type, const char *webhook_url);

#endif
