/*
 * sse.c - Server-Sent Events frame writer (sse.h).
 *
 * The hub formats a frame once and hands the same bytes to every
 * subscriber, so these helpers only append to a buffer; they never send.
 * Each function either appends a complete piece or leaves the buffer as
 * it found it, so a capped buffer never ends in half a field.
 */
#include "http/sse.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "util/err.h"

/* A field value that cannot break out of its line. */
static bool one_line(const char *s)
{
    return s && !strpbrk(s, "\r\n");
}

/* Drops whatever was appended after len (error path). */
static int rollback(struct buf *b, size_t len, int rc)
{
    b->len = len;
    if (b->data)
        b->data[len] = '\0';
    return rc;
}

int sse_event_begin(struct buf *b, const char *event, const char *id)
{
    size_t start = b->len;
    int rc = 0;
    if (!one_line(event) || !*event || (id && !one_line(id)))
        return ERR_INVALID;
    if (id)
        rc = buf_printf(b, "id: %s\n", id);
    if (!rc)
        rc = buf_printf(b, "event: %s\ndata: ", event);
    return rc ? rollback(b, start, rc) : 0;
}

int sse_event_end(struct buf *b)
{
    return buf_append(b, "\n\n", 2);
}

int sse_event(struct buf *b, const char *event, const char *id, const char *data, size_t n)
{
    size_t start = b->len;
    size_t i = 0;
    int rc = sse_event_begin(b, event, id);
    if (rc)
        return rc;
    while (!rc) {
        size_t j = i;
        while (j < n && data[j] != '\n' && data[j] != '\r')
            j++;
        if (j > i)
            rc = buf_append(b, data + i, j - i);
        if (rc || j >= n)
            break;
        /* a line break: "\r\n" counts once */
        i = j + 1;
        if (data[j] == '\r' && i < n && data[i] == '\n')
            i++;
        rc = buf_puts(b, "\ndata: ");
    }
    if (!rc)
        rc = sse_event_end(b);
    return rc ? rollback(b, start, rc) : 0;
}

int sse_retry(struct buf *b, long ms)
{
    return buf_printf(b, "retry: %ld\n\n", ms < 1 ? 1L : ms);
}

int sse_comment(struct buf *b, const char *text)
{
    if (!one_line(text))
        return ERR_INVALID;
    return buf_printf(b, ": %s\n\n", text);
}
