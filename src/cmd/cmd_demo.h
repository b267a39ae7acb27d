/*
 * cmd_demo.h - `genuproof demo` (the one-command demo).
 */
#ifndef GP_CMD_CMD_DEMO_H
#define GP_CMD_CMD_DEMO_H

#include "cmd/cmd.h"

#endif
