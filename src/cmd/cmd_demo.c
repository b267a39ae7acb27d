/*
 * cmd_demo.c - `genuproof demo`: the one-command demo.  Placeholder until its
 * issue lands: refuses with exit status 2.
 */
#include "cmd/cmd_demo.h"

#include <stdio.h>

int cmd_demo(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "genuproof demo: not available in this version\n");
    return 2;
}
