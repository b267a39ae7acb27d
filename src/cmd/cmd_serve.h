/*
 * cmd_serve.h - `genuproof serve`: the API server on the embedded store.
 *
 * cmd_serve() (declared in cmd.h) returns the exit status: 0 after a
 * clean shutdown (SIGTERM/SIGINT, in-flight requests drained), 1 when the
 * server cannot start or fails at run time, 2 for usage and configuration
 * errors (bad option, no signing secret outside demo mode).
 */
#ifndef GP_CMD_CMD_SERVE_H
#define GP_CMD_CMD_SERVE_H

#include "cmd/cmd.h"

#define SERVE_EXIT_OK    0
#define SERVE_EXIT_FAIL  1
#define SERVE_EXIT_USAGE 2
/* Longest signing secret read from a file. */
#define SERVE_SECRET_MAX 4096
/* Maintenance period (scaled): TTL purge and stream trim. */
#define SERVE_MAINT_SECONDS 60.0
/* Longest wait for in-flight requests after SIGTERM (scaled). */
#define SERVE_DRAIN_SECONDS 30.0

#endif
