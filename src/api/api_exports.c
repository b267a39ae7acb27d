/*
 * api_exports.c - downloads and images (API.md §9.20, §9.21, §9.22,
 * §9.45): GET /api/products/certificate, /api/products/qr,
 * /api/products/dpp-export and /api/og.  All four are PUBLIC and read
 * only; none records a scan.
 *
 * The certificate and the passport re-verify what they certify: the
 * product hash is recomputed, the signature checked with the configured
 * secret and the chain walked with the §4.4 Reimpl rules, so a record
 * changed in the store shows up as false instead of being copied through
 * ([D20]: authentic = hash && signature && chain, as in verify).  Every
 * URL is built from the one configured base URL with the code
 * percent-encoded ([D43]).  The QR code always encodes
 * <BASE>/verify/<code>, also when asked by productId, and unknown
 * codes/products get a 404 that must not be cached, instead of a QR
 * image cached for a year ([D33]).  The card image (core/ogcard.c) is
 * drawn per request; its texts come straight from the query and are
 * bounded there.
 */
#include "api/api_exports.h"

#include <string.h>

#include "api/api_products.h"
#include "api/product_decode.h"
#include "core/chain.h"
#include "core/keys.h"
#include "core/ogcard.h"
#include "core/product.h"
#include "core/qr.h"
#include "store/store.h"
#include "util/err.h"

/* How resolve_product() ended when it found no product. */
enum resolve_how {
    RESOLVE_FOUND = 0,
    RESOLVE_NO_INPUT,     /* neither code nor productId */
    RESOLVE_CODE_UNKNOWN, /* code given, no VERIFY#<code> item */
    RESOLVE_NO_PRODUCT    /* no PRODUCT#<id>/META item */
};

/*
 * Finds the product a request names: `code` (wins) through its code
 * lookup item, else `product_id`.  On success returns 0 with *how set;
 * *product is the item (caller frees) when *how is RESOLVE_FOUND, NULL
 * otherwise.  On a store error returns a negative ERR_*.
 */
static int resolve_product(struct api_req *r, const char *code, const char *product_id,
                           cJSON **product, enum resolve_how *how)
{
    cJSON *lookup = NULL;
    struct key pk;
    int rc = 0;

    *product = NULL;
    *how = RESOLVE_FOUND;
    if (code) {
        rc = ERR_NOTFOUND;
        if (strlen(code) <= EXPORTS_CODE_MAX && pd_id_ok(code) && key_verify_pk(&pk, code))
            rc = store_get(api_store(r), pk.s, KEY_SK_META, true, &lookup);
        if (rc == ERR_NOTFOUND) {
            *how = RESOLVE_CODE_UNKNOWN;
            rc = 0;
            goto out;
        }
        if (rc)
            goto out;
        product_id = product_str(lookup, "productId");
    }
    if (!product_id) {
        *how = code ? RESOLVE_NO_PRODUCT : RESOLVE_NO_INPUT;
        goto out;
    }
    rc = prod_get(r, product_id, product);
    if (rc == ERR_NOTFOUND) {
        *how = RESOLVE_NO_PRODUCT;
        rc = 0;
    }
out:
    cJSON_Delete(lookup);
    return rc;
}

/* s percent-encoded (everything but RFC 3986 unreserved characters), in
 * the request arena. */
static const char *pct_encode(struct api_req *r, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = strlen(s), o = 0;
    char *out = api_alloc(r, 3 * n + 1);

    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '.' || c == '_' || c == '~') {
            out[o++] = (char)c;
        } else {
            out[o++] = '%';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        }
    }
    out[o] = '\0';
    return out;
}

/* s reduced to a safe file name part ([A-Za-z0-9._-], others '_', at
 * most 64 characters), in the request arena. */
static const char *file_part(struct api_req *r, const char *s)
{
    size_t n = strlen(s);
    char *out;

    if (n > 64)
        n = 64;
    out = api_alloc(r, n + 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  c == '-' || c == '.' || c == '_';
        out[i] = ok ? (char)c : '_';
    }
    out[n] = '\0';
    return out;
}

/* The product's verification code (the stored one, else the one asked
 * for); "" when there is neither. */
static const char *product_code(const cJSON *product, const char *asked)
{
    const char *c = product_str(product, "verificationCode");
    return c ? c : asked ? asked : "";
}

static const char *verify_url(struct api_req *r, const char *code)
{
    return api_printf(r, "%s/verify/%s", api_base_url(r), pct_encode(r, code));
}

/* Answers a 404 that caches and proxies must not keep. */
static void not_found(struct api_req *r, const char *msg)
{
    api_error(r, 404, msg);
    http_response_header(r->res, "Cache-Control", "no-store");
}

/*
 * Common part of certificate and dpp-export: resolves the product,
 * answers the 400/404s with the endpoint's texts (no_input_msg), loads
 * the chain.  Returns true with *product and *events set (caller frees
 * both) when the handler should go on.
 */
static bool load_for_export(struct api_req *r, const char *fail_msg, const char *no_input_msg,
                            const char **code, cJSON **product, cJSON **events)
{
    const char *product_id;
    enum resolve_how how;
    int rc;

    *code = api_query(r, "code");
    product_id = api_query(r, "productId");
    *product = NULL;
    *events = NULL;
    if (!api_query_ok(r))
        return false;
    rc = resolve_product(r, *code, product_id, product, &how);
    if (rc) {
        api_fail(r, fail_msg, rc);
        return false;
    }
    switch (how) {
    case RESOLVE_CODE_UNKNOWN:
        not_found(r, "Code not found");
        return false;
    case RESOLVE_NO_INPUT:
        api_error(r, 400, no_input_msg);
        return false;
    case RESOLVE_NO_PRODUCT:
        not_found(r, "Product not found");
        return false;
    case RESOLVE_FOUND:
        break;
    }
    rc = chain_list(api_store(r), product_str(*product, "productId"), events);
    if (rc) {
        api_fail(r, fail_msg, rc);
        cJSON_Delete(*product);
        *product = NULL;
        return false;
    }
    return true;
}

/* Ends a download: checks the writer, adds Content-Disposition. */
static void finish_download(struct api_req *r, const char *fail_msg, const char *filename)
{
    int rc = jsonw_error(&r->jw);
    if (rc) {
        api_fail(r, fail_msg, rc);
        return;
    }
    http_response_header(r->res, "Content-Disposition", "attachment; filename=\"%s\"", filename);
}

/* ---- GET /api/products/certificate (§9.20) ---- */

static void h_certificate(struct api_req *r)
{
    static const char *fail_msg = "Failed to export certificate";
    const char *asked, *code;
    cJSON *product = NULL, *events = NULL;
    bool hash_ok, sig_ok, chain_ok;
    const cJSON *ev;
    struct jsonw *w;
    double scans;

    if (!load_for_export(r, fail_msg, "code or productId required", &asked, &product, &events))
        return;
    code = product_code(product, asked);
    product_check(product, api_signing_secret(r), &hash_ok, &sig_ok);
    chain_ok = chain_valid(events);
    scans = product_scan_count(product) +
            api_counter_pending(r, product_str(product, "PK"), KEY_SK_META, "scanCount");

    w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_kstr(w, "version", "1.0");
    jsonw_kstr(w, "issuer", "GenuProof Platform");
    jsonw_kstr(w, "issuedAt", r->now_iso);

    jsonw_key(w, "product");
    jsonw_obj(w);
    jsonw_kstr(w, "id", product_str(product, "productId"));
    jsonw_kstr(w, "name", product_str(product, "name"));
    jsonw_kstr(w, "brand", product_str(product, "brandName"));
    jsonw_kstr(w, "sku", product_str(product, "sku"));
    jsonw_kstr(w, "category", product_str(product, "category"));
    jsonw_kstr(w, "registeredAt", product_str(product, "createdAt"));
    jsonw_kstr(w, "status", product_str(product, "status"));
    jsonw_end(w);

    jsonw_key(w, "cryptography");
    jsonw_obj(w);
    jsonw_kstr(w, "algorithm", "SHA-256");
    jsonw_kstr(w, "signatureAlgorithm", "HMAC-SHA256");
    jsonw_kstr(w, "productHash", product_str(product, "hash"));
    jsonw_kstr(w, "signature", product_str(product, "signature"));
    jsonw_kbool(w, "hashValid", hash_ok);
    jsonw_kbool(w, "signatureValid", sig_ok);
    jsonw_end(w);

    jsonw_key(w, "provenance");
    jsonw_obj(w);
    jsonw_kstr(w, "chainAlgorithm", "SHA-256-linked");
    jsonw_kbool(w, "chainValid", chain_ok);
    jsonw_kint(w, "eventCount", cJSON_GetArraySize(events));
    jsonw_key(w, "events");
    jsonw_arr(w);
    cJSON_ArrayForEach(ev, events)
    {
        jsonw_obj(w);
        jsonw_kstr(w, "type", product_str(ev, "type"));
        jsonw_kstr(w, "actor", product_str(ev, "actor"));
        jsonw_kstr(w, "location", product_str(ev, "location"));
        jsonw_kstr(w, "timestamp", product_str(ev, "timestamp"));
        jsonw_kstr(w, "hash", product_str(ev, "hash"));
        jsonw_kstr(w, "previousHash", product_str(ev, "previousHash"));
        jsonw_end(w);
    }
    jsonw_end(w);
    jsonw_end(w);

    jsonw_key(w, "verification");
    jsonw_obj(w);
    jsonw_kbool(w, "authentic", hash_ok && sig_ok && chain_ok);
    jsonw_kstr(w, "verificationCode", code);
    jsonw_kstr(w, "verifyUrl", verify_url(r, code));
    jsonw_knum(w, "totalScans", scans);
    jsonw_end(w);
    jsonw_end(w);

    finish_download(r, fail_msg,
                    api_printf(r, "genuproof-certificate-%s.json", file_part(r, code)));
    cJSON_Delete(product);
    cJSON_Delete(events);
}

/* ---- GET /api/products/dpp-export (§9.22) ---- */

/* data.source of an event when it is a string, else "manual". */
static const char *event_source(const cJSON *ev)
{
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(ev, "data");
    const cJSON *src =
        cJSON_IsObject(data) ? cJSON_GetObjectItemCaseSensitive(data, "source") : NULL;
    return cJSON_IsString(src) && src->valuestring[0] ? src->valuestring : "manual";
}

static void h_dpp_export(struct api_req *r)
{
    static const char *fail_msg = "DPP export failed";
    const char *asked, *code, *brand;
    cJSON *product = NULL, *events = NULL;
    const cJSON *ev;
    struct jsonw *w;
    int64_t seq = 0;

    if (!load_for_export(r, fail_msg, "productId or code required", &asked, &product, &events))
        return;
    code = product_code(product, asked);
    brand = product_str(product, "brandName");

    w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_kstr(w, "@context", "https://schema.org/");
    jsonw_kstr(w, "@type", "Product");
    jsonw_kstr(w, "dppVersion", "1.0");
    jsonw_kstr(w, "dppStandard", "ESPR-2024/1781");

    jsonw_key(w, "identification");
    jsonw_obj(w);
    jsonw_kstr(w, "gtin", product_str(product, "sku"));
    jsonw_kstr(w, "serialNumber", product_str(product, "productId"));
    jsonw_kstr(w, "verificationCode", code);
    jsonw_knull(w, "batchId");
    jsonw_end(w);

    jsonw_key(w, "product");
    jsonw_obj(w);
    jsonw_kstr(w, "name", product_str(product, "name"));
    jsonw_kstr(w, "brand", brand);
    jsonw_kstr(w, "category", product_str(product, "category"));
    jsonw_kstr(w, "description", product_str(product, "description"));
    jsonw_kstr(w, "manufacturingDate", product_str(product, "createdAt"));
    jsonw_kstr(w, "status", product_str(product, "status"));
    jsonw_end(w);

    jsonw_key(w, "manufacturer");
    jsonw_obj(w);
    jsonw_kstr(w, "name", brand);
    jsonw_kstr(w, "brandId", product_str(product, "brandId"));
    jsonw_kstr(w, "registeredAt", product_str(product, "createdAt"));
    jsonw_end(w);

    jsonw_key(w, "supplyChain");
    jsonw_obj(w);
    jsonw_kint(w, "eventCount", cJSON_GetArraySize(events));
    jsonw_kbool(w, "chainIntegrity", chain_valid(events));
    jsonw_key(w, "events");
    jsonw_arr(w);
    cJSON_ArrayForEach(ev, events)
    {
        jsonw_obj(w);
        jsonw_kint(w, "sequence", ++seq);
        jsonw_kstr(w, "type", product_str(ev, "type"));
        jsonw_kstr(w, "actor", product_str(ev, "actor"));
        jsonw_kstr(w, "location", product_str(ev, "location"));
        jsonw_kstr(w, "timestamp", product_str(ev, "timestamp"));
        jsonw_kstr(w, "hash", product_str(ev, "hash"));
        jsonw_kstr(w, "previousHash", product_str(ev, "previousHash"));
        jsonw_kstr(w, "source", event_source(ev));
        jsonw_end(w);
    }
    jsonw_end(w);
    jsonw_end(w);

    jsonw_key(w, "verification");
    jsonw_obj(w);
    jsonw_kstr(w, "algorithm", "SHA-256");
    jsonw_kstr(w, "signatureAlgorithm", "HMAC-SHA256");
    jsonw_kstr(w, "productHash", product_str(product, "hash"));
    jsonw_kstr(w, "signature", product_str(product, "signature"));
    jsonw_kstr(w, "verifyUrl", verify_url(r, code));
    jsonw_kstr(w, "qrUrl",
               api_printf(r, "%s/api/products/qr?code=%s", api_base_url(r), pct_encode(r, code)));
    jsonw_end(w);

    jsonw_key(w, "sustainability");
    jsonw_obj(w);
    jsonw_knull(w, "carbonFootprint");
    jsonw_knull(w, "recyclability");
    jsonw_knull(w, "materials");
    jsonw_key(w, "certifications");
    jsonw_arr(w);
    jsonw_end(w);
    jsonw_knull(w, "repairInstructions");
    jsonw_end(w);

    jsonw_key(w, "metadata");
    jsonw_obj(w);
    jsonw_kstr(w, "issuer", "GenuProof Platform");
    jsonw_kstr(w, "issuedAt", r->now_iso);
    jsonw_knull(w, "expiresAt");
    jsonw_kstr(w, "dataCarrier", "QR Code (ISO/IEC 18004)");
    jsonw_kstr(w, "accessLevel", "public");
    jsonw_end(w);
    jsonw_end(w);

    finish_download(r, fail_msg, api_printf(r, "dpp-%s.json", file_part(r, code)));
    cJSON_Delete(product);
    cJSON_Delete(events);
}

/* ---- GET /api/products/qr (§9.21) ---- */

static void h_qr(struct api_req *r)
{
    static const char *fail_msg = "Failed to generate QR code";
    const char *code = api_query(r, "code");
    const char *product_id = api_query(r, "productId");
    const char *format = api_query(r, "format");
    cJSON *product = NULL;
    enum resolve_how how;
    const char *text;
    bool svg;
    int rc;

    if (!api_query_ok(r))
        return;
    if (!code && !product_id) {
        api_error(r, 400, "code or productId is required");
        return;
    }
    rc = resolve_product(r, code, product_id, &product, &how);
    if (rc) {
        api_fail(r, fail_msg, rc);
        goto out;
    }
    if (how != RESOLVE_FOUND || !product_str(product, "verificationCode")) {
        not_found(r, "Product not found");
        goto out;
    }
    /* asked by code: that code (it resolved to this product) */
    text = verify_url(r, code ? code : product_str(product, "verificationCode"));
    svg = format && strcmp(format, "svg") == 0;

    r->res->status = 200;
    buf_reset(&r->res->body);
    if (svg) {
        r->res->content_type = "image/svg+xml";
        rc = qr_svg(text, &r->res->body);
    } else {
        r->res->content_type = "image/png";
        rc = qr_png(text, QR_PNG_PX, &r->res->body);
    }
    if (rc) {
        api_fail(r, fail_msg, rc);
        goto out;
    }
    if (!svg)
        http_response_header(r->res, "Cache-Control", "public, max-age=31536000, immutable");
out:
    cJSON_Delete(product);
}

/* ---- GET /api/og (§9.45) ---- */

static void h_og(struct api_req *r)
{
    struct og_card card;
    int rc;

    card.brand = api_query(r, "brand");
    card.product = api_query(r, "product");
    card.status = api_query(r, "status");
    card.hash = api_query(r, "hash");
    if (!api_query_ok(r))
        return;
    r->res->status = 200;
    r->res->content_type = "image/png";
    buf_reset(&r->res->body);
    rc = og_render_png(&card, &r->res->body);
    if (rc) {
        api_fail(r, "Failed to render image", rc);
        return;
    }
    http_response_header(r->res, "Cache-Control",
                         "public, immutable, no-transform, max-age=31536000");
}

const struct api_route api_exports_routes[] = {
    {HTTP_M_GET, "/api/products/certificate", API_PUBLIC, h_certificate},
    {HTTP_M_GET, "/api/products/qr", API_PUBLIC, h_qr},
    {HTTP_M_GET, "/api/products/dpp-export", API_PUBLIC, h_dpp_export},
    {HTTP_M_GET, "/api/og", API_PUBLIC, h_og},
    {0},
};
