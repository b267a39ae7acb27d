/*
 * test_ids.c - ids.c: shapes of every identifier, hex/base64url encoders
 * against known values, and that random values differ.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/wait.h>
#include <unistd.h>

#include <string.h>

#include "core/ids.h"

static int all_in(const char *s, const char *set)
{
    return strspn(s, set) == strlen(s);
}

#define HEX    "0123456789abcdef"
#define B64URL "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

static void test_encoders(void **state)
{
    (void)state;
    char out[64];
    ids_hex("\x00\x01\xab\xff", 4, out);
    assert_string_equal(out, "0001abff");
    ids_hex("", 0, out);
    assert_string_equal(out, "");
    /* RFC 4648 vectors, url alphabet, no padding */
    assert_int_equal(ids_base64url("", 0, out), 0);
    assert_string_equal(out, "");
    assert_int_equal(ids_base64url("f", 1, out), 2);
    assert_string_equal(out, "Zg");
    assert_int_equal(ids_base64url("fo", 2, out), 3);
    assert_string_equal(out, "Zm8");
    assert_int_equal(ids_base64url("foo", 3, out), 4);
    assert_string_equal(out, "Zm9v");
    assert_int_equal(ids_base64url("foobar", 6, out), 8);
    assert_string_equal(out, "Zm9vYmFy");
    assert_int_equal(ids_base64url("\xfb\xff\xbf", 3, out), 4);
    assert_string_equal(out, "-_-_");
}

static void test_shapes(void **state)
{
    (void)state;
    char a[64], b[64];

    ids_product_id(a);
    ids_product_id(b);
    assert_int_equal(strlen(a), 32);
    assert_true(all_in(a, HEX));
    assert_string_not_equal(a, b);

    ids_verification_code(a);
    assert_int_equal(strlen(a), 12);
    assert_true(all_in(a, B64URL));
    assert_true(ids_is_verification_code(a));

    for (int i = 0; i < 200; i++) {
        ids_uuid4(a);
        assert_int_equal(strlen(a), 36);
        assert_int_equal(a[8], '-');
        assert_int_equal(a[13], '-');
        assert_int_equal(a[18], '-');
        assert_int_equal(a[23], '-');
        assert_int_equal(a[14], '4');
        assert_non_null(strchr("89ab", a[19]));
        assert_true(all_in(a, HEX "-"));
    }

    ids_ingest_key(a);
    assert_int_equal(strlen(a), 36);
    assert_memory_equal(a, "aik_", 4);
    assert_true(all_in(a + 4, HEX));

    memset(a, '?', sizeof a);
    ids_random_hex(4, a);
    assert_int_equal(strlen(a), 8);
    assert_true(all_in(a, HEX));
    char big[2 * 100 + 1];
    ids_random_hex(100, big);
    assert_int_equal(strlen(big), 200);
    assert_true(all_in(big, HEX));

    /* random bytes are not all equal (1 in 2^256 false failure) */
    unsigned char r1[32], r2[32];
    ids_random(r1, sizeof r1);
    ids_random(r2, sizeof r2);
    assert_memory_not_equal(r1, r2, sizeof r1);
}

static void test_is_verification_code(void **state)
{
    (void)state;
    assert_true(ids_is_verification_code("wfPHybaFV3_a"));
    assert_true(ids_is_verification_code("pOszdB-1n6IC"));
    assert_false(ids_is_verification_code("wfPHybaFV3_"));
    assert_false(ids_is_verification_code("wfPHybaFV3_ab"));
    assert_false(ids_is_verification_code("wfPHybaFV3+a"));
    assert_false(ids_is_verification_code("wfPHyba V3_a"));
    assert_false(ids_is_verification_code(""));
    assert_false(ids_is_verification_code(NULL));
    assert_false(ids_is_verification_code("COUNTERFEIT_CLONED_TAG"));
}

/* A forked child never hands out the bytes its parent's pool will: both
 * draw right after the fork, from a pool primed before it. */
static void test_random_after_fork(void **state)
{
    (void)state;
    unsigned char prime[8], mine[16], theirs[16];
    int fds[2];
    ids_random(prime, sizeof prime); /* the pool now holds unused bytes */
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        unsigned char b[16];
        ids_random(b, sizeof b);
        _exit(write(fds[1], b, sizeof b) == (ssize_t)sizeof b ? 0 : 1);
    }
    close(fds[1]);
    ids_random(mine, sizeof mine);
    assert_int_equal(read(fds[0], theirs, sizeof theirs), (ssize_t)sizeof theirs);
    close(fds[0]);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_memory_not_equal(mine, theirs, sizeof mine);
    /* consecutive small draws differ, and a large one bypasses the pool */
    unsigned char a[16], b[16], big[200];
    ids_random(a, sizeof a);
    ids_random(b, sizeof b);
    assert_memory_not_equal(a, b, sizeof a);
    ids_random(big, sizeof big);
    assert_memory_not_equal(big, big + 100, 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encoders),
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_is_verification_code),
        cmocka_unit_test(test_random_after_fork),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
