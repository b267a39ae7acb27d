/*
 * canvas.h - an off-screen grid of cells (one code point + one theme
 * element each) that every part of the dashboard draws on: tab bar,
 * status bar, the seven views, overlays and banners.  Nothing here knows
 * curses; the screen layer (screen.c, the only user of tcurses.h) copies
 * the cells that changed since the last frame to the terminal, and the
 * tests read a canvas back as text.
 *
 * Glyphs: callers ask for a named glyph (canvas_glyph) and get the
 * Unicode form, or its ASCII twin when the canvas is in ASCII mode
 * (TUI.md §7).  Text written with canvas_text() is sanitised: control
 * characters become '?', invalid UTF-8 becomes U+FFFD ('?' in ASCII
 * mode), any non-ASCII character becomes '?' in ASCII mode, and a wide
 * character (wcwidth 2) takes two cells (the second holds CANVAS_CONT).
 * Writes outside the canvas are clipped, never an error.
 */
#ifndef GP_TUI_CANVAS_H
#define GP_TUI_CANVAS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tui/theme.h"

#define CANVAS_CONT 0xFFFFFFFFu /* right half of a wide character */

/* Extra attributes a view may add on top of its element's style. */
#define CANVAS_A_BOLD    0x01u
#define CANVAS_A_REVERSE 0x02u
#define CANVAS_A_UNDER   0x04u

struct cell {
    uint32_t ch;  /* code point, ' ' when blank */
    uint8_t elem; /* enum theme_elem */
    uint8_t attr; /* CANVAS_A_* */
};

struct canvas {
    int w, h;
    bool ascii;         /* ASCII twins of every glyph, '?' for other text */
    struct cell *cells; /* w*h, row-major */
};

enum glyph {
    G_HLINE,
    G_VLINE,
    G_TL,
    G_TR,
    G_BL,
    G_BR,
    G_TEE_L,
    G_TEE_R,
    G_TEE_T,
    G_TEE_B,
    G_CROSS,
    G_SEP,          /* │ in the tab bar */
    G_DOT_LIVE,     /* ● */
    G_DOT_RETRY,    /* ◐ */
    G_DOT_DOWN,     /* ○ */
    G_BACKFILL,     /* ↺ */
    G_UNSEEN,       /* • */
    G_CHAIN_OK,     /* │ */
    G_CHAIN_BROKEN, /* ╳ */
    G_SHADE0,
    G_SHADE1,
    G_SHADE2,
    G_SHADE3,
    G_SHADE4,   /* ' ' ░ ▒ ▓ █ */
    G_BAR_FULL, /* █ (bar charts) */
    G_ELLIPSIS, /* … */
    G_ARROW_UP,
    G_ARROW_DOWN,
    G_BLOCK, /* █ for the 3x5 big font (ASCII '#') */
    G_COUNT
};

/* Sets up an empty canvas of w x h (w, h >= 0; 0 gives an empty grid). */
void canvas_init(struct canvas *c, int w, int h, bool ascii);
/* Changes the size; contents become blank. */
void canvas_resize(struct canvas *c, int w, int h);
void canvas_free(struct canvas *c);
/* Blanks every cell with element e. */
void canvas_clear(struct canvas *c, enum theme_elem e);
/* The cell at (x, y) or NULL when outside. */
struct cell *canvas_at(struct canvas *c, int x, int y);
const struct cell *canvas_cat(const struct canvas *c, int x, int y);

/* Code point of a glyph in the canvas' mode. */
uint32_t canvas_glyph(const struct canvas *c, enum glyph g);
/* Sparkline level 0..7 (clamped): U+2581..U+2588, ASCII "_.,-=+*#".
 * (Added by T3.) */
uint32_t canvas_spark(const struct canvas *c, int level);
/* Puts one code point (clipped). */
void canvas_putc(struct canvas *c, int x, int y, uint32_t ch, enum theme_elem e);
/* Fills a rectangle with ch. */
void canvas_fill(struct canvas *c, int x, int y, int w, int h, uint32_t ch, enum theme_elem e);
/*
 * Writes UTF-8 text at (x, y) using at most maxw columns (maxw < 0: to
 * the right edge).  When the text is longer, it is cut and its last
 * column shows G_ELLIPSIS.  Returns the columns written.
 */
int canvas_text(struct canvas *c, int x, int y, int maxw, const char *utf8, enum theme_elem e);
/* printf-style canvas_text. */
int canvas_printf(struct canvas *c, int x, int y, int maxw, enum theme_elem e, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* Display width in columns of UTF-8 text as canvas_text would draw it. */
int canvas_text_width(const struct canvas *c, const char *utf8);
/* Adds attr to the cells of a rectangle (e.g. the selected row). */
void canvas_attr(struct canvas *c, int x, int y, int w, int h, uint8_t attr);
/* Sets the element of a rectangle, keeping the code points. */
void canvas_style(struct canvas *c, int x, int y, int w, int h, enum theme_elem e);
/* A box border (w, h >= 2) in element e. */
void canvas_box(struct canvas *c, int x, int y, int w, int h, enum theme_elem e);
/* A horizontal bar of value/max over width columns (G_BAR_FULL). */
void canvas_bar(struct canvas *c, int x, int y, int width, double value, double max,
                enum theme_elem e);
/* Digits/letters in the 3x5 block font (kiosk large text); returns the
 * columns used (4 per character with its gap).  Characters without a
 * glyph in the font are drawn as blank. */
int canvas_bigtext(struct canvas *c, int x, int y, const char *text, enum theme_elem e);

/* Row y as UTF-8 text (trailing blanks kept; CANVAS_CONT cells skipped)
 * into out (NUL-terminated, cut to outlen).  For tests and plain output. */
void canvas_row_text(const struct canvas *c, int y, char *out, size_t outlen);

#endif
