/*
 * test_webhook.c - the webhook entity: target URL validation (schemes,
 * credentials, every private range on both sides of its boundary, IPv6
 * forms embedding IPv4, numeric host spellings, names resolving to
 * loopback), event names, secrets and signatures, the stored items and
 * their JSON shapes, and the POST/DELETE body decoders.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/webhook_decode.h"
#include "core/jsonw.h"
#include "core/webhook.h"
#include "util/buf.h"
#include "util/err.h"

static char err[200];

/* webhook_url_check without private targets; 0 or ERR_INVALID. */
static int check_url(const char *url)
{
    err[0] = '\0';
    return webhook_url_check(url, false, 2.0, err, sizeof err);
}

static void assert_refused(const char *url, const char *msg)
{
    int rc = check_url(url);
    if (rc != ERR_INVALID || strcmp(err, msg) != 0)
        fail_msg("%s: rc %d, message '%s' (want '%s')", url, rc, err, msg);
}

static void assert_accepted(const char *url)
{
    int rc = check_url(url);
    if (rc != 0)
        fail_msg("%s: refused (%s)", url, err);
}

#define PRIVATE_MSG "Webhook URL must not point to a private or loopback address"

static void test_url_schemes_and_shape(void **state)
{
    (void)state;
    struct webhook_url u;

    assert_int_equal(webhook_url_parse("https://hooks.example.com/x?a=1", &u, err, sizeof err), 0);
    assert_string_equal(u.host, "hooks.example.com");
    assert_true(u.https);
    assert_false(u.host_is_ip);
    assert_int_equal(webhook_url_parse("HTTP://8.8.8.8:8080/p", &u, err, sizeof err), 0);
    assert_true(u.host_is_ip);
    assert_false(u.https);
    assert_int_equal(webhook_url_parse("http://[2606:4700::1111]/p", &u, err, sizeof err), 0);
    assert_string_equal(u.host, "2606:4700::1111");
    assert_true(u.host_is_ip);

    assert_refused("ftp://example.com/x", "Webhook URL must use http or https");
    assert_refused("file:///etc/passwd", "Webhook URL must use http or https");
    assert_refused("gopher://example.com/", "Webhook URL must use http or https");
    assert_refused("javascript:alert(1)", "Invalid webhook URL");
    assert_refused("not a url", "Invalid webhook URL");
    assert_refused("", "Invalid webhook URL");
    assert_refused("http://", "Invalid webhook URL");
    assert_refused("http:example.com", "Invalid webhook URL");
    assert_refused("http://exa mple.com/", "Invalid webhook URL");
    assert_refused("http://example.com\\@127.0.0.1/", "Invalid webhook URL");
    assert_refused("http://example.com/\n", "Invalid webhook URL");
    assert_refused("http://[fe80::1%25eth0]/", "Invalid webhook URL");

    char *longurl = malloc(WEBHOOK_URL_MAX + 20);
    strcpy(longurl, "https://example.com/");
    memset(longurl + 20, 'a', WEBHOOK_URL_MAX);
    longurl[WEBHOOK_URL_MAX + 10] = '\0';
    assert_refused(longurl, "Invalid webhook URL");
    free(longurl);
}

static void test_url_credentials(void **state)
{
    (void)state;
    const char *msg = "Webhook URL must not contain credentials";

    assert_refused("https://user:pw@example.com/x", msg);
    assert_refused("https://user@example.com/x", msg);
    assert_refused("https://@example.com/x", msg);
    assert_refused("https://:pw@example.com/x", msg);
    assert_refused("http://8.8.8.8@127.0.0.1/", msg);
    /* an '@' after the authority is not userinfo */
    assert_accepted("https://8.8.8.8/hook?email=a@b.example");
}

static void test_url_private_ipv4(void **state)
{
    (void)state;
    const char *refused[] = {
        "http://10.0.0.1/",       "http://10.255.255.255/",  "http://172.16.0.1/",
        "http://172.31.255.255/", "http://192.168.0.1/",     "http://192.168.255.255/",
        "http://127.0.0.1/",      "http://127.255.255.254/", "http://169.254.169.254/latest",
        "http://169.254.0.1/",    "http://0.0.0.0/",         "http://0.1.2.3/",
        "http://100.64.0.1/",     "http://224.0.0.1/",       "http://255.255.255.255/",
        "http://240.0.0.1/",      "http://192.0.2.1/",       "http://198.18.0.1/",
    };
    const char *accepted[] = {
        "http://8.8.8.8/",         "http://1.1.1.1:8443/x", "http://172.15.255.255/",
        "http://172.32.0.1/",      "http://11.0.0.1/",      "http://9.255.255.255/",
        "http://192.169.0.1/",     "http://169.253.0.1/",   "http://100.128.0.1/",
        "http://126.255.255.255/", "http://128.0.0.1/",
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        assert_refused(refused[i], PRIVATE_MSG);
    for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++)
        assert_accepted(accepted[i]);
}

static void test_url_private_ipv6(void **state)
{
    (void)state;
    const char *refused[] = {
        "http://[::1]/",
        "http://[::]/",
        "http://[fc00::1]/",
        "http://[fdff:ffff::1]/",
        "http://[fe80::1]/",
        "http://[febf::1]/",
        "http://[fec0::1]/",
        "http://[ff02::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://[::ffff:10.0.0.1]/",
        "http://[::ffff:192.168.1.1]/",
        "http://[::127.0.0.1]/",
        "http://[64:ff9b::a00:1]/",
        "http://[2002:7f00:1::]/",
        "http://[2001:db8::1]/",
    };
    const char *accepted[] = {
        "http://[2606:4700::1111]/", "http://[2a00:1450:4001::200e]/",
        "http://[::ffff:8.8.8.8]/",  "http://[64:ff9b::808:808]/",
        "http://[fbff::1]/",         "http://[fe7f::1]/",
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        assert_refused(refused[i], PRIVATE_MSG);
    for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++)
        assert_accepted(accepted[i]);
}

/* Numeric spellings of loopback and names that resolve to it are caught
 * by the resolution step (no network needed). */
static void test_url_names_and_spellings(void **state)
{
    (void)state;
    assert_refused("http://localhost:8080/hook", PRIVATE_MSG);
    assert_refused("http://2130706433/", PRIVATE_MSG);
    assert_refused("http://127.1/", PRIVATE_MSG);
    assert_refused("http://0x7f000001/", PRIVATE_MSG);
    assert_refused("http://0/", PRIVATE_MSG);
    /* .invalid never resolves (RFC 2606); bounded wait either way */
    assert_refused("http://no-such-host.invalid/", "Webhook host cannot be resolved");
    /* allowed explicitly */
    assert_int_equal(webhook_url_check("http://127.0.0.1:9/x", true, 1.0, err, sizeof err), 0);
    assert_int_equal(webhook_url_check("http://localhost/x", true, 1.0, err, sizeof err), 0);
    /* but never a bad scheme or credentials */
    assert_int_equal(webhook_url_check("ftp://127.0.0.1/", true, 1.0, err, sizeof err),
                     ERR_INVALID);
    assert_int_equal(webhook_url_check("http://u@127.0.0.1/", true, 1.0, err, sizeof err),
                     ERR_INVALID);
}

static void test_addr_sockaddr(void **state)
{
    (void)state;
    struct sockaddr_in in4 = {.sin_family = AF_INET};
    struct sockaddr_in6 in6 = {.sin6_family = AF_INET6};
    struct sockaddr un = {.sa_family = AF_UNIX};

    inet_pton(AF_INET, "172.16.0.0", &in4.sin_addr);
    assert_true(webhook_addr_private((struct sockaddr *)&in4));
    inet_pton(AF_INET, "93.184.216.34", &in4.sin_addr);
    assert_false(webhook_addr_private((struct sockaddr *)&in4));
    inet_pton(AF_INET6, "fe80::abcd", &in6.sin6_addr);
    assert_true(webhook_addr_private((struct sockaddr *)&in6));
    inet_pton(AF_INET6, "2001:4860:4860::8888", &in6.sin6_addr);
    assert_false(webhook_addr_private((struct sockaddr *)&in6));
    assert_true(webhook_addr_private(&un));
    assert_true(webhook_addr_private(NULL));
}

static void test_events_and_ids(void **state)
{
    (void)state;
    assert_int_equal(webhook_event_bit("verification_scan"), WEBHOOK_EV_SCAN);
    assert_int_equal(webhook_event_bit("threat_alert"), WEBHOOK_EV_THREAT);
    assert_int_equal(webhook_event_bit("product_recall"), WEBHOOK_EV_RECALL);
    assert_int_equal(webhook_event_bit("Threat_Alert"), 0);
    assert_int_equal(webhook_event_bit(NULL), 0);
    assert_string_equal(webhook_event_name(WEBHOOK_EV_RECALL), "product_recall");
    assert_null(webhook_event_name(3));

    cJSON *it = cJSON_Parse("{\"events\":[\"product_recall\",\"x\",\"verification_scan\"]}");
    assert_int_equal(webhook_events_of(it), WEBHOOK_EV_RECALL | WEBHOOK_EV_SCAN);
    cJSON_Delete(it);
    it = cJSON_Parse("{}");
    assert_int_equal(webhook_events_of(it), WEBHOOK_EV_ALL);
    cJSON_Delete(it);

    assert_true(webhook_id_ok("0b7c1b5e-6a5e-4c39-9d43-8e8c9f0b8a11"));
    assert_false(webhook_id_ok(""));
    assert_false(webhook_id_ok("a#b"));
    assert_false(webhook_id_ok("a\tb"));
    char big[WEBHOOK_ID_MAX + 2];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_false(webhook_id_ok(big));
}

static void test_secret_and_signature(void **state)
{
    (void)state;
    char s1[WEBHOOK_SECRET_LEN + 1], s2[WEBHOOK_SECRET_LEN + 1], sig[WEBHOOK_SIG_LEN + 1];

    webhook_secret_new(s1);
    webhook_secret_new(s2);
    assert_int_equal(strlen(s1), WEBHOOK_SECRET_LEN);
    assert_memory_equal(s1, "whsec_", 6);
    assert_int_equal(strspn(s1 + 6, "0123456789abcdef"), 64);
    assert_string_not_equal(s1, s2);

    /* HMAC-SHA256("whsec_test", "1700000000.{"event":"x"}"), from Python */
    const char *body = "{\"event\":\"x\"}";
    webhook_sign("whsec_test", "1700000000", body, strlen(body), sig);
    assert_string_equal(sig,
                        "sha256=332db6eb98751d218da10bd89e81ba421029f17447c481788ffc4b6fa408fd56");
    /* the timestamp is part of what is signed */
    webhook_sign("whsec_test", "1700000001", body, strlen(body), sig);
    assert_string_not_equal(
        sig, "sha256=332db6eb98751d218da10bd89e81ba421029f17447c481788ffc4b6fa408fd56");
}

/* Renders one JSON shape into a string (caller frees). */
static char *render(void (*fn)(struct jsonw *, const cJSON *), const cJSON *item)
{
    struct buf b = BUF_INIT(0);
    struct jsonw w;
    jsonw_init(&w, &b);
    fn(&w, item);
    assert_int_equal(jsonw_error(&w), 0);
    return buf_steal(&b);
}

static void created_json(struct jsonw *w, const cJSON *item)
{
    webhook_write_created_json(w, item);
}

static void test_webhook_item_and_json(void **state)
{
    (void)state;
    struct webhook_fields f = {.id = "w1",
                               .brand_id = "b1",
                               .url = "https://x.example/h",
                               .events = WEBHOOK_EV_THREAT | WEBHOOK_EV_RECALL,
                               .created_at = "2026-01-02T03:04:05.678Z",
                               .secret = "whsec_abc"};
    cJSON *it = webhook_item_new(&f);
    char *s;

    assert_non_null(it);
    s = cJSON_PrintUnformatted(it);
    assert_string_equal(
        s, "{\"PK\":\"BRAND#b1\",\"SK\":\"WEBHOOK#w1\",\"id\":\"w1\",\"brandId\":\"b1\",\"url\":"
           "\"https://x.example/h\",\"events\":[\"threat_alert\",\"product_recall\"],\"active\":"
           "true,\"createdAt\":\"2026-01-02T03:04:05.678Z\",\"lastTriggered\":null,"
           "\"deliveryCount\":0,\"secret\":\"whsec_abc\"}");
    free(s);
    s = render(created_json, it);
    assert_string_equal(s, "{\"id\":\"w1\",\"url\":\"https://x.example/h\",\"events\":[\"threat_"
                           "alert\",\"product_recall\"],\"active\":true,\"secret\":\"whsec_abc\"}");
    free(s);
    s = render(webhook_write_row_json, it);
    assert_string_equal(s, "{\"id\":\"w1\",\"url\":\"https://x.example/h\",\"events\":[\"threat_"
                           "alert\",\"product_recall\"],\"active\":true,\"createdAt\":\"2026-01-"
                           "02T03:04:05.678Z\",\"lastTriggered\":null,\"deliveryCount\":0}");
    assert_null(strstr(s, "secret"));
    free(s);
    cJSON_Delete(it);

    f.events = 0; /* default: all */
    it = webhook_item_new(&f);
    assert_int_equal(webhook_events_of(it), WEBHOOK_EV_ALL);
    cJSON_Delete(it);
    f.brand_id = "b#1";
    assert_null(webhook_item_new(&f));
    f.brand_id = "b1";
    f.created_at = "yesterday";
    assert_null(webhook_item_new(&f));
}

static void test_delivery_item_and_json(void **state)
{
    (void)state;
    struct webhook_delivery_fields f = {.id = "d1",
                                        .webhook_id = "w1",
                                        .brand_id = "b1",
                                        .event = "threat_alert",
                                        .created_at = "2026-01-02T03:04:05.678Z",
                                        .payload = "{\"event\":\"threat_alert\"}"};
    cJSON *it = webhook_delivery_item_new(&f);
    char *s;

    assert_non_null(it);
    assert_string_equal(cJSON_GetObjectItem(it, "PK")->valuestring, "DELIVERY#w1");
    assert_string_equal(cJSON_GetObjectItem(it, "SK")->valuestring, "2026-01-02T03:04:05.678Z#d1");
    assert_string_equal(cJSON_GetObjectItem(it, "GSI1PK")->valuestring, "DELIVERY_PENDING");
    assert_string_equal(cJSON_GetObjectItem(it, "GSI1SK")->valuestring,
                        "2026-01-02T03:04:05.678Z#d1");
    assert_string_equal(cJSON_GetObjectItem(it, "status")->valuestring, "pending");
    assert_string_equal(cJSON_GetObjectItem(it, "claimToken")->valuestring, "");
    s = render(webhook_delivery_write_json, it);
    assert_string_equal(s, "{\"id\":\"d1\",\"event\":\"threat_alert\",\"status\":\"pending\","
                           "\"attempts\":0,\"lastStatus\":null,\"lastError\":null,\"createdAt\":"
                           "\"2026-01-02T03:04:05.678Z\",\"deliveredAt\":null,\"nextAttemptAt\":"
                           "\"2026-01-02T03:04:05.678Z\",\"history\":[]}");
    assert_null(strstr(s, "payload"));
    assert_null(strstr(s, "claim"));
    free(s);
    cJSON_Delete(it);

    f.event = "scan";
    assert_null(webhook_delivery_item_new(&f));
    f.event = "threat_alert";
    f.webhook_id = "w#1";
    assert_null(webhook_delivery_item_new(&f));
}

/* ---- body decoders ---- */

static int dec_create(const char *json, unsigned *events, char *bid, size_t n)
{
    cJSON *body = cJSON_Parse(json);
    struct webhook_create_req in;
    int rc;

    err[0] = '\0';
    rc = webhook_decode_create(body, &in, err, sizeof err);
    if (events)
        *events = in.events;
    if (bid && n)
        snprintf(bid, n, "%s", in.brand_id ? in.brand_id : "");
    cJSON_Delete(body);
    return rc;
}

static void test_decode_create(void **state)
{
    (void)state;
    unsigned ev = 0;
    char bid[64];
    const char *subset =
        "events must be a non-empty subset of verification_scan, threat_alert, product_recall";

    assert_int_equal(dec_create("{\"brandId\":\"b\",\"url\":\"https://x\"}", &ev, bid, sizeof bid),
                     0);
    assert_int_equal(ev, WEBHOOK_EV_ALL);
    assert_string_equal(bid, "b");
    assert_int_equal(
        dec_create("{\"brandId\":\"b\",\"url\":\"https://x\",\"events\":[\"threat_alert\","
                   "\"threat_alert\"]}",
                   &ev, NULL, 0),
        0);
    assert_int_equal(ev, WEBHOOK_EV_THREAT);

    assert_int_equal(dec_create("{\"brandId\":\"b\"}", NULL, NULL, 0), ERR_INVALID);
    assert_string_equal(err, "brandId and url required");
    assert_int_equal(dec_create("{\"url\":\"https://x\",\"brandId\":\"\"}", NULL, NULL, 0),
                     ERR_INVALID);
    assert_string_equal(err, "brandId and url required");
    assert_int_equal(dec_create("{\"brandId\":\"b\",\"url\":5}", NULL, NULL, 0), ERR_INVALID);
    assert_string_equal(err, "url must be a string");
    /* a type error wins over a missing field */
    assert_int_equal(dec_create("{\"url\":[]}", NULL, NULL, 0), ERR_INVALID);
    assert_string_equal(err, "url must be a string");
    assert_int_equal(
        dec_create("{\"brandId\":\"b\",\"url\":\"https://x\",\"events\":\"threat_alert\"}", NULL,
                   NULL, 0),
        ERR_INVALID);
    assert_int_equal(
        dec_create("{\"brandId\":\"b\",\"url\":\"https://x\",\"events\":[1]}", NULL, NULL, 0),
        ERR_INVALID);
    assert_int_equal(
        dec_create("{\"brandId\":\"b\",\"url\":\"https://x\",\"events\":[]}", NULL, NULL, 0),
        ERR_INVALID);
    assert_string_equal(err, subset);
    assert_int_equal(dec_create("{\"brandId\":\"b\",\"url\":\"https://x\",\"events\":["
                                "\"threat_alert\",\"nope\"]}",
                                NULL, NULL, 0),
                     ERR_INVALID);
    assert_string_equal(err, subset);
    assert_int_equal(dec_create("{\"brandId\":\"b#x\",\"url\":\"https://x\"}", NULL, NULL, 0),
                     ERR_INVALID);
    assert_string_equal(err, "Invalid brandId");
    assert_int_equal(dec_create("[1]", NULL, NULL, 0), ERR_INVALID);
    assert_string_equal(err, "Invalid JSON body");
}

static int dec_delete(const char *json)
{
    cJSON *body = cJSON_Parse(json);
    struct webhook_delete_req in;
    int rc;

    err[0] = '\0';
    rc = webhook_decode_delete(body, &in, err, sizeof err);
    cJSON_Delete(body);
    return rc;
}

static void test_decode_delete(void **state)
{
    (void)state;
    assert_int_equal(dec_delete("{\"brandId\":\"b\",\"webhookId\":\"w\"}"), 0);
    assert_int_equal(dec_delete("{\"brandId\":\"b\"}"), ERR_INVALID);
    assert_string_equal(err, "brandId and webhookId required");
    assert_int_equal(dec_delete("{\"brandId\":\"b\",\"webhookId\":false}"), ERR_INVALID);
    assert_string_equal(err, "brandId and webhookId required");
    assert_int_equal(dec_delete("{\"brandId\":\"b\",\"webhookId\":7}"), ERR_INVALID);
    assert_string_equal(err, "webhookId must be a string");
    assert_int_equal(dec_delete("{\"brandId\":\"b\",\"webhookId\":\"w#1\"}"), ERR_INVALID);
    assert_string_equal(err, "Invalid webhookId");
    assert_int_equal(dec_delete("null"), ERR_INVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_url_schemes_and_shape),
        cmocka_unit_test(test_url_credentials),
        cmocka_unit_test(test_url_private_ipv4),
        cmocka_unit_test(test_url_private_ipv6),
        cmocka_unit_test(test_url_names_and_spellings),
        cmocka_unit_test(test_addr_sockaddr),
        cmocka_unit_test(test_events_and_ids),
        cmocka_unit_test(test_secret_and_signature),
        cmocka_unit_test(test_webhook_item_and_json),
        cmocka_unit_test(test_delivery_item_and_json),
        cmocka_unit_test(test_decode_create),
        cmocka_unit_test(test_decode_delete),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
