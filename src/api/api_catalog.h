/*
 * api_catalog.h - the static catalog routes (API.md §9.38-§9.40):
 * GET /api/catalog/actors, /api/catalog/categories, /api/catalog/locations.
 * Its route table, api_catalog_routes[], is declared with the others in
 * api.h; this header is the family's include point.
 */
#ifndef GP_API_API_CATALOG_H
#define GP_API_API_CATALOG_H

#include "api/api.h"

#endif
