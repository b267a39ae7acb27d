/*
 * canon.h - JSON text exactly as JavaScript's JSON.stringify prints it.
 *
 * This is the one JSON writer of the project: product and event hashes
 * (API.md §3.2) and every JSON response body go through it, so numbers and
 * strings look the same everywhere:
 *   - numbers: ECMAScript Number::toString (shortest round-trip digits,
 *     integers without ".0", -0 -> 0, exponent form from 1e21 up and below
 *     1e-6: "1e+21", "1e-7"); NaN and +-Infinity -> null;
 *   - strings: \" \\ \b \t \n \f \r escaped, other code points < 0x20 as
 *     \u00xx (lowercase hex), '/' and U+2028/9 and all non-ASCII raw; a lone
 *     surrogate stored as WTF-8 (ED A0..BF xx) is written as \udxxx;
 *     invalid UTF-8 bytes are written as U+FFFD;
 *   - objects keep the stored key order; no whitespace.
 * All functions append to a struct buf and return 0 or ERR_TOOBIG (the
 * buffer's cap), or ERR_INVALID for a cJSON item of invalid type or nested
 * deeper than 1000 levels; on error the buffer holds a partial text.
 * Output never depends on the C locale (LC_NUMERIC).
 */
#ifndef GP_CORE_CANON_H
#define GP_CORE_CANON_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "util/buf.h"

/* Longest output of canon_number_str(), including the NUL. */
#define CANON_NUM_MAX 32

/* Writes d in Number::toString form into out (>= CANON_NUM_MAX bytes);
 * returns the length. */
size_t canon_number_str(double d, char *out);
int canon_number(struct buf *b, double d);
/* Appends a quoted, escaped JSON string of s[0..n). */
int canon_string(struct buf *b, const char *s, size_t n);
int canon_cstring(struct buf *b, const char *s);
/* JSON.stringify(item): cJSON_Raw items are copied verbatim. */
int canon_write(struct buf *b, const cJSON *item);
/* Convenience: malloc'd JSON.stringify text of item, NULL on failure. */
char *canon_dup(const cJSON *item);

/*
 * The canonical text hashed for a product (API.md §3.3): keys productId,
 * brandId, name, sku, metadata, createdAt in that order; sku NULL or "" ->
 * ""; metadata NULL or JSON null -> {}.
 */
int canon_product_text(struct buf *b, const char *product_id, const char *brand_id,
                       const char *name, const char *sku, const cJSON *metadata,
                       const char *created_at);
/*
 * The canonical text hashed for a provenance event (API.md §3.5): keys
 * productId, type, actor, timestamp, data, previousHash; data NULL -> {}.
 */
int canon_event_text(struct buf *b, const char *product_id, const char *type, const char *actor,
                     const char *timestamp, const cJSON *data, const char *previous_hash);

#endif
