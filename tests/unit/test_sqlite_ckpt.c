/*
 * test_sqlite_ckpt.c - background WAL checkpoints (store/sqlite_ckpt.c,
 * store_options.background_checkpoint): under a long run of commits the
 * WAL keeps starting over (its file stays far below the bytes written),
 * the database file receives the pages, every write reads back, a second
 * store on the same file sees them, and closing joins the thread.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>
#include <sqlite3.h>

#include "sqlite_check.h"

#include "store/sqlite_ckpt.h"
#include "store/store.h"
#include "tmpdir.h"

struct fx {
    char dir[64], path[96], wal[112];
    struct store *s;
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    struct store_options o = {0};
    char err[256];
    snprintf(f->dir, sizeof f->dir, "/tmp/gp-ckpt-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof f->path, "%s/t.db", f->dir);
    snprintf(f->wal, sizeof f->wal, "%s-wal", f->path);
    o.path = f->path;
    o.durability = STORE_DURABILITY_FULL;
    o.background_checkpoint = true;
    f->s = store_open_sqlite(&o, err, sizeof err);
    assert_non_null(f->s);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    store_close(f->s);
    assert_int_equal(ut_rmtree(f->dir), 0);
    free(f);
    return 0;
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : 0;
}

static void put_item(struct store *s, int i, const char *val)
{
    char pk[32], sk[32];
    cJSON *it = cJSON_CreateObject();
    snprintf(pk, sizeof pk, "P#%d", i / 20);
    snprintf(sk, sizeof sk, "S#%08d", i);
    cJSON_AddStringToObject(it, "PK", pk);
    cJSON_AddStringToObject(it, "SK", sk);
    cJSON_AddStringToObject(it, "v", val);
    assert_int_equal(store_put(s, it, NULL), 0);
    cJSON_Delete(it);
}

static void t_wal_starts_over(void **state)
{
    struct fx *f = *state;
    const int n = 12000; /* ~3 pages each with its stream record: ~140 MB */
    char *val = malloc(3001);
    long wal_max = 0;

    memset(val, 'y', 3000);
    val[3000] = '\0';
    for (int i = 0; i < n; i++) {
        if (i % 20 == 0)
            assert_int_equal(store_batch_begin(f->s), 0);
        put_item(f->s, i, val);
        if (i % 20 == 19) {
            assert_int_equal(store_batch_commit(f->s), 0);
            if (file_size(f->wal) > wal_max)
                wal_max = file_size(f->wal);
            if (i % 2000 == 1999)
                usleep(20000); /* room for the thread on a loaded machine */
        }
    }
    free(val);
    print_message("WAL file at most %ld KiB, database %ld KiB\n", wal_max / 1024,
                  file_size(f->path) / 1024);
    /* Without restarts the WAL would hold every frame written (~140 MB). */
    assert_true(wal_max < 60L * 1024 * 1024);
    /* The pages reached the database file (checkpoints ran). */
    assert_true(file_size(f->path) > 60L * 1024 * 1024);

    /* Everything reads back, here and through a second store. */
    {
        cJSON *it = NULL;
        struct store_options o = {.path = f->path};
        char err[256];
        struct store *other;
        assert_int_equal(store_get(f->s, "P#0", "S#00000000", true, &it), 0);
        cJSON_Delete(it);
        other = store_open_sqlite(&o, err, sizeof err);
        assert_non_null(other);
        it = NULL;
        assert_int_equal(store_get(other, "P#599", "S#00011999", true, &it), 0);
        cJSON_Delete(it);
        store_close(other);
    }
    sqlite_check_file(f->path, "SELECT count(*) FROM items", n);
}

/* The thread on its own: kicks below the threshold do nothing, one above
 * runs a checkpoint; stop joins it. */
static void t_thread_kick(void **state)
{
    struct fx *f = *state;
    struct sqlite_ckpt *c;
    struct sqlite_ckpt_stats st;
    char err[256], val[64] = "v";

    put_item(f->s, 1, val);
    c = sqlite_ckpt_start(f->path, 100, 1000, err, sizeof err);
    assert_non_null(c);
    sqlite_ckpt_kick(c, 10);
    usleep(50000);
    sqlite_ckpt_get_stats(c, &st);
    assert_int_equal(st.passive + st.busy, 0);
    sqlite_ckpt_kick(c, 150);
    for (int i = 0; i < 200; i++) {
        sqlite_ckpt_get_stats(c, &st);
        if (st.passive + st.busy > 0)
            break;
        usleep(10000);
    }
    assert_true(st.passive + st.busy >= 1);
    sqlite_ckpt_stop(c);
    /* A database that is not there. */
    assert_null(sqlite_ckpt_start("/nonexistent-dir/x.db", 0, 0, err, sizeof err));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(t_wal_starts_over, setup, teardown),
        cmocka_unit_test_setup_teardown(t_thread_kick, setup, teardown),
    };
    return cmocka_run_group_tests_name("sqlite_ckpt", tests, NULL, NULL);
}
