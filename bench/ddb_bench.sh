#!/usr/bin/env bash
# bench/ddb_bench.sh - scan -> SSE alert latency in DynamoDB mode, against
# AWS's DynamoDB Local (tests/tools/ddb_local.sh; needs java and
# `cd tests && npm ci`), with 1 and then 4 workers.
#
# For each worker count: a fresh DynamoDB Local and table (`genuproof
# table create`), then bench/sse_latency runs `genuproof serve --dynamodb
# URL --table T --workers N` (in-process Streams detector in worker 0,
# GSI1-polling SSE in every worker) and measures, per alert, from sending
# the third verify request until the product's `threat` frame is read.
# Before each product's scans it waits a random 0..--jitter-ms, so the
# alerts start at random phases of the server's two poll timers (the
# detector's idle GetRecords poll and the GSI1 poll) instead of in step
# with them.  Prints each run's table, the CPU time DynamoDB Local used
# during the run, and a summary.
#
#   make bench && bench/ddb_bench.sh [--bin ./genuproof]
#       [--latency build/bench/sse_latency] [--alerts 200] [--warmup 10]
#       [--workers "1 4"] [--timeout-ms 5000] [--jitter-ms 500]
#
# Everything it starts (DynamoDB Local, the servers) is stopped on exit.
set -u
cd "$(dirname "$0")/.." || exit 1
BIN=./genuproof
LAT=build/bench/sse_latency
ALERTS=200
WARMUP=10
WORKERS="1 4"
TIMEOUT_MS=5000
JITTER_MS=500
CMDLINE="bench/ddb_bench.sh$(printf ' %q' "$@")"

usage() {
    echo "usage: bench/ddb_bench.sh [--bin PATH] [--latency PATH] [--alerts N] [--warmup N]" >&2
    echo "                          [--workers \"1 4\"] [--timeout-ms MS] [--jitter-ms MS]" >&2
    exit 2
}
while [ $# -gt 0 ]; do
    [ $# -ge 2 ] || usage
    case "$1" in
    --bin) BIN=$2 ;;
    --latency) LAT=$2 ;;
    --alerts) ALERTS=$2 ;;
    --warmup) WARMUP=$2 ;;
    --workers) WORKERS=$2 ;;
    --timeout-ms) TIMEOUT_MS=$2 ;;
    --jitter-ms) JITTER_MS=$2 ;;
    *) usage ;;
    esac
    shift 2
done
[[ $ALERTS =~ ^[1-9][0-9]{0,5}$ && $WARMUP =~ ^[0-9]{1,4}$ && $TIMEOUT_MS =~ ^[1-9][0-9]{2,5}$ &&
    $JITTER_MS =~ ^[0-9]{1,5}$ ]] || usage
for w in $WORKERS; do [[ $w =~ ^[1-9][0-9]?$ ]] || usage; done

log() { echo "[ddb_bench $(date +%T)] $*" >&2; }
die() {
    log "error: $*"
    exit 1
}

[ -x "$BIN" ] || die "$BIN not found (make genuproof)"
[ -x "$LAT" ] || die "$LAT not found (make bench)"
command -v java >/dev/null || die "java not found (apt-get install openjdk-17-jre-headless)"
[ -d tests/node_modules/amplify-dynamodb-simulator ] || die "DynamoDB Local missing (cd tests && npm ci)"

export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench AWS_REGION=us-east-1
unset AWS_SESSION_TOKEN AWS_PROFILE AWS_ENDPOINT_URL_DYNAMODB DYNAMODB_TABLE GENUPROOF_TIME_SCALE

TMP=$(mktemp -d /tmp/gp-ddb-bench.XXXXXX)
cleanup() {
    # sse_latency stops its own server; DynamoDB Local is ours
    tests/tools/ddb_local.sh stop "$TMP/ddb" >/dev/null 2>&1
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

TICK=$(getconf CLK_TCK)
# user + system CPU ticks of process $1
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }

# A fresh DynamoDB Local per worker count: one instance gets slower run
# after run (measured: the second 200-alert run of a session had its verify
# answers and both latency legs about twice as slow, whichever came second).
# From $TMP: DynamoDB Local writes a metadata file into its working directory.
ddb_start() {
    tests/tools/ddb_local.sh stop "$TMP/ddb" >/dev/null 2>&1
    PORT=$(cd "$TMP" && "$OLDPWD/tests/tools/ddb_local.sh" start "$TMP/ddb") || die "DynamoDB Local did not start"
    URL="http://127.0.0.1:$PORT"
    JPID=$(cat "$TMP/ddb/pid")
    log "DynamoDB Local on $URL (pid $JPID)"
}

DATE=$(date -u '+%Y-%m-%d %H:%M UTC')
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
SUMMARY=$TMP/summary
: >"$SUMMARY"
rc=0
for w in $WORKERS; do
    ddb_start
    table=gpbench_w${w}_$$
    "$BIN" table create --dynamodb "$URL" --table "$table" >"$TMP/table.log" 2>&1 ||
        die "table create: $(cat "$TMP/table.log")"
    log "workers $w: table $table, $ALERTS alerts after $WARMUP warm-up"
    j0=$(cpu_ticks "$JPID")
    t0=$(date +%s%N)
    out=$("$LAT" --bin "$BIN" --alerts "$ALERTS" --warmup "$WARMUP" --timeout-ms "$TIMEOUT_MS" \
        --jitter-ms "$JITTER_MS" --dynamodb "$URL" --table "$table" --workers "$w" 2>&1)
    lrc=$?
    t1=$(date +%s%N)
    j1=$(cpu_ticks "$JPID")
    [ $lrc -eq 0 ] || rc=1
    echo "## workers: $w"
    echo
    echo "$out"
    jcpu=$(awk -v a="$j0" -v b="$j1" -v t="$TICK" 'BEGIN { printf "%.1f", (b - a) / t }')
    wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
    echo "DynamoDB Local CPU during the run: $jcpu s over $wall s wall (setup included)"
    echo
    row=$(grep '^| scan sent -> threat frame read' <<<"$out" | cut -d'|' -f3-6 | tr -d ' ')
    miss=$(sed -nE 's/^alerts missing[^:]*: ([0-9]+);.*/\1/p' <<<"$out")
    echo "$w|$row|${miss:-?}|$jcpu|$wall" >>"$SUMMARY"
done
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

echo "# scan -> alert latency against DynamoDB Local"
echo
echo "Command: \`$CMDLINE\`; date $DATE; $(nproc) cores,"
echo "$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo); load average (1/5/15 min) at start $LOAD_START, at end $LOAD_END."
echo
echo "| workers | p50 ms | p90 ms | p99 ms | max ms | missing | DynamoDB Local CPU s | wall s | p99 <= 1.5 s |"
echo "|---|---|---|---|---|---|---|---|---|"
while IFS='|' read -r w p50 p90 p99 mx miss jcpu wall; do
    ok=$(awk -v p="$p99" -v m="$miss" 'BEGIN { print (p != "" && p + 0 <= 1500 && m == "0") ? "yes" : "NO" }')
    echo "| $w | $p50 | $p90 | $p99 | $mx | $miss | $jcpu | $wall | $ok |"
done <"$SUMMARY"
exit $rc
