/*
 * api_stream.h - GET /api/stream (API.md §8, §9.26): the Server-Sent
 * Events threat feed.  Its route table, api_stream_routes[], is declared
 * with the others in api.h; the subscribers live in the SSE hub
 * (sse_hub.h), which serve creates and hands to the app
 * (app_set_sse_hub).
 */
#ifndef GP_API_API_STREAM_H
#define GP_API_API_STREAM_H

#include <stdbool.h>
#include <stdint.h>

#include "api/api.h"

/* Parses a Last-Event-ID value: 1 to 20 decimal digits that fit in 64
 * bits (surrounding blanks allowed).  Returns true and sets *id, or false
 * for anything else (the client then starts without a backlog). */
bool api_stream_parse_id(const char *s, uint64_t *id);

#endif
