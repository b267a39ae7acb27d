/*
 * tmpdir.h - temporary directories of the unit tests.
 */
#ifndef GP_TESTS_TMPDIR_H
#define GP_TESTS_TMPDIR_H

/* Removes dir and everything under it, without a shell (symbolic links
 * are removed, never followed).  0, or -1 when something could not be
 * removed. */
int ut_rmtree(const char *dir);

#endif
