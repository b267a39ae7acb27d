/*
 * geo_countries.h - ISO 3166-1 country tables generated into
 * geo_countries.c by tests/tools/gen_geo_countries.py (Debian iso-codes).
 *
 * geo_countries: every alpha-2 code with a short English name, sorted by
 * code.  geo_names: every accepted spelling (ISO/common/official names,
 * alpha-2/alpha-3 codes, accent-free forms, common aliases such as "USA",
 * "UK", "Russia", "South Korea"), normalised by geo_norm() (geo.h) and
 * sorted byte-wise, each mapped to its alpha-2 code.
 */
#ifndef GP_API_GEO_COUNTRIES_H
#define GP_API_GEO_COUNTRIES_H

#include <stddef.h>

struct geo_country {
    const char *code; /* "US" */
    const char *name; /* "United States" */
};

struct geo_name {
    const char *name; /* normalised spelling, "united states of america" */
    const char *code; /* "US" */
};

extern const struct geo_country geo_countries[];
extern const size_t geo_countries_len;
extern const struct geo_name geo_names[];
extern const size_t geo_names_len;

#endif
