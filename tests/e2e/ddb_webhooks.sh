#!/usr/bin/env bash
# tests/e2e/ddb_webhooks.sh - webhook deliveries on DynamoDB Local
# (tests/tools/ddb_local.sh; needs java, node and `cd tests && npm ci`).
# Two serve processes on one table: A runs the Streams detector, which
# writes the deliveries; both send them (claims on the pending index).
#   1. N verifies of a demo product and a recall: every expected delivery
#      arrives at webhook_receiver.js, each delivery id delivered exactly
#      once, every signature is HMAC(secret, "<ts>.<body>"), and
#      GET /api/webhooks/deliveries shows them delivered; the receiver
#      answers 500 to the first request, and that delivery is retried.
#   2. With the receiver frozen (SIGSTOP) A takes new deliveries and is
#      killed -9 while holding their claims: after the claims lapse a
#      freshly started process delivers them all.
set -u
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/ddb_lib.bash"
# Attempt timeout 5 s -> 1 s, a claim 2 x 1 + 0.4 = 2.4 s, polls 0.2 s.
export GENUPROOF_TIME_SCALE=0.2
TABLE=gp_webhooks_$$
N=6
RX_PID=""
RX_LOG="$GP_DIR/rx.log"
B_PID=""

if ! command -v node >/dev/null 2>&1; then
    echo "SKIP: ddb_webhooks (no node)"
    exit 0
fi

rx_start() { # $1 = fail-first count
    rm -f "$GP_DIR/rx.port"
    : >"$RX_LOG"
    node "$HERE/webhook_receiver.js" "$GP_DIR/rx.port" "$RX_LOG" "${1:-0}" 0 &
    RX_PID=$!
    local i
    for i in $(seq 1 100); do [ -s "$GP_DIR/rx.port" ] && break; sleep 0.05; done
    RX_PORT=$(cat "$GP_DIR/rx.port")
    curl -s -o /dev/null --max-time 5 "http://127.0.0.1:$RX_PORT/warmup" || true
}

# A second API process on the same table (no detector); sets B_PID, B_URL.
b_start() {
    rm -f "$GP_DIR/b.port"
    GENUPROOF_ADMIN_KEY="$GP_ADMIN_KEY" SIGNING_SECRET=e2e-test-secret \
        "$GENUPROOF_BIN" serve --listen 127.0.0.1:0 --port-file "$GP_DIR/b.port" \
        --dynamodb "$EP" --table "$TABLE" --no-detector --allow-private-webhooks \
        >>"$GP_DIR/b.log" 2>&1 &
    B_PID=$!
    local i
    for i in $(seq 1 200); do [ -s "$GP_DIR/b.port" ] && break; sleep 0.05; done
    B_URL="http://127.0.0.1:$(cat "$GP_DIR/b.port" 2>/dev/null)"
}
b_stop() {
    [ -n "$B_PID" ] || return 0
    kill -TERM "$B_PID" 2>/dev/null
    wait "$B_PID" 2>/dev/null
    B_RC=$?
    B_PID=""
}

cleanup() {
    [ -n "$RX_PID" ] && kill -CONT "$RX_PID" 2>/dev/null && kill "$RX_PID" 2>/dev/null
    [ -n "$B_PID" ] && kill -9 "$B_PID" 2>/dev/null
    ddb_stop
    gp_cleanup
}
trap cleanup EXIT

ddb_start "$TABLE"
rx_start 1
gp_start --dynamodb "$EP" --table "$TABLE" --demo-data --allow-private-webhooks --rate-limit 0 || gp_finish
b_start
check "two API processes on the table" '[ -s "$GP_DIR/b.port" ]'
check "both send webhooks (claim mode)" \
    'grep -q "webhooks: sending deliveries taken from the pending index" "$GP_LOG" && grep -q "webhooks: sending deliveries taken from the pending index" "$GP_DIR/b.log"'
# The demo data's scans were written at start; the stream's record times
# are whole seconds, so register only in a later second.
sleep 1.2

req POST /api/webhooks "{\"brandId\":\"$DEMO_BRAND\",\"url\":\"http://127.0.0.1:$RX_PORT/hook\",\"events\":[\"verification_scan\",\"product_recall\"]}"
check_status "register webhook on DynamoDB -> 200" 200
check_json "no warning in the answer" '(keys_unsorted == ["id","url","events","active","secret"])'
W1=$(jb .id)
SECRET=$(jb .secret)
# ---- 1. the normal path ----
ok=0
for i in $(seq 1 $N); do
    code=$(curl -s -o /dev/null -w '%{http_code}' "$GP_URL/api/products/verify?productId=$DEMO_PRODUCT")
    [ "$code" = 200 ] && ok=$((ok + 1))
done
check "$N verifies answered" '[ "$ok" -eq $N ]'
# scan and recall deliveries of W1 answered 200
hook_ok() { jq -s '[.[] | select(.path == "/hook" and .status == 200)] | length' "$RX_LOG" 2>/dev/null || echo 0; }
for _ in $(seq 1 200); do [ "$(hook_ok)" -ge $N ] && break; sleep 0.1; done
# registered now, so that the receiver's first request (answered 500)
# was a W1 delivery
req POST /api/webhooks "{\"brandId\":\"$DEMO_BRAND\",\"url\":\"http://127.0.0.1:$RX_PORT/threat\",\"events\":[\"threat_alert\"]}"
check_status "register threat webhook" 200
req POST /api/products/recall "{\"productId\":\"$DEMO_PRODUCT\",\"reason\":\"counterfeit batch\"}"
check_status "recall -> 200" 200

WANT=$((N + 1))
for _ in $(seq 1 200); do [ "$(hook_ok)" -ge $WANT ] && break; sleep 0.1; done
sleep 1 # more polls of both processes: nothing is sent again
check "every W1 delivery arrived ($(hook_ok) of $WANT)" '[ "$(hook_ok)" -eq $WANT ]'
check "each delivery id answered 200 exactly once" \
    '[ "$(jq -s -r "[.[] | select(.path == \"/hook\" and .status == 200) | .headers.\"x-genuproof-delivery\"] | unique | length" "$RX_LOG")" -eq $WANT ]'
check "events: $N scans and one recall" \
    '[ "$(jq -s -c "[.[] | select(.path == \"/hook\" and .status == 200) | .headers.\"x-genuproof-event\"] | group_by(.) | map([.[0], length])" "$RX_LOG")" = "[[\"product_recall\",1],[\"verification_scan\",$N]]" ]'
check "the recall's threat_alert reached the threat webhook" \
    'jq -s -e "[.[] | select(.path == \"/threat\" and .status == 200) | .body | fromjson | select(.event == \"threat_alert\" and .data.type == \"product_recall\")] | length == 1" "$RX_LOG" >/dev/null'
check "scan payload" \
    'jq -s -e "[.[] | select(.headers.\"x-genuproof-event\" == \"verification_scan\")][0].body | fromjson | .brandId == \"$DEMO_BRAND\" and .data.productId == \"$DEMO_PRODUCT\" and (.data | has(\"ip\") | not)" "$RX_LOG" >/dev/null'
SIGS_OK=$(node -e '
const fs = require("fs"), crypto = require("crypto");
const [log, secret] = process.argv.slice(1);
const recs = fs.readFileSync(log, "utf8").trim().split("\n").map(JSON.parse)
    .filter((r) => r.path === "/hook");
let ok = recs.length > 0;
for (const r of recs) {
  const ts = r.headers["x-genuproof-timestamp"];
  const want = "sha256=" + crypto.createHmac("sha256", secret).update(ts + "." + r.body).digest("hex");
  if (r.headers["x-genuproof-signature"] !== want) ok = false;
}
console.log(ok ? "yes" : "no");' "$RX_LOG" "$SECRET")
check "every signature is HMAC(secret, ts.body)" '[ "$SIGS_OK" = yes ]'
# the first request of all got a 500: that delivery was tried again
R500=$(jq -s -r '[.[] | select(.status == 500)][0].headers."x-genuproof-delivery" // empty' "$RX_LOG")
check "one 500, then the same delivery id again with 200" \
    '[ -n "$R500" ] && [ "$(jq -s -c --arg id "$R500" "[.[] | select(.headers.\"x-genuproof-delivery\" == \$id) | .status]" "$RX_LOG")" = "[500,200]" ]'

req GET "/api/webhooks/deliveries?webhookId=$W1&limit=100"
for _ in $(seq 1 50); do
    jq -e "[.deliveries[] | select(.status == \"delivered\")] | length == $WANT" <<<"$BODY" >/dev/null && break
    sleep 0.1
    req GET "/api/webhooks/deliveries?webhookId=$W1&limit=100"
done
check_json "deliveries: all $WANT delivered" ".count == $WANT and all(.deliveries[]; .status == \"delivered\" and .nextAttemptAt == null and (.deliveredAt | test(\"Z$\")))"
check_json "deliveries: the 500 retried (attempts 2, history [500,200])" \
    "[.deliveries[] | select(.id == \"$R500\")][0] | .attempts == 2 and ([.history[].status] == [500,200])"
check_json "deliveries: ids are the ones received" \
    "[.deliveries[].id] | sort == $(jq -s -c '[.[] | select(.path == "/hook" and .status == 200) | .headers."x-genuproof-delivery"] | sort' "$RX_LOG")"
req GET "/api/webhooks?brandId=$DEMO_BRAND"
check_json "webhook: deliveryCount $WANT, lastTriggered set" \
    "[.webhooks[] | select(.id == \"$W1\")][0] | .deliveryCount == $WANT and (.lastTriggered | test(\"Z$\"))"

# ---- 2. the process holding the claims is killed ----
b_stop
check "second process stops cleanly" '[ "$B_RC" = 0 ]'
kill -STOP "$RX_PID" # connections are accepted, never answered
K=3
for i in $(seq 1 $K); do
    curl -s -o /dev/null "$GP_URL/api/products/verify?productId=$DEMO_PRODUCT"
done
TOTAL=$((WANT + K))
for _ in $(seq 1 100); do
    req GET "/api/webhooks/deliveries?webhookId=$W1&limit=100"
    jq -e ".count == $TOTAL" <<<"$BODY" >/dev/null && break
    sleep 0.1
done
check_json "$K new deliveries written by the detector" ".count == $TOTAL"
NEW=$(jq -c '[.deliveries[] | select(.status == "pending") | .id]' <<<"$BODY")
sleep 0.4 # A took them (poll 0.2 s) and is waiting on the frozen receiver
t_kill=$(date +%s%3N)
kill -9 "$GP_PID"
wait "$GP_PID" 2>/dev/null
GP_PID=""
kill -CONT "$RX_PID"
b_start
GP_URL=$B_URL
done_all=no
for _ in $(seq 1 150); do
    req GET "/api/webhooks/deliveries?webhookId=$W1&limit=100"
    if jq -e 'all(.deliveries[]; .status == "delivered")' <<<"$BODY" >/dev/null; then done_all=yes; break; fi
    sleep 0.1
done
check "after the kill, the other process delivered all $K" '[ "$done_all" = yes ] && [ "$(jq length <<<"$NEW")" -eq $K ]'
LAST=$(jq -r '[.deliveries[].deliveredAt] | max' <<<"$BODY")
took=$(($(date -d "$LAST" +%s%3N) - t_kill))
check "only after the claims lapsed (${took} ms after the kill)" '[ "$took" -ge 1000 ] && [ "$took" -le 20000 ]'
check "each taken-over delivery received with 200" \
    '[ "$(jq -s -r --argjson ids "$NEW" "[.[] | select(.status == 200) | .headers.\"x-genuproof-delivery\" | select(. as \$x | \$ids | index(\$x))] | unique | length" "$RX_LOG")" -eq $K ]'

b_stop
check "clean shutdown" '[ "$B_RC" = 0 ]'
check "no sanitizer report" '! grep -q "ERROR: AddressSanitizer\|runtime error" "$GP_LOG" "$GP_DIR/b.log"'
check "the secret is never logged" '! grep -qF "$SECRET" "$GP_LOG" "$GP_DIR/b.log"'
gp_finish
