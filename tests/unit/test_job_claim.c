/*
 * test_job_claim.c - work items taken by one of several processes
 * (api/job_claim.c) on the SQLite store: two takers that saw the same
 * item, exactly one wins; a lapsed claim can be taken over and the
 * stalled holder can no longer write; a given-back item is free again;
 * an item that vanished is not recreated by a claim.
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

#include "api/job_claim.h"
#include "util/err.h"
#include "tmpdir.h"

static void put_job(struct store *s, const char *sk, const char *token)
{
    cJSON *it = cJSON_CreateObject();
    cJSON_AddStringToObject(it, "PK", "JOB");
    cJSON_AddStringToObject(it, "SK", sk);
    cJSON_AddStringToObject(it, "GSI1PK", "JOB_PENDING");
    cJSON_AddStringToObject(it, "GSI1SK", sk);
    cJSON_AddStringToObject(it, "status", "pending");
    if (token)
        cJSON_AddStringToObject(it, CLAIM_ATTR_TOKEN, token);
    assert_int_equal(store_put(s, it, NULL), 0);
    cJSON_Delete(it);
}

static cJSON *get_job(struct store *s, const char *sk)
{
    cJSON *it = NULL;
    assert_int_equal(store_get(s, "JOB", sk, true, &it), 0);
    return it;
}

static void t_free_states(void **state)
{
    (void)state;
    cJSON *it = cJSON_CreateObject();
    assert_true(claim_is_free(it, 1000)); /* no token */
    cJSON_AddStringToObject(it, CLAIM_ATTR_TOKEN, "");
    assert_true(claim_is_free(it, 1000)); /* given back */
    cJSON_ReplaceItemInObject(it, CLAIM_ATTR_TOKEN, cJSON_CreateString("abc"));
    assert_true(claim_is_free(it, 1000)); /* token without a time: lapsed */
    cJSON_AddNumberToObject(it, CLAIM_ATTR_UNTIL, 2000);
    assert_false(claim_is_free(it, 1000));
    assert_false(claim_is_free(it, 1999));
    assert_true(claim_is_free(it, 2000));
    cJSON_Delete(it);
}

/* Two processes polled the same free item: one claim wins. */
static void t_one_winner(void **state)
{
    struct ut_db *f = *state;
    char a[CLAIM_TOKEN_LEN + 1], b[CLAIM_TOKEN_LEN + 1];
    put_job(f->s, "J1", "");
    cJSON *seen_a = get_job(f->s, "J1"), *seen_b = get_job(f->s, "J1");

    assert_int_equal(claim_take(f->s, "JOB", "J1", seen_a, 5000, a), 0);
    assert_int_equal(strlen(a), CLAIM_TOKEN_LEN);
    assert_int_equal(claim_take(f->s, "JOB", "J1", seen_b, 5000, b), ERR_CONDITION);
    assert_string_equal(b, "");

    cJSON *now = get_job(f->s, "J1");
    assert_string_equal(cJSON_GetObjectItem(now, CLAIM_ATTR_TOKEN)->valuestring, a);
    assert_false(claim_is_free(now, 4999));
    assert_string_equal(cJSON_GetObjectItem(now, "status")->valuestring, "pending");
    cJSON_Delete(now);
    cJSON_Delete(seen_a);
    cJSON_Delete(seen_b);
}

/* A lapsed claim is taken over; the old holder's write then fails. */
static void t_takeover(void **state)
{
    struct ut_db *f = *state;
    char a[CLAIM_TOKEN_LEN + 1], b[CLAIM_TOKEN_LEN + 1];
    struct store_cond mine;
    cJSON *v, *done = cJSON_CreateString("delivered");
    const struct store_action set = {.kind = STORE_ACT_SET, .attr = "status", .value = done};

    put_job(f->s, "J2", "");
    cJSON *seen = get_job(f->s, "J2");
    assert_int_equal(claim_take(f->s, "JOB", "J2", seen, 1000, a), 0);
    cJSON_Delete(seen);

    seen = get_job(f->s, "J2");
    assert_true(claim_is_free(seen, 1000)); /* lapsed at 1000 */
    assert_int_equal(claim_take(f->s, "JOB", "J2", seen, 9000, b), 0);
    assert_string_not_equal(a, b);
    cJSON_Delete(seen);

    claim_cond_mine(&mine, &v, a);
    assert_int_equal(store_update(f->s, "JOB", "J2", &set, 1, &mine, NULL), ERR_CONDITION);
    cJSON_Delete(v);
    claim_cond_mine(&mine, &v, b);
    assert_int_equal(store_update(f->s, "JOB", "J2", &set, 1, &mine, NULL), 0);
    cJSON_Delete(v);
    cJSON_Delete(done);

    cJSON *now = get_job(f->s, "J2");
    assert_string_equal(cJSON_GetObjectItem(now, "status")->valuestring, "delivered");
    cJSON_Delete(now);
}

/* Given back: free again, and the next claim needs the "" it saw. */
static void t_release(void **state)
{
    struct ut_db *f = *state;
    char a[CLAIM_TOKEN_LEN + 1], b[CLAIM_TOKEN_LEN + 1];
    struct store_action acts[2];
    struct store_cond mine;
    cJSON *v;

    put_job(f->s, "J3", "");
    cJSON *seen = get_job(f->s, "J3");
    assert_int_equal(claim_take(f->s, "JOB", "J3", seen, 99999999, a), 0);
    cJSON_Delete(seen);

    claim_release_acts(acts);
    claim_cond_mine(&mine, &v, a);
    assert_int_equal(store_update(f->s, "JOB", "J3", acts, 2, &mine, NULL), 0);
    cJSON_Delete(v);

    seen = get_job(f->s, "J3");
    assert_string_equal(cJSON_GetObjectItem(seen, CLAIM_ATTR_TOKEN)->valuestring, "");
    assert_null(cJSON_GetObjectItem(seen, CLAIM_ATTR_UNTIL));
    assert_true(claim_is_free(seen, 0));
    assert_int_equal(claim_take(f->s, "JOB", "J3", seen, 5000, b), 0);
    cJSON_Delete(seen);
}

/* An item written without a token is claimed once; a vanished one is
 * not recreated. */
static void t_no_token_and_gone(void **state)
{
    struct ut_db *f = *state;
    char a[CLAIM_TOKEN_LEN + 1], b[CLAIM_TOKEN_LEN + 1];
    cJSON *it = NULL;

    put_job(f->s, "J4", NULL);
    cJSON *seen = get_job(f->s, "J4");
    assert_int_equal(claim_take(f->s, "JOB", "J4", seen, 5000, a), 0);
    assert_int_equal(claim_take(f->s, "JOB", "J4", seen, 5000, b), ERR_CONDITION);

    assert_int_equal(store_delete(f->s, "JOB", "J4", NULL), 0);
    cJSON *gone = cJSON_CreateObject(); /* as a stale poll saw it: no token */
    assert_int_equal(claim_take(f->s, "JOB", "J4", gone, 5000, b), ERR_CONDITION);
    assert_int_equal(store_get(f->s, "JOB", "J4", true, &it), ERR_NOTFOUND);
    cJSON_Delete(gone);
    cJSON_Delete(seen);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_free_states),
        cmocka_unit_test_setup_teardown(t_one_winner, ut_db_setup, ut_db_teardown),
        cmocka_unit_test_setup_teardown(t_takeover, ut_db_setup, ut_db_teardown),
        cmocka_unit_test_setup_teardown(t_release, ut_db_setup, ut_db_teardown),
        cmocka_unit_test_setup_teardown(t_no_token_and_gone, ut_db_setup, ut_db_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
