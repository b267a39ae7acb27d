/*
 * view_ops.h - the Ops-Log scatter-gather view (TUI.md §4.4).  view_ops() is declared with the
 * other views in views.h; this header gives view_ops.c its same-stem
 * header and pulls in that declaration.
 */
#ifndef GP_TUI_VIEW_OPS_H
#define GP_TUI_VIEW_OPS_H

#include "tui/views.h"

#endif
