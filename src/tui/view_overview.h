/*
 * view_overview.h - the Overview view (TUI.md §4.1).  view_overview() is declared with the
 * other views in views.h; this header gives view_overview.c its same-stem
 * header and pulls in that declaration.
 */
#ifndef GP_TUI_VIEW_OVERVIEW_H
#define GP_TUI_VIEW_OVERVIEW_H

#include "tui/views.h"

#endif
