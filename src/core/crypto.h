/*
 * crypto.h - SHA-256, HMAC-SHA256 (OpenSSL libcrypto), constant-time
 * comparison and the product/event/fingerprint/merkle rules of API.md §3.
 *
 * Hex outputs are 64 lowercase chars + NUL (CRYPTO_HEX_LEN + 1 bytes).
 * Functions returning int give 0 or a negative ERR_*.
 */
#ifndef GP_CORE_CRYPTO_H
#define GP_CORE_CRYPTO_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#define CRYPTO_HEX_LEN 64
/* sha256("") */
#define CRYPTO_GENESIS "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

void crypto_sha256(const void *data, size_t n, unsigned char out[32]);
void crypto_sha256_hex(const void *data, size_t n, char out[CRYPTO_HEX_LEN + 1]);
void crypto_hmac_sha256(const void *key, size_t keylen, const void *msg, size_t n,
                        unsigned char out[32]);
void crypto_hmac_sha256_hex(const void *key, size_t keylen, const void *msg, size_t n,
                            char out[CRYPTO_HEX_LEN + 1]);
/* True when a and b have equal length and bytes; time depends only on the
 * lengths. */
bool crypto_ct_equal(const void *a, size_t alen, const void *b, size_t blen);
/* Same for NUL-terminated strings. */
bool crypto_ct_streq(const char *a, const char *b);

/* hash = sha256(canon_product_text(...)) (§3.3). */
int crypto_product_hash(const char *product_id, const char *brand_id, const char *name,
                        const char *sku, const cJSON *metadata, const char *created_at,
                        char out[CRYPTO_HEX_LEN + 1]);
/* signature = HMAC(secret, hash hex text) (§3.4). */
void crypto_product_signature(const char *secret, const char *hash_hex,
                              char out[CRYPTO_HEX_LEN + 1]);
/* Recomputes and compares in constant time. */
bool crypto_signature_valid(const char *secret, const char *hash_hex, const char *signature);
/* hash = sha256(canon_event_text(...)) (§3.5). */
int crypto_event_hash(const char *product_id, const char *type, const char *actor,
                      const char *timestamp, const cJSON *data, const char *previous_hash,
                      char out[CRYPTO_HEX_LEN + 1]);
/* sha256(ip ":" user_agent) (§3.8). */
void crypto_fingerprint(const char *ip, const char *user_agent, char out[CRYPTO_HEX_LEN + 1]);
/* §3.10: leaves are hex strings; n == 0 gives GENESIS. */
void crypto_merkle_root(const char *const *leaves, size_t n, char out[CRYPTO_HEX_LEN + 1]);

#endif
