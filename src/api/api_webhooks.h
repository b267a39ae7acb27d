/*
 * api_webhooks.h - the webhook route family: POST/GET/DELETE /api/webhooks
 * and GET /api/webhooks/deliveries (§9.27-§9.29).  Its route table,
 * api_webhooks_routes[], is declared with the others in api.h; this
 * header exists so the family has one include point.
 */
#ifndef GP_API_API_WEBHOOKS_H
#define GP_API_API_WEBHOOKS_H

#include "api/api.h"

#endif
