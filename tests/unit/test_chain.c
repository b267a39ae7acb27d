/*
 * test_chain.c - the provenance chain on a real SQLite store: genesis and
 * appends (API.md §3.11 vectors), seq order independent of timestamps
 * (D16), the compare-and-swap on the head (D17), atomic extras (D22), the
 * §4.4 integrity check against tampering (D19), and chains written by the
 * original (no seq, no head item).
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

#include "core/chain.h"
#include "core/event.h"
#include "core/keys.h"
#include "store/store.h"
#include "util/err.h"
#include "tmpdir.h"

#define PID         "e084595c97320cfcc85309943f345760"
#define BID         "5019622c-9860-4b83-a5c6-adb82ebd0412"
#define T0          "2026-06-20T15:00:00.000Z"
#define T1          "2026-06-21T09:30:00.000Z"
#define GENESIS_VEC "6bf0c9a7efae45d4e2ac9f96b569e85dbe03d9a72b17ec97079f5b194007386e"
#define NEXT_VEC    "fb8a83855fcb829dd0a39faa03c54ac12b8ef44e63650d8882ac891dfb4a2a48"

/* The single-attempt append (chain.c, UNITTEST). */
int chain_append_once(struct store *s, const struct event_fields *f, const struct chain_head *head,
                      const struct store_write *extra, size_t nextra, struct chain_appended *out,
                      int *failed);

struct fx {
    char dir[64];
    char path[128];
    struct store *s;
};

static int setup(void **state)
{
    struct fx *fx = calloc(1, sizeof *fx);
    char err[256];

    strcpy(fx->dir, "/tmp/gp-test-chain.XXXXXX");
    if (!mkdtemp(fx->dir))
        return -1;
    snprintf(fx->path, sizeof fx->path, "%s/t.db", fx->dir);
    struct store_options o = {.path = fx->path, .durability = STORE_DURABILITY_NORMAL};
    fx->s = store_open_sqlite(&o, err, sizeof err);
    if (!fx->s) {
        fprintf(stderr, "store_open_sqlite: %s\n", err);
        return -1;
    }
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

static cJSON *genesis_data(void)
{
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "registeredBy", BID);
    return d;
}

/* Writes the genesis event + head like a registration does. */
static void write_genesis(struct store *s, char hash[CRYPTO_HEX_LEN + 1])
{
    cJSON *data = genesis_data(), *ev, *hd;
    struct event_fields f = {.product_id = PID,
                             .type = "manufactured",
                             .actor = "Luxe Watches",
                             .timestamp = T0,
                             .data = data,
                             .location = "Le Brassus, Switzerland"};
    assert_int_equal(chain_genesis_items(&f, &ev, &hd, hash), 0);
    struct store_write w[2] = {
        {.kind = STORE_W_PUT, .item = ev, .cond = {.kind = STORE_COND_NOT_EXISTS}},
        {.kind = STORE_W_PUT, .item = hd, .cond = {.kind = STORE_COND_NOT_EXISTS}},
    };
    assert_int_equal(store_transact(s, w, 2, NULL), 0);
    cJSON_Delete(ev);
    cJSON_Delete(hd);
    cJSON_Delete(data);
}

static const char *sattr(const cJSON *o, const char *k)
{
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
    assert_non_null(v);
    return v;
}

static void test_empty_chain(void **state)
{
    struct fx *fx = *state;
    struct chain_head h;
    cJSON *events = NULL;

    assert_int_equal(chain_head_read(fx->s, PID, &h), 0);
    assert_int_equal(h.seq, 0);
    assert_false(h.has_item);
    assert_string_equal(h.hash, CRYPTO_GENESIS);
    assert_int_equal(chain_list(fx->s, PID, &events), 0);
    assert_int_equal(cJSON_GetArraySize(events), 0);
    assert_true(chain_valid(events));
    cJSON_Delete(events);
}

static void test_genesis_and_append_vectors(void **state)
{
    struct fx *fx = *state;
    char g[CRYPTO_HEX_LEN + 1];
    struct chain_appended app;
    struct chain_head h;
    cJSON *events = NULL;

    write_genesis(fx->s, g);
    assert_string_equal(g, GENESIS_VEC);

    struct event_fields f = {.product_id = PID,
                             .type = "shipped",
                             .actor = "Swiss Post International",
                             .timestamp = "2026-06-21T09:30:00.000Z",
                             .location = "Geneva, Switzerland"};
    assert_int_equal(chain_append(fx->s, &f, NULL, 0, &app, NULL), 0);
    assert_int_equal(app.seq, 2);
    assert_string_equal(app.previous_hash, GENESIS_VEC);
    assert_string_equal(app.hash, NEXT_VEC);

    assert_int_equal(chain_head_read(fx->s, PID, &h), 0);
    assert_true(h.has_item);
    assert_int_equal(h.seq, 2);
    assert_string_equal(h.hash, NEXT_VEC);

    assert_int_equal(chain_list(fx->s, PID, &events), 0);
    assert_int_equal(cJSON_GetArraySize(events), 2);
    assert_string_equal(sattr(cJSON_GetArrayItem(events, 0), "previousHash"), CRYPTO_GENESIS);
    assert_string_equal(sattr(cJSON_GetArrayItem(events, 1), "previousHash"), GENESIS_VEC);
    assert_int_equal(event_item_seq(cJSON_GetArrayItem(events, 1)), 2);
    /* data defaults to {} and is stored */
    assert_true(
        cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(events, 1), "data")));
    assert_true(chain_valid(events));
    cJSON_Delete(events);
}

/* A back-dated event (timestamp before the head's) still goes last: chain
 * order is seq order, not timestamp order (D16). */
static void test_seq_order_not_time_order(void **state)
{
    struct fx *fx = *state;
    char g[CRYPTO_HEX_LEN + 1];
    struct chain_appended a1, a2;
    cJSON *events = NULL;

    write_genesis(fx->s, g);
    struct event_fields f1 = {.product_id = PID, .type = "shipped", .actor = "A", .timestamp = T1};
    struct event_fields f2 = {.product_id = PID,
                              .type = "received",
                              .actor = "B",
                              .timestamp = "2026-01-01T00:00:00.000Z"};
    assert_int_equal(chain_append(fx->s, &f1, NULL, 0, &a1, NULL), 0);
    assert_int_equal(chain_append(fx->s, &f2, NULL, 0, &a2, NULL), 0);
    assert_string_equal(a2.previous_hash, a1.hash);
    assert_int_equal(chain_list(fx->s, PID, &events), 0);
    assert_int_equal(cJSON_GetArraySize(events), 3);
    assert_string_equal(sattr(cJSON_GetArrayItem(events, 2), "actor"), "B");
    assert_true(chain_valid(events));
    cJSON_Delete(events);
}

/* Two appenders that read the same head: the second one's compare-and-swap
 * fails and nothing of it is written (D17); chain_append() then retries on
 * the new head. */
static void test_cas_conflict(void **state)
{
    struct fx *fx = *state;
    char g[CRYPTO_HEX_LEN + 1];
    struct chain_head stale;
    struct chain_appended a;
    cJSON *events = NULL;
    int failed = -1;

    write_genesis(fx->s, g);
    assert_int_equal(chain_head_read(fx->s, PID, &stale), 0);
    struct event_fields f1 = {.product_id = PID, .type = "shipped", .actor = "A", .timestamp = T1};
    struct event_fields f2 = {.product_id = PID, .type = "sold", .actor = "B", .timestamp = T1};
    assert_int_equal(chain_append_once(fx->s, &f1, &stale, NULL, 0, &a, &failed), 0);
    assert_int_equal(chain_append_once(fx->s, &f2, &stale, NULL, 0, &a, &failed), ERR_CONDITION);
    assert_true(failed == 0 || failed == 1);

    assert_int_equal(chain_list(fx->s, PID, &events), 0);
    assert_int_equal(cJSON_GetArraySize(events), 2);
    assert_true(chain_valid(events));
    cJSON_Delete(events);

    /* The retrying API appends on top of the winner. */
    assert_int_equal(chain_append(fx->s, &f2, NULL, 0, &a, NULL), 0);
    assert_int_equal(a.seq, 3);
    assert_int_equal(chain_list(fx->s, PID, &events), 0);
    assert_int_equal(cJSON_GetArraySize(events), 3);
    assert_true(chain_valid(events));
    cJSON_Delete(events);
}

/* Extras are written with the event, or nothing is (D22). */
static void test_extras_atomic(void **state)
{
    struct fx *fx = *state;
    char g[CRYPTO_HEX_LEN + 1];
    struct chain_head h;
    struct chain_appended a;
    struct key pk;
    cJSON *got = NULL;
    int failed = -1;

    write_genesis(fx->s, g);
    key_product_pk(&pk, PID);
    cJSON *marker = cJSON_CreateObject();
    cJSON_AddStringToObject(marker, "PK", pk.s);
    cJSON_AddStringToObject(marker, "SK", "TESTMARK");
    struct store_write extra = {
        .kind = STORE_W_PUT, .item = marker, .cond = {.kind = STORE_COND_NOT_EXISTS}};
    struct event_fields f = {.product_id = PID, .type = "custom", .actor = "X", .timestamp = T1};

    assert_int_equal(chain_append(fx->s, &f, &extra, 1, &a, &failed), 0);
    assert_int_equal(failed, -1);
    assert_int_equal(store_get(fx->s, pk.s, "TESTMARK", true, &got), 0);
    cJSON_Delete(got);

    /* The same extra again fails its condition: no event, head unchanged. */
    assert_int_equal(chain_append(fx->s, &f, &extra, 1, &a, &failed), ERR_CONDITION);
    assert_int_equal(failed, 0);
    assert_int_equal(chain_head_read(fx->s, PID, &h), 0);
    assert_int_equal(h.seq, 2);
    cJSON_Delete(marker);
}

/* Rewrites the stored event number idx (0-based, chain order) after
 * applying fn to it. */
static void tamper(struct store *s, int idx, void (*fn)(cJSON *ev))
{
    cJSON *events = NULL;
    assert_int_equal(chain_list(s, PID, &events), 0);
    cJSON *ev = cJSON_GetArrayItem(events, idx);
    assert_non_null(ev);
    fn(ev);
    assert_int_equal(store_put(s, ev, NULL), 0);
    cJSON_Delete(events);
}

static void change_actor(cJSON *ev)
{
    cJSON_ReplaceItemInObjectCaseSensitive(ev, "actor", cJSON_CreateString("Mallory"));
}

static void change_data(cJSON *ev)
{
    cJSON *d = cJSON_GetObjectItemCaseSensitive(ev, "data");
    cJSON_AddStringToObject(d, "extra", "x");
}

static void change_first_prev(cJSON *ev)
{
    cJSON_ReplaceItemInObjectCaseSensitive(ev, "previousHash", cJSON_CreateString(""));
}

static void change_location(cJSON *ev)
{
    /* location is outside the hash (API.md §12): not detected, by design */
    cJSON_ReplaceItemInObjectCaseSensitive(ev, "location", cJSON_CreateString("Elsewhere"));
}

static bool chain_is_valid(struct store *s)
{
    cJSON *events = NULL;
    assert_int_equal(chain_list(s, PID, &events), 0);
    bool ok = chain_valid(events);
    cJSON_Delete(events);
    return ok;
}

static void build_three(struct store *s)
{
    char g[CRYPTO_HEX_LEN + 1];
    write_genesis(s, g);
    struct event_fields f1 = {.product_id = PID, .type = "shipped", .actor = "A", .timestamp = T1};
    struct event_fields f2 = {.product_id = PID, .type = "sold", .actor = "B", .timestamp = T1};
    assert_int_equal(chain_append(s, &f1, NULL, 0, NULL, NULL), 0);
    assert_int_equal(chain_append(s, &f2, NULL, 0, NULL, NULL), 0);
    assert_true(chain_is_valid(s));
}

static void test_tamper_actor(void **state)
{
    struct fx *fx = *state;
    build_three(fx->s);
    tamper(fx->s, 1, change_actor);
    assert_false(chain_is_valid(fx->s));
}

static void test_tamper_data(void **state)
{
    struct fx *fx = *state;
    build_three(fx->s);
    tamper(fx->s, 0, change_data);
    assert_false(chain_is_valid(fx->s));
}

static void test_tamper_first_previous(void **state)
{
    struct fx *fx = *state;
    build_three(fx->s);
    tamper(fx->s, 0, change_first_prev);
    assert_false(chain_is_valid(fx->s));
}

static void test_location_not_covered(void **state)
{
    struct fx *fx = *state;
    build_three(fx->s);
    tamper(fx->s, 2, change_location);
    assert_true(chain_is_valid(fx->s));
}

static void test_deleted_middle_event(void **state)
{
    struct fx *fx = *state;
    cJSON *events = NULL;
    build_three(fx->s);
    assert_int_equal(chain_list(fx->s, PID, &events), 0);
    const cJSON *mid = cJSON_GetArrayItem(events, 1);
    assert_int_equal(store_delete(fx->s, sattr(mid, "PK"), sattr(mid, "SK"), NULL), 0);
    cJSON_Delete(events);
    assert_false(chain_is_valid(fx->s));
}

/* Events written by the original: no seq attribute, no head item, order
 * by sort key.  The head is derived from them and appending continues the
 * linkage with a proper seq and head item. */
static void test_legacy_chain(void **state)
{
    struct fx *fx = *state;
    struct key pk;
    struct chain_head h;
    struct chain_appended a;
    cJSON *events = NULL;

    key_product_pk(&pk, PID);
    const char *sks[2] = {"EVENT#2026-06-20T15:00:00.000Z#manufactured",
                          "EVENT#2026-06-21T09:30:00.000Z#shipped"};
    const char *hashes[2] = {"1111111111111111111111111111111111111111111111111111111111111111",
                             "2222222222222222222222222222222222222222222222222222222222222222"};
    for (int i = 0; i < 2; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "PK", pk.s);
        cJSON_AddStringToObject(o, "SK", sks[i]);
        cJSON_AddStringToObject(o, "productId", PID);
        cJSON_AddStringToObject(o, "type", i ? "shipped" : "manufactured");
        cJSON_AddStringToObject(o, "actor", "legacy");
        cJSON_AddStringToObject(o, "timestamp", i ? T1 : T0);
        cJSON_AddItemToObject(o, "data", cJSON_CreateObject());
        cJSON_AddStringToObject(o, "hash", hashes[i]);
        cJSON_AddStringToObject(o, "previousHash", i ? hashes[0] : "");
        assert_int_equal(store_put(fx->s, o, NULL), 0);
        cJSON_Delete(o);
    }
    assert_int_equal(chain_head_read(fx->s, PID, &h), 0);
    assert_false(h.has_item);
    assert_int_equal(h.seq, 2);
    assert_string_equal(h.hash, hashes[1]);

    struct event_fields f = {.product_id = PID,
                             .type = "received",
                             .actor = "Shop",
                             .timestamp = "2026-01-01T00:00:00.000Z"};
    assert_int_equal(chain_append(fx->s, &f, NULL, 0, &a, NULL), 0);
    assert_int_equal(a.seq, 3);
    assert_string_equal(a.previous_hash, hashes[1]);
    assert_int_equal(chain_head_read(fx->s, PID, &h), 0);
    assert_true(h.has_item);
    assert_int_equal(chain_list(fx->s, PID, &events), 0);
    assert_int_equal(cJSON_GetArraySize(events), 3);
    /* the new event sorts last although its timestamp is the oldest */
    assert_string_equal(sattr(cJSON_GetArrayItem(events, 2), "actor"), "Shop");
    /* legacy hashes cannot be recomputed: the Reimpl check says invalid */
    assert_false(chain_valid(events));
    cJSON_Delete(events);
}

static void test_invalid_inputs(void **state)
{
    struct fx *fx = *state;
    char big[KEY_MAX + 10];
    cJSON *events = NULL;
    struct chain_head h;

    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_int_equal(chain_list(fx->s, big, &events), ERR_INVALID);
    assert_null(events);
    assert_int_equal(chain_head_read(fx->s, big, &h), ERR_INVALID);
    struct event_fields f = {.product_id = PID, .type = "custom", .actor = NULL, .timestamp = T1};
    assert_int_equal(chain_append(fx->s, &f, NULL, 0, NULL, NULL), ERR_INVALID);
    cJSON *arr = cJSON_CreateArray();
    cJSON *bad = cJSON_CreateObject();
    cJSON_AddStringToObject(bad, "hash", "x");
    cJSON_AddItemToArray(arr, bad);
    assert_false(chain_valid(arr));
    cJSON_Delete(arr);
}

static void test_event_types(void **state)
{
    (void)state;
    assert_true(event_type_valid("manufactured"));
    assert_true(event_type_valid("custom"));
    assert_false(event_type_valid("Manufactured"));
    assert_false(event_type_valid("flagged"));
    assert_false(event_type_valid(""));
    assert_false(event_type_valid(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_empty_chain, setup, teardown),
        cmocka_unit_test_setup_teardown(test_genesis_and_append_vectors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_seq_order_not_time_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cas_conflict, setup, teardown),
        cmocka_unit_test_setup_teardown(test_extras_atomic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tamper_actor, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tamper_data, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tamper_first_previous, setup, teardown),
        cmocka_unit_test_setup_teardown(test_location_not_covered, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deleted_middle_event, setup, teardown),
        cmocka_unit_test_setup_teardown(test_legacy_chain, setup, teardown),
        cmocka_unit_test_setup_teardown(test_invalid_inputs, setup, teardown),
        cmocka_unit_test(test_event_types),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
