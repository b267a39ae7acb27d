/*
 * chk_burst.h - scan burst: DET_BURST_MIN_SCANS or more scans of the
 * product (this one included) in the hour ending at this scan.  Dedup
 * window: the scan's UTC hour (YYYY-MM-DDTHH).
 */
#ifndef GP_DETECT_CHK_BURST_H
#define GP_DETECT_CHK_BURST_H

#include <stdbool.h>

#include "detect/checks.h"
#include "detect/state.h"

/* st already holds this scan.  Returns true and fills *hit when the
 * check fires. */
bool chk_burst(const struct det_state *st, const struct det_scan *sc, struct det_hit *hit);

#endif
