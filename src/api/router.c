/*
 * router.c - the list of route tables and exact-path matching (router.h).
 *
 * Each resource family exports a const table (api.h); this file only
 * lists them, like tmux's cmd_table.  A lookup walks every table once:
 * about fifty string compares, cheaper than anything else a request does.
 * The first table is the platform's own (health/ready/metrics) so the
 * hottest probe paths match first.
 */
#include "api/router.h"

#include <stdio.h>
#include <string.h>

static const struct api_route *const route_tables[] = {
    api_health_routes,   api_brands_routes,       api_products_routes, api_scans_routes,
    api_threats_routes,  api_ops_routes,          api_admin_routes,    api_stream_routes,
    api_webhooks_routes, api_catalog_routes,      api_platform_routes, api_stripe_routes,
    api_ingest_routes,   api_integrations_routes, api_exports_routes,
};

#define NTABLES (sizeof route_tables / sizeof route_tables[0])

const char *router_method_name(enum http_method m)
{
    switch (m) {
    case HTTP_M_GET:
        return "GET";
    case HTTP_M_HEAD:
        return "HEAD";
    case HTTP_M_POST:
        return "POST";
    case HTTP_M_PUT:
        return "PUT";
    case HTTP_M_DELETE:
        return "DELETE";
    case HTTP_M_OPTIONS:
        return "OPTIONS";
    case HTTP_M_PATCH:
        return "PATCH";
    default:
        return "OTHER";
    }
}

int router_each(int (*fn)(void *arg, const struct api_route *rt), void *arg)
{
    for (size_t t = 0; t < NTABLES; t++)
        for (const struct api_route *rt = route_tables[t]; rt->path; rt++) {
            int rc = fn(arg, rt);
            if (rc)
                return rc;
        }
    return 0;
}

/* Appends name to the Allow list unless already there. */
static void allow_add(char *allow, size_t len, const char *name)
{
    if (!allow || !len)
        return;
    size_t used = strlen(allow);
    /* exact-token check ("GET" must not match inside another name) */
    const char *p = allow;
    size_t nl = strlen(name);
    while ((p = strstr(p, name))) {
        bool start = p == allow || p[-1] == ' ';
        bool end = p[nl] == '\0' || p[nl] == ',';
        if (start && end)
            return;
        p += nl;
    }
    snprintf(allow + used, len - used, "%s%s", used ? ", " : "", name);
}

enum router_result router_match(enum http_method method, const char *path,
                                const struct api_route **out, char *allow, size_t allow_len)
{
    *out = NULL;
    if (allow && allow_len)
        allow[0] = '\0';
    if (!path)
        return ROUTER_NOT_FOUND;
    enum http_method want = method == HTTP_M_HEAD ? HTTP_M_GET : method;
    bool known = false;
    for (size_t t = 0; t < NTABLES; t++)
        for (const struct api_route *rt = route_tables[t]; rt->path; rt++) {
            if (strcmp(rt->path, path))
                continue;
            if (rt->method == want) {
                *out = rt;
                return ROUTER_FOUND;
            }
            known = true;
        }
    if (!known)
        return ROUTER_NOT_FOUND;
    /* second pass only on the rare 405 path: collect the methods */
    for (size_t t = 0; t < NTABLES; t++)
        for (const struct api_route *rt = route_tables[t]; rt->path; rt++) {
            if (strcmp(rt->path, path))
                continue;
            allow_add(allow, allow_len, router_method_name(rt->method));
            if (rt->method == HTTP_M_GET)
                allow_add(allow, allow_len, "HEAD");
        }
    return ROUTER_BAD_METHOD;
}
