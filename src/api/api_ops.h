/*
 * api_ops.h - the ops route family: GET /api/ops-log (§9.25).
 * Its route table, api_ops_routes[], is declared with the others in
 * api.h; this header exists so the family has one include point.
 */
#ifndef GP_API_API_OPS_H
#define GP_API_API_OPS_H

#include "api/api.h"

#endif
