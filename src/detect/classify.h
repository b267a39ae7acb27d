/*
 * classify.h - the detector's rule-based classifier.
 *
 * Given what a check found (struct det_hit) and which other checks fired
 * on the same record, it decides the severity (API.md §6.1 Reimpl table:
 * geographic_anomaly high, burst_scan medium, claimed_product_scan high
 * [D51], hash_tampering critical, scan_velocity high, chain_gap medium,
 * chain_break critical), an attack vector, a one-sentence narrative with
 * the numbers, recommended actions and a confidence (0-100).  The result
 * is deterministic: the same hit and flags always give the same text, so
 * replays write identical alerts.  A model-based classifier can later
 * take the same input and fill the same struct.
 */
#ifndef GP_DETECT_CLASSIFY_H
#define GP_DETECT_CLASSIFY_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "detect/checks.h"

#define CLASSIFY_NARRATIVE_MAX 1024
/* The model name recorded for rule-based classifications. */
#define CLASSIFY_MODEL_RULES "rules"

struct classification {
    enum det_type type;
    const char *severity;       /* "low" | "medium" | "high" | "critical" */
    const char *severity_upper; /* the same upper-cased (ops-log aiSeverity) */
    const char *attack_vector;
    char narrative[CLASSIFY_NARRATIVE_MAX];
    const char *const *actions; /* static strings */
    size_t nactions;
    int confidence; /* 0-100 */
};

/* The alert type name of t ("geographic_anomaly" ...). */
const char *det_type_name(enum det_type t);
/* Bit of t in a set of fired checks. */
#define DET_BIT(t) (1u << (unsigned)(t))

/* Classifies hit; fired is the set (DET_BIT) of every check that fired on
 * the same record, hit->type included. */
void classify(const struct det_hit *hit, unsigned fired, struct classification *out);

/* The alert's aiAnalysis object: {severity, attack_vector, narrative,
 * recommended_actions, confidence, model:"rules", latency_ms}.  The
 * caller owns the result. */
cJSON *classify_analysis_json(const struct classification *c, double latency_ms);

#endif
