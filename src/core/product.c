/*
 * product.c - the product entity: the items of a registration and the
 * transaction that writes them, the hash/signature check of a stored
 * product, and the product JSON shapes of the API (verify, list, search).
 *
 * A registration writes up to eight items in one transaction (product,
 * code lookup, hash lookup, genesis event, chain head, index entry, name
 * guard, name+sku guard), so a failure never leaves half a product behind
 * [D22] and a duplicate can never slip in between check and write [D23].
 */
#include "core/product.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/chain.h"
#include "core/event.h"
#include "core/ids.h"
#include "core/keys.h"
#include "util/err.h"
#include "util/xalloc.h"

/* catalog.json categories (id -> label), compiled in for [D40]. */
static const struct {
    const char *id, *label;
} categories[] = {
    {"watches", "Watches"},
    {"handbags", "Handbags"},
    {"jewelry", "Jewelry"},
    {"eyewear", "Eyewear"},
    {"fragrances", "Fragrances"},
    {"footwear", "Footwear"},
    {"clothing", "Clothing"},
    {"electronics", "Electronics"},
    {"pharmaceuticals", "Pharmaceuticals"},
    {"wine_spirits", "Wine & Spirits"},
    {"art", "Art"},
    {"automotive", "Automotive Parts"},
    {"cosmetics", "Cosmetics"},
    {"other", "Other"},
};

const char *product_category_label(const char *category)
{
    if (!category)
        return NULL;
    for (size_t i = 0; i < sizeof categories / sizeof categories[0]; i++)
        if (strcasecmp(category, categories[i].id) == 0 ||
            strcasecmp(category, categories[i].label) == 0)
            return categories[i].label;
    return category;
}

const char *product_str(const cJSON *item, const char *attr)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(item, attr));
}

double product_scan_count(const cJSON *item)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, "scanCount");
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : 0;
}

static const char *opt(const char *s)
{
    return s && *s ? s : NULL;
}

static void add_str_or_null(cJSON *o, const char *k, const char *v)
{
    if (v)
        cJSON_AddStringToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}

/* sha256 of name, or of name NUL sku when sku is given. */
static void name_digest(const char *name, const char *sku, char out[CRYPTO_HEX_LEN + 1])
{
    size_t nl = strlen(name), sl = sku ? strlen(sku) : 0;
    char *b = xmalloc(nl + sl + 2);
    memcpy(b, name, nl);
    if (sku) {
        b[nl] = '\0';
        memcpy(b + nl + 1, sku, sl);
    }
    crypto_sha256_hex(b, sku ? nl + 1 + sl : nl, out);
    free(b);
}

static double num_attr(const cJSON *item, const char *attr)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, attr);
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : 0;
}

/* The guard state of (brand, name[, sku]) as read before a registration. */
struct guard {
    struct key pk, name_sk, pair_sk;
    bool has_name_item;
    double count, no_sku;
    bool pair_taken;
};

static int guard_read(struct store *s, const struct product_reg *in, const char *sku,
                      struct guard *g)
{
    char digest[CRYPTO_HEX_LEN + 1];
    cJSON *item = NULL;
    int rc;

    memset(g, 0, sizeof *g);
    name_digest(in->name, NULL, digest);
    if (!key_brand_pk(&g->pk, in->brand_id) || !key_product_name_sk(&g->name_sk, digest))
        return ERR_INVALID;
    if (sku) {
        name_digest(in->name, sku, digest);
        if (!key_product_name_sk(&g->pair_sk, digest))
            return ERR_INVALID;
    }
    rc = store_get(s, g->pk.s, g->name_sk.s, true, &item);
    if (rc == 0) {
        g->has_name_item = true;
        g->count = num_attr(item, "count");
        g->no_sku = num_attr(item, "noSku");
    } else if (rc != ERR_NOTFOUND) {
        return rc;
    }
    cJSON_Delete(item);
    item = NULL;
    if (sku && g->count > 0) {
        rc = store_get(s, g->pk.s, g->pair_sk.s, true, &item);
        cJSON_Delete(item);
        if (rc == 0)
            g->pair_taken = true;
        else if (rc != ERR_NOTFOUND)
            return rc;
    }
    return 0;
}

/* The duplicate rule of §9.6 (same name; both skus given -> same sku). */
static bool guard_is_duplicate(const struct guard *g, const char *sku)
{
    if (g->count <= 0)
        return false;
    if (!sku)
        return true;
    return g->no_sku > 0 || g->pair_taken;
}

static cJSON *product_item_build(const struct product_reg *in, const char *pid, const char *code,
                                 const char *hash, const char *sig)
{
    struct key pk, gsk;
    cJSON *o;

    if (!key_product_pk(&pk, pid) || !key_product_gsi1sk(&gsk, in->created_at))
        return NULL;
    struct key gpk;
    if (!key_brand_pk(&gpk, in->brand_id))
        return NULL;
    o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "PK", pk.s);
    cJSON_AddStringToObject(o, "SK", KEY_SK_META);
    cJSON_AddStringToObject(o, "GSI1PK", gpk.s);
    cJSON_AddStringToObject(o, "GSI1SK", gsk.s);
    cJSON_AddStringToObject(o, "productId", pid);
    cJSON_AddStringToObject(o, "brandId", in->brand_id);
    cJSON_AddStringToObject(o, "brandName", in->brand_name);
    cJSON_AddStringToObject(o, "name", in->name);
    add_str_or_null(o, "sku", opt(in->sku));
    add_str_or_null(o, "category", product_category_label(opt(in->category)));
    add_str_or_null(o, "description", opt(in->description));
    if (!in->batch)
        add_str_or_null(o, "imageUrl", opt(in->image_url));
    cJSON_AddStringToObject(o, "verificationCode", code);
    cJSON_AddStringToObject(o, "hash", hash);
    cJSON_AddStringToObject(o, "signature", sig);
    cJSON_AddStringToObject(o, "status", "active");
    if (in->metadata)
        cJSON_AddItemToObject(o, "metadata", cJSON_Duplicate(in->metadata, 1));
    else
        cJSON_AddItemToObject(o, "metadata", cJSON_CreateObject());
    cJSON_AddStringToObject(o, "createdAt", in->created_at);
    cJSON_AddStringToObject(o, "updatedAt", in->created_at);
    cJSON_AddNumberToObject(o, "scanCount", 0);
    return o;
}

/* E11 (code, with its GSI1 copy) or E12 (hash) lookup item. */
static cJSON *lookup_item_build(const char *pk, bool gsi1, const char *pid, const char *brand_id)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "PK", pk);
    cJSON_AddStringToObject(o, "SK", KEY_SK_META);
    if (gsi1) {
        cJSON_AddStringToObject(o, "GSI1PK", pk);
        cJSON_AddStringToObject(o, "GSI1SK", KEY_SK_META);
    }
    cJSON_AddStringToObject(o, "productId", pid);
    cJSON_AddStringToObject(o, "brandId", brand_id);
    return o;
}

static cJSON *index_item_build(const struct product_reg *in, const char *pid, const char *code,
                               const char *hash)
{
    struct key sk;
    cJSON *o;

    if (!key_product_index_sk(&sk, in->created_at, pid))
        return NULL;
    o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "PK", KEY_PK_PRODUCT_INDEX);
    cJSON_AddStringToObject(o, "SK", sk.s);
    cJSON_AddStringToObject(o, "productId", pid);
    cJSON_AddStringToObject(o, "brandId", in->brand_id);
    cJSON_AddStringToObject(o, "name", in->name);
    cJSON_AddStringToObject(o, "brandName", in->brand_name);
    add_str_or_null(o, "sku", opt(in->sku));
    add_str_or_null(o, "category", product_category_label(opt(in->category)));
    add_str_or_null(o, "description", opt(in->description));
    cJSON_AddStringToObject(o, "status", "active");
    cJSON_AddStringToObject(o, "verificationCode", code);
    cJSON_AddStringToObject(o, "hash", hash);
    cJSON_AddStringToObject(o, "createdAt", in->created_at);
    cJSON_AddNumberToObject(o, "scanCount", 0);
    return o;
}

static cJSON *guard_name_item(const struct guard *g, const struct product_reg *in, const char *sku)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "PK", g->pk.s);
    cJSON_AddStringToObject(o, "SK", g->name_sk.s);
    cJSON_AddStringToObject(o, "brandId", in->brand_id);
    cJSON_AddStringToObject(o, "name", in->name);
    cJSON_AddNumberToObject(o, "count", g->count + 1);
    cJSON_AddNumberToObject(o, "noSku", g->no_sku + (sku ? 0 : 1));
    return o;
}

static cJSON *guard_pair_item(const struct guard *g, const struct product_reg *in, const char *sku,
                              const char *pid)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "PK", g->pk.s);
    cJSON_AddStringToObject(o, "SK", g->pair_sk.s);
    cJSON_AddStringToObject(o, "brandId", in->brand_id);
    cJSON_AddStringToObject(o, "name", in->name);
    cJSON_AddStringToObject(o, "sku", sku);
    cJSON_AddStringToObject(o, "productId", pid);
    return o;
}

enum { W_PRODUCT, W_CODE, W_HASH, W_EVENT, W_HEAD, W_INDEX, W_NAME, W_PAIR, W_N };

/* One attempt: builds and writes every item.  Returns the transaction's
 * result; *failed is the failing write on ERR_CONDITION. */
static int register_once(struct store *s, const struct product_reg *in, const struct guard *g,
                         const char *sku, struct product_reg_out *out, int *failed)
{
    cJSON *items[W_N] = {0};
    cJSON *data = NULL, *old_count = NULL;
    struct store_write w[W_N];
    struct key code_pk, hash_pk;
    char ev_hash[CRYPTO_HEX_LEN + 1];
    size_t n = 0;
    int rc = ERR_INVALID;

    if (crypto_product_hash(out->product_id, in->brand_id, in->name, sku, in->metadata,
                            in->created_at, out->hash) != 0)
        goto out;
    crypto_product_signature(in->secret, out->hash, out->signature);
    if (!key_verify_pk(&code_pk, out->code) || !key_hash_pk(&hash_pk, out->hash))
        goto out;

    data = cJSON_CreateObject();
    cJSON_AddStringToObject(data, "registeredBy", in->brand_id);
    if (in->batch)
        cJSON_AddTrueToObject(data, "batch");
    struct event_fields ev = {.product_id = out->product_id,
                              .type = "manufactured",
                              .actor = in->brand_name,
                              .timestamp = in->created_at,
                              .data = data,
                              .location = opt(in->location)};

    items[W_PRODUCT] =
        product_item_build(in, out->product_id, out->code, out->hash, out->signature);
    items[W_CODE] = lookup_item_build(code_pk.s, true, out->product_id, in->brand_id);
    items[W_HASH] = lookup_item_build(hash_pk.s, false, out->product_id, in->brand_id);
    if (chain_genesis_items(&ev, &items[W_EVENT], &items[W_HEAD], ev_hash) != 0)
        goto out;
    items[W_INDEX] = index_item_build(in, out->product_id, out->code, out->hash);
    items[W_NAME] = guard_name_item(g, in, sku);
    if (sku)
        items[W_PAIR] = guard_pair_item(g, in, sku, out->product_id);
    if (!items[W_PRODUCT] || !items[W_INDEX])
        goto out;

    for (int i = 0; i < W_N; i++) {
        if (!items[i])
            continue;
        w[n] = (struct store_write){
            .kind = STORE_W_PUT, .item = items[i], .cond = {.kind = STORE_COND_NOT_EXISTS}};
        if (i == W_NAME && g->has_name_item) {
            old_count = cJSON_CreateNumber(g->count);
            w[n].cond = (struct store_cond){
                .kind = STORE_COND_ATTR_EQ, .attr = "count", .value = old_count};
        }
        n++;
    }
    rc = store_transact(s, w, n, failed);
out:
    for (int i = 0; i < W_N; i++)
        cJSON_Delete(items[i]);
    cJSON_Delete(data);
    cJSON_Delete(old_count);
    return rc;
}

int product_register(struct store *s, const struct product_reg *in, struct product_reg_out *out)
{
    const char *sku;
    int rc = ERR_CONFLICT;

    memset(out, 0, sizeof *out);
    if (!in || !in->brand_id || !in->brand_name || !in->name || !*in->name || !in->created_at ||
        !in->secret)
        return ERR_INVALID;
    if ((in->product_id && strlen(in->product_id) > PRODUCT_ID_MAX) ||
        (in->code && strlen(in->code) > PRODUCT_CODE_MAX))
        return ERR_INVALID;
    if (in->metadata && !cJSON_IsObject(in->metadata))
        return ERR_INVALID;
    sku = opt(in->sku);

    for (int attempt = 0; attempt < PRODUCT_REGISTER_TRIES; attempt++) {
        struct guard g;
        int failed = -1;

        rc = guard_read(s, in, sku, &g);
        if (rc)
            return rc;
        if (guard_is_duplicate(&g, sku))
            return ERR_CONFLICT;
        if (in->product_id)
            strcpy(out->product_id, in->product_id);
        else
            ids_product_id(out->product_id);
        if (in->code)
            strcpy(out->code, in->code);
        else
            ids_verification_code(out->code);

        rc = register_once(s, in, &g, sku, out, &failed);
        if (rc != ERR_CONDITION)
            return rc;
        /* A taken code/id: regenerate unless pinned.  A guard race: the
         * next round reads the guard again (and usually finds the
         * duplicate). */
        if (failed == W_CODE && in->code)
            return ERR_CONDITION;
        if (failed != W_CODE && failed < W_INDEX && in->product_id)
            return ERR_CONDITION;
        rc = ERR_CONFLICT;
    }
    return rc == ERR_CONFLICT ? ERR_CONDITION : rc;
}

void product_check(const cJSON *item, const char *secret, bool *hash_match, bool *signature_valid)
{
    char hash[CRYPTO_HEX_LEN + 1];
    const char *stored = product_str(item, "hash");
    const char *sig = product_str(item, "signature");
    const char *pid = product_str(item, "productId");
    const char *bid = product_str(item, "brandId");
    const char *name = product_str(item, "name");
    const char *created = product_str(item, "createdAt");
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(item, "metadata");

    *hash_match = false;
    *signature_valid = false;
    if (meta && cJSON_IsNull(meta))
        meta = NULL;
    if (stored && pid && bid && name && created && (!meta || cJSON_IsObject(meta)) &&
        crypto_product_hash(pid, bid, name, product_str(item, "sku"), meta, created, hash) == 0)
        *hash_match = crypto_ct_streq(hash, stored);
    if (stored && sig && secret)
        *signature_valid = crypto_signature_valid(secret, stored, sig);
}

static void k(struct jsonw *w, const cJSON *item, const char *attr)
{
    jsonw_kstr(w, attr, product_str(item, attr));
}

void product_write_verify_json(struct jsonw *w, const cJSON *item)
{
    static const char *const attrs[] = {
        "productId",   "brandId",  "brandName",        "name", "sku",       "category",
        "description", "imageUrl", "verificationCode", "hash", "signature", "status",
        "createdAt",   "updatedAt"};
    jsonw_obj(w);
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
        k(w, item, attrs[i]);
    jsonw_end(w);
}

void product_write_list_json(struct jsonw *w, const cJSON *item, double scans)
{
    jsonw_obj(w);
    k(w, item, "productId");
    k(w, item, "name");
    k(w, item, "sku");
    k(w, item, "category");
    k(w, item, "verificationCode");
    k(w, item, "hash");
    k(w, item, "status");
    jsonw_knum(w, "scanCount", scans);
    k(w, item, "createdAt");
    jsonw_end(w);
}

void product_write_search_json(struct jsonw *w, const cJSON *item, double scans)
{
    jsonw_obj(w);
    k(w, item, "productId");
    k(w, item, "name");
    k(w, item, "brandName");
    k(w, item, "sku");
    k(w, item, "category");
    k(w, item, "status");
    k(w, item, "verificationCode");
    k(w, item, "hash");
    k(w, item, "createdAt");
    jsonw_knum(w, "scanCount", scans);
    jsonw_end(w);
}

void product_write_search_brand_json(struct jsonw *w, const cJSON *item, double scans)
{
    jsonw_obj(w);
    k(w, item, "productId");
    k(w, item, "name");
    k(w, item, "sku");
    k(w, item, "category");
    k(w, item, "status");
    k(w, item, "verificationCode");
    k(w, item, "createdAt");
    jsonw_knum(w, "scanCount", scans);
    jsonw_end(w);
}
