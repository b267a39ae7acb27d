/*
 * test_store_dynamodb.c - the DynamoDB driver: expression building (no
 * DynamoDB needed) and, when GENUPROOF_DDB_ENDPOINT names a DynamoDB (Local)
 * endpoint, the whole store conformance suite against it, each test on a
 * table created for the run and emptied between tests (tests/e2e/ddb_store.sh starts DynamoDB Local
 * and sets the variable; without it that group is skipped).  The suite's "erase" step deletes every
 * item through ddb_call_many.
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

#include "store/ddb_http.h"
#include "store/ddb_table.h"
#include "store/store.h"
#include "store/store_dynamodb.h"
#include "store_conformance.h"
#include "util/err.h"

static const char *name_of(const struct ddb_expr *x, const char *ph)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(x->names, ph);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void t_cond_exprs(void **state)
{
    (void)state;
    struct ddb_expr x;
    struct buf b = BUF_INIT(0);
    struct store_cond c = {.kind = STORE_COND_NOT_EXISTS};
    ddb_expr_init(&x, 1700000000.5);
    assert_int_equal(ddb_expr_cond(&x, &b, &c, false), 0);
    assert_string_equal(b.data, "(attribute_not_exists(#n1) OR #n0 < :now)");
    assert_string_equal(name_of(&x, "#n0"), "ttl");
    assert_string_equal(name_of(&x, "#n1"), "PK");
    const cJSON *now = cJSON_GetObjectItemCaseSensitive(x.values, ":now");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(now, "N")->valuestring, "1700000000.5");
    buf_reset(&b);
    cJSON *v = cJSON_CreateString("active");
    c = (struct store_cond){.kind = STORE_COND_ATTR_EQ, .attr = "status", .value = v};
    assert_int_equal(ddb_expr_cond(&x, &b, &c, true), 0);
    /* Names are reused; the value is marshalled. */
    assert_string_equal(b.data, "(attribute_exists(#n1) AND (NOT (#n0 < :now)) AND #n2 = :v0) AND "
                                "(NOT (#n0 < :now))");
    assert_string_equal(name_of(&x, "#n2"), "status");
    const cJSON *v0 = cJSON_GetObjectItemCaseSensitive(x.values, ":v0");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(v0, "S")->valuestring, "active");
    cJSON_Delete(v);
    /* No condition and not live: nothing at all; live alone: the expiry
     * term only. */
    buf_reset(&b);
    assert_int_equal(ddb_expr_cond(&x, &b, NULL, false), 0);
    assert_int_equal(b.len, 0);
    assert_int_equal(ddb_expr_cond(&x, &b, NULL, true), 0);
    assert_string_equal(b.data, "(NOT (#n0 < :now))");
    /* attach moves names and values into the request. */
    cJSON *req = cJSON_CreateObject();
    ddb_expr_attach(&x, req);
    assert_non_null(cJSON_GetObjectItemCaseSensitive(req, "ExpressionAttributeNames"));
    assert_non_null(cJSON_GetObjectItemCaseSensitive(req, "ExpressionAttributeValues"));
    assert_null(x.names->child);
    cJSON_Delete(req);
    ddb_expr_free(&x);
    buf_free(&b);
}

static void t_update_exprs(void **state)
{
    (void)state;
    struct ddb_expr x;
    struct buf b = BUF_INIT(0);
    cJSON *meta = cJSON_Parse("{\"z\":1,\"a\":\"x\"}"), *st = cJSON_CreateString("new");
    struct store_action a[] = {
        {.kind = STORE_ACT_SET, .attr = "metadata", .value = meta},
        {.kind = STORE_ACT_SET_IF_NOT_EXISTS, .attr = "status", .value = st},
        {.kind = STORE_ACT_ADD, .attr = "scans", .delta = 2},
        {.kind = STORE_ACT_REMOVE, .attr = "data"},
    };
    ddb_expr_init(&x, 1);
    assert_int_equal(ddb_expr_update(&x, &b, a, 4), 0);
    assert_string_equal(b.data, "SET #n0 = :v0, #n1 = :v1, #n2 = if_not_exists(#n2, :v2) "
                                "REMOVE #n4, #n5 ADD #n3 :v3");
    assert_string_equal(name_of(&x, "#n1"), "metadataCanonical");
    assert_string_equal(name_of(&x, "#n5"), "dataCanonical");
    /* The companion holds the canonical text, key order kept. */
    const cJSON *v1 = cJSON_GetObjectItemCaseSensitive(x.values, ":v1");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(v1, "S")->valuestring,
                        "{\"z\":1,\"a\":\"x\"}");
    const cJSON *v3 = cJSON_GetObjectItemCaseSensitive(x.values, ":v3");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(v3, "N")->valuestring, "2");
    /* Setting metadata to a non-object drops the companion. */
    buf_reset(&b);
    cJSON *nul = cJSON_CreateNull();
    struct store_action s1 = {.kind = STORE_ACT_SET, .attr = "metadata", .value = nul};
    assert_int_equal(ddb_expr_update(&x, &b, &s1, 1), 0);
    assert_string_equal(b.data, "SET #n0 = :v4 REMOVE #n1");
    cJSON_Delete(nul);
    cJSON_Delete(meta);
    cJSON_Delete(st);
    ddb_expr_free(&x);
    buf_free(&b);
}

/* ---------- conformance against a live endpoint ---------- */

struct ddb_ctx {
    const char *endpoint;
    char table[64];
    struct ddb_http *h;
};

static struct store *open_ddb(void *arg)
{
    struct ddb_ctx *c = arg;
    struct store_dynamodb_options o = {.endpoint = c->endpoint, .table = c->table};
    char err[256];
    struct store *s = store_open_dynamodb(&o, err, sizeof(err));
    if (!s)
        fprintf(stderr, "open: %s\n", err);
    return s;
}

/* Erases the table: scans every key and deletes the items in
 * concurrent groups (ddb_call_many), much faster than re-creating it. */
static void cleanup_ddb(void *arg)
{
    struct ddb_ctx *c = arg;
    cJSON *start = NULL;
    do {
        cJSON *req = cJSON_CreateObject(), *resp = NULL;
        cJSON_AddStringToObject(req, "TableName", c->table);
        cJSON_AddStringToObject(req, "ProjectionExpression", "PK, SK");
        if (start)
            cJSON_AddItemToObject(req, "ExclusiveStartKey", start);
        start = NULL;
        int rc = ddb_call(c->h, "DynamoDB_20120810.Scan", req, &resp, NULL);
        assert_int_equal(rc, 0);
        const cJSON *items = cJSON_GetObjectItemCaseSensitive(resp, "Items"), *it;
        size_t n = (size_t)cJSON_GetArraySize(items), k = 0;
        struct ddb_call_slot *slots = calloc(n ? n : 1, sizeof(*slots));
        cJSON *dels = cJSON_CreateArray();
        cJSON_ArrayForEach(it, items)
        {
            cJSON *d = cJSON_CreateObject();
            cJSON_AddStringToObject(d, "TableName", c->table);
            cJSON_AddItemToObject(d, "Key", cJSON_Duplicate(it, true));
            cJSON_AddItemToArray(dels, d);
            slots[k].target = "DynamoDB_20120810.DeleteItem";
            slots[k].req = d;
            k++;
        }
        if (n)
            assert_int_equal(ddb_call_many(c->h, slots, n), 0);
        for (size_t i = 0; i < n; i++)
            cJSON_Delete(slots[i].resp);
        free(slots);
        cJSON_Delete(dels);
        const cJSON *lek = cJSON_GetObjectItemCaseSensitive(resp, "LastEvaluatedKey");
        if (cJSON_IsObject(lek))
            start = cJSON_Duplicate(lek, true);
        cJSON_Delete(req);
        cJSON_Delete(resp);
    } while (start);
}

int main(void)
{
    int fails;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_cond_exprs),
        cmocka_unit_test(t_update_exprs),
    };
    fails = cmocka_run_group_tests_name("store_dynamodb", tests, NULL, NULL);
    const char *ep = getenv("GENUPROOF_DDB_ENDPOINT");
    if (!ep || !*ep) {
        printf("store_conformance_dynamodb: skipped (GENUPROOF_DDB_ENDPOINT not set)\n");
        return fails ? 1 : 0;
    }
    /* DynamoDB Local accepts any credentials. */
    setenv("AWS_ACCESS_KEY_ID", "local", 0);
    setenv("AWS_SECRET_ACCESS_KEY", "local", 0);
    struct ddb_ctx c = {.endpoint = ep};
    struct ddb_http_config cfg = {.endpoint = ep};
    char err[256];
    snprintf(c.table, sizeof(c.table), "gp_conformance_%ld", (long)getpid());
    c.h = ddb_http_new(&cfg, err, sizeof(err));
    if (!c.h) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    int rc = ddb_table_create(c.h, c.table, 60, NULL);
    if (rc) {
        fprintf(stderr, "create table %s: %s\n", c.table, err_str(rc));
        ddb_http_free(c.h);
        return 1;
    }
    fails += store_conformance_run("store_conformance_dynamodb", open_ddb, cleanup_ddb, &c);
    ddb_table_delete(c.h, c.table, 60);
    ddb_http_free(c.h);
    return fails ? 1 : 0;
}
