/*
 * test_sse_parse.c - tui/sse_parse.c: every line-end style, BOM, comments,
 * field rules (event, multi-line data, id with NUL, retry digits only, no
 * colon, one space stripped), dispatch on blank line, the 64 KiB line cap,
 * and that any split of the input (every byte boundary, byte by byte)
 * yields exactly the events of a single feed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/sse_parse.h"
#include "util/buf.h"

/* Events are logged as "type|data|id\n" (data NULs shown as '0'). */
struct rec {
    struct buf log;
    int n;
    int fail_at; /* callback returns -1 on this event number (1-based), 0 never */
};

static int rec_cb(const struct sse_event *ev, void *ud)
{
    struct rec *r = ud;
    r->n++;
    assert_int_equal(ev->data[ev->data_len], '\0');
    buf_puts(&r->log, ev->type);
    buf_putc(&r->log, '|');
    for (size_t i = 0; i < ev->data_len; i++)
        buf_putc(&r->log, ev->data[i] ? ev->data[i] : '0');
    buf_putc(&r->log, '|');
    buf_puts(&r->log, ev->last_event_id);
    buf_putc(&r->log, '\n');
    return r->fail_at == r->n ? -1 : 0;
}

/* Parses in one feed; returns the malloc'd log. */
static char *parse_all(const char *in, size_t len, long *retry)
{
    struct rec r = {BUF_INIT(0), 0, 0};
    struct sse_parser *p = sse_parser_new(rec_cb, &r);
    assert_int_equal(sse_parser_feed(p, in, len), 0);
    if (retry)
        *retry = sse_parser_retry_ms(p);
    sse_parser_free(p);
    char *s = buf_steal(&r.log);
    return s ? s : strdup("");
}

/* Checks that every two-piece split and a byte-by-byte feed give `want`. */
static void check_splits(const char *in, size_t len, const char *want)
{
    for (size_t cut = 0; cut <= len; cut++) {
        struct rec r = {BUF_INIT(0), 0, 0};
        struct sse_parser *p = sse_parser_new(rec_cb, &r);
        assert_int_equal(sse_parser_feed(p, in, cut), 0);
        assert_int_equal(sse_parser_feed(p, in + cut, len - cut), 0);
        assert_string_equal(buf_cstr(&r.log), want);
        sse_parser_free(p);
        buf_free(&r.log);
    }
    struct rec r = {BUF_INIT(0), 0, 0};
    struct sse_parser *p = sse_parser_new(rec_cb, &r);
    for (size_t i = 0; i < len; i++)
        assert_int_equal(sse_parser_feed(p, in + i, 1), 0);
    assert_string_equal(buf_cstr(&r.log), want);
    sse_parser_free(p);
    buf_free(&r.log);
}

#define CHECK(in, want)                                                                            \
    do {                                                                                           \
        char *got_ = parse_all(in, sizeof(in) - 1, NULL);                                          \
        assert_string_equal(got_, want);                                                           \
        free(got_);                                                                                \
        check_splits(in, sizeof(in) - 1, want);                                                    \
    } while (0)

static void test_basic_fields(void **state)
{
    (void)state;
    CHECK("data: hello\n\n", "message|hello|\n");
    CHECK("event: threat\ndata: {\"a\":1}\nid: 7\n\n", "threat|{\"a\":1}|7\n");
    /* only one space is stripped; no space is fine too */
    CHECK("data:  two\n\ndata:none\n\n", "message| two|\nmessage|none|\n");
    /* a field without colon has an empty value: "data" adds an empty line */
    CHECK("data\ndata\n\n", "message|\n|\n");
    CHECK("data\n\n", "message||\n");
    /* unknown fields and a field name with a trailing space are ignored */
    CHECK("foo: bar\ndata : x\ndata: y\n\n", "message|y|\n");
    /* no blank line yet: nothing dispatched */
    CHECK("data: pending\n", "");
    /* event without data is not dispatched, and its type does not leak */
    CHECK("event: a\n\ndata: b\n\n", "message|b|\n");
    /* empty event value = default type */
    CHECK("event:\ndata: z\n\n", "message|z|\n");
    /* a type that is cut to nothing by a NUL is the default type too */
    CHECK("event:\0x\ndata: z\n\n", "message|z|\n");
}

static void test_multiline_data(void **state)
{
    (void)state;
    CHECK("data: a\ndata: b\ndata:\ndata: c\n\n", "message|a\nb\n\nc|\n");
    CHECK("data: x\n\n\n\ndata: y\n\n", "message|x|\nmessage|y|\n");
}

static void test_line_ends(void **state)
{
    (void)state;
    CHECK("data: a\r\rdata: b\r\n\r\ndata: c\n\n", "message|a|\nmessage|b|\nmessage|c|\n");
    /* CR CR LF = two line ends (CR, then CRLF) */
    CHECK("data: a\r\r\ndata: b\r\n\r\n", "message|a|\nmessage|b|\n");
    CHECK("event: e\r\ndata: 1\r\ndata: 2\r\n\r\n", "e|1\n2|\n");
}

static void test_comments(void **state)
{
    (void)state;
    CHECK(": hi\n:\ndata: x\n: between\n\n:tail\n\n", "message|x|\n");
    CHECK(":only comments\n\n", "");
}

static void test_id_rules(void **state)
{
    (void)state;
    /* the id persists to later events until changed; an empty id clears it */
    CHECK("id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\n", "message|a|1\nmessage|b|1\nmessage|c|\n");
    /* an id containing NUL is ignored */
    CHECK("id: 5\n\nid: 6\0x\ndata: q\n\n", "message|q|5\n");
    /* data with NUL is delivered with its length */
    CHECK("data: a\0b\n\n", "message|a0b|\n");

    struct rec r = {BUF_INIT(0), 0, 0};
    struct sse_parser *p = sse_parser_new(rec_cb, &r);
    assert_string_equal(sse_parser_last_event_id(p), "");
    /* an id on an event without data still becomes the last event id */
    assert_int_equal(sse_parser_feed(p, "id: abc\n\n", 9), 0);
    assert_int_equal(r.n, 0);
    assert_string_equal(sse_parser_last_event_id(p), "abc");
    /* a pending id is not the last one until its event is dispatched */
    assert_int_equal(sse_parser_feed(p, "id: def\ndata: x\n", 16), 0);
    assert_string_equal(sse_parser_last_event_id(p), "abc");
    /* reset (reconnect) drops the partial event but keeps the id */
    sse_parser_reset(p);
    assert_int_equal(sse_parser_feed(p, "\xef\xbb\xbf\n", 4), 0);
    assert_int_equal(r.n, 0);
    assert_string_equal(sse_parser_last_event_id(p), "abc");
    assert_int_equal(sse_parser_feed(p, "data: y\n\n", 9), 0);
    assert_string_equal(buf_cstr(&r.log), "message|y|abc\n");
    sse_parser_free(p);
    buf_free(&r.log);
}

static void test_retry(void **state)
{
    (void)state;
    long retry;
    char *s = parse_all("retry: 2500\n\n", 13, &retry);
    assert_int_equal(retry, 2500);
    free(s);
    s = parse_all("retry: 100\nretry: 12a\nretry: -5\nretry:\nretry: 1.5\n", 50, &retry);
    assert_int_equal(retry, 100);
    free(s);
    s = parse_all("retry: 999999999999999999999999\n", 32, &retry);
    assert_int_equal(retry, SSE_RETRY_MAX);
    free(s);
    s = parse_all("data: x\n\n", 9, &retry);
    assert_int_equal(retry, -1);
    free(s);
    /* retry without space; does not dispatch anything */
    CHECK("retry:300\n\n", "");
}

static void test_bom(void **state)
{
    (void)state;
    CHECK("\xef\xbb\xbf"
          "data: a\n\n",
          "message|a|\n");
    /* only one BOM is stripped: a second one is part of the field name */
    CHECK("\xef\xbb\xbf\xef\xbb\xbf"
          "data: a\n\ndata: b\n\n",
          "message|b|\n");
    /* a partial BOM is ordinary content */
    CHECK("\xef\xbb"
          "data: a\n\ndata: b\n\n",
          "message|b|\n");
    /* a BOM later in the stream is not stripped */
    CHECK("data: a\n\n\xef\xbb\xbf"
          "data: b\n\n",
          "message|a|\n");
}

static void test_line_cap(void **state)
{
    (void)state;
    size_t big = SSE_LINE_MAX + 10;
    size_t len = 0;
    char *in = malloc(big + 200);
    len += (size_t)sprintf(in, "data: ok1\n\nevent: big\ndata: ");
    memset(in + len, 'x', big);
    len += big;
    len += (size_t)sprintf(in + len, "\ndata: more\n\ndata: ok2\n\n");

    struct rec r = {BUF_INIT(0), 0, 0};
    struct sse_parser *p = sse_parser_new(rec_cb, &r);
    /* feed in uneven chunks so the cap is crossed mid-chunk */
    for (size_t off = 0; off < len; off += 777) {
        size_t n = len - off < 777 ? len - off : 777;
        assert_int_equal(sse_parser_feed(p, in + off, n), 0);
    }
    assert_string_equal(buf_cstr(&r.log), "message|ok1|\nmessage|ok2|\n");
    assert_int_equal(sse_parser_skipped(p), 1);
    sse_parser_free(p);
    buf_free(&r.log);

    /* a line exactly at the cap is accepted */
    len = (size_t)sprintf(in, "data:");
    memset(in + len, 'y', SSE_LINE_MAX - 5);
    len += SSE_LINE_MAX - 5;
    len += (size_t)sprintf(in + len, "\n\n");
    struct rec r2 = {BUF_INIT(0), 0, 0};
    p = sse_parser_new(rec_cb, &r2);
    assert_int_equal(sse_parser_feed(p, in, len), 0);
    assert_int_equal(r2.n, 1);
    assert_int_equal(r2.log.len, strlen("message||\n") + SSE_LINE_MAX - 5);
    assert_int_equal(sse_parser_skipped(p), 0);
    sse_parser_free(p);
    buf_free(&r2.log);
    free(in);
}

static void test_data_cap(void **state)
{
    (void)state;
    /* many lines each under the line cap, over the data cap together */
    size_t line = 60000, lines = SSE_DATA_MAX / line + 2;
    char *l = malloc(line + 8);
    memcpy(l, "data:", 5);
    memset(l + 5, 'z', line);
    l[5 + line] = '\n';
    struct rec r = {BUF_INIT(0), 0, 0};
    struct sse_parser *p = sse_parser_new(rec_cb, &r);
    for (size_t i = 0; i < lines; i++)
        assert_int_equal(sse_parser_feed(p, l, line + 6), 0);
    assert_int_equal(sse_parser_feed(p, "\ndata: after\n\n", 14), 0);
    assert_string_equal(buf_cstr(&r.log), "message|after|\n");
    assert_int_equal(sse_parser_skipped(p), 1);
    sse_parser_free(p);
    buf_free(&r.log);
    free(l);
}

static void test_callback_stop(void **state)
{
    (void)state;
    struct rec r = {BUF_INIT(0), 0, 1};
    struct sse_parser *p = sse_parser_new(rec_cb, &r);
    const char *in = "data: 1\n\ndata: 2\n\n";
    assert_int_equal(sse_parser_feed(p, in, strlen(in)), -1);
    assert_int_equal(r.n, 1);
    /* the parser stays usable */
    assert_int_equal(sse_parser_feed(p, "data: 3\n\n", 9), 0);
    assert_string_equal(buf_cstr(&r.log), "message|1|\nmessage|3|\n");
    sse_parser_free(p);
    buf_free(&r.log);
}

static void test_realistic_stream(void **state)
{
    (void)state;
    CHECK("\xef\xbb\xbf"
          "retry: 3000\r\n: hello\r\nevent: connected\r\ndata: {\"brandId\":\"b1\"}\r\n\r\n"
          "event: heartbeat\r\ndata: {}\r\n\r\n"
          "event: threat\r\nid: b1:00012\r\ndata: {\"alertId\":\"a1\",\r\ndata: "
          "\"sev\":\"CRIT\"}\r\n\r\n",
          "connected|{\"brandId\":\"b1\"}|\nheartbeat|{}|\n"
          "threat|{\"alertId\":\"a1\",\n\"sev\":\"CRIT\"}|b1:00012\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic_fields),
        cmocka_unit_test(test_multiline_data),
        cmocka_unit_test(test_line_ends),
        cmocka_unit_test(test_comments),
        cmocka_unit_test(test_id_rules),
        cmocka_unit_test(test_retry),
        cmocka_unit_test(test_bom),
        cmocka_unit_test(test_line_cap),
        cmocka_unit_test(test_data_cap),
        cmocka_unit_test(test_callback_stop),
        cmocka_unit_test(test_realistic_stream),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
