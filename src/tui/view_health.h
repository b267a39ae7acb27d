/*
 * view_health.h - the Health view (TUI.md §4.7).  view_health() is declared with the
 * other views in views.h; this header gives view_health.c its same-stem
 * header and pulls in that declaration.
 */
#ifndef GP_TUI_VIEW_HEALTH_H
#define GP_TUI_VIEW_HEALTH_H

#include "tui/views.h"

#endif
