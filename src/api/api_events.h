/*
 * api_events.h - the provenance routes of the products family (API.md
 * §9.11-§9.15): events GET/POST, history, transfer, recall.
 */
#ifndef GP_API_API_EVENTS_H
#define GP_API_API_EVENTS_H

#include "api/api.h"

void api_products_events_get(struct api_req *r);
void api_products_events_post(struct api_req *r);
void api_products_history(struct api_req *r);
void api_products_transfer(struct api_req *r);
void api_products_recall(struct api_req *r);

#endif
