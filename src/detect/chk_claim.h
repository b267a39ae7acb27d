/*
 * chk_claim.h - claim violation: the product is claimed and a scan made
 * at or after the claim comes from a device whose fingerprint
 * (sha256(ip ":" userAgent), API.md §3.8) differs from the claimant's
 * ([D13] fixed: the claimant's own scans are fine).  Dedup window: the
 * claim's claimedAt, i.e. the claim's lifetime.
 */
#ifndef GP_DETECT_CHK_CLAIM_H
#define GP_DETECT_CHK_CLAIM_H

#include <stdbool.h>

#include "detect/checks.h"

/* The fingerprint of a scan: the stored one when it is 64 chars, else
 * computed from its ip and user agent. */
void chk_scan_fingerprint(const struct det_scan *sc, char out[CRYPTO_HEX_LEN + 1]);

/* Returns true and fills *hit when the check fires (hit borrows from
 * claim). */
bool chk_claim(const struct det_claim *claim, const struct det_scan *sc, struct det_hit *hit);

#endif
