/*
 * crypto.c - hashing and signing rules of API.md §3 on OpenSSL libcrypto.
 *
 * Only one-shot calls are used (EVP_Digest, HMAC), which need no context
 * objects and cannot leak.  Product and event hashes are SHA-256 over the
 * canonical texts built by canon.c; the signature is an HMAC over the hash's
 * hex text; comparisons of secrets and signatures run in constant time
 * (CRYPTO_memcmp) once the lengths are known to match.
 */
#include "core/crypto.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "core/canon.h"
#include "core/ids.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/xalloc.h"

/* Cap on a canonical product/event text (bodies are far smaller). */
#define CRYPTO_TEXT_MAX ((size_t)16 << 20)

/* SHA-256 fetched once: with EVP_sha256() OpenSSL 3 looks the
 * implementation up in its provider tables on every EVP_Digest call, a
 * third of a short digest's cost (a fingerprint per verify).  The fetched
 * method lives as long as the process. */
static EVP_MD *sha256_md;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;

static void sha256_fetch(void)
{
    sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
}

static const EVP_MD *sha256(void)
{
    pthread_once(&sha256_once, sha256_fetch);
    return sha256_md ? sha256_md : EVP_sha256();
}

void crypto_sha256(const void *data, size_t n, unsigned char out[32])
{
    unsigned int len = 0;
    static const unsigned char empty = 0;

    /* EVP_Digest only fails on allocation failure inside OpenSSL. */
    if (!EVP_Digest(n ? data : &empty, n, out, &len, sha256(), NULL))
        abort();
}

void crypto_sha256_hex(const void *data, size_t n, char out[CRYPTO_HEX_LEN + 1])
{
    unsigned char md[32];
    crypto_sha256(data, n, md);
    ids_hex(md, sizeof md, out);
}

void crypto_hmac_sha256(const void *key, size_t keylen, const void *msg, size_t n,
                        unsigned char out[32])
{
    unsigned int len = 0;
    static const unsigned char empty = 0;

    /* OpenSSL 3 refuses a NULL key even with length 0. */
    if (!HMAC(EVP_sha256(), keylen ? key : &empty, (int)keylen, n ? msg : &empty, n, out, &len))
        abort();
}

void crypto_hmac_sha256_hex(const void *key, size_t keylen, const void *msg, size_t n,
                            char out[CRYPTO_HEX_LEN + 1])
{
    unsigned char md[32];
    crypto_hmac_sha256(key, keylen, msg, n, md);
    ids_hex(md, sizeof md, out);
}

bool crypto_ct_equal(const void *a, size_t alen, const void *b, size_t blen)
{
    if (alen != blen)
        return false;
    if (alen == 0)
        return true;
    return CRYPTO_memcmp(a, b, alen) == 0;
}

bool crypto_ct_streq(const char *a, const char *b)
{
    if (!a || !b)
        return false;
    return crypto_ct_equal(a, strlen(a), b, strlen(b));
}

int crypto_product_hash(const char *product_id, const char *brand_id, const char *name,
                        const char *sku, const cJSON *metadata, const char *created_at,
                        char out[CRYPTO_HEX_LEN + 1])
{
    struct buf b;
    int rc;

    buf_init(&b, CRYPTO_TEXT_MAX);
    rc = canon_product_text(&b, product_id, brand_id, name, sku, metadata, created_at);
    if (!rc)
        crypto_sha256_hex(b.data, b.len, out);
    buf_free(&b);
    return rc;
}

void crypto_product_signature(const char *secret, const char *hash_hex,
                              char out[CRYPTO_HEX_LEN + 1])
{
    crypto_hmac_sha256_hex(secret, strlen(secret), hash_hex, strlen(hash_hex), out);
}

bool crypto_signature_valid(const char *secret, const char *hash_hex, const char *signature)
{
    char expect[CRYPTO_HEX_LEN + 1];

    if (!secret || !hash_hex || !signature)
        return false;
    crypto_product_signature(secret, hash_hex, expect);
    return crypto_ct_streq(expect, signature);
}

int crypto_event_hash(const char *product_id, const char *type, const char *actor,
                      const char *timestamp, const cJSON *data, const char *previous_hash,
                      char out[CRYPTO_HEX_LEN + 1])
{
    struct buf b;
    int rc;

    buf_init(&b, CRYPTO_TEXT_MAX);
    rc = canon_event_text(&b, product_id, type, actor, timestamp, data, previous_hash);
    if (!rc)
        crypto_sha256_hex(b.data, b.len, out);
    buf_free(&b);
    return rc;
}

void crypto_fingerprint(const char *ip, const char *user_agent, char out[CRYPTO_HEX_LEN + 1])
{
    struct buf b;

    buf_init(&b, 0);
    buf_puts(&b, ip ? ip : "unknown");
    buf_putc(&b, ':');
    buf_puts(&b, user_agent ? user_agent : "unknown");
    crypto_sha256_hex(b.data, b.len, out);
    buf_free(&b);
}

/* sha256(left + right) of two hex texts. */
static void merkle_parent(const char *l, const char *r, char out[CRYPTO_HEX_LEN + 1])
{
    struct buf b;

    buf_init(&b, 0);
    buf_puts(&b, l);
    buf_puts(&b, r);
    crypto_sha256_hex(b.data, b.len, out);
    buf_free(&b);
}

void crypto_merkle_root(const char *const *leaves, size_t n, char out[CRYPTO_HEX_LEN + 1])
{
    char(*level)[CRYPTO_HEX_LEN + 1] = NULL;
    size_t m;

    if (n == 0) {
        memcpy(out, CRYPTO_GENESIS, CRYPTO_HEX_LEN + 1);
        return;
    }
    if (n == 1) {
        /* One element is its own root (copied as is, up to 64 chars). */
        size_t len = strnlen(leaves[0], CRYPTO_HEX_LEN);
        memcpy(out, leaves[0], len);
        out[len] = '\0';
        return;
    }
    /* First level straight from the leaves (any length), then in place. */
    m = (n + 1) / 2;
    level = xmalloc(m * sizeof *level);
    for (size_t i = 0; i < m; i++) {
        const char *l = leaves[2 * i];
        const char *r = (2 * i + 1 < n) ? leaves[2 * i + 1] : l;
        merkle_parent(l, r, level[i]);
    }
    while (m > 1) {
        size_t next = (m + 1) / 2;
        for (size_t i = 0; i < next; i++) {
            char parent[CRYPTO_HEX_LEN + 1];
            const char *l = level[2 * i];
            const char *r = (2 * i + 1 < m) ? level[2 * i + 1] : l;
            merkle_parent(l, r, parent);
            memcpy(level[i], parent, sizeof parent);
        }
        m = next;
    }
    memcpy(out, level[0], CRYPTO_HEX_LEN + 1);
    free(level);
}
