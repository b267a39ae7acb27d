/*
 * api_brands.h - what the brand route family (api_brands.c) shares with
 * its neighbours (threats, scans); the route table itself is declared in
 * api.h.
 */
#ifndef GP_API_API_BRANDS_H
#define GP_API_API_BRANDS_H

#include "api/api.h"

/* Reads the brand id in query parameter `name` for a BRAND route: missing
 * -> 400 {"error": missing_msg}; not the caller's brand -> 403/401
 * (api_require_brand); not a possible id (brand_id_ok) -> 400
 * {"error":"Invalid brandId"}.  Returns the id, or NULL when a response
 * has been written and the handler must return. */
const char *api_brand_param(struct api_req *r, const char *name, const char *missing_msg);

#endif
