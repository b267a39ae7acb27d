/*
 * test_sqlite_sync.c - deferred sync of the SQLite store
 * (store_options.deferred_sync, store/sqlite_sync.h): a commit gets a
 * ticket and is announced (commit callback) only once the sync thread has
 * synced the WAL; syncs coalesce; a failed sync fails every commit after
 * it; commits without writes take no ticket; inline checkpoints and the
 * close leave a complete, intact file; and a process killed while it
 * writes loses nothing it was told was durable.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cJSON.h>

#include "sqlite_check.h"

#include "store/sqlite_sync.h"
#include "store/store.h"
#include "store/store_sqlite.h"
#include "util/err.h"
#include "tmpdir.h"

struct fx {
    char dir[64], path[96];
    struct store *s;
    int commits;
    uint64_t last_seq;
};

static void on_commit(void *arg, uint64_t last_seq)
{
    struct fx *f = arg;
    f->commits++;
    f->last_seq = last_seq;
}

static struct store *open_deferred(const char *path, bool deferred)
{
    struct store_options o = {0};
    char err[256];
    o.path = path;
    o.durability = STORE_DURABILITY_FULL;
    o.background_checkpoint = true;
    o.deferred_sync = deferred;
    struct store *s = store_open_sqlite(&o, err, sizeof err);
    assert_non_null(s);
    return s;
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/gp-sync-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof f->path, "%s/t.db", f->dir);
    f->s = open_deferred(f->path, true);
    assert_non_null(store_sqlite_sync(f->s));
    store_set_commit_cb(f->s, on_commit, f);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    if (f->s)
        store_close(f->s);
    assert_int_equal(ut_rmtree(f->dir), 0);
    free(f);
    return 0;
}

static int put_n(struct store *s, int i)
{
    char pk[32];
    snprintf(pk, sizeof pk, "ITEM#%06d", i);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "PK", pk);
    cJSON_AddStringToObject(o, "SK", "META");
    cJSON_AddStringToObject(
        o, "pad",
        "0123456789012345678901234567890123456789012345678901234567890123456789"
        "0123456789012345678901234567890123456789012345678901234567890123456789");
    int rc = store_put(s, o, NULL);
    cJSON_Delete(o);
    return rc;
}

static bool fd_ready(struct store *s, int ms)
{
    struct pollfd p = {store_sync_fd(s), POLLIN, 0};
    return poll(&p, 1, ms) == 1;
}

/* Polls until ticket is durable (or 5 s pass). */
static uint64_t poll_until(struct store *s, uint64_t ticket, int *err)
{
    uint64_t d = 0;
    for (int i = 0; i < 500; i++) {
        fd_ready(s, 10);
        d = store_sync_poll(s, err);
        if (d >= ticket || *err)
            break;
    }
    return d;
}

static void t_announced_when_synced(void **state)
{
    struct fx *f = *state;
    int err = 0;
    sqlite_sync_test_delay(store_sqlite_sync(f->s), 300 * 1000);
    assert_int_equal(put_n(f->s, 1), 0);
    uint64_t t = store_sync_pending(f->s);
    assert_true(t >= 1);
    /* committed, readable, but not announced before the sync */
    cJSON *it = NULL;
    assert_int_equal(store_get(f->s, "ITEM#000001", "META", true, &it), 0);
    cJSON_Delete(it);
    assert_int_equal(store_sync_poll(f->s, &err), 0);
    assert_int_equal(f->commits, 0);
    assert_false(fd_ready(f->s, 100));
    assert_true(poll_until(f->s, t, &err) >= t);
    assert_int_equal(err, 0);
    assert_int_equal(f->commits, 1);
    uint64_t head = 0;
    assert_int_equal(store_stream_head(f->s, &head), 0);
    assert_true(f->last_seq == head);
    assert_int_equal(store_sync_pending(f->s), 0);
}

static void t_syncs_coalesce(void **state)
{
    struct fx *f = *state;
    int err = 0;
    struct sqlite_sync_stats a, b;
    sqlite_sync_get_stats(store_sqlite_sync(f->s), &a);
    sqlite_sync_test_delay(store_sqlite_sync(f->s), 200 * 1000);
    for (int i = 0; i < 20; i++)
        assert_int_equal(put_n(f->s, 100 + i), 0);
    uint64_t t = store_sync_pending(f->s);
    assert_true(t >= 20);
    assert_true(poll_until(f->s, t, &err) >= t);
    sqlite_sync_get_stats(store_sqlite_sync(f->s), &b);
    /* 20 commits, at most a few fdatasyncs (one running, one for the rest) */
    assert_true(b.syncs - a.syncs <= 3);
    assert_true(b.syncs - a.syncs >= 1);
    struct store_stats st;
    store_get_stats(f->s, &st);
    assert_true(st.wal_syncs == b.syncs);
}

static void t_no_ticket_without_writes(void **state)
{
    struct fx *f = *state;
    int err = 0;
    assert_int_equal(put_n(f->s, 1), 0);
    poll_until(f->s, store_sync_pending(f->s), &err);
    assert_int_equal(store_sync_pending(f->s), 0);
    assert_int_equal(store_batch_begin(f->s), 0);
    cJSON *it = NULL;
    assert_int_equal(store_get(f->s, "ITEM#000001", "META", true, &it), 0);
    cJSON_Delete(it);
    assert_int_equal(store_batch_commit(f->s), 0);
    assert_int_equal(store_sync_pending(f->s), 0);
}

static void t_failed_sync_is_sticky(void **state)
{
    struct fx *f = *state;
    int err = 0;
    assert_int_equal(put_n(f->s, 1), 0);
    uint64_t good = poll_until(f->s, store_sync_pending(f->s), &err);
    assert_int_equal(err, 0);
    sqlite_sync_test_fail(store_sqlite_sync(f->s), EIO);
    assert_int_equal(put_n(f->s, 2), 0); /* written, its sync fails */
    uint64_t t = store_sync_pending(f->s);
    assert_true(t > good);
    uint64_t d = poll_until(f->s, t, &err);
    assert_int_equal(err, ERR_IO);
    assert_true(d < t);
    /* from now on commits are refused and leave nothing behind */
    assert_int_equal(put_n(f->s, 3), ERR_IO);
    assert_int_equal(store_batch_begin(f->s), 0);
    assert_int_equal(put_n(f->s, 4), 0);
    assert_int_equal(store_batch_commit(f->s), ERR_IO);
    cJSON *it = NULL;
    assert_int_equal(store_get(f->s, "ITEM#000003", "META", true, &it), ERR_NOTFOUND);
    assert_int_equal(store_get(f->s, "ITEM#000004", "META", true, &it), ERR_NOTFOUND);
    /* and the store reports itself unhealthy (/api/ready answers 503) */
    double ms;
    assert_int_equal(store_health(f->s, &ms), ERR_IO);
}

/* Enough writes for several inline checkpoints (at 4,000 WAL frames, made
 * at synchronous=FULL); the file is complete and intact after close. */
static void t_checkpoints_and_close(void **state)
{
    struct fx *f = *state;
    int err = 0;
    const int n = 6000;
    for (int i = 0; i < n; i += 50) {
        assert_int_equal(store_batch_begin(f->s), 0);
        for (int j = i; j < i + 50; j++)
            assert_int_equal(put_n(f->s, j), 0);
        assert_int_equal(store_batch_commit(f->s), 0);
    }
    for (int i = 0; i < n; i++)
        assert_int_equal(put_n(f->s, i), 0); /* one commit each: many WAL frames */
    uint64_t t = store_sync_pending(f->s);
    assert_true(poll_until(f->s, t, &err) >= t);
    store_close(f->s);
    f->s = NULL;
    sqlite_check_file(f->path, "SELECT count(*) FROM items WHERE pk LIKE 'ITEM#%'", n);
}

static void t_inline_without_deferral(void **state)
{
    struct fx *f = *state;
    char p2[128];
    snprintf(p2, sizeof p2, "%s/n.db", f->dir);
    struct store *s = open_deferred(p2, false);
    assert_int_equal(store_sync_fd(s), -1);
    assert_int_equal(put_n(s, 1), 0);
    assert_int_equal(store_sync_pending(s), 0);
    int err = 1;
    assert_int_equal(store_sync_poll(s, &err), 0);
    assert_int_equal(err, 0);
    store_close(s);
}

/* A child writes and reports each durable count on a pipe; it is killed
 * at some point; everything it reported is in the file. */
static void t_kill_loses_nothing_acknowledged(void **state)
{
    struct fx *f = *state;
    store_close(f->s);
    f->s = NULL;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        struct store *s = open_deferred(f->path, true);
        int err = 0;
        for (int i = 0;; i += 20) {
            if (store_batch_begin(s))
                _exit(2);
            for (int j = i; j < i + 20; j++)
                if (put_n(s, j))
                    _exit(3);
            if (store_batch_commit(s))
                _exit(4);
            uint64_t t = store_sync_pending(s);
            if (poll_until(s, t, &err) < t || err)
                _exit(5);
            int acked = i + 20;
            if (write(fds[1], &acked, sizeof acked) != (ssize_t)sizeof acked)
                _exit(6);
        }
    }
    close(fds[1]);
    int acked = 0, v;
    while (acked < 3000 && read(fds[0], &v, sizeof v) == (ssize_t)sizeof v)
        acked = v;
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFSIGNALED(status));
    while (read(fds[0], &v, sizeof v) == (ssize_t)sizeof v)
        acked = v; /* acknowledged before the kill landed */
    close(fds[0]);
    assert_true(acked >= 3000);
    /* every acknowledged item is there (and the file is intact) */
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT count(*) >= %d FROM items WHERE pk LIKE 'ITEM#%%'", acked);
    sqlite_check_file(f->path, sql, 1);
    struct store *s = open_deferred(f->path, true);
    for (int i = 0; i < acked; i += 97) {
        char pk[32];
        cJSON *it = NULL;
        snprintf(pk, sizeof pk, "ITEM#%06d", i);
        assert_int_equal(store_get(s, pk, "META", true, &it), 0);
        cJSON_Delete(it);
    }
    store_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(t_announced_when_synced, setup, teardown),
        cmocka_unit_test_setup_teardown(t_syncs_coalesce, setup, teardown),
        cmocka_unit_test_setup_teardown(t_no_ticket_without_writes, setup, teardown),
        cmocka_unit_test_setup_teardown(t_failed_sync_is_sticky, setup, teardown),
        cmocka_unit_test_setup_teardown(t_checkpoints_and_close, setup, teardown),
        cmocka_unit_test_setup_teardown(t_inline_without_deferral, setup, teardown),
        cmocka_unit_test_setup_teardown(t_kill_loses_nothing_acknowledged, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
