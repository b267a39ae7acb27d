/*
 * mapdata.c - lookups over the generated world map tables (mapdata_gen.c):
 * the 1-degree land mask, scan locations to coordinates (city table
 * first, then the country by code, name or alias), and the equirectangular
 * projection of the Map view (TUI.md §4.3).  Labels come from the network
 * and are treated as hostile: they are normalised into a bounded buffer
 * and anything too long or unknown is simply unplaced.
 */
#include "tui/mapdata.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tui/mapdata_gen.h"

#define MAP_KEY_MAX 128 /* longest normalised label looked up */

bool map_is_land(int lat_i, int lon_i)
{
    if (lat_i < 0 || lat_i >= 180 || lon_i < 0 || lon_i >= 360)
        return false;
    unsigned bit = (unsigned)lat_i * 360u + (unsigned)lon_i;
    return (mapdata_land[bit >> 3] >> (bit & 7u)) & 1u;
}

bool map_land_at(double lat, double lon)
{
    if (!isfinite(lat) || !isfinite(lon) || lat > 90.0 || lat < -90.0)
        return false;
    int lat_i = (int)floor(90.0 - lat);
    if (lat_i > 179)
        lat_i = 179;
    double l = fmod(lon + 180.0, 360.0);
    if (l < 0)
        l += 360.0;
    int lon_i = (int)floor(l);
    if (lon_i > 359)
        lon_i = 359;
    return map_is_land(lat_i, lon_i);
}

/*
 * Normalises a label the way the generator normalised the keys: ASCII
 * lowercase, '.' and '\'' dropped, runs of blanks and ',' as one space,
 * no leading or trailing space; other bytes kept.  On success returns the
 * length written to out (NUL-terminated); returns -1 when s is NULL or
 * the result does not fit.
 */
static int map_norm(const char *s, char *out, size_t outlen)
{
    size_t n = 0;
    bool space = false;
    if (!s || outlen == 0)
        return -1;
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '.' || ch == '\'')
            continue;
        if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == ',' || ch == '\v' ||
            ch == '\f') {
            space = n > 0;
            continue;
        }
        if (n + (space ? 2 : 1) >= outlen)
            return -1;
        if (space) {
            out[n++] = ' ';
            space = false;
        }
        out[n++] = (char)(ch >= 'A' && ch <= 'Z' ? ch + ('a' - 'A') : ch);
    }
    out[n] = '\0';
    return (int)n;
}

static int key_cmp(const void *k, const void *e)
{
    return strcmp((const char *)k, ((const struct mapdata_key *)e)->key);
}

/* Index of the first key equal to k in a sorted key table, or -1. */
static long keys_first(const struct mapdata_key *tab, unsigned n, const char *k)
{
    const struct mapdata_key *hit = bsearch(k, tab, n, sizeof *tab, key_cmp);
    if (!hit)
        return -1;
    while (hit > tab && strcmp(hit[-1].key, k) == 0)
        hit--;
    return hit - tab;
}

/* Country index of a normalised label, or -1. */
static long country_find(const char *k)
{
    long i = keys_first(mapdata_country_keys, mapdata_n_country_keys, k);
    return i < 0 ? -1 : (long)mapdata_country_keys[i].idx;
}

/* Labels that mean "no place": empty, Unknown, Local. */
static bool label_void(const char *k)
{
    return !k[0] || !strcmp(k, "unknown") || !strcmp(k, "local");
}

/* ASCII lowercase copy of a short code, for comparing admin1 codes. */
static bool code_eq(const char *code, const char *k)
{
    size_t i;
    for (i = 0; code[i] && k[i]; i++) {
        char a = code[i];
        if (a >= 'A' && a <= 'Z')
            a = (char)(a + ('a' - 'A'));
        if (a != k[i])
            return false;
    }
    return !code[i] && !k[i];
}

bool map_lookup(const char *city, const char *country, double *lat, double *lon)
{
    char ck[MAP_KEY_MAX], nk[MAP_KEY_MAX];
    bool have_city = city && map_norm(city, ck, sizeof ck) >= 0 && !label_void(ck);
    bool have_country = country && map_norm(country, nk, sizeof nk) >= 0 && !label_void(nk);
    long ci = have_country ? country_find(nk) : -1;
    const struct mapdata_city *hit = NULL;

    if (have_city) {
        long first = keys_first(mapdata_city_keys, mapdata_n_city_keys, ck);
        if (first >= 0) {
            /* (1) city with its country (or its US state code) */
            for (unsigned i = (unsigned)first;
                 have_country && i < mapdata_n_city_keys && !strcmp(mapdata_city_keys[i].key, ck);
                 i++) {
                const struct mapdata_city *c = &mapdata_cities[mapdata_city_keys[i].idx];
                if ((ci >= 0 && !strcmp(c->cc, mapdata_countries[ci].a2)) ||
                    (c->admin1[0] && code_eq(c->admin1, nk))) {
                    hit = c;
                    break;
                }
            }
            /* (2) the city alone: the first entry (catalog before capitals) */
            if (!hit)
                hit = &mapdata_cities[mapdata_city_keys[first].idx];
        }
    }
    if (hit) {
        *lat = hit->lat;
        *lon = hit->lon;
        return true;
    }
    /* (3) the country's label point */
    if (ci >= 0 && mapdata_countries[ci].has_point) {
        *lat = mapdata_countries[ci].lat;
        *lon = mapdata_countries[ci].lon;
        return true;
    }
    return false;
}

const char *map_country_name(const char *alpha2)
{
    char k[3];
    if (!alpha2 || !alpha2[0] || !alpha2[1] || alpha2[2])
        return NULL;
    for (int i = 0; i < 2; i++) {
        char ch = alpha2[i];
        k[i] = (char)(ch >= 'a' && ch <= 'z' ? ch - ('a' - 'A') : ch);
    }
    k[2] = '\0';
    size_t lo = 0, hi = mapdata_n_countries;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(k, mapdata_countries[mid].a2);
        if (c == 0)
            return mapdata_countries[mid].name;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

bool map_project(double lat, double lon, int w, int h, int *x, int *y)
{
    if (w <= 0 || h <= 0 || !isfinite(lat) || !isfinite(lon) || lat > 84.0 || lat < -60.0 ||
        lon < -180.0 || lon > 180.0)
        return false;
    int cx = (int)floor((lon + 180.0) / 360.0 * w);
    int cy = (int)floor((84.0 - lat) / 144.0 * h);
    /* the right and bottom edges (180E, 60S) belong to the last cell */
    *x = cx >= w ? w - 1 : cx;
    *y = cy >= h ? h - 1 : cy;
    return true;
}
