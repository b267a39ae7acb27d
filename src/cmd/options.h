/*
 * options.h - command-line options described by one table (STYLE.md §7,
 * like tmux's options-table.c): name, type, default, bounds, the
 * environment variable that may set it, and help text.  The parser and
 * the --help text are driven by the table only.
 *
 * Precedence: command line, then the environment variable, then the
 * default.  Both "--name value" and "--name=value" are accepted.
 */
#ifndef GP_CMD_OPTIONS_H
#define GP_CMD_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum opt_type {
    OPT_STRING = 0,
    OPT_INT,  /* base-10, within [min, max] */
    OPT_FLAG, /* no value */
    OPT_ENUM  /* one of choices ("a|b|c") */
};

/* Row reserved for a later version: listed in the table, refused. */
#define OPTF_LATER 1u

struct opt_def {
    const char *name; /* without the leading "--" */
    enum opt_type type;
    const char *metavar; /* shown in --help, e.g. "HOST:PORT" */
    const char *def;     /* default as text; NULL: unset */
    long min, max;       /* OPT_INT bounds */
    const char *choices; /* OPT_ENUM, "full|normal" */
    const char *env;     /* environment variable, or NULL */
    unsigned flags;
    const char *help;
};

#define OPT_MAX 48

/* Parsed values, indexed like the table. */
struct opt_values {
    const struct opt_def *defs;
    size_t n;
    const char *val[OPT_MAX]; /* NULL: unset (flags: NULL or "1") */
    bool given[OPT_MAX];      /* set on the command line or by env */
};

/* Parses argv[1..argc) (argv[0] is the command name) against defs (ended
 * by a row with name NULL).  On error returns ERR_INVALID with a message
 * in err (the caller exits 2).  help is set when --help/-h was given (the
 * rest is then not parsed). */
int opt_parse(const struct opt_def *defs, int argc, char **argv, struct opt_values *v, bool *help,
              char *err, size_t errlen);

const char *opt_str(const struct opt_values *v, const char *name);
long opt_int(const struct opt_values *v, const char *name);
bool opt_flag(const struct opt_values *v, const char *name);
bool opt_given(const struct opt_values *v, const char *name);

/* Writes "usage: genuproof <cmd> [options]" and one entry per row
 * (OPTF_LATER rows are left out). */
void opt_usage(FILE *f, const char *cmd, const char *summary, const struct opt_def *defs);

/* `--ops-log every|changes` of the detector (serve and detect), and
 * whether it says "changes" (det_proc_cfg.opslog_changes). */
#define OPT_DEF_OPS_LOG                                                                            \
    {                                                                                              \
        "ops-log", OPT_ENUM, "every|changes", "every", 0, 0, "every|changes", NULL, 0,             \
            "detector ops-log entries: every classified scan, or changes only (a scan that "       \
            "raises an "                                                                           \
            "alert or changes its product's verdict)"                                              \
    }
bool opt_opslog_changes(const struct opt_values *o);

/* The options of `genuproof serve`. */
extern const struct opt_def serve_options[];

#endif
