/*
 * test_fsync_dir.c - util/fsync_dir.h: the directory of a path is found
 * (bare names, the root, nested paths) and synced; errors come back with
 * errno (a missing directory, a name too long, a file that is no
 * directory).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/fsync_dir.h"

static void test_paths(void **state)
{
    (void)state;
    char dir[] = "/tmp/gp-fsyncdir.XXXXXX";
    char path[PATH_MAX];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/file", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);

    assert_int_equal(fsync_dir(dir), 0);
    assert_int_equal(fsync_parent_dir(path), 0);
    assert_int_equal(fsync_parent_dir("/etc"), 0); /* the root */
    assert_int_equal(fsync_parent_dir("bare"), 0); /* the current directory */

    /* a file is not a directory */
    errno = 0;
    assert_int_equal(fsync_dir(path), -1);
    assert_int_equal(errno, ENOTDIR);
    /* a missing directory */
    snprintf(path, sizeof path, "%s/missing/file", dir);
    errno = 0;
    assert_int_equal(fsync_parent_dir(path), -1);
    assert_int_equal(errno, ENOENT);
    /* a directory name longer than PATH_MAX */
    char *longp = malloc(PATH_MAX + 16);
    assert_non_null(longp);
    memset(longp, 'a', PATH_MAX + 8);
    longp[0] = '/';
    longp[PATH_MAX + 8] = '/';
    longp[PATH_MAX + 9] = 'f';
    longp[PATH_MAX + 10] = '\0';
    errno = 0;
    assert_int_equal(fsync_parent_dir(longp), -1);
    assert_int_equal(errno, ENAMETOOLONG);
    free(longp);

    snprintf(path, sizeof path, "%s/file", dir);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_paths)};
    return cmocka_run_group_tests_name("fsync_dir", tests, NULL, NULL);
}
