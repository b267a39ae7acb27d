/*
 * api_verify.h - GET /api/products/verify (API.md §5, §9.8).
 */
#ifndef GP_API_API_VERIFY_H
#define GP_API_API_VERIFY_H

#include "api/api.h"

/* Scans of the last 24 h a walk of a product's scans reads at most (its
 * newest): the work of one verify never grows with the product's scan
 * history. */
#define VERIFY_GEO_LIMIT 200
/* Stream records the in-process detector may be behind for verify to use
 * its per-product window state instead of querying the scans. */
#define VERIFY_STATE_MAX_LAG 5000

void api_products_verify(struct api_req *r);

#endif
