/*
 * mini_httpd.h - a tiny blocking HTTP/1.1 server on 127.0.0.1 for unit
 * tests of outbound HTTP (http/client.h and its users).  One thread
 * accepts; each connection gets its own thread, reads one request
 * (headers + Content-Length body, bounded) and hands it to the test's
 * handler, which writes the whole response itself and may take its time
 * (polling mini_httpd_stopping()).  The connection is then closed.
 */
#ifndef GP_TESTS_MINI_HTTPD_H
#define GP_TESTS_MINI_HTTPD_H

#include <stdbool.h>
#include <stddef.h>

#define MINI_HEAD_MAX 8192
#define MINI_BODY_MAX 65536

struct mini_req {
    char method[16];
    char path[256];
    char head[MINI_HEAD_MAX]; /* request line and headers, NUL-terminated */
    char body[MINI_BODY_MAX + 1];
    size_t body_len;
};

struct mini_httpd;
typedef void (*mini_handler)(void *arg, const struct mini_req *req, int fd);

/* Starts the server on an ephemeral loopback port; NULL on failure. */
struct mini_httpd *mini_httpd_start(mini_handler fn, void *arg);
/* Stops accepting, tells handlers to finish, waits (bounded) for them. */
void mini_httpd_stop(struct mini_httpd *h);
int mini_httpd_port(const struct mini_httpd *h);
int mini_httpd_accepted(struct mini_httpd *h);
bool mini_httpd_stopping(struct mini_httpd *h);

/* Case-insensitive header value (first occurrence) copied into out. */
const char *mini_header(const struct mini_req *r, const char *name, char *out, size_t n);
void mini_send(int fd, const void *p, size_t n);
/* A complete response with Content-Length and Connection: close. */
void mini_reply(int fd, int status, const char *content_type, const char *body);

#endif
