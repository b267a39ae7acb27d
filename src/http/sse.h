/*
 * sse.h - Server-Sent Events framing (the text/event-stream format of the
 * WHATWG HTML standard): event frames, the retry hint and comment lines,
 * appended to a capped struct buf.
 *
 * A frame is "id: <id>\n" (optional) "event: <name>\n" "data: <line>\n"
 * ... and a blank line.  A data payload containing line breaks becomes one
 * "data:" line per line, which a client joins back with "\n".  Event names
 * and ids must not contain CR, LF or NUL (ERR_INVALID): they would end
 * their field early and let a value forge another field.
 *
 * Every function returns 0, ERR_TOOBIG when the buffer's cap is reached or
 * ERR_INVALID; on error the buffer is left as it was before the call.
 */
#ifndef GP_HTTP_SSE_H
#define GP_HTTP_SSE_H

#include <stddef.h>

#include "util/buf.h"

/* The reconnection hint clients get by default (ms). */
#define SSE_RETRY_MS 3000

/*
 * Starts a frame whose single data line the caller writes next (e.g. with
 * a JSON writer over the same buffer, which never emits a raw newline):
 * "[id: <id>\n]event: <event>\ndata: ".  id may be NULL.  Finish the frame
 * with sse_event_end().
 */
int sse_event_begin(struct buf *b, const char *event, const char *id);
/* Ends a frame started with sse_event_begin(): "\n\n". */
int sse_event_end(struct buf *b);
/* A whole frame; data (n bytes, may hold line breaks: "\n", "\r\n" or
 * "\r") is split into data lines.  id may be NULL. */
int sse_event(struct buf *b, const char *event, const char *id, const char *data, size_t n);
/* "retry: <ms>\n\n" (ms clamped to >= 1). */
int sse_retry(struct buf *b, long ms);
/* ": <text>\n\n" - ignored by clients (keep-alives, annotations).  text
 * must be one line (ERR_INVALID otherwise). */
int sse_comment(struct buf *b, const char *text);

#endif
