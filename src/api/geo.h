/*
 * geo.h - who is calling and from where: the client IP rule, trusted
 * proxies, country/city from proxy headers or a MaxMind database, and
 * country names mapped to ISO 3166-1 alpha-2.
 *
 * One rule for every endpoint (API.md §3.8 Reimpl, [D03]/[D47]): the
 * client IP is the socket peer, unless the peer is a trusted proxy; then
 * it is the first X-Forwarded-For entry (trimmed, when it is a valid IP).
 * Geo headers are believed from trusted proxies only, in this order:
 * CF-IPCountry; X-Vercel-IP-Country + X-Vercel-IP-City (URL-decoded);
 * X-Country + X-City.  Values "XX", "T1" and "" are ignored.  Otherwise
 * the optional --geoip database is asked; otherwise "Unknown"/"Unknown".
 */
#ifndef GP_API_GEO_H
#define GP_API_GEO_H

#include <stdbool.h>
#include <stddef.h>

#include "http/http.h"

#define GEO_UNKNOWN     "Unknown"
#define GEO_PROXIES_MAX 64

/* ---- trusted proxies ---- */

struct geo_proxies;

/* Parses a comma-separated list of addresses and CIDRs ("127.0.0.0/8,
 * ::1, 10.0.0.0/8"); "" or "none" gives an empty list.  NULL on error
 * (message in err). */
struct geo_proxies *geo_proxies_parse(const char *list, char *err, size_t errlen);
void geo_proxies_free(struct geo_proxies *p);
/* True when ip (text) is inside one of the ranges.  IPv4-mapped IPv6
 * addresses match IPv4 ranges. */
bool geo_proxies_match(const struct geo_proxies *p, const char *ip);

/* ---- country names ---- */

/* Normalises a country spelling for lookup: ASCII lowercase, '.' ',' '\''
 * '(' ')' dropped, runs of '-', '_' and spaces become one space, trimmed.
 * Returns the length written (out is always NUL-terminated). */
size_t geo_norm(const char *in, char *out, size_t n);
/* ISO alpha-2 code for a name or code ("United States", "USA", "us",
 * "Russia"), or NULL when unknown. */
const char *geo_country_code(const char *name);
/* Short English name of an alpha-2 code, or NULL. */
const char *geo_country_name(const char *code);

/* ---- sources ---- */

/* Fills country/city from the proxy headers of req.  Returns false when
 * no header source has a usable value (outputs untouched).  A source that
 * is present but names an unknown country gives "Unknown". */
bool geo_from_headers(const struct http_request *req, char *country, size_t cn, char *city,
                      size_t citn);

struct geo_db;
/* Opens a MaxMind .mmdb file (libmaxminddb).  NULL on error. */
struct geo_db *geo_db_open(const char *path, char *err, size_t errlen);
void geo_db_close(struct geo_db *db);
/* Looks ip up; false when not found (outputs untouched).  city may come
 * back "Unknown" when the database has only countries. */
bool geo_db_lookup(struct geo_db *db, const char *ip, char *country, size_t cn, char *city,
                   size_t citn);

/* The client IP alone: the socket peer, or the first X-Forwarded-For
 * entry when the peer is trusted and the entry is a valid address. */
void geo_client_ip(const struct geo_proxies *proxies, const struct http_request *req, char *ip,
                   size_t ipn);

/*
 * The whole rule: fills ip (socket peer or forwarded client), country and
 * city for req.  proxies and db may be NULL.
 */
void geo_resolve(const struct geo_proxies *proxies, struct geo_db *db,
                 const struct http_request *req, char *ip, size_t ipn, char *country, size_t cn,
                 char *city, size_t citn);

#endif
