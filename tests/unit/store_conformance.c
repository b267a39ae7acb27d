/*
 * store_conformance.c - behaviour every store driver must show (see
 * store_conformance.h): single-item operations and conditions, updates,
 * queries on the table and GSI1 with every sort-key condition, pagination
 * both ways, transactions and their rollback, group commit, TTL, the change
 * stream with checkpoints and trimming, capacity accounting, throttling.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store_conformance.h"
#include "util/err.h"

/* 2023-11-14T22:13:20Z: every test starts its fake clock here. */
#define T0_MS 1700000000000LL

struct conf_factory {
    struct store *(*open)(void *ctx);
    void (*cleanup)(void *ctx);
    void *ctx;
};

struct conf {
    const struct conf_factory *f;
    struct store *s;
    int64_t now_ms;
    int commits;
    uint64_t last_seq;
    bool write_in_cb;
};

static int64_t fake_clock(void *arg)
{
    return ((struct conf *)arg)->now_ms;
}

static void put_key(struct store *s, const char *pk, const char *sk);

static void count_commit(void *arg, uint64_t last_seq)
{
    struct conf *c = arg;
    c->commits++;
    c->last_seq = last_seq;
    if (c->write_in_cb) {
        /* A callback may write: the batch it heard about is over. */
        c->write_in_cb = false;
        assert_false(store_batch_active(c->s));
        put_key(c->s, "CB", "1");
    }
}

static struct store *conf_open(struct conf *c)
{
    c->s = c->f->open(c->f->ctx);
    assert_non_null(c->s);
    store_set_clock(c->s, fake_clock, c);
    return c->s;
}

static void conf_reopen(struct conf *c)
{
    store_close(c->s);
    c->s = NULL;
    conf_open(c);
}

static int conf_setup(void **state)
{
    struct conf *c = calloc(1, sizeof(*c));
    c->f = *state;
    c->now_ms = T0_MS;
    c->f->cleanup(c->f->ctx);
    c->s = c->f->open(c->f->ctx);
    if (!c->s) {
        free(c);
        return -1;
    }
    store_set_clock(c->s, fake_clock, c);
    *state = c;
    return 0;
}

static int conf_teardown(void **state)
{
    struct conf *c = *state;
    store_close(c->s);
    c->f->cleanup(c->f->ctx);
    free(c);
    return 0;
}

static cJSON *J(const char *text)
{
    cJSON *v = cJSON_Parse(text);
    assert_non_null(v);
    return v;
}

static int put_json(struct store *s, const char *text, const struct store_cond *cond)
{
    cJSON *v = J(text);
    int rc = store_put(s, v, cond);
    cJSON_Delete(v);
    return rc;
}

static void put_ok(struct store *s, const char *text)
{
    assert_int_equal(put_json(s, text, NULL), 0);
}

static void put_key(struct store *s, const char *pk, const char *sk)
{
    cJSON *v = cJSON_CreateObject();
    cJSON_AddStringToObject(v, "PK", pk);
    cJSON_AddStringToObject(v, "SK", sk);
    assert_int_equal(store_put(s, v, NULL), 0);
    cJSON_Delete(v);
}

static const char *attr_str(const cJSON *item, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, name);
    if (!cJSON_IsString(v))
        print_error("attribute %s is not a string\n", name);
    assert_true(cJSON_IsString(v));
    return v->valuestring;
}

static double attr_num(const cJSON *item, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, name);
    assert_true(cJSON_IsNumber(v));
    return v->valuedouble;
}

static bool exists(struct store *s, const char *pk, const char *sk)
{
    cJSON *out = NULL;
    int rc = store_get(s, pk, sk, true, &out);
    assert_true(rc == 0 || rc == ERR_NOTFOUND);
    cJSON_Delete(out);
    return rc == 0;
}

static uint64_t head_of(struct store *s)
{
    uint64_t h = 99;
    assert_int_equal(store_stream_head(s, &h), 0);
    return h;
}

/* Counts the stream records after `after`. */
static size_t stream_count(struct store *s, uint64_t after)
{
    struct stream_record *r = NULL;
    size_t n = 0;
    assert_int_equal(store_stream_read(s, after, 10000, &r, &n), 0);
    store_stream_free(r, n);
    return n;
}

/* Asserts the stream holds n records after `after`; drivers without a
 * stream readable through the store (DynamoDB) skip the check. */
static void assert_stream_count(struct store *s, uint64_t after, size_t n)
{
    if (store_has_stream(s))
        assert_int_equal(stream_count(s, after), n);
}

/* Skips a test that is about the change stream or group-commit rollback
 * on drivers that have neither (DynamoDB). */
#define NEED_STREAM(c)                                                                             \
    do {                                                                                           \
        if (!store_has_stream((c)->s))                                                             \
            skip();                                                                                \
    } while (0)

/* Runs a query and returns the concatenated SK (or GSI1SK+PK) of the
 * items, comma separated, following pages; *pages counts them. */
static char *query_all(struct store *s, struct store_query q, int *pages)
{
    static char out[8192];
    struct store_result res;
    char *cursor = NULL;
    out[0] = '\0';
    *pages = 0;
    for (;;) {
        q.start = cursor;
        assert_int_equal(store_query(s, &q, &res), 0);
        (*pages)++;
        assert_true(*pages < 1000);
        const cJSON *it;
        cJSON_ArrayForEach(it, res.items)
        {
            if (out[0])
                strcat(out, ",");
            if (q.index == STORE_INDEX_GSI1) {
                strcat(out, attr_str(it, "GSI1SK"));
                strcat(out, "/");
                strcat(out, attr_str(it, "PK"));
            } else {
                strcat(out, attr_str(it, "SK"));
            }
        }
        assert_int_equal(cJSON_GetArraySize(res.items), res.count);
        free(cursor);
        cursor = res.next ? strdup(res.next) : NULL;
        store_result_free(&res);
        if (!cursor)
            break;
    }
    return out;
}

/* ---------- single items ---------- */

static void t_put_get_delete(void **state)
{
    struct conf *c = *state;
    cJSON *in = J("{\"PK\":\"PRODUCT#p1\",\"SK\":\"META\",\"name\":\"Bag \\u00e9\",\"n\":12.5,"
                  "\"ok\":true,\"none\":null,\"tags\":[\"a\",1],\"m\":{\"x\":{\"y\":[]}}}");
    cJSON *out = NULL;
    assert_int_equal(store_put(c->s, in, NULL), 0);
    assert_int_equal(store_get(c->s, "PRODUCT#p1", "META", true, &out), 0);
    assert_true(cJSON_Compare(in, out, true));
    cJSON_Delete(out);
    assert_int_equal(store_get(c->s, "PRODUCT#p1", "OTHER", false, &out), ERR_NOTFOUND);
    assert_null(out);
    /* Replace. */
    put_ok(c->s, "{\"PK\":\"PRODUCT#p1\",\"SK\":\"META\",\"name\":\"v2\"}");
    assert_int_equal(store_get(c->s, "PRODUCT#p1", "META", false, &out), 0);
    assert_string_equal(attr_str(out, "name"), "v2");
    assert_null(cJSON_GetObjectItemCaseSensitive(out, "n"));
    cJSON_Delete(out);
    assert_int_equal(store_delete(c->s, "PRODUCT#p1", "META", NULL), 0);
    assert_false(exists(c->s, "PRODUCT#p1", "META"));
    /* Deleting an absent item is not an error. */
    assert_int_equal(store_delete(c->s, "PRODUCT#p1", "META", NULL), 0);
    cJSON_Delete(in);
    assert_string_equal(store_driver_name(c->s), store_driver_name(c->s));
}

static void t_invalid_items(void **state)
{
    struct conf *c = *state;
    cJSON *out = NULL, *big;
    char *blob;
    assert_int_equal(put_json(c->s, "{\"SK\":\"x\"}", NULL), ERR_INVALID);
    assert_int_equal(put_json(c->s, "{\"PK\":\"a\",\"SK\":3}", NULL), ERR_INVALID);
    assert_int_equal(put_json(c->s, "{\"PK\":\"\",\"SK\":\"x\"}", NULL), ERR_INVALID);
    assert_int_equal(put_json(c->s, "{\"PK\":\"a\",\"SK\":\"x\",\"GSI1PK\":5}", NULL), ERR_INVALID);
    assert_int_equal(put_json(c->s, "[1,2]", NULL), ERR_INVALID);
    assert_int_equal(store_put(c->s, NULL, NULL), ERR_INVALID);
    assert_int_equal(store_get(c->s, NULL, "x", true, &out), ERR_INVALID);
    assert_int_equal(store_get(c->s, "a", "", true, &out), ERR_INVALID);
    assert_int_equal(store_delete(c->s, "a", NULL, NULL), ERR_INVALID);
    /* A 2049-byte partition key is over DynamoDB's limit. */
    blob = malloc(STORE_ITEM_MAX + 2);
    memset(blob, 'k', STORE_PK_MAX + 1);
    blob[STORE_PK_MAX + 1] = '\0';
    assert_int_equal(store_get(c->s, blob, "x", true, &out), ERR_INVALID);
    /* 400 KB limit: an attribute of exactly the remaining bytes fits. */
    big = J("{\"PK\":\"a\",\"SK\":\"b\"}");
    memset(blob, 'x', STORE_ITEM_MAX + 1);
    blob[STORE_ITEM_MAX + 1] = '\0';
    cJSON_AddStringToObject(big, "v", blob);
    assert_int_equal(store_put(c->s, big, NULL), ERR_TOOBIG);
    cJSON_Delete(big);
    big = J("{\"PK\":\"a\",\"SK\":\"b\"}");
    /* PK(2)+1 + SK(2)+1 + "v"(1) = 7 bytes besides the value. */
    blob[STORE_ITEM_MAX - 7] = '\0';
    cJSON_AddStringToObject(big, "v", blob);
    assert_int_equal(store_item_size(big), STORE_ITEM_MAX);
    assert_int_equal(store_put(c->s, big, NULL), 0);
    assert_int_equal(store_get(c->s, "a", "b", true, &out), 0);
    assert_true(cJSON_Compare(big, out, true));
    cJSON_Delete(out);
    cJSON_Delete(big);
    free(blob);
}

static void t_conditional_put(void **state)
{
    struct conf *c = *state;
    struct store_cond absent = {.kind = STORE_COND_NOT_EXISTS};
    struct store_cond present = {.kind = STORE_COND_EXISTS};
    cJSON *out = NULL;
    uint64_t h;
    assert_int_equal(put_json(c->s, "{\"PK\":\"A\",\"SK\":\"1\",\"v\":1}", &present),
                     ERR_CONDITION);
    assert_int_equal(put_json(c->s, "{\"PK\":\"A\",\"SK\":\"1\",\"v\":1}", &absent), 0);
    h = head_of(c->s);
    assert_int_equal(put_json(c->s, "{\"PK\":\"A\",\"SK\":\"1\",\"v\":2}", &absent), ERR_CONDITION);
    /* The losing write left nothing: value and stream unchanged. */
    assert_int_equal(store_get(c->s, "A", "1", true, &out), 0);
    assert_int_equal(attr_num(out, "v"), 1);
    cJSON_Delete(out);
    assert_int_equal(head_of(c->s), h);
    assert_int_equal(
        put_json(c->s, "{\"PK\":\"A\",\"SK\":\"1\",\"v\":3,\"s\":\"x\",\"b\":true}", &present), 0);

    /* ATTR_EQ: numbers numerically, strings byte-wise, booleans. */
    cJSON *three = cJSON_CreateNumber(3.0), *four = cJSON_CreateNumber(4);
    cJSON *sx = cJSON_CreateString("x"), *sX = cJSON_CreateString("X");
    cJSON *yes = cJSON_CreateTrue(), *no = cJSON_CreateFalse();
    struct store_cond eq = {.kind = STORE_COND_ATTR_EQ, .attr = "v", .value = three};
    assert_int_equal(put_json(c->s, "{\"PK\":\"A\",\"SK\":\"1\",\"v\":3}", &eq), 0);
    eq.value = four;
    assert_int_equal(put_json(c->s, "{\"PK\":\"A\",\"SK\":\"1\",\"v\":3}", &eq), ERR_CONDITION);
    put_ok(c->s, "{\"PK\":\"A\",\"SK\":\"1\",\"v\":3,\"s\":\"x\",\"b\":true}");
    eq.attr = "s";
    eq.value = sx;
    assert_int_equal(
        put_json(c->s, "{\"PK\":\"A\",\"SK\":\"1\",\"v\":3,\"s\":\"x\",\"b\":true}", &eq), 0);
    eq.value = sX;
    assert_int_equal(put_json(c->s, "{\"PK\":\"A\",\"SK\":\"1\"}", &eq), ERR_CONDITION);
    eq.attr = "b";
    eq.value = yes;
    assert_int_equal(
        put_json(c->s, "{\"PK\":\"A\",\"SK\":\"1\",\"v\":3,\"s\":\"x\",\"b\":true}", &eq), 0);
    eq.value = no;
    assert_int_equal(put_json(c->s, "{\"PK\":\"A\",\"SK\":\"1\"}", &eq), ERR_CONDITION);
    /* Type mismatch: "3" is not 3. */
    cJSON *s3 = cJSON_CreateString("3");
    eq.attr = "v";
    eq.value = s3;
    assert_int_equal(put_json(c->s, "{\"PK\":\"A\",\"SK\":\"1\"}", &eq), ERR_CONDITION);
    /* ATTR_EQ on a missing item fails. */
    eq.value = three;
    assert_int_equal(put_json(c->s, "{\"PK\":\"A\",\"SK\":\"2\"}", &eq), ERR_CONDITION);

    struct store_cond noattr = {.kind = STORE_COND_ATTR_NOT_EXISTS, .attr = "claimed"};
    assert_int_equal(put_json(c->s, "{\"PK\":\"A\",\"SK\":\"3\",\"claimed\":true}", &noattr), 0);
    assert_int_equal(put_json(c->s, "{\"PK\":\"A\",\"SK\":\"3\",\"claimed\":true}", &noattr),
                     ERR_CONDITION);
    /* Malformed conditions. */
    struct store_cond bad = {.kind = STORE_COND_ATTR_EQ, .attr = "v", .value = NULL};
    assert_int_equal(put_json(c->s, "{\"PK\":\"A\",\"SK\":\"1\"}", &bad), ERR_INVALID);
    cJSON_Delete(three);
    cJSON_Delete(four);
    cJSON_Delete(sx);
    cJSON_Delete(sX);
    cJSON_Delete(yes);
    cJSON_Delete(no);
    cJSON_Delete(s3);
}

static void t_conditional_delete(void **state)
{
    struct conf *c = *state;
    struct store_cond present = {.kind = STORE_COND_EXISTS};
    cJSON *open = cJSON_CreateString("open");
    struct store_cond eq = {.kind = STORE_COND_ATTR_EQ, .attr = "status", .value = open};
    assert_int_equal(store_delete(c->s, "A", "1", &present), ERR_CONDITION);
    put_ok(c->s, "{\"PK\":\"A\",\"SK\":\"1\",\"status\":\"closed\"}");
    assert_int_equal(store_delete(c->s, "A", "1", &eq), ERR_CONDITION);
    assert_true(exists(c->s, "A", "1"));
    put_ok(c->s, "{\"PK\":\"A\",\"SK\":\"1\",\"status\":\"open\"}");
    assert_int_equal(store_delete(c->s, "A", "1", &eq), 0);
    assert_false(exists(c->s, "A", "1"));
    cJSON_Delete(open);
}

static void t_update(void **state)
{
    struct conf *c = *state;
    cJSON *zero = cJSON_CreateNumber(0), *name = cJSON_CreateString("n1");
    cJSON *other = cJSON_CreateString("n2"), *img = NULL, *out = NULL;
    struct store_action acts[] = {
        {.kind = STORE_ACT_ADD, .attr = "scanCount", .delta = 1},
        {.kind = STORE_ACT_SET_IF_NOT_EXISTS, .attr = "name", .value = name},
    };
    /* Creates the item with its key and the attributes. */
    assert_int_equal(store_update(c->s, "BRAND#b", "STATS", acts, 2, NULL, &img), 0);
    assert_non_null(img);
    assert_string_equal(attr_str(img, "PK"), "BRAND#b");
    assert_string_equal(attr_str(img, "SK"), "STATS");
    assert_int_equal(attr_num(img, "scanCount"), 1);
    assert_string_equal(attr_str(img, "name"), "n1");
    cJSON_Delete(img);
    /* ADD accumulates; SET if_not_exists keeps the existing value. */
    acts[1].value = other;
    for (int i = 0; i < 4; i++)
        assert_int_equal(store_update(c->s, "BRAND#b", "STATS", acts, 2, NULL, NULL), 0);
    assert_int_equal(store_get(c->s, "BRAND#b", "STATS", true, &out), 0);
    assert_int_equal(attr_num(out, "scanCount"), 5);
    assert_string_equal(attr_str(out, "name"), "n1");
    cJSON_Delete(out);
    /* Negative ADD, SET, REMOVE. */
    struct store_action more[] = {
        {.kind = STORE_ACT_ADD, .attr = "scanCount", .delta = -2.5},
        {.kind = STORE_ACT_SET, .attr = "name", .value = other},
        {.kind = STORE_ACT_SET, .attr = "zero", .value = zero},
    };
    assert_int_equal(store_update(c->s, "BRAND#b", "STATS", more, 3, NULL, &img), 0);
    assert_true(attr_num(img, "scanCount") == 2.5);
    assert_string_equal(attr_str(img, "name"), "n2");
    cJSON_Delete(img);
    struct store_action rm = {.kind = STORE_ACT_REMOVE, .attr = "zero"};
    assert_int_equal(store_update(c->s, "BRAND#b", "STATS", &rm, 1, NULL, &img), 0);
    assert_null(cJSON_GetObjectItemCaseSensitive(img, "zero"));
    cJSON_Delete(img);
    /* ADD on a string is invalid and changes nothing. */
    struct store_action bad[] = {
        {.kind = STORE_ACT_ADD, .attr = "scanCount", .delta = 1},
        {.kind = STORE_ACT_ADD, .attr = "name", .delta = 1},
    };
    uint64_t h = head_of(c->s);
    assert_int_equal(store_update(c->s, "BRAND#b", "STATS", bad, 2, NULL, &img), ERR_INVALID);
    assert_null(img);
    assert_int_equal(head_of(c->s), h);
    assert_int_equal(store_get(c->s, "BRAND#b", "STATS", true, &out), 0);
    assert_true(attr_num(out, "scanCount") == 2.5);
    cJSON_Delete(out);
    /* Conditions apply to updates. */
    struct store_cond absent = {.kind = STORE_COND_NOT_EXISTS};
    assert_int_equal(store_update(c->s, "BRAND#b", "STATS", acts, 1, &absent, NULL), ERR_CONDITION);
    struct store_cond present = {.kind = STORE_COND_EXISTS};
    assert_int_equal(store_update(c->s, "BRAND#none", "STATS", acts, 1, &present, NULL),
                     ERR_CONDITION);
    assert_false(exists(c->s, "BRAND#none", "STATS"));
    /* Key attributes cannot be updated; one attribute twice is invalid. */
    struct store_action keyset = {.kind = STORE_ACT_SET, .attr = "PK", .value = other};
    assert_int_equal(store_update(c->s, "BRAND#b", "STATS", &keyset, 1, NULL, NULL), ERR_INVALID);
    struct store_action twice[] = {
        {.kind = STORE_ACT_ADD, .attr = "x", .delta = 1},
        {.kind = STORE_ACT_REMOVE, .attr = "x"},
    };
    assert_int_equal(store_update(c->s, "BRAND#b", "STATS", twice, 2, NULL, NULL), ERR_INVALID);
    /* An update can move an item into GSI1. */
    cJSON *g1 = cJSON_CreateString("G"), *g2 = cJSON_CreateString("S1");
    struct store_action gsi[] = {
        {.kind = STORE_ACT_SET, .attr = "GSI1PK", .value = g1},
        {.kind = STORE_ACT_SET, .attr = "GSI1SK", .value = g2},
    };
    assert_int_equal(store_update(c->s, "BRAND#b", "STATS", gsi, 2, NULL, NULL), 0);
    struct store_query q = {.index = STORE_INDEX_GSI1, .pk = "G", .forward = true};
    int pages;
    assert_string_equal(query_all(c->s, q, &pages), "S1/BRAND#b");
    cJSON_Delete(g1);
    cJSON_Delete(g2);
    cJSON_Delete(zero);
    cJSON_Delete(name);
    cJSON_Delete(other);
}

/* ---------- queries ---------- */

/* PK "P" with SK "S#00".."S#24", plus neighbours that must never show. */
static void fill_partition(struct store *s)
{
    char sk[16];
    for (int i = 0; i < 25; i++) {
        snprintf(sk, sizeof(sk), "S#%02d", i);
        put_key(s, "P", sk);
    }
    put_key(s, "P", "R#1");
    put_key(s, "P", "T#1");
    put_key(s, "O", "S#05");
    put_key(s, "PP", "S#05");
}

static void t_query_pagination(void **state)
{
    struct conf *c = *state;
    struct store_query q = {
        .pk = "P", .sk_op = STORE_SK_BEGINS, .sk = "S#", .limit = 10, .forward = true};
    struct store_result res;
    char expect[512] = "";
    int pages;
    fill_partition(c->s);
    for (int i = 0; i < 25; i++) {
        char sk[16];
        snprintf(sk, sizeof(sk), "%sS#%02d", i ? "," : "", i);
        strcat(expect, sk);
    }
    assert_string_equal(query_all(c->s, q, &pages), expect);
    assert_int_equal(pages, 3);
    /* First page details: 10 items and a cursor. */
    assert_int_equal(store_query(c->s, &q, &res), 0);
    assert_int_equal(res.count, 10);
    assert_non_null(res.next);
    for (const char *p = res.next; *p; p++)
        assert_true((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
                    (*p >= '0' && *p <= '9') || *p == '-' || *p == '_');
    store_result_free(&res);
    /* A limit that divides the result exactly: no empty trailing page. */
    q.limit = 5;
    query_all(c->s, q, &pages);
    assert_int_equal(pages, 5);
    /* Backward. */
    q.forward = false;
    q.limit = 7;
    char rev[512] = "";
    for (int i = 24; i >= 0; i--) {
        char sk[16];
        snprintf(sk, sizeof(sk), "%sS#%02d", i < 24 ? "," : "", i);
        strcat(rev, sk);
    }
    assert_string_equal(query_all(c->s, q, &pages), rev);
    assert_int_equal(pages, 4);
    /* No limit: one page with everything in the partition. */
    q.limit = 0;
    q.sk_op = STORE_SK_ANY;
    q.forward = true;
    assert_int_equal(store_query(c->s, &q, &res), 0);
    assert_int_equal(res.count, 27);
    assert_null(res.next);
    assert_string_equal(attr_str(cJSON_GetArrayItem(res.items, 0), "SK"), "R#1");
    assert_string_equal(attr_str(cJSON_GetArrayItem(res.items, 26), "SK"), "T#1");
    store_result_free(&res);
    /* Empty partition. */
    q.pk = "nothing";
    assert_int_equal(store_query(c->s, &q, &res), 0);
    assert_int_equal(res.count, 0);
    assert_int_equal(cJSON_GetArraySize(res.items), 0);
    assert_null(res.next);
    store_result_free(&res);
}

static int count_of(struct store *s, enum store_sk_op op, const char *sk, const char *sk2,
                    bool forward)
{
    struct store_query q = {
        .pk = "P", .sk_op = op, .sk = sk, .sk2 = sk2, .forward = forward, .limit = 4};
    int pages, n = 0;
    char *all = query_all(s, q, &pages);
    if (*all) {
        n = 1;
        for (; *all; all++)
            n += *all == ',';
    }
    return n;
}

static void t_query_sk_conditions(void **state)
{
    struct conf *c = *state;
    fill_partition(c->s);
    for (int fw = 0; fw < 2; fw++) {
        assert_int_equal(count_of(c->s, STORE_SK_EQ, "S#07", NULL, fw), 1);
        assert_int_equal(count_of(c->s, STORE_SK_EQ, "S#0", NULL, fw), 0);
        assert_int_equal(count_of(c->s, STORE_SK_BEGINS, "S#1", NULL, fw), 10);
        assert_int_equal(count_of(c->s, STORE_SK_BEGINS, "S#", NULL, fw), 25);
        assert_int_equal(count_of(c->s, STORE_SK_BEGINS, "", NULL, fw), 27);
        assert_int_equal(count_of(c->s, STORE_SK_BETWEEN, "S#05", "S#09", fw), 5);
        assert_int_equal(count_of(c->s, STORE_SK_BETWEEN, "S#05", "S#05", fw), 1);
        assert_int_equal(count_of(c->s, STORE_SK_LT, "S#03", NULL, fw), 4); /* R#1 S#00-02 */
        assert_int_equal(count_of(c->s, STORE_SK_LE, "S#03", NULL, fw), 5);
        assert_int_equal(count_of(c->s, STORE_SK_GT, "S#22", NULL, fw), 3); /* 23 24 T#1 */
        assert_int_equal(count_of(c->s, STORE_SK_GE, "S#22", NULL, fw), 4);
        assert_int_equal(count_of(c->s, STORE_SK_GT, "S#2", NULL, fw), 6);
        assert_int_equal(count_of(c->s, STORE_SK_LE, "S#2", NULL, fw), 21);
    }
    /* Inverted BETWEEN is rejected like DynamoDB does. */
    struct store_query q = {.pk = "P", .sk_op = STORE_SK_BETWEEN, .sk = "b", .sk2 = "a"};
    struct store_result res;
    assert_int_equal(store_query(c->s, &q, &res), ERR_INVALID);
    q.sk2 = NULL;
    assert_int_equal(store_query(c->s, &q, &res), ERR_INVALID);
    q.sk_op = STORE_SK_EQ;
    q.sk = NULL;
    assert_int_equal(store_query(c->s, &q, &res), ERR_INVALID);
    q.sk = "x";
    q.limit = -1;
    assert_int_equal(store_query(c->s, &q, &res), ERR_INVALID);
}

/* ProjectionExpression: only PK, SK and the named attributes come back,
 * values intact, on the table and on GSI1. */
static void t_query_projection(void **state)
{
    struct conf *c = *state;
    cJSON *it = cJSON_Parse("{\"PK\":\"PJ\",\"SK\":\"S#1\",\"GSI1PK\":\"G\",\"GSI1SK\":\"1\","
                            "\"country\":\"FR\",\"nested\":{\"a\":[1,\"},\"]},\"n\":3}");
    assert_int_equal(store_put(c->s, it, NULL), 0);
    cJSON_Delete(it);
    const char *attrs[] = {"country", "missing"};
    for (int gsi = 0; gsi < 2; gsi++) {
        struct store_query q = {.index = gsi ? STORE_INDEX_GSI1 : STORE_INDEX_TABLE,
                                .pk = gsi ? "G" : "PJ",
                                .project = attrs,
                                .nproject = 2};
        struct store_result res;
        assert_int_equal(store_query(c->s, &q, &res), 0);
        assert_int_equal(res.count, 1);
        const cJSON *got = cJSON_GetArrayItem(res.items, 0);
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(got, "PK")->valuestring, "PJ");
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(got, "SK")->valuestring, "S#1");
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(got, "country")->valuestring, "FR");
        assert_int_equal(cJSON_GetArraySize(got), 3);
        store_result_free(&res);
    }
}

/* Byte-wise (UTF-8, i.e. code point) order; keys must be valid UTF-8. */
static void t_query_bytewise(void **state)
{
    struct conf *c = *state;
    put_key(c->s, "B", "a");
    put_key(c->s, "B", "Z");
    put_key(c->s, "B", "\xc3\xa9");         /* U+00E9 */
    put_key(c->s, "B", "\xef\xbf\xbd");     /* U+FFFD */
    put_key(c->s, "B", "\xf0\x9f\x98\x80"); /* U+1F600: after U+FFFD, unlike UTF-16 */
    put_key(c->s, "B", "a\xc3\xa9");
    put_key(c->s, "B", "b");
    struct store_query q = {.pk = "B", .forward = true};
    int pages;
    assert_string_equal(query_all(c->s, q, &pages),
                        "Z,a,a\xc3\xa9,b,\xc3\xa9,\xef\xbf\xbd,\xf0\x9f\x98\x80");
    q.sk_op = STORE_SK_BEGINS;
    q.sk = "a";
    assert_string_equal(query_all(c->s, q, &pages), "a,a\xc3\xa9");
    q.sk = "\xef\xbf";
    assert_string_equal(query_all(c->s, q, &pages), "\xef\xbf\xbd");
    q.sk = "\xf0\x9f\x98\x80";
    assert_string_equal(query_all(c->s, q, &pages), "\xf0\x9f\x98\x80");
    q.sk_op = STORE_SK_GT;
    q.sk = "\xc3\xa9";
    assert_string_equal(query_all(c->s, q, &pages), "\xef\xbf\xbd,\xf0\x9f\x98\x80");
    /* Invalid UTF-8 anywhere in an item, surrogates (WTF-8), overlong
     * forms and non-finite numbers are refused. */
    const char *bad[] = {"a\xff", "\xed\xa0\x80", "\xc0\xaf", "\xf4\x90\x80\x80", "\xe2\x82"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cJSON *v = J("{\"PK\":\"B\",\"SK\":\"x\",\"m\":{}}");
        cJSON_AddStringToObject(cJSON_GetObjectItem(v, "m"), "k", bad[i]);
        assert_int_equal(store_put(c->s, v, NULL), ERR_INVALID);
        cJSON_ReplaceItemInObject(v, "SK", cJSON_CreateString(bad[i]));
        cJSON_DeleteItemFromObject(v, "m");
        assert_int_equal(store_put(c->s, v, NULL), ERR_INVALID);
        cJSON_Delete(v);
    }
    cJSON *v = J("{\"PK\":\"B\",\"SK\":\"x\"}");
    cJSON_AddNumberToObject(v, "n", 1.0 / 0.0);
    assert_int_equal(store_put(c->s, v, NULL), ERR_INVALID);
    cJSON_Delete(v);
    v = J("{\"PK\":\"B\",\"SK\":\"x\",\"\":1}");
    assert_int_equal(store_put(c->s, v, NULL), ERR_INVALID);
    cJSON_Delete(v);
}

static void t_query_gsi(void **state)
{
    struct conf *c = *state;
    struct store_result res;
    int pages;
    /* Equal GSI1SK values are ordered by PK then SK. */
    put_ok(c->s, "{\"PK\":\"PRODUCT#3\",\"SK\":\"META\",\"GSI1PK\":\"BRAND#b\",\"GSI1SK\":\"T2\"}");
    put_ok(c->s, "{\"PK\":\"PRODUCT#1\",\"SK\":\"META\",\"GSI1PK\":\"BRAND#b\",\"GSI1SK\":\"T2\"}");
    put_ok(c->s, "{\"PK\":\"PRODUCT#2\",\"SK\":\"META\",\"GSI1PK\":\"BRAND#b\",\"GSI1SK\":\"T1\"}");
    put_ok(c->s, "{\"PK\":\"PRODUCT#2\",\"SK\":\"X\",\"GSI1PK\":\"BRAND#b\",\"GSI1SK\":\"T2\"}");
    put_ok(c->s, "{\"PK\":\"PRODUCT#4\",\"SK\":\"META\",\"GSI1PK\":\"BRAND#b\",\"GSI1SK\":\"T3\"}");
    /* Not in the index: other GSI1PK, or only one of the two attributes. */
    put_ok(c->s, "{\"PK\":\"PRODUCT#5\",\"SK\":\"META\",\"GSI1PK\":\"BRAND#c\",\"GSI1SK\":\"T2\"}");
    put_ok(c->s, "{\"PK\":\"PRODUCT#6\",\"SK\":\"META\",\"GSI1PK\":\"BRAND#b\"}");
    put_ok(c->s, "{\"PK\":\"BRAND#b\",\"SK\":\"META\"}");
    struct store_query q = {.index = STORE_INDEX_GSI1, .pk = "BRAND#b", .forward = true};
    const char *fw = "T1/PRODUCT#2,T2/PRODUCT#1,T2/PRODUCT#2,T2/PRODUCT#3,T3/PRODUCT#4";
    const char *bw = "T3/PRODUCT#4,T2/PRODUCT#3,T2/PRODUCT#2,T2/PRODUCT#1,T1/PRODUCT#2";
    for (int limit = 0; limit <= 3; limit++) {
        q.limit = limit;
        q.forward = true;
        assert_string_equal(query_all(c->s, q, &pages), fw);
        q.forward = false;
        assert_string_equal(query_all(c->s, q, &pages), bw);
    }
    q.limit = 1;
    q.forward = true;
    query_all(c->s, q, &pages);
    assert_int_equal(pages, 5);
    q.limit = 0;
    q.sk_op = STORE_SK_EQ;
    q.sk = "T2";
    assert_string_equal(query_all(c->s, q, &pages), "T2/PRODUCT#1,T2/PRODUCT#2,T2/PRODUCT#3");
    q.sk_op = STORE_SK_GT;
    q.forward = false;
    q.limit = 2;
    assert_string_equal(query_all(c->s, q, &pages), "T3/PRODUCT#4");
    q.sk_op = STORE_SK_LE;
    assert_string_equal(query_all(c->s, q, &pages),
                        "T2/PRODUCT#3,T2/PRODUCT#2,T2/PRODUCT#1,T1/PRODUCT#2");
    /* A GSI1 cursor does not work on the table and vice versa. */
    q.sk_op = STORE_SK_ANY;
    assert_int_equal(store_query(c->s, &q, &res), 0);
    assert_non_null(res.next);
    struct store_query t = {.pk = "BRAND#b", .start = res.next};
    struct store_result r2;
    assert_int_equal(store_query(c->s, &t, &r2), ERR_INVALID);
    store_result_free(&res);
    /* Moving an item out of the index. */
    put_ok(c->s, "{\"PK\":\"PRODUCT#4\",\"SK\":\"META\"}");
    q.forward = true;
    q.limit = 0;
    assert_string_equal(query_all(c->s, q, &pages),
                        "T1/PRODUCT#2,T2/PRODUCT#1,T2/PRODUCT#2,T2/PRODUCT#3");
}

static void t_query_count_and_cursor(void **state)
{
    struct conf *c = *state;
    struct store_query q = {
        .pk = "P", .sk_op = STORE_SK_BEGINS, .sk = "S#", .count_only = true, .forward = true};
    struct store_result res;
    fill_partition(c->s);
    assert_int_equal(store_query(c->s, &q, &res), 0);
    assert_int_equal(res.count, 25);
    assert_null(res.items);
    assert_null(res.next);
    store_result_free(&res);
    q.limit = 20;
    assert_int_equal(store_query(c->s, &q, &res), 0);
    assert_int_equal(res.count, 20);
    assert_non_null(res.next);
    char *cur = strdup(res.next);
    store_result_free(&res);
    q.start = cur;
    assert_int_equal(store_query(c->s, &q, &res), 0);
    assert_int_equal(res.count, 5);
    assert_null(res.next);
    store_result_free(&res);
    /* The cursor belongs to partition P. */
    q.pk = "O";
    assert_int_equal(store_query(c->s, &q, &res), ERR_INVALID);
    assert_null(res.next);
    free(cur);
    /* Malformed cursors. */
    const char *bad[] = {"", "!!!!", "e30", "eyJQSyI6MX0", "a", "abc=", "eyJQSyI6IlAiLCJTSyI6IiJ9"};
    q.pk = "P";
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        q.start = bad[i];
        assert_int_equal(store_query(c->s, &q, &res), ERR_INVALID);
    }
    char *huge = malloc(100001);
    memset(huge, 'A', 100000);
    huge[100000] = '\0';
    q.start = huge;
    assert_int_equal(store_query(c->s, &q, &res), ERR_INVALID);
    free(huge);
}

static void t_query_page_bytes(void **state)
{
    struct conf *c = *state;
    char *blob = malloc(100001);
    memset(blob, 'v', 100000);
    blob[100000] = '\0';
    for (int i = 0; i < 15; i++) {
        char sk[16];
        cJSON *it = cJSON_CreateObject();
        snprintf(sk, sizeof(sk), "%02d", i);
        cJSON_AddStringToObject(it, "PK", "BIG");
        cJSON_AddStringToObject(it, "SK", sk);
        cJSON_AddStringToObject(it, "v", blob);
        assert_int_equal(store_put(c->s, it, NULL), 0);
        cJSON_Delete(it);
    }
    free(blob);
    struct store_query q = {.pk = "BIG", .forward = true};
    struct store_result res;
    assert_int_equal(store_query(c->s, &q, &res), 0);
    /* ~100 KB each: the 1 MB page holds 10. */
    assert_int_equal(res.count, 10);
    assert_non_null(res.next);
    q.start = res.next;
    struct store_result r2;
    assert_int_equal(store_query(c->s, &q, &r2), 0);
    assert_int_equal(r2.count, 5);
    assert_null(r2.next);
    store_result_free(&r2);
    store_result_free(&res);
}

/* ---------- transactions ---------- */

static void t_transact_commit(void **state)
{
    struct conf *c = *state;
    cJSON *item = J("{\"PK\":\"PRODUCT#1\",\"SK\":\"META\",\"status\":\"active\"}");
    struct store_action inc = {.kind = STORE_ACT_ADD, .attr = "productCount", .delta = 1};
    put_ok(c->s, "{\"PK\":\"OLD\",\"SK\":\"1\"}");
    uint64_t h = head_of(c->s);
    struct store_write w[] = {
        {.kind = STORE_W_PUT, .item = item, .cond = {.kind = STORE_COND_NOT_EXISTS}},
        {.kind = STORE_W_UPDATE, .pk = "BRAND#b", .sk = "STATS", .acts = &inc, .nacts = 1},
        {.kind = STORE_W_DELETE, .pk = "OLD", .sk = "1", .cond = {.kind = STORE_COND_EXISTS}},
        {.kind = STORE_W_CHECKPOINT, .reader = "detector", .seq = 7},
    };
    int failed = 42;
    assert_int_equal(store_transact(c->s, w, 4, &failed), 0);
    assert_int_equal(failed, -1);
    assert_true(exists(c->s, "PRODUCT#1", "META"));
    assert_true(exists(c->s, "BRAND#b", "STATS"));
    assert_false(exists(c->s, "OLD", "1"));
    /* Three item writes, three records; the checkpoint makes none. */
    assert_stream_count(c->s, h, 3);
    uint64_t cp = 0;
    assert_int_equal(store_checkpoint_get(c->s, "detector", &cp), 0);
    assert_int_equal(cp, 7);
    cJSON_Delete(item);
}

static void t_transact_rollback(void **state)
{
    struct conf *c = *state;
    cJSON *item = J("{\"PK\":\"PRODUCT#1\",\"SK\":\"META\"}");
    cJSON *item2 = J("{\"PK\":\"PRODUCT#2\",\"SK\":\"META\"}");
    struct store_action inc = {.kind = STORE_ACT_ADD, .attr = "n", .delta = 1};
    put_ok(c->s, "{\"PK\":\"BRAND#b\",\"SK\":\"STATS\",\"n\":5}");
    put_ok(c->s, "{\"PK\":\"PRODUCT#2\",\"SK\":\"META\",\"old\":true}");
    assert_int_equal(store_checkpoint_set(c->s, "r", 3), 0);
    uint64_t h = head_of(c->s);
    struct store_write w[] = {
        {.kind = STORE_W_PUT, .item = item},
        {.kind = STORE_W_UPDATE, .pk = "BRAND#b", .sk = "STATS", .acts = &inc, .nacts = 1},
        {.kind = STORE_W_CHECKPOINT, .reader = "r", .seq = 9},
        {.kind = STORE_W_DELETE, .pk = "X", .sk = "1"},
        {.kind = STORE_W_PUT, .item = item2, .cond = {.kind = STORE_COND_NOT_EXISTS}},
    };
    int failed = 0;
    assert_int_equal(store_transact(c->s, w, 5, &failed), ERR_CONDITION);
    assert_int_equal(failed, 4);
    /* Nothing partially written, no stream records, checkpoint kept. */
    assert_false(exists(c->s, "PRODUCT#1", "META"));
    cJSON *out = NULL;
    assert_int_equal(store_get(c->s, "BRAND#b", "STATS", true, &out), 0);
    assert_int_equal(attr_num(out, "n"), 5);
    cJSON_Delete(out);
    assert_int_equal(head_of(c->s), h);
    assert_stream_count(c->s, h, 0);
    uint64_t cp = 0;
    assert_int_equal(store_checkpoint_get(c->s, "r", &cp), 0);
    assert_int_equal(cp, 3);
    /* A failing ConditionCheck cancels the rest too. */
    struct store_write w2[] = {
        {.kind = STORE_W_PUT, .item = item},
        {.kind = STORE_W_CHECK,
         .pk = "BRAND#b",
         .sk = "STATS",
         .cond = {.kind = STORE_COND_NOT_EXISTS}},
    };
    assert_int_equal(store_transact(c->s, w2, 2, &failed), ERR_CONDITION);
    assert_int_equal(failed, 1);
    assert_false(exists(c->s, "PRODUCT#1", "META"));
    w2[1].cond.kind = STORE_COND_EXISTS;
    assert_int_equal(store_transact(c->s, w2, 2, &failed), 0);
    assert_true(exists(c->s, "PRODUCT#1", "META"));
    /* The check wrote nothing: one record for the put. */
    assert_stream_count(c->s, h, 1);
    cJSON_Delete(item);
    cJSON_Delete(item2);
}

static void t_transact_limits(void **state)
{
    struct conf *c = *state;
    struct store_write w[STORE_TRANSACT_MAX + 1];
    char keys[STORE_TRANSACT_MAX + 1][16];
    int failed;
    memset(w, 0, sizeof(w));
    for (int i = 0; i <= STORE_TRANSACT_MAX; i++) {
        snprintf(keys[i], sizeof(keys[i]), "K%03d", i);
        w[i].kind = STORE_W_DELETE;
        w[i].pk = keys[i];
        w[i].sk = "S";
    }
    assert_int_equal(store_transact(c->s, w, STORE_TRANSACT_MAX + 1, &failed), ERR_TOOBIG);
    assert_int_equal(store_transact(c->s, w, STORE_TRANSACT_MAX, &failed), 0);
    assert_int_equal(store_transact(c->s, w, 0, &failed), ERR_INVALID);
    /* The same item twice. */
    w[1].pk = keys[0];
    assert_int_equal(store_transact(c->s, w, 2, &failed), ERR_INVALID);
    cJSON *item = J("{\"PK\":\"K000\",\"SK\":\"S\"}");
    w[1].kind = STORE_W_PUT;
    w[1].item = item;
    assert_int_equal(store_transact(c->s, w, 2, &failed), ERR_INVALID);
    /* A CHECK without condition, a bad item. */
    struct store_write chk = {.kind = STORE_W_CHECK, .pk = "a", .sk = "b"};
    assert_int_equal(store_transact(c->s, &chk, 1, &failed), ERR_INVALID);
    cJSON *bad = J("{\"PK\":\"a\"}");
    struct store_write wb[] = {{.kind = STORE_W_DELETE, .pk = "x", .sk = "y"},
                               {.kind = STORE_W_PUT, .item = bad}};
    assert_int_equal(store_transact(c->s, wb, 2, &failed), ERR_INVALID);
    assert_int_equal(failed, 1);
    cJSON_Delete(item);
    cJSON_Delete(bad);
}

/* ---------- group commit ---------- */

static void t_batch(void **state)
{
    struct conf *c = *state;
    NEED_STREAM(c);
    struct store_cond absent = {.kind = STORE_COND_NOT_EXISTS};
    struct store_stats st;
    cJSON *out = NULL;
    store_set_commit_cb(c->s, count_commit, c);
    put_ok(c->s, "{\"PK\":\"A\",\"SK\":\"0\"}");
    assert_int_equal(c->commits, 1);
    uint64_t h = head_of(c->s);
    assert_int_equal(c->last_seq, h);

    assert_int_equal(store_batch_begin(c->s), 0);
    assert_true(store_batch_active(c->s));
    assert_int_equal(store_batch_begin(c->s), ERR_INVALID);
    put_ok(c->s, "{\"PK\":\"A\",\"SK\":\"1\",\"v\":1}");
    /* A failed condition undoes only its own operation. */
    assert_int_equal(put_json(c->s, "{\"PK\":\"A\",\"SK\":\"1\",\"v\":2}", &absent), ERR_CONDITION);
    struct store_action inc = {.kind = STORE_ACT_ADD, .attr = "v", .delta = 10};
    assert_int_equal(store_update(c->s, "A", "1", &inc, 1, NULL, NULL), 0);
    put_ok(c->s, "{\"PK\":\"A\",\"SK\":\"2\"}");
    /* Reads inside the batch see its writes. */
    assert_int_equal(store_get(c->s, "A", "1", true, &out), 0);
    assert_int_equal(attr_num(out, "v"), 11);
    cJSON_Delete(out);
    /* No commit yet: no callback, and the stream shows committed records only. */
    assert_int_equal(c->commits, 1);
    assert_int_equal(stream_count(c->s, h), 0);
    assert_int_equal(head_of(c->s), h);
    assert_int_equal(store_batch_commit(c->s), 0);
    assert_false(store_batch_active(c->s));
    assert_int_equal(c->commits, 2);
    assert_int_equal(c->last_seq, head_of(c->s));
    assert_int_equal(stream_count(c->s, h), 3);
    store_get_stats(c->s, &st);
    assert_int_equal(st.batch_writes_last, 3);
    assert_int_equal(st.conditions_failed, 1);
    assert_int_equal(store_batch_commit(c->s), ERR_INVALID);

    /* Abort throws the batch away. */
    h = head_of(c->s);
    assert_int_equal(store_batch_begin(c->s), 0);
    put_ok(c->s, "{\"PK\":\"A\",\"SK\":\"3\"}");
    assert_int_equal(store_delete(c->s, "A", "0", NULL), 0);
    store_batch_abort(c->s);
    assert_false(store_batch_active(c->s));
    assert_false(exists(c->s, "A", "3"));
    assert_true(exists(c->s, "A", "0"));
    assert_int_equal(head_of(c->s), h);
    assert_int_equal(c->commits, 2);
    /* A transaction inside a batch rolls back alone. */
    assert_int_equal(store_batch_begin(c->s), 0);
    put_ok(c->s, "{\"PK\":\"A\",\"SK\":\"4\"}");
    cJSON *item = J("{\"PK\":\"A\",\"SK\":\"5\"}");
    struct store_write w[] = {
        {.kind = STORE_W_PUT, .item = item},
        {.kind = STORE_W_DELETE, .pk = "A", .sk = "0", .cond = {.kind = STORE_COND_NOT_EXISTS}},
    };
    int failed;
    assert_int_equal(store_transact(c->s, w, 2, &failed), ERR_CONDITION);
    assert_int_equal(store_batch_commit(c->s), 0);
    assert_true(exists(c->s, "A", "4"));
    assert_false(exists(c->s, "A", "5"));
    assert_true(exists(c->s, "A", "0"));
    assert_int_equal(stream_count(c->s, h), 1);
    cJSON_Delete(item);
    /* The commit callback may write. */
    assert_int_equal(store_batch_begin(c->s), 0);
    put_ok(c->s, "{\"PK\":\"A\",\"SK\":\"7\"}");
    c->write_in_cb = true;
    int before = c->commits;
    assert_int_equal(store_batch_commit(c->s), 0);
    assert_int_equal(c->commits, before + 2);
    assert_true(exists(c->s, "CB", "1"));
    conf_reopen(c);
    assert_true(exists(c->s, "CB", "1"));
    assert_true(exists(c->s, "A", "7"));
    /* Closing with an open batch rolls it back. */
    assert_int_equal(store_batch_begin(c->s), 0);
    put_ok(c->s, "{\"PK\":\"A\",\"SK\":\"6\"}");
    conf_reopen(c);
    assert_false(exists(c->s, "A", "6"));
}

/* ---------- TTL ---------- */

static void t_ttl(void **state)
{
    struct conf *c = *state;
    int64_t now_s = T0_MS / 1000;
    char buf[256];
    cJSON *out = NULL;
    snprintf(buf, sizeof(buf), "{\"PK\":\"T\",\"SK\":\"past\",\"ttl\":%lld}", (long long)now_s - 1);
    put_ok(c->s, buf);
    snprintf(buf, sizeof(buf), "{\"PK\":\"T\",\"SK\":\"soon\",\"ttl\":%lld}",
             (long long)now_s + 10);
    put_ok(c->s, buf);
    put_ok(c->s, "{\"PK\":\"T\",\"SK\":\"never\",\"ttl\":\"not a number\"}");
    put_ok(c->s, "{\"PK\":\"T\",\"SK\":\"plain\"}");
    assert_int_equal(store_get(c->s, "T", "past", true, &out), ERR_NOTFOUND);
    assert_true(exists(c->s, "T", "soon"));
    struct store_query q = {.pk = "T", .forward = true};
    int pages;
    assert_string_equal(query_all(c->s, q, &pages), "never,plain,soon");
    /* Time passes: "soon" expires too (ttl < now). */
    c->now_ms += 10 * 1000;
    assert_true(exists(c->s, "T", "soon"));
    c->now_ms += 1000;
    assert_false(exists(c->s, "T", "soon"));
    assert_string_equal(query_all(c->s, q, &pages), "never,plain");
    q.count_only = true;
    struct store_result res;
    assert_int_equal(store_query(c->s, &q, &res), 0);
    assert_int_equal(res.count, 2);
    store_result_free(&res);
    /* An expired item counts as absent for conditions and updates, and
     * replacing it that way is an INSERT. */
    struct store_cond absent = {.kind = STORE_COND_NOT_EXISTS};
    uint64_t h0 = head_of(c->s);
    snprintf(buf, sizeof(buf), "{\"PK\":\"T\",\"SK\":\"past\",\"v\":1,\"ttl\":%lld}",
             (long long)now_s - 1);
    assert_int_equal(put_json(c->s, buf, &absent), 0);
    struct stream_record *r = NULL;
    size_t n = 0;
    if (store_has_stream(c->s)) {
        assert_int_equal(store_stream_read(c->s, h0, 10, &r, &n), 0);
        assert_int_equal(n, 1);
        assert_int_equal(r[0].kind, STORE_INSERT);
        store_stream_free(r, n);
    }
    struct store_action inc = {.kind = STORE_ACT_ADD, .attr = "n", .delta = 1};
    cJSON *img = NULL;
    assert_int_equal(store_update(c->s, "T", "soon", &inc, 1, NULL, &img), 0);
    assert_null(cJSON_GetObjectItemCaseSensitive(img, "ttl"));
    assert_int_equal(attr_num(img, "n"), 1);
    cJSON_Delete(img);
    /* Purge removes the expired items with REMOVE records (DynamoDB
     * purges on its own: its driver purges nothing). */
    if (!store_has_stream(c->s))
        return;
    /* Purge removes the expired items with REMOVE records. */
    uint64_t h = head_of(c->s);
    size_t purged = 99;
    assert_int_equal(store_purge_expired(c->s, c->now_ms, 100, &purged), 0);
    assert_int_equal(purged, 1); /* "past"; "soon" was rewritten without ttl */
    assert_int_equal(store_stream_read(c->s, h, 10, &r, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(r[0].kind, STORE_REMOVE);
    assert_string_equal(r[0].sk, "past");
    assert_null(r[0].image);
    store_stream_free(r, n);
    assert_int_equal(store_purge_expired(c->s, c->now_ms, 100, &purged), 0);
    assert_int_equal(purged, 0);
    /* max bounds one call. */
    for (int i = 0; i < 5; i++) {
        snprintf(buf, sizeof(buf), "{\"PK\":\"E\",\"SK\":\"%d\",\"ttl\":1}", i);
        put_ok(c->s, buf);
    }
    assert_int_equal(store_purge_expired(c->s, c->now_ms, 3, &purged), 0);
    assert_int_equal(purged, 3);
    assert_int_equal(store_purge_expired(c->s, c->now_ms, 3, &purged), 0);
    assert_int_equal(purged, 2);
}

/* ---------- change stream ---------- */

static void t_stream_order(void **state)
{
    struct conf *c = *state;
    NEED_STREAM(c);
    struct stream_record *r = NULL;
    size_t n = 0;
    uint64_t h0 = head_of(c->s);
    put_ok(c->s, "{\"PK\":\"S\",\"SK\":\"1\",\"v\":1}");
    c->now_ms += 5;
    put_ok(c->s, "{\"PK\":\"S\",\"SK\":\"1\",\"v\":2}");
    struct store_action inc = {.kind = STORE_ACT_ADD, .attr = "v", .delta = 1};
    assert_int_equal(store_update(c->s, "S", "1", &inc, 1, NULL, NULL), 0);
    assert_int_equal(store_delete(c->s, "S", "1", NULL), 0);
    assert_int_equal(store_delete(c->s, "S", "1", NULL), 0); /* absent: no record */
    put_ok(c->s, "{\"PK\":\"S\",\"SK\":\"1\",\"v\":9}");
    assert_int_equal(store_stream_read(c->s, h0, 100, &r, &n), 0);
    assert_int_equal(n, 5);
    enum store_change kinds[] = {STORE_INSERT, STORE_MODIFY, STORE_MODIFY, STORE_REMOVE,
                                 STORE_INSERT};
    double vals[] = {1, 2, 3, 0, 9};
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(r[i].kind, kinds[i]);
        assert_string_equal(r[i].pk, "S");
        assert_string_equal(r[i].sk, "1");
        if (i)
            assert_true(r[i].seq > r[i - 1].seq);
        if (kinds[i] == STORE_REMOVE) {
            assert_null(r[i].image);
        } else {
            assert_non_null(r[i].image);
            assert_true(attr_num(r[i].image, "v") == vals[i]);
            assert_string_equal(attr_str(r[i].image, "PK"), "S");
        }
    }
    assert_int_equal(r[0].ts_ms, T0_MS);
    assert_int_equal(r[1].ts_ms, T0_MS + 5);
    assert_int_equal(r[4].seq, head_of(c->s));
    uint64_t second = r[1].seq, last = r[4].seq;
    store_stream_free(r, n);
    /* Paging through the stream. */
    assert_int_equal(store_stream_read(c->s, second, 2, &r, &n), 0);
    assert_int_equal(n, 2);
    assert_true(r[0].seq > second);
    store_stream_free(r, n);
    assert_int_equal(store_stream_read(c->s, last, 10, &r, &n), 0);
    assert_int_equal(n, 0);
    store_stream_free(r, n);
    assert_int_equal(store_stream_read(c->s, 0, 0, &r, &n), 0);
    assert_int_equal(n, 0);
}

static void t_checkpoint_resume(void **state)
{
    struct conf *c = *state;
    NEED_STREAM(c);
    struct stream_record *r = NULL;
    size_t n = 0;
    uint64_t cp = 1;
    assert_int_equal(store_checkpoint_get(c->s, "detector", &cp), 0);
    assert_int_equal(cp, 0);
    for (int i = 0; i < 10; i++) {
        char buf[64];
        snprintf(buf, sizeof(buf), "{\"PK\":\"C\",\"SK\":\"%d\"}", i);
        put_ok(c->s, buf);
    }
    /* A reader consumes 4 records and checkpoints. */
    assert_int_equal(store_stream_read(c->s, cp, 4, &r, &n), 0);
    assert_int_equal(n, 4);
    uint64_t upto = r[3].seq;
    store_stream_free(r, n);
    uint64_t h = head_of(c->s);
    assert_int_equal(store_checkpoint_set(c->s, "detector", upto), 0);
    assert_int_equal(store_checkpoint_set(c->s, "other", 1), 0);
    /* Checkpoints are bookkeeping: no stream records. */
    assert_int_equal(head_of(c->s), h);
    conf_reopen(c);
    assert_int_equal(store_checkpoint_get(c->s, "detector", &cp), 0);
    assert_int_equal(cp, upto);
    assert_int_equal(store_stream_read(c->s, cp, 100, &r, &n), 0);
    assert_int_equal(n, 6);
    assert_string_equal(r[0].sk, "4");
    assert_string_equal(r[5].sk, "9");
    store_stream_free(r, n);
    assert_int_equal(store_checkpoint_get(c->s, "other", &cp), 0);
    assert_int_equal(cp, 1);
    assert_int_equal(store_checkpoint_get(c->s, "", &cp), ERR_INVALID);
    /* Overwrite. */
    assert_int_equal(store_checkpoint_set(c->s, "other", 5), 0);
    assert_int_equal(store_checkpoint_get(c->s, "other", &cp), 0);
    assert_int_equal(cp, 5);
}

static void t_stream_trim(void **state)
{
    struct conf *c = *state;
    NEED_STREAM(c);
    size_t trimmed = 99;
    put_ok(c->s, "{\"PK\":\"R\",\"SK\":\"old1\"}");
    put_ok(c->s, "{\"PK\":\"R\",\"SK\":\"old2\"}");
    c->now_ms += 2LL * 3600 * 1000;
    put_ok(c->s, "{\"PK\":\"R\",\"SK\":\"mid\"}");
    c->now_ms += 23LL * 3600 * 1000; /* old*: 25 h ago, mid: 23 h ago */
    put_ok(c->s, "{\"PK\":\"R\",\"SK\":\"new\"}");
    assert_int_equal(stream_count(c->s, 0), 4);
    assert_int_equal(store_stream_trim(c->s, c->now_ms, &trimmed), 0);
    assert_int_equal(trimmed, 2);
    struct stream_record *r = NULL;
    size_t n = 0;
    assert_int_equal(store_stream_read(c->s, 0, 10, &r, &n), 0);
    assert_int_equal(n, 2);
    assert_string_equal(r[0].sk, "mid");
    assert_string_equal(r[1].sk, "new");
    store_stream_free(r, n);
    /* Items are untouched. */
    assert_true(exists(c->s, "R", "old1"));
    /* Trimming everything does not reset the sequence. */
    uint64_t h = head_of(c->s);
    c->now_ms += 48LL * 3600 * 1000;
    assert_int_equal(store_stream_trim(c->s, c->now_ms, &trimmed), 0);
    assert_int_equal(trimmed, 2);
    assert_int_equal(stream_count(c->s, 0), 0);
    assert_int_equal(head_of(c->s), h);
    conf_reopen(c);
    assert_int_equal(head_of(c->s), h);
    put_ok(c->s, "{\"PK\":\"R\",\"SK\":\"after\"}");
    assert_true(head_of(c->s) > h);
    assert_int_equal(store_stream_read(c->s, 0, 10, &r, &n), 0);
    assert_int_equal(n, 1);
    assert_true(r[0].seq > h);
    store_stream_free(r, n);
}

/* ---------- capacity ---------- */

static double top_of(struct store *s, const char *pk, bool write)
{
    struct store_capacity_entry e[64];
    size_t n = 0;
    assert_int_equal(store_capacity_top(s, 60, 64, e, &n), 0);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(e[i].pk, pk))
            return write ? e[i].wcu : e[i].rcu;
    return 0;
}

static void t_capacity_rounding(void **state)
{
    struct conf *c = *state;
    assert_true(store_wcu(0) == 1);
    assert_true(store_wcu(1) == 1);
    assert_true(store_wcu(1024) == 1);
    assert_true(store_wcu(1025) == 2);
    assert_true(store_wcu(400 * 1024) == 400);
    assert_true(store_rcu(1, true) == 1);
    assert_true(store_rcu(4096, true) == 1);
    assert_true(store_rcu(4097, true) == 2);
    assert_true(store_rcu(4097, false) == 1);
    assert_true(store_rcu(10, false) == 0.5);
    /* Item size: names + values; numbers by significant digits. */
    cJSON *it = J("{\"PK\":\"ab\",\"SK\":\"c\",\"n\":123456,\"z\":1000,\"f\":0.5,\"b\":true,"
                  "\"l\":[\"x\",1],\"m\":{\"k\":\"vv\"}}");
    /* PK 2+2, SK 2+1, n 1+4 (6 digits), z 1+2 (1 digit), f 1+2, b 1+1,
     * l 1+(3+1+1+2+1)=9, m 1+(3+1+2+1)=8 */
    assert_int_equal(store_item_size(it), 4 + 3 + 5 + 3 + 3 + 2 + 9 + 8);
    cJSON_Delete(it);

    /* A ~1500-byte item: 2 WCU to write, 1 RCU strongly consistent. */
    char *blob = malloc(1501);
    memset(blob, 'x', 1500);
    blob[1500] = '\0';
    it = J("{\"PK\":\"CAP\",\"SK\":\"1\"}");
    cJSON_AddStringToObject(it, "v", blob);
    assert_int_equal(store_put(c->s, it, NULL), 0);
    assert_true(top_of(c->s, "CAP", true) == 2);
    cJSON *out = NULL;
    assert_int_equal(store_get(c->s, "CAP", "1", true, &out), 0);
    cJSON_Delete(out);
    assert_true(top_of(c->s, "CAP", false) == 1);
    assert_int_equal(store_get(c->s, "CAP", "1", false, &out), 0);
    cJSON_Delete(out);
    assert_true(top_of(c->s, "CAP", false) == 1.5);
    /* A missing item still costs the minimum. */
    assert_int_equal(store_get(c->s, "CAP", "none", false, &out), ERR_NOTFOUND);
    assert_true(top_of(c->s, "CAP", false) == 2);
    /* A query sums the items then rounds: 3 x 1.5 KB = 4.5 KB -> 2 RCU. */
    put_ok(c->s, "{\"PK\":\"CAP\",\"SK\":\"2\"}");
    cJSON_ReplaceItemInObject(it, "SK", cJSON_CreateString("3"));
    assert_int_equal(store_put(c->s, it, NULL), 0);
    cJSON_ReplaceItemInObject(it, "SK", cJSON_CreateString("4"));
    assert_int_equal(store_put(c->s, it, NULL), 0);
    double before = top_of(c->s, "CAP", false);
    struct store_query q = {.pk = "CAP", .forward = true, .consistent = true};
    struct store_result res;
    assert_int_equal(store_query(c->s, &q, &res), 0);
    assert_int_equal(res.count, 4);
    store_result_free(&res);
    assert_true(top_of(c->s, "CAP", false) - before == 2);
    /* Transactional writes cost double. */
    double wb = top_of(c->s, "CAP", true);
    struct store_write w = {.kind = STORE_W_DELETE, .pk = "CAP", .sk = "2"};
    assert_int_equal(store_transact(c->s, &w, 1, NULL), 0);
    assert_true(top_of(c->s, "CAP", true) - wb == 2);
    double tw = 0, tr = 0;
    store_capacity_totals(c->s, 60, &tw, &tr);
    assert_true(tw == top_of(c->s, "CAP", true)); /* every write went to CAP */
    assert_true(tr == top_of(c->s, "CAP", false));
    cJSON_Delete(it);
    free(blob);
}

static void t_capacity_top(void **state)
{
    struct conf *c = *state;
    struct store_capacity_entry e[8];
    size_t n = 0;
    char pk[64];
    /* hot: 30 writes, warm: 10, cold: 1 each of 20 keys, spread over 3 s. */
    for (int i = 0; i < 30; i++) {
        if (i % 10 == 0)
            c->now_ms += 1000;
        snprintf(pk, sizeof(pk), "{\"PK\":\"hot\",\"SK\":\"%d\"}", i);
        put_ok(c->s, pk);
    }
    for (int i = 0; i < 10; i++) {
        snprintf(pk, sizeof(pk), "{\"PK\":\"warm\",\"SK\":\"%d\"}", i);
        put_ok(c->s, pk);
    }
    for (int i = 0; i < 20; i++) {
        snprintf(pk, sizeof(pk), "cold%02d", i);
        put_key(c->s, pk, "x");
    }
    assert_int_equal(store_capacity_top(c->s, 60, 3, e, &n), 0);
    assert_int_equal(n, 3);
    assert_string_equal(e[0].pk, "hot");
    assert_true(e[0].wcu == 30);
    assert_string_equal(e[1].pk, "warm");
    assert_true(e[1].wcu == 10);
    assert_string_equal(e[2].pk, "cold00"); /* ties by key */
    /* The last second alone: hot and warm tie at 10 (ordered by key). */
    assert_int_equal(store_capacity_top(c->s, 1, 2, e, &n), 0);
    assert_int_equal(n, 2);
    assert_string_equal(e[0].pk, "hot");
    assert_true(e[0].wcu == 10);
    assert_string_equal(e[1].pk, "warm");
    /* Asking for more than exist returns what exists. */
    assert_int_equal(store_capacity_top(c->s, 60, 8, e, &n), 0);
    assert_int_equal(n, 8);
    assert_int_equal(store_capacity_top(c->s, 60, 0, NULL, &n), 0);
    assert_int_equal(n, 0);
}

static void t_capacity_window(void **state)
{
    struct conf *c = *state;
    struct store_capacity_entry e[4];
    size_t n = 9;
    double w, r;
    put_key(c->s, "K", "1");
    c->now_ms += 1000;
    put_key(c->s, "K", "2");
    put_key(c->s, "K", "3");
    assert_int_equal(store_capacity_top(c->s, 1, 4, e, &n), 0);
    assert_int_equal(n, 1);
    assert_true(e[0].wcu == 2);
    assert_int_equal(store_capacity_top(c->s, 2, 4, e, &n), 0);
    assert_true(e[0].wcu == 3);
    /* 59 s later the first second is still in the minute, at 60 s not. */
    c->now_ms += 58 * 1000;
    store_capacity_totals(c->s, 60, &w, &r);
    assert_true(w == 3);
    c->now_ms += 1000;
    store_capacity_totals(c->s, 60, &w, &r);
    assert_true(w == 2);
    c->now_ms += 1000;
    assert_int_equal(store_capacity_top(c->s, 60, 4, e, &n), 0);
    assert_int_equal(n, 0);
    store_capacity_totals(c->s, 60, &w, &r);
    assert_true(w == 0 && r == 0);
    /* The ring slot of a second is reused cleanly after wrap-around. */
    put_key(c->s, "L", "1");
    assert_int_equal(store_capacity_top(c->s, 60, 4, e, &n), 0);
    assert_int_equal(n, 1);
    assert_string_equal(e[0].pk, "L");
    assert_true(e[0].wcu == 1);
    /* Partition heat: the family maximum per minute. */
    struct store_heat_minute hm[30];
    c->now_ms += 60 * 1000;
    for (int i = 0; i < 7; i++)
        put_key(c->s, "PRODUCT#p1", "x");
    put_key(c->s, "PRODUCT#p2", "x");
    assert_int_equal(store_capacity_heat(c->s, 30, hm, &n), 0);
    assert_true(n >= 1);
    assert_true(hm[0].wcu_max[KF_PRODUCT] == 7);
    assert_true(hm[0].wcu_max[KF_VERIFY] == 0);
    assert_int_equal(hm[0].minute_ms % 60000, 0);
}

static void t_throttle(void **state)
{
    struct conf *c = *state;
    struct store_stats st;
    cJSON *item = J("{\"PK\":\"HOT\",\"SK\":\"x\"}");
    int ok = 0, rc = 0;
    store_set_throttle(c->s, true);
    /* 1 WCU per put: the 1001st put in one second is throttled. */
    while (ok < 2000) {
        rc = store_put(c->s, item, NULL);
        if (rc)
            break;
        ok++;
    }
    assert_int_equal(rc, ERR_THROTTLED);
    assert_int_equal(ok, 1000);
    /* Another partition is unaffected; reads have their own ceiling. */
    put_key(c->s, "COOL", "x");
    cJSON *out = NULL;
    assert_int_equal(store_get(c->s, "HOT", "x", true, &out), 0);
    cJSON_Delete(out);
    /* Throttled writes wrote nothing. */
    uint64_t h = head_of(c->s);
    assert_int_equal(store_put(c->s, item, NULL), ERR_THROTTLED);
    assert_int_equal(head_of(c->s), h);
    store_get_stats(c->s, &st);
    assert_int_equal(st.throttled, 2);
    /* The next second is fresh. */
    c->now_ms += 1000;
    assert_int_equal(store_put(c->s, item, NULL), 0);
    /* Reads: 3000 RCU/s, 0.5 per eventually consistent small get. */
    int reads = 0;
    c->now_ms += 1000;
    while (reads < 10000) {
        rc = store_get(c->s, "HOT", "x", false, &out);
        cJSON_Delete(out);
        if (rc)
            break;
        reads++;
    }
    assert_int_equal(rc, ERR_THROTTLED);
    assert_int_equal(reads, 6000);
    /* Off again: no limit. */
    store_set_throttle(c->s, false);
    assert_int_equal(store_get(c->s, "HOT", "x", false, &out), 0);
    cJSON_Delete(out);
    cJSON_Delete(item);
}

static void t_stats_health(void **state)
{
    struct conf *c = *state;
    struct store_stats st;
    cJSON *out = NULL;
    double ms = -1;
    put_key(c->s, "A", "1");
    put_key(c->s, "A", "2");
    assert_int_equal(store_get(c->s, "A", "1", true, &out), 0);
    cJSON_Delete(out);
    assert_int_equal(store_get(c->s, "A", "9", true, &out), ERR_NOTFOUND);
    assert_int_equal(store_delete(c->s, "A", "2", NULL), 0);
    struct store_query q = {.pk = "A"};
    struct store_result res;
    assert_int_equal(store_query(c->s, &q, &res), 0);
    store_result_free(&res);
    assert_int_equal(store_get(c->s, "", "1", true, &out), ERR_INVALID);
    store_get_stats(c->s, &st);
    assert_int_equal(st.puts, 2);
    assert_int_equal(st.gets, 3);
    assert_int_equal(st.deletes, 1);
    assert_int_equal(st.queries, 1);
    assert_int_equal(st.errors, 1);
    assert_int_equal(st.commits, 3);
    assert_int_equal(store_health(c->s, &ms), 0);
    assert_true(ms >= 0);
}

int store_conformance_run(const char *driver_name, struct store *(*open)(void *ctx),
                          void (*cleanup)(void *ctx), void *ctx)
{
    struct conf_factory f = {open, cleanup, ctx};
#define CT(fn) cmocka_unit_test_prestate_setup_teardown(fn, conf_setup, conf_teardown, &f)
    const struct CMUnitTest tests[] = {
        CT(t_put_get_delete),
        CT(t_invalid_items),
        CT(t_conditional_put),
        CT(t_conditional_delete),
        CT(t_update),
        CT(t_query_pagination),
        CT(t_query_sk_conditions),
        CT(t_query_projection),
        CT(t_query_bytewise),
        CT(t_query_gsi),
        CT(t_query_count_and_cursor),
        CT(t_query_page_bytes),
        CT(t_transact_commit),
        CT(t_transact_rollback),
        CT(t_transact_limits),
        CT(t_batch),
        CT(t_ttl),
        CT(t_stream_order),
        CT(t_checkpoint_resume),
        CT(t_stream_trim),
        CT(t_capacity_rounding),
        CT(t_capacity_top),
        CT(t_capacity_window),
        CT(t_throttle),
        CT(t_stats_health),
    };
#undef CT
    return _cmocka_run_group_tests(driver_name, tests, sizeof(tests) / sizeof(tests[0]), NULL,
                                   NULL);
}
