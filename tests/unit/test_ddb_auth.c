/*
 * test_ddb_auth.c - SigV4 against AWS's published test-suite vectors
 * (tests/vectors/sigv4/, see its README) and the shared credentials file
 * parser on well-formed and hostile input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/ddb_auth.h"
#include "util/err.h"

#ifndef VECTOR_DIR
#define VECTOR_DIR "tests/vectors/sigv4"
#endif

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *p = NULL;
    long n;
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    p = calloc(1, (size_t)n + 1);
    if (fread(p, 1, (size_t)n, f) != (size_t)n) {
        free(p);
        p = NULL;
    }
    fclose(f);
    if (len)
        *len = (size_t)n;
    return p;
}

/* Signs <name>.req and compares with <name>.authz. */
static void check_vector(const char *name)
{
    char path[256], authz[600];
    struct sigv4_header h[8];
    char *names[8], *values[8];
    size_t nh = 0, len;
    struct ddb_creds cr = {0};
    snprintf(cr.key_id, sizeof(cr.key_id), "AKIDEXAMPLE");
    snprintf(cr.secret, sizeof(cr.secret), "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY");
    snprintf(path, sizeof(path), "%s/%s.req", VECTOR_DIR, name);
    char *req = slurp(path, &len);
    assert_non_null(req);
    snprintf(path, sizeof(path), "%s/%s.authz", VECTOR_DIR, name);
    char *want = slurp(path, NULL);
    assert_non_null(want);
    want[strcspn(want, "\n")] = '\0';

    /* Request line: METHOD TARGET HTTP/1.1 */
    char *line = req, *nl = strchr(line, '\n');
    assert_non_null(nl);
    *nl = '\0';
    char *sp1 = strchr(line, ' '), *sp2 = strrchr(line, ' ');
    assert_true(sp1 && sp2 && sp1 < sp2);
    *sp1 = *sp2 = '\0';
    char *target = sp1 + 1, *q = strchr(target, '?');
    if (q)
        *q++ = '\0';
    char *p = nl + 1, *date = NULL;
    while (*p && *p != '\n') {
        char *e = strchr(p, '\n'), *colon = strchr(p, ':');
        assert_non_null(e);
        assert_true(colon && colon < e);
        *e = '\0';
        *colon = '\0';
        names[nh] = p;
        values[nh] = colon + 1;
        h[nh].name = names[nh];
        h[nh].value = values[nh];
        if (!strcasecmp(p, "x-amz-date"))
            date = colon + 1;
        nh++;
        p = e + 1;
    }
    const char *body = *p == '\n' ? p + 1 : p;
    assert_non_null(date);
    assert_int_equal(sigv4_authorization(line, target, q, h, nh, body, strlen(body), date,
                                         "us-east-1", "service", &cr, authz, sizeof(authz)),
                     0);
    assert_string_equal(authz, want);
    /* Too small an output buffer is an error, not a truncation. */
    assert_int_equal(sigv4_authorization(line, target, q, h, nh, body, strlen(body), date,
                                         "us-east-1", "service", &cr, authz, 40),
                     ERR_TOOBIG);
    free(req);
    free(want);
}

static void t_get_vanilla(void **state)
{
    (void)state;
    check_vector("get-vanilla");
}

static void t_post_form(void **state)
{
    (void)state;
    check_vector("post-x-www-form-urlencoded");
}

static void t_query_order(void **state)
{
    (void)state;
    check_vector("get-vanilla-query-order-key-case");
}

static void t_bad_date(void **state)
{
    (void)state;
    struct ddb_creds cr = {.key_id = "A", .secret = "B"};
    struct sigv4_header h[] = {{"host", "x"}, {"x-amz-date", "2015"}};
    char out[600];
    assert_int_equal(sigv4_authorization("GET", "/", NULL, h, 2, "", 0, "2015", "us-east-1",
                                         "service", &cr, out, sizeof(out)),
                     ERR_INVALID);
}

static void t_creds_parse(void **state)
{
    (void)state;
    struct ddb_creds c;
    const char *text = "# comment\n"
                       "[default]\n"
                       "aws_access_key_id = AKIDDEFAULT\n"
                       "aws_secret_access_key=secretdefault  \n"
                       "\n"
                       "[profile prod]\r\n"
                       "; another comment\r\n"
                       "aws_access_key_id=AKIDPROD\r\n"
                       "aws_secret_access_key = s3cr3t/prod\r\n"
                       "aws_session_token = tok\r\n"
                       "[empty]\n"
                       "aws_access_key_id = only\n";
    assert_int_equal(ddb_creds_parse(text, strlen(text), NULL, &c), 0);
    assert_string_equal(c.key_id, "AKIDDEFAULT");
    assert_string_equal(c.secret, "secretdefault");
    assert_string_equal(c.token, "");
    assert_int_equal(ddb_creds_parse(text, strlen(text), "prod", &c), 0);
    assert_string_equal(c.key_id, "AKIDPROD");
    assert_string_equal(c.secret, "s3cr3t/prod");
    assert_string_equal(c.token, "tok");
    /* A profile without both keys, or none at all. */
    assert_int_equal(ddb_creds_parse(text, strlen(text), "empty", &c), ERR_NOTFOUND);
    assert_string_equal(c.key_id, "");
    assert_int_equal(ddb_creds_parse(text, strlen(text), "missing", &c), ERR_NOTFOUND);
    assert_int_equal(ddb_creds_parse("", 0, "default", &c), ERR_NOTFOUND);
}

static void t_creds_hostile(void **state)
{
    (void)state;
    struct ddb_creds c;
    /* An over-long value is refused, not truncated. */
    size_t n = 10000;
    char *big = malloc(n + 64);
    int off = snprintf(big, n + 64, "[default]\naws_secret_access_key=");
    memset(big + off, 'k', n);
    strcpy(big + off + n, "\naws_access_key_id=A\n");
    assert_int_equal(ddb_creds_parse(big, strlen(big), "default", &c), ERR_INVALID);
    assert_string_equal(c.secret, "");
    free(big);
    /* NUL bytes, no newline at the end, unterminated section, junk. */
    const char junk[] = "[def\0ault]\n[default\naws_access_key_id\n=x\n[default]\n"
                        "aws_access_key_id=K\naws_secret_access_key=S";
    assert_int_equal(ddb_creds_parse(junk, sizeof(junk) - 1, "default", &c), 0);
    assert_string_equal(c.key_id, "K");
    assert_string_equal(c.secret, "S");
}

static void t_creds_load(void **state)
{
    (void)state;
    struct ddb_creds c;
    char err[256], tmpl[] = "/tmp/gp-ddbauth-XXXXXX", path[300];
    assert_non_null(mkdtemp(tmpl));
    snprintf(path, sizeof(path), "%s/credentials", tmpl);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("[default]\naws_access_key_id=FILEKEY\naws_secret_access_key=FILESECRET\n"
          "[other]\naws_access_key_id=OTHER\naws_secret_access_key=OS\n",
          f);
    fclose(f);
    unsetenv("AWS_ACCESS_KEY_ID");
    unsetenv("AWS_SECRET_ACCESS_KEY");
    unsetenv("AWS_SESSION_TOKEN");
    unsetenv("AWS_PROFILE");
    setenv("AWS_SHARED_CREDENTIALS_FILE", path, 1);
    assert_int_equal(ddb_creds_load(NULL, &c, err, sizeof(err)), 0);
    assert_string_equal(c.key_id, "FILEKEY");
    setenv("AWS_PROFILE", "other", 1);
    assert_int_equal(ddb_creds_load(NULL, &c, err, sizeof(err)), 0);
    assert_string_equal(c.key_id, "OTHER");
    /* The environment wins over the file. */
    setenv("AWS_ACCESS_KEY_ID", "ENVKEY", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "ENVSECRET", 1);
    setenv("AWS_SESSION_TOKEN", "ENVTOKEN", 1);
    assert_int_equal(ddb_creds_load(NULL, &c, err, sizeof(err)), 0);
    assert_string_equal(c.key_id, "ENVKEY");
    assert_string_equal(c.token, "ENVTOKEN");
    unsetenv("AWS_ACCESS_KEY_ID");
    unsetenv("AWS_SECRET_ACCESS_KEY");
    unsetenv("AWS_SESSION_TOKEN");
    /* A missing profile: an error naming the profile, never a secret. */
    setenv("AWS_PROFILE", "nope", 1);
    assert_int_equal(ddb_creds_load(NULL, &c, err, sizeof(err)), ERR_NOTFOUND);
    assert_non_null(strstr(err, "nope"));
    assert_null(strstr(err, "FILESECRET"));
    unsetenv("AWS_PROFILE");
    unsetenv("AWS_SHARED_CREDENTIALS_FILE");
    unlink(path);
    rmdir(tmpl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_get_vanilla), cmocka_unit_test(t_post_form),
        cmocka_unit_test(t_query_order), cmocka_unit_test(t_bad_date),
        cmocka_unit_test(t_creds_parse), cmocka_unit_test(t_creds_hostile),
        cmocka_unit_test(t_creds_load),
    };
    return cmocka_run_group_tests_name("ddb_auth", tests, NULL, NULL);
}
