/*
 * cmd_audit.h - `genuproof audit` (the hot partition report).
 */
#ifndef GP_CMD_CMD_AUDIT_H
#define GP_CMD_CMD_AUDIT_H

#include "cmd/cmd.h"

#endif
