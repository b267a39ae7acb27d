/*
 * mapdata.h - the world map's data, generated into mapdata_gen.c by
 * tests/tools/gen_mapdata (make mapdata) from Natural Earth (land mask,
 * country label points; public domain), GeoNames cities (CC BY 4.0) and
 * Debian iso-codes (names and aliases).  Nothing is fetched at run time.
 */
#ifndef GP_TUI_MAPDATA_H
#define GP_TUI_MAPDATA_H

#include <stdbool.h>

/* Land at 1-degree cell: lat_i 0..179 (89.5N .. 89.5S), lon_i 0..359 (-179.5 .. 179.5). */
bool map_is_land(int lat_i, int lon_i);
/* True when lat/lon (degrees) fall on land in the 1-degree mask. */
bool map_land_at(double lat, double lon);

/*
 * Coordinates of a scan location: (1) a city of the table (catalog
 * cities and capitals; matched with or without country), (2) a country
 * by ISO alpha-2 code, alpha-3, English name or alias ("US" = "United
 * States" = "USA"), first hit wins.  "Local", "Unknown", "" and
 * unmatched labels return false (unplaced; never 0,0).
 */
bool map_lookup(const char *city, const char *country, double *lat, double *lon);
/* The English short name of an alpha-2 code, or NULL. */
const char *map_country_name(const char *alpha2);

/* Screen cell of lat/lon on a w x h map (TUI.md §4.3 projection: x =
 * (lon+180)/360*w, y = (84-lat)/144*h); false when outside (south of
 * 60S or north of 84N). */
bool map_project(double lat, double lon, int w, int h, int *x, int *y);

#endif
