/*
 * chk_claim.c - claim violation check (see chk_claim.h).  Only scans made
 * at or after the claim count: a scan before the claim (processed late,
 * or replayed) is not a violation of it.
 */
#include "detect/chk_claim.h"

#include <string.h>

void chk_scan_fingerprint(const struct det_scan *sc, char out[CRYPTO_HEX_LEN + 1])
{
    if (sc->fingerprint && strlen(sc->fingerprint) == CRYPTO_HEX_LEN) {
        memcpy(out, sc->fingerprint, CRYPTO_HEX_LEN + 1);
        return;
    }
    crypto_fingerprint(sc->ip ? sc->ip : "unknown", sc->user_agent ? sc->user_agent : "unknown",
                       out);
}

bool chk_claim(const struct det_claim *claim, const struct det_scan *sc, struct det_hit *hit)
{
    char fp[CRYPTO_HEX_LEN + 1];

    /* A claim without a fingerprint cannot be compared with. */
    if (!claim->present || !claim->fingerprint[0] || sc->ts_ms < claim->claimed_ms)
        return false;
    chk_scan_fingerprint(sc, fp);
    if (crypto_ct_streq(fp, claim->fingerprint))
        return false;
    memset(hit, 0, sizeof(*hit));
    hit->type = DET_CLAIM;
    memcpy(hit->window, claim->claimed_at, ISO_LEN + 1);
    hit->claimed_at = claim->claimed_at;
    hit->claimed_by = claim->claimed_by;
    return true;
}
