/*
 * fuzz_sse_parse.c - tui/sse_parse.c on hostile streams: the events of a
 * single feed must equal those of a feed split at a point chosen by the
 * first input byte and of a byte-by-byte feed (same types, data, ids in
 * the same order), every event's data is NUL-terminated at data_len, the
 * type is never empty, and retry stays within its bounds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tui/sse_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct digest {
    uint64_t h;
    unsigned long n;
};

static void mix(struct digest *d, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++)
        d->h = (d->h ^ s[i]) * 1099511628211ull;
    d->h = (d->h ^ 0xff) * 1099511628211ull; /* field separator */
}

static int cb(const struct sse_event *ev, void *ud)
{
    struct digest *d = ud;
    if (ev->data[ev->data_len] != '\0' || ev->type[0] == '\0' || ev->data_len > SSE_DATA_MAX)
        abort();
    d->n++;
    mix(d, ev->type, strlen(ev->type));
    mix(d, ev->data, ev->data_len);
    mix(d, ev->last_event_id, strlen(ev->last_event_id));
    return 0;
}

static struct digest run(const uint8_t *data, size_t size, size_t step)
{
    struct digest d = {14695981039346656037ull, 0};
    struct sse_parser *p = sse_parser_new(cb, &d);
    for (size_t off = 0; off < size; off += step) {
        size_t n = size - off < step ? size - off : step;
        if (sse_parser_feed(p, data + off, n) != 0)
            abort();
    }
    long r = sse_parser_retry_ms(p);
    if (r < -1 || r > SSE_RETRY_MAX)
        abort();
    mix(&d, sse_parser_last_event_id(p), strlen(sse_parser_last_event_id(p)));
    sse_parser_free(p);
    return d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 20)
        return 0;
    struct digest whole = run(data, size, size ? size : 1);
    struct digest split = run(data, size, size ? (size_t)data[0] % size + 1 : 1);
    if (whole.n != split.n || whole.h != split.h)
        abort();
    if (size <= 4096) {
        struct digest bytes = run(data, size, 1);
        if (whole.n != bytes.n || whole.h != bytes.h)
            abort();
    }
    return 0;
}
