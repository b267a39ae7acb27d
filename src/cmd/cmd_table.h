/*
 * cmd_table.h - `genuproof table` (DynamoDB table administration).
 */
#ifndef GP_CMD_CMD_TABLE_H
#define GP_CMD_CMD_TABLE_H

#include "cmd/cmd.h"

#endif
