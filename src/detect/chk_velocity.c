/*
 * chk_velocity.c - scan velocity check (see chk_velocity.h).  The total
 * is the number of scans the detector has processed for the product up
 * to this one (state.c), not the product's live scanCount, so the answer
 * depends only on the stream and replays agree.
 */
#include "detect/chk_velocity.h"

#include <string.h>

bool chk_velocity(const struct chk_velocity_cfg *cfg, uint64_t total, int64_t created_ms,
                  const struct det_scan *sc, struct det_hit *hit)
{
    double days = (double)(sc->ts_ms - created_ms) / (double)DET_DAY_MS;
    double rate;

    if (days < 1)
        days = 1;
    rate = (double)total / days;
    if (!((double)total > cfg->min_total && rate > cfg->min_rate))
        return false;
    memset(hit, 0, sizeof(*hit));
    hit->type = DET_VELOCITY;
    memcpy(hit->window, sc->timestamp, 10);
    hit->window[10] = '\0';
    hit->total = (double)total;
    hit->rate = rate;
    hit->days = days;
    return true;
}
