/*
 * chk_burst.c - scan burst check (see chk_burst.h).  The state remembers
 * the DET_BURST_MIN_SCANS newest scan times, which is exactly enough to
 * know whether the hour ending at a scan holds that many scans.
 */
#include "detect/chk_burst.h"

#include <string.h>

bool chk_burst(const struct det_state *st, const struct det_scan *sc, struct det_hit *hit)
{
    unsigned n = det_state_scans_between(st, sc->ts_ms - DET_BURST_WINDOW_MS, sc->ts_ms);

    if (n < DET_BURST_MIN_SCANS)
        return false;
    memset(hit, 0, sizeof(*hit));
    hit->type = DET_BURST;
    memcpy(hit->window, sc->timestamp, 13); /* YYYY-MM-DDTHH */
    hit->window[13] = '\0';
    hit->scans_in_hour = n;
    return true;
}
