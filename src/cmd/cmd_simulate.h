/*
 * cmd_simulate.h - `genuproof simulate` (the traffic simulator).
 */
#ifndef GP_CMD_CMD_SIMULATE_H
#define GP_CMD_CMD_SIMULATE_H

#include "cmd/cmd.h"

#endif
