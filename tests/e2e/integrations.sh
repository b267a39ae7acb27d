#!/usr/bin/env bash
# tests/e2e/integrations.sh - integrations (API.md §9.33-§9.37): the key
# shown once and stored hashed, masked listing, status with a real
# sourceBreakdown (D53), journeys without simulation hints, and simulate
# with fresh ids, non-future timestamps and a valid chain (D39).
. "$(dirname "$0")/lib.bash"

gp_start --rate-limit 0 --durability normal --no-detector || gp_finish

req POST /api/brands '{"name":"Integ Brand","domain":"integ.test","industry":"watches"}'
A=$(jb .id); KA=$(jb .apiKey)
req POST /api/brands '{"name":"Other","domain":"o.test","industry":"x"}'
KB=$(jb .apiKey)

AUTH="Bearer $KA" req POST /api/integrations/configure "{\"brandId\":\"$A\",\"type\":\"dhl\",\"config\":{\"account\":\"42\"}}"
check_status "configure 200" 200
check_json "configure shape" '(.ingestKey|test("^aik_[0-9a-f]{32}$")) and .active == true and (.webhookUrl|endswith("/api/ingest/shipping")) and (.instructions|keys) == ["step1","step2","step3","step4","step5"]'
KEY=$(jb .ingestKey)
AUTH="Bearer $KA" req POST /api/integrations/configure "{\"brandId\":\"$A\"}"
check_json "configure missing type" '.error == "brandId and type required"'
AUTH="Bearer $KA" req POST /api/integrations/configure "{\"brandId\":\"$A\",\"type\":\"constructor\"}"
check_status "configure unknown type 400" 400
AUTH="Bearer $KA" req POST /api/integrations/configure '{"brandId":"no-such-brand","type":"dhl"}'
check_status "configure other brand 403" 403
req POST /api/integrations/configure '{"brandId":"no-such-brand","type":"dhl"}'
check_status "configure unknown brand 404 (admin)" 404
AUTH="Bearer $KB" req GET "/api/integrations/configure?brandId=$A"
check_status "list by other brand 403" 403
AUTH="Bearer $KA" req GET "/api/integrations/configure?brandId=$A"
check_json "list masked" ".count == 1 and .integrations[0].ingestKey == \"${KEY:0:8}...\" and .integrations[0].eventCount == 0 and .integrations[0].lastEvent == null"
check "key not stored in plain text" '! grep -a -q "$KEY" "$GP_DB"* 2>/dev/null'

req GET /api/integrations/journeys
check_json "journeys count 4" '.count == 4 and ([.journeys[].stages|length] == [10,10,10,9])'
check_json "journeys without simulation" '[.journeys[].stages[]|has("simulation")]|any|not'

AUTH="Bearer $KA" req POST /api/integrations/simulate "{\"brandId\":\"$A\",\"productName\":\"Sim Watch\",\"journey\":\"luxury_watch\",\"category\":\"watches\"}"
check_status "simulate template 200" 200
check_json "simulate shape" '.success == true and .journey.totalSteps == 10 and (.journey.events|length) == 10 and (.product.hash|test("^[0-9a-f]{16}\\.\\.\\.$")) and .journey.events[2].source == "Swiss Post webhook" and .journey.events[9].source == "shopify webhook"'
SP=$(jb .product.productId); SC=$(jb .product.verificationCode)
AUTH="Bearer $KA" req POST /api/integrations/simulate "{\"brandId\":\"$A\",\"productName\":\"Sim Watch\",\"journey\":\"luxury_watch\"}"
check_status "same name again (no duplicate check)" 200
req GET "/api/products/events?productId=$SP"
check_json "simulated chain valid" '.chainValid == true and .count == 10'
NOW=$(date -u +%Y-%m-%dT%H:%M:%S.000Z)
check_json "no future timestamps (D39)" "[.events[].timestamp] | all(. <= \"$NOW\")"
check_json "simulated data" '.events[2].data.source == "shipping_webhook" and (.events[2].data.trackingNumber|test("^CH-[0-9A-Z]{8}$")) and .events[2].data.simulated == true and (.events[9].data.orderId|test("^SHP-[0-9]{8}$"))'
T1=$(jb '.events[2].data.trackingNumber')
AUTH="Bearer $KA" req POST /api/integrations/simulate "{\"brandId\":\"$A\",\"productName\":\"Sim 3\",\"journey\":\"luxury_watch\"}"
req GET "/api/products/events?productId=$(jb .product.productId)"
check "tracking numbers differ per request" '[ "$(jb ".events[2].data.trackingNumber")" != "$T1" ]'
req GET "/api/products/verify?code=$SC&metadata=true"
check_json "simulated product verifies" '.authentic == true'

AUTH="Bearer $KA" req POST /api/integrations/simulate "{\"brandId\":\"$A\",\"productName\":\"C\",\"journey\":\"custom\",\"steps\":[{\"type\":\"flew\",\"actor\":\"A\"}]}"
check_json "custom step type validated" '.error == "Invalid event type"'
AUTH="Bearer $KA" req POST /api/integrations/simulate "{\"brandId\":\"$A\",\"productName\":\"C\",\"journey\":\"custom\",\"steps\":[]}"
check_json "custom without steps" '.error == "Invalid journey or no steps"'
AUTH="Bearer $KA" req POST /api/integrations/simulate "{\"brandId\":\"$A\",\"productName\":\"C\"}"
check_json "simulate missing journey" '.error == "brandId, productName, and journey required"'

# sourceBreakdown: one shipping ingest on a registered product.
AUTH="Bearer $KA" req POST /api/products/register "{\"brandId\":\"$A\",\"name\":\"Plain\"}"
PP=$(jb .productId)
NOAUTH=1 req POST /api/ingest/shipping "{\"trackingNumber\":\"D1\",\"carrier\":\"DHL\",\"status\":\"picked_up\",\"productId\":\"$PP\"}" -H "X-Ingest-Key: $KEY"
check_status "ingest with configured key" 200
AUTH="Bearer $KA" req GET "/api/integrations/status?brandId=$A"
check_status "status 200" 200
check_json "status integrations" '.integrations.connectedCount == 1 and .integrations.totalAvailable == 8 and ([.integrations.available[]|select(.connected)|.type] == ["dhl"]) and .integrations.configured[0].eventCount == 1'
check_json "sourceBreakdown counted (D53)" '.sourceBreakdown == {"manual":1,"shipping_webhook":10,"pos_webhook":3,"warehouse_webhook":18}'
check_json "status stats" '.stats.productCount == 4 and .brand.name == "Integ Brand"'

gp_finish
