/*
 * tmpdir.c - temporary directories of the unit tests (tmpdir.h).
 */
#include "tmpdir.h"

#include <ftw.h>
#include <stdio.h>

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
