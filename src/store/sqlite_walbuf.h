/*
 * sqlite_walbuf.h - a VFS shim that writes each commit's WAL frames with
 * one system call instead of two per page.
 *
 * Why.  SQLite appends a commit to the WAL one frame at a time, and each
 * frame as two pwrite() calls: its 24-byte header, then the page.  A
 * group commit of the server touches dozens of pages, so the event loop
 * made over a hundred small writes per commit, each straddling two
 * page-cache folios of the file; in the kernel that cost 1.5 us per frame
 * against 0.3 us for the same bytes written at once (docs/benchmarks.md).
 *
 * What.  Through this VFS the WAL file of a connection collects writes
 * that continue the previous one in a buffer (up to WALBUF_CAP bytes) and
 * writes them with one pwrite():
 *   - as soon as the page of a commit frame (a frame header whose "database
 *     size after commit" field is non-zero) has been added, so the write
 *     error, if any, is the commit's own and SQLite fails the commit before
 *     it publishes the new WAL index header: a committed transaction is in
 *     the file (and thus in the kernel) before any other connection can see
 *     it, exactly as without the shim;
 *   - before any other operation on the WAL file (read, sync, size,
 *     truncate, file control, close) and before a write that does not
 *     continue the buffer, so SQLite never observes the buffering;
 *   - before the connection's shared-memory barrier and lock calls on the
 *     database file (a safety net: a commit has flushed already).
 * Frames SQLite writes before a commit (a transaction spilling pages from
 * its cache) wait in the buffer for the commit frame; a rolled-back
 * transaction's frames are written out before anything overwrites them, so
 * the order of the writes that reach the file is SQLite's.  Durability is
 * unchanged: the bytes are in the kernel at the same points, and every
 * sync (SQLite's or the store's sync thread, after the commit) covers them.
 *
 * Everything else (locks, shared memory, the database file, journals) is
 * forwarded unchanged to the default VFS.  The WAL is paired with its
 * database file through sqlite3_database_file_object(); a connection
 * belongs to one thread at a time, and so does its buffer.
 *
 * sqlite_walbuf_register() registers the VFS (not as the default) and
 * returns its name, or NULL when it cannot; idempotent and thread-safe.
 */
#ifndef GENUPROOF_STORE_SQLITE_WALBUF_H
#define GENUPROOF_STORE_SQLITE_WALBUF_H

#include <stdint.h>

#define WALBUF_VFS_NAME "genuproof-walbuf"
/* One flush is one write of at most this many bytes: SQLite's unix VFS
 * takes at most 128 KB - 1 per pwrite() (its length is masked with
 * 0x1ffff, so a write of exactly 128 KB would write nothing). */
#define WALBUF_CAP (124 * 1024)

const char *sqlite_walbuf_register(void);

/* Counters, process-wide, for tests and /metrics. */
struct sqlite_walbuf_stats {
    uint64_t writes_in;  /* WAL writes SQLite made through the shim */
    uint64_t writes_out; /* writes that reached the file */
    uint64_t commit_flushes;
    uint64_t errors; /* failed writes reported to SQLite */
};
void sqlite_walbuf_stats(struct sqlite_walbuf_stats *out);

#ifdef UNITTEST
/* The next N writes to the file (flushes or direct) fail with errno e. */
void sqlite_walbuf_test_fail_writes(int n, int e);
#endif

#endif
