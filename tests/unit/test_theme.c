/*
 * test_theme.c - tui/theme.c: element names, palette and element parsing,
 * the fallbacks (missing element -> base, missing field -> base's field,
 * missing mono -> none), unknown keys warn, file:line errors, depth
 * resolution (hex -> nearest 256 / 16, bright via bold at 8 colours), the
 * search path, and that the four shipped themes parse without warnings,
 * with the embedded texts equal to the files.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tui/theme.h"
#include "util/err.h"

struct warns {
    int n;
    char last[512];
};

static void warn_cb(const char *msg, void *ud)
{
    struct warns *w = ud;
    w->n++;
    snprintf(w->last, sizeof w->last, "%s", msg);
}

static struct theme *parse(const char *text, struct warns *w, char *err)
{
    return theme_parse(text, strlen(text), "t.theme", err, 256, warn_cb, w);
}

static void test_elem_names(void **state)
{
    (void)state;
    for (int i = 0; i < THEME_ELEM_COUNT; i++) {
        const char *n = theme_elem_name((enum theme_elem)i);
        assert_non_null(n);
        assert_int_equal(theme_elem_from_name(n), i);
    }
    assert_string_equal(theme_elem_name(THEME_MAP_MARKER_HIGH), "map.marker.high");
    assert_string_equal(theme_elem_name(THEME_HEAT_4), "heat.4");
    assert_null(theme_elem_name(THEME_ELEM_COUNT));
    assert_int_equal(theme_elem_from_name("sev.bogus"), -1);
}

static const char *sample = "[theme]\n"
                            "name = Sample\n"
                            "[elements]   ; palette may come later\n"
                            "base = fg;bg\n"
                            "sev.critical = bg;danger;bold\n"
                            "sev.high = ;;underline\n"
                            "sev.low = 42\n"
                            "ok = #00ff00;default;none\n"
                            "info = bright-cyan;blue\n"
                            "[palette]\n"
                            "bg = #111110, 233, black\n"
                            "fg = #e8e4dc, 254, white\n"
                            "danger = #dc4444\n"
                            "[mono]\n"
                            "sev.critical = reverse + bold\n";

static void test_fallbacks(void **state)
{
    (void)state;
    struct warns w = {0};
    char err[256];
    struct theme_style s;
    struct theme *t = parse(sample, &w, err);
    assert_non_null(t);
    assert_int_equal(w.n, 0);
    assert_string_equal(theme_name(t), "Sample");

    /* explicit element, truecolor */
    assert_int_equal(theme_resolve(t, THEME_SEV_CRITICAL, THEME_DEPTH_TRUE, &s), 0);
    assert_int_equal(s.fg, 0x111110);
    assert_int_equal(s.bg, 0xdc4444);
    assert_int_equal(s.attrs, THEME_ATTR_BOLD);
    /* missing element -> base (base has no attrs field -> none) */
    assert_false(theme_has_element(t, THEME_TITLE));
    assert_int_equal(theme_resolve(t, THEME_TITLE, THEME_DEPTH_256, &s), 0);
    assert_int_equal(s.fg, 254);
    assert_int_equal(s.bg, 233);
    assert_int_equal(s.attrs, 0);
    /* missing fields -> base's fields */
    assert_int_equal(theme_resolve(t, THEME_SEV_HIGH, THEME_DEPTH_256, &s), 0);
    assert_int_equal(s.fg, 254);
    assert_int_equal(s.bg, 233);
    assert_int_equal(s.attrs, THEME_ATTR_UNDERLINE);
    assert_int_equal(theme_resolve(t, THEME_SEV_LOW, THEME_DEPTH_256, &s), 0);
    assert_int_equal(s.fg, 42);
    assert_int_equal(s.bg, 233);
    /* `default` is the terminal's colour at every depth */
    assert_int_equal(theme_resolve(t, THEME_OK, THEME_DEPTH_TRUE, &s), 0);
    assert_int_equal(s.fg, 0x00ff00);
    assert_int_equal(s.bg, THEME_COLOR_DEFAULT);
    /* 16 colours: names as given, hex without name -> nearest */
    assert_int_equal(theme_resolve(t, THEME_INFO, THEME_DEPTH_16, &s), 0);
    assert_int_equal(s.fg, 14);
    assert_int_equal(s.bg, 4);
    assert_int_equal(theme_resolve(t, THEME_SEV_CRITICAL, THEME_DEPTH_16, &s), 0);
    assert_int_equal(s.fg, 0);
    assert_int_equal(s.bg, 1); /* #dc4444 nearest of 16 = red */
    /* 8 colours: bright foreground via bold */
    assert_int_equal(theme_resolve(t, THEME_INFO, THEME_DEPTH_8, &s), 0);
    assert_int_equal(s.fg, 6);
    assert_int_equal(s.attrs, THEME_ATTR_BOLD);
    /* 256 with the index omitted -> nearest xterm-256 */
    assert_int_equal(theme_resolve(t, THEME_SEV_CRITICAL, THEME_DEPTH_256, &s), 0);
    assert_int_equal(s.bg, 167);
    /* truecolor from an index-only value */
    assert_int_equal(theme_resolve(t, THEME_SEV_LOW, THEME_DEPTH_TRUE, &s), 0);
    assert_int_equal(s.fg, 0x00d787);
    /* mono: explicit entry, missing entry -> none, colours default */
    assert_int_equal(theme_resolve(t, THEME_SEV_CRITICAL, THEME_DEPTH_MONO, &s), 0);
    assert_int_equal(s.attrs, THEME_ATTR_REVERSE | THEME_ATTR_BOLD);
    assert_int_equal(s.fg, THEME_COLOR_DEFAULT);
    assert_int_equal(s.bg, THEME_COLOR_DEFAULT);
    assert_int_equal(theme_resolve(t, THEME_SEV_HIGH, THEME_DEPTH_MONO, &s), 0);
    assert_int_equal(s.attrs, 0);
    assert_int_equal(theme_resolve(t, THEME_ELEM_COUNT, THEME_DEPTH_MONO, &s), ERR_INVALID);
    theme_free(t);

    /* an empty theme resolves everything to the terminal defaults */
    t = parse("", &w, err);
    assert_non_null(t);
    assert_int_equal(theme_resolve(t, THEME_BANNER, THEME_DEPTH_TRUE, &s), 0);
    assert_int_equal(s.fg, THEME_COLOR_DEFAULT);
    assert_int_equal(s.bg, THEME_COLOR_DEFAULT);
    assert_int_equal(s.attrs, 0);
    theme_free(t);
}

static void test_unknown_keys_warn(void **state)
{
    (void)state;
    struct warns w = {0};
    char err[256];
    struct theme_style s;
    struct theme *t = parse("[theme]\nname = X\nauthor = me\n[elements]\nbase = red\n"
                            "sev.bogus = blue\n[extras]\nanything = goes\n[mono]\nnope = bold\n",
                            &w, err);
    assert_non_null(t);
    assert_int_equal(w.n, 4);
    assert_string_equal(w.last, "t.theme:10: unknown element 'nope' ignored");
    assert_int_equal(theme_resolve(t, THEME_BASE, THEME_DEPTH_16, &s), 0);
    assert_int_equal(s.fg, 1);
    theme_free(t);
}

static void expect_error(const char *text, const char *want)
{
    struct warns w = {0};
    char err[256] = "";
    struct theme *t = parse(text, &w, err);
    assert_null(t);
    assert_string_equal(err, want);
}

static void test_errors(void **state)
{
    (void)state;
    expect_error("[elements]\nbase = nosuch\n", "t.theme:2: unknown colour 'nosuch'");
    expect_error("\n[palette]\nx = 12\n", "t.theme:3: bad colour '12' (want #rrggbb)");
    expect_error("[palette]\nx = #12345g\n", "t.theme:2: bad colour '#12345g' (want #rrggbb)");
    expect_error("[palette]\nx = #123456, 256\n", "t.theme:2: bad colour index '256' (want 0-255)");
    expect_error("[palette]\nx = #123456, 1, purple\n",
                 "t.theme:2: unknown 8/16 colour name 'purple'");
    expect_error("[palette]\nx = #123456, 1, red, 4\n",
                 "t.theme:2: palette entry wants #hex[, 256-index[, 8/16-name]]");
    expect_error("[palette]\nx y = #123456\n", "t.theme:2: bad palette name 'x y'");
    expect_error("[elements]\nbase = ;;blink\n", "t.theme:2: unknown attribute 'blink'");
    expect_error("[elements]\nbase = ;;bold+\n", "t.theme:2: empty attribute in 'bold+'");
    expect_error("[elements]\nbase = a;b;bold;x\n", "t.theme:2: element wants fg;bg;attrs");
    expect_error("[mono]\nbase = loud\n", "t.theme:2: unknown attribute 'loud'");
    expect_error("[theme\n", "t.theme:1: section header without ']'");
    expect_error("[theme] junk\n", "t.theme:1: unexpected text after section header");
    expect_error("name = x\n", "t.theme:1: 'name' outside a section");
    expect_error("[theme]\njust words\n", "t.theme:2: expected 'key = value'");
    expect_error("[theme]\r\n = x\r\n", "t.theme:2: empty key");
    expect_error("[elements]\nbase = 1000\n", "t.theme:2: bad colour index '1000' (want 0-255)");

    char *big = malloc(2000);
    memset(big, 'a', 1999);
    big[1999] = '\0';
    memcpy(big, "; ", 2);
    expect_error(big, "t.theme:1: line longer than 1024 bytes");
    free(big);

    struct warns w = {0};
    char err[256];
    assert_null(theme_parse("[theme]\0\n", 9, "n.theme", err, sizeof err, warn_cb, &w));
    assert_string_equal(err, "n.theme:1: NUL byte in line");
}

static void test_nearest(void **state)
{
    (void)state;
    /* the spec's own examples: default-dark's bg, fg and danger */
    assert_int_equal(theme_nearest_256(0x111110), 233);
    assert_int_equal(theme_nearest_256(0xe8e4dc), 254);
    assert_int_equal(theme_nearest_256(0xdc4444), 167);
    /* exact cube and grey entries map to themselves */
    assert_int_equal(theme_nearest_256(0xff0000), 196);
    assert_int_equal(theme_nearest_256(0x000000), 16);
    assert_int_equal(theme_nearest_256(0xffffff), 231);
    assert_int_equal(theme_nearest_256(0x808080), 244);
    for (int i = 16; i < 256; i++)
        assert_int_equal(theme_index_rgb(theme_nearest_256(theme_index_rgb(i))),
                         theme_index_rgb(i));
    assert_int_equal(theme_index_rgb(196), 0xff0000);
    assert_int_equal(theme_index_rgb(232), 0x080808);
    assert_int_equal(theme_index_rgb(1), 0xcd0000);
    assert_int_equal(theme_nearest_16(0xdc4444), 1);
    assert_int_equal(theme_nearest_16(0xfefefe), 15);
    assert_int_equal(theme_nearest_16(0x0000f0), 4);
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *s = malloc(THEME_FILE_MAX + 1);
    *len = fread(s, 1, THEME_FILE_MAX, f);
    s[*len] = '\0';
    fclose(f);
    return s;
}

static void test_shipped_themes(void **state)
{
    (void)state;
    static const char *names[] = {"default-dark", "light", "kiosk-hc", "mono"};
    char path[256], err[256];
    for (size_t i = 0; i < 4; i++) {
        struct warns w = {0};
        snprintf(path, sizeof path, "themes/%s.theme", names[i]);
        struct theme *t = theme_parse_file(path, err, sizeof err, warn_cb, &w);
        if (!t)
            fail_msg("%s", err);
        assert_int_equal(w.n, 0);
        /* every shipped theme defines every element and its mono look */
        for (int e = 0; e < THEME_ELEM_COUNT; e++) {
            assert_true(theme_has_element(t, (enum theme_elem)e));
            assert_true(theme_has_mono(t, (enum theme_elem)e));
        }
        theme_free(t);
    }
    /* the embedded texts are the shipped files byte for byte */
    static const char *embedded[] = {"default-dark", "mono"};
    for (size_t i = 0; i < 2; i++) {
        size_t len;
        snprintf(path, sizeof path, "themes/%s.theme", embedded[i]);
        char *file = read_all(path, &len);
        assert_non_null(theme_builtin_text(embedded[i]));
        assert_string_equal(theme_builtin_text(embedded[i]), file);
        free(file);
    }
    assert_null(theme_builtin_text("light"));
}

static void test_shipped_looks(void **state)
{
    (void)state;
    struct theme_style s;
    char err[256];
    struct theme *t = theme_load_builtin("mono");
    assert_non_null(t);
    /* mono: attributes only, at any depth */
    static const struct {
        enum theme_elem e;
        unsigned attrs;
    } want[] = {
        {THEME_SEV_CRITICAL, THEME_ATTR_REVERSE | THEME_ATTR_BOLD},
        {THEME_SEV_HIGH, THEME_ATTR_BOLD | THEME_ATTR_UNDERLINE},
        {THEME_SEV_MEDIUM, THEME_ATTR_BOLD},
        {THEME_SEV_LOW, 0},
        {THEME_SELECTED, THEME_ATTR_REVERSE},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        for (int d = THEME_DEPTH_MONO; d <= THEME_DEPTH_TRUE; d++) {
            assert_int_equal(theme_resolve(t, want[i].e, (enum theme_depth)d, &s), 0);
            assert_int_equal(s.attrs, want[i].attrs);
            assert_int_equal(s.fg, THEME_COLOR_DEFAULT);
            assert_int_equal(s.bg, THEME_COLOR_DEFAULT);
        }
    }
    theme_free(t);

    /* kiosk-hc: CRIT white on red bold, HIGH black on yellow bold, no dim */
    t = theme_parse_file("themes/kiosk-hc.theme", err, sizeof err, NULL, NULL);
    assert_non_null(t);
    assert_int_equal(theme_resolve(t, THEME_SEV_CRITICAL, THEME_DEPTH_16, &s), 0);
    assert_int_equal(s.fg, 15);
    assert_int_equal(s.bg, 1);
    assert_int_equal(s.attrs, THEME_ATTR_BOLD);
    assert_int_equal(theme_resolve(t, THEME_SEV_HIGH, THEME_DEPTH_TRUE, &s), 0);
    assert_int_equal(s.fg, 0x000000);
    assert_int_equal(s.bg, 0xffff00);
    assert_int_equal(theme_resolve(t, THEME_STATUS_STALE, THEME_DEPTH_256, &s), 0);
    assert_int_equal(s.fg, 16);
    assert_int_equal(s.bg, 226);
    for (int e = 0; e < THEME_ELEM_COUNT; e++)
        for (int d = THEME_DEPTH_MONO; d <= THEME_DEPTH_TRUE; d++) {
            assert_int_equal(theme_resolve(t, (enum theme_elem)e, (enum theme_depth)d, &s), 0);
            assert_false(s.attrs & THEME_ATTR_DIM);
        }
    theme_free(t);

    t = theme_load_builtin("default-dark");
    assert_non_null(t);
    assert_string_equal(theme_name(t), "Default Dark");
    assert_int_equal(theme_resolve(t, THEME_BASE, THEME_DEPTH_TRUE, &s), 0);
    assert_int_equal(s.fg, 0xe8e4dc);
    assert_int_equal(s.bg, 0x111110);
    theme_free(t);
    assert_null(theme_load_builtin("light"));
}

static void test_search_path(void **state)
{
    (void)state;
    char *dirs[8];
    size_t n = theme_search_dirs("/flag", "/env", "/home/u", "/usr/local", dirs, 8);
    assert_int_equal(n, 5);
    assert_string_equal(dirs[0], "/flag");
    assert_string_equal(dirs[1], "/env");
    assert_string_equal(dirs[2], "/home/u/.config/genuproof/themes");
    assert_string_equal(dirs[3], "/usr/local/share/genuproof/themes");
    assert_string_equal(dirs[4], "./themes");
    theme_dirs_free(dirs, n);
    n = theme_search_dirs(NULL, "", NULL, NULL, dirs, 8);
    assert_int_equal(n, 1);
    assert_string_equal(dirs[0], "./themes");
    theme_dirs_free(dirs, n);

    /* first <name>.theme wins; files shadow the embedded themes */
    char tmpl[] = "/tmp/gp-theme-XXXXXX";
    char *root = mkdtemp(tmpl);
    assert_non_null(root);
    char a[300], b[300], p[600], err[256];
    snprintf(a, sizeof a, "%s/a", root);
    snprintf(b, sizeof b, "%s/b", root);
    assert_int_equal(mkdir(a, 0700), 0);
    assert_int_equal(mkdir(b, 0700), 0);
    snprintf(p, sizeof p, "%s/mono.theme", b);
    FILE *f = fopen(p, "w");
    fputs("[theme]\nname = From B\n", f);
    fclose(f);
    snprintf(p, sizeof p, "%s/x.theme", a);
    f = fopen(p, "w");
    fputs("[theme]\nname = X in A\n", f);
    fclose(f);
    snprintf(p, sizeof p, "%s/x.theme", b);
    f = fopen(p, "w");
    fputs("[theme]\nname = X in B\n", f);
    fclose(f);
    snprintf(p, sizeof p, "%s/bad.theme", b);
    f = fopen(p, "w");
    fputs("[theme]\n\n[elements]\nbase = ;;sparkle\n", f);
    fclose(f);

    char *d2[2] = {a, b};
    char found[600];
    assert_int_equal(theme_find("x", d2, 2, found, sizeof found), 0);
    snprintf(p, sizeof p, "%s/x.theme", a);
    assert_string_equal(found, p);
    assert_int_equal(theme_find("nope", d2, 2, found, sizeof found), ERR_NOTFOUND);
    assert_int_equal(theme_find("../x", d2, 2, found, sizeof found), ERR_INVALID);
    assert_int_equal(theme_find(".hidden", d2, 2, found, sizeof found), ERR_INVALID);
    assert_int_equal(theme_find("", d2, 2, found, sizeof found), ERR_INVALID);
    assert_int_equal(theme_find("x", d2, 2, found, 8), ERR_TOOBIG);

    struct theme *t = theme_load("x", d2, 2, err, sizeof err, NULL, NULL);
    assert_non_null(t);
    assert_string_equal(theme_name(t), "X in A");
    theme_free(t);
    t = theme_load("mono", d2, 2, err, sizeof err, NULL, NULL);
    assert_non_null(t);
    assert_string_equal(theme_name(t), "From B");
    theme_free(t);
    /* not on the path: the embedded one */
    t = theme_load("default-dark", d2, 2, err, sizeof err, NULL, NULL);
    assert_non_null(t);
    assert_string_equal(theme_name(t), "Default Dark");
    theme_free(t);
    assert_null(theme_load("light", d2, 1, err, sizeof err, NULL, NULL));
    assert_string_equal(err, "theme: no light.theme on the search path");
    assert_null(theme_load("bad", d2, 2, err, sizeof err, NULL, NULL));
    snprintf(p, sizeof p, "%s/bad.theme:4: unknown attribute 'sparkle'", b);
    assert_string_equal(err, p);

    static const char *files[] = {"a/x.theme", "b/x.theme", "b/mono.theme", "b/bad.theme"};
    for (size_t i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/%s", root, files[i]);
        assert_int_equal(unlink(p), 0);
    }
    assert_int_equal(rmdir(a), 0);
    assert_int_equal(rmdir(b), 0);
    assert_int_equal(rmdir(root), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_elem_names),        cmocka_unit_test(test_fallbacks),
        cmocka_unit_test(test_unknown_keys_warn), cmocka_unit_test(test_errors),
        cmocka_unit_test(test_nearest),           cmocka_unit_test(test_shipped_themes),
        cmocka_unit_test(test_shipped_looks),     cmocka_unit_test(test_search_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
