#!/usr/bin/env bash
# tests/e2e/ddb_sse_poll.sh - GET /api/stream on DynamoDB Local
# (tests/tools/ddb_local.sh; needs java and `cd tests && npm ci`): serve
# --dynamodb picks the GSI1-polling hub by itself (--sse-mode auto), alerts
# written through the API arrive once each with <writeTime>_<alertId> ids,
# write-to-push latency p99 <= 1.5 s at the real 250 ms poll period, and
# Last-Event-ID resumes with exactly the later alerts.
set -u
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/ddb_lib.bash"
ST_PID=""
TABLE=gp_ssepoll_$$
N=15

ddb_cleanup() {
    [ -n "$ST_PID" ] && kill "$ST_PID" 2>/dev/null
    ddb_stop
    gp_cleanup
}
trap ddb_cleanup EXIT

ddb_start "$TABLE"

# real time: the latency bound is for the 250 ms period
GENUPROOF_TIME_SCALE=1 gp_start --dynamodb "$EP" --table "$TABLE" --rate-limit 0 || gp_finish

req POST /api/brands '{"name":"Dyn Stream","domain":"dyns.test","industry":"fashion"}'
BR=$(jb .id)
KB=$(jb .apiKey)
PIDS=()
for i in $(seq 1 $N); do
    AUTH="Bearer $KB" req POST /api/products/register "{\"brandId\":\"$BR\",\"name\":\"Dyn $i\"}"
    PIDS+=("$(jb .productId)")
done
check "brand and $N products" '[ -n "$BR" ] && [ "${#PIDS[@]}" -eq $N ] && [ -n "${PIDS[$((N - 1))]}" ]'

curl -s -N --max-time 0.5 -o "$GP_DIR/all" -H "Authorization: Bearer $GP_ADMIN_KEY" "$GP_URL/api/stream?all=1"
check "all=1 on DynamoDB: a stream" 'grep -q "^event: connected$" "$GP_DIR/all"'

# Each threat id line with its arrival time (ms).
OUT="$GP_DIR/live"
(curl -s -N --max-time 60 -H "Authorization: Bearer $KB" "$GP_URL/api/stream?brandId=$BR" |
    while IFS= read -r line; do
        case "$line" in
        "event: connected") echo "connected" ;;
        id:*) echo "$(date +%s%3N) $line" ;;
        esac
    done) >"$OUT" &
ST_PID=$!
for i in $(seq 1 100); do grep -qs connected "$OUT" && break; sleep 0.05; done
check "stream connected" 'grep -qs connected "$OUT"'

for p in "${PIDS[@]}"; do
    AUTH="Bearer $KB" req POST /api/products/recall "{\"productId\":\"$p\",\"reason\":\"batch\"}"
    sleep "0.$((RANDOM % 3))"
done
for i in $(seq 1 60); do [ "$(grep -c '^[0-9]* id: ' "$OUT")" -ge $N ] && break; sleep 0.05; done
sleep 0.6 # more polls over the same window
GOT=$(grep -c '^[0-9]* id: ' "$OUT")
check "every alert arrived exactly once ($GOT of $N)" '[ "$GOT" -eq $N ] && [ "$(cut -d" " -f3 "$OUT" | sort -u | grep -c _)" -eq $N ]'
check "ids are <writeTime>_<alertId>" \
    '! grep "^[0-9]* id: " "$OUT" | cut -d" " -f3 | grep -Evx "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]{12}Z_[0-9a-f]{32}"'
# latency: arrival - write time (same machine clock), p99 of N
LAT=$(grep '^[0-9]* id: ' "$OUT" | while read -r t _ id; do
    w=$(date -d "${id%%_*}" +%s%3N)
    echo $((t - w))
done | sort -n)
P99=$(printf '%s\n' "$LAT" | awk -v n="$GOT" '{a[NR]=$1} END {i=int(n*0.99+0.999); if (i<1) i=1; print a[i]}')
echo "# write->push latency ms: min $(printf '%s\n' "$LAT" | head -n1) p99 $P99"
check "write-to-push p99 <= 1500 ms" '[ -n "$P99" ] && [ "$P99" -le 1500 ]'
kill "$ST_PID" 2>/dev/null
wait "$ST_PID" 2>/dev/null
ST_PID=""

IDS=$(grep '^[0-9]* id: ' "$OUT" | cut -d" " -f3 | sort)
FROM=$(printf '%s\n' "$IDS" | sed -n "$((N - 3))p")
curl -s -N --max-time 2 -o "$GP_DIR/r1" -H "Authorization: Bearer $KB" -H "Last-Event-ID: $FROM" \
    "$GP_URL/api/stream?brandId=$BR"
WANT=$(printf '%s\n' "$IDS" | tail -n 3 | paste -sd, -)
RES=$(grep '^id: ' "$GP_DIR/r1" | cut -c5- | paste -sd, -)
check "Last-Event-ID: exactly the three later alerts" '[ -n "$RES" ] && [ "$RES" = "$WANT" ]'

gp_stop
check "server stops cleanly" '[ "$GP_STOP_RC" -eq 0 ]'
check "no sanitizer report" '! grep -q "ERROR: AddressSanitizer\|runtime error" "$GP_LOG"'
gp_finish
