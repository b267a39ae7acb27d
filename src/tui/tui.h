/*
 * tui.h - the dashboard (`genuproof tui`, and the front of `genuproof
 * demo`): configuration and the entry point.  tui_run() sets up the
 * terminal (or plain output), the net layer and the model on the
 * caller's libev loop, runs the loop until the user quits (never in
 * kiosk mode), restores the terminal and returns an exit status.
 */
#ifndef GP_TUI_TUI_H
#define GP_TUI_TUI_H

#include <stdbool.h>
#include <stddef.h>

struct ev_loop;

enum tui_color { TUI_COLOR_AUTO = 0, TUI_COLOR_ALWAYS, TUI_COLOR_NEVER };
enum tui_bell { TUI_BELL_OFF = 0, TUI_BELL_CRITICAL, TUI_BELL_HIGH };

#define TUI_BRANDS_MAX 64

struct tui_config {
    const char *url;     /* base URL; default http://127.0.0.1:8080 */
    const char *api_key; /* NULL: none */
    const char *brands[TUI_BRANDS_MAX];
    size_t nbrands;
    bool all_brands;   /* --all-brands (admin key: /api/brands/list) */
    const char *theme; /* name or NULL (default-dark; kiosk: kiosk-hc) */
    const char *theme_dir;
    enum tui_color color;
    bool ascii, tz_local, readonly, kiosk, mouse, plain, shift;
    double rotate_s;   /* kiosk rotation period (20) */
    const char *views; /* kiosk rotation list (overview,feed,map,ops) */
    enum tui_bell bell;
    const char *takeover; /* severity that takes over in kiosk ("critical") */
    const char *record_path, *replay_path;
    double speed;          /* replay speed */
    int ops_days;          /* 7 */
    const char *demo_note; /* demo: a line for the status/help ("demo: simulator at N/s") or NULL */
};

/* Fills defaults (url, rotate, views, speed, ops_days, takeover). */
void tui_config_defaults(struct tui_config *cfg);
/* Runs the dashboard on loop until quit.  Returns 0, or 1 after a fatal
 * start-up error (printed to stderr). */
int tui_run(struct ev_loop *loop, const struct tui_config *cfg);

#endif
