/*
 * ogcard.c - the 1200 x 630 Open Graph card (ogcard.h), drawn with
 * cairo's toy text API and the DejaVu families from fonts-dejavu-core.
 *
 * Layout (API.md §9.45; exact typography is not contractual): a warm
 * off-white page with 60 px padding and three rows.  Top: an outlined
 * rounded square with a check mark and the GENUPROOF wordmark on the
 * left, a dot and VERIFIED (green) or UNVERIFIED (red) on the right.
 * Middle: the caption, the product in large serif italics, "by <brand>".
 * Bottom: the start of the hash (or "SHA-256 VERIFIED") in monospace on
 * the left, the domain on the right.  Every text is cleaned
 * (og_clean_text) and shortened with an ellipsis to fit its slot, so no
 * input can overflow the card or put cairo into an error state.
 */
#include "util/utf8.h"
#include "core/ogcard.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include <cairo.h>

#include "core/pngw.h"
#include "util/err.h"

#define PAD       60.0
#define CONTENT_W (OG_WIDTH - 2 * PAD)

#define COL_BG    0xfaf8f4
#define COL_INK   0x1a1a18
#define COL_GREY  0x6b6960
#define COL_GREEN 0x0d503c
#define COL_RED   0x9b2c2c
#define COL_RULE  0xe4e0d6

#define FONT_SANS  "DejaVu Sans"
#define FONT_SERIF "DejaVu Serif"
#define FONT_MONO  "DejaVu Sans Mono"

#define ELLIPSIS "\xe2\x80\xa6" /* U+2026 */

#if defined(__SANITIZE_ADDRESS__)
/*
 * LeakSanitizer cannot follow fontconfig's internal pointers (its
 * patterns store offsets, not addresses), so the font cache that cairo
 * keeps for the process looks leaked at exit.  This hook, read by
 * LeakSanitizer at start-up in sanitizer builds only, ignores
 * allocations made inside libfontconfig.
 */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libfontconfig.so\n";
}
#endif

size_t og_clean_text(const char *src, size_t max, char *dst, size_t dst_size)
{
    const unsigned char *s = (const unsigned char *)(src ? src : "");
    size_t n = strlen((const char *)s), i = 0, o = 0;

    if (!dst_size)
        return 0;
    if (max > dst_size - 1)
        max = dst_size - 1;
    while (i < n) {
        uint32_t cp = 0;
        size_t len = utf8_decode(s + i, n - i, &cp);
        bool bad = len == 0 || cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f);
        size_t outlen = bad ? 1 : len;
        if (o + outlen > max)
            break;
        if (bad)
            dst[o] = '?';
        else
            memcpy(dst + o, s + i, len);
        o += outlen;
        i += len ? len : 1;
    }
    dst[o] = '\0';
    return o;
}

static void set_color(cairo_t *cr, unsigned rgb)
{
    cairo_set_source_rgb(cr, ((rgb >> 16) & 0xff) / 255.0, ((rgb >> 8) & 0xff) / 255.0,
                         (rgb & 0xff) / 255.0);
}

static void set_font(cairo_t *cr, const char *family, bool italic, bool bold, double size)
{
    cairo_select_font_face(cr, family, italic ? CAIRO_FONT_SLANT_ITALIC : CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, size);
}

static double text_width(cairo_t *cr, const char *s)
{
    cairo_text_extents_t e;
    cairo_text_extents(cr, s, &e);
    return e.x_advance;
}

/*
 * Writes into out (OG_TEXT_MAX + 4 bytes) the longest prefix of the
 * clean text s that, followed by an ellipsis when cut, is at most maxw
 * wide in the current font.
 */
static void fit_text(cairo_t *cr, const char *s, double maxw, char out[OG_TEXT_MAX + 4])
{
    size_t cut[OG_TEXT_MAX + 1], ncut = 0, n = strlen(s), lo, hi;

    if (text_width(cr, s) <= maxw) {
        memcpy(out, s, n + 1);
        return;
    }
    /* character boundaries of s (it is valid UTF-8) */
    for (size_t i = 0; i < n && ncut < OG_TEXT_MAX; i++)
        if (((unsigned char)s[i] & 0xc0) != 0x80)
            cut[ncut++] = i;
    /* the largest k in [0, ncut) such that s[0..cut[k]) + "..." fits */
    lo = 0;
    hi = ncut;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        memcpy(out, s, cut[mid]);
        memcpy(out + cut[mid], ELLIPSIS, sizeof ELLIPSIS);
        if (text_width(cr, out) <= maxw)
            lo = mid;
        else
            hi = mid;
    }
    memcpy(out, s, cut[lo]);
    memcpy(out + cut[lo], ELLIPSIS, sizeof ELLIPSIS);
}

/* Draws the cleaned, fitted text with its baseline at (x, y); right
 * aligned at x when right is set. */
static void draw_text(cairo_t *cr, const char *raw, double x, double y, double maxw, bool right)
{
    char clean[OG_TEXT_MAX + 1], fitted[OG_TEXT_MAX + 4];

    og_clean_text(raw, OG_TEXT_MAX, clean, sizeof clean);
    fit_text(cr, clean, maxw, fitted);
    if (right)
        x -= text_width(cr, fitted);
    cairo_move_to(cr, x, y);
    cairo_show_text(cr, fitted);
}

static void rounded_rect(cairo_t *cr, double x, double y, double w, double h, double r)
{
    cairo_new_sub_path(cr);
    cairo_arc(cr, x + w - r, y + r, r, -M_PI / 2, 0);
    cairo_arc(cr, x + w - r, y + h - r, r, 0, M_PI / 2);
    cairo_arc(cr, x + r, y + h - r, r, M_PI / 2, M_PI);
    cairo_arc(cr, x + r, y + r, r, M_PI, 3 * M_PI / 2);
    cairo_close_path(cr);
}

static void draw_top_row(cairo_t *cr, bool verified)
{
    const char *word = "GENUPROOF";
    const char *label = verified ? "VERIFIED" : "UNVERIFIED";
    double x = PAD + 40, w;

    /* logo: outlined rounded square with a check mark */
    set_color(cr, COL_GREEN);
    cairo_set_line_width(cr, 2.5);
    rounded_rect(cr, PAD, PAD, 28, 28, 6);
    cairo_stroke(cr);
    cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    cairo_move_to(cr, PAD + 7, PAD + 14.5);
    cairo_line_to(cr, PAD + 12, PAD + 19.5);
    cairo_line_to(cr, PAD + 21, PAD + 9);
    cairo_stroke(cr);

    /* wordmark, letter-spaced */
    set_color(cr, COL_INK);
    set_font(cr, FONT_SANS, false, true, 22);
    for (const char *p = word; *p; p++) {
        char ch[2] = {*p, '\0'};
        cairo_move_to(cr, x, PAD + 22);
        cairo_show_text(cr, ch);
        x += text_width(cr, ch) + 3;
    }

    /* status: dot + label, right aligned */
    set_color(cr, verified ? COL_GREEN : COL_RED);
    set_font(cr, FONT_SANS, false, true, 16);
    w = text_width(cr, label);
    cairo_move_to(cr, OG_WIDTH - PAD - w, PAD + 20);
    cairo_show_text(cr, label);
    cairo_arc(cr, OG_WIDTH - PAD - w - 14, PAD + 14, 4, 0, 2 * M_PI);
    cairo_fill(cr);
}

static void draw_middle(cairo_t *cr, const char *product, const char *brand)
{
    char by[OG_TEXT_MAX + 4];

    set_color(cr, COL_GREY);
    set_font(cr, FONT_SANS, false, false, 14);
    cairo_move_to(cr, PAD, 255);
    cairo_show_text(cr, "CERTIFICATE OF AUTHENTICITY");

    set_color(cr, COL_INK);
    set_font(cr, FONT_SERIF, true, false, 48);
    draw_text(cr, product, PAD, 325, CONTENT_W, false);

    /* "by " + brand, the brand cut to the byte budget first */
    memcpy(by, "by ", 3);
    og_clean_text(brand, OG_TEXT_MAX - 3, by + 3, sizeof by - 3);
    set_color(cr, COL_GREY);
    set_font(cr, FONT_SANS, false, false, 20);
    draw_text(cr, by, PAD, 372, CONTENT_W, false);
}

static void draw_bottom_row(cairo_t *cr, const char *hash)
{
    char h[OG_TEXT_MAX + 1];
    size_t n = 0, chars = 0;

    set_color(cr, COL_RULE);
    cairo_set_line_width(cr, 1);
    cairo_move_to(cr, PAD, OG_HEIGHT - PAD - 36.5);
    cairo_line_to(cr, OG_WIDTH - PAD, OG_HEIGHT - PAD - 36.5);
    cairo_stroke(cr);

    og_clean_text(hash, OG_TEXT_MAX - 4, h, sizeof h);
    if (h[0]) {
        /* the first OG_HASH_CHARS characters, then "..." */
        while (h[n] && chars <= OG_HASH_CHARS) {
            if (((unsigned char)h[n] & 0xc0) != 0x80)
                chars++;
            if (chars > OG_HASH_CHARS)
                break;
            n++;
        }
        memcpy(h + n, "...", 4);
    } else {
        memcpy(h, "SHA-256 VERIFIED", sizeof "SHA-256 VERIFIED");
    }
    set_color(cr, COL_GREY);
    set_font(cr, FONT_MONO, false, false, 14);
    draw_text(cr, h, PAD, OG_HEIGHT - PAD, CONTENT_W * 0.7, false);
    set_font(cr, FONT_SANS, false, false, 14);
    draw_text(cr, "genuproof.com", OG_WIDTH - PAD, OG_HEIGHT - PAD, CONTENT_W * 0.25, true);
}

struct png_src {
    const unsigned char *data; /* CAIRO_FORMAT_RGB24: one native-endian uint32 per pixel */
    int stride;
};

/* pngw row callback: the surface's row y as R, G, B bytes. */
static void png_row(void *arg, int y, unsigned char *row)
{
    const struct png_src *s = arg;
    const unsigned char *line = s->data + (size_t)y * (size_t)s->stride;

    for (int x = 0; x < OG_WIDTH; x++) {
        uint32_t px;
        memcpy(&px, line + 4 * (size_t)x, 4);
        row[3 * x] = (unsigned char)(px >> 16);
        row[3 * x + 1] = (unsigned char)(px >> 8);
        row[3 * x + 2] = (unsigned char)px;
    }
}

static const char *or_default(const char *s, const char *def)
{
    return s && *s ? s : def;
}

int og_render_png(const struct og_card *card, struct buf *out)
{
    struct og_card none = {0};
    struct png_src src;
    cairo_surface_t *surf;
    cairo_t *cr = NULL;
    int rc = ERR_INTERNAL;

    if (!card)
        card = &none;
    surf = cairo_image_surface_create(CAIRO_FORMAT_RGB24, OG_WIDTH, OG_HEIGHT);
    if (cairo_surface_status(surf) != CAIRO_STATUS_SUCCESS)
        goto out;
    cr = cairo_create(surf);
    if (cairo_status(cr) != CAIRO_STATUS_SUCCESS)
        goto out;

    set_color(cr, COL_BG);
    cairo_paint(cr);
    draw_top_row(cr, strcmp(or_default(card->status, "authentic"), "authentic") == 0);
    draw_middle(cr, or_default(card->product, "Product Verification"),
                or_default(card->brand, "GenuProof"));
    draw_bottom_row(cr, card->hash);
    if (cairo_status(cr) != CAIRO_STATUS_SUCCESS)
        goto out;
    cairo_surface_flush(surf);
    src.data = cairo_image_surface_get_data(surf);
    src.stride = cairo_image_surface_get_stride(surf);
    if (!src.data)
        goto out;
    /* zlib level 1: the card is mostly flat colour, and the default
     * level would cost several times the drawing on the event loop */
    rc = pngw_write(out, OG_WIDTH, OG_HEIGHT, PNGW_RGB8, 1, png_row, &src);
out:
    if (cr)
        cairo_destroy(cr);
    cairo_surface_destroy(surf);
    return rc;
}
