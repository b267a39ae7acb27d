/*
 * listen.c - resolve a listen specification and open the listening
 * sockets (see listen.h).
 *
 * When a name resolves to both families (localhost, all interfaces), the
 * IPv6 socket is made IPv6-only so that it does not collide with the IPv4
 * one; a lone "[::]" stays dual-stack.  Addresses after the first that
 * cannot be bound (say, IPv6 disabled on the host) are skipped: the server
 * is usable as long as one address works.
 */
#include "net/listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/err.h"

int net_split_hostport(const char *spec, char *host, size_t hostlen, char *port, size_t portlen)
{
    const char *colon;
    size_t hl;
    const char *h = spec;
    if (!spec || !*spec)
        return ERR_INVALID;
    if (spec[0] == '[') {
        const char *close = strchr(spec, ']');
        if (!close || close[1] != ':')
            return ERR_INVALID;
        h = spec + 1;
        hl = (size_t)(close - h);
        colon = close + 1;
    } else {
        colon = strrchr(spec, ':');
        if (!colon)
            return ERR_INVALID;
        hl = (size_t)(colon - spec);
        if (memchr(spec, ':', hl))
            return ERR_INVALID; /* bare IPv6 needs brackets */
    }
    const char *p = colon + 1;
    size_t pl = strlen(p);
    if (pl == 0 || pl > 5 || pl >= portlen || hl >= hostlen)
        return ERR_INVALID;
    long v = 0;
    for (size_t i = 0; i < pl; i++) {
        if (p[i] < '0' || p[i] > '9')
            return ERR_INVALID;
        v = v * 10 + (p[i] - '0');
    }
    if (v > 65535)
        return ERR_INVALID;
    memcpy(host, h, hl);
    host[hl] = '\0';
    if (!strcmp(host, "*"))
        host[0] = '\0';
    snprintf(port, portlen, "%ld", v);
    return 0;
}

int net_local_port(int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
        return -1;
    if (ss.ss_family == AF_INET)
        return ntohs(((struct sockaddr_in *)&ss)->sin_port);
    if (ss.ss_family == AF_INET6)
        return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    return -1;
}

void net_addr_str(const struct sockaddr *sa, socklen_t len, char *ip, size_t iplen, int *port)
{
    (void)len;
    ip[0] = '\0';
    *port = 0;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
        inet_ntop(AF_INET, &s4->sin_addr, ip, (socklen_t)iplen);
        *port = ntohs(s4->sin_port);
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
        if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
            inet_ntop(AF_INET, &s6->sin6_addr.s6_addr[12], ip, (socklen_t)iplen);
        else
            inet_ntop(AF_INET6, &s6->sin6_addr, ip, (socklen_t)iplen);
        *port = ntohs(s6->sin6_port);
    } else if (iplen) {
        snprintf(ip, iplen, "unknown");
    }
}

static void set_port(struct sockaddr *sa, int port)
{
    if (sa->sa_family == AF_INET)
        ((struct sockaddr_in *)sa)->sin_port = htons((unsigned short)port);
    else if (sa->sa_family == AF_INET6)
        ((struct sockaddr_in6 *)sa)->sin6_port = htons((unsigned short)port);
}

/* Opens one listening socket on ai; returns the fd or -1 with errno. */
static int open_one(const struct addrinfo *ai, int port, bool v6only, bool reuseport, int backlog)
{
    struct sockaddr_storage ss;
    int one = 1;
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0)
        return -1;
    memcpy(&ss, ai->ai_addr, ai->ai_addrlen);
    if (port > 0)
        set_port((struct sockaddr *)&ss, port);
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0)
        goto fail;
    if (reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) < 0)
        goto fail;
    if (ai->ai_family == AF_INET6 && v6only &&
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) < 0)
        goto fail;
    if (bind(fd, (struct sockaddr *)&ss, ai->ai_addrlen) < 0)
        goto fail;
    if (listen(fd, backlog) < 0)
        goto fail;
    return fd;
fail:;
    int saved = errno;
    close(fd);
    errno = saved;
    return -1;
}

int net_listen(const char *spec, bool reuseport, int backlog, int *fds, size_t maxfds, size_t *nfds,
               char *err, size_t errlen)
{
    char host[256], port[8];
    struct addrinfo hints, *res = NULL;
    int rc = 0, first_errno = 0, bound_port = 0;
    bool have4 = false, have6 = false;
    *nfds = 0;
    if (net_split_hostport(spec, host, sizeof host, port, sizeof port)) {
        snprintf(err, errlen, "invalid listen address '%s' (want HOST:PORT or [IPv6]:PORT)",
                 spec ? spec : "");
        rc = ERR_INVALID;
        goto out;
    }
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int gai = getaddrinfo(host[0] ? host : NULL, port, &hints, &res);
    if (gai) {
        snprintf(err, errlen, "cannot resolve '%s': %s", host, gai_strerror(gai));
        rc = ERR_INVALID;
        goto out;
    }
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        have4 |= ai->ai_family == AF_INET;
        have6 |= ai->ai_family == AF_INET6;
    }
    for (struct addrinfo *ai = res; ai && *nfds < maxfds; ai = ai->ai_next) {
        if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
            continue;
        int fd = open_one(ai, bound_port, have4 && have6, reuseport, backlog);
        if (fd < 0) {
            if (!first_errno)
                first_errno = errno;
            continue;
        }
        if (!bound_port)
            bound_port = net_local_port(fd);
        fds[(*nfds)++] = fd;
    }
    if (*nfds == 0) {
        snprintf(err, errlen, "cannot listen on %s: %s", spec,
                 strerror(first_errno ? first_errno : EADDRNOTAVAIL));
        rc = ERR_IO;
    }
out:
    if (res)
        freeaddrinfo(res);
    return rc;
}
