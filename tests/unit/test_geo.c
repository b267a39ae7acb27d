/*
 * test_geo.c - country name mapping, trusted proxy ranges, the client IP
 * rule and header-based geo (api/geo.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "api/geo.h"
#include "api/geo_countries.h"

static void test_norm(void **state)
{
    (void)state;
    char out[64];
    assert_int_equal(geo_norm("  United   States ", out, sizeof out), 13);
    assert_string_equal(out, "united states");
    geo_norm("U.S.A.", out, sizeof out);
    assert_string_equal(out, "usa");
    geo_norm("Korea, Republic of", out, sizeof out);
    assert_string_equal(out, "korea republic of");
    geo_norm("Guinea-Bissau", out, sizeof out);
    assert_string_equal(out, "guinea bissau");
    geo_norm("C\xc3\xb4te d'Ivoire", out, sizeof out);
    assert_string_equal(out, "c\xc3\xb4te divoire");
    geo_norm("abcdefgh", out, 4);
    assert_string_equal(out, "abc");
}

static void test_country_codes(void **state)
{
    (void)state;
    static const struct {
        const char *in, *code;
    } cases[] = {
        {"United States", "US"},
        {"united states of america", "US"},
        {"USA", "US"},
        {"us", "US"},
        {"US", "US"},
        {"U.S.", "US"},
        {"UK", "GB"},
        {"United Kingdom", "GB"},
        {"Great Britain", "GB"},
        {"GBR", "GB"},
        {"Russia", "RU"},
        {"Russian Federation", "RU"},
        {"South Korea", "KR"},
        {"Korea, Republic of", "KR"},
        {"North Korea", "KP"},
        {"Switzerland", "CH"},
        {"switzerland", "CH"},
        {"CHE", "CH"},
        {"Japan", "JP"},
        {"Viet Nam", "VN"},
        {"Vietnam", "VN"},
        {"Iran", "IR"},
        {"Taiwan", "TW"},
        {"Czech Republic", "CZ"},
        {"Czechia", "CZ"},
        {"Cote d'Ivoire", "CI"},
        {"C\xc3\xb4te d'Ivoire", "CI"},
        {"Ivory Coast", "CI"},
        {"Turkey", "TR"},
        {"T\xc3\xbcrkiye", "TR"},
        {"Turkiye", "TR"},
        {"UAE", "AE"},
        {"United Arab Emirates", "AE"},
        {"Bolivia", "BO"},
        {"Holland", "NL"},
        {"Netherlands", "NL"},
        {"Hong Kong", "HK"},
        {"Singapore", "SG"},
        {"  france  ", "FR"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *c = geo_country_code(cases[i].in);
        if (!c || strcmp(c, cases[i].code))
            fail_msg("'%s' -> %s (want %s)", cases[i].in, c ? c : "NULL", cases[i].code);
    }
    assert_null(geo_country_code("Atlantis"));
    assert_null(geo_country_code("XX"));
    assert_null(geo_country_code(""));
    assert_null(geo_country_code(NULL));
    assert_null(geo_country_code("Unknown"));
}

static void test_tables_sorted(void **state)
{
    (void)state;
    assert_true(geo_countries_len >= 249);
    for (size_t i = 1; i < geo_countries_len; i++)
        assert_true(strcmp(geo_countries[i - 1].code, geo_countries[i].code) < 0);
    for (size_t i = 1; i < geo_names_len; i++)
        assert_true(strcmp(geo_names[i - 1].name, geo_names[i].name) < 0);
    /* every name maps to a known code, and is its own normal form */
    for (size_t i = 0; i < geo_names_len; i++) {
        char n[128];
        assert_non_null(geo_country_name(geo_names[i].code));
        geo_norm(geo_names[i].name, n, sizeof n);
        assert_string_equal(n, geo_names[i].name);
    }
    assert_string_equal(geo_country_name("US"), "United States");
    assert_string_equal(geo_country_name("DE"), "Germany");
    assert_null(geo_country_name("ZZ"));
}

static void test_proxies(void **state)
{
    (void)state;
    char err[128];
    struct geo_proxies *p = geo_proxies_parse("127.0.0.0/8, ::1,10.9.9.9 ,192.168.0.0/16,"
                                              "2001:db8::/32",
                                              err, sizeof err);
    assert_non_null(p);
    assert_true(geo_proxies_match(p, "127.0.0.1"));
    assert_true(geo_proxies_match(p, "127.255.1.2"));
    assert_true(geo_proxies_match(p, "::ffff:127.0.0.1"));
    assert_true(geo_proxies_match(p, "::1"));
    assert_true(geo_proxies_match(p, "10.9.9.9"));
    assert_false(geo_proxies_match(p, "10.9.9.8"));
    assert_true(geo_proxies_match(p, "192.168.44.1"));
    assert_false(geo_proxies_match(p, "192.169.0.1"));
    assert_true(geo_proxies_match(p, "2001:db8:1::5"));
    assert_false(geo_proxies_match(p, "2001:db9::5"));
    assert_false(geo_proxies_match(p, "::2"));
    assert_false(geo_proxies_match(p, "garbage"));
    assert_false(geo_proxies_match(p, ""));
    assert_false(geo_proxies_match(NULL, "127.0.0.1"));
    geo_proxies_free(p);

    p = geo_proxies_parse("none", err, sizeof err);
    assert_non_null(p);
    assert_false(geo_proxies_match(p, "127.0.0.1"));
    geo_proxies_free(p);
    p = geo_proxies_parse("0.0.0.0/0", err, sizeof err);
    assert_true(geo_proxies_match(p, "8.8.8.8"));
    assert_false(geo_proxies_match(p, "2001:db8::1"));
    geo_proxies_free(p);

    assert_null(geo_proxies_parse("10.0.0.0/33", err, sizeof err));
    assert_null(geo_proxies_parse("10.0.0.0/", err, sizeof err));
    assert_null(geo_proxies_parse("10.0.0.0/x", err, sizeof err));
    assert_null(geo_proxies_parse("::1/129", err, sizeof err));
    assert_null(geo_proxies_parse("example.com", err, sizeof err));
    assert_non_null(strstr(err, "example.com"));
}

/* A request with the given peer and headers (name, value, ..., NULL). */
static void make_req(struct http_request *r, const char *peer, ...)
{
    va_list ap;
    memset(r, 0, sizeof *r);
    snprintf(r->peer_ip, sizeof r->peer_ip, "%s", peer);
    r->method = HTTP_M_GET;
    r->path = "/api/products/verify";
    r->query = "";
    va_start(ap, peer);
    const char *name;
    while ((name = va_arg(ap, const char *))) {
        r->headers[r->nheaders].name = name;
        r->headers[r->nheaders].value = va_arg(ap, const char *);
        r->nheaders++;
    }
    va_end(ap);
}

struct resolved {
    char ip[64], country[64], city[128];
};

static void resolve(const struct geo_proxies *p, const struct http_request *r, struct resolved *o)
{
    geo_resolve(p, NULL, r, o->ip, sizeof o->ip, o->country, sizeof o->country, o->city,
                sizeof o->city);
}

static void test_client_ip_rule(void **state)
{
    (void)state;
    char err[128];
    struct geo_proxies *p = geo_proxies_parse("127.0.0.0/8,::1", err, sizeof err);
    struct http_request r;
    struct resolved o;

    /* untrusted peer: its own address, headers ignored */
    make_req(&r, "203.0.113.7", "X-Forwarded-For", "1.2.3.4", "CF-IPCountry", "DE", NULL);
    resolve(p, &r, &o);
    assert_string_equal(o.ip, "203.0.113.7");
    assert_string_equal(o.country, "Unknown");
    assert_string_equal(o.city, "Unknown");

    /* trusted peer: first forwarded entry, trimmed */
    make_req(&r, "127.0.0.1", "X-Forwarded-For", "  198.51.100.9 , 10.0.0.1", NULL);
    resolve(p, &r, &o);
    assert_string_equal(o.ip, "198.51.100.9");
    assert_string_equal(o.country, "Unknown");

    /* trusted peer, forwarded entry not an address: the peer */
    make_req(&r, "::1", "X-Forwarded-For", "evil<script>", NULL);
    resolve(p, &r, &o);
    assert_string_equal(o.ip, "::1");

    make_req(&r, "127.0.0.1", "X-Forwarded-For", "2001:db8::7", NULL);
    geo_client_ip(p, &r, o.ip, sizeof o.ip);
    assert_string_equal(o.ip, "2001:db8::7");
    geo_client_ip(NULL, &r, o.ip, sizeof o.ip);
    assert_string_equal(o.ip, "127.0.0.1");
    geo_proxies_free(p);
}

static void test_geo_headers(void **state)
{
    (void)state;
    char err[128];
    struct geo_proxies *p = geo_proxies_parse("127.0.0.1", err, sizeof err);
    struct http_request r;
    struct resolved o;

    make_req(&r, "127.0.0.1", "CF-IPCountry", "ch", NULL);
    resolve(p, &r, &o);
    assert_string_equal(o.country, "CH");
    assert_string_equal(o.city, "Unknown");

    make_req(&r, "127.0.0.1", "x-vercel-ip-country", "US", "x-vercel-ip-city", "New%20York", NULL);
    resolve(p, &r, &o);
    assert_string_equal(o.country, "US");
    assert_string_equal(o.city, "New York");

    make_req(&r, "127.0.0.1", "X-Vercel-IP-Country", "JP", "X-Vercel-IP-City", "S%C3%A3o%20Paulo",
             NULL);
    resolve(p, &r, &o);
    assert_string_equal(o.city, "S\xc3\xa3o Paulo");

    /* full names are mapped; unknown names give Unknown */
    make_req(&r, "127.0.0.1", "X-Country", "United States", "X-City", "Boston", NULL);
    resolve(p, &r, &o);
    assert_string_equal(o.country, "US");
    assert_string_equal(o.city, "Boston");
    make_req(&r, "127.0.0.1", "X-Country", "Narnia", "X-City", "Cair Paravel", NULL);
    resolve(p, &r, &o);
    assert_string_equal(o.country, "Unknown");

    /* XX / T1 / empty are skipped: the next source is used */
    make_req(&r, "127.0.0.1", "CF-IPCountry", "XX", "X-Vercel-IP-Country", "T1", "X-Country",
             "Russia", NULL);
    resolve(p, &r, &o);
    assert_string_equal(o.country, "RU");
    make_req(&r, "127.0.0.1", "CF-IPCountry", "", NULL);
    resolve(p, &r, &o);
    assert_string_equal(o.country, "Unknown");

    /* CF wins over the others */
    make_req(&r, "127.0.0.1", "X-Country", "FR", "CF-IPCountry", "DE", NULL);
    resolve(p, &r, &o);
    assert_string_equal(o.country, "DE");

    /* hostile city values fall back to Unknown */
    make_req(&r, "127.0.0.1", "X-Vercel-IP-Country", "US", "X-Vercel-IP-City", "a%0Ab", NULL);
    resolve(p, &r, &o);
    assert_string_equal(o.city, "Unknown");
    make_req(&r, "127.0.0.1", "X-Vercel-IP-Country", "US", "X-Vercel-IP-City", "%ff%fe", NULL);
    resolve(p, &r, &o);
    assert_string_equal(o.city, "Unknown");
    make_req(&r, "127.0.0.1", "X-Vercel-IP-Country", "US", "X-Vercel-IP-City", "%zz", NULL);
    resolve(p, &r, &o);
    assert_string_equal(o.city, "Unknown");

    /* not trusted: same headers ignored */
    make_req(&r, "10.0.0.1", "CF-IPCountry", "DE", NULL);
    resolve(p, &r, &o);
    assert_string_equal(o.country, "Unknown");
    geo_proxies_free(p);
}

static void test_geoip_missing_db(void **state)
{
    (void)state;
    char err[256];
    assert_null(geo_db_open("/nonexistent/GeoLite2-City.mmdb", err, sizeof err));
    assert_non_null(strstr(err, "GeoLite2"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_norm),
        cmocka_unit_test(test_country_codes),
        cmocka_unit_test(test_tables_sorted),
        cmocka_unit_test(test_proxies),
        cmocka_unit_test(test_client_ip_rule),
        cmocka_unit_test(test_geo_headers),
        cmocka_unit_test(test_geoip_missing_db),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
