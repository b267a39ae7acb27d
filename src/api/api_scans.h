/*
 * api_scans.h - the scans route family: GET /api/scans (API.md §9.23).
 * Its route table, api_scans_routes[], is declared with the others in
 * api.h; this header exists so the family has one include point.
 */
#ifndef GP_API_API_SCANS_H
#define GP_API_API_SCANS_H

#include "api/api.h"

#endif
