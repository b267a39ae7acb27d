#!/usr/bin/env python3
"""powercut_torn.py - the other disk images a power cut may leave.

    powercut_torn.py JOURNAL IMAGE_DIR OUT_DIR SEED [KEEP]

tests/tools/powercut.c keeps in IMAGE_DIR what fsync made durable and, with
POWERCUT_JOURNAL, writes JOURNAL: every write and truncation of the files it
tracks, and every sync that made a prefix of them durable.  A real disk may
also have written any of the operations that were still pending at the cut,
in any order.  This builds one such image in OUT_DIR: IMAGE_DIR's files
(names starting with '.' excluded, they did not survive) with each pending
operation of each file applied with probability KEEP (default 0.5), chosen
by SEED; the kept ones are applied in the order they were made, so that a
block ends with one of the versions written to it.  Prints one line: how
many pending operations there were and how many were kept.
"""
import os
import random
import shutil
import struct
import sys


def read_journal(path):
    """Yields (kind, name, fields...) records."""
    with open(path, 'rb') as f:
        data = f.read()
    i, n = 0, len(data)
    while i < n:
        # The kill may cut the last record anywhere, its header included:
        # a record that is not whole was never returned to the caller.
        if i + 3 > n:
            return
        kind = data[i:i + 1].decode()
        (ln,) = struct.unpack_from('<H', data, i + 1)
        if i + 3 + ln > n:
            return
        name = data[i + 3:i + 3 + ln].decode()
        i += 3 + ln
        if kind == 'W':
            if i + 20 > n:
                return
            seq, off, length = struct.unpack_from('<QqI', data, i)
            i += 20
            if i + length > n:
                return  # cut in the middle of the record: never returned to the caller
            yield ('W', name, seq, off, data[i:i + length])
            i += length
        elif kind == 'T':
            if i + 16 > n:
                return
            seq, size = struct.unpack_from('<Qq', data, i)
            i += 16
            yield ('T', name, seq, size, None)
        elif kind == 'S':
            if i + 8 > n:
                return
            (seq,) = struct.unpack_from('<Q', data, i)
            i += 8
            yield ('S', name, seq, None, None)
        elif kind == 'D':
            yield ('D', name, None, None, None)
        else:
            raise SystemExit('powercut_torn: bad journal record %r at %d' % (kind, i))


def main():
    if len(sys.argv) not in (5, 6):
        raise SystemExit(__doc__)
    journal, image, out, seed = sys.argv[1:5]
    keep = float(sys.argv[5]) if len(sys.argv) == 6 else 0.5
    ops, synced = {}, {}
    for kind, name, seq, a, b in read_journal(journal):
        if kind in 'WT':
            ops.setdefault(name, []).append((kind, seq, a, b))
        elif kind == 'S':
            synced[name] = max(synced.get(name, 0), seq)
        else:  # D
            ops.pop(name, None)
            synced.pop(name, None)
    rnd = random.Random(int(seed))
    os.makedirs(out, exist_ok=True)
    pending = kept = 0
    for name in sorted(os.listdir(image)):
        if name.startswith('.'):
            continue
        dst = os.path.join(out, name)
        shutil.copyfile(os.path.join(image, name), dst)
        todo = [o for o in ops.get(name, []) if o[1] >= synced.get(name, 0)]
        pending += len(todo)
        with open(dst, 'r+b') as f:
            for kind, _seq, a, b in todo:
                if rnd.random() >= keep:
                    continue
                kept += 1
                if kind == 'T':
                    f.truncate(a)
                else:
                    f.seek(a)
                    f.write(b)
    print('pending %d kept %d' % (pending, kept))


if __name__ == '__main__':
    main()
