/*
 * mapdata_gen.h - the tables that tests/tools/gen_mapdata.js writes into
 * mapdata_gen.c (make mapdata): the 1-degree land mask, the countries with
 * their label points, the cities, and the sorted lookup keys.  Only
 * mapdata.c reads them; everyone else uses mapdata.h.
 *
 * Keys are spellings normalised as map_norm() does (ASCII lowercase, '.'
 * and '\'' dropped, runs of blanks and ',' as one space, trimmed), sorted
 * bytewise (strcmp order) for bsearch; several keys may name one entry.
 */
#ifndef GP_TUI_MAPDATA_GEN_H
#define GP_TUI_MAPDATA_GEN_H

#define MAPDATA_LAND_BYTES (180 * 360 / 8)

struct mapdata_country {
    const char *a2, *a3;
    const char *name; /* English (common) name */
    float lat, lon;   /* label point: centroid of the largest polygon */
    int has_point;    /* 0: no Natural Earth polygon (never placed) */
};

struct mapdata_city {
    const char *name;   /* as the catalog or the capital list writes it */
    const char *cc;     /* alpha-2 */
    const char *admin1; /* GeoNames admin1 code (US state "TN"), or "" */
    float lat, lon;
};

struct mapdata_key {
    const char *key; /* normalised spelling */
    unsigned idx;    /* index into the countries or cities */
};

extern const unsigned char mapdata_land[MAPDATA_LAND_BYTES];
extern const struct mapdata_country mapdata_countries[];
extern const unsigned mapdata_n_countries;
extern const struct mapdata_key mapdata_country_keys[];
extern const unsigned mapdata_n_country_keys;
extern const struct mapdata_city mapdata_cities[];
extern const unsigned mapdata_n_cities;
extern const struct mapdata_key mapdata_city_keys[];
extern const unsigned mapdata_n_city_keys;

#endif
