/*
 * chk_tamper.c - hash tampering check (see chk_tamper.h).  The verify
 * route stores "suspicious" when the product's recomputed hash or its
 * signature does not match: the stored record was altered.
 */
#include "detect/chk_tamper.h"

#include <string.h>

bool chk_tamper(const struct det_scan *sc, struct det_hit *hit)
{
    if (!sc->result || strcmp(sc->result, "authentic") == 0)
        return false;
    memset(hit, 0, sizeof(*hit));
    hit->type = DET_TAMPER;
    memcpy(hit->window, sc->timestamp, 10);
    hit->window[10] = '\0';
    hit->result = sc->result;
    return true;
}
