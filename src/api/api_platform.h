/*
 * api_platform.h - the platform routes (API.md §9.41-§9.43):
 * GET /api/analytics, GET /api/audit, GET /api/explore.  Its route table,
 * api_platform_routes[], is declared with the others in api.h; this header
 * is the family's include point.
 */
#ifndef GP_API_API_PLATFORM_H
#define GP_API_API_PLATFORM_H

#include "api/api.h"

#endif
