/*
 * api_claims.h - consumer ownership claims and disputes (API.md
 * §9.16-§9.19).
 */
#ifndef GP_API_API_CLAIMS_H
#define GP_API_API_CLAIMS_H

#include "api/api.h"

void api_products_claim_post(struct api_req *r);
void api_products_claim_get(struct api_req *r);
void api_products_dispute_post(struct api_req *r);
void api_products_dispute_get(struct api_req *r);

#endif
