/*
 * main.c - argv -> subcommand table (src/cmd/).
 */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"

const struct cmd cmd_table[] = {
    {"serve", cmd_serve, "API server + SSE + detector on the embedded store"},
    {"tui", cmd_tui, "threat dashboard client (SSE)"},
    {"demo", cmd_demo, "backend + traffic simulator + dashboard in one process"},
    {"detect", cmd_detect, "stream detector worker (distributed mode)"},
    {"simulate", cmd_simulate, "traffic generator against a server"},
    {"audit", cmd_audit, "hot partition report"},
    {"table", cmd_table_admin, "DynamoDB table admin"},
    {NULL, NULL, NULL},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: genuproof <command> [options]\n\ncommands:\n");
    for (const struct cmd *c = cmd_table; c->name; c++)
        fprintf(f, "  %-10s %s\n", c->name, c->summary);
    fprintf(f, "\n'genuproof <command> --help' describes a command's options.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
        !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("genuproof 0.1.0\n");
        return 0;
    }
    for (const struct cmd *c = cmd_table; c->name; c++)
        if (!strcmp(c->name, argv[1]))
            return c->run(argc - 1, argv + 1);
    fprintf(stderr, "genuproof: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
