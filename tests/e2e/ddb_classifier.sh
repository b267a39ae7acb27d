#!/usr/bin/env bash
# tests/e2e/ddb_classifier.sh - the model classifier on DynamoDB Local
# (tests/tools/ddb_local.sh; needs java, node and `cd tests && npm ci`):
# `serve --dynamodb --workers 2 --classifier gemini` against a fake Gemini
# endpoint (fake_model.js).  Two demo products (--demo-data) scanned from
# three countries (X-Country from the trusted loopback proxy) raise two
# geographic alerts; the Streams detector writes a classification job for
# each, the two workers' classifiers compete for them, and each alert ends
# re-classified by the model (aiAnalysis.model, severity) with an ops-log
# entry naming the model.  The fake model is called exactly once per job,
# no job is left pending, and the API key never reaches the log.  Then a
# `genuproof detect` process: it writes jobs only while a process with a
# model keeps the presence marker alive.
set -u
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/ddb_lib.bash"
TABLE=gp_classify_$$
MODEL=fake-gem-1
KEY=gk-test-123
# two of the demo brand's products (lib.bash)
PRODUCTS=("${DEMO_PRODUCTS[1]}" "${DEMO_PRODUCTS[0]}")
FM_PID=""

if ! command -v node >/dev/null 2>&1; then
    echo "SKIP: ddb_classifier (no node)"
    exit 0
fi
ddb_cleanup() {
    [ -n "$FM_PID" ] && kill "$FM_PID" 2>/dev/null
    ddb_stop
    gp_cleanup
}
trap ddb_cleanup EXIT

FM_LOG="$GP_DIR/fm.log"
: >"$FM_LOG"
node "$HERE/fake_model.js" "$GP_DIR/fm.port" "$FM_LOG" &
FM_PID=$!
for i in $(seq 1 100); do [ -s "$GP_DIR/fm.port" ] && break; sleep 0.05; done
FM_PORT=$(cat "$GP_DIR/fm.port")

ddb_start "$TABLE"

WAIT_STEP=0.2 # wait_until (lib.bash): tries of 0.2 s
# jq path of product $1's geographic alert in a threats listing
geo_of() { echo "[.threats[] | select(.productId == \"$1\" and .type == \"geographic_anomaly\")][0]"; }

GEMINI_API_KEY=$KEY gp_start --dynamodb "$EP" --table "$TABLE" --demo-data --workers 2 --rate-limit 0 \
    --classifier gemini --classifier-url "http://127.0.0.1:$FM_PORT/ok/v1beta" --classifier-model "$MODEL" \
    --classifier-timeout 10 || gp_finish
check "both workers start their classifier" \
    'wait_until "[ \$(grep -c \"model classifier: gemini\" \"$GP_LOG\") = 2 ]" 50'

for p in "${PRODUCTS[@]}"; do
    for c in FR JP US; do
        NOAUTH=1 req GET "/api/products/verify?productId=$p" "" -H "X-Country: $c"
        [ "$STATUS" = 200 ] || fail "verify $p from $c: $STATUS"
    done
done

# both alerts re-classified by the model
done_both() {
    req GET "/api/threats?brandId=$DEMO_BRAND"
    for p in "${PRODUCTS[@]}"; do
        printf '%s' "$BODY" | jq -e "$(geo_of "$p").aiAnalysis.model == \"$MODEL\"" >/dev/null || return 1
    done
}
if wait_until done_both 300; then
    pass "both geographic alerts re-classified by the model"
else
    fail "both geographic alerts re-classified by the model"
    echo "  $(printf '%s' "$BODY" | jq -c '[.threats[] | {productId, type, aiModel: .aiAnalysis.model}]')"
fi
for p in "${PRODUCTS[@]}"; do
    check_json "alert of ${p:0:6}: the model's severity, details and analysis" \
        "$(geo_of "$p") | .severity == \"critical\" and (.details | startswith(\"One tag was read\")) and .aiAnalysis.attack_vector == \"tag_cloning\" and .aiAnalysis.confidence == 91"
done

# the ops log has the model's entry for each product
opslog_ok() {
    req GET "/api/ops-log?limit=100"
    for p in "${PRODUCTS[@]}"; do
        printf '%s' "$BODY" | jq -e "[.entries[] | select(.productId == \"$p\" and .geminiModel == \"$MODEL\")] | length == 1" >/dev/null || return 1
    done
}
if wait_until opslog_ok 50; then
    pass "ops log: one entry naming the model per alert"
else
    fail "ops log: one entry naming the model per alert"; echo "  ${BODY:0:600}"
fi
check_json "ops log: the model's fields" "[.entries[] | select(.geminiModel == \"$MODEL\")][0] | .aiSeverity == \"CRITICAL\" and .aiAttackVector == \"tag_cloning\" and .aiConfidence == 91"

# one model call per job: two alerts, two calls, also after more polls
sleep 2
check "the fake model was called once per job (2 calls)" '[ "$(wc -l <"$FM_LOG")" = 2 ]'
check "Gemini requests with the key in x-goog-api-key" \
    'jq -s -e "all(.[]; (.path | endswith(\"/models/$MODEL:generateContent\")) and .key == \"$KEY\")" "$FM_LOG" >/dev/null'
check "no classification job left pending" '[ "$(ddb_pending CLASSIFY_PENDING)" = 0 ]'
check "the key is not in the server log" '! grep -q "$KEY" "$GP_LOG"'
check "no classifier trouble logged" '! grep -q "\"classifier: " "$GP_LOG"'
gp_stop
check "clean shutdown, no sanitizer report" '[ "$GP_STOP_RC" = 0 ] && ! grep -q Sanitizer "$GP_LOG"'

# ---- `genuproof detect` and the classifier's presence marker ----
# The detector of a separate process writes jobs only while some process
# runs a model (CLASSIFIER/PRESENCE, kept alive every 20 s scaled, valid
# 60 s scaled = 3 s here).  Wait until the marker of the servers above
# has lapsed, then: no model anywhere -> alerts but no job; a server with
# a model (and no detector of its own) -> the next alert change is a job
# and the model re-classifies the alert.
P3=${DEMO_PRODUCTS[2]}
"$GENUPROOF_BIN" detect --dynamodb "$EP" --table "$TABLE" --worker-id dx --poll-ms 100 \
    >>"$GP_DIR/detect.log" 2>&1 &
DX_PID=$!
sleep 3.5
gp_start --dynamodb "$EP" --table "$TABLE" --rate-limit 0 --no-detector || gp_finish
for c in FR JP US; do
    NOAUTH=1 req GET "/api/products/verify?productId=$P3" "" -H "X-Country: $c"
done
p3_alert() {
    req GET "/api/threats?brandId=$DEMO_BRAND"
    printf '%s' "$BODY" | jq -e "$(geo_of "$P3") | .count >= 1" >/dev/null
}
check "detect raises the third product's alert" 'wait_until p3_alert 100'
sleep 1
check "no model running: no classification job written" '[ "$(ddb_pending CLASSIFY_PENDING)" = 0 ]'
gp_stop
NCALLS=$(wc -l <"$FM_LOG")
GEMINI_API_KEY=$KEY gp_start --dynamodb "$EP" --table "$TABLE" --rate-limit 0 --no-detector \
    --classifier gemini --classifier-url "http://127.0.0.1:$FM_PORT/ok/v1beta" --classifier-model "$MODEL" \
    --classifier-timeout 10 || gp_finish
sleep 1 # the marker is written at start; detect looks every 0.5 s (scaled)
NOAUTH=1 req GET "/api/products/verify?productId=$P3" "" -H "X-Country: DE"
p3_model() {
    req GET "/api/threats?brandId=$DEMO_BRAND"
    printf '%s' "$BODY" | jq -e "$(geo_of "$P3").aiAnalysis.model == \"$MODEL\"" >/dev/null
}
check "a model runs: the alert's next change is a job, re-classified by the model" 'wait_until p3_model 300'
check "one more model call" '[ "$(wc -l <"$FM_LOG")" = $((NCALLS + 1)) ]'
gp_stop
kill -TERM "$DX_PID" 2>/dev/null
wait "$DX_PID"
check "detect exits 0, no sanitizer report" '[ $? = 0 ] && ! grep -q Sanitizer "$GP_DIR/detect.log"'
gp_finish
