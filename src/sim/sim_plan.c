/*
 * sim_plan.c - the attack schedule (sim_plan.h): a fast first round with
 * every enabled attack, then one attack per calm period, round robin.
 */
#include "sim/sim_plan.h"

const char *sim_attack_name(enum sim_attack a)
{
    static const char *const names[SIM_ATK_COUNT] = {
        [SIM_ATK_CLONE] = "clone",   [SIM_ATK_BURST] = "burst", [SIM_ATK_CLAIM] = "claim",
        [SIM_ATK_TAMPER] = "tamper", [SIM_ATK_GAP] = "gap",
    };
    if ((int)a < 0 || a >= SIM_ATK_COUNT)
        return "?";
    return names[a];
}

const char *sim_attack_alerts(enum sim_attack a)
{
    static const char *const alerts[SIM_ATK_COUNT] = {
        [SIM_ATK_CLONE] = "geographic_anomaly",
        [SIM_ATK_BURST] = "burst_scan,scan_velocity",
        [SIM_ATK_CLAIM] = "claimed_product_scan",
        [SIM_ATK_TAMPER] = "hash_tampering",
        [SIM_ATK_GAP] = "chain_gap",
    };
    if ((int)a < 0 || a >= SIM_ATK_COUNT)
        return "";
    return alerts[a];
}

size_t sim_plan_kinds(const struct sim_plan *p)
{
    size_t n = 0;
    for (int a = 0; a < SIM_ATK_COUNT; a++)
        if (p->mask & (1u << a))
            n++;
    return n;
}

/* The i-th enabled attack (i < kinds). */
static enum sim_attack nth_kind(const struct sim_plan *p, size_t i)
{
    for (int a = 0; a < SIM_ATK_COUNT; a++) {
        if (!(p->mask & (1u << a)))
            continue;
        if (i == 0)
            return (enum sim_attack)a;
        i--;
    }
    return SIM_ATK_CLONE; /* not reached when i < kinds */
}

double sim_plan_at(const struct sim_plan *p, size_t n, enum sim_attack *kind)
{
    size_t k = sim_plan_kinds(p);
    double calm = p->calm_s > 0 ? p->calm_s : SIM_PLAN_CALM_S;

    if (k == 0)
        return -1.0;
    *kind = nth_kind(p, n % k);
    if (n < k)
        return SIM_PLAN_FIRST_S + (double)n * SIM_PLAN_STEP_S;
    /* after the first round: one per calm period */
    return SIM_PLAN_FIRST_S + (double)(k - 1) * SIM_PLAN_STEP_S + (double)(n - k + 1) * calm;
}
