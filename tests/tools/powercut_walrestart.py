#!/usr/bin/env python3
"""powercut_walrestart.py - plain SQLite at a WAL restart, for powercut.sh.

    powercut_walrestart.py run DB LEVEL     (under tests/tools/powercut.c)
    powercut_walrestart.py check DB         (on an image of DB after the cut)

run: a writer connection at synchronous=LEVEL fills t (200 rows, about
seven to a page), checkpoints it away, then makes 60 one-row transactions
(one frame each: row j*7 % 200 gets v = 1), so that the first frames of
the WAL hold pages that later frames change again.  A second connection at
FULL checkpoints with RESTART, which syncs the WAL and the database file:
those values are durable.  The writer then adds 1000 to every row, which
starts the WAL over (a new header, then frames written over the old ones),
and the process kills itself before anything else is synced.

check: every row must hold its durable value, or that plus 1000 (all rows
alike).  A row back at an older value means frames of the old WAL were
replayed over the database: a disk wrote new frames but not the new header,
which SQLite syncs first unless synchronous=OFF.  Prints "ok" or what is
wrong.
"""
import os
import signal
import sqlite3
import sys


def run(db, level):
    w = sqlite3.connect(db, isolation_level=None)
    w.execute('PRAGMA journal_mode=WAL')
    w.execute('PRAGMA synchronous=%s' % level)
    w.execute('PRAGMA wal_autocheckpoint=0')
    w.execute('CREATE TABLE t(id INTEGER PRIMARY KEY, v INTEGER, pad BLOB)')
    w.execute('BEGIN')
    for i in range(200):
        w.execute('INSERT INTO t VALUES(?, 0, zeroblob(500))', (i,))
    w.execute('COMMIT')
    k = sqlite3.connect(db, isolation_level=None)
    k.execute('PRAGMA synchronous=FULL')
    if k.execute('PRAGMA wal_checkpoint(TRUNCATE)').fetchone()[0]:
        raise SystemExit('checkpoint busy')
    for j in range(60):
        w.execute('UPDATE t SET v = 1 WHERE id = ?', (j * 7 % 200,))
    if k.execute('PRAGMA wal_checkpoint(RESTART)').fetchone()[0]:
        raise SystemExit('checkpoint busy')
    w.execute('UPDATE t SET v = v + 1000')
    os.kill(os.getpid(), signal.SIGKILL)


def check(db):
    durable = {j * 7 % 200 for j in range(60)}
    try:
        c = sqlite3.connect(db)
        ic = c.execute('PRAGMA integrity_check').fetchone()[0]
        rows = dict(c.execute('SELECT id, v FROM t').fetchall())
    except sqlite3.Error as e:
        return 'error: %s' % e
    if ic != 'ok':
        return 'integrity_check: %s' % ic
    if len(rows) != 200:
        return '%d rows' % len(rows)
    offsets = set()
    for i, v in rows.items():
        want = 1 if i in durable else 0
        if v - want not in (0, 1000):
            return 'row %d holds %d, durable value %d' % (i, v, want)
        offsets.add(v - want)
    if len(offsets) != 1:
        return 'half of a transaction'
    return 'ok'


if __name__ == '__main__':
    if sys.argv[1] == 'run':
        run(sys.argv[2], sys.argv[3])
    else:
        print(check(sys.argv[2]))
