#!/usr/bin/env bash
# tests/e2e/detector_crash.sh - kill -9 the server while it handles a
# burst of consumer scans (and its detector processes them), restart it,
# and check that nothing was lost or counted twice:
#   - every verify answered 200 is in the database (a 2xx means durable);
#   - after the restart the detector catches up (lag 0 in /metrics);
#   - no alert exists twice and STATS threatCount equals the number of
#     alerts;
#   - alerts, threatCount and ops-log entries (keys, severity, flags)
#     equal those of an uninterrupted run: a copy of the database with
#     every detector output removed and its checkpoint reset, processed
#     from scratch by a second server (alert ids are derived from product,
#     type and window, so the two runs must agree id for id);
#   - burst and velocity counts match the rules applied to the stored
#     scans (when the burst did not straddle an hour/day boundary).
set -u
. "$(dirname "$0")/lib.bash"

COUNTRIES=(US FR JP BR)
PER_COUNTRY=250 # 1,000 verifies in all: enough that the kill lands before the last (a faster server answered all of 300 between two looks)
KILL_AFTER=120 # responses seen before the kill

metric() { # metric NAME -> value from /metrics
    curl -s --max-time 5 -H "Authorization: Bearer $GP_ADMIN_KEY" "$GP_URL/metrics" |
        awk -v m="$1" '$1 == m {print $2}'
}

wait_caught_up() { # max ~$1 s
    local i lag
    for i in $(seq 1 $(($1 * 20))); do
        lag=$(metric genuproof_detector_lag)
        [ "$lag" = 0 ] && return 0
        sleep 0.05
    done
    echo "  lag still ${lag:-unknown}"
    return 1
}

# alert_set: one line per alert (id type product count severity), sorted.
alert_set() {
    req GET "/api/threats?brandId=$BR&limit=500"
    jb '.threats[] | "\(.alertId) \(.type) \(.productId) \(.count) \(.severity)"' | sort
}

gp_start --rate-limit 0 --detector-batch 20 || gp_finish

req POST /api/brands '{"name":"Crash Test Brand","domain":"crash.example","industry":"test"}'
BR=$(jb .id)
KEY=$(jb .apiKey)
P=()
for n in 1 2 3 4; do
    AUTH="Bearer $KEY" req POST /api/products/register "{\"brandId\":\"$BR\",\"name\":\"Item $n\"}"
    P+=("$(jb .productId)")
done
check "brand and four products" '[ -n "$BR" ] && [ ${#P[@]} = 4 ] && [ -n "${P[3]}" ]'
wait_caught_up 5

# ---- the burst, and the kill in the middle of it ----
for c in "${COUNTRIES[@]}"; do
    for i in $(seq 1 $PER_COUNTRY); do
        printf 'url = "%s/api/products/verify?productId=%s"\noutput = "/dev/null"\n' "$GP_URL" "${P[$((i % 4))]}"
    done >"$GP_DIR/curl-$c.cfg"
done
CURLS=()
for c in "${COUNTRIES[@]}"; do
    curl -s --parallel --parallel-max 8 --max-time 20 -H "X-Country: $c" \
        -w '%{http_code} %{url}\n' -K "$GP_DIR/curl-$c.cfg" >"$GP_DIR/results-$c" 2>/dev/null &
    CURLS+=($!)
done
for i in $(seq 1 400); do
    [ "$(cat "$GP_DIR"/results-* | wc -l)" -ge $KILL_AFTER ] && break
    sleep 0.01
done
SEEN=$(cat "$GP_DIR"/results-* | wc -l)
kill -9 "$GP_PID"
wait "$GP_PID" 2>/dev/null
GP_PID=""
for pid in "${CURLS[@]}"; do wait "$pid"; done
OK=$(cat "$GP_DIR"/results-* | grep -c '^200 ')
echo "# killed after $SEEN responses; $OK verifies answered 200 in all"
check "the kill landed in the middle of the burst" '[ "$SEEN" -lt $((4 * PER_COUNTRY)) ] && [ "$OK" -gt 0 ] && [ "$OK" -lt $((4 * PER_COUNTRY)) ]'

# ---- restart and catch up ----
gp_start --rate-limit 0 --detector-batch 20 || gp_finish
if wait_caught_up 30; then pass "restarted detector caught up (lag 0)"; else fail "restarted detector caught up (lag 0)"; fi
echo "# after the restart the detector checked $(metric genuproof_detector_scans_total) scans left over"

declare -A STORED
ALL_ONE_HOUR=1
for p in "${P[@]}"; do
    req GET "/api/scans?productId=$p&limit=500"
    STORED[$p]=$(jb .totalScans)
    acked=$(cat "$GP_DIR"/results-* | grep -c "^200 .*productId=$p\$")
    check "product ${p:0:8}: all $acked acknowledged scans stored (${STORED[$p]})" '[ "${STORED[$p]}" -ge "$acked" ]'
    [ "$(jb '[.scans[].timestamp[0:13]] | unique | length')" = 1 ] || ALL_ONE_HOUR=0
done

req GET "/api/threats?brandId=$BR&limit=500"
N_ALERTS=$(jb .count)
check_json "no alert twice" '([.threats[].alertId] | unique | length) == .count'
req GET "/api/brands/stats?brandId=$BR"
check_json "threatCount == number of alerts ($N_ALERTS)" ".statsCounter.threatCount == $N_ALERTS and .threatCount == $N_ALERTS"
CRASH_ALERTS=$(alert_set)

# The rules applied to the stored scans (all within one hour and day).
if [ "$ALL_ONE_HOUR" = 1 ]; then
    for p in "${P[@]}"; do
        n=${STORED[$p]}
        want_burst=$((n >= 10 ? n - 9 : 0))
        want_vel=$((n > 20 ? n - 20 : 0))
        got_burst=$(grep " burst_scan $p " <<<"$CRASH_ALERTS" | awk '{s += $4} END {print s + 0}')
        got_vel=$(grep " scan_velocity $p " <<<"$CRASH_ALERTS" | awk '{s += $4} END {print s + 0}')
        check "product ${p:0:8}: burst count $got_burst == $want_burst, velocity $got_vel == $want_vel" \
            '[ "$got_burst" = "$want_burst" ] && [ "$got_vel" = "$want_vel" ]'
    done
else
    echo "SKIP: rule counts (the burst straddled an hour boundary)"
fi
gp_stop
# Ops-log entries (their keys end with the record's stream sequence).
OPS_SQL="SELECT pk, sk, json_extract(body, '\$.aiSeverity'), json_extract(body, '\$.anomalyFlags')
    FROM items WHERE pk LIKE 'OPS_LOG#%' ORDER BY pk, sk;"
CRASH_OPS=$(sqlite3 -cmd ".timeout 5000" "$GP_DB" "$OPS_SQL")
N_OPS=$(printf '%s\n' "$CRASH_OPS" | grep -c .)

# ---- the uninterrupted reference run ----
REF="$GP_DIR/ref.db"
sqlite3 -cmd ".timeout 5000" "$GP_DB" ".backup '$REF'"
# Remove every detector output and its checkpoint; scans, products and
# their stream records stay, so a fresh detector sees the same input.
sqlite3 "$REF" "BEGIN;
DELETE FROM items WHERE pk LIKE 'THREAT#%' OR pk LIKE 'OPS_LOG#%' OR pk LIKE 'DLQ#%'
    OR sk = 'DETSTATE' OR sk LIKE 'ALERTKEY#%';
UPDATE items SET body = json_set(body, '\$.threatCount', 0) WHERE sk = 'STATS';
DELETE FROM stream WHERE pk LIKE 'THREAT#%' OR pk LIKE 'OPS_LOG#%' OR pk LIKE 'DLQ#%'
    OR sk = 'DETSTATE' OR sk LIKE 'ALERTKEY#%';
DELETE FROM checkpoints;
COMMIT;"
check "reference copy has no alert left" '[ "$(sqlite3 "$REF" "SELECT count(*) FROM items WHERE pk LIKE '"'"'THREAT#%'"'"'")" = 0 ]'
GP_DB="$REF"
GP_PORT=0
gp_start --rate-limit 0 || gp_finish
if wait_caught_up 30; then pass "reference run caught up"; else fail "reference run caught up"; fi
REF_ALERTS=$(alert_set)
check "alerts equal the uninterrupted run's (id, type, product, count, severity)" '[ "$CRASH_ALERTS" = "$REF_ALERTS" ] && [ -n "$REF_ALERTS" ]'
if [ "$CRASH_ALERTS" != "$REF_ALERTS" ]; then diff <(echo "$CRASH_ALERTS") <(echo "$REF_ALERTS") | head -20; fi
req GET "/api/brands/stats?brandId=$BR"
check_json "reference threatCount equal ($N_ALERTS)" ".statsCounter.threatCount == $N_ALERTS"
gp_stop
REF_OPS=$(sqlite3 -cmd ".timeout 5000" "$REF" "$OPS_SQL")
check "ops-log entries equal the uninterrupted run's ($N_OPS)" '[ "$CRASH_OPS" = "$REF_OPS" ] && [ "$N_OPS" -gt 0 ]'
gp_finish
