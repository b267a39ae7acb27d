/*
 * product.h - the product entity: the items one registration writes
 * (E6 product, E11 code lookup, E12 hash lookup, E13 index entry, the
 * genesis event and chain head, and the per-brand name guard), the
 * hash/signature check, and every JSON shape of a product the API
 * returns (the one place for them).
 *
 * Duplicate guard ([D23] fixed atomically over all of a brand's
 * products): in the brand's partition, PNAME#<sha256(name)> counts the
 * products with that name ({count, noSku}), and PNAME#<sha256(name NUL
 * sku)> marks each (name, sku) pair in use.  A registration updates them
 * in its own transaction with compare-and-swap conditions, so two
 * concurrent registrations of the same product cannot both succeed.
 */
#ifndef GP_CORE_PRODUCT_H
#define GP_CORE_PRODUCT_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/crypto.h"
#include "core/jsonw.h"
#include "store/store.h"

#define PRODUCT_ID_MAX   32 /* a generated id is 32 hex chars */
#define PRODUCT_CODE_MAX 12 /* a generated code is 12 base64url chars */
/* Attempts of product_register() (code/id collisions, guard races). */
#define PRODUCT_REGISTER_TRIES 5

/* The catalog label for a category given as a catalog id or label (any
 * case, e.g. "watches" -> "Watches", [D40]); other text is returned
 * unchanged; NULL stays NULL. */
const char *product_category_label(const char *category);

/* One registration.  Strings are borrowed; NULL or "" optional fields are
 * stored as null. */
struct product_reg {
    const char *brand_id;   /* required */
    const char *brand_name; /* required (copied into the product) */
    const char *name;       /* required */
    const char *sku;
    const char *category; /* mapped with product_category_label() */
    const char *description;
    const char *image_url;
    const char *location;   /* manufacturingLocation of the genesis event */
    const cJSON *metadata;  /* object or NULL -> {} */
    bool batch;             /* batch item: no imageUrl attribute, genesis data has "batch":true */
    const char *created_at; /* required, canonical ISO */
    const char *product_id; /* NULL: generated (pinned ids are for the demo set) */
    const char *code;       /* NULL: generated */
    const char *secret;     /* signing secret, required */
};

struct product_reg_out {
    char product_id[PRODUCT_ID_MAX + 1];
    char code[PRODUCT_CODE_MAX + 1];
    char hash[CRYPTO_HEX_LEN + 1];
    char signature[CRYPTO_HEX_LEN + 1];
};

/*
 * Registers one product in one store_transact(): E6 (+GSI1), E11
 * (conditional: a new code), E12, the genesis event (seq 1, actor = brand
 * name, data {"registeredBy":brandId} (+"batch":true), hashed as stored)
 * with its chain head, E13 and the name guard.  Generated codes/ids are
 * regenerated when taken [D46].  Counters and audit are the caller's.
 * On success returns 0 and fills *out.  On error returns ERR_CONFLICT
 * (a product with this name - and sku - exists for the brand), ERR_INVALID
 * (missing field, key too long), ERR_CONDITION (a pinned code/id is taken),
 * or another negative ERR_* from the store.
 */
int product_register(struct store *s, const struct product_reg *in, struct product_reg_out *out);

/* Recomputes the stored product's hash (§3.3) and checks its signature
 * (§3.4) with secret. */
void product_check(const cJSON *item, const char *secret, bool *hash_match, bool *signature_valid);

/* Stored scanCount (0 when absent). */
double product_scan_count(const cJSON *item);

/* String attribute or NULL. */
const char *product_str(const cJSON *item, const char *attr);

/* ---- JSON shapes; `scans` is the scanCount to report ---- */
/* verify (§9.8): productId, brandId, brandName, name, sku, category,
 * description, imageUrl, verificationCode, hash, signature, status,
 * createdAt, updatedAt. */
void product_write_verify_json(struct jsonw *w, const cJSON *item);
/* list (§9.9): productId, name, sku, category, verificationCode, hash,
 * status, scanCount, createdAt. */
void product_write_list_json(struct jsonw *w, const cJSON *item, double scans);
/* search by code/productId (§9.10): productId, name, brandName, sku,
 * category, status, verificationCode, hash, createdAt, scanCount. */
void product_write_search_json(struct jsonw *w, const cJSON *item, double scans);
/* search by brandId (§9.10): productId, name, sku, category, status,
 * verificationCode, createdAt, scanCount. */
void product_write_search_brand_json(struct jsonw *w, const cJSON *item, double scans);

#endif
