/*
 * sim_plan.h - the traffic simulator's attack schedule, as a pure
 * function of time so that it can be tested without a server.
 *
 * A run opens with a fast round that plays every enabled attack once,
 * the first one SIM_PLAN_FIRST_S seconds after start and the others
 * SIM_PLAN_STEP_S apart (so that, from a fresh database, the dashboard
 * shows its first alert within 5 s and every kind within 30 s); after
 * that one attack every `calm_s` seconds, cycling through the enabled
 * kinds in the same order.  Offsets are seconds since the start of the
 * run, in real time (the caller decides whether to scale them).
 */
#ifndef GP_SIM_SIM_PLAN_H
#define GP_SIM_SIM_PLAN_H

#include <stdbool.h>
#include <stddef.h>

/* The attacks, in the order of the first round. */
enum sim_attack {
    SIM_ATK_CLONE = 0, /* one tag scanned in three countries -> geographic_anomaly */
    SIM_ATK_BURST,     /* a tag tested in a burst -> burst_scan and scan_velocity */
    SIM_ATK_CLAIM,     /* a claimed product scanned by another device -> claimed_product_scan */
    SIM_ATK_TAMPER,    /* a product record altered in the store -> hash_tampering */
    SIM_ATK_GAP,       /* a provenance gap over 72 h -> chain_gap */
    SIM_ATK_COUNT
};

#define SIM_PLAN_FIRST_S 0.5  /* first attack */
#define SIM_PLAN_STEP_S  3.0  /* between attacks of the first round */
#define SIM_PLAN_CALM_S  45.0 /* default pace afterwards */

struct sim_plan {
    unsigned mask; /* enabled attacks: bit (1u << enum sim_attack) */
    double calm_s; /* <= 0 -> SIM_PLAN_CALM_S */
};

/* Short name of an attack ("clone", "burst", ...); "?" when out of range. */
const char *sim_attack_name(enum sim_attack a);
/* The alert types an attack should raise, comma-separated
 * ("geographic_anomaly", "burst_scan,scan_velocity", ...). */
const char *sim_attack_alerts(enum sim_attack a);

/* Number of enabled attacks in the plan. */
size_t sim_plan_kinds(const struct sim_plan *p);

/*
 * The n-th attack of the run (0-based): returns its offset in seconds
 * since start and stores its kind in *kind.  Offsets never decrease with
 * n.  Returns a negative value when the plan enables no attack.
 */
double sim_plan_at(const struct sim_plan *p, size_t n, enum sim_attack *kind);

#endif
