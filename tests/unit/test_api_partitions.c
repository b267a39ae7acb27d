/*
 * test_api_partitions.c - GET /api/admin/partitions (api/api_partitions.c)
 * and the buckets of GET /api/ops-log (api/api_ops.c), driven through
 * the application without a server: access, every key family in order,
 * distinct and hottest keys from the store's capacity accounting, peaks
 * and minutes from its heat ring, top keys sorted; per-day buckets with
 * their own item counts, status and the legacy fallback flag.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/app.h"
#include "api/router.h"
#include "core/keys.h"
#include "core/timeutil.h"
#include "store/store.h"
#include "util/buf.h"
#include "tmpdir.h"

#define ADMIN "Bearer partitions-admin-key-0123456789"

struct fx {
    char dir[64], db[128];
    struct store *s;
    struct app *a;
    struct http_request req;
    struct http_response res;
    cJSON *json;
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    char err[256];
    snprintf(f->dir, sizeof f->dir, "/tmp/gp-test-part.XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    snprintf(f->db, sizeof f->db, "%s/t.db", f->dir);
    struct store_options o = {.path = f->db, .durability = STORE_DURABILITY_NORMAL};
    f->s = store_open_sqlite(&o, err, sizeof err);
    if (!f->s)
        return -1;
    struct app_config c = {
        .db_path = f->db,
        .signing_secret = "s",
        .admin_key = ADMIN + 7,
        .email_pepper = "p",
        .quiet = true,
    };
    f->a = app_new(&c, f->s, err, sizeof err);
    if (!f->a)
        return -1;
    buf_init(&f->res.headers, 16384);
    buf_init(&f->res.body, 1 << 20);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    buf_free(&f->res.headers);
    buf_free(&f->res.body);
    cJSON_Delete(f->json);
    app_free(f->a);
    store_close(f->s);
    if (ut_rmtree(f->dir) != 0)
        return -1;
    free(f);
    return 0;
}

/* One GET through the app; the JSON answer lands in f->json. */
static int get(struct fx *f, const char *target, const char *auth)
{
    static char path[256];
    const char *q = strchr(target, '?');

    cJSON_Delete(f->json);
    f->json = NULL;
    buf_free(&f->res.headers);
    buf_free(&f->res.body);
    memset(&f->res, 0, sizeof f->res);
    buf_init(&f->res.headers, 16384);
    buf_init(&f->res.body, 1 << 20);
    memset(&f->req, 0, sizeof f->req);
    f->req.method = HTTP_M_GET;
    f->req.method_name = router_method_name(HTTP_M_GET);
    f->req.target = target;
    snprintf(path, sizeof path, "%.*s", (int)(q ? q - target : (long)strlen(target)), target);
    f->req.path = path;
    f->req.query = q ? q + 1 : "";
    f->req.body = "";
    snprintf(f->req.peer_ip, sizeof f->req.peer_ip, "192.0.2.1");
    if (auth) {
        f->req.headers[0].name = "Authorization";
        f->req.headers[0].value = auth;
        f->req.nheaders = 1;
    }
    app_handle(f->a, &f->req, &f->res);
    assert_int_equal(app_commit(f->a), 0);
    app_done(f->a, &f->req, &f->res, f->res.body.len, 0.1);
    f->json = cJSON_Parse(buf_cstr(&f->res.body));
    return f->res.status;
}

static void put(struct fx *f, const char *pk, const char *sk, const char *pad)
{
    cJSON *it = cJSON_CreateObject();
    cJSON_AddStringToObject(it, "PK", pk);
    cJSON_AddStringToObject(it, "SK", sk);
    if (pad)
        cJSON_AddStringToObject(it, "pad", pad);
    assert_int_equal(store_put(f->s, it, NULL), 0);
    cJSON_Delete(it);
}

static const cJSON *family(const cJSON *j, const char *name)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(j, "families"))
    {
        if (!strcmp(cJSON_GetObjectItem(e, "family")->valuestring, name))
            return e;
    }
    return NULL;
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItem(o, k);
    assert_true(cJSON_IsNumber(v));
    return v->valuedouble;
}

static void test_partitions(void **state)
{
    struct fx *f = *state;
    static char big[3000];

    assert_int_equal(get(f, "/api/admin/partitions", NULL), 401);
    memset(big, 'x', sizeof big - 1);
    /* PRODUCT#: three keys, the second much hotter (3 KB items: 3 WCU each) */
    put(f, "PRODUCT#p1", "META", NULL);
    for (int i = 0; i < 4; i++) {
        char sk[32];
        snprintf(sk, sizeof sk, "SCAN#%d", i);
        put(f, "PRODUCT#p2", sk, big);
    }
    put(f, "PRODUCT#p3", "META", NULL);
    put(f, "BRAND_INDEX", "BRAND#b", NULL);
    put(f, "THREAT#b#2026-12", "ALERT#1", NULL);
    put(f, "THREAT#b", "ALERT#1", NULL);

    assert_int_equal(get(f, "/api/admin/partitions?limit=2", ADMIN), 200);
    const cJSON *j = f->json;
    assert_int_equal(num(j, "windowSeconds"), 60);
    assert_int_equal(num(j, "heatMinutes"), 30);
    /* every family, in the order of core/keys.h, "other" last */
    const cJSON *fams = cJSON_GetObjectItem(j, "families");
    assert_int_equal(cJSON_GetArraySize(fams), KF_COUNT);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(fams, 0), "family")->valuestring,
                        key_family_pattern(KF_PRODUCT));
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetArrayItem(fams, KF_COUNT - 1), "family")->valuestring,
        "other");

    const cJSON *p = family(j, "PRODUCT#<id>");
    assert_non_null(p);
    assert_int_equal(num(p, "distinctKeys"), 3);
    assert_string_equal(cJSON_GetObjectItem(p, "hottestKey")->valuestring, "PRODUCT#p2");
    assert_true(num(p, "hottestWcu") >= 12); /* 4 puts of ~3 KB */
    /* the peak is per second: at least one such put, at most all of them */
    assert_true(num(p, "peakWcu") >= 3 && num(p, "peakWcu") <= num(p, "hottestWcu"));
    const cJSON *mins = cJSON_GetObjectItem(p, "minutes");
    assert_true(cJSON_GetArraySize(mins) >= 1);
    int64_t ms;
    assert_int_equal(
        time_parse_iso(cJSON_GetObjectItem(cJSON_GetArrayItem(mins, 0), "minute")->valuestring,
                       &ms),
        0);
    assert_int_equal(ms % 60000, 0);

    const cJSON *bi = family(j, "BRAND_INDEX");
    assert_int_equal(num(bi, "distinctKeys"), 1);
    assert_string_equal(cJSON_GetObjectItem(bi, "hottestKey")->valuestring, "BRAND_INDEX");
    assert_int_equal(num(family(j, "THREAT#<brand>#<YYYY-MM>"), "distinctKeys"), 1);
    assert_int_equal(num(family(j, "THREAT#<brand>"), "distinctKeys"), 1);
    /* a family without traffic: zeros and no hottest key */
    const cJSON *dl = family(j, "DLQ#<YYYY-MM-DD>");
    assert_int_equal(num(dl, "distinctKeys"), 0);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(dl, "hottestKey")));
    assert_int_equal(num(dl, "peakWcu"), 0);

    /* top: limited, most first, the hottest product key first */
    const cJSON *top = cJSON_GetObjectItem(j, "top");
    assert_int_equal(cJSON_GetArraySize(top), 2);
    const cJSON *t0 = cJSON_GetArrayItem(top, 0), *t1 = cJSON_GetArrayItem(top, 1);
    assert_string_equal(cJSON_GetObjectItem(t0, "pk")->valuestring, "PRODUCT#p2");
    assert_string_equal(cJSON_GetObjectItem(t0, "family")->valuestring, "PRODUCT#<id>");
    assert_true(num(t0, "wcu") + num(t0, "rcu") >= num(t1, "wcu") + num(t1, "rcu"));
    const cJSON *tot = cJSON_GetObjectItem(j, "totals");
    assert_true(num(tot, "wcu") >= 16);
}

static void test_opslog_buckets(void **state)
{
    struct fx *f = *state;
    char iso[ISO_LEN + 1], day[11];
    struct key pk;

    /* nothing logged: every day empty, the legacy partition is read */
    assert_int_equal(get(f, "/api/ops-log?days=3", ADMIN), 200);
    const cJSON *b = cJSON_GetObjectItem(f->json, "buckets");
    assert_int_equal(cJSON_GetArraySize(b), 3);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(f->json, "legacyFallback")));

    /* one entry today */
    time_iso(time_now_ms(), iso);
    memcpy(day, iso, 10);
    day[10] = '\0';
    assert_non_null(key_opslog_pk(&pk, iso));
    cJSON *it = cJSON_CreateObject();
    cJSON_AddStringToObject(it, "PK", pk.s);
    cJSON_AddStringToObject(it, "SK", iso);
    cJSON_AddStringToObject(it, "agent", "threat_detector");
    cJSON_AddStringToObject(it, "timestamp", iso);
    assert_int_equal(store_put(f->s, it, NULL), 0);
    cJSON_Delete(it);

    assert_int_equal(get(f, "/api/ops-log?days=2", ADMIN), 200);
    b = cJSON_GetObjectItem(f->json, "buckets");
    assert_int_equal(cJSON_GetArraySize(b), 2);
    const cJSON *b0 = cJSON_GetArrayItem(b, 0), *b1 = cJSON_GetArrayItem(b, 1);
    assert_string_equal(cJSON_GetObjectItem(b0, "day")->valuestring, day);
    assert_string_equal(cJSON_GetObjectItem(b0, "date")->valuestring, day);
    assert_string_equal(cJSON_GetObjectItem(b0, "pk")->valuestring, pk.s);
    assert_int_equal(num(b0, "items"), 1);
    assert_true(num(b0, "latencyMs") >= 0);
    assert_string_equal(cJSON_GetObjectItem(b0, "status")->valuestring, "ok");
    assert_int_equal(num(b1, "items"), 0);
    assert_true(strcmp(cJSON_GetObjectItem(b1, "day")->valuestring, day) < 0);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(f->json, "legacyFallback")));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(f->json, "entries")), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_partitions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_opslog_buckets, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
