/*
 * api_ingest.h - the partner webhook routes (API.md §9.30-§9.32); the
 * route table api_ingest_routes[] is declared in api.h.
 */
#ifndef GP_API_API_INGEST_H
#define GP_API_API_INGEST_H

#include "api/api.h"

#endif
