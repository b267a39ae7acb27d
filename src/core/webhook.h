/*
 * webhook.h - the webhook entity (API.md E4, §9.27-§9.29) and its
 * deliveries (project family DELIVERY#<webhookId>, docs/keys.md): stored
 * items, JSON shapes, event names, secrets and signatures, and the
 * validation of target URLs (scheme, credentials, private addresses).
 *
 * A webhook's secret ("whsec_" + 64 hex) is stored in plain text in the
 * webhook item because every delivery must be signed with it (HMAC); it
 * is shown once, in the POST response, and never listed.
 */
#ifndef GP_CORE_WEBHOOK_H
#define GP_CORE_WEBHOOK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include <cjson/cJSON.h>

#include "core/jsonw.h"

#define WEBHOOK_URL_MAX       2048
#define WEBHOOK_HOST_MAX      253
#define WEBHOOK_ID_MAX        128
#define WEBHOOK_SECRET_PREFIX "whsec_"
#define WEBHOOK_SECRET_LEN    (6 + 64)
/* "sha256=" + 64 hex */
#define WEBHOOK_SIG_LEN (7 + 64)
/* Active webhooks a brand may have (bounds the fan-out of one event). */
#define WEBHOOK_MAX_PER_BRAND 20
/* Attempt records kept in a delivery item. */
#define WEBHOOK_HISTORY_MAX 10
/* Longest lastError text stored. */
#define WEBHOOK_ERROR_MAX 200

/* Event names and their bits. */
#define WEBHOOK_EV_SCAN   1u /* verification_scan */
#define WEBHOOK_EV_THREAT 2u /* threat_alert */
#define WEBHOOK_EV_RECALL 4u /* product_recall */
#define WEBHOOK_EV_ALL    7u

/* Delivery statuses. */
#define WEBHOOK_ST_PENDING   "pending"
#define WEBHOOK_ST_DELIVERED "delivered"
#define WEBHOOK_ST_FAILED    "failed"

/* The name of one event bit (NULL for anything else). */
const char *webhook_event_name(unsigned bit);
/* The bit of an event name, 0 when unknown. */
unsigned webhook_event_bit(const char *name);
/* The events a stored webhook subscribes to: its "events" array (unknown
 * names ignored); WEBHOOK_EV_ALL when the attribute is absent. */
unsigned webhook_events_of(const cJSON *item);

/* True when id can name a webhook or a delivery: 1..WEBHOOK_ID_MAX bytes,
 * no '#', no control characters. */
bool webhook_id_ok(const char *id);

/* ---- target validation ---- */

/* True when a target address must be refused unless private targets are
 * allowed: unspecified, loopback, private (10/8, 172.16/12, 192.168/16,
 * 100.64/10), link-local (169.254/16, fe80::/10), unique-local
 * (fc00::/7), multicast, broadcast and reserved ranges, and IPv6 forms
 * that embed such an IPv4 address (mapped, compatible, NAT64, 6to4).
 * Families other than IPv4/IPv6 are refused too. */
bool webhook_addr_private(const struct sockaddr *sa);

struct addrinfo;

struct webhook_url {
    char host[WEBHOOK_HOST_MAX + 1]; /* without IPv6 brackets */
    bool https;
    bool host_is_ip; /* an IP literal */
};

/*
 * Parses url with libcurl's URL parser.  Returns 0 and fills out, or
 * ERR_INVALID with the 400 message in err: "Invalid webhook URL"
 * (unparseable, too long, spaces/control characters/backslashes, no
 * host), "Webhook URL must use http or https", "Webhook URL must not
 * contain credentials".
 */
int webhook_url_parse(const char *url, struct webhook_url *out, char *err, size_t errlen);

/*
 * webhook_url_parse() and, unless allow_private, the address check: an
 * IP literal is checked directly; a name is resolved (waiting at most
 * resolve_timeout_s, net/resolver.h) and refused when ANY of its
 * addresses is private.  Returns 0, or ERR_INVALID with the message in
 * err: the parse messages, "Webhook URL must not point to a private or
 * loopback address", "Webhook host cannot be resolved" (also on timeout).
 */
int webhook_url_check(const char *url, bool allow_private, double resolve_timeout_s, char *err,
                      size_t errlen);

/* webhook_url_check in two halves for callers that look the name up
 * without waiting: the parse and the literal check, which sets *lookup
 * when u->host is a name still to be resolved (never with allow_private);
 * then, on the lookup's answer (resolver.h's rc and addresses),
 * webhook_addrs_check.  Same returns and messages. */
int webhook_url_precheck(const char *url, bool allow_private, struct webhook_url *u, bool *lookup,
                         char *err, size_t errlen);
int webhook_addrs_check(int lookup_rc, const struct addrinfo *res, char *err, size_t errlen);

/* ---- secrets and signatures ---- */

/* "whsec_" + 32 random bytes as hex. */
void webhook_secret_new(char out[WEBHOOK_SECRET_LEN + 1]);
/* "sha256=" + hex HMAC-SHA256(secret, "<ts>.<body>"). */
void webhook_sign(const char *secret, const char *ts, const char *body, size_t len,
                  char out[WEBHOOK_SIG_LEN + 1]);

/* ---- the webhook item (E4) ---- */

struct webhook_fields {
    const char *id;         /* required (webhook_id_ok) */
    const char *brand_id;   /* required (brand_id_ok) */
    const char *url;        /* required */
    unsigned events;        /* bits; 0 -> WEBHOOK_EV_ALL */
    const char *created_at; /* required, canonical ISO */
    const char *secret;     /* required */
};

/* BRAND#<brand> / WEBHOOK#<id>: id, brandId, url, events (in the order
 * verification_scan, threat_alert, product_recall), active true,
 * createdAt, lastTriggered null, deliveryCount 0, secret.  The caller
 * owns the result; NULL when a field is missing or invalid. */
cJSON *webhook_item_new(const struct webhook_fields *f);
/* POST's answer {"id","url","events","active","secret"}. */
void webhook_write_created_json(struct jsonw *w, const cJSON *item);
/* A list row {"id","url","events","active","createdAt","lastTriggered",
 * "deliveryCount"} (never the secret; absent attributes as null, 0). */
void webhook_write_row_json(struct jsonw *w, const cJSON *item);

/* ---- deliveries ---- */

struct webhook_delivery_fields {
    const char *id;         /* required (webhook_id_ok) */
    const char *webhook_id; /* required */
    const char *brand_id;   /* required */
    const char *event;      /* required: an event name */
    const char *created_at; /* required, canonical ISO */
    const char *payload;    /* required: the JSON body sent (signed as is) */
};

/* DELIVERY#<webhookId> / <createdAt>#<id>, in the pending index (GSI1PK
 * DELIVERY_PENDING, GSI1SK = SK): id, webhookId, brandId, event, status
 * "pending", attempts 0, lastStatus null, lastError null, createdAt,
 * deliveredAt null, nextAttemptAt = createdAt, payload, history [],
 * claimToken "" (free for any dispatcher to take: api/job_claim.h).
 * The caller owns the result; NULL when a field is missing or invalid. */
cJSON *webhook_delivery_item_new(const struct webhook_delivery_fields *f);
/* A delivery row {"id","event","status","attempts","lastStatus",
 * "lastError","createdAt","deliveredAt","nextAttemptAt","history"}. */
void webhook_delivery_write_json(struct jsonw *w, const cJSON *item);

#endif
