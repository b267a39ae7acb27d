/*
 * ogcard.h - the Open Graph card of a verification (API.md §9.45): a
 * 1200 x 630 PNG drawn with cairo and the DejaVu fonts (fonts-dejavu-core)
 * and encoded by core/pngw.c.
 *
 * Texts come from query parameters, so they are hostile: each is cut to
 * OG_TEXT_MAX bytes at a character boundary, invalid UTF-8 and control
 * characters become '?', and a text wider than its slot is shortened
 * with an ellipsis.
 */
#ifndef GP_CORE_OGCARD_H
#define GP_CORE_OGCARD_H

#include <stdbool.h>
#include <stddef.h>

#include "util/buf.h"

#define OG_WIDTH  1200
#define OG_HEIGHT 630
/* Bytes of each input text considered before measuring. */
#define OG_TEXT_MAX 256
/* Characters of the hash shown on the card (then "..."). */
#define OG_HASH_CHARS 32

/* What the card shows; NULL or "" fields take the API.md defaults
 * (brand "GenuProof", product "Product Verification", status
 * "authentic", no hash). */
struct og_card {
    const char *brand;
    const char *product;
    const char *status; /* "authentic" -> VERIFIED, anything else -> UNVERIFIED */
    const char *hash;
};

/*
 * Renders the card and appends the PNG to out.  On success returns 0.
 * On error returns ERR_TOOBIG (out's cap) or ERR_INTERNAL (cairo), and
 * out keeps its previous content.
 *
 * cairo and fontconfig keep process-wide font caches (their own global
 * state, loaded on the first call); the function itself keeps none.
 */
int og_render_png(const struct og_card *card, struct buf *out);

/*
 * Copies at most max bytes of src into dst (dst_size bytes, always
 * NUL-terminated) ending at a character boundary, with every invalid
 * UTF-8 byte and every control character replaced by '?'.  Returns the
 * length written.  (Exported for tests.)
 */
size_t og_clean_text(const char *src, size_t max, char *dst, size_t dst_size);

#endif
