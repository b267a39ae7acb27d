/*
 * api_exports.h - the download and image route family (API.md §9.20,
 * §9.21, §9.22, §9.45): the product certificate, the QR code, the EU
 * Digital Product Passport export and the Open Graph card.  Its route
 * table, api_exports_routes[], is declared with the others in api.h;
 * this header exists so the family has one include point.
 */
#ifndef GP_API_API_EXPORTS_H
#define GP_API_API_EXPORTS_H

#include "api/api.h"

/* Longest verification code the QR/certificate/DPP routes look up (a
 * generated one has 12 characters; longer input cannot be a code). */
#define EXPORTS_CODE_MAX 128

#endif
