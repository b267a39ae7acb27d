/*
 * screen.c - curses for the dashboard.  Sets up the terminal (cbreak, no
 * echo, keypad, non-blocking reads, 25 ms ESCDELAY, hidden cursor),
 * picks the colour depth, turns theme elements into colour pairs (pair
 * number = element + 1; true colour uses ncurses' direct-colour numbers,
 * which are 0xRRGGBB), and blits canvases.  The previous frame is kept
 * so a blit writes only changed cells; curses then sends only what it
 * must.  Resizes are read with TIOCGWINSZ because the glue owns SIGWINCH
 * through a libev watcher.
 *
 * Global state: `g_curses_up`, so a fatal-signal handler can restore the
 * terminal; it is the only global and is set/cleared by open/close.
 */
#include "tui/screen.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "tui/keys.h"
#include "tui/tcurses.h"
#include "util/xalloc.h"

static volatile sig_atomic_t g_curses_up;

struct screen {
    enum theme_depth depth;
    bool mouse;
    int w, h;
    struct canvas prev; /* last frame written */
    bool prev_valid;
    attr_t attrs[THEME_ELEM_COUNT];
    short pair[THEME_ELEM_COUNT];
};

enum theme_depth screen_pick_depth(const char *term, int colors, const char *no_color,
                                   enum tui_color opt)
{
    if (opt == TUI_COLOR_NEVER)
        return THEME_DEPTH_MONO;
    if (no_color && *no_color && opt != TUI_COLOR_ALWAYS)
        return THEME_DEPTH_MONO;
    size_t tl = term ? strlen(term) : 0;
    if (colors >= (1 << 24) || (tl > 7 && !strcmp(term + tl - 7, "-direct") && colors >= 256))
        return THEME_DEPTH_TRUE;
    if (colors >= 256)
        return THEME_DEPTH_256;
    if (colors >= 16)
        return THEME_DEPTH_16;
    if (colors >= 8)
        return THEME_DEPTH_8;
    return THEME_DEPTH_MONO;
}

void screen_emergency_restore(void)
{
    if (g_curses_up) {
        g_curses_up = 0;
        endwin();
    }
}

static void tty_size(int *w, int *h)
{
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0) {
        *w = ws.ws_col;
        *h = ws.ws_row;
    } else {
        *w = COLS;
        *h = LINES;
    }
}

struct screen *screen_open(enum tui_color color, bool mouse, char *err, size_t errlen)
{
    struct screen *s;
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        snprintf(err, errlen, "not a terminal");
        return NULL;
    }
    /* newterm rather than initscr: initscr exits the process on error. */
    SCREEN *sc = newterm(NULL, stdout, stdin);
    if (!sc) {
        snprintf(err, errlen, "cannot initialise the terminal (TERM=%s)",
                 getenv("TERM") ? getenv("TERM") : "");
        return NULL;
    }
    set_term(sc);
    g_curses_up = 1;
    s = xcalloc(1, sizeof *s);
    set_escdelay(25);
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE);
    intrflush(stdscr, FALSE);
    curs_set(0);
    s->mouse = mouse;
    if (mouse)
        mousemask(BUTTON4_PRESSED | BUTTON5_PRESSED | BUTTON1_CLICKED, NULL);
    int colors = 0;
    if (has_colors() && color != TUI_COLOR_NEVER) {
        start_color();
        use_default_colors();
        colors = COLORS;
    }
    s->depth = screen_pick_depth(getenv("TERM"), colors, getenv("NO_COLOR"), color);
    tty_size(&s->w, &s->h);
    if (s->w != COLS || s->h != LINES)
        resizeterm(s->h, s->w);
    canvas_init(&s->prev, 0, 0, false);
    return s;
}

void screen_close(struct screen *s)
{
    if (!s)
        return;
    screen_emergency_restore();
    canvas_free(&s->prev);
    free(s);
}

enum theme_depth screen_depth(const struct screen *s)
{
    return s->depth;
}

static attr_t map_attrs(unsigned a)
{
    attr_t r = A_NORMAL;
    if (a & THEME_ATTR_BOLD)
        r |= A_BOLD;
    if (a & THEME_ATTR_UNDERLINE)
        r |= A_UNDERLINE;
    if (a & THEME_ATTR_REVERSE)
        r |= A_REVERSE;
    if (a & THEME_ATTR_DIM)
        r |= A_DIM;
#ifdef A_ITALIC
    if (a & THEME_ATTR_ITALIC)
        r |= A_ITALIC;
#endif
    return r;
}

void screen_apply_theme(struct screen *s, const struct theme *t)
{
    for (int e = 0; e < THEME_ELEM_COUNT; e++) {
        struct theme_style st = {THEME_COLOR_DEFAULT, THEME_COLOR_DEFAULT, 0};
        theme_resolve(t, (enum theme_elem)e, s->depth, &st);
        s->attrs[e] = map_attrs(st.attrs);
        s->pair[e] = 0;
        if (s->depth == THEME_DEPTH_MONO)
            continue;
        int fg = st.fg, bg = st.bg;
        if (s->depth == THEME_DEPTH_8) {
            /* bright colours via bold on 8-colour terminals */
            if (fg >= 8) {
                fg -= 8;
                s->attrs[e] |= A_BOLD;
            }
            if (bg >= 8)
                bg -= 8;
        }
        if (fg >= COLORS)
            fg = THEME_COLOR_DEFAULT;
        if (bg >= COLORS)
            bg = THEME_COLOR_DEFAULT;
        if (init_extended_pair(e + 1, fg, bg) != ERR)
            s->pair[e] = (short)(e + 1);
    }
    s->prev_valid = false;
}

void screen_size(const struct screen *s, int *w, int *h)
{
    *w = s->w;
    *h = s->h;
}

bool screen_check_resize(struct screen *s)
{
    int w, h;
    tty_size(&w, &h);
    if (w == s->w && h == s->h)
        return false;
    s->w = w;
    s->h = h;
    resizeterm(h, w);
    s->prev_valid = false;
    return true;
}

long screen_blit(struct screen *s, const struct canvas *c, bool full)
{
    long written = 0;
    int w = c->w < s->w ? c->w : s->w, h = c->h < s->h ? c->h : s->h;
    if (full || !s->prev_valid || s->prev.w != c->w || s->prev.h != c->h) {
        full = true;
        if (s->prev.w != c->w || s->prev.h != c->h)
            canvas_resize(&s->prev, c->w, c->h);
        clearok(curscr, TRUE);
    }
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            const struct cell *cl = canvas_cat(c, x, y);
            struct cell *pv = canvas_at(&s->prev, x, y);
            if (!full && pv->ch == cl->ch && pv->elem == cl->elem && pv->attr == cl->attr)
                continue;
            *pv = *cl;
            if (cl->ch == CANVAS_CONT)
                continue;
            unsigned e = cl->elem < THEME_ELEM_COUNT ? cl->elem : THEME_BASE;
            attr_t a = s->attrs[e];
            if (cl->attr & CANVAS_A_BOLD)
                a |= A_BOLD;
            if (cl->attr & CANVAS_A_REVERSE)
                a |= A_REVERSE;
            if (cl->attr & CANVAS_A_UNDER)
                a |= A_UNDERLINE;
            wchar_t wc[2] = {(wchar_t)(cl->ch ? cl->ch : ' '), 0};
            cchar_t cc;
            if (setcchar(&cc, wc, a, s->pair[e], NULL) == ERR)
                continue;
            mvadd_wch(y, x, &cc);
            written++;
        }
    }
    s->prev_valid = true;
    wnoutrefresh(stdscr);
    doupdate();
    return written;
}

bool screen_input_gone(const struct screen *s)
{
    struct pollfd p = {STDIN_FILENO, POLLIN, 0};
    (void)s;
    if (poll(&p, 1, 0) < 0)
        return false;
    return (p.revents & (POLLHUP | POLLERR | POLLNVAL)) != 0 || !isatty(STDIN_FILENO);
}

int screen_key(struct screen *s)
{
    wint_t wc;
    int r = wget_wch(stdscr, &wc);
    if (r == ERR)
        return -1;
    if (r == OK) {
        if (wc == '\r' || wc == '\n')
            return TK_ENTER;
        if (wc == 8 || wc == 127)
            return TK_BACKSPACE;
        return (int)wc;
    }
    switch (wc) { /* KEY_CODE_YES */
    case KEY_UP:
        return TK_UP;
    case KEY_DOWN:
        return TK_DOWN;
    case KEY_LEFT:
        return TK_LEFT;
    case KEY_RIGHT:
        return TK_RIGHT;
    case KEY_PPAGE:
        return TK_PGUP;
    case KEY_NPAGE:
        return TK_PGDN;
    case KEY_HOME:
        return TK_HOME;
    case KEY_END:
        return TK_END;
    case KEY_BTAB:
        return TK_BTAB;
    case KEY_F(1):
        return TK_F1;
    case KEY_F(5):
        return TK_F5;
    case KEY_ENTER:
        return TK_ENTER;
    case KEY_BACKSPACE:
        return TK_BACKSPACE;
    case KEY_RESIZE:
        return TK_RESIZE;
    case KEY_MOUSE: {
        MEVENT me;
        if (!s->mouse || getmouse(&me) != OK)
            return 0;
        if (me.bstate & BUTTON4_PRESSED)
            return TK_MOUSE_UP;
#ifdef BUTTON5_PRESSED
        if (me.bstate & BUTTON5_PRESSED)
            return TK_MOUSE_DOWN;
#endif
        return 0;
    }
    default:
        return 0; /* unknown key: ignored */
    }
}

void screen_bell(struct screen *s)
{
    (void)s;
    if (beep() == ERR)
        flash();
}
