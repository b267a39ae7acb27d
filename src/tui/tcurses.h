/*
 * tcurses.h - the one place the dashboard includes ncurses (STYLE.md §6,
 * after htop's ProvideCurses.h).  Wide-character ncursesw is requested
 * here so every user of curses gets cchar_t, setcchar() and wcwidth()
 * with the same feature macros; tests/unit/test_tui_ncurses_include.c
 * fails the build's tests when any other file includes curses.
 */
#ifndef GP_TUI_TCURSES_H
#define GP_TUI_TCURSES_H

#ifndef NCURSES_WIDECHAR
#define NCURSES_WIDECHAR 1
#endif
#ifndef _XOPEN_SOURCE_EXTENDED
#define _XOPEN_SOURCE_EXTENDED 1
#endif

#if defined(__has_include)
#if __has_include(<ncursesw/curses.h>)
#include <ncursesw/curses.h>
#else
#include <curses.h>
#endif
#else
#include <curses.h>
#endif

#endif
