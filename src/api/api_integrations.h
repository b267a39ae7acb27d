/*
 * api_integrations.h - the integration routes (API.md §9.33-§9.37); the
 * route table api_integrations_routes[] is declared in api.h.
 */
#ifndef GP_API_API_INTEGRATIONS_H
#define GP_API_API_INTEGRATIONS_H

#include "api/api.h"

/* Bounds of the sourceBreakdown count of GET /api/integrations/status:
 * the brand's newest STATUS_PRODUCTS_MAX products and, in all, at most
 * STATUS_EVENTS_MAX of their events. */
#define STATUS_PRODUCTS_MAX 500
#define STATUS_EVENTS_MAX   20000

#endif
