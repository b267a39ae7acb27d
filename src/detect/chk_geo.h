/*
 * chk_geo.h - geographic anomaly: the product was scanned from
 * DET_GEO_MIN_COUNTRIES or more distinct known countries in the 24 h
 * ending at this scan (API.md §5 Reimpl).  Dedup window: the scan's UTC
 * day.
 */
#ifndef GP_DETECT_CHK_GEO_H
#define GP_DETECT_CHK_GEO_H

#include <stdbool.h>

#include "detect/checks.h"
#include "detect/state.h"

/* st already holds this scan.  Returns true and fills *hit when the
 * check fires (hit->countries point into st). */
bool chk_geo(const struct det_state *st, const struct det_scan *sc, struct det_hit *hit);

#endif
