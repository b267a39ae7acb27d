#!/usr/bin/env bash
# verify_ab.sh - A/B of two genuproof binaries on the verify hot path.
#
#   bench/verify_ab.sh OLD_BIN NEW_BIN [--rounds N] [--duration S]
#       [--durability full|normal] [--conns C] [--extra "serve args"]
#
# For each round and each binary (alternating, in the order OLD NEW, then
# NEW OLD, so both see the same machine, with the page cache flushed
# between runs): a fresh `serve --demo-data` on a temp database (detector on,
# rate limit off, no access log), 3 s of warm-up, then wrk hammering ONE
# product (the demo watch) with C connections for S seconds.  Reports per
# run req/s, wrk's p50/p99 and the server's CPU time per request (user +
# system from /proc), then the medians per binary and the NEW/OLD ratios.
# Needs wrk and curl (`make bench-deps`).  Loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; exit 2; }
OLD=$1 NEW=$2; shift 2
ROUNDS=3 DUR=6 DURABILITY=full CONNS=32 EXTRA=""
while [ $# -gt 0 ]; do
    case "$1" in
    --rounds) ROUNDS=$2; shift 2 ;;
    --duration) DUR=$2; shift 2 ;;
    --durability) DURABILITY=$2; shift 2 ;;
    --conns) CONNS=$2; shift 2 ;;
    --extra) EXTRA=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
TMP=$(mktemp -d /tmp/verify_ab.XXXXXX)
SP=""
cleanup() { [ -n "$SP" ] && kill "$SP" 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT
TICK=$(getconf CLK_TCK)

# one_run BIN -> "rps p50_us p99_us cpu_us"
one_run() {
    local d="$TMP/run" out t0 t1 n
    rm -rf "$d"; mkdir -p "$d"
    # shellcheck disable=SC2086
    GENUPROOF_LOG=warn "$1" serve --demo-data --db "$d/db" --listen 127.0.0.1:0 \
        --port-file "$d/port" --durability "$DURABILITY" --rate-limit 0 $EXTRA >"$d/log" 2>&1 &
    SP=$!
    for _ in $(seq 1 100); do [ -s "$d/port" ] && break; sleep 0.1; done
    [ -s "$d/port" ] || { echo "server did not start: $(tail -3 "$d/log")" >&2; exit 1; }
    local url="http://127.0.0.1:$(cat "$d/port")/api/products/verify?code=wfPHybaFV3_a"
    wrk -t2 -c"$CONNS" -d3s -s bench/wrk_report.lua "$url" >/dev/null 2>&1
    t0=$(awk '{print $14 + $15}' "/proc/$SP/stat")
    out=$(wrk -t2 -c"$CONNS" -d"${DUR}s" -s bench/wrk_report.lua "$url" 2>&1 | grep '^WRK')
    t1=$(awk '{print $14 + $15}' "/proc/$SP/stat")
    kill "$SP"; wait "$SP" 2>/dev/null || true; SP=""
    rm -rf "$d"; sync # the next run does not pay for this one's writeback
    n=$(sed 's/.*requests=\([0-9]*\).*/\1/' <<<"$out")
    echo "$(sed 's/.* rps=\([0-9.]*\).*/\1/' <<<"$out") $(sed 's/.* p50_us=\([0-9]*\).*/\1/' <<<"$out")" \
        "$(sed 's/.* p99_us=\([0-9]*\).*/\1/' <<<"$out")" \
        "$(( (t1 - t0) * 1000000 / TICK / (n > 0 ? n : 1) ))"
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

echo "verify A/B: $CONNS connections, ${DUR}s, durability $DURABILITY, $ROUNDS rounds; load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for r in $(seq 1 "$ROUNDS"); do
    # ABBA: a run leaves its database's dirty pages to the kernel, whose
    # writeback then slows the run after it (an OLD-vs-OLD control showed
    # the second binary 8 % slower at normal durability before the order
    # alternated and the page cache was flushed between runs)
    order="old new"; [ $((r % 2)) = 0 ] && order="new old"
    for which in $order; do
        bin=$OLD; [ $which = new ] && bin=$NEW
        res=$(one_run "$bin")
        echo "$which $res" >>"$TMP/all"
        echo "round $r $which: req/s p50_us p99_us cpu_us/req = $res" >&2
    done
done
echo "| binary | req/s | p50 ms | p99 ms | server CPU µs/req |"
echo "|---|---:|---:|---:|---:|"
for which in old new; do
    rps=$(awk -v w=$which '$1==w {print $2}' "$TMP/all" | median)
    p50=$(awk -v w=$which '$1==w {print $3}' "$TMP/all" | median)
    p99=$(awk -v w=$which '$1==w {print $4}' "$TMP/all" | median)
    cpu=$(awk -v w=$which '$1==w {print $5}' "$TMP/all" | median)
    printf '| %s (%s) | %.0f | %.2f | %.2f | %.0f |\n' "$which" "$([ $which = old ] && echo "$OLD" || echo "$NEW")" \
        "$rps" "$(awk -v x="$p50" 'BEGIN {print x / 1000}')" "$(awk -v x="$p99" 'BEGIN {print x / 1000}')" "$cpu"
    eval "m_$which=\"$rps $cpu\""
done
# shellcheck disable=SC2154
read -r ro co <<<"$m_old"; read -r rn cn <<<"$m_new"
printf 'ratios new/old: req/s %.2f, CPU per request %.2f (load at end %s)\n' \
    "$(awk -v a="$rn" -v b="$ro" 'BEGIN {print a / b}')" "$(awk -v a="$cn" -v b="$co" 'BEGIN {print a / b}')" \
    "$(cut -d' ' -f1-3 /proc/loadavg)"
