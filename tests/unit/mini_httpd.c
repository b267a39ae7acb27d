/*
 * mini_httpd.c - the unit tests' loopback HTTP server (mini_httpd.h).
 */
#include "mini_httpd.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

struct mini_httpd {
    int lfd, port;
    pthread_t th;
    atomic_int stop, accepted, active;
    mini_handler fn;
    void *arg;
};

struct mini_conn {
    struct mini_httpd *h;
    int fd;
};

void mini_send(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
        if (w <= 0)
            return;
        c += w;
        n -= (size_t)w;
    }
}

void mini_reply(int fd, int status, const char *content_type, const char *body)
{
    char head[256];
    size_t n = body ? strlen(body) : 0;
    snprintf(
        head, sizeof head,
        "HTTP/1.1 %d X\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
        status, content_type ? content_type : "text/plain", n);
    mini_send(fd, head, strlen(head));
    if (n)
        mini_send(fd, body, n);
}

const char *mini_header(const struct mini_req *r, const char *name, char *out, size_t n)
{
    size_t nl = strlen(name);
    out[0] = '\0';
    for (const char *p = strstr(r->head, "\r\n"); p && p[2]; p = strstr(p + 2, "\r\n")) {
        const char *line = p + 2;
        if (!strncasecmp(line, name, nl) && line[nl] == ':') {
            const char *v = line + nl + 1;
            while (*v == ' ')
                v++;
            size_t len = strcspn(v, "\r");
            if (len >= n)
                len = n - 1;
            memcpy(out, v, len);
            out[len] = '\0';
            return out;
        }
    }
    return NULL;
}

/* Reads one request; 0 or -1. */
static int read_request(int fd, struct mini_req *r)
{
    char *buf = malloc(MINI_HEAD_MAX + MINI_BODY_MAX + 1);
    size_t len = 0, head_len, want;
    char *end = NULL, cl[32];
    int rc = -1;

    buf[0] = '\0';
    while (len < MINI_HEAD_MAX && !(end = strstr(buf, "\r\n\r\n"))) {
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        if (poll(&pf, 1, 3000) <= 0)
            goto out;
        ssize_t n = recv(fd, buf + len, MINI_HEAD_MAX - len, 0);
        if (n <= 0)
            goto out;
        len += (size_t)n;
        buf[len] = '\0';
    }
    if (!end)
        goto out;
    head_len = (size_t)(end - buf) + 4;
    memcpy(r->head, buf, head_len - 4);
    r->head[head_len - 4] = '\0';
    sscanf(r->head, "%15s %255s", r->method, r->path);
    want = mini_header(r, "Content-Length", cl, sizeof cl) ? strtoul(cl, NULL, 10) : 0;
    if (want > MINI_BODY_MAX)
        goto out;
    while (len - head_len < want) {
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        if (poll(&pf, 1, 3000) <= 0)
            goto out;
        ssize_t n = recv(fd, buf + len, head_len + want - len, 0);
        if (n <= 0)
            goto out;
        len += (size_t)n;
    }
    r->body_len = want;
    memcpy(r->body, buf + head_len, want);
    r->body[want] = '\0';
    rc = 0;
out:
    free(buf);
    return rc;
}

static void *conn_thread(void *p)
{
    struct mini_conn *c = p;
    struct mini_req *r = calloc(1, sizeof *r);

    if (read_request(c->fd, r) == 0)
        c->h->fn(c->h->arg, r, c->fd);
    close(c->fd);
    free(r);
    atomic_fetch_sub(&c->h->active, 1);
    free(c);
    return NULL;
}

static void *accept_thread(void *p)
{
    struct mini_httpd *h = p;
    while (!atomic_load(&h->stop)) {
        struct pollfd pf = {.fd = h->lfd, .events = POLLIN};
        if (poll(&pf, 1, 50) <= 0)
            continue;
        int fd = accept(h->lfd, NULL, NULL);
        if (fd < 0)
            continue;
        atomic_fetch_add(&h->accepted, 1);
        struct mini_conn *c = malloc(sizeof *c);
        c->h = h;
        c->fd = fd;
        atomic_fetch_add(&h->active, 1);
        pthread_t th;
        if (pthread_create(&th, NULL, conn_thread, c) == 0) {
            pthread_detach(th);
        } else {
            atomic_fetch_sub(&h->active, 1);
            close(fd);
            free(c);
        }
    }
    return NULL;
}

struct mini_httpd *mini_httpd_start(mini_handler fn, void *arg)
{
    struct mini_httpd *h = calloc(1, sizeof *h);
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t sl = sizeof sa;
    int one = 1;

    h->fn = fn;
    h->arg = arg;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    h->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    setsockopt(h->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (h->lfd < 0 || bind(h->lfd, (struct sockaddr *)&sa, sizeof sa) || listen(h->lfd, 128) ||
        getsockname(h->lfd, (struct sockaddr *)&sa, &sl))
        goto fail;
    h->port = ntohs(sa.sin_port);
    if (pthread_create(&h->th, NULL, accept_thread, h))
        goto fail;
    return h;
fail:
    if (h->lfd >= 0)
        close(h->lfd);
    free(h);
    return NULL;
}

void mini_httpd_stop(struct mini_httpd *h)
{
    if (!h)
        return;
    atomic_store(&h->stop, 1);
    pthread_join(h->th, NULL);
    close(h->lfd);
    for (int i = 0; i < 200 && atomic_load(&h->active) > 0; i++)
        usleep(10000);
    if (atomic_load(&h->active) == 0)
        free(h); /* else a handler is stuck: leave it its memory */
}

int mini_httpd_port(const struct mini_httpd *h)
{
    return h->port;
}

int mini_httpd_accepted(struct mini_httpd *h)
{
    return atomic_load(&h->accepted);
}

bool mini_httpd_stopping(struct mini_httpd *h)
{
    return atomic_load(&h->stop) != 0;
}
