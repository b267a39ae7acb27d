/*
 * api.h - the application behind the HTTP server: shared context, the
 * route table entry, and the helpers every handler uses.
 *
 * A handler is thin: it reads parameters through api_query*() / the
 * api_body*() helpers (which answer 400 themselves on wrong types),
 * checks access with api_require_brand(), calls the store and the domain
 * modules, and writes its JSON with the writer from api_json().  It never
 * formats keys itself (core/keys.h) and never commits: all store writes
 * of a loop iteration are committed together before any response leaves
 * (group commit, app.c).
 */
#ifndef GP_API_API_H
#define GP_API_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/jsonw.h"
#include "core/timeutil.h"
#include "http/http.h"

struct store;
struct app;

/* Access classes (API.md §0). */
enum api_access {
    API_PUBLIC = 0, /* anyone */
    API_PUBLIC_RL,  /* anyone, rate-limited per client IP */
    API_BRAND,      /* a brand key (for the addressed brand) or the admin key */
    API_INGEST,     /* X-Ingest-Key of an integration */
    API_ADMIN,      /* the admin key */
    API_OPTIONAL    /* public, but a valid credential is recognised (e.g. claim GET) */
};

enum api_principal_kind {
    API_ANON = 0,
    API_PRINCIPAL_BRAND,
    API_PRINCIPAL_ADMIN,
    API_PRINCIPAL_INGEST
};

struct api_principal {
    enum api_principal_kind kind;
    char brand_id[64];       /* BRAND and INGEST */
    char integration_id[64]; /* INGEST */
};

/* One request being handled.  Strings returned by helpers live until the
 * request ends (per-request arena). */
struct api_req {
    struct app *app;
    struct http_request *http;
    struct http_response *res;
    struct api_principal who;
    int64_t now_ms; /* one "now" per request (API.md §1.3) */
    char now_iso[ISO_LEN + 1];
    char client_ip[64]; /* API.md §3.8 single rule (trusted proxies only) */
    char country[64];   /* ISO alpha-2, or "Unknown"/"Local" */
    char city[128];
    const char *route; /* route pattern for logs/metrics */
    struct jsonw jw;   /* writer over res->body */
    cJSON *body_json;  /* parsed body (owned, freed at the end) */
    void *arena;       /* per-request allocations */
    /* Added by the platform (app.c / api_req.c); handlers do not touch these. */
    bool query_bad;         /* a query parameter failed to decode (400 answered) */
    bool body_parsed;       /* body_json holds the result of the one parse */
    enum api_access access; /* access class of the matched route */
};

typedef void (*api_handler_fn)(struct api_req *r);

struct api_route {
    enum http_method method;
    const char *path; /* exact path, e.g. "/api/products/verify" */
    enum api_access access;
    api_handler_fn fn;
};

/* Route tables, one per resource family file, each ended by {0}. */
extern const struct api_route api_brands_routes[];
extern const struct api_route api_products_routes[];
extern const struct api_route api_scans_routes[];
extern const struct api_route api_threats_routes[];
extern const struct api_route api_ops_routes[];
extern const struct api_route api_health_routes[];
extern const struct api_route api_admin_routes[];
extern const struct api_route api_webhooks_routes[];
extern const struct api_route api_ingest_routes[];
extern const struct api_route api_integrations_routes[];
extern const struct api_route api_stream_routes[];
extern const struct api_route api_catalog_routes[];
extern const struct api_route api_platform_routes[];
extern const struct api_route api_stripe_routes[];
extern const struct api_route api_exports_routes[];

/* ---- responses ---- */

/* Sets the status and returns the JSON writer over the response body
 * (content type application/json). */
struct jsonw *api_json(struct api_req *r, int status);
/* {"error": msg} with status. */
void api_error(struct api_req *r, int status, const char *msg);
/* 500 {"error": msg} and a log line with the store error code; 503 with
 * Retry-After: 1 when err is ERR_THROTTLED, ERR_UNAVAILABLE or ERR_TIMEOUT. */
void api_fail(struct api_req *r, const char *msg, int err);

/* ---- parameters ---- */

/* First occurrence of a query parameter, percent-decoded ('+' is a
 * space); NULL when missing or empty (API.md §1.2) and also when it cannot
 * be decoded (see api_query_ok()). */
const char *api_query(struct api_req *r, const char *name);
/* False when a query parameter could not be decoded (invalid percent
 * escape, NUL, invalid UTF-8, longer than 4 KiB): the helper has already
 * answered 400 and the handler must return. */
bool api_query_ok(struct api_req *r);
/* Base-10 integer; missing/invalid -> def; clamped to [min, max]. */
long api_query_int(struct api_req *r, const char *name, long def, long min, long max);

/* The JSON body as an object; when it is not a JSON object answers 400
 * {"error":"Invalid JSON body"} and returns NULL. */
cJSON *api_body(struct api_req *r);
/* Field getters with API.md §1.2's rules.  Return 1 when present
 * (JS-truthy) with the right type, 0 when absent/falsy, -1 when present
 * with a wrong type (a 400 has then been answered with
 * {"error":"<field> must be a <type>"}). */
int api_body_str(struct api_req *r, const cJSON *obj, const char *field, const char **out);
int api_body_obj(struct api_req *r, const cJSON *obj, const char *field, const cJSON **out);
int api_body_arr(struct api_req *r, const cJSON *obj, const char *field, const cJSON **out);
int api_body_num(struct api_req *r, const cJSON *obj, const char *field, double *out);

/* Copies a string into the request arena. */
char *api_strdup(struct api_req *r, const char *s);
/* n bytes (zeroed, aligned for any type) from the request arena; freed
 * when the request ends.  Never NULL (aborts on OOM like xmalloc; callers
 * bound n by the request's own size limits). */
void *api_alloc(struct api_req *r, size_t n);
/* printf into the request arena. */
char *api_printf(struct api_req *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- access ---- */

/* For API_BRAND routes: true when the caller may act for brand_id (its
 * brand key, the admin key, or auth disabled).  Otherwise answers 403
 * {"error":"Forbidden"} (401 when no valid credential) and returns false. */
bool api_require_brand(struct api_req *r, const char *brand_id);
/* True when the caller is BRAND for brand_id or ADMIN (no response). */
bool api_is_brand(const struct api_req *r, const char *brand_id);
bool api_is_admin(const struct api_req *r);
/* True when the caller presented a valid X-Ingest-Key (principal INGEST;
 * who.brand_id/who.integration_id name the integration).  With --auth
 * none an INGEST route is open, but a valid key is still recognised. */
bool api_is_ingest(const struct api_req *r);

/* ---- application services (app.c) ---- */

struct store *api_store(struct api_req *r);
const char *api_signing_secret(const struct api_req *r);
const char *api_base_url(const struct api_req *r);
/* True when webhooks may target private/loopback addresses
 * (--allow-private-webhooks). */
bool api_allow_private_webhooks(const struct api_req *r);
/* Adds delta to a hot counter (brand STATS / product scanCount); folded
 * into one update per item per commit.  Returns the pending (uncommitted)
 * delta for that item attribute after this call. */
double api_counter_add(struct api_req *r, const char *pk, const char *sk, const char *attr,
                       double delta);
/* The pending delta of a counter (0 when none). */
double api_counter_pending(struct api_req *r, const char *pk, const char *sk, const char *attr);
/* Email privacy hash (API.md §3.9 Reimpl): HMAC-SHA256(server pepper,
 * lowercase(trim(email))), lowercase hex. */
void api_email_hash(struct api_req *r, const char *email, char out[65]);
/* Generates a brand API key into key_out (the text, shown once) and
 * returns its APIKEY# item (SHA-256 only; NULL on a bad brand id, key_out
 * then zeroed) for the caller to write, in one transaction with the
 * brand's own items (POST /api/brands). */
cJSON *api_brand_key_item(struct api_req *r, const char *brand_id, char key_out[72]);
/* Appends an audit entry (who = the request's principal, when = now) to
 * the audit trail, in the same commit as the request's other writes.
 * action e.g. "brand.created", "product.registered", "product.recalled";
 * brand_id/product_id may be NULL; details is a short text or NULL. */
int api_audit(struct api_req *r, const char *action, const char *brand_id, const char *product_id,
              const char *details);

#endif
