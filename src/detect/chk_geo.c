/*
 * chk_geo.c - geographic anomaly check (see chk_geo.h).  The window is
 * the 24 h ending at the scan's own timestamp, so a replay or a backlog
 * gives the same answer as live processing ([D09] fixed); only known
 * countries count ([D14] fixed).
 */
#include "detect/chk_geo.h"

#include <string.h>

bool chk_geo(const struct det_state *st, const struct det_scan *sc, struct det_hit *hit)
{
    const char *list[DET_COUNTRIES_MAX];
    size_t n = det_state_countries_between(st, sc->ts_ms - DET_GEO_WINDOW_MS, sc->ts_ms, list);

    if (n < DET_GEO_MIN_COUNTRIES)
        return false;
    memset(hit, 0, sizeof(*hit));
    hit->type = DET_GEO;
    memcpy(hit->window, sc->timestamp, 10); /* YYYY-MM-DD */
    hit->window[10] = '\0';
    hit->ncountries = n;
    memcpy(hit->countries, list, n * sizeof(list[0]));
    return true;
}
