/*
 * opslog.h - the ops-log entity (API.md §7): one item per classification
 * made by the detector, its JSON entry shape and the statistics that
 * /api/ops-log reports over a set of entries (§9.25, with D36 fixed).
 */
#ifndef GP_CORE_OPSLOG_H
#define GP_CORE_OPSLOG_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/jsonw.h"

/* The model name the original reports in stats.geminiModel (a constant
 * there; kept for API compatibility). */
#define OPSLOG_GEMINI_MODEL "gemini-2.5-flash"

struct opslog_fields {
    const char *id;           /* unique SK suffix; NULL: 8 random hex chars */
    const char *agent;        /* required: "threat_detector" | "chain_analyzer" | ... */
    const char *trigger;      /* "scan_event" | "chain_event" (NULL -> null) */
    const char *product_id;   /* may be NULL */
    const char *brand_id;     /* may be NULL */
    const char *const *flags; /* anomalyFlags; may be NULL */
    size_t nflags;
    const char *model;            /* geminiModel attribute; NULL -> "rules" */
    const char *ai_severity;      /* as classified, e.g. "HIGH"; may be NULL */
    const char *ai_attack_vector; /* may be NULL */
    bool has_confidence;          /* false: aiConfidence is null */
    double ai_confidence;         /* 0-100 */
    double latency_ms;            /* duration of the classification */
    const char *timestamp;        /* required, ISO: the triggering record's time */
};

/* Builds the item: PK OPS_LOG#<day of timestamp>, SK
 * <timestamp>#<agent>#<id>, GSI1PK OPS_LOG, GSI1SK <timestamp>, then the
 * attributes of the entry shape.  The caller owns the result.  NULL when
 * agent or timestamp (canonical ISO) is missing or a key is too long. */
cJSON *opslog_item_new(const struct opslog_fields *f);

/* Writes one entry of /api/ops-log: {"agent","trigger","productId",
 * "brandId","anomalyFlags","geminiModel","aiSeverity","aiAttackVector",
 * "aiConfidence","latencyMs","timestamp"} (absent attributes -> null). */
void opslog_write_entry_json(struct jsonw *w, const cJSON *item);

/* Sorts a JSON array of items by their "timestamp" string, newest first
 * (byte-wise; items without one last; stable, so equal timestamps keep
 * their order), and deletes everything after the first `limit` items. */
void opslog_sort_trim(cJSON *items, size_t limit);

/* Counts per distinct key, in first-seen order. */
struct opslog_tally {
    char **keys;
    size_t *counts;
    size_t len, cap;
};

struct opslog_stats {
    size_t total;
    struct opslog_tally agents;     /* agent, "unknown" when missing */
    struct opslog_tally severities; /* truthy aiSeverity */
    struct opslog_tally vectors;    /* truthy aiAttackVector */
    double avg_latency_ms;          /* JS Math.round of the truthy latencies' mean, 0 if none */
    double avg_confidence;          /* Math.round(sum / entries with a numeric aiConfidence) */
};

/* Computes the statistics of an array of entries (items).  Free with
 * opslog_stats_free(). */
void opslog_stats_compute(const cJSON *items, struct opslog_stats *st);
void opslog_stats_free(struct opslog_stats *st);
/* The count for key in a tally (0 when absent). */
size_t opslog_tally_get(const struct opslog_tally *t, const char *key);
/* Writes {"totalOperations","agentBreakdown","severityBreakdown",
 * "attackVectorBreakdown","avgLatencyMs","avgConfidence","geminiModel"};
 * breakdown keys in JavaScript object order (array-index keys ascending
 * first, then first-seen order). */
void opslog_write_stats_json(struct jsonw *w, const struct opslog_stats *st);

/* JavaScript Math.round: nearest integer, halves toward +infinity. */
double opslog_js_round(double x);

#endif
