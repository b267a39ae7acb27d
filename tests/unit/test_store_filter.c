/*
 * test_store_filter.c - the store's read shortcuts for hot paths:
 * store_stream_read_filtered() (records skipped without parsing, the
 * reader's position past them) and the query visitor (one attribute per
 * item, no trees), each on the SQLite driver and through store.c's
 * generic fallback for drivers without them; and item_json_attr_str().
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
#include <unistd.h>

#include "core/canon.h"
#include "store/item_json.h"
#include "store/store.h"
#include "store/store_int.h"
#include "util/err.h"

struct fx {
    char dir[64];
    char path[128];
    struct store *s;
    struct store_ops plain; /* the driver's table without the shortcuts */
};

static void put(struct store *s, const char *pk, const char *sk, const char *country)
{
    cJSON *it = cJSON_CreateObject();
    cJSON_AddStringToObject(it, "PK", pk);
    cJSON_AddStringToObject(it, "SK", sk);
    if (country)
        cJSON_AddStringToObject(it, "country", country);
    cJSON_AddNumberToObject(it, "n", 1);
    assert_int_equal(store_put(s, it, NULL), 0);
    cJSON_Delete(it);
}

/* Opens a temp store; generic=true hides the driver's shortcuts so
 * store.c's fallbacks run. */
static void fx_open(struct fx *f, bool generic)
{
    struct store_options o = {.durability = STORE_DURABILITY_NORMAL};
    char err[256];
    snprintf(f->dir, sizeof(f->dir), "/tmp/gp-filter.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof(f->path), "%s/db", f->dir);
    o.path = f->path;
    f->s = store_open_sqlite(&o, err, sizeof(err));
    assert_non_null(f->s);
    if (generic) {
        f->plain = *f->s->ops;
        f->plain.stream_read_filtered = NULL;
        f->plain.query_visits = false;
        f->s->ops = &f->plain;
    }
}

static void fx_close(struct fx *f)
{
    char p[160];
    store_close(f->s);
    unlink(f->path);
    snprintf(p, sizeof(p), "%s-wal", f->path);
    unlink(p);
    snprintf(p, sizeof(p), "%s-shm", f->path);
    unlink(p);
    rmdir(f->dir);
}

/* Stream: 1 P#a/SCAN#1 (insert), 2 X#b/SCAN#2, 3 P#a/META, 4 P#a/EVENT#1,
 * 5 P#a/SCAN#1 (modify), 6 P#a/SCAN#1 (remove), 7 P#c/SCAN#3. */
static void write_stream(struct store *s)
{
    put(s, "P#a", "SCAN#1", "US");
    put(s, "X#b", "SCAN#2", "US");
    put(s, "P#a", "META", NULL);
    put(s, "P#a", "EVENT#1", NULL);
    put(s, "P#a", "SCAN#1", "FR");
    assert_int_equal(store_delete(s, "P#a", "SCAN#1", NULL), 0);
    put(s, "P#c", "SCAN#3", "GB");
}

static void check_filtered(bool generic)
{
    static const char *const sks[] = {"SCAN#", "EVENT#"};
    const struct stream_filter f = {
        .kinds = STREAM_KIND_BIT(STORE_INSERT), .pk_prefix = "P#", .sk_prefixes = sks, .nsk = 2};
    struct fx x;
    struct stream_record *r = NULL;
    size_t n = 0, examined = 0;
    uint64_t last = 0;

    fx_open(&x, generic);
    write_stream(x.s);
    /* The first 5 records: 1 and 4 match. */
    assert_int_equal(store_stream_read_filtered(x.s, 0, 5, &f, &r, &n, &last, &examined), 0);
    assert_int_equal(examined, 5);
    assert_int_equal(last, 5);
    assert_int_equal(n, 2);
    assert_int_equal(r[0].seq, 1);
    assert_string_equal(r[0].sk, "SCAN#1");
    assert_string_equal(cJSON_GetObjectItem(r[0].image, "country")->valuestring, "US");
    assert_int_equal(r[1].seq, 4);
    assert_string_equal(r[1].sk, "EVENT#1");
    store_stream_free(r, n);
    /* Nothing wanted among 5..6: the position still moves. */
    assert_int_equal(store_stream_read_filtered(x.s, 4, 2, &f, &r, &n, &last, &examined), 0);
    assert_int_equal(n, 0);
    assert_null(r);
    assert_int_equal(examined, 2);
    assert_int_equal(last, 6);
    /* The rest, then the end. */
    assert_int_equal(store_stream_read_filtered(x.s, 6, 100, &f, &r, &n, &last, &examined), 0);
    assert_int_equal(n, 1);
    assert_int_equal(r[0].seq, 7);
    assert_int_equal(last, 7);
    store_stream_free(r, n);
    assert_int_equal(store_stream_read_filtered(x.s, 7, 100, &f, &r, &n, &last, &examined), 0);
    assert_int_equal(n, 0);
    assert_int_equal(examined, 0);
    assert_int_equal(last, 7);
    /* No filter: every record. */
    assert_int_equal(store_stream_read_filtered(x.s, 0, 100, NULL, &r, &n, &last, &examined), 0);
    assert_int_equal(n, 7);
    assert_int_equal(examined, 7);
    assert_null(r[5].image); /* the REMOVE */
    store_stream_free(r, n);
    /* Alternatives (or_else): inserts of P#/SCAN#, or any change of X#.
     * Matches 1, 2 and 7; the MODIFY (5) and REMOVE (6) of P#a/SCAN#1 and
     * the other P#a records do not. */
    {
        static const char *const scan_sk[] = {"SCAN#"};
        const struct stream_filter any_x = {.pk_prefix = "X#"};
        const struct stream_filter either = {.kinds = STREAM_KIND_BIT(STORE_INSERT),
                                             .pk_prefix = "P#",
                                             .sk_prefixes = scan_sk,
                                             .nsk = 1,
                                             .or_else = &any_x};
        assert_int_equal(store_stream_read_filtered(x.s, 0, 100, &either, &r, &n, &last, &examined),
                         0);
        assert_int_equal(examined, 7);
        assert_int_equal(n, 3);
        assert_int_equal(r[0].seq, 1);
        assert_int_equal(r[1].seq, 2);
        assert_string_equal(r[1].pk, "X#b");
        assert_int_equal(r[2].seq, 7);
        store_stream_free(r, n);
        assert_true(store_stream_match(&either, STORE_REMOVE, "X#q", "anything"));
        assert_false(store_stream_match(&either, STORE_MODIFY, "P#a", "SCAN#1"));
        assert_false(store_stream_match(&either, STORE_INSERT, "Q#a", "SCAN#1"));
    }
    /* Bad arguments. */
    assert_int_equal(store_stream_read_filtered(x.s, 0, 10, &f, NULL, &n, &last, &examined),
                     ERR_INVALID);
    fx_close(&x);
}

static bool keys_only_x(const char *pk, const char *sk)
{
    (void)sk;
    return strncmp(pk, "X#", 2) == 0;
}

/* store_options.stream_keys_only: the chosen items' records carry no
 * image (kind and keys as usual); the others and the items themselves
 * are untouched. */
static void t_keys_only_records(void **state)
{
    (void)state;
    struct store_options o = {.durability = STORE_DURABILITY_NORMAL,
                              .stream_keys_only = keys_only_x};
    struct fx x;
    struct stream_record *r = NULL;
    size_t n = 0;
    cJSON *it = NULL;
    char err[256];

    snprintf(x.dir, sizeof(x.dir), "/tmp/gp-filter.XXXXXX");
    assert_non_null(mkdtemp(x.dir));
    snprintf(x.path, sizeof(x.path), "%s/db", x.dir);
    o.path = x.path;
    x.s = store_open_sqlite(&o, err, sizeof(err));
    assert_non_null(x.s);
    write_stream(x.s);
    assert_int_equal(store_stream_read(x.s, 0, 100, &r, &n), 0);
    assert_int_equal(n, 7);
    for (size_t i = 0; i < n; i++) {
        bool x_rec = !strcmp(r[i].pk, "X#b");
        if (x_rec || r[i].kind == STORE_REMOVE)
            assert_null(r[i].image);
        else
            assert_non_null(r[i].image);
    }
    assert_int_equal(r[1].kind, STORE_INSERT);
    assert_string_equal(r[1].sk, "SCAN#2");
    assert_string_equal(cJSON_GetObjectItem(r[0].image, "country")->valuestring, "US");
    store_stream_free(r, n);
    assert_int_equal(store_get(x.s, "X#b", "SCAN#2", true, &it), 0);
    assert_string_equal(cJSON_GetObjectItem(it, "country")->valuestring, "US");
    cJSON_Delete(it);
    fx_close(&x);
}

static void t_filtered_sqlite(void **state)
{
    (void)state;
    check_filtered(false);
}

static void t_filtered_generic(void **state)
{
    (void)state;
    check_filtered(true);
}

struct seen {
    char v[8][16];
    char sks[8][16]; /* the sort key of every visited item, in order */
    int n, nulls, nsks;
};

static void visit(void *arg, const char *sk, const char *value, size_t len)
{
    struct seen *s = arg;
    assert_non_null(sk);
    assert_true(strlen(sk) < sizeof(s->sks[0]) && s->nsks < 8);
    strcpy(s->sks[s->nsks++], sk);
    if (!value) {
        s->nulls++;
        return;
    }
    assert_true(len < sizeof(s->v[0]) && s->n < 8);
    memcpy(s->v[s->n], value, len);
    s->v[s->n][len] = '\0';
    s->n++;
}

static void check_visit(bool generic)
{
    struct fx x;
    struct store_result res = {0};
    struct seen sn = {.n = 0};
    struct store_query q = {.index = STORE_INDEX_TABLE,
                            .pk = "P#v",
                            .sk_op = STORE_SK_BEGINS,
                            .sk = "SCAN#",
                            .limit = 3,
                            .forward = false,
                            .consistent = true,
                            .visit_attr = "country",
                            .visit = visit,
                            .visit_arg = &sn};
    cJSON *it;

    fx_open(&x, generic);
    put(x.s, "P#v", "SCAN#1", "US");
    put(x.s, "P#v", "SCAN#2", "F\"R"); /* escaped in the body */
    put(x.s, "P#v", "SCAN#3", NULL);
    put(x.s, "P#v", "SCAN#4", "GB");
    put(x.s, "P#v", "META", "XX");
    it = cJSON_CreateObject(); /* a non-string country */
    cJSON_AddStringToObject(it, "PK", "P#v");
    cJSON_AddStringToObject(it, "SK", "SCAN#0");
    cJSON_AddNumberToObject(it, "country", 5);
    assert_int_equal(store_put(x.s, it, NULL), 0);
    cJSON_Delete(it);

    assert_int_equal(store_query(x.s, &q, &res), 0);
    assert_null(res.items);
    assert_int_equal(res.count, 3);
    assert_non_null(res.next);
    assert_int_equal(sn.n, 2);
    assert_string_equal(sn.v[0], "GB");
    assert_string_equal(sn.v[1], "F\"R");
    assert_int_equal(sn.nulls, 1);
    q.start = res.next;
    assert_int_equal(store_query(x.s, &q, &res), 0);
    free((char *)q.start);
    assert_int_equal(res.count, 2);
    assert_null(res.next);
    assert_int_equal(sn.n, 3);
    assert_string_equal(sn.v[2], "US");
    assert_int_equal(sn.nulls, 2);
    /* every item visited with its own sort key, newest first */
    assert_int_equal(sn.nsks, 5);
    for (int i = 0; i < 5; i++) {
        char want[16];
        snprintf(want, sizeof want, "SCAN#%d", 4 - i);
        assert_string_equal(sn.sks[i], want);
    }
    store_result_free(&res);
    /* A visitor with count_only, or without an attribute, is refused. */
    q.start = NULL;
    q.count_only = true;
    assert_int_equal(store_query(x.s, &q, &res), ERR_INVALID);
    q.count_only = false;
    q.visit_attr = NULL;
    assert_int_equal(store_query(x.s, &q, &res), ERR_INVALID);
    fx_close(&x);
}

static void t_visit_sqlite(void **state)
{
    (void)state;
    check_visit(false);
}

static void t_visit_generic(void **state)
{
    (void)state;
    check_visit(true);
}

static int attr(const char *text, const char *name, char *out, size_t cap)
{
    const char *v = NULL;
    size_t n = 0;
    char *scratch = NULL;
    int rc = item_json_attr_str(text, strlen(text), name, &v, &n, &scratch);
    out[0] = '\0';
    if (rc == 1) {
        assert_true(n < cap);
        memcpy(out, v, n);
        out[n] = '\0';
    }
    cJSON_free(scratch);
    return rc;
}

static void t_attr_str(void **state)
{
    (void)state;
    char v[64];
    assert_int_equal(attr("{\"PK\":\"a\",\"c\":\"US\",\"d\":1}", "c", v, sizeof(v)), 1);
    assert_string_equal(v, "US");
    assert_int_equal(attr("{\"PK\":\"a\",\"x\":{\"c\":\"no\"},\"c\":\"\"}", "c", v, sizeof(v)), 1);
    assert_string_equal(v, "");
    assert_int_equal(attr("{\"c\":\"a\\u00e9\\n\"}", "c", v, sizeof(v)), 1);
    assert_string_equal(v, "a\xc3\xa9\n");
    assert_int_equal(attr("{\"c\":[1,\"x\"]}", "c", v, sizeof(v)), 0);
    assert_int_equal(attr("{\"cc\":\"x\"}", "c", v, sizeof(v)), 0);
    assert_int_equal(attr("{}", "c", v, sizeof(v)), 0);
    /* The first member of a name wins, as with cJSON's lookup. */
    assert_int_equal(attr("{\"c\":\"1\",\"c\":\"2\"}", "c", v, sizeof(v)), 1);
    assert_string_equal(v, "1");
    /* Whitespace and other non-canonical text: the parser decides. */
    assert_int_equal(attr("{ \"c\" : \"sp\" }", "c", v, sizeof(v)), 1);
    assert_string_equal(v, "sp");
    assert_int_equal(attr("[1]", "c", v, sizeof(v)), -1);
    assert_int_equal(attr("{\"c\":", "c", v, sizeof(v)), -1);
}

/* Strings with quotes, backslashes and control bytes at every offset
 * (the 8-byte scanner's lanes and its tail) read back exactly. */
static void t_string_lanes(void **state)
{
    (void)state;
    static const char alphabet[] = {'a', '"', '\\', 0x01, 0x1f, ' ', 0x7f, (char)0x80, (char)0xc3};
    unsigned seed = 12345;
    for (int round = 0; round < 3000; round++) {
        char raw[48], *text;
        size_t n;
        struct buf b;
        cJSON *it;
        seed = seed * 1103515245u + 12345u;
        n = (seed >> 8) % 40;
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            /* mostly plain bytes, so runs cross the 8-byte lanes */
            raw[i] = (seed >> 8) % 4 ? 'a' + (char)((seed >> 12) % 26)
                                     : alphabet[(seed >> 12) % sizeof alphabet];
        }
        raw[n] = '\0';
        buf_init(&b, 4096);
        assert_int_equal(buf_puts(&b, "{\"k\":"), 0);
        assert_int_equal(canon_string(&b, raw, n), 0);
        assert_int_equal(buf_puts(&b, "}"), 0);
        text = b.data;
        it = item_json_parse(text, b.len);
        assert_non_null(it);
        if (strlen(raw) == n && !memchr(raw, (char)0x80, n) && !memchr(raw, (char)0xc3, n))
            assert_string_equal(cJSON_GetObjectItem(it, "k")->valuestring, raw);
        cJSON *ref = cJSON_ParseWithLength(text, b.len);
        assert_non_null(ref);
        assert_string_equal(cJSON_GetObjectItem(it, "k")->valuestring,
                            cJSON_GetObjectItem(ref, "k")->valuestring);
        cJSON_Delete(ref);
        cJSON_Delete(it);
        buf_free(&b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_filtered_sqlite),   cmocka_unit_test(t_filtered_generic),
        cmocka_unit_test(t_keys_only_records), cmocka_unit_test(t_visit_sqlite),
        cmocka_unit_test(t_visit_generic),     cmocka_unit_test(t_attr_str),
        cmocka_unit_test(t_string_lanes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
