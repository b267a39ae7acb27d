/*
 * sse_parse.h - client-side Server-Sent Events parser (WHATWG event
 * stream rules) fed with arbitrary byte chunks as they come off the wire.
 *
 * The parser owns four reusable buffers (line, data, event type, id) that
 * grow once and are kept for the life of the parser: no allocation happens
 * per event once they have grown.  A line longer than SSE_LINE_MAX bytes,
 * or an event whose data exceeds SSE_DATA_MAX, is skipped (its bytes are
 * dropped as they arrive, so memory stays bounded) and counted; the next
 * event parses normally.
 *
 * The event passed to the callback is a view into the parser's buffers:
 * copy what you keep before the callback returns.
 */
#ifndef GP_TUI_SSE_PARSE_H
#define GP_TUI_SSE_PARSE_H

#include <stddef.h>

#define SSE_LINE_MAX  (64u * 1024u)   /* longest accepted line, without its end */
#define SSE_DATA_MAX  (1024u * 1024u) /* largest accepted data of one event */
#define SSE_RETRY_MAX 86400000L       /* retry values above this saturate (1 day) */

struct sse_event {
    const char *type;          /* "message" unless an event: field set it
                                  (a C string: cut at a NUL in the value) */
    const char *data;          /* data lines joined with '\n', NUL-terminated */
    size_t data_len;           /* may hold NUL bytes: use this, not strlen */
    const char *last_event_id; /* the stream's last event id ("" if none) */
};

/* Called once per dispatched event.  Return 0 to go on; a negative value
 * stops sse_parser_feed(), which returns it. */
typedef int (*sse_event_cb)(const struct sse_event *ev, void *ud);

struct sse_parser;

/* Creates a parser that reports events to cb(ev, ud).  Never NULL (aborts
 * on OOM like every small internal allocation).  Free with sse_parser_free. */
struct sse_parser *sse_parser_new(sse_event_cb cb, void *ud);
void sse_parser_free(struct sse_parser *p);

/* Prepares for a new connection: drops any partial line and event and
 * expects an optional BOM again.  The last event id and retry survive
 * (the client sends the id as Last-Event-ID when it reconnects). */
void sse_parser_reset(struct sse_parser *p);

/* Parses len bytes (any split, any content).  On success returns 0, with
 * every complete event delivered and any partial line kept for the next
 * call.  On error returns the callback's negative value; the rest of that
 * chunk is not parsed. */
int sse_parser_feed(struct sse_parser *p, const void *data, size_t len);

/* The id of the last dispatched event, "" if none; never NULL. */
const char *sse_parser_last_event_id(const struct sse_parser *p);
/* The last valid retry: value in milliseconds, or -1 if none was seen. */
long sse_parser_retry_ms(const struct sse_parser *p);
/* How many events were skipped because a line or the data was too long. */
unsigned long sse_parser_skipped(const struct sse_parser *p);

#endif
