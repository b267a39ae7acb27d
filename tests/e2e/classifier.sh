#!/usr/bin/env bash
# tests/e2e/classifier.sh - the optional model classifier end to end:
# `serve --classifier openai` against a fake OpenAI-compatible endpoint
# (fake_model.js) re-classifies a detector alert (severity, details,
# aiAnalysis.model) and logs the model's classification in the ops log;
# with an endpoint that answers 500 the rule classification stands; a
# model classifier without a key and without a URL refuses to start.
set -u
. "$(dirname "$0")/lib.bash"

HERE=$(cd "$(dirname "$0")" && pwd)
if ! command -v node >/dev/null 2>&1; then
    echo "SKIP: classifier (no node)"
    exit 0
fi
FM_LOG="$GP_DIR/fm.log"
: >"$FM_LOG"
node "$HERE/fake_model.js" "$GP_DIR/fm.port" "$FM_LOG" &
FM_PID=$!
trap 'kill "$FM_PID" 2>/dev/null; gp_cleanup' EXIT
for i in $(seq 1 100); do [ -s "$GP_DIR/fm.port" ] && break; sleep 0.05; done
FM_PORT=$(cat "$GP_DIR/fm.port")

# a geographic anomaly: one product scanned from three countries
geo_alert() { # $1 = brand key, $2 = brand id; prints the product id
    AUTH="Bearer $1" req POST /api/products/register "{\"brandId\":\"$2\",\"name\":\"Watch $RANDOM\"}"
    local p
    p=$(jb .productId)
    for c in FR JP US; do NOAUTH=1 req GET "/api/products/verify?productId=$p" "" -H "X-Country: $c"; done
    echo "$p"
}
geo_of() { # $1 = product: jq path of its geo alert in $BODY
    echo "[.threats[] | select(.productId == \"$1\" and .type == \"geographic_anomaly\")][0]"
}

# ---- a usable model answer ----
OPENAI_API_KEY=sk-test-123 gp_start --classifier openai --classifier-url "http://127.0.0.1:$FM_PORT/ok/v1" \
    --classifier-model fake-1 || gp_finish
req POST /api/brands '{"name":"Luxe","domain":"luxe.example","industry":"fashion"}'
BR=$(jb .id)
KB=$(jb .apiKey)
P=$(geo_alert "$KB" "$BR")
G=$(geo_of "$P")
if AUTH="Bearer $KB" wait_until 'req GET "/api/threats?brandId=$BR"; jq -e "$G.aiAnalysis.model == \"fake-1\"" <<<"$BODY" >/dev/null'; then
    pass "alert re-classified by the model"
else
    fail "alert re-classified by the model"; echo "  $BODY"
fi
check_json "model severity and details" "$G | .severity == \"critical\" and (.details | startswith(\"One tag was read\")) and .source == \"detector\" and .count == 1"
check_json "aiAnalysis from the model" "$G.aiAnalysis | .attack_vector == \"tag_cloning\" and .confidence == 91 and (.recommended_actions | length) == 2 and (.latency_ms | type) == \"number\""
req GET "/api/ops-log?limit=50"
check_json "ops log: the rules' entry and the model's" "[.entries[] | select(.productId == \"$P\")] | (map(.geminiModel) | sort) == [\"fake-1\",\"rules\"]"
check_json "ops log: the model's fields" "[.entries[] | select(.productId == \"$P\" and .geminiModel == \"fake-1\")][0] | .aiSeverity == \"CRITICAL\" and .aiAttackVector == \"tag_cloning\" and .aiConfidence == 91 and .agent == \"threat_detector\""
check "request: bearer key, model and prompt" 'jq -s -e ".[0] | .path == \"/ok/v1/chat/completions\" and .auth == \"Bearer sk-test-123\" and (.body | fromjson | .model == \"fake-1\" and (.messages[1].content | contains(\"geographic_anomaly\")))" "$FM_LOG" >/dev/null'
check "the key is not in the server log" '! grep -q sk-test-123 "$GP_LOG"'
NREQ=$(wc -l <"$FM_LOG")
sleep 0.3
check "the model's own update is not classified again" '[ "$(wc -l <"$FM_LOG")" = "$NREQ" ]'

# ---- restart: nothing is asked twice ----
OPENAI_API_KEY=sk-test-123 gp_restart --classifier openai --classifier-url "http://127.0.0.1:$FM_PORT/ok/v1" \
    --classifier-model fake-1
sleep 0.5
check "restart: no repeated model calls" '[ "$(wc -l <"$FM_LOG")" = "$NREQ" ]'

# ---- a failing model: the rules stand ----
gp_restart --classifier openai --classifier-url "http://127.0.0.1:$FM_PORT/fail/v1"
P2=$(geo_alert "$KB" "$BR")
G2=$(geo_of "$P2")
AUTH="Bearer $KB" wait_until 'jq -e "[.[] | select(.path | startswith(\"/fail/\"))] | length >= 1" -s "$FM_LOG" >/dev/null'
sleep 0.3
AUTH="Bearer $KB" req GET "/api/threats?brandId=$BR"
check_json "model error: the rule classification stands" "$G2 | .severity == \"high\" and .aiAnalysis.model == \"rules\""
gp_stop
check "clean shutdown" '[ "$GP_STOP_RC" = 0 ]'

# ---- configuration refused ----
env -u OPENAI_API_KEY SIGNING_SECRET=x "$GENUPROOF_BIN" serve --listen 127.0.0.1:0 --db "$GP_DIR/x.db" \
    --classifier openai >"$GP_DIR/refused.log" 2>&1
RC=$?
check "no key and no URL: refuses to start" '[ "$RC" = 2 ] && grep -q "no API key" "$GP_DIR/refused.log"'
gp_finish
