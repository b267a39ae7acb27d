/*
 * kiosk.h - the schedule of kiosk mode (TUI.md §8) as a pure state
 * machine: view rotation with a countdown, the brand advancing each
 * cycle, critical takeovers (Feed + banner for 30 s, rotation paused for
 * 60 s, later ones queued), the Health view while the server has never
 * answered, and the one-column burn-in shift.  Durations are given
 * already scaled (util/timescale.h) by the caller; time comes in as now.
 */
#ifndef GP_TUI_KIOSK_H
#define GP_TUI_KIOSK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tui/keys.h"
#include "tui/model.h"
#include "tui/views.h"

#define KIOSK_QUEUE 8

struct kiosk {
    enum view_id views[16];
    size_t nviews, cur;
    int64_t rotate_ms, banner_ms, pause_ms, shift_ms;
    int64_t next_rotate_ms;
    int64_t paused_until_ms;
    int64_t banner_until_ms; /* 0: no banner */
    char banner[200];
    char queue[KIOSK_QUEUE][200];
    size_t nqueue;
    enum sev takeover;
    int64_t next_shift_ms;
    int shift; /* 0 or 1 column */
};

/*
 * Sets up the schedule: views is a comma list of view names (NULL or
 * bad: overview,feed,map,ops), durations in ms (already scaled).  Shows
 * the first view in s.
 */
void kiosk_init(struct kiosk *k, struct ui_state *s, const char *views, int64_t rotate_ms,
                int64_t banner_ms, int64_t pause_ms, int64_t shift_ms, enum sev takeover,
                int64_t now_ms);
/* A threat arrived: at or above the takeover level, switches s to the
 * Feed with a banner (or queues it behind the current one).  Returns true
 * when it took over or queued. */
bool kiosk_threat(struct kiosk *k, struct ui_state *s, enum sev sev, const char *text,
                  int64_t now_ms);
/*
 * Advances the schedule to now: expires banners (next queued one shows),
 * rotates views and brands, moves the burn-in shift.  server_down: no
 * stream has ever been LIVE, so the Health view is held.  Returns true
 * when the frame changed.
 */
bool kiosk_tick(struct kiosk *k, struct ui_state *s, bool server_down, int64_t now_ms);
/* Seconds until the next rotation (0 when due or paused). */
double kiosk_countdown(const struct kiosk *k, int64_t now_ms);
/* The active banner text, NULL when none. */
const char *kiosk_banner(const struct kiosk *k, int64_t now_ms);

#endif
