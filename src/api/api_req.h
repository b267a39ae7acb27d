/*
 * api_req.h - life cycle of a struct api_req (api.h) for the platform
 * (app.c) and for tests that drive handlers without a server.
 *
 * The helpers handlers use (api_json, api_query, api_body_*, access
 * checks) are declared in api.h and implemented in api_req.c; this header
 * adds what only the platform calls, plus the query decoder that unit
 * tests reach directly.
 */
#ifndef GP_API_API_REQ_H
#define GP_API_API_REQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/api.h"

/* Longest decoded query parameter value (bytes). */
#define API_QUERY_MAX 4096

/* Prepares r for one request: zeroes it, links app/http/res, takes the
 * request's single "now" (now_ms, now_iso).  client_ip/country/city are
 * set to "unknown"/"Unknown"/"Unknown" until the platform fills them. */
void api_req_init(struct api_req *r, struct app *app, struct http_request *http,
                  struct http_response *res, int64_t now_ms);
/* Frees the arena and the parsed body.  r must not be used afterwards. */
void api_req_finish(struct api_req *r);

/*
 * Looks up parameter name in a raw query string (no leading '?') and
 * percent-decodes the first occurrence ('+' is a space) into out (cap
 * bytes, NUL-terminated).  Returns 1 when found (out may be ""), 0 when
 * absent, ERR_INVALID when the value has an invalid escape, a NUL, invalid
 * UTF-8, or decodes to more than API_QUERY_MAX bytes (or cap - 1).  Keys
 * are compared after decoding; a key that cannot be decoded never matches.
 */
int api_query_decode(const char *query, const char *name, char *out, size_t cap);

/* Percent-decodes s[0..n) ('+' as space when plus_space) into out (cap
 * bytes).  Returns the decoded length, or ERR_INVALID (bad escape, NUL,
 * invalid UTF-8) / ERR_TOOBIG (does not fit). */
int api_url_decode(const char *s, size_t n, bool plus_space, char *out, size_t cap);

#endif
