/*
 * timescale.h - GENUPROOF_TIME_SCALE: every wait in the product (backoff,
 * retries, heartbeats, leases, rotation, timeouts) goes through here so
 * tests can shrink them.  The factor is read once from the environment
 * (default 1, clamped to [0.001, 1000]).
 */
#ifndef GP_UTIL_TIMESCALE_H
#define GP_UTIL_TIMESCALE_H

double time_scale(void);
/* seconds * time_scale(), never below 0.001 s. */
double scaled(double seconds);
/* For tests: force a factor (<= 0 re-reads the environment). */
void time_scale_set(double factor);

#endif
