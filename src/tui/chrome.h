/*
 * chrome.h - everything on screen that is not a view (TUI.md §2): the
 * layout of a frame at a given size, the tab bar, the status bar, the
 * key-hint row, the help overlay, prompts, the brand picker, kiosk
 * banners and the "Terminal too small" notice.  Pure drawing onto a
 * canvas from the ui state, the model and the stream records, so the
 * tests read the chrome back as text at any size.
 */
#ifndef GP_TUI_CHROME_H
#define GP_TUI_CHROME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tui/canvas.h"
#include "tui/keys.h"
#include "tui/model.h"
#include "tui/net.h"

#define CHROME_MIN_W 40
#define CHROME_MIN_H 10

struct layout {
    int w, h;
    bool too_small;     /* below 40x10: only the notice is drawn */
    bool compact;       /* below 80x24 */
    bool short_tabs;    /* below 100 columns */
    bool hints;         /* key-hint row on row h-2 */
    bool big;           /* kiosk large text: W >= 100 and H >= 30 */
    int cx, cy, cw, ch; /* content rectangle */
};

/* What the chrome shows besides the ui state and the model. */
struct chrome_info {
    int64_t now_ms;
    const struct stream_info *streams; /* n_streams records */
    size_t n_streams;
    double countdown_s; /* kiosk: seconds to the next rotation, < 0 none */
    const char *note;   /* extra status text (theme error, demo note) or NULL */
    bool bell_on;       /* show the bell mode */
};

/* Computes the layout of a w x h terminal. */
void chrome_layout(int w, int h, bool kiosk, struct layout *out);

/* "● LIVE 3/3", "◐ RETRY 1/3 8s", "○ DOWN" into out; returns the theme
 * element to draw it with. */
enum theme_elem chrome_streams_text(const struct canvas *c, const struct stream_info *st, size_t n,
                                    int64_t now_ms, char *out, size_t outlen);
/* Newest byte of any stream (0: none yet). */
int64_t chrome_data_ms(const struct stream_info *st, size_t n);
/* "3s", "2m13s", "1h05m" */
void chrome_duration(int64_t ms, char *out, size_t outlen);

void chrome_tabbar(struct canvas *c, const struct layout *l, const struct ui_state *s,
                   const struct model *m, const struct chrome_info *ci);
void chrome_status(struct canvas *c, const struct layout *l, const struct ui_state *s,
                   const struct model *m, const struct chrome_info *ci);
/* Hint row, or the open prompt (filter, command, recall, quit). */
void chrome_hints(struct canvas *c, const struct layout *l, const struct ui_state *s);
/* Overlays drawn over the content: help and brand picker. */
void chrome_overlay(struct canvas *c, const struct layout *l, const struct ui_state *s,
                    const struct model *m);
/* A 3-row banner at row y (kiosk takeover). */
void chrome_banner(struct canvas *c, int y, const char *text);
/* One full-width STALE row at y. */
void chrome_stale(struct canvas *c, int y, const char *text);
/* Kiosk large text (W >= 100, H >= 30): the clock in the 3x5 block font,
 * right-aligned on rows y..y+4 ("14:03:27Z"; with tz_local the time
 * without its zone, whose letters the font lacks).  Returns the rows
 * used, blank separator included (6), or 0 when it does not fit. */
int chrome_bigclock(struct canvas *c, int y, int64_t now_ms, bool tz_local);
/* Blanks the canvas and centres "Terminal too small: WxH (need 40x10)". */
void chrome_too_small(struct canvas *c);

#endif
