/*
 * sse_bench.h - helpers shared by the SSE benchmarks (sse_fanout.c,
 * sse_latency.c): start `genuproof serve` on a temp database, blocking
 * HTTP/1.1 requests, raw stream sockets, server RSS, percentiles.
 *
 * Header-only (static inline) because each bench program is one .c file.
 * The benchmarks talk to a real server process over loopback, as a
 * client would; nothing here links against the server's internals.
 */
#ifndef GP_BENCH_SSE_BENCH_H
#define GP_BENCH_SSE_BENCH_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct bench_server {
    pid_t pid;
    int port;
    char dir[64];
};

static inline double bench_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static inline void bench_die(const char *msg)
{
    fprintf(stderr, "bench: %s%s%s\n", msg, errno ? ": " : "", errno ? strerror(errno) : "");
    exit(1);
}

/* Raises the open-file limit to the hard limit; returns the new soft limit. */
static inline long bench_raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl))
        return -1;
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    getrlimit(RLIMIT_NOFILE, &rl);
    return (long)rl.rlim_cur;
}

/*
 * Starts `bin serve` on 127.0.0.1, any port, with a database in a new temp
 * directory, --auth none and no rate limit, plus extra arguments (NULL
 * terminated).  Waits for the port file.  The server's log goes to
 * <dir>/server.log.
 */
static inline void bench_server_start(struct bench_server *s, const char *bin,
                                      const char *const *extra)
{
    char db[96], portf[96], logf[96];
    const char *argv[32];
    int n = 0;
    snprintf(s->dir, sizeof s->dir, "/tmp/gp-bench-sse.XXXXXX");
    if (!mkdtemp(s->dir))
        bench_die("mkdtemp");
    snprintf(db, sizeof db, "%s/db", s->dir);
    snprintf(portf, sizeof portf, "%s/port", s->dir);
    snprintf(logf, sizeof logf, "%s/server.log", s->dir);
    argv[n++] = bin;
    argv[n++] = "serve";
    argv[n++] = "--listen";
    argv[n++] = "127.0.0.1:0";
    argv[n++] = "--db";
    argv[n++] = db;
    argv[n++] = "--port-file";
    argv[n++] = portf;
    argv[n++] = "--auth";
    argv[n++] = "none";
    argv[n++] = "--rate-limit";
    argv[n++] = "0";
    for (; extra && *extra && n < 30; extra++)
        argv[n++] = *extra;
    argv[n] = NULL;
    s->pid = fork();
    if (s->pid < 0)
        bench_die("fork");
    if (s->pid == 0) {
        int fd = open(logf, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        setenv("SIGNING_SECRET", "bench-secret", 0);
        setenv("GENUPROOF_LOG", "warn", 0);
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    for (int i = 0; i < 400; i++) {
        FILE *f = fopen(portf, "r");
        if (f) {
            int ok = fscanf(f, "%d", &s->port) == 1;
            fclose(f);
            if (ok)
                return;
        }
        if (waitpid(s->pid, NULL, WNOHANG) == s->pid) {
            errno = 0;
            bench_die("the server exited at start (see its log)");
        }
        usleep(25000);
    }
    errno = 0;
    bench_die("the server did not start");
}

/* SIGTERM, wait up to 10 s, SIGKILL; removes the temp directory. */
static inline void bench_server_stop(struct bench_server *s)
{
    char cmd[128];
    kill(s->pid, SIGTERM);
    for (int i = 0; i < 200; i++) {
        if (waitpid(s->pid, NULL, WNOHANG) == s->pid)
            goto gone;
        usleep(50000);
    }
    kill(s->pid, SIGKILL);
    waitpid(s->pid, NULL, 0);
gone:
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", s->dir);
    if (system(cmd))
        fprintf(stderr, "bench: could not remove %s\n", s->dir);
}

/* VmRSS of a process in KiB (-1 when unknown). */
static inline long bench_rss_kb(pid_t pid)
{
    char path[64], line[256];
    long kb = -1;
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6))
            kb = strtol(line + 6, NULL, 10);
    fclose(f);
    return kb;
}

/* A TCP connection to 127.0.0.1:port (blocking unless nonblock). */
static inline int bench_connect(int port, int nonblock)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int one = 1;
    int fd = socket(AF_INET, SOCK_STREAM | (nonblock ? SOCK_NONBLOCK : 0), 0);
    if (fd < 0)
        return -1;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    return fd;
}

static inline int bench_write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/*
 * One request over a new connection ("Connection: close"); the response
 * body (NUL-terminated, malloc'd) goes to *body.  extra_headers are
 * complete "Name: value\r\n" lines or NULL.  Returns the status or -1.
 */
static inline int bench_http(int port, const char *method, const char *path, const char *json,
                             const char *extra_headers, char **body)
{
    char head[2048];
    size_t cap = 1 << 16, len = 0;
    char *resp = malloc(cap);
    int status = -1;
    int fd = bench_connect(port, 0);
    *body = NULL;
    if (fd < 0 || !resp)
        goto out;
    if (json)
        snprintf(head, sizeof head,
                 "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n%s"
                 "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
                 method, path, extra_headers ? extra_headers : "", strlen(json));
    else
        snprintf(head, sizeof head,
                 "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n%s\r\n", method, path,
                 extra_headers ? extra_headers : "");
    if (bench_write_all(fd, head, strlen(head)) ||
        (json && bench_write_all(fd, json, strlen(json))))
        goto out;
    for (;;) {
        if (len + 4096 > cap) {
            cap *= 2;
            char *np = realloc(resp, cap);
            if (!np)
                goto out;
            resp = np;
        }
        ssize_t r = read(fd, resp + len, cap - len - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        len += (size_t)r;
    }
    resp[len] = '\0';
    if (sscanf(resp, "HTTP/1.%*d %d", &status) != 1)
        status = -1;
    char *b = strstr(resp, "\r\n\r\n");
    *body = strdup(b ? b + 4 : "");
out:
    if (fd >= 0)
        close(fd);
    free(resp);
    return status;
}

/* Sends the GET of a stream (no response read). */
static inline int bench_stream_request(int fd, const char *query)
{
    char req[512];
    int n = snprintf(req, sizeof req,
                     "GET /api/stream?%s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     "Accept: text/event-stream\r\n\r\n",
                     query);
    return bench_write_all(fd, req, (size_t)n);
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile (0..1) of v[0..n) (sorts v). */
static inline double bench_quantile(double *v, size_t n, double q)
{
    if (!n)
        return 0;
    qsort(v, n, sizeof *v, bench_cmp_double);
    size_t i = (size_t)(q * (double)(n - 1) + 0.5);
    return v[i < n ? i : n - 1];
}

#endif
