/*
 * api_health.h - platform probes: GET /api/health (API.md §9.44),
 * GET /api/ready and GET /metrics.  The route table api_health_routes[]
 * is declared in api.h.
 */
#ifndef GP_API_API_HEALTH_H
#define GP_API_API_HEALTH_H

#include "api/api.h"

#define HEALTH_VERSION "1.0.0"
/* The counts /api/health reports ([D43]: the real numbers). */
#define HEALTH_ENDPOINTS 47
#define HEALTH_PAGES     15

#endif
