/*
 * view_map.h - the Product Scan Map view (TUI.md §4.3).  view_map() is
 * declared with the other views in views.h; this header only gives
 * view_map.c its same-stem header and pulls in that declaration.
 */
#ifndef GP_TUI_VIEW_MAP_H
#define GP_TUI_VIEW_MAP_H

#include "tui/views.h"

#endif
