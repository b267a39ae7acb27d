#!/usr/bin/env bash
# fake_sse.sh - the scripted fake API (tests/tools/fake_sse.py) keeps the CLI
# and behaviour that the dashboard tests rely on: PORT line, stream frames and
# ids, Last-Event-ID resume, --drop-after, /api/threats order and fields,
# request log format, control endpoints, --key and --no-admin.
set -u
cd "$(dirname "$0")/../.."
FAKE=tests/tools/fake_sse.py
if ! command -v python3 >/dev/null || ! command -v jq >/dev/null || ! command -v curl >/dev/null; then
    echo "SKIP: fake_sse (python3, jq or curl missing)"
    exit 0
fi
DIR=$(mktemp -d /tmp/gp-fake.XXXXXX)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
    rm -rf "$DIR"
}
trap cleanup EXIT
FAILS=0

jqe() { jq -e "$@" >/dev/null; }

check() { # name, then a command that must succeed
    local name=$1; shift
    if "$@"; then echo "PASS: $name"; else echo "FAIL: $name"; FAILS=$((FAILS + 1)); fi
}

# start_fake NAME ARGS... : sets PORT_<NAME>
start_fake() {
    local name=$1; shift
    python3 "$FAKE" "$@" >"$DIR/$name.out" 2>"$DIR/$name.err" &
    PIDS+=($!)
    for _ in $(seq 400); do
        grep -q '^PORT ' "$DIR/$name.out" 2>/dev/null && break
        sleep 0.05
    done
    eval "PORT_$name=$(awk '/^PORT /{print $2; exit}' "$DIR/$name.out")"
}

start_fake A --brands a,b --initial 10 --heartbeat-ms 100 --retry-ms 700 --log "$DIR/a.log"
U="http://127.0.0.1:${PORT_A:-0}"
check "prints PORT first" test -n "${PORT_A:-}"

curl -s "$U/api/threats?brandId=a" >"$DIR/t.json"
check "threats: 5 of brand a" test "$(jq '.count' "$DIR/t.json")" = 5
check "threats: newest first" jqe '[.threats[].alertId] == ([.threats[].alertId] | sort | reverse)' "$DIR/t.json"
check "threats: alert fields" jqe '.threats[0] | has("alertId") and has("brandId") and has("type") and
    has("severity") and has("productId") and has("details") and has("timestamp") and has("resolved") and
    has("source") and has("country") and has("city") and has("anomalyFlags")' "$DIR/t.json"
check "threats: brandId required" test "$(curl -s -o /dev/null -w '%{http_code}' "$U/api/threats")" = 400

# Resume after id 5: the stream replays brand a's 7 and 9 (ids are the fake's sequence).
timeout 0.6 curl -sN -H 'Last-Event-ID: 5' "$U/api/stream?brandId=a" >"$DIR/s.txt"
check "stream: retry first" test "$(head -n 1 "$DIR/s.txt")" = "retry: 700"
check "stream: connected event" grep -q '^event: connected' "$DIR/s.txt"
check "stream: resumes after Last-Event-ID" test "$(grep '^id: ' "$DIR/s.txt" | tr '\n' ' ')" = "id: 7 id: 9 "
check "stream: heartbeat" grep -q '^event: heartbeat' "$DIR/s.txt"
check "stream: threat data is the alert" bash -c "grep -A1 '^id: 7' '$DIR/s.txt' | grep '^data: ' | cut -c7- | jq -e '.alertId and .brandId == \"a\"' >/dev/null"
check "stream: brandId required (400 text)" test "$(curl -s "$U/api/stream")" = "brandId required"
check "log: stream line with Last-Event-ID" grep -qE '^[0-9]+ GET /api/stream q=brandId=a lei=5 auth=-$' "$DIR/a.log"

# Control: emit, stream-status, down.
curl -s "$U/_ctl/emit?sev=critical&brand=b&type=hash_tampering" >/dev/null
check "ctl: emit" bash -c "curl -s '$U/api/threats?brandId=b&limit=1' | jq -e '.threats[0].severity == \"critical\" and .threats[0].type == \"hash_tampering\"' >/dev/null"
curl -s "$U/_ctl/stream-status?code=403" >/dev/null
check "ctl: stream-status 403" test "$(curl -s -o /dev/null -w '%{http_code}' "$U/api/stream?brandId=a")" = 403
curl -s "$U/_ctl/stream-status?code=0" >/dev/null
curl -s "$U/_ctl/down?sec=0.5" >/dev/null
check "ctl: down closes connections" test "$(curl -s -o /dev/null -w '%{http_code}' "$U/api/health")" = 000
sleep 0.6
check "ctl: up again" test "$(curl -s -o /dev/null -w '%{http_code}' "$U/api/health")" = 200
check "ctl: status" bash -c "curl -s '$U/_ctl/status' | jq -e '.seq == 11 and .down == false' >/dev/null"

# --drop-after: the stream ends by itself after 2 threats.
start_fake B --brands x --rate 50 --drop-after 2 --key sekrit --no-admin --log "$DIR/b.log"
V="http://127.0.0.1:${PORT_B:-0}"
timeout 5 curl -sN -H 'Authorization: Bearer sekrit' "$V/api/stream?brandId=x" >"$DIR/d.txt"
check "drop-after: closed after 2 threats" test "$(grep -c '^event: threat' "$DIR/d.txt")" = 2
check "key: 401 without it" test "$(curl -s -o /dev/null -w '%{http_code}' "$V/api/health")" = 401
check "no-admin: ops-log 403" test "$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer sekrit' "$V/api/ops-log?limit=5&days=2")" = 403
check "key: health with it" test "$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer sekrit' "$V/api/health")" = 200
check "log: auth logged" grep -q 'auth=Bearer%20sekrit$' "$DIR/b.log"

exit $((FAILS > 0))
