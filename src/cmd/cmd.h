/*
 * cmd.h - subcommands of the genuproof binary.  Each takes the arguments
 * after its name (argv[0] is the subcommand name) and returns the process
 * exit status.  Only src/cmd/ may call exit().
 */
#ifndef GP_CMD_CMD_H
#define GP_CMD_CMD_H

struct cmd {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
};

int cmd_serve(int argc, char **argv);
int cmd_tui(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_detect(int argc, char **argv);
int cmd_audit(int argc, char **argv);
int cmd_table_admin(int argc, char **argv);

extern const struct cmd cmd_table[];

#endif
