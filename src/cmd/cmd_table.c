/*
 * cmd_table.c - `genuproof table`: DynamoDB table administration.  Placeholder until its
 * issue lands: refuses with exit status 2.
 */
#include "cmd/cmd_table.h"

#include <stdio.h>

int cmd_table_admin(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "genuproof table: not available in this version\n");
    return 2;
}
