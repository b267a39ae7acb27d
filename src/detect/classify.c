/*
 * classify.c - the rule-based classifier (see classify.h).
 *
 * Rules, per alert type:
 *   type                  severity  attack vector           base confidence
 *   geographic_anomaly    high      tag_cloning             70 + 5 per country over 3
 *   burst_scan            medium    scan_farming            60
 *                                   (brute_force_probe when the scans also fail
 *                                   verification: someone is probing with forged data)
 *   claimed_product_scan  high      tag_cloning             75
 *   hash_tampering        critical  record_tampering        90
 *   scan_velocity         high      tag_cloning             65 + 2 per scan/day over the limit
 *   chain_gap             medium    supply_chain_diversion  70 (the original's fixed value)
 *   chain_break           critical  chain_forgery           95
 * Each other check that fired on the same record adds 5 (corroboration);
 * confidence stays within 0-99 (rules are never certain).
 */
#include "detect/classify.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util/buf.h"

static const char *const type_names[DET_NTYPES] = {
    [DET_GEO] = "geographic_anomaly",     [DET_BURST] = "burst_scan",
    [DET_CLAIM] = "claimed_product_scan", [DET_TAMPER] = "hash_tampering",
    [DET_VELOCITY] = "scan_velocity",     [DET_CHAIN_GAP] = "chain_gap",
    [DET_CHAIN_BREAK] = "chain_break",
};

static const char *const act_geo[] = {
    "Compare the scan locations with the product's authorised distribution regions",
    "Treat the tag as possibly cloned and contact the registered owner",
    "Flag the verification code for monitoring",
};
static const char *const act_burst[] = {
    "Review the scans of the last hour for automated traffic",
    "Rate-limit or block the scanning sources",
    "Check the product's physical tag for duplication",
};
static const char *const act_claim[] = {
    "Contact the registered owner to confirm possession",
    "Inspect the scanned item for a cloned tag",
    "Open an ownership investigation if the owner still holds the product",
};
static const char *const act_tamper[] = {
    "Freeze the product record and compare it with the registration data",
    "Audit recent writes to the product record",
    "Re-issue the product signature after the investigation",
};
static const char *const act_velocity[] = {
    "Compare the scan volume with the product's expected lifetime use",
    "Treat the tag as possibly cloned and review the scan locations",
};
static const char *const act_gap[] = {
    "Verify chain of custody during gap period",
    "Request shipping and warehouse records for the gap",
};
static const char *const act_break[] = {
    "Freeze the product's provenance chain",
    "Compare the stored events with the partners' records",
    "Audit who wrote the unlinked event",
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

const char *det_type_name(enum det_type t)
{
    return (unsigned)t < DET_NTYPES ? type_names[t] : "unknown";
}

static unsigned popcount(unsigned x)
{
    unsigned n = 0;
    for (; x; x &= x - 1)
        n++;
    return n;
}

static const char *upper_of(const char *sev)
{
    if (strcmp(sev, "critical") == 0)
        return "CRITICAL";
    if (strcmp(sev, "high") == 0)
        return "HIGH";
    if (strcmp(sev, "medium") == 0)
        return "MEDIUM";
    return "LOW";
}

/* Text appended into a fixed buffer, cut at its end as snprintf cuts:
 * the narratives of the scan checks are built for every scan of a product
 * under attack, and printf's format parsing was most of their cost. */
struct sbuf {
    char *s;
    size_t cap, len; /* len < cap; s[len] == '\0' */
};

static void sb_mem(struct sbuf *b, const char *p, size_t n)
{
    size_t room = b->cap - 1 - b->len;
    if (n > room)
        n = room;
    memcpy(b->s + b->len, p, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void sb_str(struct sbuf *b, const char *p)
{
    sb_mem(b, p, strlen(p));
}

static void sb_uint(struct sbuf *b, uint64_t v)
{
    char tmp[U64_DEC_MAX];
    sb_mem(b, tmp, u64_to_dec(v, tmp));
}

static void sb_fixed(struct sbuf *b, double v, int prec)
{
    char tmp[400]; /* %.1f of the largest double */
    int n = fmt_fixed(v, prec, tmp, sizeof tmp);
    if (n > 0)
        sb_mem(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* "A, B, C": the countries joined, cut with "..." when they do not fit. */
static void join_countries(const struct det_hit *h, char *out, size_t cap)
{
    struct sbuf b = {out, cap, 0};
    out[0] = '\0';
    for (size_t i = 0; i < h->ncountries; i++) {
        size_t sep = i ? 2 : 0, n = strlen(h->countries[i]);
        if (sep + n >= cap - b.len - 4) {
            sb_str(&b, "...");
            return;
        }
        sb_mem(&b, ", ", sep);
        sb_mem(&b, h->countries[i], n);
    }
}

void classify(const struct det_hit *h, unsigned fired, struct classification *c)
{
    char list[512];
    double conf = 50;
    struct sbuf nb;

    /* Everything but the narrative's unused bytes (a kilobyte per hit). */
    memset(c, 0, offsetof(struct classification, narrative));
    c->narrative[0] = '\0';
    c->actions = NULL;
    c->nactions = 0;
    c->confidence = 0;
    nb = (struct sbuf){c->narrative, sizeof(c->narrative), 0};
    c->type = h->type;
    switch (h->type) {
    case DET_GEO:
        c->severity = "high";
        c->attack_vector = "tag_cloning";
        join_countries(h, list, sizeof(list));
        sb_str(&nb, "Scanned from ");
        sb_uint(&nb, h->ncountries);
        sb_str(&nb, " countries (");
        sb_str(&nb, list);
        sb_str(&nb, ") in 24h window. A single physical product cannot travel this fast: "
                    "possible cloned tag.");
        c->actions = act_geo;
        c->nactions = N(act_geo);
        conf = 70 + 5.0 * (double)(h->ncountries - DET_GEO_MIN_COUNTRIES);
        break;
    case DET_BURST:
        c->severity = "medium";
        c->attack_vector = fired & DET_BIT(DET_TAMPER) ? "brute_force_probe" : "scan_farming";
        sb_str(&nb, "At least ");
        sb_uint(&nb, h->scans_in_hour);
        sb_str(&nb, " scans in 1 hour (limit ");
        sb_uint(&nb, DET_BURST_MIN_SCANS);
        sb_str(&nb, "). Possible automated scan farming.");
        c->actions = act_burst;
        c->nactions = N(act_burst);
        conf = 60;
        break;
    case DET_CLAIM:
        c->severity = "high";
        c->attack_vector = "tag_cloning";
        snprintf(c->narrative, sizeof(c->narrative),
                 "Claimed product scanned by different device. Original claim: %s. Possible "
                 "cloned tag.",
                 h->claimed_at ? h->claimed_at : "unknown");
        c->actions = act_claim;
        c->nactions = N(act_claim);
        conf = 75;
        break;
    case DET_TAMPER:
        c->severity = "critical";
        c->attack_vector = "record_tampering";
        snprintf(c->narrative, sizeof(c->narrative),
                 "Scan result \"%.32s\": the product record failed its hash or signature "
                 "check. Possible record tampering.",
                 h->result ? h->result : "");
        c->actions = act_tamper;
        c->nactions = N(act_tamper);
        conf = 90;
        break;
    case DET_VELOCITY:
        c->severity = "high";
        c->attack_vector = "tag_cloning";
        sb_str(&nb, "Scan velocity ");
        sb_fixed(&nb, h->rate, 1);
        sb_str(&nb, "/day over ");
        sb_fixed(&nb, floor(h->days + 0.5), 0);
        sb_str(&nb, " days (");
        sb_fixed(&nb, h->total, 0);
        sb_str(&nb, " total). Possible tag cloning.");
        c->actions = act_velocity;
        c->nactions = N(act_velocity);
        conf = 65 + 2 * (h->rate - DET_VELOCITY_MIN_RATE);
        if (conf > 90)
            conf = 90;
        break;
    case DET_CHAIN_GAP:
        c->severity = "medium";
        c->attack_vector = "supply_chain_diversion";
        snprintf(c->narrative, sizeof(c->narrative), "%.0f-hour gap between %.64s and %.64s",
                 floor(h->gap_hours), h->prev_actor ? h->prev_actor : "unknown",
                 h->actor ? h->actor : "unknown");
        c->actions = act_gap;
        c->nactions = N(act_gap);
        conf = 70;
        break;
    case DET_CHAIN_BREAK:
    default:
        c->type = DET_CHAIN_BREAK;
        c->severity = "critical";
        c->attack_vector = "chain_forgery";
        if (h->prev_actor)
            snprintf(c->narrative, sizeof(c->narrative),
                     "Event %u does not link to the event before it (%.64s): previousHash "
                     "%.12s... instead of %.12s.... Possible chain forgery.",
                     h->seq, h->prev_actor, h->previous_hash ? h->previous_hash : "",
                     h->expected_hash ? h->expected_hash : "");
        else
            snprintf(c->narrative, sizeof(c->narrative),
                     "The first event does not start from GENESIS: previousHash %.12s.... "
                     "Possible chain forgery.",
                     h->previous_hash ? h->previous_hash : "");
        c->actions = act_break;
        c->nactions = N(act_break);
        conf = 95;
        break;
    }
    conf += 5.0 * (double)(popcount(fired & ~DET_BIT(c->type)));
    if (!(conf >= 0))
        conf = 0;
    if (conf > 99)
        conf = 99;
    c->confidence = (int)conf;
    c->severity_upper = upper_of(c->severity);
}

cJSON *classify_analysis_json(const struct classification *c, double latency_ms)
{
    cJSON *o = cJSON_CreateObject(), *arr;

    cJSON_AddStringToObject(o, "severity", c->severity);
    cJSON_AddStringToObject(o, "attack_vector", c->attack_vector);
    cJSON_AddStringToObject(o, "narrative", c->narrative);
    arr = cJSON_AddArrayToObject(o, "recommended_actions");
    for (size_t i = 0; arr && i < c->nactions; i++)
        cJSON_AddItemToArray(arr, cJSON_CreateString(c->actions[i]));
    cJSON_AddNumberToObject(o, "confidence", c->confidence);
    cJSON_AddStringToObject(o, "model", CLASSIFY_MODEL_RULES);
    cJSON_AddNumberToObject(o, "latency_ms", isfinite(latency_ms) ? latency_ms : 0);
    return o;
}
