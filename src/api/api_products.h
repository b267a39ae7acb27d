/*
 * api_products.h - helpers shared by the product route files
 * (api_products.c: register, batch, list, search and the route table;
 * api_verify.c; api_events.c; api_claims.c).
 */
#ifndef GP_API_API_PRODUCTS_H
#define GP_API_API_PRODUCTS_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "api/api.h"
#include "store/store.h"

/* Most characters of a User-Agent stored with a scan/claim. */
#define PROD_UA_MAX 512

/*
 * Reads PRODUCT#<id>/META (strongly consistent).  An id that cannot name a
 * product (pd_id_ok) counts as absent.  On success returns 0 and *out is
 * the item (caller frees); ERR_NOTFOUND when absent; another negative
 * ERR_* from the store.
 */
int prod_get(struct api_req *r, const char *product_id, cJSON **out);

/* The request's User-Agent header, or "unknown" (for fingerprints). */
const char *prod_user_agent(struct api_req *r);
/* The same, cut to PROD_UA_MAX bytes with anything but printable ASCII
 * replaced by '?', in the request arena (for stored items). */
const char *prod_user_agent_stored(struct api_req *r);

/* Answers {"<flag>":false,"error":msg} with status (verify's
 * authentic:false and search's found:false errors). */
void prod_error_flag(struct api_req *r, int status, const char *flag, const char *msg);

/*
 * Status change writes of transfer/recall, for chain_append()'s extras:
 * an UPDATE of the product (SET status, updatedAt; condition: status is
 * still what we read) and, when the index entry E13 exists, the same SET
 * on it ([D24]).  values[] must hold 2 slots the caller frees with
 * cJSON_Delete after the transaction; acts[] 2 slots.  Returns the number
 * of writes added to w (1 or 2), or a negative ERR_* from the store.
 */
int prod_status_writes(struct api_req *r, const cJSON *product, const char *status,
                       struct store_write *w, struct store_action acts[2], cJSON *values[4]);

#endif
