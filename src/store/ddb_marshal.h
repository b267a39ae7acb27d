/*
 * ddb_marshal.h - JSON values <-> DynamoDB AttributeValues, and the item
 * layout the DynamoDB driver stores.
 *
 * Strings become {"S"}, numbers {"N"} with their JavaScript text (so the
 * original system's SDK reads the same number), booleans {"BOOL"}, null
 * {"NULL":true}, arrays {"L"} and objects {"M"}.  Reading also accepts the
 * set types (SS/NS as arrays) and binary (B, kept as its base64 text).
 *
 * Items: the top-level object attributes named in DDB_CANON_ATTRS
 * ("metadata", "data") get a companion string attribute
 * "<name>Canonical" holding their canonical JSON text (API.md §3.2): a
 * DynamoDB map has no key order, and the hashes cover the order the keys
 * were received in.  Reading puts the canonical text back in place of the
 * map (when both still describe the same object) and drops the companion,
 * so a driver's items look exactly like the SQLite driver's.
 */
#ifndef GP_STORE_DDB_MARSHAL_H
#define GP_STORE_DDB_MARSHAL_H

#include <stdbool.h>

#include <cjson/cJSON.h>

/* Deepest nesting accepted when reading (hostile replies). */
#define DDB_DEPTH_MAX 64

/* Returns a new AttributeValue for v, or NULL when v is not finite or
 * allocation failed. */
cJSON *ddb_marshal_value(const cJSON *v);
/* Returns the JSON value of an AttributeValue, or NULL when it is
 * malformed or nested too deeply. */
cJSON *ddb_unmarshal_value(const cJSON *av);

/* True when a top-level attribute called name gets a canonical
 * companion (when its value is an object). */
bool ddb_canon_attr(const char *name);
/* Writes "<name>Canonical" into out (>= 64 bytes); false when too long. */
bool ddb_canon_name(const char *name, char *out, size_t cap);

/* Item -> AttributeValue map, with the canonical companions.  NULL on
 * failure. */
cJSON *ddb_marshal_item(const cJSON *item);
/* AttributeValue map -> item, companions folded back.  NULL when
 * malformed. */
cJSON *ddb_unmarshal_item(const cJSON *map);

#endif
