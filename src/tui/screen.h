/*
 * screen.h - the terminal side of the dashboard: curses set-up and
 * teardown, colour depth, theme elements mapped to colour pairs, and the
 * blit of a canvas that writes only the cells that changed since the
 * previous frame.  The only module that uses curses (through tcurses.h).
 */
#ifndef GP_TUI_SCREEN_H
#define GP_TUI_SCREEN_H

#include <stdbool.h>

#include "tui/canvas.h"
#include "tui/theme.h"
#include "tui/tui.h"

struct screen;

/*
 * The colour depth for TERM/colour count/NO_COLOR and --color (TUI.md §6,
 * §7): never -> mono; NO_COLOR non-empty -> mono unless always; a
 * `*-direct` TERM or >= 2^24 colours -> true colour; then 256, 16, 8;
 * fewer -> mono.  Pure, for tests.
 */
enum theme_depth screen_pick_depth(const char *term, int colors, const char *no_color,
                                   enum tui_color opt);

/* Starts curses on the controlling terminal (stdin/stdout).  On error
 * returns NULL with a message in err. */
struct screen *screen_open(enum tui_color color, bool mouse, char *err, size_t errlen);
/* Restores the terminal (endwin) and frees.  NULL is a no-op. */
void screen_close(struct screen *s);
/* Also usable from a fatal-signal handler: endwin if curses is up. */
void screen_emergency_restore(void);

enum theme_depth screen_depth(const struct screen *s);
/* Maps every theme element to a colour pair / attributes for this depth. */
void screen_apply_theme(struct screen *s, const struct theme *t);
/* Current terminal size (after screen_check_resize). */
void screen_size(const struct screen *s, int *w, int *h);
/* Reads the window size from the tty; on change resizes curses and
 * returns true. */
bool screen_check_resize(struct screen *s);
/*
 * Copies the canvas to the terminal: only cells that differ from the
 * previous frame unless full (Ctrl-L, theme change, resize) repaints all.
 * Returns the number of cells written.
 */
long screen_blit(struct screen *s, const struct canvas *c, bool full);
/* Next key as a TK_* code or code point; -1 when none is pending. */
int screen_key(struct screen *s);
/* True when the terminal is gone (hung up: the SSH session or the tmux
 * pane closed).  Input then reads as end of file for ever, which a
 * process that did not get SIGHUP (a program between it and the shell
 * took it) must notice by itself or spin. */
bool screen_input_gone(const struct screen *s);
/* Audible bell, or a flash when the terminal has none. */
void screen_bell(struct screen *s);

#endif
