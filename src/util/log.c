/*
 * log.c - JSON-lines logging on stderr (see log.h).
 *
 * Each line is written with a single write(2) so lines from several
 * processes sharing stderr (serve --workers) do not interleave.
 */
#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

static int g_level = -1;

static const char *level_names[] = {"debug", "info", "warn", "error"};

void log_set_level(enum log_level lvl)
{
    g_level = (int)lvl;
}

int log_enabled(enum log_level lvl)
{
    if (g_level < 0) {
        const char *e = getenv("GENUPROOF_LOG");
        g_level = LOG_INFO;
        for (int i = 0; e && i < 4; i++)
            if (!strcasecmp(e, level_names[i]))
                g_level = i;
    }
    return (int)lvl >= g_level;
}

void log_line(const char *json_object, size_t len)
{
    char stackbuf[4096];
    char *p = len + 2 <= sizeof stackbuf ? stackbuf : malloc(len + 2);
    if (!p)
        return;
    memcpy(p, json_object, len);
    p[len] = '\n';
    ssize_t w = write(STDERR_FILENO, p, len + 1);
    (void)w;
    if (p != stackbuf)
        free(p);
}

/* Appends s to out as a JSON string body (no quotes), bounded. */
static size_t esc(char *out, size_t cap, const char *s)
{
    size_t o = 0;
    for (; *s && o + 7 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            out[o++] = '\\';
            out[o++] = (char)c;
        } else if (c < 0x20) {
            o += (size_t)snprintf(out + o, cap - o, "\\u%04x", c);
        } else {
            out[o++] = (char)c;
        }
    }
    out[o] = '\0';
    return o;
}

void log_msg(enum log_level lvl, const char *extra, const char *fmt, ...)
{
    if (!log_enabled(lvl))
        return;
    char msg[2048], emsg[4096], line[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    esc(emsg, sizeof emsg, msg);

    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    int n = snprintf(line, sizeof line,
                     "{\"time\":\"%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ\",\"level\":\"%s\","
                     "\"msg\":\"%s\"%s%s}",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     ts.tv_nsec / 1000000, level_names[lvl], emsg, extra && *extra ? "," : "",
                     extra ? extra : "");
    if (n < 0)
        return;
    if ((size_t)n >= sizeof line)
        n = (int)sizeof line - 1;
    log_line(line, (size_t)n);
}
