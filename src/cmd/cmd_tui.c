/*
 * cmd_tui.c - `genuproof tui`: the dashboard client.  Placeholder until its
 * issue lands: refuses with exit status 2.
 */
#include "cmd/cmd_tui.h"

#include <stdio.h>

int cmd_tui(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "genuproof tui: not available in this version\n");
    return 2;
}
