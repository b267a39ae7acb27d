/*
 * sse_fake.c - fake connection sink and output helpers for the SSE hub
 * unit tests (sse_fake.h).
 */
#include "sse_fake.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/alert.h"
#include "core/jsonw.h"
#include "http/sse.h"
#include "store/store.h"
#include "util/err.h"

static struct fake_conn *fc(struct http_conn *c)
{
    return (struct fake_conn *)(void *)c;
}

static const struct fake_conn *cfc(const struct http_conn *c)
{
    return (const struct fake_conn *)(const void *)c;
}

struct http_conn *fake_hc(struct fake_conn *f)
{
    return (struct http_conn *)(void *)f;
}

static int fake_send(struct http_conn *c, const void *data, size_t n)
{
    struct fake_conn *f = fc(c);
    if (f->closed)
        return ERR_IO;
    if (f->stuck && f->pending + n > f->cap) {
        f->closed = true;
        return ERR_TOOBIG;
    }
    assert_int_equal(buf_append(&f->out, data, n), 0);
    if (f->stuck)
        f->pending += n;
    f->sends++;
    return 0;
}

static void fake_close(struct http_conn *c)
{
    fc(c)->closed = true;
}

static size_t fake_pending(const struct http_conn *c)
{
    return cfc(c)->pending;
}

static const char *fake_peer(const struct http_conn *c)
{
    (void)c;
    return "192.0.2.1";
}

const struct sse_sink_ops fake_sink = {fake_send, fake_close, fake_pending, fake_peer, NULL};

void fake_conn_init(struct fake_conn *f)
{
    buf_init(&f->out, 1 << 22);
    f->cap = 1 << 20;
}

void fake_conn_free(struct fake_conn *f)
{
    buf_free(&f->out);
}

int fake_count(const struct fake_conn *f, const char *needle)
{
    int n = 0;
    const char *p = f->out.data ? f->out.data : "";
    size_t len = strlen(needle);
    while ((p = strstr(p, needle))) {
        n++;
        p += len;
    }
    return n;
}

char *fake_threat_frame(const cJSON *item, const char *eid)
{
    struct buf b = BUF_INIT(1 << 20);
    struct jsonw w;
    assert_int_equal(sse_event_begin(&b, "threat", eid), 0);
    jsonw_init(&w, &b);
    alert_write_json(&w, item);
    assert_int_equal(jsonw_error(&w), 0);
    assert_int_equal(sse_event_end(&b), 0);
    return buf_steal(&b);
}

struct store *fake_store_open(const char *path, int64_t retention_ms)
{
    struct store_options o = {
        .path = path, .durability = STORE_DURABILITY_NORMAL, .stream_retention_ms = retention_ms};
    char err[256];
    struct store *s = store_open_sqlite(&o, err, sizeof err);
    if (!s)
        fprintf(stderr, "open: %s\n", err);
    assert_non_null(s);
    return s;
}

void fake_db_remove(const char *dir, const char *path)
{
    static const char *const sfx[] = {"", "-wal", "-shm", "-journal"};
    char p[512];
    for (size_t i = 0; i < sizeof sfx / sizeof sfx[0]; i++) {
        snprintf(p, sizeof p, "%s%s", path, sfx[i]);
        unlink(p);
    }
    rmdir(dir);
}
