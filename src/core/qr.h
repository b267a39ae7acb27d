/*
 * qr.h - QR code images of a text (API.md §9.21): the module matrix from
 * libqrencode, drawn as a PNG (libpng, written into memory) or as SVG
 * text.
 *
 * The symbol is always byte mode with error correction level M, the
 * smallest version that holds the text, dark modules #000000 on a light
 * #ffffff background and a quiet zone of QR_MARGIN modules on each side.
 */
#ifndef GP_CORE_QR_H
#define GP_CORE_QR_H

#include <stddef.h>

#include "util/buf.h"

/* Quiet zone, in modules, on each side of the symbol. */
#define QR_MARGIN 2
/* Edge of the PNG the API serves, in pixels. */
#define QR_PNG_PX 400
/* Longest text accepted (bytes); version 40-M holds 2331 bytes. */
#define QR_TEXT_MAX 2048
/* Edge limits of a PNG (pixels). */
#define QR_PNG_MIN_PX 21
#define QR_PNG_MAX_PX 4096

/* A symbol: size x size modules (without the quiet zone), row-major,
 * dark[y * size + x] is 1 for a dark module and 0 for a light one. */
struct qr_matrix {
    int size;
    unsigned char *dark;
};

/*
 * Encodes text[0..len) (byte mode, level M).  On success returns 0 and
 * fills *out, which the caller releases with qr_matrix_free().  On error
 * returns ERR_INVALID (empty text), ERR_TOOBIG (longer than QR_TEXT_MAX
 * or more than a version-40 symbol holds) or ERR_NOMEM; *out is then
 * empty.
 */
int qr_matrix_new(const char *text, size_t len, struct qr_matrix *out);
/* Releases a matrix (safe on an empty or already released one). */
void qr_matrix_free(struct qr_matrix *m);

/*
 * Appends a px x px 1-bit greyscale PNG of the symbol with its quiet zone
 * to out (each module covers floor/ceil(px / (size + 2 * QR_MARGIN))
 * pixels).  On success returns 0.  On error returns ERR_INVALID (px out
 * of [QR_PNG_MIN_PX, QR_PNG_MAX_PX] or smaller than the symbol),
 * ERR_TOOBIG (out's cap) or ERR_INTERNAL (libpng); out keeps its previous
 * content.
 */
int qr_write_png(const struct qr_matrix *m, int px, struct buf *out);

/*
 * Appends an SVG document of the symbol to out: viewBox "0 0 N N" with
 * N = size + 2 * QR_MARGIN (one user unit per module), a white
 * background path and one black path made of one "M<x> <y>h<n>v1h-<n>z"
 * rectangle per horizontal run of dark modules (x, y include the quiet
 * zone).  On success returns 0; on error ERR_TOOBIG (out's cap) and out
 * keeps its previous content.
 */
int qr_write_svg(const struct qr_matrix *m, struct buf *out);

/* qr_matrix_new() + qr_write_png() / qr_write_svg() of a C string. */
int qr_png(const char *text, int px, struct buf *out);
int qr_svg(const char *text, struct buf *out);

#endif
