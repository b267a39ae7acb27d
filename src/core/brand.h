/*
 * brand.h - the brand entity: its stored items (API.md §2.2 E1 profile,
 * E2 counters, E3 index entry) and its JSON shapes (§9.1-§9.3).
 */
#ifndef GP_CORE_BRAND_H
#define GP_CORE_BRAND_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/jsonw.h"

/* Longest brand id accepted anywhere (ids are UUIDs; the demo's too). */
#define BRAND_ID_MAX 128

struct brand_fields {
    const char *id;         /* required (UUID v4 for new brands) */
    const char *name;       /* required */
    const char *domain;     /* required */
    const char *industry;   /* required */
    const char *logo_url;   /* NULL or "" -> null */
    const char *plan;       /* NULL -> "free" */
    const char *created_at; /* required, canonical ISO */
};

/* Live counters of a brand (E2 STATS, plus pending deltas). */
struct brand_counters {
    double product_count;
    double scan_count;
    double threat_count;
};

/* True when id can name a brand: 1..BRAND_ID_MAX bytes, no '#', no
 * control characters (so it can never address another key family). */
bool brand_id_ok(const char *id);

/* E1 BRAND#<id>/PROFILE (GSI1 BRAND#<id>/PROFILE): id, name, domain,
 * industry, logoUrl, plan, createdAt, productCount 0, scanCount 0.
 * E2 BRAND#<id>/STATS: productCount, scanCount, threatCount (all 0).
 * E3 BRAND_INDEX/BRAND#<createdAt>#<id>: brandId, name, domain, industry,
 * plan, createdAt.
 * Each returns a new item owned by the caller, or NULL when a required
 * field is missing or invalid (brand_id_ok, ISO createdAt). */
cJSON *brand_profile_item_new(const struct brand_fields *f);
cJSON *brand_stats_item_new(const char *brand_id);
cJSON *brand_index_item_new(const struct brand_fields *f);

/* Reads the counters of an E2 item (NULL or absent attributes -> 0). */
void brand_counters_from_stats(const cJSON *stats, struct brand_counters *c);

/* Writes the members "id","name","domain","industry","plan","createdAt"
 * of a profile item into an object the caller has opened (§9.1; the
 * caller may add "apiKey" after them). */
void brand_write_created_members(struct jsonw *w, const cJSON *profile);
/* Writes §9.2's object: every stored attribute of the profile except the
 * key attributes PK/SK/GSI1PK/GSI1SK (D04), with productCount, scanCount
 * and threatCount taken from c (in place when stored, else appended). */
void brand_write_profile_json(struct jsonw *w, const cJSON *profile,
                              const struct brand_counters *c);
/* Writes one /api/brands/list entry of an E3 item: {"id","name","domain",
 * "industry","plan","createdAt"} (id from id or brandId, plan "free" when
 * absent). */
void brand_write_index_entry_json(struct jsonw *w, const cJSON *entry);
/* Writes {"productCount","scanCount","threatCount"}. */
void brand_write_counters_json(struct jsonw *w, const struct brand_counters *c);

#endif
