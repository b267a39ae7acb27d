/*
 * api_catalog.c - the static catalog routes (API.md §9.38-§9.40), served
 * from the compiled-in catalog (core/catalog_data.h).
 *
 *   GET /api/catalog/actors?type=            PUBLIC  one group, or all four
 *   GET /api/catalog/categories              PUBLIC  the 14 categories
 *   GET /api/catalog/locations?type=&region= PUBLIC  one group, or all three;
 *                                                    region filters every list
 *
 * [D38]: a group is chosen only by an exact match on one of the catalog's
 * own group names; any other value of `type` (inherited JavaScript names
 * such as "constructor" included) falls back to the "all" answer, as an
 * unknown name did in the original.  A `region` that matches nothing just
 * gives empty lists.
 */
#include "api/api_catalog.h"

#include <string.h>

#include "core/catalog_data.h"

/* Writes the entries of g (those of region when region is not NULL) as a
 * JSON array; returns how many were written. */
static size_t write_group(struct jsonw *w, const struct catalog_group *g, const char *region)
{
    size_t n = 0;
    jsonw_arr(w);
    for (size_t i = 0; i < g->count; i++) {
        const struct catalog_entry *e = &g->entries[i];
        if (region && (!e->region || strcmp(e->region, region)))
            continue;
        jsonw_raw(w, e->json, strlen(e->json));
        n++;
    }
    jsonw_end(w);
    return n;
}

/* Counts the entries of g (of region when not NULL). */
static size_t count_group(const struct catalog_group *g, const char *region)
{
    size_t n = 0;
    for (size_t i = 0; i < g->count; i++)
        if (!region || (g->entries[i].region && !strcmp(g->entries[i].region, region)))
            n++;
    return n;
}

/* The shared shape of actors and locations: {"type","<list>":[…],"count"}
 * for a known type, else {"<list>":{group:[…]},"count":{group:n,"total":n}}. */
static void grouped(struct api_req *r, const char *list_key, const struct catalog_group *groups,
                    size_t ngroups, const char *region)
{
    const char *type = api_query(r, "type");
    if (!api_query_ok(r))
        return;
    const struct catalog_group *g = catalog_group_find(groups, ngroups, type);
    struct jsonw *w = api_json(r, 200);
    jsonw_obj(w);
    if (g) {
        jsonw_kstr(w, "type", g->name);
        jsonw_key(w, list_key);
        size_t n = write_group(w, g, region);
        jsonw_kint(w, "count", (int64_t)n);
        jsonw_end(w);
        return;
    }
    size_t total = 0;
    jsonw_key(w, list_key);
    jsonw_obj(w);
    for (size_t i = 0; i < ngroups; i++) {
        jsonw_key(w, groups[i].name);
        write_group(w, &groups[i], region);
    }
    jsonw_end(w);
    jsonw_key(w, "count");
    jsonw_obj(w);
    for (size_t i = 0; i < ngroups; i++) {
        size_t n = count_group(&groups[i], region);
        jsonw_kint(w, groups[i].name, (int64_t)n);
        total += n;
    }
    jsonw_kint(w, "total", (int64_t)total);
    jsonw_end(w);
    jsonw_end(w);
}

static void catalog_actors(struct api_req *r)
{
    grouped(r, "actors", catalog_actors_groups, CATALOG_ACTOR_GROUPS, NULL);
}

static void catalog_locations(struct api_req *r)
{
    const char *region = api_query(r, "region");
    grouped(r, "locations", catalog_locations_groups, CATALOG_LOCATION_GROUPS, region);
}

static void catalog_categories_get(struct api_req *r)
{
    struct jsonw *w = api_json(r, 200);
    jsonw_obj(w);
    jsonw_key(w, "categories");
    jsonw_arr(w);
    for (size_t i = 0; i < catalog_ncategories; i++)
        jsonw_raw(w, catalog_categories[i].json, strlen(catalog_categories[i].json));
    jsonw_end(w);
    jsonw_kint(w, "count", (int64_t)catalog_ncategories);
    jsonw_end(w);
}

const struct api_route api_catalog_routes[] = {
    {HTTP_M_GET, "/api/catalog/actors", API_PUBLIC, catalog_actors},
    {HTTP_M_GET, "/api/catalog/categories", API_PUBLIC, catalog_categories_get},
    {HTTP_M_GET, "/api/catalog/locations", API_PUBLIC, catalog_locations},
    {0},
};
