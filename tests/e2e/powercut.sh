#!/usr/bin/env bash
# tests/e2e/powercut.sh - a power cut, not just a killed process: the
# server runs under tests/tools/powercut.c (LD_PRELOAD), which keeps beside
# the database the image a disk would hold after a cut, i.e. only what an
# fsync/fdatasync made durable.  While eight clients register products,
# scan them from three countries and append provenance events, the server
# is killed with SIGKILL; the database is then replaced by its durable
# image (the -shm index, never synced, is dropped) and a server started on
# it must show:
#   - every registration, scan and event answered with a 2xx
#     (--durability full promises that a 2xx survives a power cut);
#   - each product's scanCount equal to its stored scans, valid chains,
#     brand counters covering what was answered, PRAGMA integrity_check ok;
#   - the detector catching up and every product scanned from three
#     countries with its geographic alert.
# The library is checked on plain SQLite first: rows committed at
# synchronous=FULL are in the image, rows committed at OFF are not.
# At --durability normal (answers before any fsync) the same cut may lose
# the last answered writes, but the database must stay intact and
# consistent (this found every connection running at synchronous=OFF).
#
# Runs the release binary (./genuproof) under the library: an ASan runtime
# must be first in the library list.  The restarted servers are the
# sanitizer build as usual.
set -u
. "$(dirname "$0")/lib.bash"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${B:-build}
SAN_BIN=$GENUPROOF_BIN
REL_BIN=${GENUPROOF_REL_BIN:-$ROOT/genuproof}
SHIM=${POWERCUT_SO:-$ROOT/$B/san/tests/powercut.so}
CLIENT="$(dirname "$0")/powercut_client.js"
DATA="$GP_DIR/data"
SHADOW="$GP_DIR/durable"
GP_DB="$DATA/genuproof.db"
ACKS="$GP_DIR/acks"
JOURNAL="$GP_DIR/journal"
TORN="$ROOT/tests/tools/powercut_torn.py"
WALRESTART="$ROOT/tests/tools/powercut_walrestart.py"
TORN_SEEDS=3 # torn images of the server's cut checked
ACKS_MIN=400 # answered writes before the cut

for f in "$REL_BIN" "$SHIM"; do
    [ -e "$f" ] || { echo "FAIL: $f missing (make test-build)"; exit 1; }
done
command -v node >/dev/null || { echo "FAIL: node missing"; exit 1; }

acks() { [ -f "$ACKS" ] && wc -l <"$ACKS" || echo 0; }

# run_cut DURABILITY: a fresh database with a brand, then the load under
# the library, the kill, and the durable image put in place of the files.
run_cut() {
    local durability=$1 i
    rm -rf "$DATA" "$SHADOW" "$ACKS" "$JOURNAL"
    mkdir -p "$DATA" "$SHADOW"
    GENUPROOF_BIN=$SAN_BIN
    gp_start --rate-limit 0 || return 1
    req POST /api/brands '{"name":"Power Cut Brand","domain":"powercut.example","industry":"test"}'
    BR=$(jb .id)
    gp_stop
    [ -n "$BR" ] && [ "$BR" != null ] || { fail "brand created ($durability)"; return 1; }

    # the server creates its pepper file under the library: its name must
    # survive too (the directory is synced after the file)
    rm -f "$DATA/genuproof.db.pepper"
    GENUPROOF_BIN=$REL_BIN
    LD_PRELOAD=$SHIM POWERCUT_DIR=$DATA POWERCUT_SHADOW=$SHADOW POWERCUT_JOURNAL=$JOURNAL \
        gp_start --rate-limit 0 --durability "$durability" || return 1
    node "$CLIENT" load "$GP_URL" "$GP_ADMIN_KEY" "$BR" "$ACKS" 8 >"$GP_DIR/load.log" 2>&1 &
    local client=$!
    for i in $(seq 1 600); do
        [ "$(acks)" -ge "$ACKS_MIN" ] && break
        kill -0 "$GP_PID" 2>/dev/null || break
        sleep 0.05
    done
    local before
    before=$(acks)
    kill -9 "$GP_PID"
    wait "$GP_PID" 2>/dev/null
    GP_PID=""
    wait "$client"
    local crc=$?
    check "the cut came in the middle of the load ($durability: $before answered writes)" \
        '[ "$before" -ge "$ACKS_MIN" ] && [ "$crc" = 0 ]' || { tail -n 20 "$GP_DIR/load.log" "$GP_LOG"; }
    grep -q 'powercut:' "$GP_LOG" && { fail "the library worked"; grep 'powercut:' "$GP_LOG"; }

    # the disk after the cut: only the durable images (POWERCUT_KEEP=DIR
    # keeps a copy of them and of the files as the kill left them)
    if [ -n "${POWERCUT_KEEP:-}" ]; then
        mkdir -p "$POWERCUT_KEEP/$durability"
        cp -r "$SHADOW" "$DATA" "$ACKS" "$POWERCUT_KEEP/$durability/"
    fi
    cp "$DATA/genuproof.db.pepper" "$GP_DIR/pepper.$durability" 2>/dev/null
    rm -rf "$DATA"
    mkdir -p "$DATA"
    local f
    for f in "$SHADOW"/*; do
        [ -e "$f" ] || continue
        case "$f" in *-shm) continue ;; esac
        cp "$f" "$DATA/"
    done
    GENUPROOF_BIN=$SAN_BIN
}

# ---- the library itself, on plain SQLite (sqlite3 shell): what was synced
# is in the image, what never was is not ----
calib() { # calib LEVEL -> rows of t in the image after a run at that level
    local d="$GP_DIR/cal-$1"
    rm -rf "$d"; mkdir -p "$d/files" "$d/image" "$d/after"
    LD_PRELOAD=$SHIM POWERCUT_DIR="$d/files" POWERCUT_SHADOW="$d/image" sqlite3 "$d/files/c.db" \
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=$1; CREATE TABLE t(a);
         INSERT INTO t VALUES(1); INSERT INTO t VALUES(2); INSERT INTO t VALUES(3);" >/dev/null 2>&1
    cp "$d/image/"* "$d/after/" 2>/dev/null
    rm -f "$d/after/"*-shm
    sqlite3 "$d/after/c.db" 'SELECT count(*) FROM t' 2>/dev/null || echo none
}
n=$(calib FULL)
check "library: what SQLite synced (synchronous=FULL) is in the image (rows: $n)" '[ "$n" = 3 ]'
n=$(calib OFF)
check "library: what SQLite never synced (synchronous=OFF) is not (rows: $n)" '[ "$n" != 3 ]'

# file names: a new file synced without its directory has no name after a
# cut; once the directory is synced it has
d="$GP_DIR/cal-dir"
mkdir -p "$d/files" "$d/image"
LD_PRELOAD=$SHIM POWERCUT_DIR="$d/files" POWERCUT_SHADOW="$d/image" python3 -c '
import os, sys
d = sys.argv[1]
for name, sync_dir in (("b", True), ("a", False)):
    fd = os.open(os.path.join(d, name), os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, b"data")
    os.fsync(fd)
    os.close(fd)
    if sync_dir:
        dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
        os.fsync(dfd)
        os.close(dfd)
' "$d/files"
check "library: a file whose directory was not synced has no name after the cut" '[ ! -e "$d/image/a" ]'
check "library: after a directory fsync it has, with its data" '[ "$(cat "$d/image/b" 2>/dev/null)" = data ]'

# ---- torn images: a disk may also have written any of the writes still
# pending at the cut, in any order (tests/tools/powercut_torn.py) ----
torn_damaged() { # torn_damaged LEVEL SEEDS -> how many of the images are damaged
    local d="$GP_DIR/walrestart-$1" seed bad=0
    rm -rf "$d"; mkdir -p "$d/files" "$d/image"
    LD_PRELOAD=$SHIM POWERCUT_DIR="$d/files" POWERCUT_SHADOW="$d/image" POWERCUT_JOURNAL="$d/journal" \
        python3 "$WALRESTART" run "$d/files/c.db" "$1" >/dev/null 2>&1
    for seed in $(seq 1 "$2"); do
        rm -rf "$d/out"
        python3 "$TORN" "$d/journal" "$d/image" "$d/out" "$seed" >/dev/null || { echo x; return; }
        rm -f "$d/out/"*-shm
        [ "$(python3 "$WALRESTART" check "$d/out/c.db")" = ok ] || bad=$((bad + 1))
    done
    echo "$bad"
}
n=$(torn_damaged OFF 40)
check "torn images: at synchronous=OFF a WAL restart can replay stale frames ($n of 40 damaged)" \
    '[ "$n" != x ] && [ "$n" -gt 0 ]'
n=$(torn_damaged NORMAL 40)
check "torn images: at NORMAL, what deferred sync runs at, never ($n of 40 damaged)" '[ "$n" = 0 ]'
# The kill cuts the journal anywhere, also inside a record's header: the
# builder must read a journal cut at any byte up to the last whole record
# (one record of each kind, the journal format of tests/tools/powercut.c).
JCUT=$(python3 - "$TORN" <<'PYEOF'
import importlib.util, os, struct, sys, tempfile
spec = importlib.util.spec_from_file_location("torn", sys.argv[1])
torn = importlib.util.module_from_spec(spec)
spec.loader.exec_module(torn)
name = b"c.db-wal"
head = lambda k: k + struct.pack("<H", len(name)) + name
recs = [head(b"W") + struct.pack("<QqI", 1, 0, 5) + b"hello",
        head(b"T") + struct.pack("<Qq", 2, 100),
        head(b"S") + struct.pack("<Q", 3),
        head(b"D")]
data, ends = b"", []
for r in recs:
    data += r
    ends.append(len(data))
tmp = os.path.join(tempfile.mkdtemp(), "j")
bad = 0
for cut in range(len(data) + 1):
    open(tmp, "wb").write(data[:cut])
    try:
        n = len(list(torn.read_journal(tmp)))
        bad += n != sum(1 for e in ends if e <= cut)
    except Exception:
        bad += 1
print("%d %d" % (len(data) + 1, bad))
PYEOF
)
check "torn images: a journal cut at any byte is read up to its last whole record (cuts, bad: $JCUT)" \
    '[ "${JCUT#* }" = 0 ] && [ "${JCUT% *}" -gt 0 ]'

# check_image NAME: the database in $DATA is the disk after the cut of the
# full-durability run: intact, and every answered write is there
check_image() {
    local name=$1 ic lost
    rm -f "$GP_DIR/ic.db" "$GP_DIR/ic.db-wal"
    cp "$GP_DB" "$GP_DIR/ic.db"
    [ -e "$GP_DB-wal" ] && cp "$GP_DB-wal" "$GP_DIR/ic.db-wal"
    ic=$(sqlite3 "$GP_DIR/ic.db" 'PRAGMA integrity_check' 2>&1)
    check "$name: integrity_check after the cut: $ic" '[ "$ic" = ok ]'
    gp_start --rate-limit 0 || gp_finish
    node "$CLIENT" check "$GP_URL" "$GP_ADMIN_KEY" "$BR" "$ACKS" >"$GP_DIR/check.log" 2>&1
    grep -E '^(PASS|FAIL): ' "$GP_DIR/check.log" | sed "s/^\(PASS\|FAIL\): /&$name: /"
    grep -E '^(PASS|FAIL): ' "$GP_DIR/check.log" | grep -q '^FAIL' && grep -vE '^(PASS|FAIL): ' "$GP_DIR/check.log" | head -20
    GP_PASSES=$((GP_PASSES + $(grep -c '^PASS: ' "$GP_DIR/check.log")))
    GP_FAILS=$((GP_FAILS + $(grep -c '^FAIL: ' "$GP_DIR/check.log")))
    lost=$(sed -n 's/^LOST //p' "$GP_DIR/check.log")
    check "$name: no answered write lost (lost: ${lost:-?})" '[ "${lost:-x}" = 0 ]'
    gp_stop
}

# ---- full durability: nothing answered may be lost ----
if run_cut full; then
    check "database file survived" '[ -s "$GP_DB" ]'
    check "the pepper file created under the library survived" \
        'cmp -s "$GP_DIR/pepper.full" "$GP_DB.pepper"'
    check_image full
    for seed in $(seq 1 $TORN_SEEDS); do
        rm -rf "$DATA"
        out=$(python3 "$TORN" "$JOURNAL" "$SHADOW" "$DATA" "$seed")
        rm -f "$DATA/"*-shm
        echo "   torn image $seed: $out"
        check_image "full, torn image $seed"
    done
fi

# ---- normal durability: answers before the fsync, so a cut may lose the
# last answered writes (reported, not checked), but never the database ----
if run_cut normal; then
    cp "$GP_DB" "$GP_DIR/ic2.db"
    [ -e "$GP_DB-wal" ] && cp "$GP_DB-wal" "$GP_DIR/ic2.db-wal"
    ic=$(sqlite3 "$GP_DIR/ic2.db" 'PRAGMA integrity_check' 2>&1)
    check "integrity_check after the cut at normal durability: $ic" '[ "$ic" = ok ]'
    gp_start --rate-limit 0 || gp_finish
    POWERCUT_CONTROL=1 node "$CLIENT" check "$GP_URL" "$GP_ADMIN_KEY" "$BR" "$ACKS" >"$GP_DIR/control.log" 2>&1
    grep -E '^(PASS|FAIL): ' "$GP_DIR/control.log" | sed 's/^\(PASS\|FAIL\): /&normal: /'
    GP_PASSES=$((GP_PASSES + $(grep -c '^PASS: ' "$GP_DIR/control.log")))
    GP_FAILS=$((GP_FAILS + $(grep -c '^FAIL: ' "$GP_DIR/control.log")))
    echo "   normal durability: $(sed -n 's/^LOST //p' "$GP_DIR/control.log") of $(acks) answered writes lost in the cut"
    gp_stop
fi
gp_finish
    POWERCUT_CONTROL=1 node "$CLIENT" check "$GP_URL" "$GP_ADMIN_KEY" "$BR" "$ACKS" >"$GP_DIR/control.log" 2>&1
    lost=$(sed -n 's/^LOST //p' "$GP_DIR/control.log")
    check "control: normal durability loses answered writes in a cut (lost: ${lost:-?} of $(acks))" \
        '[ -n "$lost" ] && [ "$lost" -gt 0 ]' || cat "$GP_DIR/control.log"
    gp_stop
fi
gp_finish
