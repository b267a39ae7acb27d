/*
 * scan.h - the scan entity's JSON shapes (API.md §9.23 rows) and the
 * location aggregation shared by /api/scans and /api/brands/scans:
 * scans grouped by (city, country), counted, ordered by count
 * (descending; ties keep first-seen order) and cut to a top N.
 */
#ifndef GP_CORE_SCAN_H
#define GP_CORE_SCAN_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/jsonw.h"

/* Writes one scan row {"timestamp","country","city","result"} of a stored
 * scan item (absent attributes -> null).  The raw ip and user agent are
 * never written. */
void scan_write_row_json(struct jsonw *w, const cJSON *item);

/* True when a scan's country counts as a known location (a non-empty
 * string other than "Unknown"). */
bool scan_country_known(const char *country);

struct scan_loc_agg;

/* A new, empty aggregation (aborts on OOM like xmalloc); free with
 * scan_loc_agg_free().  Memory grows with the number of distinct
 * locations added, so callers bound the number of scans they add. */
struct scan_loc_agg *scan_loc_agg_new(void);
void scan_loc_agg_free(struct scan_loc_agg *a);
/* Counts one scan at (country, city); either may be NULL (a NULL value
 * is a location of its own, written as null).  timestamp (may be NULL)
 * updates the group's lastScan when greater (byte-wise). */
void scan_loc_agg_add(struct scan_loc_agg *a, const char *country, const char *city,
                      const char *timestamp);
/* Same with the attributes of a stored scan item (non-string -> NULL). */
void scan_loc_agg_add_item(struct scan_loc_agg *a, const cJSON *item);
/* Number of distinct locations so far. */
size_t scan_loc_agg_len(const struct scan_loc_agg *a);
/* Writes the array of the `top` largest groups, count descending, ties in
 * first-seen order: {"country","city","count"} plus "lastScan" when
 * with_last_scan. */
void scan_loc_agg_write(struct jsonw *w, const struct scan_loc_agg *a, size_t top,
                        bool with_last_scan);

#endif
