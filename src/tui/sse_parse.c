/*
 * sse_parse.c - incremental Server-Sent Events parser for the dashboard.
 *
 * Bytes are cut into lines (LF, CR or CRLF; a CRLF split across two feeds
 * is still one line end), an optional UTF-8 BOM at the very start of a
 * stream is dropped, and each line is interpreted as the WHATWG event
 * stream rules say: a blank line dispatches, ':' starts a comment, a line
 * without ':' is a field with an empty value, and one space after the
 * colon is stripped.  Fields: event, data (lines joined with '\n'), id
 * (ignored when it holds a NUL byte), retry (ASCII digits only); others
 * are ignored.  An event that met an over-long line or too much data is
 * dropped whole rather than delivered truncated.
 */
#include "tui/sse_parse.h"

#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/err.h"
#include "util/xalloc.h"

static const unsigned char bom[3] = {0xef, 0xbb, 0xbf};

struct sse_parser {
    sse_event_cb cb;
    void *ud;
    struct buf line;    /* the current, incomplete line */
    struct buf data;    /* data of the pending event, each line + '\n' */
    struct buf type;    /* event type of the pending event */
    struct buf id_buf;  /* last event id buffer (set by id:) */
    struct buf last_id; /* id given to the last dispatched event */
    long retry_ms;
    unsigned long skipped;
    unsigned bom_pos;  /* BOM bytes matched so far at stream start */
    int bom_done;      /* 1 once the stream start is past */
    int after_cr;      /* last byte seen was a CR ending a line */
    int line_overflow; /* current line passed SSE_LINE_MAX: drop its bytes */
    int event_bad;     /* pending event is to be dropped */
};

struct sse_parser *sse_parser_new(sse_event_cb cb, void *ud)
{
    struct sse_parser *p = xcalloc(1, sizeof *p);
    p->cb = cb;
    p->ud = ud;
    buf_init(&p->line, SSE_LINE_MAX);
    /* +1: every data line keeps its '\n' until dispatch trims the last */
    buf_init(&p->data, SSE_DATA_MAX + 1);
    buf_init(&p->type, SSE_LINE_MAX);
    buf_init(&p->id_buf, SSE_LINE_MAX);
    buf_init(&p->last_id, SSE_LINE_MAX);
    p->retry_ms = -1;
    return p;
}

void sse_parser_free(struct sse_parser *p)
{
    if (!p)
        return;
    buf_free(&p->line);
    buf_free(&p->data);
    buf_free(&p->type);
    buf_free(&p->id_buf);
    buf_free(&p->last_id);
    free(p);
}

void sse_parser_reset(struct sse_parser *p)
{
    buf_reset(&p->line);
    buf_reset(&p->data);
    buf_reset(&p->type);
    /* the id buffer restarts from the id the client will resume with */
    buf_reset(&p->id_buf);
    if (p->last_id.len)
        (void)buf_append(&p->id_buf, p->last_id.data, p->last_id.len);
    p->bom_pos = 0;
    p->bom_done = 0;
    p->after_cr = 0;
    p->line_overflow = 0;
    p->event_bad = 0;
}

const char *sse_parser_last_event_id(const struct sse_parser *p)
{
    return p->last_id.len ? p->last_id.data : "";
}

long sse_parser_retry_ms(const struct sse_parser *p)
{
    return p->retry_ms;
}

unsigned long sse_parser_skipped(const struct sse_parser *p)
{
    return p->skipped;
}

static void mark_bad(struct sse_parser *p)
{
    if (!p->event_bad)
        p->skipped++;
    p->event_bad = 1;
}

static int field_is(const char *f, size_t flen, const char *name)
{
    size_t n = strlen(name);
    return flen == n && memcmp(f, name, n) == 0;
}

/* Ends the pending event.  On success returns 0 (event delivered or there
 * was nothing to deliver).  On error returns the callback's value. */
static int dispatch(struct sse_parser *p)
{
    int rc = 0;

    /* the stream's last event id follows the buffer even for empty events */
    buf_reset(&p->last_id);
    if (p->id_buf.len)
        (void)buf_append(&p->last_id, p->id_buf.data, p->id_buf.len);
    if (p->event_bad || p->data.len == 0)
        goto out;
    p->data.len--; /* drop the '\n' after the last data line */
    p->data.data[p->data.len] = '\0';
    struct sse_event ev = {
        /* a type is a C string: one that starts with NUL is no type */
        .type = p->type.len && p->type.data[0] ? p->type.data : "message",
        .data = p->data.len ? p->data.data : "",
        .data_len = p->data.len,
        .last_event_id = sse_parser_last_event_id(p),
    };
    rc = p->cb ? p->cb(&ev, p->ud) : 0;
out:
    buf_reset(&p->data);
    buf_reset(&p->type);
    p->event_bad = 0;
    return rc < 0 ? rc : 0;
}

/* Parses a retry value: ASCII digits only, at least one; saturates. */
static void set_retry(struct sse_parser *p, const char *v, size_t n)
{
    long ms = 0;

    if (n == 0)
        return;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9')
            return;
        if (ms <= SSE_RETRY_MAX)
            ms = ms * 10 + (v[i] - '0');
    }
    p->retry_ms = ms > SSE_RETRY_MAX ? SSE_RETRY_MAX : ms;
}

/* Interprets one complete line.  On success returns 0.  On error returns
 * the callback's negative value (only a blank line dispatches). */
static int process_line(struct sse_parser *p, const char *s, size_t n)
{
    const char *colon, *v;
    size_t flen, vlen;

    if (n == 0)
        return dispatch(p);
    if (s[0] == ':')
        return 0; /* comment */
    colon = memchr(s, ':', n);
    if (colon) {
        flen = (size_t)(colon - s);
        v = colon + 1;
        vlen = n - flen - 1;
        if (vlen && v[0] == ' ') {
            v++;
            vlen--;
        }
    } else {
        flen = n;
        v = s + n;
        vlen = 0;
    }
    if (field_is(s, flen, "data")) {
        if (p->event_bad)
            return 0;
        if (buf_append(&p->data, v, vlen) < 0 || buf_putc(&p->data, '\n') < 0)
            mark_bad(p);
    } else if (field_is(s, flen, "event")) {
        buf_reset(&p->type);
        (void)buf_append(&p->type, v, vlen); /* vlen < SSE_LINE_MAX: fits */
    } else if (field_is(s, flen, "id")) {
        if (!memchr(v, '\0', vlen)) {
            buf_reset(&p->id_buf);
            (void)buf_append(&p->id_buf, v, vlen);
        }
    } else if (field_is(s, flen, "retry")) {
        set_retry(p, v, vlen);
    }
    return 0;
}

/* Adds bytes to the current line, switching to drop mode past the cap. */
static void line_add(struct sse_parser *p, const char *s, size_t n)
{
    if (p->line_overflow || n == 0)
        return;
    if (buf_append(&p->line, s, n) < 0) {
        p->line_overflow = 1;
        buf_reset(&p->line);
        mark_bad(p);
    }
}

static int line_end(struct sse_parser *p)
{
    int rc = 0;

    if (p->line_overflow)
        p->line_overflow = 0; /* the event is already marked bad */
    else
        rc = process_line(p, p->line.len ? p->line.data : "", p->line.len);
    buf_reset(&p->line);
    return rc;
}

int sse_parser_feed(struct sse_parser *p, const void *data, size_t len)
{
    const char *s = data;
    size_t i = 0;
    int rc = 0;

    /* stream start: drop a BOM, even one split over several feeds */
    while (!p->bom_done && i < len) {
        if ((unsigned char)s[i] == bom[p->bom_pos]) {
            i++;
            if (++p->bom_pos == sizeof bom)
                p->bom_done = 1;
            continue;
        }
        /* not a BOM after all: the matched bytes are line content */
        line_add(p, (const char *)bom, p->bom_pos);
        p->bom_done = 1;
    }
    if (p->after_cr && i < len) {
        if (s[i] == '\n')
            i++;
        p->after_cr = 0;
    }
    while (i < len) {
        size_t j = i;
        while (j < len && s[j] != '\n' && s[j] != '\r')
            j++;
        line_add(p, s + i, j - i);
        if (j == len)
            break;
        if (s[j] == '\r') {
            if (j + 1 < len) {
                if (s[j + 1] == '\n')
                    j++;
            } else {
                p->after_cr = 1;
            }
        }
        i = j + 1;
        rc = line_end(p);
        if (rc < 0)
            break;
    }
    return rc;
}
