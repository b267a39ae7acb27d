/*
 * listen.h - listening sockets from a "HOST:PORT" specification.
 *
 * Accepted forms: "127.0.0.1:8080", "[::1]:8080", "0.0.0.0:80", "[::]:80",
 * "localhost:8080", ":8080" or "*:8080" (all interfaces).  Names are
 * resolved with getaddrinfo() and every address found is bound (a name may
 * give both IPv6 and IPv4).  Port 0 asks the kernel for a free port; when
 * several addresses are bound they all share that port.
 */
#ifndef GP_NET_LISTEN_H
#define GP_NET_LISTEN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#define NET_MAX_LISTEN 8

/* Splits spec into host ("" for all interfaces) and port.  On error
 * returns ERR_INVALID (bad syntax, port not 0..65535, field too long). */
int net_split_hostport(const char *spec, char *host, size_t hostlen, char *port, size_t portlen);

/*
 * Binds and listens on every address of spec.  Sockets are non-blocking
 * and close-on-exec, with SO_REUSEADDR (and SO_REUSEPORT when asked).
 * On success returns 0 with fds[0 .. *nfds) open (at least one).  On error
 * returns ERR_INVALID (bad spec, unknown host) or ERR_IO (bind/listen
 * failed), writes a message to err and leaves nothing open.
 */
int net_listen(const char *spec, bool reuseport, int backlog, int *fds, size_t maxfds, size_t *nfds,
               char *err, size_t errlen);

/* The local port of a bound socket, or -1. */
int net_local_port(int fd);

/* Numeric host and port of a socket address ("127.0.0.1", "::1"); an
 * IPv4-mapped IPv6 address is shown as IPv4. */
void net_addr_str(const struct sockaddr *sa, socklen_t len, char *ip, size_t iplen, int *port);

#endif
