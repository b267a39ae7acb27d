/*
 * api_threats.h - the threats route family: GET /api/threats and POST /api/threats/resolve (§9.24,
 * D26). Its route table, api_threats_routes[], is declared with the others in api.h; this header
 * exists so the family has one include point.
 */
#ifndef GP_API_API_THREATS_H
#define GP_API_API_THREATS_H

#include "api/api.h"

#endif
