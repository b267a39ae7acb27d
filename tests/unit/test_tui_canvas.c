/*
 * test_tui_canvas.c - tui/canvas.c: UTF-8 text with clipping and the
 * ellipsis, wide characters, sanitising of controls and broken UTF-8,
 * ASCII twins, boxes, bars, the 3x5 font, and that no write escapes the
 * grid (1x1 and 0x0 canvases included).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "tui/canvas.h"

static char *row(const struct canvas *c, int y)
{
    static char buf[4096];
    canvas_row_text(c, y, buf, sizeof buf);
    return buf;
}

static void test_text_and_clip(void **state)
{
    (void)state;
    struct canvas c;
    canvas_init(&c, 10, 2, false);
    assert_int_equal(canvas_text(&c, 0, 0, -1, "hello", THEME_BASE), 5);
    assert_string_equal(row(&c, 0), "hello     ");
    /* Longer than the room: cut, last column is the ellipsis. */
    assert_int_equal(canvas_text(&c, 2, 1, 5, "abcdefgh", THEME_BASE), 5);
    assert_string_equal(row(&c, 1), "  abcd\xe2\x80\xa6   ");
    /* Right edge clips too. */
    canvas_clear(&c, THEME_BASE);
    canvas_text(&c, 7, 0, -1, "xyzw", THEME_BASE);
    assert_string_equal(row(&c, 0), "       xy\xe2\x80\xa6");
    /* Outside: nothing, no crash. */
    assert_int_equal(canvas_text(&c, 0, 5, -1, "zz", THEME_BASE), 0);
    assert_int_equal(canvas_text(&c, 20, 0, -1, "zz", THEME_BASE), 0);
    assert_null(canvas_at(&c, 10, 0));
    assert_null(canvas_at(&c, -1, 0));
    canvas_free(&c);
}

static void test_wide_and_sanitise(void **state)
{
    (void)state;
    struct canvas c;
    canvas_init(&c, 8, 1, false);
    /* U+6771 U+4EAC: two columns each. */
    assert_int_equal(canvas_text_width(&c, "\xe6\x9d\xb1\xe4\xba\xac"), 4);
    canvas_text(&c, 0, 0, -1, "\xe6\x9d\xb1\xe4\xba\xac!", THEME_BASE);
    assert_int_equal(canvas_at(&c, 1, 0)->ch, CANVAS_CONT);
    assert_string_equal(row(&c, 0), "\xe6\x9d\xb1\xe4\xba\xac!   ");
    /* A wide char that does not fit in the last column is not split. */
    canvas_clear(&c, THEME_BASE);
    canvas_text(&c, 0, 0, 3, "a\xe6\x9d\xb1\xe4\xba\xac", THEME_BASE);
    assert_int_equal(canvas_at(&c, 2, 0)->ch, 0x2026);
    assert_int_not_equal(canvas_at(&c, 1, 0)->ch, 0x6771);
    /* Control characters become '?', broken UTF-8 U+FFFD, combining marks vanish. */
    canvas_clear(&c, THEME_BASE);
    canvas_text(&c, 0, 0, -1,
                "a\tb\x1b"
                "c\xff"
                "e\xcc\x81",
                THEME_BASE);
    assert_string_equal(row(&c, 0), "a?b?c\xef\xbf\xbd"
                                    "e ");
    canvas_free(&c);
}

static void test_ascii_mode(void **state)
{
    (void)state;
    struct canvas c;
    canvas_init(&c, 20, 6, true);
    canvas_text(&c, 0, 0, -1, "caf\xc3\xa9 \xe6\x9d\xb1 \xe2\x97\x8f", THEME_BASE);
    assert_string_equal(row(&c, 0), "caf? ? ?            ");
    canvas_box(&c, 0, 1, 4, 3, THEME_BORDER);
    assert_string_equal(row(&c, 1), "+--+                ");
    assert_string_equal(row(&c, 2), "|  |                ");
    canvas_putc(&c, 5, 2, 0x2588, THEME_BASE); /* raw non-ASCII also becomes '?' */
    canvas_text(&c, 0, 4, 4, "abcdefg", THEME_BASE);
    for (int g = 0; g < G_COUNT; g++)
        assert_true(canvas_glyph(&c, (enum glyph)g) < 0x80);
    assert_int_equal(canvas_glyph(&c, G_CHAIN_BROKEN), 'X');
    assert_int_equal(canvas_glyph(&c, G_CHAIN_OK), '|');
    assert_int_equal(canvas_glyph(&c, G_SHADE4), '#');
    assert_int_equal(canvas_glyph(&c, G_SHADE1), '.');
    for (int y = 0; y < c.h; y++)
        for (const unsigned char *p = (const unsigned char *)row(&c, y); *p; p++)
            assert_true(*p < 0x80);
    canvas_free(&c);
}

static void test_bar_bigtext_style(void **state)
{
    (void)state;
    struct canvas c;
    canvas_init(&c, 12, 6, true);
    canvas_bar(&c, 0, 0, 10, 5, 10, THEME_CHART_BAR);
    assert_string_equal(row(&c, 0), "#####       ");
    canvas_bar(&c, 0, 1, 10, 0.01, 10, THEME_CHART_BAR); /* tiny but non-zero: one cell */
    assert_string_equal(row(&c, 1), "#           ");
    canvas_bar(&c, 0, 2, 10, 50, 10, THEME_CHART_BAR); /* clamped to the width */
    assert_string_equal(row(&c, 2), "##########  ");
    canvas_clear(&c, THEME_BASE);
    assert_int_equal(canvas_bigtext(&c, 0, 0, "1:", THEME_BASE), 8);
    assert_string_equal(row(&c, 0), " #          ");
    assert_string_equal(row(&c, 1), "##   #      ");
    assert_string_equal(row(&c, 4), "###         ");
    canvas_style(&c, 0, 0, 2, 1, THEME_BAD);
    assert_int_equal(canvas_at(&c, 1, 0)->elem, THEME_BAD);
    assert_int_equal(canvas_at(&c, 1, 0)->ch, '#');
    canvas_attr(&c, 0, 0, 1, 1, CANVAS_A_REVERSE);
    assert_int_equal(canvas_at(&c, 0, 0)->attr, CANVAS_A_REVERSE);
    assert_int_equal(canvas_at(&c, 1, 0)->attr, 0);
    canvas_free(&c);
}

static void test_tiny_canvases(void **state)
{
    (void)state;
    struct canvas c;
    canvas_init(&c, 1, 1, false);
    canvas_box(&c, 0, 0, 5, 5, THEME_BORDER);
    canvas_text(&c, 0, 0, -1, "\xe6\x9d\xb1", THEME_BASE); /* wide in one column */
    assert_int_not_equal(canvas_at(&c, 0, 0)->ch, 0x6771);
    canvas_bigtext(&c, -2, -2, "88", THEME_BASE);
    canvas_fill(&c, -5, -5, 20, 20, '.', THEME_BASE);
    assert_string_equal(row(&c, 0), ".");
    canvas_resize(&c, 0, 0);
    canvas_text(&c, 0, 0, -1, "x", THEME_BASE);
    canvas_box(&c, 0, 0, 2, 2, THEME_BASE);
    char out[4] = "zz";
    canvas_row_text(&c, 0, out, sizeof out);
    assert_string_equal(out, "");
    canvas_free(&c);
}

static void test_printf_and_spark(void **state)
{
    (void)state;
    struct canvas c;
    canvas_init(&c, 10, 1, false);
    canvas_printf(&c, 0, 0, -1, THEME_BASE, "%d/%s", 42, "ok");
    assert_string_equal(row(&c, 0), "42/ok     ");
    assert_int_equal(canvas_spark(&c, 0), 0x2581);
    assert_int_equal(canvas_spark(&c, 99), 0x2588);
    c.ascii = true;
    assert_int_equal(canvas_spark(&c, 7), '#');
    canvas_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_and_clip), cmocka_unit_test(test_wide_and_sanitise),
        cmocka_unit_test(test_ascii_mode),    cmocka_unit_test(test_bar_bigtext_style),
        cmocka_unit_test(test_tiny_canvases), cmocka_unit_test(test_printf_and_spark),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
