/*
 * chk_velocity.h - scan velocity, the original's lifetime rule (API.md §5
 * step 7f) evaluated as of the scan: total = scans processed up to and
 * including it, days = max(1, (scan time - product createdAt) / 1 day),
 * fires when total > min_total and total / days > min_rate.  Dedup
 * window: the scan's UTC day.
 */
#ifndef GP_DETECT_CHK_VELOCITY_H
#define GP_DETECT_CHK_VELOCITY_H

#include <stdbool.h>
#include <stdint.h>

#include "detect/checks.h"

struct chk_velocity_cfg {
    double min_total; /* DET_VELOCITY_MIN_TOTAL */
    double min_rate;  /* DET_VELOCITY_MIN_RATE */
};

/* total: scans as of this one (>= 1); created_ms: the product's
 * createdAt.  Returns true and fills *hit when the check fires. */
bool chk_velocity(const struct chk_velocity_cfg *cfg, uint64_t total, int64_t created_ms,
                  const struct det_scan *sc, struct det_hit *hit);

#endif
