/*
 * geo.c - client IP, trusted proxies and geolocation (geo.h).
 *
 * Addresses are compared in one 128-bit space: IPv4 addresses and ranges
 * are mapped to ::ffff:a.b.c.d, so "127.0.0.0/8" also matches a dual-stack
 * socket's "::ffff:127.0.0.1".  Country spellings are looked up in the
 * generated, sorted geo_names table (geo_countries.c) by binary search.
 */
#include "api/geo.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <maxminddb.h>

#include "api/api_req.h"
#include "api/decode.h"
#include "api/geo_countries.h"
#include "util/xalloc.h"

/* ---------- addresses ---------- */

struct geo_range {
    unsigned char addr[16];
    int bits; /* prefix length in the 128-bit space */
};

struct geo_proxies {
    struct geo_range r[GEO_PROXIES_MAX];
    size_t n;
};

/* Text -> 16 bytes (IPv4 mapped).  *v4 tells which family it was. */
static bool parse_ip(const char *s, unsigned char out[16], bool *v4)
{
    struct in_addr a4;
    if (inet_pton(AF_INET, s, &a4) == 1) {
        memset(out, 0, 10);
        out[10] = out[11] = 0xff;
        memcpy(out + 12, &a4, 4);
        *v4 = true;
        return true;
    }
    *v4 = false;
    return inet_pton(AF_INET6, s, out) == 1;
}

static bool in_range(const struct geo_range *r, const unsigned char a[16])
{
    int bits = r->bits;
    for (int i = 0; i < 16 && bits > 0; i++, bits -= 8) {
        unsigned char mask = bits >= 8 ? 0xff : (unsigned char)(0xff << (8 - bits));
        if ((a[i] & mask) != (r->addr[i] & mask))
            return false;
    }
    return true;
}

struct geo_proxies *geo_proxies_parse(const char *list, char *err, size_t errlen)
{
    struct geo_proxies *p = xcalloc(1, sizeof *p);
    if (!list || !strcmp(list, "none"))
        return p;
    const char *s = list;
    while (*s) {
        char tok[128];
        size_t len = strcspn(s, ",");
        const char *next = s[len] ? s + len + 1 : s + len;
        while (len && isspace((unsigned char)*s)) {
            s++;
            len--;
        }
        while (len && isspace((unsigned char)s[len - 1]))
            len--;
        if (len == 0) {
            s = next;
            continue;
        }
        if (len >= sizeof tok || p->n == GEO_PROXIES_MAX) {
            snprintf(err, errlen, "trusted proxy list: entry too long or more than %d entries",
                     GEO_PROXIES_MAX);
            goto fail;
        }
        memcpy(tok, s, len);
        tok[len] = '\0';
        char *slash = strchr(tok, '/');
        int bits = -1;
        if (slash) {
            *slash = '\0';
            char *end;
            long b = strtol(slash + 1, &end, 10);
            if (!slash[1] || *end || b < 0 || b > 128) {
                snprintf(err, errlen, "trusted proxy list: bad prefix length in '%s'", tok);
                goto fail;
            }
            bits = (int)b;
        }
        bool v4;
        struct geo_range *r = &p->r[p->n];
        if (!parse_ip(tok, r->addr, &v4)) {
            snprintf(err, errlen, "trusted proxy list: '%s' is not an IP address", tok);
            goto fail;
        }
        if (bits < 0)
            bits = v4 ? 32 : 128;
        if (v4 && bits > 32) {
            snprintf(err, errlen, "trusted proxy list: IPv4 prefix longer than 32 in '%s'", tok);
            goto fail;
        }
        r->bits = v4 ? 96 + bits : bits;
        p->n++;
        s = next;
    }
    return p;
fail:
    free(p);
    return NULL;
}

void geo_proxies_free(struct geo_proxies *p)
{
    free(p);
}

bool geo_proxies_match(const struct geo_proxies *p, const char *ip)
{
    unsigned char a[16];
    bool v4;
    if (!p || !ip || !parse_ip(ip, a, &v4))
        return false;
    for (size_t i = 0; i < p->n; i++)
        if (in_range(&p->r[i], a))
            return true;
    return false;
}

/* ---------- country names ---------- */

size_t geo_norm(const char *in, char *out, size_t n)
{
    size_t o = 0;
    bool space = false;
    if (n == 0)
        return 0;
    for (const unsigned char *p = (const unsigned char *)in; p && *p; p++) {
        unsigned char c = *p;
        if (c == '.' || c == ',' || c == '\'' || c == '(' || c == ')')
            continue;
        if (c == '-' || c == '_' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
            c == '\f') {
            space = true;
            continue;
        }
        if (space && o > 0 && o + 1 < n)
            out[o++] = ' ';
        space = false;
        if (o + 1 >= n)
            break;
        out[o++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    out[o] = '\0';
    return o;
}

static int cmp_name(const void *key, const void *elem)
{
    return strcmp(key, ((const struct geo_name *)elem)->name);
}

static int cmp_code(const void *key, const void *elem)
{
    return strcmp(key, ((const struct geo_country *)elem)->code);
}

const char *geo_country_code(const char *name)
{
    char k[128];
    if (!name || strlen(name) >= sizeof k)
        return NULL;
    if (!geo_norm(name, k, sizeof k))
        return NULL;
    const struct geo_name *g = bsearch(k, geo_names, geo_names_len, sizeof *geo_names, cmp_name);
    return g ? g->code : NULL;
}

const char *geo_country_name(const char *code)
{
    if (!code)
        return NULL;
    const struct geo_country *c =
        bsearch(code, geo_countries, geo_countries_len, sizeof *geo_countries, cmp_code);
    return c ? c->name : NULL;
}

/* ---------- sources ---------- */

static bool ignored_value(const char *v)
{
    return !v || !*v || !strcmp(v, "XX") || !strcmp(v, "xx") || !strcmp(v, "T1") ||
           !strcmp(v, "t1");
}

/* A city name from a header: URL-decoded, valid UTF-8, no control
 * characters, bounded; "Unknown" otherwise. */
static void city_from(const char *raw, char *city, size_t citn)
{
    char tmp[256];
    snprintf(city, citn, "%s", GEO_UNKNOWN);
    if (!raw || !*raw)
        return;
    int n = api_url_decode(raw, strlen(raw), false, tmp, sizeof tmp);
    if (n <= 0 || (size_t)n >= citn)
        return;
    for (int i = 0; i < n; i++)
        if ((unsigned char)tmp[i] < 0x20 || tmp[i] == 0x7f)
            return;
    snprintf(city, citn, "%s", tmp);
}

static void country_from(const char *raw, char *country, size_t cn)
{
    char tmp[128];
    int n = api_url_decode(raw, strlen(raw), false, tmp, sizeof tmp);
    const char *code = n > 0 ? geo_country_code(tmp) : NULL;
    snprintf(country, cn, "%s", code ? code : GEO_UNKNOWN);
}

bool geo_from_headers(const struct http_request *req, char *country, size_t cn, char *city,
                      size_t citn)
{
    static const struct {
        const char *country, *city;
    } sources[] = {
        {"CF-IPCountry", NULL},
        {"X-Vercel-IP-Country", "X-Vercel-IP-City"},
        {"X-Country", "X-City"},
    };
    for (size_t i = 0; i < sizeof sources / sizeof sources[0]; i++) {
        const char *v = http_request_header(req, sources[i].country);
        if (ignored_value(v))
            continue;
        country_from(v, country, cn);
        city_from(sources[i].city ? http_request_header(req, sources[i].city) : NULL, city, citn);
        return true;
    }
    return false;
}

struct geo_db {
    MMDB_s mmdb;
};

struct geo_db *geo_db_open(const char *path, char *err, size_t errlen)
{
    struct geo_db *db = xcalloc(1, sizeof *db);
    int rc = MMDB_open(path, MMDB_MODE_MMAP, &db->mmdb);
    if (rc != MMDB_SUCCESS) {
        snprintf(err, errlen, "cannot open GeoIP database %s: %s", path, MMDB_strerror(rc));
        free(db);
        return NULL;
    }
    return db;
}

void geo_db_close(struct geo_db *db)
{
    if (!db)
        return;
    MMDB_close(&db->mmdb);
    free(db);
}

/* Copies a UTF-8 string value at path into out; false when absent. */
static bool mmdb_str(MMDB_entry_s *entry, char *out, size_t n, const char *const *path)
{
    MMDB_entry_data_s data;
    if (MMDB_aget_value(entry, &data, path) != MMDB_SUCCESS || !data.has_data ||
        data.type != MMDB_DATA_TYPE_UTF8_STRING || data.data_size == 0 || data.data_size >= n)
        return false;
    memcpy(out, data.utf8_string, data.data_size);
    out[data.data_size] = '\0';
    return dec_utf8_ok(out, data.data_size);
}

bool geo_db_lookup(struct geo_db *db, const char *ip, char *country, size_t cn, char *city,
                   size_t citn)
{
    int gai = 0, mmerr = 0;
    if (!db || !ip)
        return false;
    MMDB_lookup_result_s res = MMDB_lookup_string(&db->mmdb, ip, &gai, &mmerr);
    if (gai || mmerr != MMDB_SUCCESS || !res.found_entry)
        return false;
    static const char *const cpath[] = {"country", "iso_code", NULL};
    static const char *const citypath[] = {"city", "names", "en", NULL};
    char code[8];
    if (!mmdb_str(&res.entry, code, sizeof code, cpath))
        return false;
    const char *c = geo_country_code(code);
    snprintf(country, cn, "%s", c ? c : GEO_UNKNOWN);
    if (!mmdb_str(&res.entry, city, citn, citypath))
        snprintf(city, citn, "%s", GEO_UNKNOWN);
    return true;
}

/* Copies the first X-Forwarded-For entry into ip when it is an address. */
static void forwarded_ip(const struct http_request *req, char *ip, size_t ipn)
{
    const char *xff = http_request_header(req, "X-Forwarded-For");
    if (!xff)
        return;
    char first[64];
    size_t len = strcspn(xff, ",");
    while (len && isspace((unsigned char)*xff)) {
        xff++;
        len--;
    }
    while (len && isspace((unsigned char)xff[len - 1]))
        len--;
    unsigned char a[16];
    bool v4;
    if (len == 0 || len >= sizeof first)
        return;
    memcpy(first, xff, len);
    first[len] = '\0';
    if (parse_ip(first, a, &v4))
        snprintf(ip, ipn, "%s", first);
}

void geo_client_ip(const struct geo_proxies *proxies, const struct http_request *req, char *ip,
                   size_t ipn)
{
    snprintf(ip, ipn, "%s", req->peer_ip[0] ? req->peer_ip : "unknown");
    if (geo_proxies_match(proxies, req->peer_ip))
        forwarded_ip(req, ip, ipn);
}

void geo_resolve(const struct geo_proxies *proxies, struct geo_db *db,
                 const struct http_request *req, char *ip, size_t ipn, char *country, size_t cn,
                 char *city, size_t citn)
{
    bool trusted = geo_proxies_match(proxies, req->peer_ip);
    snprintf(ip, ipn, "%s", req->peer_ip[0] ? req->peer_ip : "unknown");
    snprintf(country, cn, "%s", GEO_UNKNOWN);
    snprintf(city, citn, "%s", GEO_UNKNOWN);
    if (trusted) {
        forwarded_ip(req, ip, ipn);
        if (geo_from_headers(req, country, cn, city, citn))
            return;
    }
    if (db)
        geo_db_lookup(db, ip, country, cn, city, citn);
}
