/*
 * view_feed.h - the Live Threat Feed view (TUI.md §4.2).  view_feed() is declared with the
 * other views in views.h; this header gives view_feed.c its same-stem
 * header and pulls in that declaration.
 */
#ifndef GP_TUI_VIEW_FEED_H
#define GP_TUI_VIEW_FEED_H

#include "tui/views.h"

#endif
