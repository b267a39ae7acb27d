/*
 * cmd_audit.c - `genuproof audit`: the hot partition report.  Placeholder until its
 * issue lands: refuses with exit status 2.
 */
#include "cmd/cmd_audit.h"

#include <stdio.h>

int cmd_audit(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "genuproof audit: not available in this version\n");
    return 2;
}
