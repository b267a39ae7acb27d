/*
 * ids.h - identifiers and codes (API.md §3.7), from getrandom(2).
 */
#ifndef GP_CORE_IDS_H
#define GP_CORE_IDS_H

#include <stddef.h>

/* Fills buf with n CSPRNG bytes; aborts if the kernel cannot supply them
 * (getrandom blocks only before the pool is initialised). */
void ids_random(void *buf, size_t n);
/* Lowercase hex of n bytes into out (2n+1 bytes). */
void ids_hex(const void *bytes, size_t n, char *out);
/* base64url without padding of n bytes into out (4*ceil(n/3)+1 bytes). */
size_t ids_base64url(const void *bytes, size_t n, char *out);
/* 16 random bytes -> 32 lowercase hex chars. */
void ids_product_id(char out[33]);
/* 9 random bytes -> 12 base64url chars. */
void ids_verification_code(char out[13]);
/* UUID v4, lowercase, 36 chars. */
void ids_uuid4(char out[37]);
/* "aik_" + 32 hex chars. */
void ids_ingest_key(char out[37]);
/* n random bytes as 2n hex chars (short unique suffixes: scan ids, alert ids). */
void ids_random_hex(size_t nbytes, char *out);
/* True when s is exactly 12 chars of [A-Za-z0-9_-]. */
int ids_is_verification_code(const char *s);

#endif
