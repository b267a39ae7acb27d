/*
 * auth.h - API credentials: brand and admin keys (Authorization: Bearer),
 * integration ingest keys (X-Ingest-Key), and the server-side secrets kept
 * in files beside the database (admin key, email pepper).
 *
 * Keys are never stored: only their SHA-256 (lowercase hex) is, as the
 * partition key of an APIKEY#<sha256> / INGESTKEY#<sha256> item
 * (core/keys.h).  Nothing here logs a key or a secret.
 */
#ifndef GP_API_AUTH_H
#define GP_API_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#include "api/api.h"

struct store;

/* Longest key accepted in a header. */
#define AUTH_KEY_MAX 256
/* Generated keys: prefix + 64 hex chars (32 random bytes). */
#define AUTH_BRAND_PREFIX "gpk_"
#define AUTH_ADMIN_PREFIX "gpa_"
/* Shortest GENUPROOF_ADMIN_KEY accepted. */
#define AUTH_ADMIN_MIN 16

/* SHA-256 hex of a key. */
void auth_key_hash(const char *key, char out[65]);
/* prefix + 64 random hex chars into out (n bytes; needs strlen(prefix)+65). */
void auth_key_generate(const char *prefix, char *out, size_t n);
/* True when key is 1..AUTH_KEY_MAX printable ASCII chars without spaces. */
bool auth_key_wellformed(const char *key);
/*
 * Extracts the key from an Authorization header value "Bearer <key>"
 * (scheme case-insensitive, surrounding spaces ignored) into out (n
 * bytes).  Returns 0, or ERR_INVALID for anything else.
 */
int auth_parse_bearer(const char *header, char *out, size_t n);

/*
 * Resolves a bearer key.  admin_hash is the configured admin key's hash:
 * a key hashing to it is the admin (compared in constant time; no store
 * read).  Otherwise the APIKEY# item decides: role "brand" with a brandId
 * gives a BRAND principal.  Items of role "admin" that do not match
 * admin_hash (a rotated admin key) are refused.
 * On success returns 0 and fills *who; ERR_NOTFOUND for an unknown or
 * malformed key; another ERR_* when the store failed.
 */
int auth_resolve_bearer(struct store *s, const char *admin_hash, const char *key,
                        struct api_principal *who);
/* Resolves an X-Ingest-Key (INGESTKEY#<sha256> item {brandId,
 * integrationId[, active]}) to an INGEST principal.  Same returns. */
int auth_resolve_ingest(struct store *s, const char *key, struct api_principal *who);

/* The APIKEY# item for key_hash: {role, brandId (NULL for admin),
 * createdAt}.  NULL when the key would be too long.  Caller frees. */
cJSON *auth_key_item_new(const char *key_hash, const char *role, const char *brand_id,
                         const char *created_at);
/* Writes auth_key_item_new()'s item.  Overwrites an existing item with
 * the same hash. */
int auth_store_key(struct store *s, const char *key_hash, const char *role, const char *brand_id,
                   const char *created_at);

/*
 * Sets up the admin key.  When env_key is given (GENUPROOF_ADMIN_KEY) it
 * is used (at least AUTH_ADMIN_MIN chars).  Otherwise the key is read
 * from key_path (<db>.admin-key) or, when that file is missing, generated
 * ("gpa_" + 64 hex) and written there with mode 0600 (*generated = true).
 * The APIKEY# item (role admin) is written in both cases.
 * On success returns 0 and hash_out holds the key's SHA-256 hex; on error
 * a negative ERR_* with a message in err (never containing the key).
 */
int auth_admin_setup(struct store *s, const char *env_key, const char *key_path,
                     const char *now_iso, char hash_out[65], bool *generated, char *err,
                     size_t errlen);

/*
 * Loads a 32-byte secret kept as 64 hex chars in path, creating it with
 * fresh random bytes (mode 0600, O_EXCL) when missing.  Returns 0 and
 * fills out (*created tells which); ERR_IO / ERR_INVALID with a message.
 */
int auth_secret_file(const char *path, unsigned char out[32], bool *created, char *err,
                     size_t errlen);

#endif
