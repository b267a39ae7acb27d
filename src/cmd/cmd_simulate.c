/*
 * cmd_simulate.c - `genuproof simulate`: the traffic simulator.  Placeholder until its
 * issue lands: refuses with exit status 2.
 */
#include "cmd/cmd_simulate.h"

#include <stdio.h>

int cmd_simulate(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "genuproof simulate: not available in this version\n");
    return 2;
}
