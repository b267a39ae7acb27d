/*
 * test_auth.c - credentials (api/auth.h): key hashing and generation,
 * bearer parsing, brand/admin/ingest resolution against a real SQLite
 * store, admin key setup (env, generated 0600 file, reuse, rotation) and
 * the pepper file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/auth.h"
#include "core/keys.h"
#include "store/store.h"
#include "util/err.h"
#include "tmpdir.h"

#define NOW "2026-06-20T14:00:00.000Z"

struct fx {
    char dir[64];
    char db[128];
    struct store *s;
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/gp-test-auth.XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    snprintf(f->db, sizeof f->db, "%s/t.db", f->dir);
    char err[256];
    struct store_options o = {.path = f->db, .durability = STORE_DURABILITY_NORMAL};
    f->s = store_open_sqlite(&o, err, sizeof err);
    if (!f->s)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    store_close(f->s);
    if (ut_rmtree(f->dir) != 0)
        return -1;
    free(f);
    return 0;
}

static void test_hash_and_generate(void **state)
{
    (void)state;
    char h[65];
    auth_key_hash("abc", h);
    assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    char k1[80], k2[80];
    auth_key_generate(AUTH_BRAND_PREFIX, k1, sizeof k1);
    auth_key_generate(AUTH_BRAND_PREFIX, k2, sizeof k2);
    assert_int_equal(strlen(k1), 4 + 64);
    assert_memory_equal(k1, "gpk_", 4);
    assert_int_equal(strspn(k1 + 4, "0123456789abcdef"), 64);
    assert_string_not_equal(k1, k2);
    assert_true(auth_key_wellformed(k1));
    assert_false(auth_key_wellformed(""));
    assert_false(auth_key_wellformed("has space"));
    assert_false(auth_key_wellformed("tab\t"));
    assert_false(auth_key_wellformed("caf\xc3\xa9"));
    char big[AUTH_KEY_MAX + 2];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_false(auth_key_wellformed(big));
    big[AUTH_KEY_MAX] = '\0';
    assert_true(auth_key_wellformed(big));
}

static void test_parse_bearer(void **state)
{
    (void)state;
    char k[AUTH_KEY_MAX + 1];
    assert_int_equal(auth_parse_bearer("Bearer gpk_123", k, sizeof k), 0);
    assert_string_equal(k, "gpk_123");
    assert_int_equal(auth_parse_bearer("  bearer   xyz  ", k, sizeof k), 0);
    assert_string_equal(k, "xyz");
    assert_int_equal(auth_parse_bearer("BEARER\tq", k, sizeof k), 0);
    assert_string_equal(k, "q");
    assert_int_equal(auth_parse_bearer("Basic dXNlcjpwYXNz", k, sizeof k), ERR_INVALID);
    assert_int_equal(auth_parse_bearer("Bearer", k, sizeof k), ERR_INVALID);
    assert_int_equal(auth_parse_bearer("Bearer ", k, sizeof k), ERR_INVALID);
    assert_int_equal(auth_parse_bearer("Bearerxyz", k, sizeof k), ERR_INVALID);
    assert_int_equal(auth_parse_bearer("Bearer a b", k, sizeof k), ERR_INVALID);
    assert_int_equal(auth_parse_bearer(NULL, k, sizeof k), ERR_INVALID);
    assert_int_equal(auth_parse_bearer("Bearer abcdef", k, 4), ERR_INVALID);
}

static void test_brand_key_resolution(void **state)
{
    struct fx *f = *state;
    char key[80], hash[65], other[80];
    struct api_principal who;
    auth_key_generate(AUTH_BRAND_PREFIX, key, sizeof key);
    auth_key_hash(key, hash);
    assert_int_equal(auth_store_key(f->s, hash, "brand", "brand-1", NOW), 0);

    /* the store holds the hash, never the key */
    struct key pk;
    cJSON *item = NULL;
    assert_non_null(key_apikey_pk(&pk, hash));
    assert_int_equal(store_get(f->s, pk.s, KEY_SK_META, true, &item), 0);
    char *text = cJSON_PrintUnformatted(item);
    assert_null(strstr(text, key));
    assert_non_null(strstr(text, "\"role\":\"brand\""));
    free(text);
    cJSON_Delete(item);

    assert_int_equal(auth_resolve_bearer(f->s, NULL, key, &who), 0);
    assert_int_equal(who.kind, API_PRINCIPAL_BRAND);
    assert_string_equal(who.brand_id, "brand-1");

    auth_key_generate(AUTH_BRAND_PREFIX, other, sizeof other);
    assert_int_equal(auth_resolve_bearer(f->s, NULL, other, &who), ERR_NOTFOUND);
    assert_int_equal(who.kind, API_ANON);
    assert_int_equal(auth_resolve_bearer(f->s, NULL, "", &who), ERR_NOTFOUND);
    /* a key differing in one character is unknown */
    key[10] = key[10] == 'a' ? 'b' : 'a';
    assert_int_equal(auth_resolve_bearer(f->s, NULL, key, &who), ERR_NOTFOUND);
}

static void test_revoked_key(void **state)
{
    struct fx *f = *state;
    char key[80], hash[65];
    struct key pk;
    struct api_principal who;
    auth_key_generate(AUTH_BRAND_PREFIX, key, sizeof key);
    auth_key_hash(key, hash);
    assert_int_equal(auth_store_key(f->s, hash, "brand", "b2", NOW), 0);
    assert_int_equal(auth_resolve_bearer(f->s, NULL, key, &who), 0);
    key_apikey_pk(&pk, hash);
    cJSON *t = cJSON_CreateTrue();
    struct store_action act = {.kind = STORE_ACT_SET, .attr = "revoked", .value = t};
    assert_int_equal(store_update(f->s, pk.s, KEY_SK_META, &act, 1, NULL, NULL), 0);
    cJSON_Delete(t);
    assert_int_equal(auth_resolve_bearer(f->s, NULL, key, &who), ERR_NOTFOUND);
}

static void test_admin_env_and_rotation(void **state)
{
    struct fx *f = *state;
    char hash[65], err[256], path[160];
    bool gen = true;
    struct api_principal who;
    snprintf(path, sizeof path, "%s/t.db.admin-key", f->dir);
    assert_int_equal(auth_admin_setup(f->s, "short", path, NOW, hash, &gen, err, sizeof err),
                     ERR_INVALID);
    assert_int_equal(
        auth_admin_setup(f->s, "admin-key-one-0123456789", path, NOW, hash, &gen, err, sizeof err),
        0);
    assert_false(gen);
    assert_int_equal(access(path, F_OK), -1); /* env key: no file written */
    assert_int_equal(auth_resolve_bearer(f->s, hash, "admin-key-one-0123456789", &who), 0);
    assert_int_equal(who.kind, API_PRINCIPAL_ADMIN);

    /* rotate: the old admin item stays in the store but no longer works */
    char hash2[65];
    assert_int_equal(
        auth_admin_setup(f->s, "admin-key-two-0123456789", path, NOW, hash2, &gen, err, sizeof err),
        0);
    assert_int_equal(auth_resolve_bearer(f->s, hash2, "admin-key-one-0123456789", &who),
                     ERR_NOTFOUND);
    assert_int_equal(auth_resolve_bearer(f->s, hash2, "admin-key-two-0123456789", &who), 0);
    assert_int_equal(who.kind, API_PRINCIPAL_ADMIN);
}

static void test_admin_generated_file(void **state)
{
    struct fx *f = *state;
    char hash[65], hash2[65], err[256], path[160], key[300];
    bool gen = false;
    struct api_principal who;
    snprintf(path, sizeof path, "%s/gen.db.admin-key", f->dir);
    assert_int_equal(auth_admin_setup(f->s, NULL, path, NOW, hash, &gen, err, sizeof err), 0);
    assert_true(gen);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    assert_non_null(fgets(key, sizeof key, fp));
    fclose(fp);
    key[strcspn(key, "\n")] = '\0';
    assert_int_equal(strlen(key), 4 + 64);
    assert_memory_equal(key, AUTH_ADMIN_PREFIX, 4);
    assert_int_equal(auth_resolve_bearer(f->s, hash, key, &who), 0);
    assert_int_equal(who.kind, API_PRINCIPAL_ADMIN);

    /* second start: the same key is reused, nothing regenerated */
    assert_int_equal(auth_admin_setup(f->s, NULL, path, NOW, hash2, &gen, err, sizeof err), 0);
    assert_false(gen);
    assert_string_equal(hash, hash2);

    /* a mangled file is refused with a message naming the file, not the key */
    fp = fopen(path, "w");
    fputs("x y\n", fp);
    fclose(fp);
    assert_int_equal(auth_admin_setup(f->s, NULL, path, NOW, hash2, &gen, err, sizeof err),
                     ERR_INVALID);
    assert_non_null(strstr(err, "admin-key"));
}

static void test_ingest_key(void **state)
{
    struct fx *f = *state;
    char hash[65];
    struct key pk;
    struct api_principal who;
    const char *key = "aik_0123456789abcdef0123456789abcdef";
    auth_key_hash(key, hash);
    key_ingestkey_pk(&pk, hash);
    cJSON *item = cJSON_CreateObject();
    cJSON_AddStringToObject(item, "PK", pk.s);
    cJSON_AddStringToObject(item, "SK", KEY_SK_META);
    cJSON_AddStringToObject(item, "brandId", "b-9");
    cJSON_AddStringToObject(item, "integrationId", "int-1");
    assert_int_equal(store_put(f->s, item, NULL), 0);
    assert_int_equal(auth_resolve_ingest(f->s, key, &who), 0);
    assert_int_equal(who.kind, API_PRINCIPAL_INGEST);
    assert_string_equal(who.brand_id, "b-9");
    assert_string_equal(who.integration_id, "int-1");
    assert_int_equal(auth_resolve_ingest(f->s, "aik_other", &who), ERR_NOTFOUND);
    /* an ingest key is not a bearer key, and the other way round */
    assert_int_equal(auth_resolve_bearer(f->s, NULL, key, &who), ERR_NOTFOUND);
    /* deactivated integration */
    cJSON_AddFalseToObject(item, "active");
    assert_int_equal(store_put(f->s, item, NULL), 0);
    assert_int_equal(auth_resolve_ingest(f->s, key, &who), ERR_NOTFOUND);
    cJSON_Delete(item);
}

static void test_secret_file(void **state)
{
    struct fx *f = *state;
    char path[160], err[256];
    unsigned char a[32], b[32];
    bool created = false;
    snprintf(path, sizeof path, "%s/t.db.pepper", f->dir);
    assert_int_equal(auth_secret_file(path, a, &created, err, sizeof err), 0);
    assert_true(created);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(auth_secret_file(path, b, &created, err, sizeof err), 0);
    assert_false(created);
    assert_memory_equal(a, b, 32);
    FILE *fp = fopen(path, "w");
    fputs("not hex\n", fp);
    fclose(fp);
    assert_int_equal(auth_secret_file(path, b, &created, err, sizeof err), ERR_INVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hash_and_generate),
        cmocka_unit_test(test_parse_bearer),
        cmocka_unit_test_setup_teardown(test_brand_key_resolution, setup, teardown),
        cmocka_unit_test_setup_teardown(test_revoked_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_admin_env_and_rotation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_admin_generated_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ingest_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_secret_file, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
