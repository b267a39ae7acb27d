#!/usr/bin/env bash
# bench/webhook_bench.sh - scan -> webhook delivery latency, on the SQLite
# store and on DynamoDB (AWS's DynamoDB Local: tests/tools/ddb_local.sh;
# needs java, node and `cd tests && npm ci`).
#
# Per store: a fresh `genuproof serve --demo-data --allow-private-webhooks`
# (on DynamoDB with its in-process Streams detector), the test receiver
# (tests/e2e/webhook_receiver.js) on loopback, and one webhook of the demo
# brand subscribed to verification_scan.  Then --scans verifies of a demo
# product, one at a time with a random 0..--jitter-ms pause before each, so
# the scans fall at random phases of the server's poll timers.  A delivery's
# latency is the time the receiver got it minus the scan's own timestamp
# (set by the server when it answered the verify; one machine, one clock).
#
# On SQLite the dispatcher reads the change stream as soon as a commit
# wakes it.  On DynamoDB the scan travels through DynamoDB Streams to the
# Streams detector (idle GetRecords poll 0.25 s), which writes the delivery
# into the pending index; the API process's dispatcher polls that index
# once a second (docs/dynamodb.md, "Webhooks on DynamoDB").
#
#   make genuproof && bench/webhook_bench.sh [--bin ./genuproof]
#       [--scans 100] [--warmup 5] [--jitter-ms 300] [--stores "sqlite dynamodb"]
#
# Prints a Markdown table.  Everything it starts is stopped on exit.
set -u
cd "$(dirname "$0")/.." || exit 1
BIN=./genuproof
SCANS=100
WARMUP=5
JITTER_MS=300
STORES="sqlite dynamodb"
CMDLINE="bench/webhook_bench.sh$(printf ' %q' "$@")"
BRAND=5019622c-9860-4b83-a5c6-adb82ebd0412
PRODUCT=e084595c97320cfcc85309943f345760
RX=tests/e2e/webhook_receiver.js

usage() {
    echo "usage: bench/webhook_bench.sh [--bin PATH] [--scans N] [--warmup N] [--jitter-ms MS]" >&2
    echo "                              [--stores \"sqlite dynamodb\"]" >&2
    exit 2
}
while [ $# -gt 0 ]; do
    [ $# -ge 2 ] || usage
    case "$1" in
    --bin) BIN=$2 ;;
    --scans) SCANS=$2 ;;
    --warmup) WARMUP=$2 ;;
    --jitter-ms) JITTER_MS=$2 ;;
    --stores) STORES=$2 ;;
    *) usage ;;
    esac
    shift 2
done
[[ $SCANS =~ ^[1-9][0-9]{0,4}$ && $WARMUP =~ ^[0-9]{1,3}$ && $JITTER_MS =~ ^[0-9]{1,5}$ ]] || usage
for s in $STORES; do [[ $s == sqlite || $s == dynamodb ]] || usage; done

log() { echo "[webhook_bench $(date +%T)] $*" >&2; }
die() {
    log "error: $*"
    exit 1
}
[ -x "$BIN" ] || die "$BIN not found (make genuproof)"
for t in curl node jq; do command -v "$t" >/dev/null || die "$t not found"; done

export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench AWS_REGION=us-east-1
unset AWS_SESSION_TOKEN AWS_PROFILE AWS_ENDPOINT_URL_DYNAMODB DYNAMODB_TABLE GENUPROOF_TIME_SCALE
export GENUPROOF_ADMIN_KEY=gpk_bench_$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
export SIGNING_SECRET=bench-secret GENUPROOF_LOG=warn

TMP=$(mktemp -d /tmp/gp-webhook-bench.XXXXXX)
SRV_PID=""
RX_PID=""
stop_run() {
    [ -n "$SRV_PID" ] && kill -TERM "$SRV_PID" 2>/dev/null && wait "$SRV_PID" 2>/dev/null
    [ -n "$RX_PID" ] && kill "$RX_PID" 2>/dev/null && wait "$RX_PID" 2>/dev/null
    SRV_PID=""
    RX_PID=""
    tests/tools/ddb_local.sh stop "$TMP/ddb" >/dev/null 2>&1
}
trap 'stop_run; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM

# Waits until file $1 is not empty (at most 20 s).
wait_file() {
    local i
    for i in $(seq 1 400); do
        [ -s "$1" ] && return 0
        sleep 0.05
    done
    return 1
}

# Deliveries the receiver answered so far.
received() {
    local n
    n=$(grep -c '"path":"/hook"' "$TMP/rx.log" 2>/dev/null)
    echo "${n:-0}"
}

# Waits until the receiver has $1 deliveries (at most $2 s).
wait_received() {
    local i
    for i in $(seq 1 $(($2 * 20))); do
        [ "$(received)" -ge "$1" ] && return 0
        sleep 0.05
    done
    return 1
}

verify() {
    curl -fsS -o /dev/null --max-time 10 "$URL/api/products/verify?productId=$PRODUCT" ||
        die "verify failed"
}

DATE=$(date -u '+%Y-%m-%d %H:%M UTC')
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
SUMMARY=$TMP/summary
: >"$SUMMARY"
for store in $STORES; do
    dir=$TMP/$store
    mkdir -p "$dir"
    args=(serve --demo-data --listen 127.0.0.1:0 --port-file "$dir/port" --rate-limit 0
        --allow-private-webhooks)
    if [ "$store" = dynamodb ]; then
        command -v java >/dev/null || die "java not found (apt-get install openjdk-17-jre-headless)"
        port=$(cd "$TMP" && "$OLDPWD/tests/tools/ddb_local.sh" start "$TMP/ddb") ||
            die "DynamoDB Local did not start"
        table=gpwh_$$
        "$BIN" table create --dynamodb "http://127.0.0.1:$port" --table "$table" \
            >"$dir/table.log" 2>&1 || die "table create: $(cat "$dir/table.log")"
        args+=(--dynamodb "http://127.0.0.1:$port" --table "$table")
    else
        args+=(--db "$dir/db")
    fi
    : >"$TMP/rx.log"
    rm -f "$TMP/rx.port"
    node "$RX" "$TMP/rx.port" "$TMP/rx.log" 0 0 &
    RX_PID=$!
    wait_file "$TMP/rx.port" || die "the receiver did not start"
    "$BIN" "${args[@]}" 2>"$dir/serve.log" &
    SRV_PID=$!
    wait_file "$dir/port" || die "serve did not start: $(tail -3 "$dir/serve.log")"
    URL="http://127.0.0.1:$(cat "$dir/port")"
    # the demo data's own scans are older than the webhook (and on
    # DynamoDB the stream's record times are rounded down): register in a
    # later second
    sleep 1.2
    curl -fsS -o "$dir/hook.json" -H "Authorization: Bearer $GENUPROOF_ADMIN_KEY" \
        -H 'Content-Type: application/json' \
        -d "{\"brandId\":\"$BRAND\",\"url\":\"http://127.0.0.1:$(cat "$TMP/rx.port")/hook\",\"events\":[\"verification_scan\"]}" \
        "$URL/api/webhooks" || die "webhook registration failed"
    log "$store: $WARMUP warm-up scans, then $SCANS scans"
    for i in $(seq 1 "$WARMUP"); do verify; done
    wait_received "$WARMUP" 30 || die "$store: warm-up deliveries missing ($(received) of $WARMUP)"
    : >"$TMP/rx.log"
    for i in $(seq 1 "$SCANS"); do
        sleep "$(awk -v j="$JITTER_MS" -v r="$RANDOM" 'BEGIN { printf "%.3f", j * (r / 32767) / 1000 }')"
        verify
    done
    wait_received "$SCANS" 60 || log "$store: only $(received) of $SCANS deliveries arrived"
    stop_run
    # latency of each delivery: received - the scan's own timestamp
    node -e '
        const fs = require("fs");
        const lat = fs.readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean)
            .map((l) => JSON.parse(l)).filter((r) => r.path === "/hook")
            .map((r) => r.receivedAt - Date.parse(JSON.parse(r.body).data.timestamp))
            .sort((a, b) => a - b);
        const q = (p) => lat.length ? lat[Math.min(lat.length - 1, Math.ceil(p * lat.length) - 1)] : NaN;
        console.log([lat.length, q(0.5), q(0.9), q(0.99), lat[lat.length - 1]].join("|"));
    ' "$TMP/rx.log" | sed "s/^/$store|/" >>"$SUMMARY"
done
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

echo "# scan -> webhook delivery latency"
echo
echo "Command: \`$CMDLINE\`; date $DATE; $(nproc) cores,"
echo "$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo); load average (1/5/15 min) at start $LOAD_START, at end $LOAD_END."
echo
echo "| store | deliveries | p50 ms | p90 ms | p99 ms | max ms |"
echo "|---|---:|---:|---:|---:|---:|"
while IFS='|' read -r store n p50 p90 p99 mx; do
    echo "| $store | $n of $SCANS | $p50 | $p90 | $p99 | $mx |"
done <"$SUMMARY"
