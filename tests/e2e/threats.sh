#!/usr/bin/env bash
# tests/e2e/threats.sh - threat alerts end to end (raised by recall and
# dispute from the product routes), listing, resolving, access control,
# and the ops-log shape with its day buckets and parameter clamping.
set -u
. "$(dirname "$0")/lib.bash"

gp_start || gp_finish

ISO_RE='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{3}Z$'
ALERT_KEYS='["alertId","brandId","type","severity","productId","details","timestamp","resolved","source","country","city","aiAnalysis","anomalyFlags","count","lastSeen"]'

req POST /api/brands '{"name":"Luxe Watches","domain":"luxewatches.com","industry":"fashion"}'
A=$(jb .id)
KA=$(jb .apiKey)
req POST /api/brands '{"name":"Other","domain":"other.example","industry":"food"}'
B=$(jb .id)
KB=$(jb .apiKey)
check "two brands created" '[ -n "$A" ] && [ -n "$B" ] && [ "$A" != "$B" ]'

# ---- empty list ----
AUTH="Bearer $KA" req GET "/api/threats?brandId=$A"
check_status "threats (none) -> 200" 200
check_json "threats (none): empty shape" '. == {"threats":[],"count":0}'

# ---- alerts from recall and dispute ----
AUTH="Bearer $KA" req POST /api/products/register "{\"brandId\":\"$A\",\"name\":\"Royal Oak\"}"
check_status "register product 1" 200
P1=$(jb .productId)
AUTH="Bearer $KA" req POST /api/products/register "{\"brandId\":\"$A\",\"name\":\"Le Classique Tote\"}"
check_status "register product 2" 200
P2=$(jb .productId)

AUTH="Bearer $KA" req POST /api/products/recall "{\"productId\":\"$P1\",\"reason\":\"counterfeit batch\"}"
check_status "recall -> 200" 200
AUTH="Bearer $KA" req GET "/api/threats?brandId=$A"
check_status "threats -> 200" 200
check_json "one alert" '.count == 1 and (.threats | length) == 1'
check_json "alert: whole object (§6.4)" ".threats[0] | keys_unsorted == $ALERT_KEYS"
check_json "alert: recall fields" ".threats[0] | .brandId == \"$A\" and .type == \"product_recall\" and .severity == \"critical\" and .productId == \"$P1\" and .resolved == false and .source == \"api\""
check_json "alert: details text" '.threats[0].details == "Product \"Royal Oak\" recalled: counterfeit batch"'
check_json "alert: id is 32 hex" '.threats[0].alertId | test("^[0-9a-f]{32}$")'
check_json "alert: defaults" ".threats[0] | .count == 1 and .anomalyFlags == [] and .aiAnalysis == null and .lastSeen == .timestamp and (.timestamp | test(\"$ISO_RE\"))"
ALERT1=$(jb '.threats[0].alertId')

sleep 0.01
NOAUTH=1 req POST /api/products/claim "{\"productId\":\"$P2\",\"consumerName\":\"Alice\"}" -H 'User-Agent: device-alice'
check_status "claim -> 200" 200
NOAUTH=1 req POST /api/products/dispute "{\"productId\":\"$P2\",\"consumerName\":\"Bob\",\"orderNumber\":\"ORD-1\"}" -H 'User-Agent: device-bob'
check_status "dispute -> 200" 200
AUTH="Bearer $KA" req GET "/api/threats?brandId=$A"
check_json "two alerts, newest first" '.count == 2 and .threats[0].type == "ownership_dispute" and .threats[1].type == "product_recall"'
check_json "dispute alert fields" ".threats[0] | .productId == \"$P2\" and .severity == \"critical\" and (.details | startswith(\"Ownership dispute on \\\"Le Classique Tote\\\"\"))"
check_json "alert ids are unique" '.threats[0].alertId != .threats[1].alertId'
ALERT2=$(jb '.threats[0].alertId')

AUTH="Bearer $KA" req GET "/api/threats?brandId=$A&limit=1"
check_json "limit=1 -> newest only" ".count == 1 and .threats[0].alertId == \"$ALERT2\""
AUTH="Bearer $KA" req GET "/api/threats?brandId=$A&limit=0"
check_json "limit=0 clamps to 1" '.count == 1'
AUTH="Bearer $KA" req GET "/api/threats?brandId=$A&limit=abc"
check_json "limit=abc -> default" '.count == 2'
AUTH="Bearer $KA" req GET "/api/threats?brandId=$A&limit=100000"
check_json "huge limit clamps" '.count == 2'

# ---- access ----
AUTH="Bearer $KB" req GET "/api/threats?brandId=$A"
check_status "another brand's threats -> 403" 403
check "403 leaks no alerts" '! grep -q alertId <<<"$BODY"'
NOAUTH=1 req GET "/api/threats?brandId=$A"
check_status "threats without key -> 401" 401
AUTH="Bearer $KB" req GET "/api/threats?brandId=$B"
check_json "brand B has no alerts" '.count == 0'
req GET "/api/threats"
check_status "threats without brandId -> 400" 400
check_json "threats missing message" '.error == "brandId is required"'
req GET "/api/threats?brandId=$A%23x"
check_status "brandId with # -> 400" 400
req GET "/api/threats?brandId=$A"
check_json "admin sees any brand's threats" '.count == 2'

# ---- resolve ----
AUTH="Bearer $KB" req POST /api/threats/resolve "{\"brandId\":\"$A\",\"alertId\":\"$ALERT1\"}"
check_status "resolve with another brand's key -> 403" 403
AUTH="Bearer $KB" req POST /api/threats/resolve "{\"brandId\":\"$B\",\"alertId\":\"$ALERT1\"}"
check_status "resolve an alert of another brand via own brandId -> 404" 404
check_json "resolve: not found message" '.error == "Alert not found"'
NOAUTH=1 req POST /api/threats/resolve "{\"brandId\":\"$A\",\"alertId\":\"$ALERT1\"}"
check_status "resolve without key -> 401" 401
AUTH="Bearer $KA" req POST /api/threats/resolve "{\"brandId\":\"$A\"}"
check_status "resolve without alertId -> 400" 400
check_json "resolve missing message" '.error == "brandId and alertId are required"'
AUTH="Bearer $KA" req POST /api/threats/resolve "{\"brandId\":\"$A\",\"alertId\":5}"
check_json "resolve: alertId of wrong type" '.error == "alertId must be a string"'
AUTH="Bearer $KA" req POST /api/threats/resolve '{"brandId":'
check_json "resolve: malformed JSON" '.error == "Invalid JSON body"'
AUTH="Bearer $KA" req POST /api/threats/resolve "{\"brandId\":\"$A\",\"alertId\":\"0123456789abcdef0123456789abcdef\"}"
check_status "resolve an unknown alert -> 404" 404
AUTH="Bearer $KA" req GET "/api/threats?brandId=$A"
check_json "nothing resolved by rejected requests" 'all(.threats[]; .resolved == false)'

AUTH="Bearer $KA" req POST /api/threats/resolve "{\"brandId\":\"$A\",\"alertId\":\"$ALERT1\"}"
check_status "resolve -> 200" 200
check_json "resolve response" '. == {"resolved":true}'
AUTH="Bearer $KA" req GET "/api/threats?brandId=$A"
check_json "resolved alert shows resolved" "(.threats[] | select(.alertId == \"$ALERT1\") | .resolved) == true and (.threats[] | select(.alertId == \"$ALERT2\") | .resolved) == false"
check_json "resolved alert keeps its shape" ".count == 2 and all(.threats[]; keys_unsorted == $ALERT_KEYS)"
AUTH="Bearer $KA" req GET "/api/brands/stats?brandId=$A"
check_json "stats: unresolved drops, total stays" '.threatCount == 2 and .unresolvedThreats == 1 and .statsCounter.threatCount == 2'
AUTH="Bearer $KA" req POST /api/threats/resolve "{\"brandId\":\"$A\",\"alertId\":\"$ALERT1\"}"
check_status "resolving twice is fine" 200
req POST /api/threats/resolve "{\"brandId\":\"$A\",\"alertId\":\"$ALERT2\"}"
check_status "admin resolves" 200
AUTH="Bearer $KA" req GET "/api/brands/stats?brandId=$A"
check_json "stats: all resolved" '.unresolvedThreats == 0'

# ---- ops-log ----
TODAY=$(date -u +%F)
req GET /api/ops-log
check_status "ops-log -> 200" 200
check_json "ops-log: keys" 'keys_unsorted == ["entries","stats","buckets","legacyFallback"]'
check_json "ops-log: no entries yet" '.entries == []'
check_json "ops-log: empty stats" '.stats == {"totalOperations":0,"agentBreakdown":{},"severityBreakdown":{},"attackVectorBreakdown":{},"avgLatencyMs":0,"avgConfidence":0,"geminiModel":"gemini-2.5-flash"}'
check_json "ops-log: 7 day buckets by default" '(.buckets | length) == 7'
check_json "ops-log: bucket keys" 'all(.buckets[]; keys_unsorted == ["day","date","pk","items","latencyMs","status"])'
check_json "ops-log: bucket pk matches date" 'all(.buckets[]; .pk == "OPS_LOG#" + .date and .items == 0 and (.latencyMs | type) == "number" and .latencyMs >= 0)'
# The first bucket is today (or yesterday if the clock just passed midnight).
check_json "ops-log: first bucket is today" ".buckets[0].date == \"$TODAY\" or .buckets[1].date == \"$TODAY\""
check_json "ops-log: consecutive days, newest first" '[.buckets[].date | strptime("%Y-%m-%d") | mktime] as $t | all(range(1; $t | length); $t[. - 1] - $t[.] == 86400)'
req GET "/api/ops-log?days=1"
check_json "days=1 -> 1 bucket" '(.buckets | length) == 1'
req GET "/api/ops-log?days=100"
check_json "days=100 clamps to 31" '(.buckets | length) == 31'
req GET "/api/ops-log?days=0"
check_json "days=0 clamps to 1" '(.buckets | length) == 1'
req GET "/api/ops-log?days=-5"
check_json "negative days clamp to 1" '(.buckets | length) == 1'
req GET "/api/ops-log?days=abc&limit=xyz"
check_json "invalid days -> default 7" '(.buckets | length) == 7'
req GET "/api/ops-log?limit=100000&days=31"
check_status "huge limit accepted (clamped)" 200
req GET "/api/ops-log?days=%zz"
check_status "undecodable parameter -> 400" 400
AUTH="Bearer $KA" req GET /api/ops-log
check_status "ops-log with a brand key -> 403" 403
NOAUTH=1 req GET /api/ops-log
check_status "ops-log without key -> 401" 401
req POST /api/ops-log '{}'
check_status "POST /api/ops-log -> 405" 405

gp_stop
check "server exited cleanly" '[ "${GP_STOP_RC:-1}" = 0 ]'
gp_finish
