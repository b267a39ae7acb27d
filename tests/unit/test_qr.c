/*
 * test_qr.c - qr.c (and core/pngw.c under it): the matrix, the PNG (read back with libpng and
 * compared module by module) and the SVG (its path parsed back into a
 * matrix), plus the error paths.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>

#include "core/pngw.h"
#include "core/qr.h"
#include "util/buf.h"
#include "util/err.h"

#define URL "https://genuproof.com/verify/wfPHybaFV3_a"

static bool dark(const struct qr_matrix *m, int x, int y)
{
    return m->dark[(size_t)y * m->size + x] != 0;
}

/* A finder pattern has a dark 7x7 ring, a light ring and a dark 3x3 core. */
static void assert_finder(const struct qr_matrix *m, int x0, int y0)
{
    for (int y = 0; y < 7; y++)
        for (int x = 0; x < 7; x++) {
            bool ring = x == 0 || y == 0 || x == 6 || y == 6;
            bool core = x >= 2 && x <= 4 && y >= 2 && y <= 4;
            assert_int_equal(dark(m, x0 + x, y0 + y), ring || core);
        }
}

static void test_matrix(void **state)
{
    struct qr_matrix m;
    (void)state;

    assert_int_equal(qr_matrix_new(URL, strlen(URL), &m), 0);
    /* 41 bytes in byte mode at level M need version 3 (29 modules) */
    assert_int_equal(m.size, 29);
    assert_int_equal((m.size - 17) % 4, 0);
    assert_finder(&m, 0, 0);
    assert_finder(&m, m.size - 7, 0);
    assert_finder(&m, 0, m.size - 7);
    /* the dark module next to the bottom-left finder (ISO 18004) */
    assert_true(dark(&m, 8, m.size - 8));
    for (int i = 0; i < m.size * m.size; i++)
        assert_true(m.dark[i] == 0 || m.dark[i] == 1);
    qr_matrix_free(&m);
    assert_null(m.dark);
    qr_matrix_free(&m); /* twice is fine */

    /* a longer text needs a larger version; the same text the same symbol */
    struct qr_matrix a, b;
    char big[600];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_int_equal(qr_matrix_new(big, strlen(big), &a), 0);
    assert_true(a.size > 29);
    assert_int_equal(qr_matrix_new(big, strlen(big), &b), 0);
    assert_int_equal(a.size, b.size);
    assert_memory_equal(a.dark, b.dark, (size_t)a.size * a.size);
    qr_matrix_free(&a);
    qr_matrix_free(&b);
}

static void test_matrix_errors(void **state)
{
    struct qr_matrix m;
    char *huge = malloc(QR_TEXT_MAX + 2);
    (void)state;

    assert_int_equal(qr_matrix_new("", 0, &m), ERR_INVALID);
    assert_null(m.dark);
    assert_int_equal(qr_matrix_new(NULL, 3, &m), ERR_INVALID);
    memset(huge, 'a', QR_TEXT_MAX + 1);
    huge[QR_TEXT_MAX + 1] = '\0';
    assert_int_equal(qr_matrix_new(huge, QR_TEXT_MAX + 1, &m), ERR_TOOBIG);
    assert_null(m.dark);
    /* QR_TEXT_MAX bytes fit: version 38-M holds 2071 bytes (169 modules) */
    assert_int_equal(qr_matrix_new(huge, QR_TEXT_MAX, &m), 0);
    assert_int_equal(m.size, 169);
    qr_matrix_free(&m);
    free(huge);
}

/* Decodes a PNG in memory into 8-bit grey pixels (caller frees). */
static unsigned char *decode_png(const struct buf *b, int *w, int *h)
{
    png_image img;
    unsigned char *px;

    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    assert_true(png_image_begin_read_from_memory(&img, b->data, b->len));
    img.format = PNG_FORMAT_GRAY;
    px = malloc(PNG_IMAGE_SIZE(img));
    assert_non_null(px);
    assert_true(png_image_finish_read(&img, NULL, px, 0, NULL));
    *w = (int)img.width;
    *h = (int)img.height;
    png_image_free(&img);
    return px;
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void test_png(void **state)
{
    struct qr_matrix m;
    struct buf b = BUF_INIT(1 << 20);
    const unsigned char *d;
    int w, h, total;
    (void)state;

    assert_int_equal(qr_matrix_new(URL, strlen(URL), &m), 0);
    assert_int_equal(qr_write_png(&m, QR_PNG_PX, &b), 0);
    d = (const unsigned char *)b.data;
    /* signature and IHDR: 400 x 400, 1-bit greyscale */
    assert_true(b.len > 33);
    assert_memory_equal(d, "\x89PNG\r\n\x1a\n", 8);
    assert_memory_equal(d + 12, "IHDR", 4);
    assert_int_equal(be32(d + 16), 400);
    assert_int_equal(be32(d + 20), 400);
    assert_int_equal(d[24], 1);
    assert_int_equal(d[25], 0);

    unsigned char *px = decode_png(&b, &w, &h);
    assert_int_equal(w, 400);
    assert_int_equal(h, 400);
    total = m.size + 2 * QR_MARGIN;
    /* the centre pixel of every module (quiet zone included) */
    for (int my = 0; my < total; my++)
        for (int mx = 0; mx < total; mx++) {
            int cx = (int)((mx + 0.5) * 400 / total), cy = (int)((my + 0.5) * 400 / total);
            bool want = mx >= QR_MARGIN && my >= QR_MARGIN && mx < QR_MARGIN + m.size &&
                        my < QR_MARGIN + m.size && dark(&m, mx - QR_MARGIN, my - QR_MARGIN);
            assert_int_equal(px[cy * w + cx], want ? 0 : 255);
        }
    /* only black and white */
    for (int i = 0; i < w * h; i++)
        assert_true(px[i] == 0 || px[i] == 255);
    free(px);

    /* qr_png() of the text gives the same bytes */
    struct buf b2 = BUF_INIT(1 << 20);
    assert_int_equal(qr_png(URL, QR_PNG_PX, &b2), 0);
    assert_int_equal(b2.len, b.len);
    assert_memory_equal(b2.data, b.data, b.len);
    buf_free(&b2);
    buf_free(&b);
    qr_matrix_free(&m);
}

static void white_row(void *arg, int y, unsigned char *row)
{
    (void)arg;
    (void)y;
    memset(row, 0xff, 2);
}

static void test_png_errors(void **state)
{
    struct qr_matrix m;
    struct buf b = BUF_INIT(1 << 20), small = BUF_INIT(100);
    (void)state;

    assert_int_equal(qr_matrix_new(URL, strlen(URL), &m), 0);
    assert_int_equal(qr_write_png(&m, 0, &b), ERR_INVALID);
    assert_int_equal(qr_write_png(&m, QR_PNG_MAX_PX + 1, &b), ERR_INVALID);
    assert_int_equal(qr_write_png(&m, m.size, &b), ERR_INVALID); /* no room for the margin */
    assert_int_equal(b.len, 0);
    /* the output cap: an error and the buffer keeps its content */
    assert_int_equal(buf_puts(&small, "keep"), 0);
    assert_int_equal(qr_write_png(&m, QR_PNG_PX, &small), ERR_TOOBIG);
    assert_int_equal(small.len, 4);
    assert_string_equal(buf_cstr(&small), "keep");
    assert_int_equal(qr_png("", QR_PNG_PX, &b), ERR_INVALID);
    /* the shared writer (core/pngw.c) refuses bad sizes and levels */
    assert_int_equal(pngw_write(&b, 0, 10, PNGW_GRAY1, 9, white_row, NULL), ERR_INVALID);
    assert_int_equal(pngw_write(&b, 10, PNGW_MAX_EDGE + 1, PNGW_GRAY1, 9, white_row, NULL),
                     ERR_INVALID);
    assert_int_equal(pngw_write(&b, 10, 10, PNGW_GRAY1, 10, white_row, NULL), ERR_INVALID);
    assert_int_equal(pngw_write(&b, 10, 10, PNGW_GRAY1, 9, NULL, NULL), ERR_INVALID);
    assert_int_equal(b.len, 0);
    assert_int_equal(pngw_write(&b, 10, 10, PNGW_GRAY1, 9, white_row, NULL), 0);
    assert_memory_equal(b.data, "\x89PNG", 4);
    buf_free(&small);
    buf_free(&b);
    qr_matrix_free(&m);
}

/* Parses the dark path of the SVG back into a total x total matrix. */
static void svg_to_matrix(const char *svg, int total, unsigned char *out)
{
    const char *p = strstr(svg, "<path fill=\"#000000\" d=\"");
    int x, y, n, n2, used;

    assert_non_null(p);
    p += strlen("<path fill=\"#000000\" d=\"");
    memset(out, 0, (size_t)total * total);
    while (*p == 'M') {
        assert_int_equal(sscanf(p, "M%d %dh%dv1h-%dz%n", &x, &y, &n, &n2, &used), 4);
        assert_int_equal(n, n2);
        assert_true(x >= 0 && y >= 0 && n > 0 && x + n <= total && y < total);
        for (int i = 0; i < n; i++)
            out[y * total + x + i] = 1;
        p += used;
    }
    assert_true(strncmp(p, "\"/></svg>", 9) == 0);
}

static void test_svg(void **state)
{
    struct qr_matrix m;
    struct buf b = BUF_INIT(1 << 20);
    char want[128];
    int total;
    (void)state;

    assert_int_equal(qr_matrix_new(URL, strlen(URL), &m), 0);
    assert_int_equal(qr_write_svg(&m, &b), 0);
    total = m.size + 2 * QR_MARGIN;
    snprintf(want, sizeof want, "viewBox=\"0 0 %d %d\"", total, total);
    assert_non_null(strstr(b.data, want));
    assert_true(strncmp(b.data, "<svg xmlns=\"http://www.w3.org/2000/svg\"", 39) == 0);
    snprintf(want, sizeof want, "<path fill=\"#ffffff\" d=\"M0 0h%dv%dH0z\"/>", total, total);
    assert_non_null(strstr(b.data, want));

    unsigned char *mat = malloc((size_t)total * total);
    svg_to_matrix(b.data, total, mat);
    for (int y = 0; y < total; y++)
        for (int x = 0; x < total; x++) {
            bool in = x >= QR_MARGIN && y >= QR_MARGIN && x < QR_MARGIN + m.size &&
                      y < QR_MARGIN + m.size;
            bool want_dark = in && dark(&m, x - QR_MARGIN, y - QR_MARGIN);
            assert_int_equal(mat[y * total + x], want_dark);
        }
    free(mat);

    /* output cap */
    struct buf small = BUF_INIT(200);
    assert_int_equal(qr_svg(URL, &small), ERR_TOOBIG);
    assert_int_equal(small.len, 0);
    buf_free(&small);
    buf_free(&b);
    qr_matrix_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matrix), cmocka_unit_test(test_matrix_errors),
        cmocka_unit_test(test_png),    cmocka_unit_test(test_png_errors),
        cmocka_unit_test(test_svg),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
