/*
 * cmd_serve.c - `genuproof serve` (cmd_serve.h): parses the options and
 * runs the backend (cmd/backend.h: store, application, HTTP server,
 * detector, SSE, webhooks) on one libev loop.
 *
 * Start-up order: options -> loop -> backend -> port file.  Anything that
 * fails before listening exits non-zero with one clear log line; secrets
 * and keys are never logged (only the path of a generated admin key
 * file).  Shutdown: SIGTERM/SIGINT stop accepting and drain in-flight
 * requests (bounded), then the loop ends and everything is closed.
 *
 * --workers N (N > 1): this process becomes a supervisor that forks N
 * workers sharing the port with SO_REUSEPORT.  Worker 0 starts first
 * (it creates the database, seeds demo data, writes the admin key file
 * and runs the detector); the others start once it is listening.  The
 * port file is written when every worker listens.  A worker that dies is
 * restarted after a backoff (1 s doubling to 30 s, scaled); SIGTERM or
 * SIGINT is passed to every worker, which drains, and the supervisor
 * exits when all are gone (SIGKILL after the drain deadline).
 */
#include "cmd/cmd_serve.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netdb.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ev.h>

#include "cmd/backend.h"
#include "cmd/options.h"
#include "net/listen.h"
#include "util/err.h"
#include "util/log.h"
#include "util/timescale.h"
#include "util/xalloc.h"

struct serve {
    struct ev_loop *loop;
    struct backend *be;
    ev_signal sigterm, sigint;
    ev_timer drain_deadline;
    bool draining;
};

/* Raises the open-file limit to the hard limit (many connections). */
static void raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl))
            log_warn("cannot raise the open-file limit: %s", strerror(errno));
    }
}

/* Writes "<port>\n" to path atomically (temp file + rename), so a reader
 * polling for the file never sees it half written. */
static int write_port_file(const char *path, int port)
{
    size_t n = strlen(path) + 16;
    char *tmp = xmalloc(n);
    snprintf(tmp, n, "%s.tmp", path);
    int rc = 0;
    FILE *f = fopen(tmp, "w");
    if (!f || fprintf(f, "%d\n", port) < 0)
        rc = ERR_IO;
    if (f && fclose(f))
        rc = ERR_IO;
    if (!rc && rename(tmp, path))
        rc = ERR_IO;
    if (rc)
        unlink(tmp);
    free(tmp);
    return rc;
}

static void drained_cb(void *arg)
{
    struct serve *sv = arg;
    ev_break(sv->loop, EVBREAK_ALL);
}

static void drain_deadline_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)w;
    (void)revents;
    log_warn("drain deadline reached; closing remaining connections");
    ev_break(loop, EVBREAK_ALL);
}

static void signal_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
    (void)revents;
    struct serve *sv = w->data;
    if (sv->draining) {
        log_warn("second signal: stopping now");
        ev_break(loop, EVBREAK_ALL);
        return;
    }
    sv->draining = true;
    log_info("signal %d: draining in-flight requests", w->signum);
    ev_timer_init(&sv->drain_deadline, drain_deadline_cb, scaled(SERVE_DRAIN_SECONDS), 0.);
    ev_timer_start(loop, &sv->drain_deadline);
    ev_unref(loop); /* the deadline alone must not keep the loop alive */
    backend_drain(sv->be, drained_cb, sv);
}

/*
 * Runs one server process: the backend on the default loop until a
 * signal drains it.  ready_fd >= 0 (a worker): "<port>\n" is written to
 * it once listening, and no port file is written here.
 */
static int run_one(const struct opt_values *o, const struct backend_config *bc, int ready_fd)
{
    struct serve sv;
    int status = SERVE_EXIT_FAIL;

    memset(&sv, 0, sizeof sv);
    sv.loop = ev_default_loop(EVFLAG_AUTO);
    if (!sv.loop) {
        log_error("cannot create the event loop");
        return SERVE_EXIT_FAIL;
    }
    sv.be = backend_start(sv.loop, bc, &status);
    if (!sv.be)
        return status;
    status = SERVE_EXIT_FAIL;

    int port = backend_port(sv.be);
    const char *port_file = opt_str(o, "port-file");
    if (ready_fd >= 0) {
        char line[16];
        int n = snprintf(line, sizeof line, "%d\n", port);
        if (write(ready_fd, line, (size_t)n) != n)
            goto out;
        close(ready_fd);
    } else if (port_file && write_port_file(port_file, port)) {
        backend_log_kv(LOG_ERROR, "file", port_file, "cannot write the port file");
        goto out;
    }
    {
        char extra[200];
        bool auth_off = !strcmp(opt_str(o, "auth"), "none");
        snprintf(extra, sizeof extra,
                 "\"port\":%d,\"auth\":\"%s\",\"rateLimit\":%ld,\"worker\":%d,\"workers\":%d", port,
                 auth_off ? "none" : "on", opt_int(o, "rate-limit"), bc->worker,
                 bc->workers > 1 ? bc->workers : 1);
        log_msg(LOG_INFO, extra, "listening");
    }

    sv.sigterm.data = sv.sigint.data = &sv;
    ev_signal_init(&sv.sigterm, signal_cb, SIGTERM);
    ev_signal_init(&sv.sigint, signal_cb, SIGINT);
    ev_signal_start(sv.loop, &sv.sigterm);
    ev_signal_start(sv.loop, &sv.sigint);

    ev_run(sv.loop, 0);
    status = SERVE_EXIT_OK;
out:
    /* already shutting down: a repeated SIGTERM must not kill the
     * cleanup.  Stopping a watcher restores the default action (and
     * unblocks a signal libev held back), so ignore them around it. */
    signal(SIGTERM, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    ev_signal_stop(sv.loop, &sv.sigterm);
    ev_signal_stop(sv.loop, &sv.sigint);
    signal(SIGTERM, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    if (sv.draining) {
        ev_ref(sv.loop);
        ev_timer_stop(sv.loop, &sv.drain_deadline);
    }
    if (backend_stop(sv.be))
        status = SERVE_EXIT_FAIL;
    else if (status == SERVE_EXIT_OK)
        log_info("stopped");
    return status;
}

/* ---------- --workers: the supervisor ---------- */

struct worker {
    pid_t pid;         /* 0: not running */
    double backoff_s;  /* next restart delay (unscaled) */
    double restart_at; /* monotonic s of a pending restart, 0 = none */
};

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Reserves the port of spec for the workers: binds (without listening, so
 * the kernel never hands it a connection) a SO_REUSEPORT socket on the
 * first address of the host, and writes into out the listen spec with
 * the bound port.  Returns the socket, or -1 with a message in err.
 */
static int reserve_port(const char *spec, char *out, size_t outlen, char *err, size_t errlen)
{
    char host[256], port[16];
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE}, *ai = NULL;
    int fd = -1, one = 1, rc;
    if (net_split_hostport(spec, host, sizeof host, port, sizeof port)) {
        snprintf(err, errlen, "bad --listen value");
        return -1;
    }
    rc = getaddrinfo(*host ? host : NULL, port, &hints, &ai);
    if (rc) {
        snprintf(err, errlen, "cannot resolve %s: %s", spec, gai_strerror(rc));
        return -1;
    }
    fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) ||
        bind(fd, ai->ai_addr, ai->ai_addrlen)) {
        snprintf(err, errlen, "cannot bind %s: %s", spec, strerror(errno));
        if (fd >= 0)
            close(fd);
        freeaddrinfo(ai);
        return -1;
    }
    freeaddrinfo(ai);
    int p = net_local_port(fd);
    if (strchr(host, ':'))
        snprintf(out, outlen, "[%s]:%d", host, p);
    else
        snprintf(out, outlen, "%s:%d", host, p);
    return fd;
}

/* Forks worker i; returns its pid after it reported listening, or -1
 * (it failed to start; it has been reaped). */
static pid_t start_worker(const struct opt_values *o, const char *listen, int i, int n,
                          const sigset_t *child_mask)
{
    int pfd[2];
    char line[16];
    ssize_t got;
    pid_t pid;
    if (pipe2(pfd, O_CLOEXEC))
        return -1;
    pid = fork();
    if (pid < 0) {
        close(pfd[0]);
        close(pfd[1]);
        return -1;
    }
    if (pid == 0) {
        struct backend_config bc = {.opts = o, .worker = i, .workers = n, .listen = listen};
        close(pfd[0]);
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        sigprocmask(SIG_SETMASK, child_mask, NULL);
        _exit(run_one(o, &bc, pfd[1]));
    }
    close(pfd[1]);
    do
        got = read(pfd[0], line, sizeof line - 1);
    while (got < 0 && errno == EINTR);
    close(pfd[0]);
    if (got <= 0) {
        int st;
        waitpid(pid, &st, 0);
        return -1;
    }
    return pid;
}

static int supervise(const struct opt_values *o, int n)
{
    char listen[300], err[512];
    struct worker *w = xcalloc((size_t)n, sizeof *w);
    sigset_t mask, old;
    int status = SERVE_EXIT_FAIL, port = -1;
    bool stopping = false;
    double deadline = 0;

    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGCHLD);
    sigprocmask(SIG_BLOCK, &mask, &old);

    int rfd = reserve_port(opt_str(o, "listen"), listen, sizeof listen, err, sizeof err);
    if (rfd < 0) {
        backend_log_kv(LOG_ERROR, "listen", opt_str(o, "listen"), err);
        goto out;
    }
    port = net_local_port(rfd);
    for (int i = 0; i < n; i++) {
        w[i].pid = start_worker(o, listen, i, n, &old);
        w[i].backoff_s = 1.0;
        if (w[i].pid < 0) {
            w[i].pid = 0;
            log_error("worker %d did not start", i);
            stopping = true;
            deadline = mono_s() + scaled(SERVE_DRAIN_SECONDS) + 1;
            break;
        }
    }
    close(rfd);
    if (!stopping) {
        const char *port_file = opt_str(o, "port-file");
        if (port_file && write_port_file(port_file, port)) {
            backend_log_kv(LOG_ERROR, "file", port_file, "cannot write the port file");
            stopping = true;
            deadline = mono_s() + scaled(SERVE_DRAIN_SECONDS) + 1;
        } else {
            char extra[96];
            snprintf(extra, sizeof extra, "\"port\":%d,\"workers\":%d", port, n);
            log_msg(LOG_INFO, extra, "supervisor: every worker is listening");
            status = SERVE_EXIT_OK;
        }
    }
    if (stopping)
        for (int i = 0; i < n; i++)
            if (w[i].pid > 0)
                kill(w[i].pid, SIGTERM);

    for (;;) {
        int alive = 0, sig, st;
        double now = mono_s(), wait_s = 1.0;
        pid_t pid;
        while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
            for (int i = 0; i < n; i++) {
                if (w[i].pid != pid)
                    continue;
                w[i].pid = 0;
                bool clean = WIFEXITED(st) && WEXITSTATUS(st) == 0;
                if (stopping) {
                    if (!clean)
                        status = SERVE_EXIT_FAIL;
                    break;
                }
                log_error("worker %d (pid %d) ended (%s %d); restarting in %.1f s", i, (int)pid,
                          WIFSIGNALED(st) ? "signal" : "status",
                          WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st), scaled(w[i].backoff_s));
                w[i].restart_at = now + scaled(w[i].backoff_s);
                w[i].backoff_s = w[i].backoff_s * 2 > 30 ? 30 : w[i].backoff_s * 2;
            }
        }
        for (int i = 0; i < n; i++) {
            if (!stopping && !w[i].pid && w[i].restart_at > 0 && w[i].restart_at <= now) {
                w[i].restart_at = 0;
                w[i].pid = start_worker(o, listen, i, n, &old);
                if (w[i].pid < 0) {
                    w[i].pid = 0;
                    w[i].restart_at = now + scaled(w[i].backoff_s);
                    w[i].backoff_s = w[i].backoff_s * 2 > 30 ? 30 : w[i].backoff_s * 2;
                } else {
                    log_info("worker %d restarted (pid %d)", i, (int)w[i].pid);
                }
            }
            if (w[i].pid)
                alive++;
            if (!stopping && !w[i].pid && w[i].restart_at > 0 && w[i].restart_at - now < wait_s)
                wait_s = w[i].restart_at - now;
        }
        if (stopping && !alive)
            break;
        if (stopping && now >= deadline) {
            log_warn("supervisor: drain deadline reached; killing the remaining workers");
            for (int i = 0; i < n; i++)
                if (w[i].pid)
                    kill(w[i].pid, SIGKILL);
            status = SERVE_EXIT_FAIL;
            deadline = now + 5;
        }
        struct timespec ts = {.tv_sec = (time_t)wait_s,
                              .tv_nsec = (long)((wait_s - (double)(time_t)wait_s) * 1e9)};
        if (wait_s < 0.001)
            ts.tv_sec = 0, ts.tv_nsec = 1000000;
        sig = sigtimedwait(&mask, NULL, &ts);
        if ((sig == SIGTERM || sig == SIGINT) && !stopping) {
            log_info("signal %d: stopping %d workers", sig, n);
            stopping = true;
            deadline = mono_s() + scaled(SERVE_DRAIN_SECONDS) + 1;
            for (int i = 0; i < n; i++)
                if (w[i].pid)
                    kill(w[i].pid, SIGTERM);
        }
    }
    if (status == SERVE_EXIT_OK)
        log_info("stopped");
out:
    free(w);
    sigprocmask(SIG_SETMASK, &old, NULL);
    return status;
}

int cmd_serve(int argc, char **argv)
{
    struct opt_values o;
    char err[512];
    bool help = false;

    if (opt_parse(serve_options, argc, argv, &o, &help, err, sizeof err)) {
        fprintf(stderr, "genuproof serve: %s\n", err);
        return SERVE_EXIT_USAGE;
    }
    if (help) {
        opt_usage(stdout, "serve", "API server on the embedded SQLite store.", serve_options);
        return SERVE_EXIT_OK;
    }
    signal(SIGPIPE, SIG_IGN);
    raise_nofile();
    int workers = (int)opt_int(&o, "workers");
    if (workers > 1)
        return supervise(&o, workers);
    struct backend_config bc = {.opts = &o};
    return run_one(&o, &bc, -1);
}
