/*
 * keys.h - the only place item keys are formatted or parsed.
 *
 * Every PK/SK/GSI1 pattern of API.md §2.2 and every key family the project
 * adds is built here and listed in docs/keys.md.  Builders write into a
 * caller-owned struct key and return its text, or NULL when the result
 * would exceed KEY_MAX-1 bytes or a component is NULL, empty or contains
 * '#' (callers bound their inputs, so NULL means "reject the input"; only
 * key_scan_lo/hi accept an empty timestamp).  Bucketed PKs (threat month,
 * ops-log/audit/DLQ day) also need a timestamp starting YYYY-MM[-DD].
 * Parsers take a key and fill caller buffers; they return 0 or
 * ERR_INVALID.
 */
#ifndef GP_CORE_KEYS_H
#define GP_CORE_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KEY_MAX 1024

struct key {
    char s[KEY_MAX];
};

/* Fixed partition and sort keys. */
#define KEY_SK_PROFILE       "PROFILE"
#define KEY_SK_STATS         "STATS"
#define KEY_SK_META          "META"
#define KEY_SK_CLAIM         "CLAIM"
#define KEY_SK_CHAIN         "CHAIN"    /* provenance chain head of a product (project) */
#define KEY_SK_DETSTATE      "DETSTATE" /* detector window state of a product (project) */
#define KEY_PK_BRAND_INDEX   "BRAND_INDEX"
#define KEY_PK_PRODUCT_INDEX "PRODUCT_INDEX"
#define KEY_PK_STORE_CHECKPOINT                                                                    \
    "STORE#CHECKPOINT" /* DynamoDB driver: reader checkpoints (SK = reader) */
#define KEY_PK_STORE_HEALTH                                                                        \
    "STORE#HEALTH" /* DynamoDB driver: health probe GetItem (never written) */
#define KEY_PK_OPS_LOG_LEGACY                                                                      \
    "OPS_LOG" /* read-only legacy partition; also GSI1PK of ops-log items */
#define KEY_PK_AUDIT_LOG_LEGACY "AUDIT_LOG" /* read-only legacy partition */
/* GSI1PK of webhook deliveries still pending (sparse: removed when final);
 * GSI1SK is the delivery's sort key (key_delivery_sk). */
#define KEY_GSI1PK_DELIVERY_PENDING "DELIVERY_PENDING"
/* A model classification job (detect/classify_job.h): PK CLASSIFY#<alertId>,
 * SK JOB, GSI1PK CLASSIFY_PENDING (sparse: the item is deleted when done),
 * GSI1SK <alert time>#<alertId>. */
#define KEY_SK_CLASSIFY_JOB "JOB"
/* The classifier's presence (detect/classify_job.h): PK CLASSIFIER, SK
 * PRESENCE; API processes that run a model keep its "until" in the
 * future, and the Streams detectors write jobs only while it is. */
#define KEY_PK_CLASSIFIER "CLASSIFIER"
#define KEY_SK_PRESENCE   "PRESENCE"
/* The claim on a work item (webhook delivery, classification job):
 * producers create it free ("" token); api/job_claim.h takes and gives
 * it back. */
#define KEY_ATTR_CLAIM_TOKEN        "claimToken"
#define KEY_ATTR_CLAIM_UNTIL        "claimUntil"
#define KEY_GSI1PK_CLASSIFY_PENDING "CLASSIFY_PENDING"

/* Prefixes used with begins_with. */
#define KEY_PFX_BRAND       "BRAND#"
#define KEY_PFX_PRODUCT     "PRODUCT#"
#define KEY_PFX_EVENT       "EVENT#"
#define KEY_PFX_SCAN        "SCAN#"
#define KEY_PFX_DISPUTE     "DISPUTE#"
#define KEY_PFX_WEBHOOK     "WEBHOOK#"
#define KEY_PFX_INTEGRATION "INTEGRATION#"
#define KEY_PFX_ALERT       "ALERT#"
#define KEY_PFX_THREAT      "THREAT#"
#define KEY_PFX_DELIVERY    "DELIVERY#"
#define KEY_PFX_ALERTKEY    "ALERTKEY#"
#define KEY_PFX_OPS_LOG_DAY "OPS_LOG#"
#define KEY_PFX_CLASSIFY    "CLASSIFY#"

/* ---- API.md schema (E1-E16) ---- */
const char *key_brand_pk(struct key *k, const char *brand_id); /* BRAND#<id> */
const char *key_brand_index_sk(struct key *k, const char *created_at,
                               const char *brand_id);              /* BRAND#<createdAt>#<id> */
const char *key_webhook_sk(struct key *k, const char *webhook_id); /* WEBHOOK#<id> */
const char *key_integration_sk(struct key *k, const char *integration_id); /* INTEGRATION#<id> */
const char *key_product_pk(struct key *k, const char *product_id);         /* PRODUCT#<id> */
const char *key_product_gsi1sk(struct key *k, const char *created_at);     /* PRODUCT#<createdAt> */
/* EVENT#<timestamp>#<type>#<seq, 8 digits zero-padded>: unique per product,
 * ordered by time like the original's EVENT#<timestamp>#<type>. */
const char *key_event_sk(struct key *k, const char *timestamp, const char *type, uint32_t seq);
/* SCAN#<timestamp>#<scanId>: scanId is 8 random hex chars (unique, D15). */
const char *key_scan_sk(struct key *k, const char *timestamp, const char *scan_id);
/* Range bounds for scans with timestamps in [from, to] (inclusive):
 * SCAN#<from> .. SCAN#<to>~ */
const char *key_scan_lo(struct key *k, const char *from_ts);
const char *key_scan_hi(struct key *k, const char *to_ts);
/* DISPUTE#<createdAt>#<disputeId-suffix> */
const char *key_dispute_sk(struct key *k, const char *created_at, const char *suffix);
const char *key_verify_pk(struct key *k, const char *code); /* VERIFY#<code> */
const char *key_hash_pk(struct key *k, const char *hash);   /* HASH#<hash> */
const char *key_product_index_sk(struct key *k, const char *created_at,
                                 const char *product_id); /* PRODUCT#<createdAt>#<id> */
/* Alerts (single Reimpl format, monthly buckets, API.md §6.4):
 * PK THREAT#<brandId>#<YYYY-MM of timestamp>, SK ALERT#<timestamp>#<type>#<alertId>,
 * GSI1PK BRAND#<brandId>, GSI1SK THREAT#<write time>#<alertId>. */
const char *key_threat_pk(struct key *k, const char *brand_id, const char *timestamp);
const char *key_threat_legacy_pk(struct key *k, const char *brand_id); /* THREAT#<brandId> */
const char *key_alert_sk(struct key *k, const char *timestamp, const char *type,
                         const char *alert_id);
const char *key_threat_gsi1sk(struct key *k, const char *write_time, const char *alert_id);
/* GSI1SK range bounds over the alerts of a BRAND# index partition:
 * THREAT#<write time> (sorts before every alert written at or after it)
 * and THREAT#~ (after every alert; '~' sorts after every id character). */
const char *key_threat_gsi1sk_lo(struct key *k, const char *write_time);
const char *key_threat_gsi1sk_hi(struct key *k);
/* Ops log: PK OPS_LOG#<YYYY-MM-DD>, SK <timestamp>#<agent>#<id>, GSI1PK OPS_LOG,
 * GSI1SK <timestamp>. */
const char *key_opslog_pk(struct key *k, const char *timestamp);
const char *key_opslog_pk_day(struct key *k, const char *day); /* OPS_LOG#<day> */
const char *key_opslog_sk(struct key *k, const char *timestamp, const char *agent, const char *id);

/* ---- project key families (docs/keys.md) ---- */
const char *key_apikey_pk(struct key *k, const char *key_sha256_hex); /* APIKEY#<sha256> / META */
const char *key_ingestkey_pk(struct key *k,
                             const char *key_sha256_hex);       /* INGESTKEY#<sha256> / META */
const char *key_idem_sk(struct key *k, const char *digest_hex); /* in PRODUCT#: IDEM#<digest> */
const char *key_alert_dedup_sk(struct key *k, const char *type,
                               const char *window); /* in PRODUCT#: ALERTKEY#<type>#<window> */
const char *key_product_name_sk(struct key *k,
                                const char *name_sha256_hex); /* in BRAND#: PNAME#<sha256(name)> */
const char *key_delivery_pk(struct key *k, const char *webhook_id); /* DELIVERY#<webhookId> */
const char *key_delivery_sk(struct key *k, const char *timestamp,
                            const char *delivery_id);           /* <timestamp>#<deliveryId> */
const char *key_audit_pk(struct key *k, const char *timestamp); /* AUDIT#<YYYY-MM-DD> */
const char *key_audit_pk_day(struct key *k, const char *day);
const char *key_audit_sk(struct key *k, const char *timestamp,
                         const char *id);                     /* <timestamp>#<id> */
const char *key_dlq_pk(struct key *k, const char *timestamp); /* DLQ#<YYYY-MM-DD> */
const char *key_dlq_sk(struct key *k, const char *timestamp,
                       uint64_t seq);                          /* <timestamp>#<seq 20 digits> */
const char *key_lease_pk(struct key *k, const char *shard_id); /* LEASE#<shardId> / META */
const char *key_checkpoint_pk(struct key *k,
                              const char *reader); /* CHECKPOINT#<reader> / <shardId> */
const char *key_classify_job_pk(struct key *k, const char *alert_id); /* CLASSIFY#<alertId> */
const char *key_classify_job_gsi1sk(struct key *k, const char *alert_time,
                                    const char *alert_id); /* <alert time>#<alertId> */

/* ---- parsers ---- */
/* Returns the text after prefix when key starts with it, else NULL. */
const char *key_after(const char *key, const char *prefix);
/* BRAND#<id> -> id; PRODUCT#<id> -> id. */
int key_parse_brand_pk(const char *pk, char *id, size_t n);
int key_parse_product_pk(const char *pk, char *id, size_t n);
/* EVENT#<ts>#<type>#<seq> (also the original's EVENT#<ts>#<type>, seq = 0). */
int key_parse_event_sk(const char *sk, char ts[25], char *type, size_t tn, uint32_t *seq);
/* SCAN#<ts>[#<id>] -> ts. */
int key_parse_scan_sk(const char *sk, char ts[25]);
/* THREAT#<brand>#<YYYY-MM> or THREAT#<brand> (month "" then). */
int key_parse_threat_pk(const char *pk, char *brand, size_t n, char month[8]);
/* ALERT#<ts>#<type>#<id> (legacy ALERT#<ts>[#<type>]: missing parts ""). */
int key_parse_alert_sk(const char *sk, char ts[25], char *type, size_t tn, char *id, size_t idn);
/* THREAT#<write time>#<alertId> -> write time (at most 24 chars) and id. */
int key_parse_threat_gsi1sk(const char *sk, char wt[25], char *id, size_t idn);
/* OPS_LOG#<day> -> day. */
int key_parse_opslog_pk(const char *pk, char day[11]);

/* Key families, for capacity reports and the partition heat view. */
enum key_family {
    KF_PRODUCT,        /* PRODUCT#<id> */
    KF_VERIFY,         /* VERIFY#<code> */
    KF_HASH,           /* HASH#<hash> */
    KF_BRAND,          /* BRAND#<id> */
    KF_THREAT,         /* THREAT#<b>#<YYYY-MM> */
    KF_THREAT_LEGACY,  /* THREAT#<b> */
    KF_OPS_LOG,        /* OPS_LOG#<day> */
    KF_OPS_LOG_LEGACY, /* OPS_LOG */
    KF_BRAND_INDEX,
    KF_PRODUCT_INDEX,
    KF_AUDIT_LOG, /* AUDIT_LOG (legacy) */
    KF_AUDIT,     /* AUDIT#<day> */
    KF_APIKEY,
    KF_INGESTKEY,
    KF_DLQ,
    KF_LEASE,
    KF_DELIVERY,
    KF_CHECKPOINT,
    KF_CLASSIFY, /* CLASSIFY#<alertId> */
    KF_OTHER,
    KF_COUNT
};
enum key_family key_family_of(const char *pk);
/* Display pattern, e.g. "PRODUCT#<id>", "THREAT#<brand>#<YYYY-MM>". */
const char *key_family_pattern(enum key_family f);

/* The items whose change-stream records need no image
 * (store_options.stream_keys_only): ops-log entries (OPS_LOG#<day>),
 * detector window states (DETSTATE) and alert dedup items (ALERTKEY#...),
 * which the detector writes and no stream reader looks into. */
bool key_stream_keys_only(const char *pk, const char *sk);

#endif
