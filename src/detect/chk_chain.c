/*
 * chk_chain.c - provenance chain checks (see chk_chain.h).  The previous
 * event comes from the detector's state (or a bounded lookup by the
 * consumer), never from loading the whole chain.  Unlike the original
 * Lambda, which compared the last two events by sort key ([D16]), the
 * pair compared is this event and its predecessor in seq order.
 */
#include "detect/chk_chain.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* The dedup window of an event: its seq, or its timestamp without one. */
static void event_window(const struct det_event *ev, char *out)
{
    if (ev->seq)
        snprintf(out, DET_WINDOW_MAX + 1, "%" PRIu32, ev->seq);
    else
        memcpy(out, ev->timestamp, ISO_LEN + 1);
}

size_t chk_chain(const struct det_prev_event *prev, const struct det_event *ev,
                 struct det_hit hits[2])
{
    size_t n = 0;
    const char *expected;

    if (prev && ev->ts_ms - prev->ts_ms > DET_CHAIN_GAP_MS) {
        struct det_hit *h = &hits[n++];
        memset(h, 0, sizeof(*h));
        h->type = DET_CHAIN_GAP;
        event_window(ev, h->window);
        h->seq = ev->seq;
        h->gap_hours = (double)(ev->ts_ms - prev->ts_ms) / 3600000.0;
        h->prev_actor = prev->actor;
        h->actor = ev->actor ? ev->actor : "";
    }
    if (prev)
        expected = prev->hash;
    else if (ev->seq == 1)
        expected = CRYPTO_GENESIS;
    else
        return n;
    if (!ev->previous_hash || strcmp(ev->previous_hash, expected) != 0) {
        struct det_hit *h = &hits[n++];
        memset(h, 0, sizeof(*h));
        h->type = DET_CHAIN_BREAK;
        event_window(ev, h->window);
        h->seq = ev->seq;
        h->expected_hash = expected;
        h->previous_hash = ev->previous_hash ? ev->previous_hash : "";
        h->prev_actor = prev ? prev->actor : NULL;
        h->actor = ev->actor ? ev->actor : "";
    }
    return n;
}
