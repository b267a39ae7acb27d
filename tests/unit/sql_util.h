/*
 * sql_util.h - small SQLite helpers of the unit tests that use SQLite
 * directly (include after <cmocka.h>).
 */
#ifndef GP_TESTS_SQL_UTIL_H
#define GP_TESTS_SQL_UTIL_H

#include <stdint.h>

#include <sqlite3.h>

/* Runs sql; fails the test with SQLite's message when it fails. */
void ut_sql_ok(sqlite3 *db, const char *sql);
/* The first column of the first row of sql as an integer, -1 without a row. */
int64_t ut_sql_int(sqlite3 *db, const char *sql);
/* PRAGMA integrity_check answers "ok". */
void ut_sql_integrity(sqlite3 *db);

#endif
