/*
 * tmpdir.c - temporary directories of the unit tests (tmpdir.h).
 */
#include "tmpdir.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

#include "store/store.h"

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path) != 0 ? -1 : 0;
}

int ut_rmtree(const char *dir)
{
    return nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : -1;
}

void ut_db_dir(const char *tag, char dir[64], char path[128])
{
    snprintf(dir, 64, "/tmp/gp-test-%s.XXXXXX", tag);
    assert_non_null(mkdtemp(dir));
    snprintf(path, 128, "%s/db", dir);
}

struct store *ut_sqlite_open(const char *path)
{
    struct store_options o = {.durability = STORE_DURABILITY_NORMAL, .path = path};
    char err[256];
    struct store *s = store_open_sqlite(&o, err, sizeof err);
    if (!s)
        fail_msg("cannot open %s: %s", path, err);
    return s;
}

int ut_db_setup(void **state)
{
    struct ut_db *f = calloc(1, sizeof *f);

    assert_non_null(f);
    ut_db_dir("db", f->dir, f->path);
    f->s = ut_sqlite_open(f->path);
    *state = f;
    return 0;
}

int ut_db_teardown(void **state)
{
    struct ut_db *f = *state;

    store_close(f->s);
    int rc = ut_rmtree(f->dir);
    free(f);
    return rc;
}
