/*
 * test_audit_server.c - folding a server's capacity accounting (GET
 * /api/admin/partitions) into the hot-partition report: peaks only rise,
 * verdicts are judged again, unknown patterns are ignored, the kept JSON
 * drops the per-minute series and unused patterns, and an unreachable
 * server is an error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/audit_server.h"
#include "util/err.h"

static const char *answer =
    "{\"windowSeconds\":60,\"totals\":{\"wcu\":12,\"rcu\":3},\"families\":["
    "{\"family\":\"PRODUCT#<id>\",\"distinctKeys\":2,\"hottestKey\":\"PRODUCT#x\","
    "\"peakWcu\":900,\"peakRcu\":4,\"minutes\":[{\"minute\":\"m\",\"wcu\":900,\"rcu\":4}]},"
    "{\"family\":\"BRAND#<id>\",\"hottestKey\":\"BRAND#b\",\"peakWcu\":1,\"peakRcu\":0,"
    "\"minutes\":[]},"
    "{\"family\":\"VERIFY#<code>\",\"hottestKey\":null,\"peakWcu\":0,\"peakRcu\":0,"
    "\"minutes\":[]},"
    "{\"family\":\"NO_SUCH\",\"peakWcu\":5000},"
    "{\"family\":\"HASH#<hash>\",\"peakWcu\":\"lots\"}],"
    "\"top\":[{\"pk\":\"PRODUCT#x\",\"family\":\"PRODUCT#<id>\",\"wcu\":12,\"rcu\":3}]}";

static void test_fold_raises_and_judges(void **state)
{
    (void)state;
    struct census c;
    cJSON *parts = cJSON_Parse(answer);
    assert_non_null(parts);
    memset(&c, 0, sizeof c);
    c.fam[KF_PRODUCT].writes = 10;
    c.fam[KF_PRODUCT].peak_wcu = 50;
    snprintf(c.fam[KF_PRODUCT].peak_pk, sizeof c.fam[KF_PRODUCT].peak_pk, "PRODUCT#y");
    c.fam[KF_BRAND].writes = 3;
    c.fam[KF_BRAND].peak_wcu = 5;
    census_judge(&c);
    assert_int_equal(c.fam[KF_PRODUCT].risk, RISK_LOW);

    assert_int_equal(audit_server_fold(&c, parts), 1);
    assert_true(c.fam[KF_PRODUCT].peak_wcu == 900);
    assert_string_equal(c.fam[KF_PRODUCT].peak_pk, "PRODUCT#x");
    assert_int_equal(c.fam[KF_PRODUCT].risk, RISK_CRITICAL);
    /* The server's lower peak does not lower the census's. */
    assert_true(c.fam[KF_BRAND].peak_wcu == 5);
    assert_int_equal(c.fam[KF_HASH].risk, RISK_NONE); /* malformed peak ignored */
    /* Folding again changes nothing more. */
    assert_int_equal(audit_server_fold(&c, parts), 0);
    cJSON_Delete(parts);
}

static void test_fold_unwritten_family(void **state)
{
    (void)state;
    struct census c;
    cJSON *parts = cJSON_Parse(answer);
    memset(&c, 0, sizeof c);
    census_judge(&c);
    assert_int_equal(c.fam[KF_PRODUCT].risk, RISK_NONE);
    assert_int_equal(audit_server_fold(&c, parts), 2); /* PRODUCT and BRAND */
    assert_int_equal(c.fam[KF_PRODUCT].risk, RISK_CRITICAL);
    assert_int_equal(c.fam[KF_BRAND].risk, RISK_LOW);
    assert_int_equal(audit_server_fold(&c, NULL), 0);
    cJSON_Delete(parts);
}

static void test_json_and_text(void **state)
{
    (void)state;
    cJSON *parts = cJSON_Parse(answer);
    cJSON *j = audit_server_json(parts);
    cJSON *fams = cJSON_GetObjectItem(j, "families");
    /* VERIFY and HASH (nothing measured) are dropped; minutes are gone. */
    assert_int_equal(cJSON_GetArraySize(fams), 3);
    assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(fams, 0), "minutes"));
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(fams, 1), "family")->valuestring,
                        "BRAND#<id>");
    assert_non_null(cJSON_GetObjectItem(parts, "families")->child->child); /* input untouched */
    char *text = NULL;
    size_t len = 0;
    FILE *mf = open_memstream(&text, &len);
    audit_server_print(mf, "http://srv", parts);
    fclose(mf);
    assert_non_null(strstr(text, "Server capacity accounting (http://srv): 12.0 WCU, 3.0 RCU"));
    assert_non_null(strstr(text, "PRODUCT#x"));
    assert_null(strstr(text, "VERIFY#<code>"));
    free(text);
    cJSON_Delete(j);
    cJSON_Delete(parts);
}

static void test_fetch_unreachable(void **state)
{
    (void)state;
    cJSON *out = (cJSON *)1;
    char err[256] = "";
    assert_int_equal(audit_server_fetch("http://127.0.0.1:1/", "k", &out, err, sizeof err),
                     ERR_UNAVAILABLE);
    assert_null(out);
    assert_true(err[0] != '\0');
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fold_raises_and_judges),
        cmocka_unit_test(test_fold_unwritten_family),
        cmocka_unit_test(test_json_and_text),
        cmocka_unit_test(test_fetch_unreachable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
