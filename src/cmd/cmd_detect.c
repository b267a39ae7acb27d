/*
 * cmd_detect.c - `genuproof detect`: the distributed stream detector.  Placeholder until its
 * issue lands: refuses with exit status 2.
 */
#include "cmd/cmd_detect.h"

#include <stdio.h>

int cmd_detect(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "genuproof detect: not available in this version\n");
    return 2;
}
