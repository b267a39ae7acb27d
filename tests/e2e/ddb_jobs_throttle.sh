#!/usr/bin/env bash
# tests/e2e/ddb_jobs_throttle.sh - webhook deliveries and model
# classification on DynamoDB when DynamoDB throttles: every call of the
# server (API, Streams detector, dispatchers, classifiers) goes through
# ddb_throttle_proxy.js, which answers about 30% of them with a
# ThrottlingException.  `serve --workers 2` with the demo data, a webhook
# for scans and alerts, and the model classifier (fake_model.js): scans of
# a demo product from three countries.  Nothing may be lost: every scan
# reaches the receiver (each delivery id at least once, answered 200), the
# geographic alert is re-classified by the model with its ops-log entry, no
# delivery or classification job is left pending, and the proxy did
# throttle the work-item calls (the claims, the polls).
# Needs java, node and `cd tests && npm ci` (DynamoDB Local).
set -u
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/ddb_lib.bash"
TABLE=gp_jobs_thr_$$
MODEL=fake-gem-thr
N=12
FM_PID=""
RX_PID=""
PX_PID=""

if ! command -v node >/dev/null 2>&1; then
    echo "SKIP: ddb_jobs_throttle (no node)"
    exit 0
fi
cleanup() {
    for p in "$FM_PID" "$RX_PID" "$PX_PID"; do [ -n "$p" ] && kill "$p" 2>/dev/null; done
    ddb_stop
    gp_cleanup
}
trap cleanup EXIT

wait_file() {
    local i
    for i in $(seq 1 100); do [ -s "$1" ] && return 0; sleep 0.05; done
    return 1
}
WAIT_STEP=0.2 # wait_until (lib.bash): tries of 0.2 s

FM_LOG="$GP_DIR/fm.log"
: >"$FM_LOG"
node "$HERE/fake_model.js" "$GP_DIR/fm.port" "$FM_LOG" &
FM_PID=$!
RX_LOG="$GP_DIR/rx.log"
: >"$RX_LOG"
node "$HERE/webhook_receiver.js" "$GP_DIR/rx.port" "$RX_LOG" 0 0 &
RX_PID=$!
wait_file "$GP_DIR/fm.port" && wait_file "$GP_DIR/rx.port" || {
    fail "fake model and receiver start"
    gp_finish
}

ddb_start "$TABLE"
node "$HERE/ddb_throttle_proxy.js" "$EP" 0.3 >"$GP_DIR/proxy.port" 2>"$GP_DIR/proxy.err" &
PX_PID=$!
wait_file "$GP_DIR/proxy.port" || {
    fail "throttling proxy starts"
    gp_finish
}
PX="http://127.0.0.1:$(cat "$GP_DIR/proxy.port")"
proxy_stats() { curl -s --max-time 5 "$PX/__stats"; }

GEMINI_API_KEY=gk-thr gp_start --dynamodb "$PX" --table "$TABLE" --demo-data --workers 2 \
    --rate-limit 0 --allow-private-webhooks --classifier gemini \
    --classifier-url "http://127.0.0.1:$(cat "$GP_DIR/fm.port")/ok/v1beta" \
    --classifier-model "$MODEL" --classifier-timeout 10 || gp_finish
# the stream's record times are rounded down: register in a later second
sleep 1.2
req POST /api/webhooks "{\"brandId\":\"$DEMO_BRAND\",\"url\":\"http://127.0.0.1:$(cat "$GP_DIR/rx.port")/hook\",\"events\":[\"verification_scan\",\"threat_alert\"]}"
check_status "webhook registered through the throttling proxy" 200
T0=$(proxy_stats | jq .throttled)

# A verify whose writes were throttled past the client's retry budget
# (a token bucket like the AWS SDKs': under 30 % throttling it drains)
# answers 503 with Retry-After and has written nothing; a client tries
# again, and so does this one (up to 4 times).  Any other status fails.
ok=0
retried=0
countries=(FR JP US)
for i in $(seq 1 $N); do
    for try in 1 2 3 4; do
        NOAUTH=1 req GET "/api/products/verify?productId=$DEMO_PRODUCT" "" -H "X-Country: ${countries[$((i % 3))]}"
        [ "$STATUS" = 503 ] && grep -qi '^retry-after:' "$GP_DIR/h" || break
        retried=$((retried + 1))
        sleep 0.2
    done
    if [ "$STATUS" = 200 ]; then ok=$((ok + 1)); else echo "  verify $i -> $STATUS ${BODY:0:200}"; fi
done
[ "$retried" -gt 0 ] && echo "# $retried verify answers were 503 + Retry-After, tried again"
check "$N verifies answered through the throttling proxy" '[ "$ok" -eq $N ]'

# scan deliveries (unique ids answered 200)
scans_in() {
    jq -s '[.[] | select(.status == 200 and .headers."x-genuproof-event" == "verification_scan") | .headers."x-genuproof-delivery"] | unique | length' "$RX_LOG" 2>/dev/null || echo 0
}
if wait_until '[ "$(scans_in)" -ge $N ]' 300; then
    pass "every scan delivered despite throttling ($(scans_in) of $N)"
else
    fail "every scan delivered despite throttling ($(scans_in) of $N)"
fi
check "threat_alert deliveries too" \
    '[ "$(jq -s "[.[] | select(.headers.\"x-genuproof-event\" == \"threat_alert\")] | length" "$RX_LOG")" -ge 1 ]'

geo_model() {
    req GET "/api/threats?brandId=$DEMO_BRAND"
    printf '%s' "$BODY" | jq -e "[.threats[] | select(.productId == \"$DEMO_PRODUCT\" and .type == \"geographic_anomaly\")][0].aiAnalysis.model == \"$MODEL\"" >/dev/null
}
if wait_until geo_model 300; then
    pass "the geographic alert re-classified by the model despite throttling"
else
    fail "the geographic alert re-classified by the model despite throttling"
fi
opslog_ok() {
    req GET "/api/ops-log?limit=200"
    printf '%s' "$BODY" | jq -e "[.entries[] | select(.productId == \"$DEMO_PRODUCT\" and .geminiModel == \"$MODEL\")] | length >= 1" >/dev/null
}
check "ops log: the model's entry" 'wait_until opslog_ok 100'

# nothing left pending once the work is done (the deliveries of the
# model's own alert updates included)
check "no delivery left pending" 'wait_until "[ \"\$(ddb_pending DELIVERY_PENDING)\" = 0 ]" 150'
check "no classification job left pending" '[ "$(ddb_pending CLASSIFY_PENDING)" = 0 ]'
check "every delivery answered 200 (none failed)" \
    '[ "$(jq -s "[.[] | select(.status != 200)] | length" "$RX_LOG")" = 0 ]'
T1=$(proxy_stats | jq .throttled)
check "the proxy throttled calls meanwhile ($((T1 - T0)))" '[ $((T1 - T0)) -gt 20 ]'
gp_stop
check "clean shutdown, no sanitizer report" '[ "$GP_STOP_RC" = 0 ] && ! grep -q Sanitizer "$GP_LOG"'
gp_finish
