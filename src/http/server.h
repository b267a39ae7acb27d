/*
 * server.h - the HTTP/1.1 server on libev.  Its public interface is
 * http.h (http_server_new, http_server_drain, http_conn_send, ...); this
 * header only names the internal tuning constants that tests and
 * benchmarks may want to know.
 *
 * Per connection: input is read in HTTP_READ_CHUNK pieces into a buffer
 * shared by the server and fed straight to the parser (parse.h); only
 * bytes that cannot be processed yet (output backpressure) are kept in the
 * connection.  Responses go to one contiguous output buffer per
 * connection and are written once per loop iteration, after the commit
 * hook (group commit).
 */
#ifndef GP_HTTP_SERVER_H
#define GP_HTTP_SERVER_H

#include "http/http.h"

/* Bytes read per read(2). */
#define HTTP_READ_CHUNK (16 * 1024)
/* Unsent output above which a connection's further requests wait. */
#define HTTP_OUT_HIGH (1024 * 1024)
/* Largest response body the application may build. */
#define HTTP_RESPONSE_MAX ((size_t)64 * 1024 * 1024)
/* Half-closed connections wait this long (scaled) for the peer's EOF
 * after an error response, so the peer reads the answer before a reset. */
#define HTTP_LINGER_SECONDS 2.0

#endif
