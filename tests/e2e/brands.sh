#!/usr/bin/env bash
# tests/e2e/brands.sh - brand routes end to end: create (admin, key shown
# once), get, list, stats, scans, /api/scans; access control with brand
# keys; bad inputs answer 4xx and write nothing.
set -u
. "$(dirname "$0")/lib.bash"

gp_start || gp_finish

ISO_RE='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{3}Z$'
UUID_RE='^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$'

# ---- POST /api/brands ----
req POST /api/brands '{"name":"Luxe Watches","domain":"luxewatches.com","industry":"fashion","logoUrl":"https://luxewatches.com/logo.png"}'
check_status "create brand A -> 200" 200
check_json "create: exact keys" 'keys_unsorted == ["id","name","domain","industry","plan","createdAt","apiKey"]'
check_json "create: fields" '.name == "Luxe Watches" and .domain == "luxewatches.com" and .industry == "fashion" and .plan == "free"'
check_json "create: id is a UUID v4" ".id | test(\"$UUID_RE\")"
check_json "create: createdAt is ISO" ".createdAt | test(\"$ISO_RE\")"
check_json "create: apiKey issued" '.apiKey | type == "string" and startswith("gpk_") and length > 40'
A=$(jb .id)
KA=$(jb .apiKey)
A_CREATED=$(jb .createdAt)

sleep 0.01
req POST /api/brands '{"name":"Other Brand","domain":"other.example","industry":"electronics"}'
check_status "create brand B -> 200" 200
B=$(jb .id)
KB=$(jb .apiKey)
check "two brands have different ids and keys" '[ "$A" != "$B" ] && [ "$KA" != "$KB" ]'

# Only the admin may create brands.
NOAUTH=1 req POST /api/brands '{"name":"x","domain":"y","industry":"z"}'
check_status "create without key -> 401" 401
AUTH="Bearer $KA" req POST /api/brands '{"name":"x","domain":"y","industry":"z"}'
check_status "create with a brand key -> 403" 403
AUTH="Bearer gpk_0000000000000000000000000000000000000000000000000000000000000000" \
    req POST /api/brands '{"name":"x","domain":"y","industry":"z"}'
check_status "create with an unknown key -> 401" 401

# Bad bodies.
req POST /api/brands '{"name":"x","domain":'
check_status "malformed JSON -> 400" 400
check_json "malformed JSON message" '.error == "Invalid JSON body"'
req POST /api/brands 'null'
check_status "null body -> 400" 400
req POST /api/brands '[{"name":"x"}]'
check_status "array body -> 400" 400
req POST /api/brands '{"name":"x","domain":"y"}'
check_status "missing industry -> 400" 400
check_json "missing field message" '.error == "name, domain, and industry are required"'
req POST /api/brands '{"name":"","domain":"y","industry":0}'
check_json "falsy fields count as missing" '.error == "name, domain, and industry are required"'
req POST /api/brands '{"name":42,"domain":"y","industry":"z"}'
check_status "name of wrong type -> 400" 400
check_json "wrong type message" '.error == "name must be a string"'
req POST /api/brands '{"name":"x","domain":"y","industry":"z","logoUrl":["a"]}'
check_json "logoUrl of wrong type" '.error == "logoUrl must be a string"'
LONG=$(head -c 300 /dev/zero | tr '\0' 'n')
req POST /api/brands "{\"name\":\"$LONG\",\"domain\":\"y\",\"industry\":\"z\"}"
check_json "name too long -> 400" '.error == "name is too long"'
printf '{"name":"a\xff","domain":"y","industry":"z"}' >"$GP_DIR/badutf8"
req POST /api/brands '' --data-binary "@$GP_DIR/badutf8" -H 'Content-Type: application/json'
check_status "invalid UTF-8 -> 400" 400
req POST /api/brands '{"name":"a\u0000b","domain":"y","industry":"z"}'
check_status "NUL escape -> 400" 400

# ---- GET /api/brands/list ----
req GET /api/brands/list
check_status "list -> 200" 200
check_json "list: nothing written by rejected requests" '.count == 2 and (.brands | length) == 2'
check_json "list: newest first" ".brands[0].id == \"$B\" and .brands[1].id == \"$A\""
check_json "list: entry keys" 'all(.brands[]; keys_unsorted == ["id","name","domain","industry","plan","createdAt"])'
check_json "list: entry fields" ".brands[1] == {\"id\":\"$A\",\"name\":\"Luxe Watches\",\"domain\":\"luxewatches.com\",\"industry\":\"fashion\",\"plan\":\"free\",\"createdAt\":\"$A_CREATED\"}"
check "list never shows keys" '! grep -q gpk_ <<<"$BODY"'
AUTH="Bearer $KA" req GET /api/brands/list
check_status "list with a brand key -> 403" 403
NOAUTH=1 req GET /api/brands/list
check_status "list without key -> 401" 401

# ---- GET /api/brands?id= ----
AUTH="Bearer $KA" req GET "/api/brands?id=$A"
check_status "get own brand -> 200" 200
check_json "get: no key attributes (D04)" 'keys_unsorted == ["id","name","domain","industry","logoUrl","plan","createdAt","productCount","scanCount","threatCount"]'
check_json "get: fields" ".id == \"$A\" and .logoUrl == \"https://luxewatches.com/logo.png\" and .plan == \"free\" and .createdAt == \"$A_CREATED\""
check_json "get: counters start at 0" '.productCount == 0 and .scanCount == 0 and .threatCount == 0'
check "get never shows the key" '! grep -q gpk_ <<<"$BODY"'
req GET "/api/brands?id=$B"
check_status "admin gets any brand" 200
check_json "brand without logo -> logoUrl null" '.logoUrl == null and .name == "Other Brand"'
AUTH="Bearer $KB" req GET "/api/brands?id=$A"
check_status "another brand's key -> 403" 403
check "403 leaks no data" '! grep -q Luxe <<<"$BODY"'
NOAUTH=1 req GET "/api/brands?id=$A"
check_status "get without key -> 401" 401
req GET "/api/brands"
check_status "get without id -> 400" 400
check_json "get without id message" '.error == "Brand ID is required"'
req GET "/api/brands?id="
check_json "empty id counts as missing" '.error == "Brand ID is required"'
req GET "/api/brands?id=nonexistent-brand-id"
check_status "unknown brand -> 404" 404
check_json "unknown brand message" '.error == "Brand not found"'
req GET "/api/brands?id=..%2F..%2Fetc%2Fpasswd"
check_status "path traversal id -> 404" 404
req GET "/api/brands?id=$A%23STATS"
check_status "id with # -> 404" 404
req GET "/api/brands?id=%zz"
check_status "undecodable id -> 400" 400
AUTH="Bearer $KA" req GET "/api/brands?id=nonexistent-brand-id"
check_status "brand key on an unknown brand -> 403" 403
check "the key is not in the server log" '! grep -q "$KA" "$GP_LOG"'

# ---- stats (empty) ----
AUTH="Bearer $KA" req GET "/api/brands/stats?brandId=$A"
check_status "stats -> 200" 200
check_json "stats: keys" 'keys_unsorted == ["productCount","activeProducts","recalledProducts","transferredProducts","totalScans","threatCount","unresolvedThreats","statsCounter"]'
check_json "stats: zeros" '.productCount == 0 and .totalScans == 0 and .threatCount == 0 and .statsCounter == {"productCount":0,"scanCount":0,"threatCount":0}'
AUTH="Bearer $KB" req GET "/api/brands/stats?brandId=$A"
check_status "stats of another brand -> 403" 403
req GET "/api/brands/stats"
check_status "stats without brandId -> 400" 400
check_json "stats missing message" '.error == "brandId required"'
req GET "/api/brands/stats?brandId=nonexistent-brand-id"
check_json "stats of an unknown brand: zeros (admin)" '.productCount == 0 and .threatCount == 0'

# ---- products, scans and counters (product routes from the products helper) ----
AUTH="Bearer $KA" req POST /api/products/register "{\"brandId\":\"$A\",\"name\":\"Royal Oak\",\"sku\":\"RO-1\"}"
check_status "register product 1" 200
P1=$(jb .productId)
C1=$(jb .verificationCode)
AUTH="Bearer $KA" req POST /api/products/register "{\"brandId\":\"$A\",\"name\":\"Nautilus\",\"sku\":\"NT-1\"}"
check_status "register product 2" 200
P2=$(jb .productId)
AUTH="Bearer $KA" req POST /api/products/recall "{\"productId\":\"$P2\",\"reason\":\"faulty clasp\"}"
check_status "recall product 2" 200

# Scans from three places (geo headers are honoured from the loopback proxy).
NOAUTH=1 req GET "/api/products/verify?code=$C1" '' -H 'CF-IPCountry: CH'
check_status "verify (CH)" 200
NOAUTH=1 req GET "/api/products/verify?code=$C1" '' -H 'X-Vercel-IP-Country: US' -H 'X-Vercel-IP-City: New%20York'
NOAUTH=1 req GET "/api/products/verify?code=$C1" '' -H 'X-Vercel-IP-Country: US' -H 'X-Vercel-IP-City: New%20York'
NOAUTH=1 req GET "/api/products/verify?code=$C1"
check_status "verify (no geo)" 200

AUTH="Bearer $KA" req GET "/api/brands/stats?brandId=$A"
check_json "stats: products counted" '.productCount == 2 and .activeProducts == 1 and .recalledProducts == 1 and .transferredProducts == 0'
check_json "stats: scans summed" '.totalScans == 4'
check_json "stats: alerts counted" '.threatCount == 1 and .unresolvedThreats == 1'
check_json "stats: counters" '.statsCounter == {"productCount":2,"scanCount":4,"threatCount":1}'
AUTH="Bearer $KA" req GET "/api/brands?id=$A"
check_json "profile shows live counters" '.productCount == 2 and .scanCount == 4 and .threatCount == 1'

AUTH="Bearer $KA" req GET "/api/brands/scans?brandId=$A"
check_status "brand scans -> 200" 200
check_json "brand scans: keys" 'keys_unsorted == ["locations","threatHotspots","totalScans"]'
check_json "brand scans: every scan read" '.totalScans == 4'
check_json "brand scans: Unknown excluded, count order" '(.locations | length) == 2 and .locations[0].country == "US" and .locations[0].city == "New York" and .locations[0].count == 2 and .locations[1].country == "CH" and .locations[1].count == 1'
check_json "brand scans: location keys" 'all(.locations[]; keys_unsorted == ["country","city","count","lastScan"])'
check_json "brand scans: lastScan ISO" "all(.locations[]; .lastScan | test(\"$ISO_RE\"))"
check_json "brand scans: hotspots array" '(.threatHotspots | type) == "array" and all(.threatHotspots[]; keys_unsorted == ["country","city","count"])'
AUTH="Bearer $KB" req GET "/api/brands/scans?brandId=$A"
check_status "brand scans of another brand -> 403" 403
req GET "/api/brands/scans"
check_json "brand scans without brandId -> 400" '.error == "brandId required"'
AUTH="Bearer $KB" req GET "/api/brands/scans?brandId=$B"
check_json "brand without products: empty" '. == {"locations":[],"threatHotspots":[],"totalScans":0}'

# ---- GET /api/scans?productId= ----
AUTH="Bearer $KA" req GET "/api/scans?productId=$P1"
check_status "scans -> 200" 200
check_json "scans: keys" 'keys_unsorted == ["scans","locations","totalScans"]'
check_json "scans: rows without ip/userAgent" '(.scans | length) == 4 and all(.scans[]; keys_unsorted == ["timestamp","country","city","result"])'
check_json "scans: newest first" '[.scans[].timestamp] == ([.scans[].timestamp] | sort | reverse)'
check_json "scans: Unknown included in locations" '.totalScans == 4 and (.locations | length) == 3 and .locations[0].count == 2 and any(.locations[]; .country == "Unknown")'
check "scans never show raw IPs" '! grep -q 127.0.0.1 <<<"$BODY"'
AUTH="Bearer $KA" req GET "/api/scans?productId=$P1&limit=1"
check_json "scans: limit=1" '(.scans | length) == 1 and .totalScans == 1'
AUTH="Bearer $KA" req GET "/api/scans?productId=$P1&limit=0"
check_json "scans: limit=0 clamps to 1" '(.scans | length) == 1'
AUTH="Bearer $KA" req GET "/api/scans?productId=$P1&limit=abc"
check_json "scans: limit=abc -> default" '(.scans | length) == 4'
AUTH="Bearer $KB" req GET "/api/scans?productId=$P1"
check_status "scans of another brand's product -> 403" 403
check "403 leaks no scans" '! grep -q timestamp <<<"$BODY"'
NOAUTH=1 req GET "/api/scans?productId=$P1"
check_status "scans without key -> 401" 401
req GET "/api/scans"
check_status "scans without productId -> 400" 400
check_json "scans missing message" '.error == "productId is required"'
req GET "/api/scans?productId=nonexistent-product-id-xyz"
check_status "scans of an unknown product -> 404" 404
req GET "/api/scans?productId=..%2F..%2Fetc"
check_status "scans path traversal -> 404" 404
req GET "/api/scans?productId=$P2"
check_json "scans of a product never scanned" '. == {"scans":[],"locations":[],"totalScans":0}'

# Methods.
req DELETE /api/brands
check_status "DELETE /api/brands -> 405" 405

gp_stop
check "server exited cleanly" '[ "${GP_STOP_RC:-1}" = 0 ]'
gp_finish
