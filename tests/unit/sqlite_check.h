/*
 * sqlite_check.h - for tests of the SQLite store: opens the database file
 * on a connection of its own and asserts PRAGMA integrity_check says "ok"
 * and, when count_sql is given, that it yields `want`.  Include after
 * <cmocka.h>.
 */
#ifndef GP_TEST_SQLITE_CHECK_H
#define GP_TEST_SQLITE_CHECK_H

#include <sqlite3.h>

static inline void sqlite_check_file(const char *path, const char *count_sql, int want)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
    sqlite3_finalize(st);
    if (count_sql) {
        assert_int_equal(sqlite3_prepare_v2(db, count_sql, -1, &st, NULL), SQLITE_OK);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        assert_int_equal(sqlite3_column_int(st, 0), want);
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
}

#endif
