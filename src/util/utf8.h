/*
 * utf8.h - the one strict UTF-8 decoder: no overlong forms, no surrogate
 * code points (U+D800..DFFF), nothing past U+10FFFF.  DynamoDB refuses
 * other strings and JSON.stringify could not round-trip them, so every
 * validator in the project (body decoding, the store, the canonical
 * writer, text rendering) goes through here.
 */
#ifndef GP_UTIL_UTF8_H
#define GP_UTIL_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Length (1-4) of the well-formed sequence at s[0..n), or 0 when s does
 * not start with one (n == 0 gives 0).  An ASCII byte, NUL included, is a
 * sequence of 1.  *cp (when not NULL) receives the code point. */
size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);
/* True when s[0..n) is well-formed UTF-8; NUL bytes are refused unless
 * allow_nul. */
bool utf8_valid(const char *s, size_t n, bool allow_nul);

#endif
