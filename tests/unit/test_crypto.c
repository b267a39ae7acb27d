/*
 * test_crypto.c - crypto.c against tests/vectors/crypto.json (every case),
 * the API.md §3.11 vectors and the §13.4 demo cross-check table.
 *
 * The vector file is read at test time from $GP_SRCDIR (default ".", the
 * repository root the tests run from).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/canon.h"
#include "core/crypto.h"
#include "util/buf.h"

#define SECRET "genuproof-dev-secret"
#define BRAND  "5019622c-9860-4b83-a5c6-adb82ebd0412"

/* ---- vector file ---- */

static cJSON *load_vectors(void)
{
    const char *dir = getenv("GP_SRCDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/vectors/crypto.json", dir && *dir ? dir : ".");
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    struct buf b = BUF_INIT(1 << 20);
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        assert_int_equal(buf_append(&b, chunk, n), 0);
    fclose(f);
    cJSON *j = cJSON_ParseWithLength(b.data, b.len);
    buf_free(&b);
    assert_non_null(j);
    return j;
}

static const char *str_or_null(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const char *need_str(const cJSON *o, const char *k)
{
    const char *s = str_or_null(o, k);
    assert_non_null(s);
    return s;
}

static void test_vectors_products(void **state)
{
    (void)state;
    cJSON *v = load_vectors();
    const cJSON *secret = cJSON_GetObjectItemCaseSensitive(v, "secret");
    assert_string_equal(secret->valuestring, SECRET);

    char h[CRYPTO_HEX_LEN + 1];
    crypto_sha256_hex("", 0, h);
    assert_string_equal(h, need_str(v, "empty_sha256"));
    assert_string_equal(h, CRYPTO_GENESIS);

    const cJSON *p;
    int count = 0;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(v, "products"))
    {
        const cJSON *in = cJSON_GetObjectItemCaseSensitive(p, "input");
        const cJSON *meta = cJSON_GetObjectItemCaseSensitive(in, "metadata");
        struct buf b = BUF_INIT(1 << 16);
        assert_int_equal(canon_product_text(&b, need_str(in, "productId"), need_str(in, "brandId"),
                                            need_str(in, "name"), str_or_null(in, "sku"), meta,
                                            need_str(in, "createdAt")),
                         0);
        assert_string_equal(buf_cstr(&b), need_str(p, "canonical"));
        buf_free(&b);

        assert_int_equal(crypto_product_hash(need_str(in, "productId"), need_str(in, "brandId"),
                                             need_str(in, "name"), str_or_null(in, "sku"), meta,
                                             need_str(in, "createdAt"), h),
                         0);
        assert_string_equal(h, need_str(p, "hash"));
        char sig[CRYPTO_HEX_LEN + 1];
        crypto_product_signature(secret->valuestring, h, sig);
        assert_string_equal(sig, need_str(p, "signature"));
        assert_true(crypto_signature_valid(secret->valuestring, h, sig));
        count++;
    }
    assert_true(count >= 4);
    cJSON_Delete(v);
}

static void test_vectors_events_and_fingerprints(void **state)
{
    (void)state;
    cJSON *v = load_vectors();
    const cJSON *e;
    char h[CRYPTO_HEX_LEN + 1];
    char prev_hash[CRYPTO_HEX_LEN + 1] = CRYPTO_GENESIS;
    int count = 0;

    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(v, "events"))
    {
        const cJSON *in = cJSON_GetObjectItemCaseSensitive(e, "input");
        const cJSON *data = cJSON_GetObjectItemCaseSensitive(in, "data");
        struct buf b = BUF_INIT(1 << 16);
        assert_int_equal(canon_event_text(&b, need_str(in, "productId"), need_str(in, "type"),
                                          need_str(in, "actor"), need_str(in, "timestamp"), data,
                                          need_str(in, "previousHash")),
                         0);
        assert_string_equal(buf_cstr(&b), need_str(e, "canonical"));
        buf_free(&b);
        /* the events form a chain */
        assert_string_equal(need_str(in, "previousHash"), prev_hash);
        assert_int_equal(crypto_event_hash(need_str(in, "productId"), need_str(in, "type"),
                                           need_str(in, "actor"), need_str(in, "timestamp"), data,
                                           need_str(in, "previousHash"), h),
                         0);
        assert_string_equal(h, need_str(e, "hash"));
        memcpy(prev_hash, h, sizeof h);
        count++;
    }
    assert_int_equal(count, 2);

    count = 0;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(v, "fingerprints"))
    {
        crypto_fingerprint(need_str(e, "ip"), need_str(e, "userAgent"), h);
        assert_string_equal(h, need_str(e, "fingerprint"));
        const char *input = need_str(e, "input");
        crypto_sha256_hex(input, strlen(input), h);
        assert_string_equal(h, need_str(e, "fingerprint"));
        count++;
    }
    assert_int_equal(count, 2);
    cJSON_Delete(v);
}

/* ---- API.md §3.11 ---- */

#define WATCH      "e084595c97320cfcc85309943f345760"
#define WATCH_NAME "Royal Oak Chronograph 42mm"
#define T0         "2026-06-20T15:00:00.000Z"

static void test_api_vectors_product(void **state)
{
    (void)state;
    char h[CRYPTO_HEX_LEN + 1], sig[CRYPTO_HEX_LEN + 1];
    struct buf b = BUF_INIT(4096);

    assert_int_equal(canon_product_text(&b, WATCH, BRAND, WATCH_NAME, NULL, NULL, T0), 0);
    assert_string_equal(buf_cstr(&b),
                        "{\"productId\":\"e084595c97320cfcc85309943f345760\",\"brandId\":"
                        "\"5019622c-9860-4b83-a5c6-adb82ebd0412\",\"name\":\"Royal Oak "
                        "Chronograph 42mm\",\"sku\":\"\",\"metadata\":{},\"createdAt\":"
                        "\"2026-06-20T15:00:00.000Z\"}");
    buf_free(&b);
    assert_int_equal(crypto_product_hash(WATCH, BRAND, WATCH_NAME, NULL, NULL, T0, h), 0);
    assert_string_equal(h, "abb841e0dbd7da4a9bc6d1848420ed1260747c570e2bd37a6c25f853faa763ab");
    crypto_product_signature(SECRET, h, sig);
    assert_string_equal(sig, "c914770cd069014b3e2cc62c11eeb07688a894cb03062a9072d862e7a55b4303");

    cJSON *meta = cJSON_Parse("{\"material\":\"steel\",\"caliber\":4401}");
    assert_int_equal(crypto_product_hash(WATCH, BRAND, WATCH_NAME, "LW-RO-42", meta, T0, h), 0);
    assert_string_equal(h, "c40782da1939154e2f070a5982c39eff4889e52e62442a5fff48de9d4addd47c");
    crypto_product_signature(SECRET, h, sig);
    assert_string_equal(sig, "1567be51189f3ebd3e70ccdcf0d50c46bb2f87883f6da969aa7051110c599a4e");
    cJSON_Delete(meta);

    /* a tampered signature or another secret does not verify */
    assert_true(crypto_signature_valid(SECRET, h, sig));
    sig[0] = sig[0] == '0' ? '1' : '0';
    assert_false(crypto_signature_valid(SECRET, h, sig));
    assert_false(crypto_signature_valid(SECRET, h, "short"));
    assert_false(crypto_signature_valid("other", h,
                                        "1567be51189f3ebd3e70ccdcf0d50c46bb2f87883f6da969aa705111"
                                        "0c599a4e"));
}

static void test_api_vectors_events(void **state)
{
    (void)state;
    char h1[CRYPTO_HEX_LEN + 1], h2[CRYPTO_HEX_LEN + 1], h3[CRYPTO_HEX_LEN + 1];
    cJSON *data = cJSON_Parse("{\"registeredBy\":\"" BRAND "\"}");
    cJSON *empty = cJSON_CreateObject();

    assert_int_equal(
        crypto_event_hash(WATCH, "manufactured", "Luxe Watches", T0, data, CRYPTO_GENESIS, h1), 0);
    assert_string_equal(h1, "6bf0c9a7efae45d4e2ac9f96b569e85dbe03d9a72b17ec97079f5b194007386e");
    assert_int_equal(crypto_event_hash(WATCH, "shipped", "Swiss Post International",
                                       "2026-06-21T09:30:00.000Z", empty, h1, h2),
                     0);
    assert_string_equal(h2, "fb8a83855fcb829dd0a39faa03c54ac12b8ef44e63650d8882ac891dfb4a2a48");
    /* data NULL hashes as {} */
    assert_int_equal(crypto_event_hash(WATCH, "shipped", "Swiss Post International",
                                       "2026-06-21T09:30:00.000Z", NULL, h1, h3),
                     0);
    assert_string_equal(h3, h2);
    /* Original genesis rule: actor = brandId, data {} */
    assert_int_equal(crypto_event_hash(WATCH, "manufactured", BRAND, T0, NULL, CRYPTO_GENESIS, h3),
                     0);
    assert_string_equal(h3, "2ac8ec0ec936f15255191c96e21640ac47eb3b46be4a53f3b194349174005747");
    cJSON_Delete(data);
    cJSON_Delete(empty);
}

static void test_api_vectors_misc(void **state)
{
    (void)state;
    char h[CRYPTO_HEX_LEN + 1];

    crypto_fingerprint("203.0.113.7", "Mozilla/5.0", h);
    assert_string_equal(h, "3329eae675640d2ad003aaf162234aa2e49934c5bdbc86ade28cd1101686ea6c");
    crypto_sha256_hex("alice@example.com", 17, h);
    assert_string_equal(h, "ff8d9819fc0e12bf0d24892e45987e249a28dce836a85cad60e28eaaa8c6d976");

    char a[CRYPTO_HEX_LEN + 1], b[CRYPTO_HEX_LEN + 1], c[CRYPTO_HEX_LEN + 1];
    crypto_sha256_hex("a", 1, a);
    crypto_sha256_hex("b", 1, b);
    crypto_sha256_hex("c", 1, c);
    const char *leaves[] = {a, b, c};
    crypto_merkle_root(leaves, 3, h);
    assert_string_equal(h, "0bdf27bf7ec894ca7cadfe491ec1a3ece840f117989e8c5e9bd7086467bf6c38");
    crypto_merkle_root(leaves, 0, h);
    assert_string_equal(h, CRYPTO_GENESIS);
    crypto_merkle_root(leaves, 1, h);
    assert_string_equal(h, a);
    /* two leaves: sha256(a + b) */
    char ab[2 * CRYPTO_HEX_LEN + 1], want[CRYPTO_HEX_LEN + 1];
    snprintf(ab, sizeof ab, "%s%s", a, b);
    crypto_sha256_hex(ab, strlen(ab), want);
    crypto_merkle_root(leaves, 2, h);
    assert_string_equal(h, want);
    /* four leaves equal three leaves with the last duplicated */
    const char *four[] = {a, b, c, c};
    char h4[CRYPTO_HEX_LEN + 1];
    crypto_merkle_root(four, 4, h4);
    crypto_merkle_root(leaves, 3, h);
    assert_string_equal(h4, h);
}

static void test_hmac_and_ct(void **state)
{
    (void)state;
    char h[CRYPTO_HEX_LEN + 1];
    /* RFC 4231 test case 2 */
    crypto_hmac_sha256_hex("Jefe", 4, "what do ya want for nothing?", 28, h);
    assert_string_equal(h, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    /* empty key and message are accepted */
    crypto_hmac_sha256_hex(NULL, 0, NULL, 0, h);
    assert_string_equal(h, "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");

    assert_true(crypto_ct_equal("abc", 3, "abc", 3));
    assert_false(crypto_ct_equal("abc", 3, "abd", 3));
    assert_false(crypto_ct_equal("abc", 3, "abcd", 4));
    assert_true(crypto_ct_equal("", 0, "", 0));
    assert_true(crypto_ct_streq("x", "x"));
    assert_false(crypto_ct_streq("x", "y"));
    assert_false(crypto_ct_streq("x", NULL));
}

/* ---- API.md §13.3 / §13.4 demo cross-check ---- */

struct demo_event {
    const char *type, *actor, *ts;
};

struct demo_product {
    const char *code, *name, *pinned_id, *sku, *created_at;
    struct demo_event ev[8];
    const char *hash, *sig, *head;
};

static const struct demo_product demo[] = {
    {"wfPHybaFV3_a",
     "Royal Oak Chronograph 42mm",
     WATCH,
     "LW-RO-42",
     "2026-06-20T15:00:00.000Z",
     {{"inspected", "COSC Certification Body", "2026-06-21T09:00:00.000Z"},
      {"shipped", "Swiss Post International", "2026-06-22T08:30:00.000Z"},
      {"received", "US Distribution Center (East)", "2026-06-23T16:45:00.000Z"},
      {"inspected", "Quality Assurance Team", "2026-06-24T10:15:00.000Z"},
      {"shipped", "FedEx Ground", "2026-06-25T07:30:00.000Z"},
      {"received", "Fifth Avenue Boutique", "2026-06-25T15:20:00.000Z"}},
     "ec4c737a67181b2cb7056ea7fac0bdd162e21c0aec5f18acc27ad729d80408f0",
     "9f51d44b3f0947dff47d34eeaa86d7c3111faf5a96ada91fc9d781687759f1cb",
     "4a43a2439923b9638f4d0de7e787c52280b0f980e74c7ec266ea39843c4f378d"},
    {"pOszdB-1n6IC",
     "Le Classique Tote - Noir",
     NULL,
     "LW-LCT-NR",
     "2026-06-20T15:10:00.000Z",
     {{"inspected", "Quality Control Team", "2026-06-21T11:00:00.000Z"},
      {"shipped", "DHL Express", "2026-06-22T09:00:00.000Z"},
      {"inspected", "US Customs & Border Protection", "2026-06-23T14:00:00.000Z"},
      {"received", "US Distribution Center (East)", "2026-06-24T10:00:00.000Z"},
      {"received", "Authorized Dealer", "2026-06-25T12:00:00.000Z"}},
     "bfe9d70eb191762bf2a5cd549ef6f839863831ee175f7757993654f17bf38a41",
     "00b83a4daa8a6213f561f2366ef1a9667f55bce54aacf0adb28c0000233c6dc8",
     "37e40ccf8a308c0ef55dc50cbffba1b277553b6592ee676cc47ad059f997ab09"},
    {"27dEHQymVRMl",
     "Oud Royale Eau de Parfum",
     NULL,
     "LW-OUD-100",
     "2026-06-20T15:20:00.000Z",
     {{"shipped", "DHL Express", "2026-06-21T10:00:00.000Z"},
      {"received", "Middle East Distribution", "2026-06-23T08:00:00.000Z"},
      {"received", "Dubai Mall Flagship", "2026-06-24T13:00:00.000Z"}},
     "808c5e2813dff6f2d9a3e3d46287ee8a2dd793ff60aed1b8ad42d0a7c80b0ab3",
     "2409c2e9371bf432dc3c08a897d5f7b7f608482b1f4c3735ed8f0bc7cfadfdd4",
     "db17fd2e80588f3bde6a115cfe9376df6bfaa0798bf2be80cffab8e743fa5c7a"},
    {"FshGQLRNsr4p",
     "Nautilus Travel Time 40mm",
     NULL,
     "LW-NTT-40",
     "2026-06-20T15:30:00.000Z",
     {{"inspected", "COSC Certification Body", "2026-06-21T09:30:00.000Z"},
      {"shipped", "FedEx International Priority", "2026-06-22T07:00:00.000Z"},
      {"received", "Asia-Pacific Distribution", "2026-06-23T18:00:00.000Z"},
      {"shipped", "DHL Express", "2026-06-24T06:00:00.000Z"},
      {"received", "Ginza Premium Store", "2026-06-24T20:00:00.000Z"}},
     "4cbf769ac69ae33cacc9c453bee033eb2e4ff39471e4d124e2a0f8638cb52197",
     "f8d0dfb5f122a5c75a2e20ffeac342222de42c3ae97b91a17d812547c82cb070",
     "f0cbb35955a878574e8e691138c06ffea37c32ca19262a382449902be296bc7b"},
    {"IebJZgMHdD-h",
     "Aviator Titanium Polarized",
     NULL,
     "LW-AVT-TI",
     "2026-06-20T15:40:00.000Z",
     {{"shipped", "UPS Worldwide", "2026-06-21T12:00:00.000Z"},
      {"received", "US Distribution Center (West)", "2026-06-23T09:00:00.000Z"},
      {"received", "Rodeo Drive Boutique", "2026-06-24T11:00:00.000Z"}},
     "13fbd7c94c1edb78129a908e1e0de3464e3fac5ed78bfb6bf28f82e845283354",
     "609e7cfe49a706b973800c6f38044e844f5d5834fe4b3ce60c5ca339ac6b7f45",
     "92a1bf64f3bdfda74ddf78e310018f0adecdf5f97dd760bb21160368a315bb38"},
};

static void test_demo_cross_check(void **state)
{
    (void)state;
    cJSON *genesis_data = cJSON_Parse("{\"registeredBy\":\"" BRAND "\"}");
    cJSON *empty = cJSON_CreateObject();

    for (size_t i = 0; i < sizeof demo / sizeof demo[0]; i++) {
        const struct demo_product *d = &demo[i];
        char pid[CRYPTO_HEX_LEN + 1], h[CRYPTO_HEX_LEN + 1], sig[CRYPTO_HEX_LEN + 1];
        char prev[CRYPTO_HEX_LEN + 1] = CRYPTO_GENESIS;

        if (d->pinned_id) {
            snprintf(pid, sizeof pid, "%s", d->pinned_id);
        } else {
            char seed[128];
            snprintf(seed, sizeof seed, "genuproof-demo-product:%s", d->code);
            crypto_sha256_hex(seed, strlen(seed), pid);
            pid[32] = '\0';
        }
        assert_int_equal(crypto_product_hash(pid, BRAND, d->name, d->sku, empty, d->created_at, h),
                         0);
        assert_string_equal(h, d->hash);
        crypto_product_signature(SECRET, h, sig);
        assert_string_equal(sig, d->sig);

        assert_int_equal(crypto_event_hash(pid, "manufactured", "Luxe Watches", d->created_at,
                                           genesis_data, CRYPTO_GENESIS, prev),
                         0);
        for (const struct demo_event *e = d->ev; e->type; e++) {
            assert_int_equal(crypto_event_hash(pid, e->type, e->actor, e->ts, empty, prev, h), 0);
            memcpy(prev, h, sizeof h);
        }
        assert_string_equal(prev, d->head);
    }
    cJSON_Delete(genesis_data);
    cJSON_Delete(empty);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors_products),
        cmocka_unit_test(test_vectors_events_and_fingerprints),
        cmocka_unit_test(test_api_vectors_product),
        cmocka_unit_test(test_api_vectors_events),
        cmocka_unit_test(test_api_vectors_misc),
        cmocka_unit_test(test_hmac_and_ct),
        cmocka_unit_test(test_demo_cross_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
