/*
 * store_sqlite.h - the embedded SQLite driver of the item store.
 *
 * The constructor, store_open_sqlite(), is declared in store.h with the
 * rest of the store API; this header only names the schema version the
 * driver writes, for tools and tests that inspect a database file.
 *
 * File layout (schema version 2):
 *   items(pk, sk, gsi1pk, gsi1sk, ttl, size, body)  WITHOUT ROWID,
 *       primary key (pk, sk); partial indexes on (gsi1pk, gsi1sk, pk, sk)
 *       and on ttl.  body is the item's canonical JSON; size its DynamoDB
 *       size.
 *   stream(seq, ts, kind, pk, sk, image)  the change stream; seq is one past
 *       the head (the newest record's seq, or meta "stream_floor" after
 *       trimming removed it), given by the writer under the write lock;
 *       kind 0 INSERT, 1 MODIFY, 2 REMOVE; image NULL for REMOVE.
 *       Schema 1 (still opened and written) had seq AUTOINCREMENT and the
 *       head in sqlite_sequence.
 *   checkpoints(reader, seq, updated)  stream readers' positions.
 *   meta(key, value)  "schema_version", "stream_floor".
 */
#ifndef GP_STORE_STORE_SQLITE_H
#define GP_STORE_STORE_SQLITE_H

#include "store/store.h"

/* The schema a new database gets, and the oldest this build still opens
 * (1: stream.seq AUTOINCREMENT; 2: seq given by the driver, the head kept
 * in meta "stream_floor" when trimming removes the newest record). */
#define STORE_SQLITE_SCHEMA_VERSION 2
#define STORE_SQLITE_SCHEMA_OLDEST  1
/* WAL pages between automatic checkpoints under store_set_bulk(). */
#define STORE_SQLITE_BULK_CHECKPOINT 10000

#ifdef UNITTEST
struct sqlite_sync;
/* Test builds only: the nth statement the driver runs from now on fails
 * with ERR_IO before touching the database (0 turns this off). */
void store_sqlite_fault(struct store *s, int nth);
/* The deferred-sync thread of the store (NULL without deferred sync). */
struct sqlite_sync *store_sqlite_sync(struct store *s);
/* PRAGMA synchronous of the store's connection (0 OFF, 1 NORMAL, 2 FULL;
 * -1 on error). */
int store_sqlite_synchronous(struct store *s);
/* Runs the checkpoint the WAL hook asks for after a commit (deferred
 * sync) now; *level_during gets the synchronous level it ran at. */
void store_sqlite_inline_checkpoint(struct store *s, int *level_during);
#endif

#endif
