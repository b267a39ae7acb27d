/*
 * log.h - one JSON object per line on stderr.
 *
 * log_msg() writes {"time":"<ISO>","level":"...","msg":"..."} and any
 * extra pre-rendered JSON members given in `extra` (e.g. "\"port\":8080",
 * without braces, may be NULL).  Never pass secrets: nothing here redacts.
 * The level threshold comes from GENUPROOF_LOG (debug|info|warn|error,
 * default info).
 */
#ifndef GP_UTIL_LOG_H
#define GP_UTIL_LOG_H

#include <stddef.h>

enum log_level { LOG_DEBUG = 0, LOG_INFO, LOG_WARN, LOG_ERROR };

void log_set_level(enum log_level lvl);
int log_enabled(enum log_level lvl);
void log_msg(enum log_level lvl, const char *extra, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Writes a preformatted JSON line (object text without newline). */
void log_line(const char *json_object, size_t len);

#define log_debug(...) log_msg(LOG_DEBUG, NULL, __VA_ARGS__)
#define log_info(...)  log_msg(LOG_INFO, NULL, __VA_ARGS__)
#define log_warn(...)  log_msg(LOG_WARN, NULL, __VA_ARGS__)
#define log_error(...) log_msg(LOG_ERROR, NULL, __VA_ARGS__)

#endif
