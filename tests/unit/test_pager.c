/*
 * test_pager.c - multi-page store queries (api/pager.c) on the SQLite
 * store: every page is read, bounded reads stop at N, callbacks can stop
 * early or fail, GSI1 ranges page too.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/pager.h"
#include "util/err.h"
#include "tmpdir.h"

/* 150 KB items: 15 of them span three 1 MB pages. */
#define NITEMS  15
#define PAYLOAD (150 * 1024)

struct fixture {
    char dir[64];
    char path[128];
    struct store *s;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    struct store_options o = {.durability = STORE_DURABILITY_NORMAL};
    char err[256];
    char *pad = malloc(PAYLOAD + 1);

    snprintf(f->dir, sizeof f->dir, "/tmp/gp-test-pager.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof f->path, "%s/db", f->dir);
    o.path = f->path;
    f->s = store_open_sqlite(&o, err, sizeof err);
    assert_non_null(f->s);
    memset(pad, 'x', PAYLOAD);
    pad[PAYLOAD] = '\0';
    for (int i = 0; i < NITEMS; i++) {
        char sk[32], gsk[32];
        cJSON *it = cJSON_CreateObject();
        snprintf(sk, sizeof sk, "ITEM#%03d", i);
        snprintf(gsk, sizeof gsk, "G#%03d", i);
        cJSON_AddStringToObject(it, "PK", "P");
        cJSON_AddStringToObject(it, "SK", sk);
        cJSON_AddStringToObject(it, "GSI1PK", "GP");
        cJSON_AddStringToObject(it, "GSI1SK", gsk);
        cJSON_AddNumberToObject(it, "n", i);
        cJSON_AddStringToObject(it, "pad", pad);
        assert_int_equal(store_put(f->s, it, NULL), 0);
        cJSON_Delete(it);
    }
    /* One item outside the prefix. */
    cJSON *other = cJSON_Parse("{\"PK\":\"P\",\"SK\":\"OTHER\"}");
    assert_int_equal(store_put(f->s, other, NULL), 0);
    cJSON_Delete(other);
    free(pad);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    store_close(f->s);
    assert_int_equal(ut_rmtree(f->dir), 0);
    free(f);
    return 0;
}

struct seen {
    int n[NITEMS + 2];
    int count;
    int stop_at; /* return 1 at this count (0: never) */
    int fail_at; /* return ERR_IO at this count (0: never) */
};

static int collect_cb(void *arg, const cJSON *item)
{
    struct seen *s = arg;
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(item, "n");

    assert_true(cJSON_IsNumber(n));
    s->n[s->count++] = (int)n->valuedouble;
    if (s->fail_at && s->count == s->fail_at)
        return ERR_IO;
    if (s->stop_at && s->count == s->stop_at)
        return 1;
    return 0;
}

static void test_each_all_pages(void **state)
{
    struct fixture *f = *state;
    struct store_query q = {.pk = "P", .sk_op = STORE_SK_BEGINS, .sk = "ITEM#", .forward = false};
    struct store_result one = {0};
    struct seen s = {0};
    size_t seen = 0;

    /* A single page does not hold everything (the point of the pager). */
    assert_int_equal(store_query(f->s, &q, &one), 0);
    assert_true(one.count < NITEMS);
    assert_non_null(one.next);
    store_result_free(&one);

    assert_int_equal(pager_each(f->s, &q, 0, collect_cb, &s, &seen), 0);
    assert_int_equal(seen, NITEMS);
    assert_int_equal(s.count, NITEMS);
    for (int i = 0; i < NITEMS; i++)
        assert_int_equal(s.n[i], NITEMS - 1 - i);

    /* Bounded. */
    memset(&s, 0, sizeof s);
    assert_int_equal(pager_each(f->s, &q, 4, collect_cb, &s, &seen), 0);
    assert_int_equal(seen, 4);
    assert_int_equal(s.n[3], NITEMS - 4);

    /* Early stop and error from the callback. */
    memset(&s, 0, sizeof s);
    s.stop_at = 9;
    assert_int_equal(pager_each(f->s, &q, 0, collect_cb, &s, &seen), 0);
    assert_int_equal(seen, 9);
    memset(&s, 0, sizeof s);
    s.fail_at = 10;
    assert_int_equal(pager_each(f->s, &q, 0, collect_cb, &s, &seen), ERR_IO);
    assert_int_equal(seen, 10);
}

static void test_collect(void **state)
{
    struct fixture *f = *state;
    struct store_query q = {.pk = "P", .sk_op = STORE_SK_BEGINS, .sk = "ITEM#", .forward = true};
    cJSON *out = NULL;

    assert_int_equal(pager_collect(f->s, &q, 0, &out), 0);
    assert_int_equal(cJSON_GetArraySize(out), NITEMS);
    for (int i = 0; i < NITEMS; i++)
        assert_int_equal(
            (int)cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(out, i), "n")->valuedouble, i);
    cJSON_Delete(out);

    assert_int_equal(pager_collect(f->s, &q, 7, &out), 0);
    assert_int_equal(cJSON_GetArraySize(out), 7);
    cJSON_Delete(out);
    assert_int_equal(pager_collect(f->s, &q, 100, &out), 0);
    assert_int_equal(cJSON_GetArraySize(out), NITEMS);
    cJSON_Delete(out);

    /* GSI1, descending. */
    struct store_query g = {.index = STORE_INDEX_GSI1,
                            .pk = "GP",
                            .sk_op = STORE_SK_BEGINS,
                            .sk = "G#",
                            .forward = false};
    assert_int_equal(pager_collect(f->s, &g, 0, &out), 0);
    assert_int_equal(cJSON_GetArraySize(out), NITEMS);
    assert_int_equal(
        (int)cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(out, 0), "n")->valuedouble,
        NITEMS - 1);
    cJSON_Delete(out);

    /* Empty range. */
    q.sk = "NOPE#";
    assert_int_equal(pager_collect(f->s, &q, 0, &out), 0);
    assert_int_equal(cJSON_GetArraySize(out), 0);
    cJSON_Delete(out);

    /* A store error is returned and nothing is handed out. */
    struct store_query bad = {.pk = NULL};
    out = (cJSON *)1;
    assert_true(pager_collect(f->s, &bad, 0, &out) < 0);
    assert_null(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_each_all_pages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_collect, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
