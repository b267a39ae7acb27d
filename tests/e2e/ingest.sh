#!/usr/bin/env bash
# tests/e2e/ingest.sh - partner ingest webhooks (API.md §9.30-§9.32, §4.5):
# X-Ingest-Key checks, status/action maps, canonical timestamps, the
# stored shipping actor/data hashed as stored, idempotent retries, and 50
# concurrent deliveries on one product leaving one unbroken chain.
. "$(dirname "$0")/lib.bash"

gp_start --rate-limit 0 --durability normal --no-detector || gp_finish

req POST /api/brands '{"name":"Ingest Brand","domain":"ingest.test","industry":"fashion"}'
A=$(jb .id); KA=$(jb .apiKey)
req POST /api/brands '{"name":"Other Brand","domain":"other.test","industry":"fashion"}'
B=$(jb .id); KB=$(jb .apiKey)
AUTH="Bearer $KA" req POST /api/products/register "{\"brandId\":\"$A\",\"name\":\"Tote\"}"
check_status "register product" 200
P=$(jb .productId); CODE=$(jb .verificationCode)

AUTH="Bearer $KA" req POST /api/integrations/configure "{\"brandId\":\"$A\",\"type\":\"fedex\"}"
check_status "configure A" 200
IKA=$(jb .ingestKey); IA=$(jb .id)
AUTH="Bearer $KB" req POST /api/integrations/configure "{\"brandId\":\"$B\",\"type\":\"shopify\"}"
IKB=$(jb .ingestKey)

ingest() { # kind json [extra curl args]
    local kind=$1 json=$2; shift 2
    NOAUTH=1 req POST "/api/ingest/$kind" "$json" "$@"
}

# ---- keys ----
ingest pos "{\"orderId\":\"o1\",\"platform\":\"shopify\",\"productId\":\"$P\"}"
check_status "missing key -> 401" 401
ingest pos "{\"orderId\":\"o1\",\"platform\":\"shopify\",\"productId\":\"$P\"}" -H "X-Ingest-Key: aik_00000000000000000000000000000000"
check_status "unknown key -> 401" 401
ingest pos "{\"orderId\":\"o1\",\"platform\":\"shopify\",\"productId\":\"$P\"}" -H "X-Ingest-Key: $IKB"
check_status "other brand's product -> 403" 403
check_json "403 body" '.error == "Forbidden"'

# ---- validation ----
ingest pos "{\"platform\":\"shopify\",\"productId\":\"$P\"}" -H "X-Ingest-Key: $IKA"
check_json "pos missing orderId" '.error == "orderId and platform are required"'
ingest pos '{"orderId":"o1","platform":"shopify"}' -H "X-Ingest-Key: $IKA"
check_json "pos no product ref" '.error == "productId or verificationCode required"'
ingest shipping '{"trackingNumber":"T1","carrier":"FedEx","status":"delivered"}' -H "X-Ingest-Key: $IKA"
check_json "shipping no product ref" '.error == "productId or verificationCode required to map shipment to product"'
ingest warehouse '{"action":"stored","verificationCode":"AAAAAAAAAAAA","warehouseName":"W"}' -H "X-Ingest-Key: $IKA"
check_status "unknown code -> 404 (D32)" 404
check_json "unknown code body" '.error == "Product not found"'
ingest pos "{\"orderId\":\"o1\",\"platform\":\"shopify\",\"productId\":\"$P\",\"timestamp\":\"yesterday\"}" -H "X-Ingest-Key: $IKA"
check_status "invalid timestamp -> 400" 400
check_json "invalid timestamp body" '.error == "Invalid timestamp"'
ingest pos "{\"orderId\":\"o1\",\"platform\":\"shopify\",\"productId\":\"$P\",\"amount\":\"12\"}" -H "X-Ingest-Key: $IKA"
check_json "amount must be a number" '.error == "amount must be a number"'

# ---- the three kinds ----
ingest pos "{\"orderId\":\"SO-1\",\"platform\":\"shopify\",\"productId\":\"$P\",\"amount\":0,\"currency\":\"USD\"}" -H "X-Ingest-Key: $IKA"
check_status "pos 200" 200
check_json "pos body" ".success == true and .eventType == \"sold\" and .productId == \"$P\" and (.hash|length) == 64 and .message == \"Sale event from shopify (order SO-1) recorded\""
ingest shipping "{\"trackingNumber\":\"FX1\",\"carrier\":\"FedEx\",\"status\":\"in_transit\",\"verificationCode\":\"$CODE\",\"city\":\"Memphis\",\"country\":\"US\",\"timestamp\":\"2026-01-02T03:04:05+01:00\"}" -H "X-Ingest-Key: $IKA"
check_status "shipping by code 200" 200
check_json "shipping body" '.eventType == "shipped" and .message == "Shipping event \"in_transit\" from FedEx recorded for product"'
SHIP_HASH=$(jb .hash)
ingest shipping "{\"trackingNumber\":\"FX1\",\"carrier\":\"FedEx\",\"status\":\"weird_status\",\"productId\":\"$P\"}" -H "X-Ingest-Key: $IKA"
check_json "unknown carrier status -> custom" '.eventType == "custom"'
for a in received:received inspected:inspected stored:received dispatched:shipped returned:received other:custom; do
    ingest warehouse "{\"action\":\"${a%%:*}\",\"warehouseName\":\"WH\",\"productId\":\"$P\",\"bay\":\"B1\"}" -H "X-Ingest-Key: $IKA"
    check_json "warehouse ${a%%:*} -> ${a##*:}" ".eventType == \"${a##*:}\""
done

req GET "/api/products/events?productId=$P"
check_json "chain valid after ingests" '.chainValid == true and .count == 10'
check_json "sold event stored data" '.events[1].type == "sold" and .events[1].actor == "shopify Store" and .events[1].data == {"orderId":"SO-1","platform":"shopify","amount":0,"currency":"USD","source":"pos_webhook"}'
check_json "shipping actor/data as stored (D18)" ".events[2].actor == \"FedEx (FX1)\" and .events[2].data == {\"trackingNumber\":\"FX1\",\"carrier\":\"FedEx\",\"carrierStatus\":\"in_transit\",\"source\":\"shipping_webhook\"} and .events[2].location == \"Memphis, US\" and .events[2].hash == \"$SHIP_HASH\""
check_json "timestamp re-emitted canonical" '.events[2].timestamp == "2026-01-02T02:04:05.000Z"'

# ---- idempotency ----
ingest shipping "{\"trackingNumber\":\"FX1\",\"carrier\":\"FedEx\",\"status\":\"in_transit\",\"verificationCode\":\"$CODE\",\"city\":\"Memphis\",\"country\":\"US\",\"timestamp\":\"2026-01-02T02:04:05.000Z\"}" -H "X-Ingest-Key: $IKA"
check_status "retry with same timestamp 200" 200
check_json "retry returns the original response" ".hash == \"$SHIP_HASH\""
ingest pos "{\"orderId\":\"SO-2\",\"platform\":\"shopify\",\"productId\":\"$P\"}" -H "X-Ingest-Key: $IKA" -H "Idempotency-Key: delivery-42"
FIRST=$BODY
ingest pos "{\"orderId\":\"SO-2\",\"platform\":\"shopify\",\"productId\":\"$P\"}" -H "X-Ingest-Key: $IKA" -H "Idempotency-Key: delivery-42"
check "Idempotency-Key retry same body" '[ "$BODY" = "$FIRST" ]'
req GET "/api/products/events?productId=$P"
check_json "retries appended nothing" '.count == 11 and .chainValid == true'

# ---- integration counters (D02) ----
AUTH="Bearer $KA" req GET "/api/integrations/configure?brandId=$A"
check_json "eventCount updated" ".integrations[0].id == \"$IA\" and .integrations[0].eventCount == 10 and (.integrations[0].lastEvent|type) == \"string\""

# ---- 50 concurrent deliveries on one product ----
AUTH="Bearer $KA" req POST /api/products/register "{\"brandId\":\"$A\",\"name\":\"Concurrent\"}"
P2=$(jb .productId)
pids=()
for i in $(seq 1 50); do
    curl -s -o "$GP_DIR/c$i" -w '%{http_code}' --max-time 30 -X POST -H 'Content-Type: application/json' \
        -H "X-Ingest-Key: $IKA" --data-binary "{\"orderId\":\"C-$i\",\"platform\":\"square\",\"productId\":\"$P2\"}" \
        "$GP_URL/api/ingest/pos" >"$GP_DIR/s$i" &
    pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
ok=0
for i in $(seq 1 50); do [ "$(cat "$GP_DIR/s$i")" = 200 ] && ok=$((ok + 1)); done
check "50 concurrent ingests answered 200" '[ "$ok" = 50 ]'
req GET "/api/products/events?productId=$P2"
check_json "one unbroken chain of 51 events" '.count == 51 and .chainValid == true'
check_json "every order recorded once" '[.events[1:][].data.orderId] | unique | length == 50'

gp_finish
