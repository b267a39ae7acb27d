/*
 * test_app.c - the platform driven in-process (api/app.h): routing (404,
 * 405 + Allow, HEAD), access classes (401/403, --auth none), the rate
 * limiter with an injected clock, group commit of hot counters, audit
 * items, email hashing, brand key issuing and the health/ready bodies.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_req.h"
#include "api/auth.h"
#include "api/app.h"
#include "api/router.h"
#include "core/crypto.h"
#include "core/keys.h"
#include "store/store.h"
#include "util/err.h"
#include "tmpdir.h"

#define ADMIN_KEY "test-admin-key-0123456789"

struct fx {
    char dir[64];
    char db[128];
    struct store *s;
    struct app *a;
    int64_t mono;
    struct http_request req;
    struct http_response res;
    cJSON *json;
};

static int64_t fake_mono(void *arg)
{
    return ((struct fx *)arg)->mono;
}

static struct app *make_app(struct fx *f, bool auth_off, long rate)
{
    char err[256];
    struct app_config c = {
        .db_path = f->db,
        .signing_secret = "test-secret",
        .auth_off = auth_off,
        .admin_key = ADMIN_KEY,
        .email_pepper = "pepper",
        .rate_limit = rate,
        .quiet = true,
    };
    struct app *a = app_new(&c, f->s, err, sizeof err);
    if (!a)
        fail_msg("app_new: %s", err);
    app_set_clock(a, fake_mono, f);
    return a;
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/gp-test-app.XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    snprintf(f->db, sizeof f->db, "%s/t.db", f->dir);
    char err[256];
    struct store_options o = {.path = f->db, .durability = STORE_DURABILITY_NORMAL};
    f->s = store_open_sqlite(&o, err, sizeof err);
    if (!f->s)
        return -1;
    f->a = make_app(f, false, 1);
    f->mono = 1000000;
    *state = f;
    return 0;
}

static void reset_res(struct fx *f)
{
    buf_free(&f->res.headers);
    buf_free(&f->res.body);
    memset(&f->res, 0, sizeof f->res);
    buf_init(&f->res.headers, 16384);
    buf_init(&f->res.body, 1 << 20);
    cJSON_Delete(f->json);
    f->json = NULL;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    reset_res(f);
    app_free(f->a);
    store_close(f->s);
    if (ut_rmtree(f->dir) != 0)
        return -1;
    free(f);
    return 0;
}

/* Runs one request through the app (handle + commit) and parses a JSON
 * body into f->json.  auth: NULL or an Authorization header value. */
static int call(struct fx *f, enum http_method m, const char *target, const char *auth,
                const char *body)
{
    static char path[512];
    reset_res(f);
    memset(&f->req, 0, sizeof f->req);
    f->req.method = m;
    f->req.method_name = router_method_name(m);
    f->req.target = target;
    const char *q = strchr(target, '?');
    snprintf(path, sizeof path, "%.*s", (int)(q ? q - target : (long)strlen(target)), target);
    f->req.path = path;
    f->req.query = q ? q + 1 : "";
    f->req.body = body ? body : "";
    f->req.body_len = body ? strlen(body) : 0;
    snprintf(f->req.peer_ip, sizeof f->req.peer_ip, "192.0.2.1");
    if (auth) {
        f->req.headers[0].name = "Authorization";
        f->req.headers[0].value = auth;
        f->req.nheaders = 1;
    }
    app_handle(f->a, &f->req, &f->res);
    int rc = app_commit(f->a);
    assert_int_equal(rc, 0);
    app_done(f->a, &f->req, &f->res, f->res.body.len, 0.5);
    if (f->res.content_type && strstr(f->res.content_type, "json"))
        f->json = cJSON_Parse(buf_cstr(&f->res.body));
    return f->res.status;
}

static const char *json_str(struct fx *f, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(f->json, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A brand key written in the request's commit, as POST /api/brands does
 * (without the brand's own items). */
static int issue_brand_key(struct api_req *r, struct store *s, const char *brand_id, char key[72])
{
    cJSON *item = api_brand_key_item(r, brand_id, key);
    if (!item)
        return ERR_INVALID;
    int rc = store_put(s, item, NULL);
    cJSON_Delete(item);
    return rc;
}

static void test_not_found_and_method(void **state)
{
    struct fx *f = *state;
    assert_int_equal(call(f, HTTP_M_GET, "/nope", NULL, NULL), 404);
    assert_string_equal(json_str(f, "error"), "Not found");
    assert_int_equal(call(f, HTTP_M_GET, "/api/health/", NULL, NULL), 404);
    assert_int_equal(call(f, HTTP_M_GET, "/api/../api/health", NULL, NULL), 404);
    assert_int_equal(call(f, HTTP_M_DELETE, "/api/health", NULL, NULL), 405);
    assert_string_equal(json_str(f, "error"), "Method not allowed");
    assert_non_null(strstr(buf_cstr(&f->res.headers), "Allow: GET, HEAD"));
    assert_int_equal(call(f, HTTP_M_OTHER, "/api/ready", NULL, NULL), 405);
}

static void test_health_and_ready(void **state)
{
    struct fx *f = *state;
    assert_int_equal(call(f, HTTP_M_GET, "/api/health?x=1", NULL, NULL), 200);
    assert_string_equal(json_str(f, "status"), "operational");
    assert_string_equal(json_str(f, "version"), "1.0.0");
    assert_int_equal(cJSON_GetObjectItem(f->json, "endpoints")->valueint, 47);
    assert_int_equal(cJSON_GetObjectItem(f->json, "pages")->valueint, 15);
    const cJSON *svc = cJSON_GetObjectItem(f->json, "services");
    assert_string_equal(cJSON_GetObjectItem(svc, "database")->valuestring, "healthy");
    const char *lat = cJSON_GetObjectItem(svc, "dbLatency")->valuestring;
    assert_non_null(strstr(lat, "ms"));
    assert_int_equal(strlen(json_str(f, "timestamp")), 24);
    /* HEAD is served by the GET route */
    assert_int_equal(call(f, HTTP_M_HEAD, "/api/ready", NULL, NULL), 200);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(f->json, "ready")));
}

static void test_admin_route_access(void **state)
{
    struct fx *f = *state;
    assert_int_equal(call(f, HTTP_M_GET, "/metrics", NULL, NULL), 401);
    assert_string_equal(json_str(f, "error"), "Unauthorized");
    assert_int_equal(call(f, HTTP_M_GET, "/metrics", "Bearer wrong-key-123", NULL), 401);
    assert_int_equal(call(f, HTTP_M_GET, "/metrics", "Basic abc", NULL), 401);
    assert_int_equal(call(f, HTTP_M_GET, "/metrics", "Bearer " ADMIN_KEY, NULL), 200);
    assert_non_null(strstr(buf_cstr(&f->res.body), "genuproof_http_requests_total"));
    assert_non_null(strstr(buf_cstr(&f->res.body), "route=\"/metrics\",status=\"401\"} 3"));
    assert_non_null(strstr(buf_cstr(&f->res.body), "process_start_time_seconds"));
    assert_non_null(strstr(buf_cstr(&f->res.body), "genuproof_store_operations_total"));

    /* a brand key on an admin route: 403 */
    struct api_req r;
    char key[72];
    api_req_init(&r, f->a, NULL, NULL, 0);
    assert_int_equal(issue_brand_key(&r, f->s, "brand-A", key), 0);
    api_req_finish(&r);
    assert_int_equal(app_commit(f->a), 0);
    char hdr[100];
    snprintf(hdr, sizeof hdr, "Bearer %s", key);
    assert_int_equal(call(f, HTTP_M_GET, "/metrics", hdr, NULL), 403);
    assert_string_equal(json_str(f, "error"), "Forbidden");
}

static int find_cb(void *arg, const struct api_route *rt)
{
    const struct api_route **want = arg;
    if (rt->access == (*want)->access && rt->method == HTTP_M_GET) {
        *want = rt;
        return 1;
    }
    return 0;
}

/* Any GET route of the given class (families are written by others). */
static const struct api_route *find_route(enum api_access acc)
{
    static struct api_route probe;
    const struct api_route *p = &probe;
    probe.access = acc;
    return router_each(find_cb, &p) ? p : NULL;
}

static void test_brand_route_access(void **state)
{
    struct fx *f = *state;
    const struct api_route *rt = find_route(API_BRAND);
    if (!rt)
        skip();
    assert_int_equal(call(f, HTTP_M_GET, rt->path, NULL, NULL), 401);
    struct api_req r;
    char key[72], hdr[100];
    api_req_init(&r, f->a, NULL, NULL, 0);
    assert_int_equal(issue_brand_key(&r, f->s, "brand-B", key), 0);
    api_req_finish(&r);
    snprintf(hdr, sizeof hdr, "Bearer %s", key);
    /* past the access check: the handler decides (400/403/404/200) */
    int st = call(f, HTTP_M_GET, rt->path, hdr, NULL);
    assert_int_not_equal(st, 401);
    assert_int_not_equal(st, 500);
}

static void test_auth_off(void **state)
{
    struct fx *f = *state;
    app_free(f->a);
    f->a = make_app(f, true, 0);
    assert_int_equal(call(f, HTTP_M_GET, "/metrics", NULL, NULL), 200);
    const struct api_route *rt = find_route(API_BRAND);
    if (rt)
        assert_int_not_equal(call(f, HTTP_M_GET, rt->path, NULL, NULL), 401);
}

static void test_rate_limit(void **state)
{
    struct fx *f = *state;
    const struct api_route *rt = find_route(API_PUBLIC_RL);
    if (!rt)
        skip();
    /* rate 1/s, burst 2 */
    assert_int_not_equal(call(f, HTTP_M_GET, rt->path, NULL, NULL), 429);
    assert_int_not_equal(call(f, HTTP_M_GET, rt->path, NULL, NULL), 429);
    assert_int_equal(call(f, HTTP_M_GET, rt->path, NULL, NULL), 429);
    assert_string_equal(json_str(f, "error"), "Too many requests");
    assert_non_null(strstr(buf_cstr(&f->res.headers), "Retry-After: 1"));
    /* the admin key is exempt */
    assert_int_not_equal(call(f, HTTP_M_GET, rt->path, "Bearer " ADMIN_KEY, NULL), 429);
    /* other routes are not limited */
    assert_int_equal(call(f, HTTP_M_GET, "/api/health", NULL, NULL), 200);
    f->mono += 1000;
    assert_int_not_equal(call(f, HTTP_M_GET, rt->path, NULL, NULL), 429);
    assert_int_equal(call(f, HTTP_M_GET, rt->path, NULL, NULL), 429);
}

static double stored_num(struct fx *f, const char *pk, const char *sk, const char *attr)
{
    cJSON *item = NULL;
    if (store_get(f->s, pk, sk, true, &item))
        return -1;
    const cJSON *v = cJSON_GetObjectItem(item, attr);
    double d = cJSON_IsNumber(v) ? v->valuedouble : -1;
    cJSON_Delete(item);
    return d;
}

static void test_counters_group_commit(void **state)
{
    struct fx *f = *state;
    struct api_req r;
    api_req_init(&r, f->a, NULL, NULL, 0);
    assert_true(api_counter_add(&r, "BRAND#x", "STATS", "scanCount", 1) == 1);
    assert_true(api_counter_add(&r, "BRAND#x", "STATS", "scanCount", 1) == 2);
    assert_true(api_counter_add(&r, "BRAND#x", "STATS", "threatCount", 3) == 3);
    assert_true(api_counter_add(&r, "PRODUCT#p", "META", "scanCount", 1) == 1);
    assert_true(api_counter_pending(&r, "BRAND#x", "STATS", "scanCount") == 2);
    assert_true(api_counter_pending(&r, "BRAND#x", "STATS", "nothing") == 0);
    /* nothing is written before the commit */
    assert_true(stored_num(f, "BRAND#x", "STATS", "scanCount") == -1);
    api_req_finish(&r);
    assert_int_equal(app_commit(f->a), 0);
    assert_true(stored_num(f, "BRAND#x", "STATS", "scanCount") == 2);
    assert_true(stored_num(f, "BRAND#x", "STATS", "threatCount") == 3);
    assert_true(stored_num(f, "PRODUCT#p", "META", "scanCount") == 1);
    /* pending is empty after the commit; a second round adds on top */
    api_req_init(&r, f->a, NULL, NULL, 0);
    assert_true(api_counter_pending(&r, "BRAND#x", "STATS", "scanCount") == 0);
    for (int i = 0; i < 500; i++)
        api_counter_add(&r, "BRAND#x", "STATS", "scanCount", 1);
    api_req_finish(&r);
    assert_int_equal(app_commit(f->a), 0);
    assert_true(stored_num(f, "BRAND#x", "STATS", "scanCount") == 502);
}

static void test_audit_item(void **state)
{
    struct fx *f = *state;
    struct api_req r;
    api_req_init(&r, f->a, NULL, NULL, 1781964000000LL); /* 2026-06-20T14:00:00Z */
    r.who.kind = API_PRINCIPAL_BRAND;
    snprintf(r.who.brand_id, sizeof r.who.brand_id, "brand-Z");
    snprintf(r.client_ip, sizeof r.client_ip, "198.51.100.4");
    assert_int_equal(api_audit(&r, "product.recalled", "brand-Z", "p-1", "defect"), 0);
    assert_int_equal(api_audit(&r, "product.recalled", "brand-Z", "p-1", NULL), 0);
    api_req_finish(&r);
    assert_int_equal(app_commit(f->a), 0);
    struct key pk;
    key_audit_pk_day(&pk, "2026-06-20");
    struct store_query q = {.pk = pk.s, .forward = true, .consistent = true};
    struct store_result res = {0};
    assert_int_equal(store_query(f->s, &q, &res), 0);
    assert_int_equal(res.count, 2);
    const cJSON *it = cJSON_GetArrayItem(res.items, 0);
    assert_string_equal(cJSON_GetObjectItem(it, "action")->valuestring, "product.recalled");
    assert_string_equal(cJSON_GetObjectItem(it, "actor")->valuestring, "brand:brand-Z");
    assert_string_equal(cJSON_GetObjectItem(it, "actorKind")->valuestring, "brand");
    assert_string_equal(cJSON_GetObjectItem(it, "ip")->valuestring, "198.51.100.4");
    assert_string_equal(cJSON_GetObjectItem(it, "timestamp")->valuestring,
                        "2026-06-20T14:00:00.000Z");
    store_result_free(&res);
}

static void test_email_hash(void **state)
{
    struct fx *f = *state;
    struct api_req r;
    char a[65], b[65], c[65], plain[65];
    api_req_init(&r, f->a, NULL, NULL, 0);
    api_email_hash(&r, "  Alice@Example.COM \n", a);
    api_email_hash(&r, "alice@example.com", b);
    api_email_hash(&r, "bob@example.com", c);
    api_req_finish(&r);
    assert_string_equal(a, b);
    assert_string_not_equal(a, c);
    char expect[65];
    crypto_hmac_sha256_hex("pepper", 6, "alice@example.com", 17, expect);
    assert_string_equal(a, expect);
    crypto_sha256_hex("alice@example.com", 17, plain);
    assert_string_not_equal(a, plain);
}

static void test_query_helpers(void **state)
{
    struct fx *f = *state;
    struct api_req r;
    struct http_request hr;
    reset_res(f);
    memset(&hr, 0, sizeof hr);
    hr.query = "limit=10abc&n=42&neg=-5&big=99999999999999999999&e=&s=a%2Fb&bad=%zz";
    api_req_init(&r, f->a, &hr, &f->res, 0);
    assert_int_equal(api_query_int(&r, "limit", 7, 1, 500), 7);
    assert_int_equal(api_query_int(&r, "n", 7, 1, 500), 42);
    assert_int_equal(api_query_int(&r, "n", 7, 1, 10), 10);
    assert_int_equal(api_query_int(&r, "neg", 7, 1, 500), 1);
    assert_int_equal(api_query_int(&r, "big", 7, 1, 500), 500);
    assert_int_equal(api_query_int(&r, "missing", 7, 1, 500), 7);
    assert_null(api_query(&r, "e"));
    assert_string_equal(api_query(&r, "s"), "a/b");
    assert_true(api_query_ok(&r));
    assert_null(api_query(&r, "bad"));
    assert_false(api_query_ok(&r));
    assert_int_equal(f->res.status, 400);
    assert_non_null(strstr(buf_cstr(&f->res.body), "Invalid query parameter"));
    api_req_finish(&r);
}

static void test_body_helpers(void **state)
{
    struct fx *f = *state;
    struct api_req r;
    struct http_request hr;
    const char *s;
    const cJSON *o;
    double d;
    reset_res(f);
    memset(&hr, 0, sizeof hr);
    hr.body = "{\"name\":\"x\",\"count\":\"3\",\"meta\":[]}";
    hr.body_len = strlen(hr.body);
    api_req_init(&r, f->a, &hr, &f->res, 0);
    cJSON *b = api_body(&r);
    assert_non_null(b);
    assert_ptr_equal(api_body(&r), b); /* parsed once */
    assert_int_equal(api_body_str(&r, b, "name", &s), 1);
    assert_string_equal(s, "x");
    assert_int_equal(f->res.status, 0);
    assert_int_equal(api_body_num(&r, b, "count", &d), -1);
    assert_int_equal(f->res.status, 400);
    assert_non_null(strstr(buf_cstr(&f->res.body), "count must be a number"));
    assert_int_equal(api_body_obj(&r, b, "meta", &o), -1);
    assert_non_null(strstr(buf_cstr(&f->res.body), "meta must be an object"));
    assert_int_equal(api_body_arr(&r, b, "meta", &o), 1);
    api_req_finish(&r);

    reset_res(f);
    hr.body = "[1]";
    hr.body_len = 3;
    api_req_init(&r, f->a, &hr, &f->res, 0);
    assert_null(api_body(&r));
    assert_int_equal(f->res.status, 400);
    assert_non_null(strstr(buf_cstr(&f->res.body), "Invalid JSON body"));
    api_req_finish(&r);
}

static void test_require_brand(void **state)
{
    struct fx *f = *state;
    struct api_req r;
    reset_res(f);
    api_req_init(&r, f->a, NULL, &f->res, 0);
    assert_false(api_require_brand(&r, "b1"));
    assert_int_equal(f->res.status, 401);
    r.who.kind = API_PRINCIPAL_BRAND;
    snprintf(r.who.brand_id, sizeof r.who.brand_id, "b1");
    assert_true(api_require_brand(&r, "b1"));
    assert_true(api_is_brand(&r, "b1"));
    assert_false(api_is_admin(&r));
    assert_false(api_require_brand(&r, "b2"));
    assert_int_equal(f->res.status, 403);
    assert_false(api_require_brand(&r, NULL));
    r.who.kind = API_PRINCIPAL_ADMIN;
    assert_true(api_require_brand(&r, "anything"));
    r.who.kind = API_PRINCIPAL_INGEST;
    assert_true(api_is_ingest(&r));
    assert_false(api_is_brand(&r, "b1"));
    api_req_finish(&r);
}

static void test_arena(void **state)
{
    struct fx *f = *state;
    struct api_req r;
    char big[1000];
    memset(big, 'z', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    api_req_init(&r, f->a, NULL, NULL, 0);
    assert_string_equal(api_printf(&r, "%s-%d", "ab", 7), "ab-7");
    char *p = api_printf(&r, "%s!", big);
    assert_int_equal(strlen(p), sizeof big);
    assert_int_equal(p[sizeof big - 1], '!');
    char *d = api_strdup(&r, "copy");
    assert_string_equal(d, "copy");
    assert_null(api_strdup(&r, NULL));
    /* blocks larger than the arena's chunk and many small ones */
    unsigned char *z = api_alloc(&r, 100000);
    for (size_t i = 0; i < 100000; i += 4096)
        assert_int_equal(z[i], 0);
    for (int i = 0; i < 2000; i++) {
        long *x = api_alloc(&r, sizeof *x);
        assert_int_equal((uintptr_t)x % _Alignof(long), 0);
        *x = i;
    }
    api_req_finish(&r); /* ASan reports any leak */
}

/* A store that is busy or out of reach gives 503 + Retry-After (the
 * client may retry; nothing was written); any other failure stays 500. */
static void test_fail_status(void **state)
{
    struct fx *f = *state;
    static const struct {
        int err, status;
    } cases[] = {{ERR_THROTTLED, 503},
                 {ERR_UNAVAILABLE, 503},
                 {ERR_TIMEOUT, 503},
                 {ERR_IO, 500},
                 {ERR_INTERNAL, 500}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct api_req r;
        reset_res(f);
        api_req_init(&r, f->a, NULL, &f->res, 0);
        api_fail(&r, "Failed to do it", cases[i].err);
        api_req_finish(&r);
        assert_int_equal(f->res.status, cases[i].status);
        const char *h = buf_cstr(&f->res.headers);
        if (cases[i].status == 503)
            assert_non_null(strstr(h, "Retry-After: 1"));
        else
            assert_null(strstr(h, "Retry-After"));
        assert_non_null(strstr(buf_cstr(&f->res.body), "{\"error\":\"Failed to do it\"}"));
    }
}

/* POST /api/brands writes the brand's items and its key item together:
 * the four appear in the change stream of one commit, the key item holds
 * only the key's hash and the brand id, and the key opens that brand. */
static void test_brand_create_with_key(void **state)
{
    struct fx *f = *state;
    uint64_t head = 0;
    struct stream_record *recs = NULL;
    size_t n = 0;
    char key[72], hash[65], want_pk[80], hdr[100], path[128], id[40];
    int seen = 0;

    assert_int_equal(store_stream_head(f->s, &head), 0);
    assert_int_equal(
        call(f, HTTP_M_POST, "/api/brands", "Bearer " ADMIN_KEY,
             "{\"name\":\"Acme\",\"domain\":\"acme.example\",\"industry\":\"watches\"}"),
        200);
    assert_non_null(json_str(f, "id"));
    snprintf(id, sizeof id, "%s", json_str(f, "id"));
    assert_non_null(json_str(f, "apiKey"));
    snprintf(key, sizeof key, "%s", json_str(f, "apiKey"));
    auth_key_hash(key, hash);
    snprintf(want_pk, sizeof want_pk, "APIKEY#%s", hash);
    snprintf(path, sizeof path, "/api/brands?id=%s", id);

    assert_int_equal(store_stream_read(f->s, head, 100, &recs, &n), 0);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(recs[i].kind, STORE_INSERT);
        /* no record of the commit holds the key itself */
        char *img = cJSON_PrintUnformatted(recs[i].image);
        assert_null(strstr(img, key));
        free(img);
        if (!strcmp(recs[i].pk, want_pk)) {
            const cJSON *b = cJSON_GetObjectItemCaseSensitive(recs[i].image, "brandId");
            assert_true(cJSON_IsString(b));
            assert_string_equal(b->valuestring, id);
            seen |= 1;
        } else if (strstr(recs[i].pk, id) && !strcmp(recs[i].sk, "PROFILE")) {
            seen |= 2;
        } else if (strstr(recs[i].pk, id) && !strcmp(recs[i].sk, "STATS")) {
            seen |= 4;
        } else if (!strcmp(recs[i].pk, "BRAND_INDEX")) {
            seen |= 8;
        }
    }
    store_stream_free(recs, n);
    assert_int_equal(seen, 15);

    snprintf(hdr, sizeof hdr, "Bearer %s", key);
    assert_int_equal(call(f, HTTP_M_GET, path, hdr, NULL), 200);
    assert_string_equal(json_str(f, "id"), id);
    assert_int_equal(
        call(f, HTTP_M_GET, "/api/brands?id=00000000-0000-4000-8000-000000000000", hdr, NULL), 403);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_not_found_and_method),
        T(test_health_and_ready),
        T(test_admin_route_access),
        T(test_brand_route_access),
        T(test_brand_create_with_key),
        T(test_auth_off),
        T(test_rate_limit),
        T(test_counters_group_commit),
        T(test_audit_item),
        T(test_email_hash),
        T(test_query_helpers),
        T(test_body_helpers),
        T(test_require_brand),
        T(test_arena),
        T(test_fail_status),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
