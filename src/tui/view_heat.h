/*
 * view_heat.h - the Partition heat view (TUI.md §4.6).  view_heat() is declared with the
 * other views in views.h; this header gives view_heat.c its same-stem
 * header and pulls in that declaration.
 */
#ifndef GP_TUI_VIEW_HEAT_H
#define GP_TUI_VIEW_HEAT_H

#include "tui/views.h"

#endif
