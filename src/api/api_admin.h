/*
 * api_admin.h - the operator route family: GET /api/admin/dlq and
 * POST /api/admin/dlq/replay (the detector's dead letters, ADMIN only).
 * Its route table, api_admin_routes[], is declared with the others in
 * api.h; this header is the family's include point.
 */
#ifndef GP_API_API_ADMIN_H
#define GP_API_API_ADMIN_H

#include "api/api.h"

#endif
