/*
 * sse_fake.h - the fake connection sink the SSE hub tests plug into
 * sse_hub / sse_poll (struct sse_sink_ops) instead of HTTP connections,
 * and small helpers to inspect what a connection received.
 *
 * A fake_conn records every byte "sent" in out.  A stuck connection never
 * drains: its pending bytes grow with each send and a send past cap fails
 * with ERR_TOOBIG (the connection closes, as the server's output cap
 * does); sends to a closed connection fail with ERR_IO.
 *
 * Also the fixture's database: a SQLite store file in a temp directory.
 */
#ifndef GP_TESTS_SSE_FAKE_H
#define GP_TESTS_SSE_FAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "api/sse_hub.h"
#include "util/buf.h"

struct store;

struct fake_conn {
    struct buf out; /* everything "sent" */
    size_t cap;     /* unsent bytes allowed when stuck (like stream_buffer_max) */
    size_t pending; /* pretend-unsent bytes (grows with sends when stuck) */
    bool stuck;     /* never drains: pending grows */
    bool closed;
    int sends; /* successful sends */
};

/* send/close/pending/peer on fake_conns; no set_sndbuf. */
extern const struct sse_sink_ops fake_sink;

/* The connection handle the hubs get for f. */
struct http_conn *fake_hc(struct fake_conn *f);
/* Prepares f's output buffer (4 MiB max) and a 1 MiB cap. */
void fake_conn_init(struct fake_conn *f);
/* Frees f's output. */
void fake_conn_free(struct fake_conn *f);
/* Occurrences of needle in f's output. */
int fake_count(const struct fake_conn *f, const char *needle);
/* The exact "threat" frame of item with id eid (malloc'd; the test
 * frees it), built independently of the hubs: sse_event_begin +
 * alert_write_json + sse_event_end. */
char *fake_threat_frame(const cJSON *item, const char *eid);

/* Opens the SQLite store at path (normal durability, stream retention
 * retention_ms, 0: the default); fails the test when it cannot. */
struct store *fake_store_open(const char *path, int64_t retention_ms);
/* Removes the database path (and its -wal, -shm, -journal files) and
 * then the directory dir. */
void fake_db_remove(const char *dir, const char *path);

#endif
