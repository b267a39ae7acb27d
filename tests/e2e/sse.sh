#!/usr/bin/env bash
# tests/e2e/sse.sh - GET /api/stream end to end with the real server and an
# independent client (the eventsource npm package, tests/e2e/sse_client.js):
# errors and access, headers and the first frames, heartbeats, live threat
# events with increasing ids, each alert exactly once across a kill -9 and
# restart (the client resumes with Last-Event-ID), replay with the header
# and the lastEventId parameter, a client that never reads being dropped
# while another keeps receiving, and the per-brand stream limit.
set -u
. "$(dirname "$0")/lib.bash"

HERE=$(cd "$(dirname "$0")" && pwd)
CLIENT="$HERE/sse_client.js"
ES_OUT="$GP_DIR/es.jsonl"
ESPID=""
STPID=""
HAVE_ES=0
if command -v node >/dev/null 2>&1 && [ -d "$HERE/../node_modules/eventsource" ]; then HAVE_ES=1; fi

sse_cleanup() {
    [ -n "$ESPID" ] && kill "$ESPID" 2>/dev/null
    [ -n "$STPID" ] && kill "$STPID" 2>/dev/null
    gp_cleanup
}
trap sse_cleanup EXIT

# wait_for COND [SECONDS]: polls COND every 50 ms; false after SECONDS (default 10).
wait_for() {
    local i n=$(( ${2:-10} * 20 ))
    for ((i = 0; i < n; i++)); do
        eval "$1" && return 0
        sleep 0.05
    done
    return 1
}

# Number of client events named $1 so far.
es_count() { [ -f "$ES_OUT" ] && jq -s "[.[] | select(.ev == \"$1\")] | length" "$ES_OUT" || echo 0; }

# sse_peek QUERY [curl args]: reads the stream for 0.4 s; head in $GP_DIR/sh, body in $GP_DIR/sb.
sse_peek() {
    local q=$1
    shift
    curl -s -N --max-time 0.4 -D "$GP_DIR/sh" -o "$GP_DIR/sb" "$@" "$GP_URL/api/stream?$q"
    return 0
}

# Threat ids of the frames in $GP_DIR/sb, comma-separated.
peek_ids() { grep -A1 '^id: ' "$GP_DIR/sb" | grep '^id: ' | cut -c5- | paste -sd, -; }

metric() { req GET /metrics; printf '%s\n' "$BODY" | awk -v m="$1" '$1 == m {print $2}'; }

gp_start || gp_finish

req POST /api/brands '{"name":"Stream Co","domain":"stream.example","industry":"fashion"}'
A=$(jb .id)
KA=$(jb .apiKey)
req POST /api/brands '{"name":"Other Co","domain":"other.example","industry":"food"}'
B=$(jb .id)
KB=$(jb .apiKey)
check "two brands" '[ -n "$A" ] && [ -n "$B" ] && [ -n "$KA" ] && [ -n "$KB" ]'

# ---- errors and access ----
AUTH="Bearer $KA" req GET /api/stream
check_status "no brandId -> 400" 400
check "no brandId: plain-text body" '[ "$BODY" = "brandId required" ]'
check "no brandId: text/plain;charset=UTF-8" 'grep -qi "^Content-Type: text/plain;charset=UTF-8" "$GP_DIR/h"'
AUTH="Bearer $KA" req GET "/api/stream?brandId=$B"
check_status "another brand's key -> 403" 403
NOAUTH=1 req GET "/api/stream?brandId=$A"
check_status "no credential -> 401" 401
AUTH="Bearer $KA" req GET "/api/stream?all=1"
check_status "all=1 with a brand key -> 403" 403
AUTH="Bearer $KA" req POST "/api/stream?brandId=$A"
check_status "POST -> 405" 405

# ---- head and first frames ----
sse_peek "brandId=$A" -H "Authorization: Bearer $KA"
check "head: 200" 'head -n1 "$GP_DIR/sh" | grep -q " 200"'
check "head: text/event-stream" 'grep -qi "^Content-Type: text/event-stream" "$GP_DIR/sh"'
check "head: Cache-Control no-cache, no-transform" 'grep -qi "^Cache-Control: no-cache, no-transform" "$GP_DIR/sh"'
check "head: Connection keep-alive" 'grep -qi "^Connection: keep-alive" "$GP_DIR/sh"'
check "head: X-Accel-Buffering no" 'grep -qi "^X-Accel-Buffering: no" "$GP_DIR/sh"'
check "head: no Content-Length" '! grep -qi "^Content-Length" "$GP_DIR/sh"'
check "first frame: retry hint scaled (150 ms at 0.05)" '[ "$(head -n1 "$GP_DIR/sb")" = "retry: 150" ]'
CONNECTED=$(sed -n '3,4p' "$GP_DIR/sb")
check "second frame: connected" '[ "$(printf "%s\n" "$CONNECTED" | head -n1)" = "event: connected" ]'
check "connected data: brandId and ISO timestamp" \
    'printf "%s\n" "$CONNECTED" | sed -n 2p | cut -c7- | jq -e --arg b "$A" ".brandId == \$b and (.timestamp | test(\"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]{12}Z$\"))" >/dev/null'
check "heartbeat within 0.4 s (3 s scaled)" 'grep -q "^event: heartbeat$" "$GP_DIR/sb"'
HB=$(grep -A1 '^event: heartbeat$' "$GP_DIR/sb" | sed -n 2p | cut -c7-)
check "heartbeat data {ts: ISO}" 'printf "%s" "$HB" | jq -e "keys == [\"ts\"] and (.ts | length == 24)" >/dev/null'
sse_peek "all=1" -H "Authorization: Bearer $GP_ADMIN_KEY"
check "all=1 with the admin key -> 200 stream" 'grep -q "^event: connected$" "$GP_DIR/sb"'

# ---- products ----
for i in 1 2 3 4; do
    AUTH="Bearer $KA" req POST /api/products/register "{\"brandId\":\"$A\",\"name\":\"Watch $i\"}"
    eval "P$i=\$(jb .productId)"
done
AUTH="Bearer $KB" req POST /api/products/register "{\"brandId\":\"$B\",\"name\":\"Other\"}"
PB=$(jb .productId)
check "five products" '[ -n "$P1" ] && [ -n "$P4" ] && [ -n "$PB" ]'

recall() { AUTH="Bearer $2" req POST /api/products/recall "{\"productId\":\"$1\",\"reason\":\"${3:-counterfeit batch}\"}"; }

if [ "$HAVE_ES" = 1 ]; then
    node "$CLIENT" es "$GP_URL/api/stream?brandId=$A" "$ES_OUT" --auth "Bearer $KA" --seconds 90 &
    ESPID=$!
    check "eventsource client: connected" 'wait_for "[ \$(es_count connected) -ge 1 ]"'

    recall "$P1" "$KA"
    recall "$P2" "$KA"
    check "live: two threat events" 'wait_for "[ \$(es_count threat) -ge 2 ]"'
    recall "$PB" "$KB"
    sleep 0.5
    check "live: another brand's alert not sent" '[ "$(es_count threat)" -eq 2 ]'
    check "live: heartbeat events" '[ "$(es_count heartbeat)" -ge 1 ]'
    check "live: threat data is the whole alert object" \
        "jq -s -e --arg a \"$A\" --arg p \"$P1\" '[.[] | select(.ev == \"threat\") | .data | fromjson][0] | .brandId == \$a and .productId == \$p and .type == \"product_recall\" and .severity == \"critical\" and (.alertId | length == 32) and has(\"anomalyFlags\") and has(\"lastSeen\")' \"$ES_OUT\" >/dev/null"
    ID1=$(jq -rs '[.[] | select(.ev == "threat")][0].id' "$ES_OUT")
    ID2=$(jq -rs '[.[] | select(.ev == "threat")][1].id' "$ES_OUT")
    check "live: ids are increasing numbers" '[ "$ID1" -gt 0 ] && [ "$ID2" -gt "$ID1" ]'

    # ---- kill -9, restart on the same port and database ----
    kill -9 "$GP_PID"
    wait "$GP_PID" 2>/dev/null
    GP_PID=""
    check "client notices the loss" 'wait_for "[ \$(es_count error) -ge 1 ]" 5'
    gp_start || gp_finish
    # created while the client is (re)connecting: it must get both, once
    recall "$P3" "$KA"
    recall "$P4" "$KA"
    check "after restart: client reconnected" 'wait_for "[ \$(es_count connected) -ge 2 ]"'
    check "after restart: four threat events in all" 'wait_for "[ \$(es_count threat) -ge 4 ]"'
    sleep 0.3
    AUTH="Bearer $KA" req GET "/api/threats?brandId=$A"
    WANT=$(jb '[.threats[].alertId] | sort | join(",")')
    GOT=$(jq -rs '[.[] | select(.ev == "threat") | .data | fromjson | .alertId] | sort | join(",")' "$ES_OUT")
    check "each alert exactly once across the restart" '[ "$(es_count threat)" -eq 4 ] && [ "$GOT" = "$WANT" ]'
    check "ids strictly increasing across the restart" \
        "jq -s -e '[.[] | select(.ev == \"threat\") | .id | tonumber] as \$i | \$i == (\$i | sort | unique)' \"$ES_OUT\" >/dev/null"
else
    echo "SKIP: eventsource client (node or tests/node_modules missing: run make deps)"
    recall "$P1" "$KA"
    recall "$P2" "$KA"
    recall "$PB" "$KB"
    gp_restart || gp_finish
    recall "$P3" "$KA"
    recall "$P4" "$KA"
fi

# ---- replay with Last-Event-ID (header and query fallback) ----
sse_peek "brandId=$A" -H "Authorization: Bearer $KA"
check "no Last-Event-ID: no backlog" '! grep -q "^event: threat$" "$GP_DIR/sb"'
AUTH="Bearer $KA" req GET "/api/threats?brandId=$A"
ALL_IDS=$(jb '[.threats[].alertId] | reverse | join(",")')
# the stream ids of the four alerts, oldest first, from a full replay
sse_peek "brandId=$A" -H "Authorization: Bearer $KA" -H "Last-Event-ID: 0"
SEQS=$(peek_ids)
REPLAYED=$(grep '^data: {"alertId"' "$GP_DIR/sb" | cut -c7- | jq -rs 'map(.alertId) | join(",")')
check "replay from 0: the brand's four alerts in order" '[ "$REPLAYED" = "$ALL_IDS" ] && [ "$(echo "$SEQS" | tr , "\n" | wc -l)" -eq 4 ]'
S1=$(echo "$SEQS" | cut -d, -f1)
S4=$(echo "$SEQS" | cut -d, -f4)
sse_peek "brandId=$A" -H "Authorization: Bearer $KA" -H "Last-Event-ID: $S1"
check "Last-Event-ID: exactly the alerts after it" '[ "$(peek_ids)" = "$(echo "$SEQS" | cut -d, -f2-)" ]'
sse_peek "brandId=$A&lastEventId=$S1" -H "Authorization: Bearer $KA"
check "lastEventId parameter: same replay" '[ "$(peek_ids)" = "$(echo "$SEQS" | cut -d, -f2-)" ]'
sse_peek "brandId=$A" -H "Authorization: Bearer $KA" -H "Last-Event-ID: $S4"
check "Last-Event-ID of the newest: nothing replayed" '! grep -q "^event: threat$" "$GP_DIR/sb"'
sse_peek "all=1" -H "Authorization: Bearer $GP_ADMIN_KEY" -H "Last-Event-ID: 0"
check "all=1 replays every brand" '[ "$(grep -c "^event: threat$" "$GP_DIR/sb")" -eq 5 ]'

# ---- per-brand stream limit ----
gp_restart --sse-max-streams 1 || gp_finish
if [ "$HAVE_ES" = 1 ]; then
    check "limit: the client holds the one slot" 'wait_for "[ \"\$(metric genuproof_sse_clients)\" = 1 ]"'
else
    curl -s -N --max-time 3 -H "Authorization: Bearer $KA" "$GP_URL/api/stream?brandId=$A" >/dev/null &
    HOLD=$!
    wait_for '[ "$(metric genuproof_sse_clients)" = 1 ]'
fi
AUTH="Bearer $KA" req GET "/api/stream?brandId=$A"
check_status "limit: second stream of the brand -> 429" 429
check "limit: Retry-After" 'grep -qi "^Retry-After:" "$GP_DIR/h"'
sse_peek "brandId=$B" -H "Authorization: Bearer $KB"
check "limit: other brands unaffected" 'grep -q "^event: connected$" "$GP_DIR/sb"'
[ "$HAVE_ES" = 1 ] || kill "$HOLD" 2>/dev/null

# ---- a client that never reads is dropped; the others keep receiving ----
# Unscaled time here: the server's 30 s no-progress timeout must not close the
# stalled client before its output buffer overflows on a busy machine.
GENUPROOF_TIME_SCALE=1 gp_restart --sse-buffer 16384 || gp_finish
if [ "$HAVE_ES" = 1 ]; then
    check "client back after restart" 'wait_for "[ \"\$(metric genuproof_sse_clients)\" = 1 ]" 15'
    # Products first, so that the recalls below come in quick succession.  Long
    # names and reasons make ~4 KB alert frames: fewer alerts fill the buffers.
    : >"$GP_DIR/ids"
    LONG=$(head -c 1900 /dev/zero | tr '\0' 'n')
    for batch in 1 2 3; do
        ITEMS=$(jq -nc --arg p "$LONG $batch" '[range(50) | {name: "\($p) \(.)"}]')
        AUTH="Bearer $KA" req POST /api/products/batch "{\"brandId\":\"$A\",\"products\":$ITEMS}"
        jb '.products[].productId' >>"$GP_DIR/ids"
    done
    check "150 products for the bulk alerts" '[ "$(wc -l <"$GP_DIR/ids")" -eq 150 ]'
    node "$CLIENT" stall 127.0.0.1 "$GP_PORT" "/api/stream?brandId=$A" --auth "Bearer $KA" --seconds 180 \
        >"$GP_DIR/stall.out" &
    STPID=$!
    check "stalled client connected" 'wait_for "grep -q stalled \"$GP_DIR/stall.out\" && [ \"\$(metric genuproof_sse_clients)\" = 2 ]"'
    # Recalled 8 at a time, until the stalled client's kernel buffers and its
    # 16 KB output buffer are full (about 50 alerts on Linux defaults).
    REASON=$(head -c 1900 /dev/zero | tr '\0' 'x')
    for first in 1 26 51 76 101 126; do
        sed -n "${first},$((first + 24))p" "$GP_DIR/ids" |
            xargs -P 8 -I{} curl -s -o /dev/null --max-time 20 -H "Authorization: Bearer $KA" \
                -H 'Content-Type: application/json' -X POST \
                --data-binary "{\"productId\":\"{}\",\"reason\":\"$REASON\"}" \
                "$GP_URL/api/products/recall"
        grep -q '"msg":"sse client dropped"' "$GP_LOG" && break
    done
    check "slow client dropped and logged" 'grep "\"msg\":\"sse client dropped\"" "$GP_LOG" | grep -q "\"brandId\":\"$A\""'
    check "metrics: dropped counter" '[ "$(metric genuproof_sse_dropped_total)" = 1 ]'
    check "metrics: one client left" 'wait_for "[ \"\$(metric genuproof_sse_clients)\" = 1 ]" 5'
    kill -USR1 "$STPID"
    check "dropped client sees the stream end" 'wait_for "grep -q ^closed \"$GP_DIR/stall.out\"" 10'
    grep -q ^closed "$GP_DIR/stall.out" ||
        { echo "  stall client said: $(tr '\n' ' ' <"$GP_DIR/stall.out")"
          ss -tno state all "( sport = :$GP_PORT or dport = :$GP_PORT )" 2>/dev/null | head -8; }
    STPID=""
    AUTH="Bearer $KA" req GET "/api/threats?brandId=$A&limit=500"
    TOTAL=$(jb .count)
    check "normal client got every alert ($TOTAL)" 'wait_for "[ \$(es_count threat) -eq $TOTAL ]"'
    check "no duplicate alert at all" \
        "jq -s -e '[.[] | select(.ev == \"threat\") | .data | fromjson | .alertId] | length == (unique | length)' \"$ES_OUT\" >/dev/null"
fi

gp_stop
check "server stops cleanly with open streams" '[ "$GP_STOP_RC" = 0 ]'
gp_finish
