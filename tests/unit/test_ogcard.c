/*
 * test_ogcard.c - ogcard.c: the PNG header (1200 x 630), the pixels read
 * back with libpng (background colour, VERIFIED green vs UNVERIFIED red
 * in the status corner, text present in the middle), hostile texts
 * (huge, invalid UTF-8, control characters) and the output cap.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>

#include "core/ogcard.h"
#include "util/buf.h"
#include "util/err.h"

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Renders card, checks the PNG header and returns RGB pixels (caller frees). */
static unsigned char *render(const struct og_card *card, size_t *png_len)
{
    struct buf b = BUF_INIT(8 << 20);
    const unsigned char *d;
    png_image img;
    unsigned char *px;

    assert_int_equal(og_render_png(card, &b), 0);
    d = (const unsigned char *)b.data;
    assert_true(b.len > 33);
    assert_memory_equal(d, "\x89PNG\r\n\x1a\n", 8);
    assert_memory_equal(d + 12, "IHDR", 4);
    assert_int_equal(be32(d + 16), OG_WIDTH);
    assert_int_equal(be32(d + 20), OG_HEIGHT);
    assert_int_equal(be32(d + 16), 1200);
    assert_int_equal(be32(d + 20), 630);

    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    assert_true(png_image_begin_read_from_memory(&img, b.data, b.len));
    assert_int_equal(img.width, 1200);
    assert_int_equal(img.height, 630);
    img.format = PNG_FORMAT_RGB;
    px = malloc(PNG_IMAGE_SIZE(img));
    assert_non_null(px);
    assert_true(png_image_finish_read(&img, NULL, px, 0, NULL));
    png_image_free(&img);
    if (png_len)
        *png_len = b.len;
    buf_free(&b);
    return px;
}

static const unsigned char *pixel(const unsigned char *px, int x, int y)
{
    return px + ((size_t)y * OG_WIDTH + x) * 3;
}

static bool is_rgb(const unsigned char *p, unsigned rgb)
{
    return p[0] == ((rgb >> 16) & 0xff) && p[1] == ((rgb >> 8) & 0xff) && p[2] == (rgb & 0xff);
}

/* Pixels of exactly colour rgb inside the rectangle. */
static int count_rgb(const unsigned char *px, int x0, int y0, int x1, int y1, unsigned rgb)
{
    int n = 0;
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++)
            n += is_rgb(pixel(px, x, y), rgb);
    return n;
}

/* Pixels different from the background inside the rectangle. */
static int count_ink(const unsigned char *px, int x0, int y0, int x1, int y1)
{
    int n = 0;
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++)
            n += !is_rgb(pixel(px, x, y), 0xfaf8f4);
    return n;
}

static void test_authentic(void **state)
{
    struct og_card c = {.brand = "Luxe Watches",
                        .product = "Royal Oak Chronograph 42mm",
                        .status = "authentic",
                        .hash = "ec4c737a67181b2cb7056ea7fac0bdd162e21c0aec5f18acc27ad729d80408f0"};
    unsigned char *px = render(&c, NULL);
    (void)state;

    /* background in the corners and the padding */
    assert_true(is_rgb(pixel(px, 0, 0), 0xfaf8f4));
    assert_true(is_rgb(pixel(px, 1199, 629), 0xfaf8f4));
    assert_int_equal(count_ink(px, 0, 0, 1200, 40), 0);
    /* status corner (top right) has the green dot/label, no red */
    assert_true(count_rgb(px, 900, 50, 1150, 100, 0x0d503c) > 20);
    assert_int_equal(count_rgb(px, 900, 50, 1150, 100, 0x9b2c2c), 0);
    /* logo square top left is green too */
    assert_true(count_rgb(px, 55, 55, 95, 95, 0x0d503c) > 20);
    /* the product line is drawn in the middle */
    assert_true(count_ink(px, 60, 280, 1140, 340) > 1000);
    /* bottom row: hash on the left, domain on the right */
    assert_true(count_ink(px, 60, 550, 500, 575) > 100);
    assert_true(count_ink(px, 1000, 550, 1140, 575) > 50);
    free(px);
}

static void test_unverified_and_defaults(void **state)
{
    struct og_card c = {.status = "failed"};
    unsigned char *px = render(&c, NULL);
    (void)state;

    assert_true(count_rgb(px, 900, 50, 1150, 100, 0x9b2c2c) > 20);
    assert_int_equal(count_rgb(px, 900, 50, 1150, 100, 0x0d503c), 0);
    /* defaults still draw a product line and "SHA-256 VERIFIED" */
    assert_true(count_ink(px, 60, 280, 1140, 340) > 500);
    assert_true(count_ink(px, 60, 550, 500, 575) > 100);
    free(px);

    /* NULL card = all defaults: VERIFIED */
    px = render(NULL, NULL);
    assert_true(count_rgb(px, 900, 50, 1150, 100, 0x0d503c) > 20);
    free(px);

    /* VERIFIED is shorter than UNVERIFIED: the label starts further right */
    struct og_card u = {.status = "suspicious"};
    unsigned char *pu = render(&u, NULL);
    unsigned char *pv = render(NULL, NULL);
    int left_u = 1200, left_v = 1200;
    for (int x = 800; x < 1150; x++)
        for (int y = 55; y < 95; y++) {
            if (x < left_u && !is_rgb(pixel(pu, x, y), 0xfaf8f4))
                left_u = x;
            if (x < left_v && !is_rgb(pixel(pv, x, y), 0xfaf8f4))
                left_v = x;
        }
    assert_true(left_u < left_v);
    free(pu);
    free(pv);
}

static void test_hostile_text(void **state)
{
    size_t big = 100000;
    char *huge = malloc(big + 1);
    (void)state;

    memset(huge, 'W', big);
    huge[big] = '\0';
    struct og_card c = {.brand = huge, .product = huge, .status = huge, .hash = huge};
    unsigned char *px = render(&c, NULL);
    /* a long product is cut with an ellipsis, never drawn into the padding */
    assert_int_equal(count_ink(px, 1141, 280, 1200, 400), 0);
    assert_int_equal(count_ink(px, 0, 280, 59, 400), 0);
    free(px);

    /* invalid UTF-8, control characters, a truncated sequence */
    struct og_card bad = {.brand = "\xff\xfe\x01brand\x7f",
                          .product = "caf\xc3\xa9 \xe2\x82 \xed\xa0\x80 \xc0\xaf\n\t",
                          .hash = "\xf0\x9f\x98\x80\xf0\x9f"};
    px = render(&bad, NULL);
    assert_true(count_ink(px, 60, 280, 1140, 340) > 200);
    free(px);
    free(huge);
}

static void test_clean_text(void **state)
{
    char out[16];
    (void)state;

    assert_int_equal(og_clean_text("plain", 100, out, sizeof out), 5);
    assert_string_equal(out, "plain");
    /* invalid bytes and controls become '?', valid UTF-8 is kept */
    og_clean_text("a\xff"
                  "b\x01"
                  "c\xc3\xa9",
                  100, out, sizeof out);
    assert_string_equal(out, "a?b?c\xc3\xa9");
    /* overlong, surrogate, C1 control */
    og_clean_text("\xc0\xaf|\xed\xa0\x80|\xc2\x85", 100, out, sizeof out);
    assert_string_equal(out, "??|???|?");
    /* cut at a character boundary: "é" (2 bytes) does not fit in 1 */
    assert_int_equal(og_clean_text("x\xc3\xa9", 2, out, sizeof out), 1);
    assert_string_equal(out, "x");
    /* bounded by the destination too */
    assert_int_equal(og_clean_text("0123456789abcdefghij", 100, out, sizeof out), 15);
    assert_string_equal(out, "0123456789abcde");
    assert_int_equal(og_clean_text(NULL, 10, out, sizeof out), 0);
    assert_string_equal(out, "");
}

static void test_output_cap(void **state)
{
    struct buf b = BUF_INIT(1000);
    (void)state;

    assert_int_equal(buf_puts(&b, "keep"), 0);
    assert_int_equal(og_render_png(NULL, &b), ERR_TOOBIG);
    assert_int_equal(b.len, 4);
    assert_string_equal(buf_cstr(&b), "keep");
    buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_authentic),    cmocka_unit_test(test_unverified_and_defaults),
        cmocka_unit_test(test_hostile_text), cmocka_unit_test(test_clean_text),
        cmocka_unit_test(test_output_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
