/*
 * tmpdir.h - temporary directories of the unit tests.
 */
#ifndef GP_TESTS_TMPDIR_H
#define GP_TESTS_TMPDIR_H

/* Removes dir and everything under it, without a shell (symbolic links
 * are removed, never followed).  0, or -1 when something could not be
 * removed. */
int ut_rmtree(const char *dir);

struct store;

/* A fresh temporary directory /tmp/gp-test-<tag>.XXXXXX in dir (64
 * bytes) and the path of a database file in it in path (128 bytes);
 * fails the test when the directory cannot be made. */
void ut_db_dir(const char *tag, char dir[64], char path[128]);
/* A SQLite store on path at normal durability; fails the test when it
 * cannot be opened. */
struct store *ut_sqlite_open(const char *path);

/* A fresh store in a temporary directory, as a cmocka fixture:
 * ut_db_setup puts a struct ut_db in *state, ut_db_teardown closes the
 * store and removes the directory. */
struct ut_db {
    char dir[64];
    char path[128];
    struct store *s;
};
int ut_db_setup(void **state);
int ut_db_teardown(void **state);

#endif
