/*
 * api_stripe.h - the pricing and checkout routes (API.md §9.46-§9.47):
 * GET and POST /api/stripe/checkout.  Its route table, api_stripe_routes[],
 * is declared with the others in api.h; this header is the family's
 * include point.
 */
#ifndef GP_API_API_STRIPE_H
#define GP_API_API_STRIPE_H

#include "api/api.h"

/* Default Stripe API origin; STRIPE_API_BASE overrides it (tests point it
 * at a local fake). */
#define STRIPE_API_BASE_DEFAULT "https://api.stripe.com"

#endif
