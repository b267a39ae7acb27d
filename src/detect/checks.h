/*
 * checks.h - the types shared by the detector's checks (chk_*.c), its
 * classifier (classify.c) and its consumer (consumer.c).
 *
 * A check is a pure function: it looks at one decoded stream record (a
 * scan or a provenance event) and the product's window state
 * (detect/state.h) and, when it fires, fills a struct det_hit with the
 * alert type, the deduplication window and the numbers the classifier
 * puts into its narrative.  Checks never touch the store, so replaying
 * the same records over the same state gives the same hits.
 *
 * Pointers inside a det_hit borrow from the record, the claim or the
 * state they were computed from: use the hit before the next record
 * changes the state.
 */
#ifndef GP_DETECT_CHECKS_H
#define GP_DETECT_CHECKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/crypto.h"
#include "core/timeutil.h"

/* The alert types the detector raises (API.md §6.1, Reimpl). */
enum det_type {
    DET_GEO = 0,     /* geographic_anomaly */
    DET_BURST,       /* burst_scan */
    DET_CLAIM,       /* claimed_product_scan */
    DET_TAMPER,      /* hash_tampering */
    DET_VELOCITY,    /* scan_velocity */
    DET_CHAIN_GAP,   /* chain_gap */
    DET_CHAIN_BREAK, /* chain_break */
    DET_NTYPES
};

/* Thresholds of API.md §5 (Reimpl). */
#define DET_GEO_MIN_COUNTRIES  3                /* distinct known countries ... */
#define DET_GEO_WINDOW_MS      (24LL * 3600000) /* ... in the 24 h ending at the scan */
#define DET_BURST_MIN_SCANS    10               /* scans, this one included ... */
#define DET_BURST_WINDOW_MS    (3600000LL)      /* ... in the hour ending at the scan */
#define DET_VELOCITY_MIN_TOTAL 20.0             /* fires when total > this ... */
#define DET_VELOCITY_MIN_RATE  5.0              /* ... and scans per day > this */
#define DET_CHAIN_GAP_MS       (72LL * 3600000) /* chain_gap when the gap is longer */
#define DET_DAY_MS             (86400000LL)

/* Longest country value the detector keeps (bytes, NUL excluded); longer
 * values are treated as unknown, like "Unknown" and "Local". */
#define DET_COUNTRY_MAX 47
/* Longest actor name kept for narratives (longer ones are cut). */
#define DET_ACTOR_MAX 127
/* Most countries the state remembers (see state.h). */
#define DET_COUNTRIES_MAX 32
/* Longest dedup window text. */
#define DET_WINDOW_MAX 32

/* One scan record (API.md E8), decoded from its stream image. */
struct det_scan {
    const char *product_id;
    const char *timestamp; /* canonical ISO */
    int64_t ts_ms;
    const char *country;     /* NULL when absent */
    const char *city;        /* NULL when absent */
    const char *ip;          /* "unknown" when absent */
    const char *user_agent;  /* "unknown" when absent */
    const char *fingerprint; /* stored by the writer, or NULL: computed from ip/userAgent */
    const char *result;      /* "authentic" | "suspicious" | NULL */
};

/* One provenance event record (API.md E7 + seq), decoded. */
struct det_event {
    const char *product_id;
    const char *timestamp; /* canonical ISO */
    int64_t ts_ms;
    const char *type;
    const char *actor; /* may be NULL */
    const char *hash;
    const char *previous_hash;
    uint32_t seq; /* 0 for events without a sequence number */
};

/* The event a new event must link to. */
struct det_prev_event {
    uint32_t seq;
    char hash[CRYPTO_HEX_LEN + 1];
    char timestamp[ISO_LEN + 1];
    int64_t ts_ms;
    char actor[DET_ACTOR_MAX + 1];
};

/* A product's claim (API.md E9) as the claim check needs it. */
struct det_claim {
    bool present;
    char fingerprint[CRYPTO_HEX_LEN + 1];
    char claimed_at[ISO_LEN + 1];
    int64_t claimed_ms;
    char claimed_by[DET_ACTOR_MAX + 1];
};

/* What a check found. */
struct det_hit {
    enum det_type type;
    char window[DET_WINDOW_MAX + 1]; /* dedup window (no '#') */
    /* geographic_anomaly: the known countries of the window, sorted */
    size_t ncountries;
    const char *countries[DET_COUNTRIES_MAX];
    /* burst_scan: scans in the hour ending at the scan */
    unsigned scans_in_hour;
    /* scan_velocity */
    double total, rate, days;
    /* claimed_product_scan */
    const char *claimed_at, *claimed_by;
    /* hash_tampering */
    const char *result;
    /* chain_gap / chain_break */
    uint32_t seq;
    double gap_hours;
    const char *prev_actor, *actor;
    const char *expected_hash, *previous_hash;
};

#endif
