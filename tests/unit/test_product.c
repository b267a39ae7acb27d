/*
 * test_product.c - the product entity on a real SQLite store: the items of
 * a registration (API.md §3.11 / §13.4 vectors), the duplicate rule over
 * all of a brand's products (D23), pinned code collisions (D46), category
 * labels (D40), the hash/signature check, and the JSON shapes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/chain.h"
#include "core/keys.h"
#include "core/product.h"
#include "store/store.h"
#include "util/buf.h"
#include "util/err.h"
#include "tmpdir.h"

#define BID    "5019622c-9860-4b83-a5c6-adb82ebd0412"
#define PID    "e084595c97320cfcc85309943f345760"
#define SECRET "genuproof-dev-secret"
#define T0     "2026-06-20T15:00:00.000Z"

struct fx {
    char dir[64];
    char path[128];
    struct store *s;
};

static int setup(void **state)
{
    struct fx *fx = calloc(1, sizeof *fx);
    char err[256];

    strcpy(fx->dir, "/tmp/gp-test-product.XXXXXX");
    if (!mkdtemp(fx->dir))
        return -1;
    snprintf(fx->path, sizeof fx->path, "%s/t.db", fx->dir);
    struct store_options o = {.path = fx->path, .durability = STORE_DURABILITY_NORMAL};
    fx->s = store_open_sqlite(&o, err, sizeof err);
    if (!fx->s)
        return -1;
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    struct fx *fx = *state;
    store_close(fx->s);
    if (ut_rmtree(fx->dir) != 0)
        return -1;
    free(fx);
    return 0;
}

static struct product_reg reg_of(const char *name, const char *sku)
{
    return (struct product_reg){.brand_id = BID,
                                .brand_name = "Luxe Watches",
                                .name = name,
                                .sku = sku,
                                .created_at = T0,
                                .secret = SECRET};
}

static cJSON *get(struct store *s, const char *pk, const char *sk)
{
    cJSON *o = NULL;
    assert_int_equal(store_get(s, pk, sk, true, &o), 0);
    return o;
}

static const char *sattr(const cJSON *o, const char *k)
{
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
    assert_non_null(v);
    return v;
}

static void test_register_pinned_vectors(void **state)
{
    struct fx *fx = *state;
    struct product_reg_out out;
    struct key pk, sk;
    cJSON *events = NULL;

    /* §13.4: the demo watch with sku LW-RO-42 and metadata {} */
    struct product_reg in = reg_of("Royal Oak Chronograph 42mm", "LW-RO-42");
    in.product_id = PID;
    in.code = "wfPHybaFV3_a";
    in.category = "watches";
    in.location = "Le Brassus, Switzerland";
    assert_int_equal(product_register(fx->s, &in, &out), 0);
    assert_string_equal(out.hash,
                        "ec4c737a67181b2cb7056ea7fac0bdd162e21c0aec5f18acc27ad729d80408f0");
    assert_string_equal(out.signature,
                        "9f51d44b3f0947dff47d34eeaa86d7c3111faf5a96ada91fc9d781687759f1cb");

    key_product_pk(&pk, PID);
    cJSON *p = get(fx->s, pk.s, KEY_SK_META);
    assert_string_equal(sattr(p, "category"), "Watches"); /* id -> label (D40) */
    assert_string_equal(sattr(p, "status"), "active");
    assert_string_equal(sattr(p, "GSI1PK"), "BRAND#" BID);
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(p, "imageUrl")));
    bool hm, sv;
    product_check(p, SECRET, &hm, &sv);
    assert_true(hm && sv);
    product_check(p, "another-secret", &hm, &sv);
    assert_true(hm);
    assert_false(sv);
    cJSON_Delete(p);

    key_verify_pk(&pk, "wfPHybaFV3_a");
    cJSON *code = get(fx->s, pk.s, KEY_SK_META);
    assert_string_equal(sattr(code, "productId"), PID);
    assert_string_equal(sattr(code, "GSI1PK"), pk.s);
    cJSON_Delete(code);
    key_hash_pk(&pk, out.hash);
    cJSON_Delete(get(fx->s, pk.s, KEY_SK_META));
    key_product_index_sk(&sk, T0, PID);
    cJSON *idx = get(fx->s, KEY_PK_PRODUCT_INDEX, sk.s);
    assert_string_equal(sattr(idx, "verificationCode"), "wfPHybaFV3_a");
    cJSON_Delete(idx);

    /* the genesis event, hashed as stored (§3.11) */
    assert_int_equal(chain_list(fx->s, PID, &events), 0);
    assert_int_equal(cJSON_GetArraySize(events), 1);
    const cJSON *g = cJSON_GetArrayItem(events, 0);
    assert_string_equal(sattr(g, "hash"),
                        "6bf0c9a7efae45d4e2ac9f96b569e85dbe03d9a72b17ec97079f5b194007386e");
    assert_string_equal(sattr(g, "actor"), "Luxe Watches");
    assert_string_equal(sattr(g, "location"), "Le Brassus, Switzerland");
    assert_true(chain_valid(events));
    cJSON_Delete(events);

    /* pinned code already taken by another product: refused, nothing written */
    struct product_reg again = reg_of("Other", NULL);
    again.code = "wfPHybaFV3_a";
    assert_int_equal(product_register(fx->s, &again, &out), ERR_CONDITION);
}

static void test_register_generated_and_metadata(void **state)
{
    struct fx *fx = *state;
    struct product_reg_out out;
    struct key pk;
    cJSON *meta = cJSON_Parse("{\"material\":\"steel\",\"caliber\":4401}");

    struct product_reg in = reg_of("Royal Oak Chronograph 42mm", "LW-RO-42");
    in.metadata = meta;
    in.batch = true;
    assert_int_equal(product_register(fx->s, &in, &out), 0);
    assert_int_equal(strlen(out.product_id), 32);
    assert_int_equal(strlen(out.code), 12);
    key_product_pk(&pk, out.product_id);
    cJSON *p = get(fx->s, pk.s, KEY_SK_META);
    /* batch items have no imageUrl attribute */
    assert_null(cJSON_GetObjectItemCaseSensitive(p, "imageUrl"));
    bool hm, sv;
    product_check(p, SECRET, &hm, &sv);
    assert_true(hm && sv);
    /* tampering with the name breaks the hash */
    cJSON_ReplaceItemInObjectCaseSensitive(p, "name", cJSON_CreateString("Fake"));
    product_check(p, SECRET, &hm, &sv);
    assert_false(hm);
    assert_true(sv);
    cJSON_Delete(p);

    cJSON *events = NULL;
    assert_int_equal(chain_list(fx->s, out.product_id, &events), 0);
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(events, 0), "data");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(data, "batch")));
    assert_true(chain_valid(events));
    cJSON_Delete(events);
    cJSON_Delete(meta);
}

static void test_duplicate_rule(void **state)
{
    struct fx *fx = *state;
    struct product_reg_out out;
    struct product_reg a = reg_of("Tote", "T-1");
    struct product_reg b = reg_of("Tote", "T-2");
    struct product_reg c = reg_of("Tote", NULL);
    struct product_reg d = reg_of("Bag", NULL);
    struct product_reg e = reg_of("Bag", "B-1");
    struct product_reg f = reg_of("Bag", "");

    assert_int_equal(product_register(fx->s, &a, &out), 0);
    /* same name + same sku: duplicate */
    assert_int_equal(product_register(fx->s, &a, &out), ERR_CONFLICT);
    /* same name, different sku: allowed */
    assert_int_equal(product_register(fx->s, &b, &out), 0);
    /* same name, no sku: duplicate of any of them */
    assert_int_equal(product_register(fx->s, &c, &out), ERR_CONFLICT);

    assert_int_equal(product_register(fx->s, &d, &out), 0);
    /* a product without sku blocks the name for every sku */
    assert_int_equal(product_register(fx->s, &e, &out), ERR_CONFLICT);
    assert_int_equal(product_register(fx->s, &f, &out), ERR_CONFLICT);

    /* another brand may use the same name */
    struct product_reg other = reg_of("Tote", "T-1");
    other.brand_id = "another-brand";
    assert_int_equal(product_register(fx->s, &other, &out), 0);

    /* names differing only by case are different products */
    struct product_reg lower = reg_of("tote", "T-1");
    assert_int_equal(product_register(fx->s, &lower, &out), 0);
}

static void test_register_invalid(void **state)
{
    struct fx *fx = *state;
    struct product_reg_out out;
    struct product_reg in = reg_of(NULL, NULL);
    assert_int_equal(product_register(fx->s, &in, &out), ERR_INVALID);
    in = reg_of("x", NULL);
    in.secret = NULL;
    assert_int_equal(product_register(fx->s, &in, &out), ERR_INVALID);
    in = reg_of("x", NULL);
    in.product_id = "0123456789abcdef0123456789abcdef0"; /* 33 chars */
    assert_int_equal(product_register(fx->s, &in, &out), ERR_INVALID);
    cJSON *arr = cJSON_CreateArray();
    in = reg_of("x", NULL);
    in.metadata = arr;
    assert_int_equal(product_register(fx->s, &in, &out), ERR_INVALID);
    cJSON_Delete(arr);
}

static void test_category_label(void **state)
{
    (void)state;
    assert_string_equal(product_category_label("watches"), "Watches");
    assert_string_equal(product_category_label("WATCHES"), "Watches");
    assert_string_equal(product_category_label("Wine & Spirits"), "Wine & Spirits");
    assert_string_equal(product_category_label("wine_spirits"), "Wine & Spirits");
    assert_string_equal(product_category_label("automotive"), "Automotive Parts");
    assert_string_equal(product_category_label("Pharma"), "Pharma");
    assert_null(product_category_label(NULL));
}

static char *render(void (*fn)(struct jsonw *, const cJSON *, double), const cJSON *item,
                    double scans)
{
    struct buf b = BUF_INIT(1 << 16);
    struct jsonw w;
    jsonw_init(&w, &b);
    fn(&w, item, scans);
    assert_int_equal(jsonw_error(&w), 0);
    return buf_steal(&b);
}

static void test_json_shapes(void **state)
{
    (void)state;
    cJSON *p = cJSON_Parse(
        "{\"PK\":\"PRODUCT#p\",\"SK\":\"META\",\"productId\":\"p\",\"brandId\":\"b\","
        "\"brandName\":\"B\",\"name\":\"N\",\"sku\":null,\"category\":\"Watches\","
        "\"verificationCode\":\"c\",\"hash\":\"h\",\"signature\":\"s\",\"status\":\"active\","
        "\"metadata\":{},\"createdAt\":\"t\",\"updatedAt\":\"u\",\"scanCount\":3}");
    char *s = render(product_write_list_json, p, 5);
    assert_string_equal(s,
                        "{\"productId\":\"p\",\"name\":\"N\",\"sku\":null,\"category\":\"Watches\","
                        "\"verificationCode\":\"c\",\"hash\":\"h\",\"status\":\"active\","
                        "\"scanCount\":5,\"createdAt\":\"t\"}");
    free(s);
    s = render(product_write_search_json, p, 3);
    assert_string_equal(s, "{\"productId\":\"p\",\"name\":\"N\",\"brandName\":\"B\",\"sku\":null,"
                           "\"category\":\"Watches\",\"status\":\"active\",\"verificationCode\":"
                           "\"c\",\"hash\":\"h\",\"createdAt\":\"t\",\"scanCount\":3}");
    free(s);
    s = render(product_write_search_brand_json, p, 0);
    assert_string_equal(s,
                        "{\"productId\":\"p\",\"name\":\"N\",\"sku\":null,\"category\":\"Watches\","
                        "\"status\":\"active\",\"verificationCode\":\"c\",\"createdAt\":\"t\","
                        "\"scanCount\":0}");
    free(s);

    struct buf b = BUF_INIT(1 << 16);
    struct jsonw w;
    jsonw_init(&w, &b);
    product_write_verify_json(&w, p);
    assert_string_equal(buf_cstr(&b),
                        "{\"productId\":\"p\",\"brandId\":\"b\",\"brandName\":\"B\",\"name\":\"N\","
                        "\"sku\":null,\"category\":\"Watches\",\"description\":null,\"imageUrl\":"
                        "null,\"verificationCode\":\"c\",\"hash\":\"h\",\"signature\":\"s\","
                        "\"status\":\"active\",\"createdAt\":\"t\",\"updatedAt\":\"u\"}");
    buf_free(&b);
    assert_true(product_scan_count(p) == 3);
    cJSON_Delete(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_register_pinned_vectors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_register_generated_and_metadata, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duplicate_rule, setup, teardown),
        cmocka_unit_test_setup_teardown(test_register_invalid, setup, teardown),
        cmocka_unit_test(test_category_label),
        cmocka_unit_test(test_json_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
