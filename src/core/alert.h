/*
 * alert.h - the threat alert entity: its stored item (API.md §6.4 single
 * format, monthly-bucketed keys from core/keys.h) and its JSON shape (the
 * same object for /api/threats rows and SSE `threat` data).
 */
#ifndef GP_CORE_ALERT_H
#define GP_CORE_ALERT_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/jsonw.h"
#include "store/store.h"

struct alert_fields {
    const char *alert_id;   /* NULL: a new unique id is generated */
    const char *brand_id;   /* required */
    const char *type;       /* required, open set (API.md §6.1) */
    const char *severity;   /* low | medium | high | critical */
    const char *product_id; /* may be NULL */
    const char *details;
    const char *timestamp;    /* ISO: the triggering record's time */
    const char *write_time;   /* ISO: when written (GSI1SK); NULL = timestamp */
    const char *source;       /* "api" | "detector" | ... */
    const char *country;      /* may be NULL -> "Unknown" */
    const char *city;         /* may be NULL -> "Unknown" */
    const cJSON *ai_analysis; /* may be NULL -> null (copied) */
    const char *const *flags; /* anomalyFlags; may be NULL */
    size_t nflags;
    double count;          /* 0 -> 1 */
    const char *last_seen; /* NULL -> timestamp */
};

/* Builds the item (PK/SK/GSI1PK/GSI1SK + attributes, in the order of
 * alert_write_json).  Required: brand_id, type, severity and timestamp
 * (canonical ISO, as is write_time when given).  The caller owns the
 * result (cJSON_Delete).  NULL when a required field is missing, a time
 * is not canonical ISO or a key would be too long. */
cJSON *alert_item_new(const struct alert_fields *f);
/* Writes the alert object of API.md §6.4 from a stored item (no key
 * attributes; missing fields as null / defaults; `source` "api" when
 * absent). */
void alert_write_json(struct jsonw *w, const cJSON *item);

/* The change-stream records of alert writes (INSERT or MODIFY of
 * THREAT#.../ALERT#...), for readers that only want those
 * (store_stream_read_filtered). */
extern const struct stream_filter alert_stream_filter;

#endif
