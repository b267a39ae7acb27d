/*
 * test_tui_screen.c - colour depth selection of the screen layer
 * (TERM, colour count, NO_COLOR, --color).  The curses part itself is
 * covered by the tmux tests (tests/e2e/tui_*.sh).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "tui/screen.h"

static void test_depth(void **state)
{
    (void)state;
    assert_int_equal(screen_pick_depth("xterm-256color", 256, NULL, TUI_COLOR_AUTO),
                     THEME_DEPTH_256);
    assert_int_equal(screen_pick_depth("xterm-direct", 16777216, NULL, TUI_COLOR_AUTO),
                     THEME_DEPTH_TRUE);
    assert_int_equal(screen_pick_depth("xterm", 8, NULL, TUI_COLOR_AUTO), THEME_DEPTH_8);
    assert_int_equal(screen_pick_depth("rxvt-16color", 16, NULL, TUI_COLOR_AUTO), THEME_DEPTH_16);
    assert_int_equal(screen_pick_depth("vt100", 0, NULL, TUI_COLOR_AUTO), THEME_DEPTH_MONO);
    /* NO_COLOR: mono unless --color=always; empty NO_COLOR is ignored */
    assert_int_equal(screen_pick_depth("xterm-256color", 256, "1", TUI_COLOR_AUTO),
                     THEME_DEPTH_MONO);
    assert_int_equal(screen_pick_depth("xterm-256color", 256, "", TUI_COLOR_AUTO), THEME_DEPTH_256);
    assert_int_equal(screen_pick_depth("xterm-256color", 256, "1", TUI_COLOR_ALWAYS),
                     THEME_DEPTH_256);
    assert_int_equal(screen_pick_depth("xterm-256color", 256, NULL, TUI_COLOR_NEVER),
                     THEME_DEPTH_MONO);
    assert_int_equal(screen_pick_depth(NULL, 256, NULL, TUI_COLOR_AUTO), THEME_DEPTH_256);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_depth)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
