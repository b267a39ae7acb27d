/*
 * chk_chain.h - provenance chain checks on an inserted event against the
 * event it must link to (the previous seq):
 *   chain_gap   - more than 72 h between the previous event and this one;
 *   chain_break - this event's previousHash is not the previous event's
 *                 hash (or, for the first event, not GENESIS).
 * Dedup window: the event's seq (its timestamp for events without one).
 */
#ifndef GP_DETECT_CHK_CHAIN_H
#define GP_DETECT_CHK_CHAIN_H

#include <stddef.h>

#include "detect/checks.h"

/* prev is the event ev links to, or NULL when it is unknown (then only a
 * first event, seq 1, can be checked).  Fills up to two hits (gap first)
 * and returns their number.  Hits borrow from prev and ev. */
size_t chk_chain(const struct det_prev_event *prev, const struct det_event *ev,
                 struct det_hit hits[2]);

#endif
