/*
 * webhook.c - webhook and delivery items, their JSON shapes, secrets,
 * signatures and target URL validation (webhook.h).
 *
 * URL validation uses libcurl's own URL parser, the same one that later
 * connects, so what we check and what we reach cannot disagree.  The
 * private-address check here is the registration-time half of the SSRF
 * defence; the delivery-time half asks webhook_addr_private() again
 * before every connect (http/client.h address filter), which is what
 * defeats DNS rebinding.
 *
 * Name resolution at registration runs getaddrinfo() on a detached helper
 * thread and waits for it at most the given time: getaddrinfo() has no
 * timeout of its own and the caller is an event-loop handler.  The job is
 * reference-counted so whichever side finishes last frees it; a lookup
 * that outlives its waiter simply finishes and cleans up after itself.
 */
#include "core/webhook.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/brand.h"
#include "core/crypto.h"
#include "core/ids.h"
#include "core/keys.h"
#include "core/timeutil.h"
#include "net/resolver.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/xalloc.h"

static const struct {
    unsigned bit;
    const char *name;
} event_names[] = {
    {WEBHOOK_EV_SCAN, "verification_scan"},
    {WEBHOOK_EV_THREAT, "threat_alert"},
    {WEBHOOK_EV_RECALL, "product_recall"},
};
#define NEVENTS (sizeof event_names / sizeof event_names[0])

const char *webhook_event_name(unsigned bit)
{
    for (size_t i = 0; i < NEVENTS; i++)
        if (event_names[i].bit == bit)
            return event_names[i].name;
    return NULL;
}

unsigned webhook_event_bit(const char *name)
{
    if (!name)
        return 0;
    for (size_t i = 0; i < NEVENTS; i++)
        if (!strcmp(event_names[i].name, name))
            return event_names[i].bit;
    return 0;
}

unsigned webhook_events_of(const cJSON *item)
{
    const cJSON *ev = cJSON_GetObjectItemCaseSensitive(item, "events");
    const cJSON *e;
    unsigned bits = 0;

    if (!cJSON_IsArray(ev))
        return WEBHOOK_EV_ALL;
    cJSON_ArrayForEach(e, ev)
    {
        if (cJSON_IsString(e))
            bits |= webhook_event_bit(e->valuestring);
    }
    return bits;
}

bool webhook_id_ok(const char *id)
{
    size_t n;

    if (!id)
        return false;
    n = strnlen(id, WEBHOOK_ID_MAX + 1);
    if (!n || n > WEBHOOK_ID_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)id[i];
        if (c < 0x20 || c == 0x7f || c == '#')
            return false;
    }
    return true;
}

/* ---- address classification ------------------------------------------ */

static bool v4_private(uint32_t a)
{
    return (a >> 24) == 0 ||                   /* 0.0.0.0/8 "this network" */
           (a >> 24) == 10 ||                  /* 10/8 */
           (a & 0xFFC00000u) == 0x64400000u || /* 100.64/10 carrier-grade NAT */
           (a >> 24) == 127 ||                 /* loopback */
           (a & 0xFFFF0000u) == 0xA9FE0000u || /* 169.254/16 link-local */
           (a & 0xFFF00000u) == 0xAC100000u || /* 172.16/12 */
           (a & 0xFFFFFF00u) == 0xC0000000u || /* 192.0.0/24 protocol assignments */
           (a & 0xFFFFFF00u) == 0xC0000200u || /* 192.0.2/24 documentation */
           (a & 0xFFFF0000u) == 0xC0A80000u || /* 192.168/16 */
           (a & 0xFFFE0000u) == 0xC6120000u || /* 198.18/15 benchmarking */
           (a & 0xFFFFFF00u) == 0xC6336400u || /* 198.51.100/24 documentation */
           (a & 0xFFFFFF00u) == 0xCB007100u || /* 203.0.113/24 documentation */
           (a >> 28) >= 14;                    /* multicast, reserved, broadcast */
}

static uint32_t be32(const unsigned char *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static bool all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

static bool v6_private(const unsigned char *b)
{
    /* Forms that carry an IPv4 address: judge that address. */
    if (all_zero(b, 10) && b[10] == 0xff && b[11] == 0xff) /* ::ffff:a.b.c.d */
        return v4_private(be32(b + 12));
    if (all_zero(b, 12)) /* ::a.b.c.d (also :: and ::1) */
        return v4_private(be32(b + 12));
    if (b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b) {
        if (all_zero(b + 4, 8)) /* 64:ff9b::/96 NAT64 */
            return v4_private(be32(b + 12));
        return true; /* 64:ff9b:1::/48 local-use NAT64 */
    }
    if (b[0] == 0x20 && b[1] == 0x02) /* 2002::/16 6to4 */
        return v4_private(be32(b + 2));
    if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x00 && b[3] == 0x00)
        return true; /* 2001::/32 Teredo: the real peer is hidden */
    if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8)
        return true; /* 2001:db8::/32 documentation */
    if (b[0] == 0x01 && b[1] == 0x00 && all_zero(b + 2, 6))
        return true;           /* 100::/64 discard */
    if ((b[0] & 0xfe) == 0xfc) /* fc00::/7 unique local */
        return true;
    if (b[0] == 0xfe && (b[1] & 0x80) == 0x80) /* fe80::/10 link-local, fec0::/10 site-local */
        return true;
    if (b[0] == 0xff) /* multicast */
        return true;
    return false;
}

bool webhook_addr_private(const struct sockaddr *sa)
{
    if (!sa)
        return true;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;
        return v4_private(ntohl(in->sin_addr.s_addr));
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)sa;
        return v6_private(in6->sin6_addr.s6_addr);
    }
    return true;
}

/* ---- URL parsing ----------------------------------------------------- */

static int url_err(char *err, size_t errlen, const char *msg)
{
    snprintf(err, errlen, "%s", msg);
    return ERR_INVALID;
}

int webhook_url_parse(const char *url, struct webhook_url *out, char *err, size_t errlen)
{
    CURLU *u = NULL;
    char *scheme = NULL, *user = NULL, *pass = NULL, *opts = NULL, *host = NULL, *zone = NULL;
    size_t n;
    int rc = 0;

    memset(out, 0, sizeof *out);
    if (!url)
        return url_err(err, errlen, "Invalid webhook URL");
    n = strnlen(url, WEBHOOK_URL_MAX + 1);
    if (!n || n > WEBHOOK_URL_MAX)
        return url_err(err, errlen, "Invalid webhook URL");
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)url[i];
        /* Spaces, controls and backslashes are where URL parsers differ. */
        if (c <= ' ' || c == 0x7f || c == '\\')
            return url_err(err, errlen, "Invalid webhook URL");
    }
    u = curl_url();
    if (!u)
        return url_err(err, errlen, "Invalid webhook URL");
    if (curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK) {
        rc = url_err(err, errlen, "Invalid webhook URL");
        goto out;
    }
    if (strcasecmp(scheme, "http") != 0 && strcasecmp(scheme, "https") != 0) {
        rc = url_err(err, errlen, "Webhook URL must use http or https");
        goto out;
    }
    /* A URL without "scheme://" (e.g. "http:x") is not something we send to. */
    if (strncasecmp(url, scheme, strlen(scheme)) != 0 || strncmp(url + strlen(scheme), "://", 3)) {
        rc = url_err(err, errlen, "Invalid webhook URL");
        goto out;
    }
    if (curl_url_get(u, CURLUPART_USER, &user, 0) == CURLUE_OK ||
        curl_url_get(u, CURLUPART_PASSWORD, &pass, 0) == CURLUE_OK ||
        curl_url_get(u, CURLUPART_OPTIONS, &opts, 0) == CURLUE_OK ||
        memchr(url + strlen(scheme) + 3, '@', strcspn(url + strlen(scheme) + 3, "/?#"))) {
        /* Any '@' in the authority is userinfo, even an empty one. */
        rc = url_err(err, errlen, "Webhook URL must not contain credentials");
        goto out;
    }
    /* A zone id ("%25eth0") never names a public address. */
    if (curl_url_get(u, CURLUPART_ZONEID, &zone, 0) == CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK || !host[0]) {
        rc = url_err(err, errlen, "Invalid webhook URL");
        goto out;
    }
    {
        const char *h = host;
        size_t hl = strlen(host);
        if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
            h++;
            hl -= 2;
        }
        if (!hl || hl > WEBHOOK_HOST_MAX || memchr(h, '%', hl)) {
            rc = url_err(err, errlen, "Invalid webhook URL");
            goto out;
        }
        memcpy(out->host, h, hl);
        out->host[hl] = '\0';
    }
    {
        unsigned char tmp[16];
        out->host_is_ip =
            inet_pton(AF_INET, out->host, tmp) == 1 || inet_pton(AF_INET6, out->host, tmp) == 1;
    }
    out->https = strcasecmp(scheme, "https") == 0;
out:
    curl_free(scheme);
    curl_free(user);
    curl_free(pass);
    curl_free(opts);
    curl_free(host);
    curl_free(zone);
    curl_url_cleanup(u);
    return rc;
}

/* ---- the address check ------------------------------------------------ */

static bool literal_private(const char *host)
{
    struct sockaddr_in in4;
    struct sockaddr_in6 in6;

    memset(&in4, 0, sizeof in4);
    memset(&in6, 0, sizeof in6);
    if (inet_pton(AF_INET, host, &in4.sin_addr) == 1) {
        in4.sin_family = AF_INET;
        return webhook_addr_private((const struct sockaddr *)&in4);
    }
    if (inet_pton(AF_INET6, host, &in6.sin6_addr) == 1) {
        in6.sin6_family = AF_INET6;
        return webhook_addr_private((const struct sockaddr *)&in6);
    }
    return true;
}

int webhook_url_precheck(const char *url, bool allow_private, struct webhook_url *u, bool *lookup,
                         char *err, size_t errlen)
{
    int rc = webhook_url_parse(url, u, err, errlen);

    *lookup = false;
    if (rc || allow_private)
        return rc;
    if (!u->host_is_ip) {
        *lookup = true;
        return 0;
    }
    if (literal_private(u->host))
        return url_err(err, errlen, "Webhook URL must not point to a private or loopback address");
    return 0;
}

int webhook_addrs_check(int lookup_rc, const struct addrinfo *res, char *err, size_t errlen)
{
    if (lookup_rc || !res)
        return url_err(err, errlen, "Webhook host cannot be resolved");
    for (const struct addrinfo *ai = res; ai; ai = ai->ai_next)
        if (webhook_addr_private(ai->ai_addr))
            return url_err(err, errlen,
                           "Webhook URL must not point to a private or loopback address");
    return 0;
}

int webhook_url_check(const char *url, bool allow_private, double resolve_timeout_s, char *err,
                      size_t errlen)
{
    struct webhook_url u;
    struct addrinfo *res = NULL;
    bool lookup;
    int rc = webhook_url_precheck(url, allow_private, &u, &lookup, err, errlen);

    if (rc || !lookup)
        return rc;
    rc = resolver_lookup_wait(u.host, resolve_timeout_s, &res);
    rc = webhook_addrs_check(rc, res, err, errlen);
    if (res)
        freeaddrinfo(res);
    return rc;
}

/* ---- secrets and signatures ---------------------------------------- */

void webhook_secret_new(char out[WEBHOOK_SECRET_LEN + 1])
{
    unsigned char raw[32];

    ids_random(raw, sizeof raw);
    memcpy(out, WEBHOOK_SECRET_PREFIX, 6);
    ids_hex(raw, sizeof raw, out + 6);
    memset(raw, 0, sizeof raw);
}

void webhook_sign(const char *secret, const char *ts, const char *body, size_t len,
                  char out[WEBHOOK_SIG_LEN + 1])
{
    struct buf m = BUF_INIT(0);

    buf_puts(&m, ts);
    buf_putc(&m, '.');
    buf_append(&m, body, len);
    memcpy(out, "sha256=", 7);
    crypto_hmac_sha256_hex(secret, strlen(secret), m.data, m.len, out + 7);
    buf_free(&m);
}

/* ---- items and JSON ------------------------------------------------ */

static void add_events(cJSON *item, unsigned bits)
{
    cJSON *arr = cJSON_AddArrayToObject(item, "events");
    for (size_t i = 0; i < NEVENTS; i++)
        if (bits & event_names[i].bit)
            cJSON_AddItemToArray(arr, cJSON_CreateString(event_names[i].name));
}

cJSON *webhook_item_new(const struct webhook_fields *f)
{
    struct key pk, sk;
    cJSON *it;

    if (!f || !webhook_id_ok(f->id) || !brand_id_ok(f->brand_id) || !f->url || !*f->url ||
        !f->created_at || !time_is_iso(f->created_at) || !f->secret || !*f->secret ||
        !key_brand_pk(&pk, f->brand_id) || !key_webhook_sk(&sk, f->id))
        return NULL;
    it = cJSON_CreateObject();
    cJSON_AddStringToObject(it, "PK", pk.s);
    cJSON_AddStringToObject(it, "SK", sk.s);
    cJSON_AddStringToObject(it, "id", f->id);
    cJSON_AddStringToObject(it, "brandId", f->brand_id);
    cJSON_AddStringToObject(it, "url", f->url);
    add_events(it, f->events ? f->events & WEBHOOK_EV_ALL : WEBHOOK_EV_ALL);
    cJSON_AddTrueToObject(it, "active");
    cJSON_AddStringToObject(it, "createdAt", f->created_at);
    cJSON_AddNullToObject(it, "lastTriggered");
    cJSON_AddNumberToObject(it, "deliveryCount", 0);
    cJSON_AddStringToObject(it, "secret", f->secret);
    return it;
}

static const cJSON *attr(const cJSON *item, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(item, name);
}

/* Writes a stored attribute as is, or null when absent. */
static void kattr(struct jsonw *w, const cJSON *item, const char *name)
{
    jsonw_kjson(w, name, attr(item, name));
}

static void kevents(struct jsonw *w, const cJSON *item)
{
    unsigned bits = webhook_events_of(item);

    jsonw_key(w, "events");
    jsonw_arr(w);
    for (size_t i = 0; i < NEVENTS; i++)
        if (bits & event_names[i].bit)
            jsonw_str(w, event_names[i].name);
    jsonw_end(w);
}

static bool item_active(const cJSON *item)
{
    const cJSON *a = attr(item, "active");
    return cJSON_IsTrue(a);
}

void webhook_write_created_json(struct jsonw *w, const cJSON *item)
{
    jsonw_obj(w);
    kattr(w, item, "id");
    kattr(w, item, "url");
    kevents(w, item);
    jsonw_kbool(w, "active", item_active(item));
    kattr(w, item, "secret");
    jsonw_end(w);
}

void webhook_write_row_json(struct jsonw *w, const cJSON *item)
{
    const cJSON *n = attr(item, "deliveryCount");

    jsonw_obj(w);
    kattr(w, item, "id");
    kattr(w, item, "url");
    kevents(w, item);
    jsonw_kbool(w, "active", item_active(item));
    kattr(w, item, "createdAt");
    kattr(w, item, "lastTriggered");
    jsonw_knum(w, "deliveryCount", cJSON_IsNumber(n) ? n->valuedouble : 0);
    jsonw_end(w);
}

cJSON *webhook_delivery_item_new(const struct webhook_delivery_fields *f)
{
    struct key pk, sk;
    cJSON *it;

    if (!f || !webhook_id_ok(f->id) || !webhook_id_ok(f->webhook_id) || !brand_id_ok(f->brand_id) ||
        !webhook_event_bit(f->event) || !f->created_at || !time_is_iso(f->created_at) ||
        !f->payload || !key_delivery_pk(&pk, f->webhook_id) ||
        !key_delivery_sk(&sk, f->created_at, f->id))
        return NULL;
    it = cJSON_CreateObject();
    cJSON_AddStringToObject(it, "PK", pk.s);
    cJSON_AddStringToObject(it, "SK", sk.s);
    cJSON_AddStringToObject(it, "GSI1PK", KEY_GSI1PK_DELIVERY_PENDING);
    cJSON_AddStringToObject(it, "GSI1SK", sk.s);
    cJSON_AddStringToObject(it, "id", f->id);
    cJSON_AddStringToObject(it, "webhookId", f->webhook_id);
    cJSON_AddStringToObject(it, "brandId", f->brand_id);
    cJSON_AddStringToObject(it, "event", f->event);
    cJSON_AddStringToObject(it, "status", WEBHOOK_ST_PENDING);
    cJSON_AddNumberToObject(it, "attempts", 0);
    cJSON_AddNullToObject(it, "lastStatus");
    cJSON_AddNullToObject(it, "lastError");
    cJSON_AddStringToObject(it, "createdAt", f->created_at);
    cJSON_AddNullToObject(it, "deliveredAt");
    cJSON_AddStringToObject(it, "nextAttemptAt", f->created_at);
    cJSON_AddStringToObject(it, "payload", f->payload);
    cJSON_AddArrayToObject(it, "history");
    /* free for any taker (api/job_claim.h: claimToken "" = not claimed) */
    cJSON_AddStringToObject(it, KEY_ATTR_CLAIM_TOKEN, "");
    return it;
}

void webhook_delivery_write_json(struct jsonw *w, const cJSON *item)
{
    const cJSON *n = attr(item, "attempts");
    const cJSON *h = attr(item, "history");

    jsonw_obj(w);
    kattr(w, item, "id");
    kattr(w, item, "event");
    kattr(w, item, "status");
    jsonw_knum(w, "attempts", cJSON_IsNumber(n) ? n->valuedouble : 0);
    kattr(w, item, "lastStatus");
    kattr(w, item, "lastError");
    kattr(w, item, "createdAt");
    kattr(w, item, "deliveredAt");
    kattr(w, item, "nextAttemptAt");
    if (cJSON_IsArray(h))
        jsonw_kjson(w, "history", h);
    else {
        jsonw_key(w, "history");
        jsonw_arr(w);
        jsonw_end(w);
    }
    jsonw_end(w);
}
