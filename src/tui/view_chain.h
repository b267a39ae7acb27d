/*
 * view_chain.h - the Provenance chain view (TUI.md §4.5).  view_chain() is declared with the
 * other views in views.h; this header gives view_chain.c its same-stem
 * header and pulls in that declaration.
 */
#ifndef GP_TUI_VIEW_CHAIN_H
#define GP_TUI_VIEW_CHAIN_H

#include "tui/views.h"

#endif
