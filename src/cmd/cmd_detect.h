/*
 * cmd_detect.h - `genuproof detect` (the distributed stream detector).
 */
#ifndef GP_CMD_CMD_DETECT_H
#define GP_CMD_CMD_DETECT_H

#include "cmd/cmd.h"

#endif
