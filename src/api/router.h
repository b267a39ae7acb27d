/*
 * router.h - maps (method, path) to a route of the resource-family tables
 * declared in api.h.  Paths match exactly (no patterns); HEAD is served by
 * a GET route.
 */
#ifndef GP_API_ROUTER_H
#define GP_API_ROUTER_H

#include <stddef.h>

#include "api/api.h"

enum router_result {
    ROUTER_FOUND = 0,
    ROUTER_NOT_FOUND, /* no route has this path -> 404 */
    ROUTER_BAD_METHOD /* path known, method not -> 405 with Allow */
};

/*
 * Looks up method + path (the raw path, without the query string).  On
 * ROUTER_FOUND *out is the route (for HEAD: the GET route).  On
 * ROUTER_BAD_METHOD allow (allow_len bytes) receives the comma-separated
 * methods of that path, e.g. "GET, HEAD, POST".  *out is NULL otherwise.
 */
enum router_result router_match(enum http_method method, const char *path,
                                const struct api_route **out, char *allow, size_t allow_len);

/* Calls fn for every route of every table (metrics pre-registration,
 * docs).  Stops early when fn returns non-zero and returns that value. */
int router_each(int (*fn)(void *arg, const struct api_route *rt), void *arg);

/* Name of a method for logs and the Allow header ("GET", ...). */
const char *router_method_name(enum http_method m);

#endif
