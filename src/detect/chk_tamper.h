/*
 * chk_tamper.h - hash tampering: the scan's verification result is
 * present and not "authentic" (the product record failed its hash or
 * signature check when it was scanned).  Dedup window: the scan's UTC
 * day.
 */
#ifndef GP_DETECT_CHK_TAMPER_H
#define GP_DETECT_CHK_TAMPER_H

#include <stdbool.h>

#include "detect/checks.h"

/* Returns true and fills *hit when the check fires. */
bool chk_tamper(const struct det_scan *sc, struct det_hit *hit);

#endif
