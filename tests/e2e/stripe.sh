#!/usr/bin/env bash
# tests/e2e/stripe.sh - pricing plans and checkout (API.md §9.46-§9.47)
# against a local fake Stripe (fake_stripe.js): plan whitelist (D38), the
# free starter plan, the "not configured" answer without
# STRIPE_SECRET_KEY, and with it a Checkout Session created through the
# asynchronous HTTP client: the form fields (inline price_data or a price
# id), bearer and Idempotency-Key headers, {"url"} on success, 500
# {"error":"Checkout failed"} when Stripe fails or is unreachable, and
# that the server keeps answering other requests while a checkout waits.
set -u
. "$(dirname "$0")/lib.bash"
HERE=$(cd "$(dirname "$0")" && pwd)
if ! command -v node >/dev/null 2>&1; then
    echo "SKIP: stripe (no node)"
    exit 0
fi
FS_PID=""
FS_LOG="$GP_DIR/stripe.log"
: >"$FS_LOG"
node "$HERE/fake_stripe.js" "$GP_DIR/fs.port" "$FS_LOG" &
FS_PID=$!
trap '[ -n "$FS_PID" ] && kill "$FS_PID" 2>/dev/null; gp_cleanup' EXIT
for i in $(seq 1 100); do [ -s "$GP_DIR/fs.port" ] && break; sleep 0.05; done
FS_PORT=$(cat "$GP_DIR/fs.port")
CAT="$HERE/../../data/catalog.json"

# --- without a secret key ------------------------------------------------------
unset STRIPE_SECRET_KEY STRIPE_BRAND_PRICE_ID STRIPE_BUSINESS_PRICE_ID STRIPE_API_BASE
gp_start --no-detector || gp_finish
NOAUTH=1 req GET /api/stripe/checkout
check_status "plans 200" 200
check_json "plans shape" \
    '(.plans | keys_unsorted) == ["starter","brand","business"] and (.plans | to_entries | all(.value | keys_unsorted == ["name","amount","products","features"]))'
check "plans from catalog.json" \
    '[ "$(jb .plans.brand.amount)" = "$(jq .plans.brand.amount "$CAT")" ] && [ "$(jb ".plans.business.features | tojson")" = "$(jq -c .plans.business.features "$CAT")" ]'
for p in "" '"gold"' '"constructor"' '"toString"' '"__proto__"' '1'; do
    NOAUTH=1 req POST /api/stripe/checkout "{\"plan\":${p:-null}}"
    check "invalid plan ${p:-null} 400" '[ "$STATUS" = 400 ] && [ "$BODY" = "{\"error\":\"Invalid plan\"}" -o "$(jb .error)" = "plan must be a string" ]'
done
NOAUTH=1 req POST /api/stripe/checkout '{"plan":"starter"}'
check "starter is free and public" '[ "$STATUS" = 200 ] && [ "$BODY" = "{\"url\":\"/dashboard\",\"free\":true}" ]'
NOAUTH=1 req POST /api/stripe/checkout '{"plan":"brand"}'
check_status "paid plan without credential 401" 401
req POST /api/brands '{"name":"Pay Co","domain":"pay.example","industry":"other"}'
BID=$(jb .id); BKEY=$(jb .apiKey)
req POST /api/brands '{"name":"Other Co","domain":"other.example","industry":"other"}'
OKEY=$(jb .apiKey)
AUTH="Bearer $OKEY" req POST /api/stripe/checkout "{\"plan\":\"brand\",\"brandId\":\"$BID\"}"
check_status "paid plan for another brand 403" 403
AUTH="Bearer $BKEY" req POST /api/stripe/checkout "{\"plan\":\"brand\",\"brandId\":\"$BID\"}"
check_json "not configured answer" \
    '.message == "Stripe not configured. Contact sales@genuproof.com" and .plan.name == "Brand" and .plan.amount == 9900 and (.plan | has("priceId") | not)'
gp_stop

# --- with the fake Stripe ------------------------------------------------------------
export STRIPE_SECRET_KEY=sk_test_fake STRIPE_API_BASE="http://127.0.0.1:$FS_PORT"
export STRIPE_BUSINESS_PRICE_ID=price_biz_123
gp_start --no-detector --base-url https://shop.example || gp_finish
NOAUTH=1 req GET /api/stripe/checkout
check_json "priceId appears when its env var is set" \
    '.plans.business.priceId == "price_biz_123" and (.plans.brand | has("priceId") | not)'

AUTH="Bearer $BKEY" req POST /api/stripe/checkout "{\"plan\":\"brand\",\"brandId\":\"$BID\",\"email\":\"a+b@pay.example\"}"
check "checkout url from the session" \
    '[ "$STATUS" = 200 ] && [ "$BODY" = "{\"url\":\"https://checkout.stripe.test/c/pay/cs_test_1\"}" ]'
L=$(tail -n 1 "$FS_LOG")
f() { printf '%s' "$L" | jq -r "$1"; }
check "POST /v1/checkout/sessions" '[ "$(f .method) $(f .path)" = "POST /v1/checkout/sessions" ]'
check "bearer secret key" '[ "$(f .headers.authorization)" = "Bearer sk_test_fake" ]'
check "form content type" '[ "$(f '"'"'.headers["content-type"]'"'"')" = "application/x-www-form-urlencoded" ]'
check "idempotency key" '[ -n "$(f '"'"'.headers["idempotency-key"] // empty'"'"')" ]'
BASE=$(f '.form.cancel_url' | sed 's#/pricing$##')
want=$(jq -cn --arg base "$BASE" --arg bid "$BID" '{
  "mode":"subscription","payment_method_types[]":"card","line_items[0][quantity]":"1",
  "line_items[0][price_data][currency]":"usd","line_items[0][price_data][unit_amount]":"9900",
  "line_items[0][price_data][recurring][interval]":"month",
  "line_items[0][price_data][product_data][name]":"GenuProof Brand",
  "line_items[0][price_data][product_data][description]":"500 products. Full supply chain tracking, AI threat detection (Gemini), Real-time dashboard, Carrier integrations, Anti-tag-cloning",
  "success_url":($base + "/dashboard?plan=brand&success=true"),"cancel_url":($base + "/pricing"),
  "customer_email":"a+b@pay.example","metadata[brandId]":$bid,"metadata[plan]":"brand"}')
check "form fields (inline price)" '[ "$(f .form | jq -cS .)" = "$(printf %s "$want" | jq -cS .)" ]'
check "base URL from --base-url" '[ "$BASE" = https://shop.example ]'
K1=$(f '.headers["idempotency-key"]')

req POST /api/stripe/checkout '{"plan":"business"}'
check "admin checkout without brandId" '[ "$STATUS" = 200 ] && [ "$(jb .url)" = "https://checkout.stripe.test/c/pay/cs_test_2" ]'
L=$(tail -n 1 "$FS_LOG")
check "form fields (price id, no email, empty brandId)" \
    '[ "$(f ".form[\"line_items[0][price]\"]")" = price_biz_123 ] && [ "$(f ".form | has(\"customer_email\")")" = false ] && [ "$(f ".form[\"metadata[brandId]\"]")" = "" ] && [ "$(f ".form | keys | map(select(startswith(\"line_items[0][price_data]\"))) | length")" = 0 ]'
check "fresh idempotency key per checkout" '[ "$(f ".headers[\"idempotency-key\"]")" != "$K1" ]'

AUTH="Bearer $BKEY" req POST /api/stripe/checkout '{"plan":"brand","email":"fail@pay.example"}'
check "Stripe error -> 500 Checkout failed" '[ "$STATUS" = 500 ] && [ "$BODY" = "{\"error\":\"Checkout failed\"}" ]'
L=$(tail -n 1 "$FS_LOG")
check "brand key without brandId uses its brand" '[ "$(f ".form[\"metadata[brandId]\"]")" = "$BID" ]'

# the loop is not blocked while a checkout waits
START=$(date +%s.%N)
AUTH="Bearer $BKEY" req POST /api/stripe/checkout '{"plan":"brand","email":"slow@pay.example"}' &
SLOW=$!
sleep 0.3
NOAUTH=1 req GET /api/health
END=$(date +%s.%N)
check "other requests answered while a checkout waits" \
    '[ "$STATUS" = 200 ] && [ "$(echo "$END - $START < 2.5" | bc)" = 1 ]'
wait "$SLOW"
check "slow checkout completes" '[ "$(grep -c slow@ "$FS_LOG")" = 1 ]'
gp_stop

# unreachable Stripe
export STRIPE_API_BASE="http://127.0.0.1:1"
gp_start --no-detector || gp_finish
AUTH="Bearer $BKEY" req POST /api/stripe/checkout "{\"plan\":\"brand\",\"brandId\":\"$BID\"}"
check "unreachable Stripe -> 500 Checkout failed" '[ "$STATUS" = 500 ] && [ "$(jb .error)" = "Checkout failed" ]'
req GET /api/health
check_status "server still healthy" 200
gp_stop
check "clean shutdown" '[ "${GP_STOP_RC:-1}" = 0 ]'

gp_finish
