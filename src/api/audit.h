/*
 * audit.h - the audit trail: one item per security-relevant write, in
 * daily partitions AUDIT#<YYYY-MM-DD> with sort key <timestamp>#<id>
 * (core/keys.h key_audit_pk / key_audit_sk).
 *
 * Item attributes: action (e.g. "brand.created"), actor ("admin",
 * "brand:<brandId>", "ingest:<brandId>", "anonymous"), actorKind
 * ("admin" | "brand" | "ingest" | "anonymous"), brandId, productId,
 * details (string or null), timestamp (ISO), ip.  Credentials never
 * appear.  api_audit() (api.h) is the handler-facing entry point.
 */
#ifndef GP_API_AUDIT_H
#define GP_API_AUDIT_H

#include <cjson/cJSON.h>

#include "api/api.h"

struct store;

/* Longest details text kept (longer is cut at a UTF-8 boundary). */
#define AUDIT_DETAILS_MAX 1024

/* Builds the audit item (caller frees).  NULL when a key cannot be built
 * (timestamp not ISO, action missing). */
cJSON *audit_item_new(const struct api_principal *who, const char *timestamp, const char *ip,
                      const char *action, const char *brand_id, const char *product_id,
                      const char *details);
/* Builds and writes (conditional on the key being new) the item. */
int audit_write(struct store *s, const struct api_principal *who, const char *timestamp,
                const char *ip, const char *action, const char *brand_id, const char *product_id,
                const char *details);

#endif
