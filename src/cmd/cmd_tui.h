/*
 * cmd_tui.h - `genuproof tui` (the dashboard client).
 */
#ifndef GP_CMD_CMD_TUI_H
#define GP_CMD_CMD_TUI_H

#include "cmd/cmd.h"

#endif
