/*
 * qr.c - QR code matrix (libqrencode) and its PNG and SVG renderings
 * (qr.h).
 *
 * libqrencode hands back one byte per module whose low bit says "dark";
 * it is copied into a plain 0/1 matrix so that the renderers and the
 * tests never depend on the library's other flag bits.  The PNG is 1-bit
 * greyscale (the smallest faithful encoding of a black and white image)
 * streamed by libpng into the caller's capped buffer; libpng reports
 * errors by longjmp, so the libpng calls live in one small function whose
 * locals are not modified after setjmp().
 */
#include "core/qr.h"

#include <errno.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>
#include <qrencode.h>

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

struct png_job {
    struct buf *out;
    int err;                    /* first sink error */
    const struct qr_matrix *m;
    int px;
    unsigned char *row;         /* (px + 7) / 8 bytes */
};

static void png_sink_write(png_structp png, png_bytep data, size_t n)
{
    struct png_job *j = png_get_io_ptr(png);
    int rc = buf_append(j->out, data, n);
    if (rc) {
        j->err = rc;
        png_error(png, "output buffer full");
    }
}

static void png_sink_flush(png_structp png)
{
    (void)png;
}

/* libpng would print to stderr by default: stay silent, just unwind. */
static void png_on_error(png_structp png, png_const_charp msg)
{
    (void)msg;
    png_longjmp(png, 1);
}

static void png_on_warning(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

/* Fills j->row with pixel row y (bit 1 = white, MSB first). */
static void png_fill_row(const struct png_job *j, int y)
{
    int total = j->m->size + 2 * QR_MARGIN;
    int my = (int)((int64_t)y * total / j->px) - QR_MARGIN;

    memset(j->row, 0xff, ((size_t)j->px + 7) / 8);
    if (my < 0 || my >= j->m->size)
        return;
    for (int x = 0; x < j->px; x++) {
        int mx = (int)((int64_t)x * total / j->px) - QR_MARGIN;
        if (mx >= 0 && mx < j->m->size && j->m->dark[(size_t)my * j->m->size + mx])
            j->row[x / 8] &= (unsigned char)~(0x80u >> (x % 8));
    }
}

/* The libpng part.  Nothing declared here changes after setjmp(). */
static int png_run(struct png_job *j, png_structp png, png_infop info)
{
    if (setjmp(png_jmpbuf(png)))
        return j->err ? j->err : ERR_INTERNAL;
    png_set_write_fn(png, j, png_sink_write, png_sink_flush);
    png_set_IHDR(png, info, (png_uint_32)j->px, (png_uint_32)j->px, 1, PNG_COLOR_TYPE_GRAY,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (int y = 0; y < j->px; y++) {
        png_fill_row(j, y);
        png_write_row(png, j->row);
    }
    png_write_end(png, NULL);
    return 0;
}

int qr_write_png(const struct qr_matrix *m, int px, struct buf *out)
{
    struct png_job j = {.out = out, .m = m, .px = px};
    size_t start = out->len;
    png_structp png = NULL;
    png_infop info = NULL;
    int rc;

    if (!m || !m->dark || m->size <= 0 || px < QR_PNG_MIN_PX || px > QR_PNG_MAX_PX ||
        px < m->size + 2 * QR_MARGIN)
        return ERR_INVALID;
    j.row = xmalloc(((size_t)px + 7) / 8);
    png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, png_on_error, png_on_warning);
    if (png)
        info = png_create_info_struct(png);
    if (!png || !info) {
        rc = ERR_INTERNAL;
        goto out;
    }
    rc = png_run(&j, png, info);
out:
    png_destroy_write_struct(&png, &info);
    free(j.row);
    if (rc)
        buf_cut(out, start);
    return rc;
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
