/*
 * item_json.h - turns a stored item body back into a cJSON tree, fast.
 *
 * Bodies are written by canon_write (compact JSON, no whitespace), and
 * reading them is the hot path of every get and query.  item_json_parse()
 * handles that form with fewer passes than cJSON_Parse (no literal probing,
 * integers without strtod) and falls back to cJSON_ParseWithLength for
 * anything it does not expect, so the result is always what cJSON would
 * have produced.  Nodes are allocated with cJSON_malloc and the tree is an
 * ordinary cJSON tree: free it with cJSON_Delete.
 */
#ifndef GP_STORE_ITEM_JSON_H
#define GP_STORE_ITEM_JSON_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* Parses text[0..len).  Returns the tree, or NULL when the text is not
 * JSON (or nests deeper than CJSON_NESTING_LIMIT). */
cJSON *item_json_parse(const char *text, size_t len);
/* Like item_json_parse, but the object keeps only PK, SK and the n
 * top-level attributes named in attrs (a ProjectionExpression); the other
 * members are skipped without being built.  NULL when the text is not a
 * JSON object. */
cJSON *item_json_project(const char *text, size_t len, const char *const *attrs, size_t n);
/* Finds the top-level string attribute attr of the object text[0..len)
 * without building a tree.  Returns 1 with *val and *vlen set when it is a
 * string (the unescaped text: *val points into text, or, for a value
 * with escapes, into *scratch, a cJSON_malloc'd copy the caller frees
 * with cJSON_free; *scratch is NULL otherwise), 0 when the object has no
 * such attribute or it is not a string, -1 when text is not a JSON
 * object.  Agrees with item_json_project's result for well-formed text;
 * the members after the first one named attr are not checked. */
int item_json_attr_str(const char *text, size_t len, const char *attr, const char **val,
                       size_t *vlen, char **scratch);

#endif
