/*
 * test_store_crash.c - kill -9 in the middle of writing.
 *
 * A child process writes in a loop - single puts, group-commit batches and
 * transactions, in turn - and after every successful commit reports the
 * ids it wrote through a pipe.  The parent kills it with SIGKILL at an
 * arbitrary moment, reopens the database and checks that every reported
 * write is there with its INSERT stream record, that no item lacks its
 * record (nor a record its item), that sequence numbers increase, and that
 * PRAGMA integrity_check passes.  Several rounds on the same file, in both
 * durability modes (a process crash must lose nothing in either).
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
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store/store.h"
#include "util/err.h"

#define MAX_IDS 200000

struct crash_ctx {
    char dir[64];
    char path[128];
};

static struct store *open_store(const char *path, enum store_durability d)
{
    struct store_options o = {.path = path, .durability = d};
    char err[256];
    struct store *s = store_open_sqlite(&o, err, sizeof(err));
    if (!s)
        fprintf(stderr, "open %s: %s\n", path, err);
    return s;
}

static cJSON *item_for(int round, uint32_t id)
{
    char pk[32], sk[32];
    cJSON *it = cJSON_CreateObject();
    snprintf(pk, sizeof(pk), "CRASH#%d", round);
    snprintf(sk, sizeof(sk), "%08u", id);
    cJSON_AddStringToObject(it, "PK", pk);
    cJSON_AddStringToObject(it, "SK", sk);
    cJSON_AddNumberToObject(it, "id", id);
    cJSON_AddStringToObject(it, "pad", "some payload to make pages fill up a little faster");
    return it;
}

static void report(int fd, const uint32_t *ids, size_t n)
{
    /* Each write is <= PIPE_BUF, so it is atomic. */
    if (write(fd, ids, n * sizeof(*ids)) != (ssize_t)(n * sizeof(*ids)))
        _exit(3);
}

/* The child: writes until killed; never returns. */
static void child_loop(const char *path, enum store_durability d, int round, int fd)
{
    struct store *s = open_store(path, d);
    uint32_t next = 0, ids[10];
    if (!s)
        _exit(2);
    for (uint64_t iter = 0;; iter++) {
        cJSON *items[10];
        size_t n = 0;
        int rc = 0;
        switch (iter % 3) {
        case 0: /* a single put: its own transaction */
            items[0] = item_for(round, next);
            ids[n++] = next++;
            rc = store_put(s, items[0], NULL);
            break;
        case 1: /* group commit of 10 puts */
            rc = store_batch_begin(s);
            for (size_t i = 0; !rc && i < 10; i++) {
                items[n] = item_for(round, next);
                ids[n] = next++;
                rc = store_put(s, items[n], NULL);
                n++;
            }
            if (!rc)
                rc = store_batch_commit(s);
            else
                store_batch_abort(s);
            break;
        case 2: { /* a 5-item transaction */
            struct store_write w[5];
            memset(w, 0, sizeof(w));
            for (size_t i = 0; i < 5; i++) {
                items[n] = item_for(round, next);
                ids[n] = next++;
                w[i].kind = STORE_W_PUT;
                w[i].item = items[n];
                w[i].cond.kind = STORE_COND_NOT_EXISTS;
                n++;
            }
            rc = store_transact(s, w, 5, NULL);
            break;
        }
        }
        if (rc)
            _exit(4);
        report(fd, ids, n);
        for (size_t i = 0; i < n; i++)
            cJSON_Delete(items[i]);
    }
}

/* Reads whatever the pipe holds, waiting up to timeout_ms for the first
 * byte; appends whole ids to ids. */
static void drain(int fd, uint32_t *ids, size_t *n, int timeout_ms, bool until_eof)
{
    unsigned char buf[4096];
    struct pollfd p = {.fd = fd, .events = POLLIN};
    for (;;) {
        int pr = poll(&p, 1, timeout_ms);
        if (pr <= 0)
            return;
        ssize_t r = read(fd, buf, sizeof(buf));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return; /* EOF: the child is gone */
        /* Reports are atomic multiples of 4 bytes and so is buf: reads
         * never split an id. */
        assert_int_equal(r % 4, 0);
        for (ssize_t i = 0; i < r; i += 4) {
            uint32_t v;
            memcpy(&v, buf + i, 4);
            if (*n < MAX_IDS)
                ids[(*n)++] = v;
        }
        if (!until_eof)
            return;
    }
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static void check_round(const char *path, int round, uint32_t *ids, size_t nids)
{
    struct store *s = open_store(path, STORE_DURABILITY_FULL);
    char pk[32];
    assert_non_null(s);
    snprintf(pk, sizeof(pk), "CRASH#%d", round);
    /* Every reported write is present. */
    for (size_t i = 0; i < nids; i++) {
        char sk[32];
        cJSON *out = NULL;
        snprintf(sk, sizeof(sk), "%08u", ids[i]);
        assert_int_equal(store_get(s, pk, sk, true, &out), 0);
        assert_true(cJSON_GetObjectItem(out, "id")->valuedouble == ids[i]);
        cJSON_Delete(out);
    }
    /* Stream records of this round: one INSERT per item, increasing seq. */
    uint32_t *seen = calloc(MAX_IDS, sizeof(*seen));
    size_t nseen = 0;
    uint64_t after = 0, prev = 0;
    for (;;) {
        struct stream_record *r = NULL;
        size_t n = 0;
        assert_int_equal(store_stream_read(s, after, 5000, &r, &n), 0);
        for (size_t i = 0; i < n; i++) {
            assert_true(r[i].seq > prev);
            prev = r[i].seq;
            if (strcmp(r[i].pk, pk) != 0)
                continue;
            assert_int_equal(r[i].kind, STORE_INSERT);
            assert_non_null(r[i].image);
            assert_true(nseen < MAX_IDS);
            seen[nseen++] = (uint32_t)strtoul(r[i].sk, NULL, 10);
        }
        if (n)
            after = r[n - 1].seq;
        store_stream_free(r, n);
        if (n == 0)
            break;
    }
    qsort(seen, nseen, sizeof(*seen), cmp_u32);
    for (size_t i = 1; i < nseen; i++)
        assert_true(seen[i] != seen[i - 1]);
    for (size_t i = 0; i < nids; i++)
        assert_non_null(bsearch(&ids[i], seen, nseen, sizeof(*seen), cmp_u32));
    /* Items and records agree exactly (also for writes committed after the
     * last report). */
    struct store_query q = {.pk = pk, .count_only = true, .forward = true};
    struct store_result res;
    assert_int_equal(store_query(s, &q, &res), 0);
    assert_int_equal((size_t)res.count, nseen);
    store_result_free(&res);
    assert_true(nseen >= nids);
    free(seen);
    store_close(s);

    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
    sqlite3_finalize(st);
    sqlite3_close(db);
}

static void crash_rounds(struct crash_ctx *c, enum store_durability d, int first_round)
{
    uint32_t *ids = malloc(MAX_IDS * sizeof(*ids));
    for (int round = first_round; round < first_round + 3; round++) {
        int fds[2];
        size_t nids = 0;
        assert_int_equal(pipe(fds), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            close(fds[0]);
            child_loop(c->path, d, round, fds[1]);
        }
        close(fds[1]);
        /* Let it commit for a while: until a threshold that varies per
         * round, or 3 s at most. */
        size_t want = 200 + (size_t)(round % 3) * 250;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (;;) {
            drain(fds[0], ids, &nids, 100, false);
            clock_gettime(CLOCK_MONOTONIC, &t1);
            if (nids >= want || t1.tv_sec - t0.tv_sec >= 3)
                break;
        }
        kill(pid, SIGKILL);
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        /* The child must have died by our signal, not by its own error. */
        assert_true(WIFSIGNALED(status));
        assert_int_equal(WTERMSIG(status), SIGKILL);
        drain(fds[0], ids, &nids, 1000, true);
        close(fds[0]);
        assert_true(nids > 0);
        print_message("# round %d: %zu writes reported before SIGKILL\n", round, nids);
        check_round(c->path, round, ids, nids);
    }
    free(ids);
}

static void t_crash_full(void **state)
{
    crash_rounds(*state, STORE_DURABILITY_FULL, 0);
}

static void t_crash_normal(void **state)
{
    crash_rounds(*state, STORE_DURABILITY_NORMAL, 10);
}

int main(void)
{
    static struct crash_ctx ctx;
    char tmpl[] = "/tmp/gp-crash-XXXXXX";
    char p[160];
    int rc;
    if (!mkdtemp(tmpl))
        return 1;
    snprintf(ctx.dir, sizeof(ctx.dir), "%s", tmpl);
    snprintf(ctx.path, sizeof(ctx.path), "%s/crash.db", tmpl);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_prestate(t_crash_full, &ctx),
        cmocka_unit_test_prestate(t_crash_normal, &ctx),
    };
    rc = cmocka_run_group_tests_name("store_crash", tests, NULL, NULL);
    unlink(ctx.path);
    snprintf(p, sizeof(p), "%s-wal", ctx.path);
    unlink(p);
    snprintf(p, sizeof(p), "%s-shm", ctx.path);
    unlink(p);
    rmdir(ctx.dir);
    return rc;
}
