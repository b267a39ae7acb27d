/*
 * test_tui_chrome.c - the frame around the views (tui/chrome.c): layout
 * at every size, the stream summary, durations, the status bar with
 * FROZEN +N, the tab bar and the too-small notice, read back as text.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "core/timeutil.h"
#include "tui/chrome.h"

static const char *ids[] = {"brand-a", "brand-b"};
static const int64_t NOW = 1764680000000;

static void test_layout_sizes(void **state)
{
    (void)state;
    struct layout l;
    chrome_layout(80, 24, false, &l);
    assert_false(l.too_small);
    assert_false(l.compact);
    assert_true(l.hints);
    assert_true(l.short_tabs);
    assert_int_equal(l.cy, 1);
    assert_int_equal(l.ch, 21); /* tab bar, hints and status take 3 rows */
    chrome_layout(120, 40, false, &l);
    assert_false(l.short_tabs);
    chrome_layout(120, 40, true, &l);
    assert_false(l.hints); /* never in kiosk */
    assert_true(l.big);
    assert_int_equal(l.ch, 38);
    chrome_layout(60, 16, false, &l);
    assert_true(l.compact);
    assert_false(l.hints);
    assert_int_equal(l.ch, 14);
    chrome_layout(40, 10, false, &l);
    assert_false(l.too_small);
    chrome_layout(39, 9, false, &l);
    assert_true(l.too_small);
    chrome_layout(1, 1, false, &l);
    assert_true(l.too_small);
    chrome_layout(0, 0, false, &l);
    assert_true(l.too_small);
}

static void test_streams_text(void **state)
{
    (void)state;
    struct canvas c;
    struct stream_info st[3];
    char out[64];
    canvas_init(&c, 10, 1, false);
    memset(st, 0, sizeof st);
    for (int i = 0; i < 3; i++)
        st[i].state = ST_LIVE;
    assert_int_equal(chrome_streams_text(&c, st, 3, NOW, out, sizeof out), THEME_STATUS_LIVE);
    assert_string_equal(out, "\xe2\x97\x8f LIVE 3/3");
    st[1].state = ST_RETRYING;
    st[1].next_retry_ms = NOW + 7500;
    assert_int_equal(chrome_streams_text(&c, st, 3, NOW, out, sizeof out), THEME_STATUS_RETRY);
    assert_string_equal(out, "\xe2\x97\x90 RETRY 1/3 8s");
    for (int i = 0; i < 3; i++)
        st[i].state = ST_ERROR;
    assert_int_equal(chrome_streams_text(&c, st, 3, NOW, out, sizeof out), THEME_STATUS_DOWN);
    assert_string_equal(out, "\xe2\x97\x8b DOWN");
    assert_int_equal(chrome_streams_text(&c, st, 0, NOW, out, sizeof out), THEME_STATUS_DOWN);
    canvas_free(&c);
    /* ASCII twins */
    canvas_init(&c, 10, 1, true);
    st[0].state = ST_LIVE;
    chrome_streams_text(&c, st, 1, NOW, out, sizeof out);
    assert_string_equal(out, "* LIVE 1/1");
    canvas_free(&c);
}

static void test_duration(void **state)
{
    (void)state;
    char out[16];
    chrome_duration(3400, out, sizeof out);
    assert_string_equal(out, "3s");
    chrome_duration(133000, out, sizeof out);
    assert_string_equal(out, "2m13s");
    chrome_duration(3900000, out, sizeof out);
    assert_string_equal(out, "1h05m");
    chrome_duration(-5, out, sizeof out);
    assert_string_equal(out, "0s");
}

static void push(struct model *m, const char *id)
{
    char buf[512], iso[ISO_LEN + 1];
    time_iso(NOW, iso);
    int n = snprintf(buf, sizeof buf,
                     "{\"alertId\":\"%s\",\"brandId\":\"brand-a\",\"type\":\"burst_scan\","
                     "\"severity\":\"critical\",\"productId\":\"p1\",\"details\":\"d\","
                     "\"timestamp\":\"%s\"}",
                     id, iso);
    assert_true(model_threat(m, 0, buf, (size_t)n, NOW) >= 0);
}

static void test_status_and_tabs(void **state)
{
    (void)state;
    struct model *m = model_new(ids, NULL, 2);
    struct ui_state s;
    struct canvas c;
    struct layout l;
    struct stream_info st[2];
    char row[512];
    memset(st, 0, sizeof st);
    st[0].state = st[1].state = ST_LIVE;
    st[0].last_byte_ms = NOW - 2000;
    struct chrome_info ci = {NOW, st, 2, -1, NULL, true};
    ui_state_init(&s, 2, true, false);
    canvas_init(&c, 80, 24, false);
    chrome_layout(80, 24, false, &l);
    push(m, "a1");
    model_set_frozen(m, true);
    push(m, "a2");
    push(m, "a3");
    chrome_status(&c, &l, &s, m, &ci);
    canvas_row_text(&c, 23, row, sizeof row);
    assert_non_null(strstr(row, "LIVE 2/2"));
    assert_non_null(strstr(row, "age 2s"));
    assert_non_null(strstr(row, "FROZEN +2"));
    assert_non_null(strstr(row, "CRIT 3"));
    assert_non_null(strstr(row, "RO"));
    assert_non_null(strstr(row, "Z")); /* UTC clock at the right */
    chrome_tabbar(&c, &l, &s, m, &ci);
    canvas_row_text(&c, 0, row, sizeof row);
    assert_non_null(strstr(row, "1Ovw"));
    assert_non_null(strstr(row, "7Hlth"));
    assert_non_null(strstr(row, "brand-a 1/2"));
    chrome_hints(&c, &l, &s);
    canvas_row_text(&c, 22, row, sizeof row);
    assert_non_null(strstr(row, "? help"));
    /* a prompt replaces the hints */
    s.mode = UI_QUIT;
    chrome_hints(&c, &l, &s);
    canvas_row_text(&c, 22, row, sizeof row);
    assert_non_null(strstr(row, "Quit? (y/N)"));
    /* long names at 120 columns */
    canvas_resize(&c, 120, 30);
    chrome_layout(120, 30, false, &l);
    chrome_tabbar(&c, &l, &s, m, &ci);
    canvas_row_text(&c, 0, row, sizeof row);
    assert_non_null(strstr(row, "1 Overview"));
    assert_non_null(strstr(row, "7 Health"));
    /* compact: digit tabs */
    canvas_resize(&c, 60, 16);
    chrome_layout(60, 16, false, &l);
    s.view = VIEW_FEED;
    chrome_tabbar(&c, &l, &s, m, &ci);
    canvas_row_text(&c, 0, row, sizeof row);
    assert_non_null(strstr(row, "1 2 Feed 3"));
    canvas_free(&c);
    model_free(m);
}

static void test_too_small(void **state)
{
    (void)state;
    struct canvas c;
    char row[256];
    canvas_init(&c, 39, 9, false);
    chrome_too_small(&c);
    canvas_row_text(&c, 4, row, sizeof row);
    assert_non_null(strstr(row, "Terminal too small: 39x9"));
    canvas_resize(&c, 1, 1);
    chrome_too_small(&c); /* clipped, never a crash */
    canvas_row_text(&c, 0, row, sizeof row);
    assert_int_equal(canvas_text_width(&c, row), 1);
    canvas_free(&c);
}

/* Kiosk large clock: 3x5 block digits, right-aligned, ASCII '#'. */
static void test_bigclock(void **state)
{
    (void)state;
    struct canvas c;
    char row[512];
    canvas_init(&c, 100, 30, true);
    canvas_clear(&c, THEME_BASE);
    /* 2025-12-02T14:03:27Z */
    assert_int_equal(chrome_bigclock(&c, 2, 1764684207000LL, false), 6);
    /* "14:03:27Z": 9 glyphs of 4 columns, ending one column before the edge */
    canvas_row_text(&c, 2, row, sizeof row);
    assert_string_equal(row + 100 - 37, " #  # #     ### ###     ### ### ###  ");
    canvas_row_text(&c, 3, row, sizeof row);
    assert_true(strchr(row, '#') - row == 100 - 37 + 0);
    for (int y = 2; y < 7; y++) {
        canvas_row_text(&c, y, row, sizeof row);
        for (int x = 0; x < 100 - 37; x++)
            assert_int_equal(row[x], ' ');
    }
    canvas_row_text(&c, 7, row, sizeof row);
    assert_null(strchr(row, '#')); /* the separator row stays blank */
    /* does not fit: nothing drawn */
    assert_int_equal(chrome_bigclock(&c, 26, 1764684207000LL, false), 0);
    canvas_resize(&c, 30, 30);
    assert_int_equal(chrome_bigclock(&c, 0, 1764684207000LL, false), 0);
    canvas_free(&c);
}

static void test_help_overlay(void **state)
{
    (void)state;
    struct model *m = model_new(ids, NULL, 2);
    struct ui_state s;
    struct canvas c;
    struct layout l;
    char row[512];
    bool found = false, other = false;
    ui_state_init(&s, 2, false, false);
    canvas_init(&c, 80, 24, false);
    chrome_layout(80, 24, false, &l);
    s.mode = UI_HELP;
    strcpy(s.help_filter, "recall");
    chrome_overlay(&c, &l, &s, m);
    for (int y = 0; y < 24; y++) {
        canvas_row_text(&c, y, row, sizeof row);
        if (strstr(row, "recall the product"))
            found = true;
        if (strstr(row, "severity floor"))
            other = true;
    }
    assert_true(found);
    assert_false(other);
    canvas_free(&c);
    model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout_sizes), cmocka_unit_test(test_streams_text),
        cmocka_unit_test(test_duration),     cmocka_unit_test(test_status_and_tabs),
        cmocka_unit_test(test_too_small),    cmocka_unit_test(test_help_overlay),
        cmocka_unit_test(test_bigclock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
