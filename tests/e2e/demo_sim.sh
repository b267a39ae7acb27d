#!/usr/bin/env bash
# tests/e2e/demo_sim.sh - `genuproof demo --headless` and `genuproof
# simulate`: from a fresh temporary database the demo's simulator raises
# its first alert within 5 s and every kind it schedules within 30 s
# (real time), the alerts are printed as they come, the ops log reports
# its daily buckets, /api/admin/partitions shows where the traffic went,
# SIGTERM stops the demo cleanly and removes its temporary database; then
# `simulate --url` against `serve --demo-data` raises every attack's
# alerts through the API alone (no tampering there).
set -u
. "$(dirname "$0")/lib.bash"

BR=$DEMO_BRAND
KINDS="geographic_anomaly burst_scan scan_velocity claimed_product_scan hash_tampering chain_gap"
now_ms() { date +%s%3N; }

# threat types of brand $BR at $GP_URL, one per line (sorted, unique)
threat_types() {
    curl -s --max-time 5 -H "Authorization: Bearer $GP_ADMIN_KEY" \
        "$GP_URL/api/threats?brandId=$BR&limit=500" | jq -r '.threats[]?.type' 2>/dev/null | sort -u
}

# ------------------------------------------------------------ demo --headless
DEMO_OUT="$GP_DIR/demo.out"
mkdir -p "$GP_DIR/tmp"
TMPDIR="$GP_DIR/tmp" GENUPROOF_ADMIN_KEY="$GP_ADMIN_KEY" \
    "$GENUPROOF_BIN" demo --headless --rate 4 --duration 60 >"$DEMO_OUT" 2>"$GP_DIR/demo.err" &
DEMO_PID=$!
trap 'kill -9 $DEMO_PID 2>/dev/null; gp_cleanup' EXIT

GP_URL=""
for i in $(seq 1 200); do
    GP_URL=$(sed -n 's/^demo: server on \(http[^ ]*\).*/\1/p' "$DEMO_OUT")
    [ -n "$GP_URL" ] && break
    kill -0 $DEMO_PID 2>/dev/null || break
    sleep 0.05
done
T0=$(now_ms)
check "demo --headless starts a server" '[ -n "$GP_URL" ]'
[ -n "$GP_URL" ] || { tail -n 20 "$GP_DIR/demo.err"; gp_finish; }
check "demo uses a temporary database" '[ -n "$(ls "$GP_DIR/tmp")" ]'

first="" have=""
while [ $(($(now_ms) - T0)) -lt 30000 ]; do
    have=$(threat_types)
    if [ -n "$have" ] && [ -z "$first" ]; then first=$(($(now_ms) - T0)); fi
    missing=0
    for k in $KINDS; do grep -qx "$k" <<<"$have" || missing=1; done
    [ $missing = 0 ] && break
    sleep 0.25
done
ALL_MS=$(($(now_ms) - T0))
check "first alert within 5 s (${first:-none} ms)" '[ -n "$first" ] && [ "$first" -le 5000 ]'
for k in $KINDS; do
    check "demo raises $k within 30 s" 'grep -qx "$k" <<<"$have"'
done
echo "# every kind after $ALL_MS ms"
# The headless printer polls /api/threats on its own period: give it a
# few seconds to catch up with what the API already shows.
for k in $KINDS; do
    for i in $(seq 1 50); do grep -q "^alert .* $k " "$DEMO_OUT" && break; sleep 0.1; done
    check "headless output prints the $k alert" "grep -q '^alert .* $k ' '$DEMO_OUT'"
done
check "headless output reports attacks" "[ \$(grep -c '^attack .* sent ' '$DEMO_OUT') -ge 5 ]"
check "no attack failed" "! grep -q '^attack .* FAILED' '$DEMO_OUT'"

# honest consumer traffic alone raises nothing: every alert is on an attack's product
req GET "/api/threats?brandId=$BR&limit=500"
n_alert_products=$(jb '[.threats[].productId] | unique | length')
check "alerts only on the 5 attacked products ($n_alert_products)" '[ "$n_alert_products" -le 5 ]'

# ops log: one bucket per day, newest first, with its own query
req GET "/api/ops-log?days=3"
check_status "ops-log 200" 200
check_json "ops-log has 3 buckets" '.buckets | length == 3'
check_json "bucket shape" 'all(.buckets[]; (keys - ["date"] | sort) == ["day","items","latencyMs","pk","status"])'
check_json "bucket pk is OPS_LOG#day" 'all(.buckets[]; .pk == "OPS_LOG#" + .day and .status == "ok")'
check_json "buckets newest first" '.buckets[0].day > .buckets[1].day and .buckets[1].day > .buckets[2].day'
check_json "today holds the detector's entries" '.buckets[0].items >= 1 and .buckets[0].latencyMs >= 0'
check_json "no legacy fallback" '.legacyFallback == false'

# partitions
NOAUTH=1 req GET /api/admin/partitions
check_status "partitions without a key: 401" 401
AUTH="Bearer wrong-key" req GET /api/admin/partitions
check_status "partitions with a wrong key: 401" 401
req GET "/api/admin/partitions?limit=5"
check_status "partitions with the admin key: 200" 200
check_json "every key family listed" '[.families[].family] | index("PRODUCT#<id>") != null and index("VERIFY#<code>") != null and index("BRAND_INDEX") != null and index("OPS_LOG#<YYYY-MM-DD>") != null and index("other") != null'
check_json "product partitions are busy" '.families[] | select(.family == "PRODUCT#<id>") | .distinctKeys > 1 and (.hottestKey | startswith("PRODUCT#")) and .peakWcu > 0 and (.minutes | length) >= 1'
check_json "minutes have a time and figures" 'all(.families[0].minutes[]; (.minute | test("^20[0-9-]+T[0-9:.]+Z$")) and (.wcu | type) == "number" and (.rcu | type) == "number")'
check_json "top keys, most first, limited" '(.top | length) >= 1 and (.top | length) <= 5 and ([.top[] | .wcu + .rcu] as $t | $t == ($t | sort | reverse))'

kill -TERM $DEMO_PID
for i in $(seq 1 200); do kill -0 $DEMO_PID 2>/dev/null || break; sleep 0.05; done
wait $DEMO_PID
rc=$?
check "demo stops on SIGTERM with status 0 ($rc)" '[ "$rc" = 0 ]'
check "demo prints its totals" "grep -q '^demo: [0-9]* scans, [0-9]* attacks (0 failed), [0-9]* alerts' '$DEMO_OUT'"
check "temporary database removed" '[ -z "$(ls "$GP_DIR/tmp")" ]'
if grep -q 'ERROR: AddressSanitizer\|runtime error' "$GP_DIR/demo.err"; then
    fail "demo ran clean under the sanitizers"; grep -m5 -A5 'Sanitizer\|runtime error' "$GP_DIR/demo.err"
fi

# ------------------------------------------------------- simulate --url
gp_start --demo-data || gp_finish
SIM_OUT="$GP_DIR/sim.out"
"$GENUPROOF_BIN" simulate --url "$GP_URL" --api-key "$GP_ADMIN_KEY" --rate 5 --duration 16 \
    --seed 7 >"$SIM_OUT" 2>"$GP_DIR/sim.err"
rc=$?
check "simulate runs for its duration ($rc)" '[ "$rc" = 0 ]'
for a in clone burst claim gap; do
    check "simulate plays the $a attack" "grep -q '^attack $a *sent ' '$SIM_OUT'"
done
check "simulate does not tamper remotely" "! grep -q '^attack tamper' '$SIM_OUT'"
check "simulate prints its totals" "grep -q '^simulate: [0-9]* scans (0 errors, [0-9]* skipped), 4 attacks (0 failed)' '$SIM_OUT'"

have=""
for i in $(seq 1 40); do
    have=$(threat_types)
    missing=0
    for k in geographic_anomaly burst_scan scan_velocity claimed_product_scan chain_gap; do
        grep -qx "$k" <<<"$have" || missing=1
    done
    [ $missing = 0 ] && break
    sleep 0.25
done
for k in geographic_anomaly burst_scan scan_velocity claimed_product_scan chain_gap; do
    check "simulate --url raises $k" 'grep -qx "$k" <<<"$have"'
done
check "no tampering alert from honest traffic" '! grep -qx hash_tampering <<<"$have"'

"$GENUPROOF_BIN" simulate --url "$GP_URL" --api-key wrong-key --duration 5 >/dev/null 2>&1
rc=$?
check "simulate with a refused key exits 1 ($rc)" '[ "$rc" = 1 ]'
env -u GENUPROOF_API_KEY "$GENUPROOF_BIN" simulate --url "$GP_URL" >/dev/null 2>&1
rc=$?
check "simulate without a key exits 2 ($rc)" '[ "$rc" = 2 ]'
"$GENUPROOF_BIN" simulate --url "ftp://x" --api-key k >/dev/null 2>&1
rc=$?
check "simulate with a bad URL exits 2 ($rc)" '[ "$rc" = 2 ]'
gp_stop
check "server stops cleanly" '[ "${GP_STOP_RC:-1}" = 0 ]'
gp_finish
