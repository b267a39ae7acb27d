#!/usr/bin/env bash
# tests/e2e/sse_poll.sh - GET /api/stream in poll mode (serve --sse-mode
# poll, what DynamoDB uses) with two server processes on one database:
# alerts written through one process reach a stream held by the other,
# threat ids are <writeTime>_<alertId>, each alert once, other brands'
# alerts stay away, Last-Event-ID (header and lastEventId) resumes with
# exactly the later alerts, ?all=1 (admin) gets every brand's alerts and
# scans=1 gets a comment.
set -u
. "$(dirname "$0")/lib.bash"

W_PID=""
W_DIR="$GP_DIR/writer"
ST_PID=""
AL_PID=""
poll_cleanup() {
    [ -n "$ST_PID" ] && kill "$ST_PID" 2>/dev/null
    [ -n "$AL_PID" ] && kill "$AL_PID" 2>/dev/null
    [ -n "$W_PID" ] && kill -9 "$W_PID" 2>/dev/null
    gp_cleanup
}
trap poll_cleanup EXIT

# wait_for COND [SECONDS]: polls COND every 50 ms; false after SECONDS (default 10).
wait_for() {
    local i n=$(( ${2:-10} * 20 ))
    for ((i = 0; i < n; i++)); do
        eval "$1" && return 0
        sleep 0.05
    done
    return 1
}

# threat ids in file $1, comma-separated, in order.
ids_of() { grep '^id: ' "$1" 2>/dev/null | cut -c5- | paste -sd, -; }
nthreats() { grep -c '^event: threat$' "$1" 2>/dev/null || true; }

# The stream process (poll mode, no detector: nothing it could push).
gp_start --sse-mode poll --no-detector || gp_finish
POLL_URL=$GP_URL

# The writer process on the same database (the default mode).
mkdir -p "$W_DIR"
GENUPROOF_ADMIN_KEY="$GP_ADMIN_KEY" SIGNING_SECRET=e2e-test-secret \
    "$GENUPROOF_BIN" serve --listen 127.0.0.1:0 --db "$GP_DB" --port-file "$W_DIR/port" \
    >>"$GP_DIR/writer.log" 2>&1 &
W_PID=$!
check "writer process started" 'wait_for "[ -s \"$W_DIR/port\" ]"'
W_URL="http://127.0.0.1:$(cat "$W_DIR/port" 2>/dev/null)"

# wreq METHOD PATH [JSON]: req against the writer.
wreq() { local u=$GP_URL; GP_URL=$W_URL; req "$@"; GP_URL=$u; }

wreq POST /api/brands '{"name":"Poll Co","domain":"poll.example","industry":"fashion"}'
A=$(jb .id)
KA=$(jb .apiKey)
wreq POST /api/brands '{"name":"Else Co","domain":"else.example","industry":"food"}'
B=$(jb .id)
KB=$(jb .apiKey)
for i in 1 2 3 4; do
    AUTH="Bearer $KA" wreq POST /api/products/register "{\"brandId\":\"$A\",\"name\":\"Lamp $i\"}"
    eval "P$i=\$(jb .productId)"
done
AUTH="Bearer $KB" wreq POST /api/products/register "{\"brandId\":\"$B\",\"name\":\"Else\"}"
PB=$(jb .productId)
check "brands and products" '[ -n "$A" ] && [ -n "$KA" ] && [ -n "$P4" ] && [ -n "$PB" ]'
recall() { AUTH="Bearer $2" wreq POST /api/products/recall "{\"productId\":\"$1\",\"reason\":\"bad batch\"}"; }

# ---- mode-specific answers ----
curl -s -N --max-time 0.4 -o "$GP_DIR/sc" -H "Authorization: Bearer $KA" \
    "$POLL_URL/api/stream?brandId=$A&scans=1"
check "scans=1: connected, then the comment" \
    'grep -q "^event: connected$" "$GP_DIR/sc" && grep -q "^: scans unavailable$" "$GP_DIR/sc"'

# ---- live, across processes ----
OUT="$GP_DIR/live"
ALL="$GP_DIR/all"
curl -s -N --max-time 30 -o "$OUT" -H "Authorization: Bearer $KA" "$POLL_URL/api/stream?brandId=$A" &
ST_PID=$!
curl -s -N --max-time 30 -o "$ALL" -H "Authorization: Bearer $GP_ADMIN_KEY" "$POLL_URL/api/stream?all=1" &
AL_PID=$!
check "stream connected" 'wait_for "grep -qs \"^event: connected$\" \"$OUT\""'
check "all-brands stream connected" 'wait_for "grep -qs \"^event: connected$\" \"$ALL\""'
recall "$P1" "$KA"
recall "$PB" "$KB"
recall "$P2" "$KA"
check "two alerts arrive through the other process" 'wait_for "[ \$(nthreats \"$OUT\") -ge 2 ]" 5'
sleep 0.3 # many more polls of the same window
check "each once, the other brand's alert not sent" '[ "$(nthreats "$OUT")" -eq 2 ]'
check "all=1: the three alerts of both brands, each once" \
    '[ "$(nthreats "$ALL")" -eq 3 ] && [ "$(ids_of "$ALL" | tr , "\n" | sort -u | wc -l)" -eq 3 ]'
kill "$AL_PID" 2>/dev/null
wait "$AL_PID" 2>/dev/null
AL_PID=""
IDS=$(ids_of "$OUT")
check "ids are <writeTime>_<alertId>" \
    'printf "%s\n" "$IDS" | tr , "\n" | grep -Eqx "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z_[0-9a-f]{32}" &&
     [ "$(printf "%s\n" "$IDS" | tr , "\n" | grep -Ecx "[0-9T:.Z-]{24}_[0-9a-f]{32}")" -eq 2 ]'
DATA_IDS=$(grep '^data: {"alertId"' "$OUT" | cut -c7- | jq -rs 'map(.alertId) | join(",")')
ID_IDS=$(printf "%s\n" "$IDS" | tr , "\n" | sed 's/.*_//' | paste -sd, -)
check "id suffix = the data's alertId" '[ -n "$DATA_IDS" ] && [ "$DATA_IDS" = "$ID_IDS" ]'
check "data: the alert object" \
    "grep '^data: {\"alertId\"' \"$OUT\" | head -n1 | cut -c7- | jq -e --arg a \"$A\" '.brandId == \$a and .type == \"product_recall\" and has(\"lastSeen\")' >/dev/null"
AUTH="Bearer $KA" wreq GET "/api/threats?brandId=$A"
WANT=$(jb '[.threats[].alertId] | sort | join(",")')
check "the stream's alerts are the brand's alerts" \
    '[ "$(printf "%s\n" "$DATA_IDS" | tr , "\n" | sort | paste -sd, -)" = "$WANT" ]'
kill "$ST_PID" 2>/dev/null
wait "$ST_PID" 2>/dev/null
ST_PID=""

# ---- resume ----
FIRST=${IDS%%,*}
recall "$P3" "$KA"
recall "$P4" "$KA"
sleep 0.2
curl -s -N --max-time 0.5 -o "$GP_DIR/r1" -H "Authorization: Bearer $KA" -H "Last-Event-ID: $FIRST" \
    "$POLL_URL/api/stream?brandId=$A"
check "Last-Event-ID: exactly the three later alerts" \
    '[ "$(nthreats "$GP_DIR/r1")" -eq 3 ] && ! grep -q "^id: $FIRST$" "$GP_DIR/r1"'
R1=$(ids_of "$GP_DIR/r1")
check "resumed ids in write order" '[ "$(printf "%s\n" "$R1" | tr , "\n" | sort | paste -sd, -)" = "$R1" ]'
LAST=${R1##*,}
curl -s -N --max-time 0.5 -o "$GP_DIR/r2" -H "Authorization: Bearer $KA" \
    "$POLL_URL/api/stream?brandId=$A&lastEventId=$LAST"
check "lastEventId of the newest: nothing replayed" \
    'grep -q "^event: connected$" "$GP_DIR/r2" && [ "$(nthreats "$GP_DIR/r2")" -eq 0 ]'
curl -s -N --max-time 0.5 -o "$GP_DIR/r3" -H "Authorization: Bearer $KA" -H "Last-Event-ID: 3" \
    "$POLL_URL/api/stream?brandId=$A"
check "a sequence-style id: no backlog" \
    'grep -q "^event: connected$" "$GP_DIR/r3" && [ "$(nthreats "$GP_DIR/r3")" -eq 0 ]'

gp_stop
check "poll-mode server stops cleanly" '[ "$GP_STOP_RC" -eq 0 ]'
check "no sanitizer report" '! grep -q "ERROR: AddressSanitizer\|runtime error" "$GP_LOG" "$GP_DIR/writer.log"'
kill -TERM "$W_PID" 2>/dev/null
wait "$W_PID" 2>/dev/null
W_PID=""
gp_finish
