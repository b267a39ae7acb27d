/*
 * qr.c - QR code matrix (libqrencode) and its PNG and SVG renderings
 * (qr.h).
 *
 * libqrencode hands back one byte per module whose low bit says "dark";
 * it is copied into a plain 0/1 matrix so that the renderers and the
 * tests never depend on the library's other flag bits.  The PNG is 1-bit
 * greyscale (the smallest faithful encoding of a black and white image)
 * streamed by core/pngw.c into the caller's capped buffer.
 */
#include "core/qr.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <qrencode.h>

#include "core/pngw.h"
#include "util/err.h"
#include "util/xalloc.h"

int qr_matrix_new(const char *text, size_t len, struct qr_matrix *out)
{
    QRcode *q;
    size_t n;

    out->size = 0;
    out->dark = NULL;
    if (!text || len == 0)
        return ERR_INVALID;
    if (len > QR_TEXT_MAX)
        return ERR_TOOBIG;
    errno = 0;
    /* version 0 = the smallest that fits; QRcode_encodeData is byte mode */
    q = QRcode_encodeData((int)len, (const unsigned char *)text, 0, QR_ECLEVEL_M);
    if (!q)
        return errno == ENOMEM ? ERR_NOMEM : ERR_TOOBIG;
    n = (size_t)q->width * (size_t)q->width;
    out->dark = xmalloc(n);
    for (size_t i = 0; i < n; i++)
        out->dark[i] = q->data[i] & 1;
    out->size = q->width;
    QRcode_free(q);
    return 0;
}

void qr_matrix_free(struct qr_matrix *m)
{
    if (!m)
        return;
    free(m->dark);
    m->dark = NULL;
    m->size = 0;
}

/* Drops whatever was appended to b after its first `len` bytes. */
static void buf_cut(struct buf *b, size_t len)
{
    b->len = len;
    if (b->data)
        b->data[len] = '\0';
}

/* ---- PNG ---- */

struct png_src {
    const struct qr_matrix *m;
    int px;
};

/* pngw row callback: pixel row y (bit 1 = white, MSB first); pixel x
 * shows module floor(x * total / px) of the symbol with its margin. */
static void png_row(void *arg, int y, unsigned char *row)
{
    const struct png_src *s = arg;
    int total = s->m->size + 2 * QR_MARGIN;
    int my = (int)((int64_t)y * total / s->px) - QR_MARGIN;

    memset(row, 0xff, ((size_t)s->px + 7) / 8);
    if (my < 0 || my >= s->m->size)
        return;
    for (int x = 0; x < s->px; x++) {
        int mx = (int)((int64_t)x * total / s->px) - QR_MARGIN;
        if (mx >= 0 && mx < s->m->size && s->m->dark[(size_t)my * s->m->size + mx])
            row[x / 8] &= (unsigned char)~(0x80u >> (x % 8));
    }
}

int qr_write_png(const struct qr_matrix *m, int px, struct buf *out)
{
    struct png_src src = {.m = m, .px = px};

    if (!m || !m->dark || m->size <= 0 || px < QR_PNG_MIN_PX || px > QR_PNG_MAX_PX ||
        px < m->size + 2 * QR_MARGIN)
        return ERR_INVALID;
    return pngw_write(out, px, px, PNGW_GRAY1, 9, png_row, &src);
}

/* ---- SVG ---- */

int qr_write_svg(const struct qr_matrix *m, struct buf *out)
{
    size_t start = out->len;
    int n, rc;

    if (!m || !m->dark || m->size <= 0)
        return ERR_INVALID;
    n = m->size + 2 * QR_MARGIN;
    rc = buf_printf(out,
                    "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\" "
                    "shape-rendering=\"crispEdges\">"
                    "<path fill=\"#ffffff\" d=\"M0 0h%dv%dH0z\"/><path fill=\"#000000\" d=\"",
                    n, n, n, n);
    for (int y = 0; y < m->size && !rc; y++) {
        const unsigned char *row = m->dark + (size_t)y * m->size;
        int x = 0;
        while (x < m->size && !rc) {
            if (!row[x]) {
                x++;
                continue;
            }
            int run = 1;
            while (x + run < m->size && row[x + run])
                run++;
            rc = buf_printf(out, "M%d %dh%dv1h-%dz", x + QR_MARGIN, y + QR_MARGIN, run, run);
            x += run;
        }
    }
    if (!rc)
        rc = buf_puts(out, "\"/></svg>\n");
    if (rc)
        buf_cut(out, start);
    return rc;
}

int qr_png(const char *text, int px, struct buf *out)
{
    struct qr_matrix m;
    int rc = qr_matrix_new(text, text ? strlen(text) : 0, &m);
    if (!rc)
        rc = qr_write_png(&m, px, out);
    qr_matrix_free(&m);
    return rc;
}

int qr_svg(const char *text, struct buf *out)
{
    struct qr_matrix m;
    int rc = qr_matrix_new(text, text ? strlen(text) : 0, &m);
    if (!rc)
        rc = qr_write_svg(&m, out);
    qr_matrix_free(&m);
    return rc;
}
