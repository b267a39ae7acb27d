#!/usr/bin/env bash
# tests/e2e/webhooks.sh - webhooks end to end: registration rules (D06,
# D42), signed deliveries to a local receiver (webhook_receiver.js) with
# retries after 500s, the delivery log, lastTriggered/deliveryCount,
# exhausted retries, the delivery-time private-address block, and resume
# of a pending delivery after kill -9.
set -u
. "$(dirname "$0")/lib.bash"

HERE=$(cd "$(dirname "$0")" && pwd)
if ! command -v node >/dev/null 2>&1; then
    echo "SKIP: webhooks (no node)"
    exit 0
fi
RX_PID=""
RX_LOG="$GP_DIR/rx.log"
rx_start() { # $1 = fail-first count, $2 = port (default: any)
    rm -f "$GP_DIR/rx.port"
    : >"$RX_LOG"
    node "$HERE/webhook_receiver.js" "$GP_DIR/rx.port" "$RX_LOG" "${1:-0}" "${2:-0}" &
    RX_PID=$!
    local i
    for i in $(seq 1 100); do [ -s "$GP_DIR/rx.port" ] && break; sleep 0.05; done
    RX_PORT=$(cat "$GP_DIR/rx.port")
    # A first request warms node's HTTP path, which on a loaded machine
    # could outlast the (scaled) attempt timeout of the first delivery.
    curl -s -o /dev/null --max-time 5 "http://127.0.0.1:$RX_PORT/warmup" || true
}
rx_stop() { [ -n "$RX_PID" ] && kill "$RX_PID" 2>/dev/null; wait "$RX_PID" 2>/dev/null; RX_PID=""; }
rx_count() { # requests whose path starts with $1
    jq -s --arg p "$1" '[.[] | select(.path | startswith($p))] | length' "$RX_LOG" 2>/dev/null || echo 0
}
trap 'rx_stop; gp_cleanup' EXIT


rx_start 2
gp_start --allow-private-webhooks || gp_finish
HOOK_URL="http://127.0.0.1:$RX_PORT/hook"

req POST /api/brands '{"name":"Luxe Watches","domain":"luxewatches.com","industry":"fashion"}'
A=$(jb .id)
KA=$(jb .apiKey)
req POST /api/brands '{"name":"Other","domain":"other.example","industry":"food"}'
B=$(jb .id)
KB=$(jb .apiKey)
AUTH="Bearer $KA" req POST /api/products/register "{\"brandId\":\"$A\",\"name\":\"Royal Oak\"}"
P1=$(jb .productId)
C1=$(jb .verificationCode)
check "setup: brands and product" '[ -n "$A" ] && [ -n "$B" ] && [ -n "$P1" ] && [ -n "$C1" ]'

# ---- registration rules ----
AUTH="Bearer $KA" req POST /api/webhooks "{\"brandId\":\"$A\"}"
check_status "missing url -> 400" 400
check_json "missing url message" '.error == "brandId and url required"'
AUTH="Bearer $KA" req POST /api/webhooks "{\"brandId\":\"$A\",\"url\":\"ftp://example.com/x\"}"
check_status "ftp scheme -> 400" 400
AUTH="Bearer $KA" req POST /api/webhooks "{\"brandId\":\"$A\",\"url\":\"javascript:alert(1)\"}"
check_status "javascript: -> 400" 400
AUTH="Bearer $KA" req POST /api/webhooks "{\"brandId\":\"$A\",\"url\":\"not a url\"}"
check_json "unparseable -> Invalid webhook URL" '.error == "Invalid webhook URL"'
AUTH="Bearer $KA" req POST /api/webhooks "{\"brandId\":\"$A\",\"url\":\"https://user:pw@example.com/x\"}"
check_status "userinfo -> 400" 400
AUTH="Bearer $KA" req POST /api/webhooks "{\"brandId\":\"$A\",\"url\":\"$HOOK_URL\",\"events\":[\"threat_alert\",\"bogus\"]}"
check_status "unknown event -> 400" 400
AUTH="Bearer $KA" req POST /api/webhooks "{\"brandId\":\"$A\",\"url\":\"$HOOK_URL\",\"events\":\"threat_alert\"}"
check_status "events not an array -> 400" 400
AUTH="Bearer $KB" req POST /api/webhooks "{\"brandId\":\"$A\",\"url\":\"$HOOK_URL\"}"
check_status "another brand's key -> 403" 403
req POST /api/webhooks "{\"brandId\":\"no-such-brand\",\"url\":\"$HOOK_URL\"}"
check_status "unknown brand -> 404" 404
check_json "unknown brand message" '.error == "Brand not found"'

# ---- a webhook that sees two 500s then 200 ----
AUTH="Bearer $KA" req POST /api/webhooks "{\"brandId\":\"$A\",\"url\":\"$HOOK_URL\"}"
check_status "register webhook -> 200" 200
check_json "register: shape" '(keys_unsorted == ["id","url","events","active","secret"]) and .active == true'
check_json "register: default events" '.events == ["verification_scan","threat_alert","product_recall"]'
check_json "register: secret whsec_ + 64 hex" '.secret | test("^whsec_[0-9a-f]{64}$")'
W1=$(jb .id)
SECRET=$(jb .secret)

AUTH="Bearer $KA" req GET "/api/webhooks?brandId=$A"
check_status "list -> 200" 200
check_json "list: no secret, counters" ".webhooks | length == 1 and .[0].id == \"$W1\" and (.[0] | has(\"secret\") | not) and .[0].deliveryCount == 0 and .[0].lastTriggered == null and .[0].active == true"
check "secret appears nowhere in the list" '! grep -q "$SECRET" <<<"$BODY"'
req GET "/api/webhooks"
check_json "list without brandId -> 400" '.error == "brandId required"'

NOAUTH=1 req GET "/api/products/verify?code=$C1" '' -H 'CF-IPCountry: CH'
check_status "a scan" 200
check "receiver: 3 attempts (500, 500, 200)" 'wait_until "[ \$(rx_count /hook) -ge 3 ]"'
check "receiver: statuses" '[ "$(jq -s -c "[.[] | select(.path == \"/hook\") | .status][0:3]" "$RX_LOG")" = "[500,500,200]" ]'
check "receiver: headers" 'jq -s -e ".[0].headers | .\"content-type\" == \"application/json\" and (.\"x-genuproof-event\" == \"verification_scan\") and (.\"x-genuproof-timestamp\" | test(\"^[0-9]+$\")) and (.\"x-genuproof-signature\" | startswith(\"sha256=\")) and (.\"x-genuproof-delivery\" | length > 0)" "$RX_LOG" >/dev/null'
check "receiver: one delivery id across retries" '[ "$(jq -s -r "[.[0:3][] | .headers.\"x-genuproof-delivery\"] | unique | length" "$RX_LOG")" = 1 ]'
check "receiver: body shape" 'jq -s -e ".[0].body | fromjson | .event == \"verification_scan\" and .brandId == \"$A\" and .data.productId == \"$P1\" and .data.country == \"CH\" and (.data | has(\"ip\") | not) and (.timestamp | test(\"Z$\"))" "$RX_LOG" >/dev/null'
SIGS_OK=$(node -e '
const fs = require("fs"), crypto = require("crypto");
const [log, secret] = process.argv.slice(1);
const recs = fs.readFileSync(log, "utf8").trim().split("\n").map(JSON.parse);
let ok = recs.length > 0;
for (const r of recs) {
  const ts = r.headers["x-genuproof-timestamp"];
  const want = "sha256=" + crypto.createHmac("sha256", secret).update(ts + "." + r.body).digest("hex");
  if (r.headers["x-genuproof-signature"] !== want) ok = false;
  if (Math.abs(Date.now() / 1000 - Number(ts)) > 300) ok = false;
}
console.log(ok ? "yes" : "no");' "$RX_LOG" "$SECRET")
check "receiver: every signature is HMAC(secret, ts.body)" '[ "$SIGS_OK" = yes ]'

AUTH="Bearer $KA" wait_until 'req GET "/api/webhooks/deliveries?webhookId=$W1&brandId=$A"; jq -e ".deliveries[0].status == \"delivered\"" <<<"$BODY" >/dev/null'
AUTH="Bearer $KA" req GET "/api/webhooks/deliveries?webhookId=$W1"
check_status "deliveries -> 200" 200
check_json "deliveries: one delivered after 3 attempts" '.count == 1 and .deliveries[0].status == "delivered" and .deliveries[0].attempts == 3 and .deliveries[0].lastStatus == 200 and .deliveries[0].event == "verification_scan"'
check_json "deliveries: fields" '.deliveries[0] | (.id|length>0) and (.createdAt|test("Z$")) and (.deliveredAt|test("Z$")) and .nextAttemptAt == null and .lastError == null'
check_json "deliveries: attempt history" '[.deliveries[0].history[].status] == [500,500,200] and .deliveries[0].history[0].error == "HTTP 500"'
AUTH="Bearer $KA" req GET "/api/webhooks?brandId=$A"
check_json "list: deliveryCount 1, lastTriggered set" '.webhooks[0].deliveryCount == 1 and (.webhooks[0].lastTriggered | test("Z$"))'
AUTH="Bearer $KB" req GET "/api/webhooks/deliveries?webhookId=$W1&brandId=$A"
check_status "deliveries with another brand's key -> 403" 403
AUTH="Bearer $KB" req GET "/api/webhooks/deliveries?webhookId=$W1"
check_status "deliveries of another brand's webhook -> 404" 404
req GET "/api/webhooks/deliveries"
check_json "deliveries without webhookId -> 400" '.error == "webhookId required"'
req GET "/api/webhooks/deliveries?webhookId=$W1"
check_json "admin: deliveries found through the delivery's brand" '.count == 1'

# ---- recall: threat_alert and product_recall ----
AUTH="Bearer $KA" req POST /api/products/recall "{\"productId\":\"$P1\",\"reason\":\"counterfeit batch\"}"
check_status "recall -> 200" 200
check "receiver: threat_alert and product_recall" 'wait_until "[ \$(jq -s \"[.[] | select(.status == 200) | .headers.\\\"x-genuproof-event\\\"] | (index(\\\"threat_alert\\\") != null) and (index(\\\"product_recall\\\") != null)\" $RX_LOG) = true ]"'
check "recall payload carries the alert" 'jq -s -e "[.[] | select(.headers.\"x-genuproof-event\" == \"product_recall\")][0].body | fromjson | .data.type == \"product_recall\" and .data.productId == \"$P1\" and .data.severity == \"critical\"" "$RX_LOG" >/dev/null'

# ---- subscriptions and exhausted retries ----
AUTH="Bearer $KA" req POST /api/webhooks "{\"brandId\":\"$A\",\"url\":\"http://127.0.0.1:$RX_PORT/always500\",\"events\":[\"verification_scan\"]}"
check_status "register always-500 webhook" 200
check_json "events subset kept" '.events == ["verification_scan"]'
W2=$(jb .id)
NOAUTH=1 req GET "/api/products/verify?code=$C1"
AUTH="Bearer $KA" wait_until 'req GET "/api/webhooks/deliveries?webhookId=$W2"; jq -e ".deliveries[0].status == \"failed\"" <<<"$BODY" >/dev/null' 200
check_json "always-500: failed after 6 attempts" '.count == 1 and .deliveries[0].status == "failed" and .deliveries[0].attempts == 6 and .deliveries[0].lastStatus == 500 and (.deliveries[0].history | length) == 6'
check "receiver saw exactly 6 attempts" '[ "$(rx_count /always500)" = 6 ]'
AUTH="Bearer $KA" req GET "/api/webhooks?brandId=$A"
check_json "failed webhook: deliveryCount 0" "[.webhooks[] | select(.id == \"$W2\")][0].deliveryCount == 0"

# ---- delete (D42) ----
AUTH="Bearer $KA" req DELETE /api/webhooks "{\"brandId\":\"$A\",\"webhookId\":\"nope\"}"
check_status "delete unknown -> 404" 404
check_json "delete unknown message" '.error == "Webhook not found"'
AUTH="Bearer $KA" req GET "/api/webhooks?brandId=$A"
check_json "no stub item created" '.webhooks | length == 2'
AUTH="Bearer $KA" req DELETE /api/webhooks "{\"brandId\":\"$A\"}"
check_json "delete without id -> 400" '.error == "brandId and webhookId required"'
AUTH="Bearer $KA" req DELETE /api/webhooks "{\"brandId\":\"$A\",\"webhookId\":\"$W2\"}"
check_status "delete -> 200" 200
check_json "delete body" '. == {"deleted":true}'
AUTH="Bearer $KA" req GET "/api/webhooks?brandId=$A"
check_json "deleted webhook is inactive" "[.webhooks[] | select(.id == \"$W2\")][0].active == false"
N500=$(rx_count /always500)
NOAUTH=1 req GET "/api/products/verify?code=$C1"
sleep 0.5
check "inactive webhook gets nothing" '[ "$(rx_count /always500)" = "$N500" ]'

# ---- the delivery-time private address block ----
gp_restart
check "restarted without --allow-private-webhooks" '[ -n "$GP_URL" ]'
AUTH="Bearer $KA" req POST /api/webhooks "{\"brandId\":\"$A\",\"url\":\"http://127.0.0.1:$RX_PORT/x\"}"
check_status "loopback target refused at registration" 400
check_json "private message" '.error == "Webhook URL must not point to a private or loopback address"'
for u in "http://10.1.2.3/" "http://192.168.0.10/" "http://172.20.0.1/" "http://169.254.169.254/latest" "http://[::1]/" "http://[fd00::1]/" "http://0.0.0.0/" "http://localhost:$RX_PORT/"; do
    AUTH="Bearer $KA" req POST /api/webhooks "{\"brandId\":\"$A\",\"url\":\"$u\"}"
    check_status "refused: $u" 400
done
N=$(rx_count /hook)
NOAUTH=1 req GET "/api/products/verify?code=$C1"
AUTH="Bearer $KA" wait_until 'req GET "/api/webhooks/deliveries?webhookId=$W1"; jq -e ".deliveries[0].status == \"failed\"" <<<"$BODY" >/dev/null' 200
check_json "stored loopback webhook: blocked at connect" '.deliveries[0].status == "failed" and (.deliveries[0].lastError | startswith("address refused"))'
check "receiver never reached" '[ "$(rx_count /hook)" = "$N" ]'

# ---- resume after kill -9 ----
gp_stop
rx_stop
GENUPROOF_TIME_SCALE=1 gp_start --allow-private-webhooks
NOAUTH=1 req GET "/api/products/verify?code=$C1"
AUTH="Bearer $KA" wait_until 'req GET "/api/webhooks/deliveries?webhookId=$W1"; jq -e ".deliveries[0].status == \"pending\" and .deliveries[0].attempts >= 1" <<<"$BODY" >/dev/null' 100
check_json "receiver down: pending, retrying" '.deliveries[0].status == "pending" and (.deliveries[0].nextAttemptAt | test("Z$"))'
PENDING_ID=$(jb '.deliveries[0].id')
kill -9 "$GP_PID"; wait "$GP_PID" 2>/dev/null; GP_PID=""
rx_start 0 "$RX_PORT"
gp_start --allow-private-webhooks
AUTH="Bearer $KA" wait_until 'req GET "/api/webhooks/deliveries?webhookId=$W1"; jq -e ".deliveries[0].status == \"delivered\"" <<<"$BODY" >/dev/null' 100
check_json "resumed after restart: delivered" ".deliveries[0].id == \"$PENDING_ID\" and .deliveries[0].status == \"delivered\""
check "receiver got the resumed delivery" 'jq -s -e "[.[] | select(.headers.\"x-genuproof-delivery\" == \"$PENDING_ID\")] | length == 1" "$RX_LOG" >/dev/null'

gp_stop
check "clean shutdown" '[ "$GP_STOP_RC" = 0 ]'
gp_finish
