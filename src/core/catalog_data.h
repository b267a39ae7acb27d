/*
 * catalog_data.h - the static catalog of API.md §10 (categories, actors,
 * locations, journeys, plans), compiled in from data/catalog.json by
 * tests/tools/gen_catalog.py (the generated catalog_data.c is committed;
 * nothing reads data/ at run time).
 *
 * Every catalog object is kept as the compact JSON text the API returns
 * (keys in the file's order), so handlers copy it out with jsonw_raw();
 * the few fields handlers filter or look up by are kept beside it.  All
 * tables are constant.
 */
#ifndef GP_CORE_CATALOG_DATA_H
#define GP_CORE_CATALOG_DATA_H

#include <stddef.h>

/* One catalog object: its JSON text, and its "region" (locations only,
 * else NULL). */
struct catalog_entry {
    const char *region;
    const char *json;
};

/* A named list of objects ("carriers", "manufacturing", ...). */
struct catalog_group {
    const char *name;
    const struct catalog_entry *entries;
    size_t count;
};

#define CATALOG_ACTOR_GROUPS    4 /* carriers, warehouses, inspection, retailers */
#define CATALOG_LOCATION_GROUPS 3 /* manufacturing, distribution, retail */
extern const struct catalog_group catalog_actors_groups[CATALOG_ACTOR_GROUPS];
extern const struct catalog_group catalog_locations_groups[CATALOG_LOCATION_GROUPS];

/* A product category {id, label, industries[]}. */
struct catalog_category {
    const char *id;    /* "watches" */
    const char *label; /* "Watches" */
    const char *json;  /* the whole object */
};
extern const struct catalog_category catalog_categories[];
extern const size_t catalog_ncategories;

/* A pricing plan (amount in US cents; interval NULL for a free plan;
 * price_id_env names the environment variable holding a Stripe price id,
 * NULL when the plan has none). */
struct catalog_plan {
    const char *id, *name;
    long amount;
    const char *currency, *interval, *products;
    const char *const *features;
    size_t nfeatures;
    const char *price_id_env;
};
extern const struct catalog_plan catalog_plans[];
extern const size_t catalog_nplans;

/* The journey templates as one JSON array text, stages with their
 * "simulation" objects (strip them for GET /api/integrations/journeys). */
extern const char catalog_journeys_json[];

/* The category whose id or label equals id_or_label ignoring ASCII case
 * ([D40]: "watches" and "Watches" both match); NULL when none. */
const struct catalog_category *catalog_category_find(const char *id_or_label);
/* The plan with exactly this id (a whitelist, [D38]); NULL when none. */
const struct catalog_plan *catalog_plan_find(const char *id);
/* The group called exactly name among groups[0..n); NULL when none. */
const struct catalog_group *catalog_group_find(const struct catalog_group *groups, size_t n,
                                               const char *name);

#endif
