/*
 * test_tui_ncurses_include.c - only src/tui/tcurses.h may include curses
 * (STYLE.md §6).  Walks src/ (relative to the repository root, where
 * tests/run.sh runs) and fails on any other file with an #include of
 * curses.h, ncurses.h, ncursesw/... or term.h.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int offenders, tcurses_hits, files;

static int includes_curses(const char *line)
{
    const char *p = line;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p != '#')
        return 0;
    p++;
    while (*p == ' ' || *p == '\t')
        p++;
    if (strncmp(p, "include", 7))
        return 0;
    /* including the wrapper itself is the allowed way */
    if (strstr(p, "tcurses.h"))
        return 0;
    return strstr(p, "curses") || strstr(p, "<term.h>");
}

static void scan_file(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[1024];
    if (!f)
        return;
    files++;
    while (fgets(line, sizeof line, f)) {
        if (!includes_curses(line))
            continue;
        if (strcmp(path, "src/tui/tcurses.h") == 0) {
            tcurses_hits++;
        } else {
            offenders++;
            fprintf(stderr, "# %s includes curses: %s", path, line);
        }
    }
    fclose(f);
}

static void walk(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    if (!d)
        return;
    while ((e = readdir(d))) {
        char path[1024];
        struct stat st;
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (stat(path, &st))
            continue;
        if (S_ISDIR(st.st_mode)) {
            walk(path);
        } else {
            size_t n = strlen(path);
            if (n > 2 && (!strcmp(path + n - 2, ".c") || !strcmp(path + n - 2, ".h")))
                scan_file(path);
        }
    }
    closedir(d);
}

static void test_only_tcurses(void **state)
{
    (void)state;
    walk("src");
    assert_true(files > 50); /* really looked at the tree */
    assert_true(tcurses_hits >= 1);
    assert_int_equal(offenders, 0);
}

static void test_detector_works(void **state)
{
    (void)state;
    assert_true(includes_curses("#include <curses.h>\n"));
    assert_true(includes_curses("  #  include <ncursesw/ncurses.h>\n"));
    assert_false(includes_curses("#include \"tui/tcurses.h\"\n"));
    assert_false(includes_curses("/* curses */\n"));
    assert_false(includes_curses("#include <stdio.h>\n"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_detector_works),
                                       cmocka_unit_test(test_only_tcurses)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
