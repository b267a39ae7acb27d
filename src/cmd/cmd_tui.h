/*
 * cmd_tui.h - `genuproof tui` (the dashboard client).
 */
#ifndef GP_CMD_CMD_TUI_H
#define GP_CMD_CMD_TUI_H

#include "cmd/cmd.h"
#include "cmd/options.h"

/* The options of `genuproof tui` (TUI.md §1). */
extern const struct opt_def tui_options[];

#endif
