#!/usr/bin/env bash
# tests/e2e/products.sh - every product route end to end (API.md §9.6-§9.19):
# register/batch (duplicates, counters, hashes and signatures recomputed
# with openssl), list/search, verify (counted scans, warnings, claim view),
# events/history/transfer/recall (chain integrity, status, alerts), claim
# and dispute (race, fingerprint rules), access control (401/403), and bad
# inputs answered 4xx with nothing written.
set -u
. "$(dirname "$0")/lib.bash"

SECRET=e2e-test-secret
GENESIS=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
ISO_RE='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{3}Z$'
HEX_RE='^[0-9a-f]{64}$'

# check_all NAME EXPR [NAME EXPR ...]: every jq EXPR (a boolean) over $BODY
# in one jq run (process start-up is the slow part of these scripts).
check_all() {
    local names=() exprs=() prog="" res i
    while [ $# -ge 2 ]; do names+=("$1"); exprs+=("$2"); shift 2; done
    for i in "${!exprs[@]}"; do
        prog+="${prog:+, }(try (if (${exprs[$i]}) then \"1\" else \"0\" end) catch \"0\")"
    done
    res=$(printf '%s' "$BODY" | jq -j "[$prog] | join(\"\")" 2>/dev/null)
    for i in "${!names[@]}"; do
        if [ "${res:$i:1}" = 1 ]; then pass "${names[$i]}"; else
            fail "${names[$i]}"; echo "  jq ${exprs[$i]} on: ${BODY:0:300}"; fi
    done
}

sha256() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }
hmac() { printf '%s' "$2" | openssl dgst -sha256 -hmac "$1" -r | cut -d' ' -f1; }
# Recomputes the chain of an events listing ($BODY of GET events, with
# productId $1) and prints ok or the first problem.
recheck_events() {
    local prev="$GENESIS" stored_prev stored canon
    while IFS=$'\t' read -r stored_prev stored canon; do
        [ "$stored_prev" = "$prev" ] || { echo "link"; return; }
        [ "$(sha256 "$canon")" = "$stored" ] || { echo "hash"; return; }
        prev=$stored
    done < <(printf '%s' "$BODY" | jq -r --arg p "$1" '.events[] | [.previousHash, .hash, ({productId:$p,type,actor,timestamp,data,previousHash} | tojson)] | @tsv')
    echo ok
}
count_products() { # $1 brand id -> prints the number of listed products
    req GET "/api/products/list?brandId=$1&limit=500"
    jb .count
}
events_count() { NOAUTH=1 req GET "/api/products/events?productId=$1"; jb .count; }

# No detector: threatCount then moves only with recall/dispute alerts.
SIGNING_SECRET=$SECRET gp_start --rate-limit 0 --durability normal --no-detector || gp_finish

# ---- brands (brands routes, admin key) ----
req POST /api/brands '{"name":"Luxe Test","domain":"luxe.test","industry":"fashion"}'
check_status "create brand A" 200
A=$(jb .id); KA=$(jb .apiKey)
req POST /api/brands '{"name":"Other Test","domain":"other.test","industry":"electronics"}'
check_status "create brand B" 200
B=$(jb .id); KB=$(jb .apiKey)

# ---- POST /api/products/register ----
AUTH="Bearer $KA" req POST /api/products/register "{\"brandId\":\"$A\",\"name\":\"Royal Oak\",\"sku\":\"RO-1\",\"category\":\"watches\",\"description\":\"Steel\",\"imageUrl\":\"https://img.test/ro.png\",\"metadata\":{\"material\":\"steel\",\"caliber\":4401,\"nested\":{\"b\":1,\"a\":[1.5,true,null]}},\"manufacturingLocation\":\"Le Brassus\"}"
check_status "register -> 200" 200
check_json "register: exact keys" 'keys_unsorted == ["productId","verificationCode","hash","signature","verifyUrl","qrData"]'
check_json "register: productId 32 hex, code 12 base64url" '(.productId | test("^[0-9a-f]{32}$")) and (.verificationCode | test("^[A-Za-z0-9_-]{12}$"))'
P=$(jb .productId); CODE=$(jb .verificationCode); PH=$(jb .hash); PS=$(jb .signature)
check "register: verifyUrl ends with /verify/<code>" '[[ "$(jb .verifyUrl)" == */verify/$CODE ]]'
check_json "register: qrData is the JSON text" "(.qrData | fromjson) == {\"v\":1,\"code\":\"$CODE\",\"pid\":\"$P\"}"
check "register: signature = HMAC(secret, hash)" '[ "$(hmac $SECRET "$PH")" = "$PS" ]'

NOAUTH=1 req GET "/api/products/verify?productId=$P&metadata=true"
check_status "verify (metadata) -> 200" 200
check_json "verify: exact keys" 'keys_unsorted == ["authentic","product","events","warnings","scanCount","certificate","claim"]'
check_json "verify: product keys" '.product | keys_unsorted == ["productId","brandId","brandName","name","sku","category","description","imageUrl","verificationCode","hash","signature","status","createdAt","updatedAt"]'
check_json "verify: authentic fresh product" '.authentic == true and .certificate == {"hash":"'$PH'","signatureValid":true,"chainIntegrity":true}'
check_json "verify: stored fields (category label D40)" '.product.brandName == "Luxe Test" and .product.category == "Watches" and .product.description == "Steel" and .product.imageUrl == "https://img.test/ro.png" and .product.status == "active" and .product.sku == "RO-1"'
check_json "verify: createdAt ISO, updatedAt = createdAt" "(.product.createdAt | test(\"$ISO_RE\")) and .product.updatedAt == .product.createdAt"
check_json "verify: genesis event" ".events | length == 1 and .[0].type == \"manufactured\" and .[0].actor == \"Luxe Test\" and .[0].location == \"Le Brassus\" and .[0].previousHash == \"$GENESIS\" and .[0].data == {\"registeredBy\":\"$A\"}"
check_json "verify: event keys" '.events[0] | keys_unsorted == ["productId","type","actor","location","timestamp","hash","previousHash","data"]'
check_json "verify: metadata fetch counts no scan, no warnings" '.scanCount == 0 and .warnings == [] and .claim == {"claimed":false,"isClaimant":false}'
CREATED=$(jb .product.createdAt)
canon="{\"productId\":\"$P\",\"brandId\":\"$A\",\"name\":\"Royal Oak\",\"sku\":\"RO-1\",\"metadata\":{\"material\":\"steel\",\"caliber\":4401,\"nested\":{\"b\":1,\"a\":[1.5,true,null]}},\"createdAt\":\"$CREATED\"}"
check "register: product hash recomputed (§3.3, nested key order kept)" '[ "$(sha256 "$canon")" = "$PH" ]'
ecanon="{\"productId\":\"$P\",\"type\":\"manufactured\",\"actor\":\"Luxe Test\",\"timestamp\":\"$CREATED\",\"data\":{\"registeredBy\":\"$A\"},\"previousHash\":\"$GENESIS\"}"
check "register: genesis hash over the stored actor/data (D18)" '[ "$(sha256 "$ecanon")" = "$(jb .events[0].hash)" ]'

# duplicates (D23)
AUTH="Bearer $KA" req POST /api/products/register "{\"brandId\":\"$A\",\"name\":\"Royal Oak\",\"sku\":\"RO-1\"}"
check_status "duplicate name+sku -> 409" 409
check_json "duplicate message with SKU" '.error == "Product \"Royal Oak\" (SKU: RO-1) already exists for this brand"'
AUTH="Bearer $KA" req POST /api/products/register "{\"brandId\":\"$A\",\"name\":\"Royal Oak\"}"
check_status "duplicate name without sku -> 409" 409
check_json "duplicate message without SKU" '.error == "Product \"Royal Oak\" already exists for this brand"'
AUTH="Bearer $KA" req POST /api/products/register "{\"brandId\":\"$A\",\"name\":\"Royal Oak\",\"sku\":\"RO-2\"}"
check_status "same name, other sku -> 200" 200
P2=$(jb .productId); CODE2=$(jb .verificationCode)
AUTH="Bearer $KB" req POST /api/products/register "{\"brandId\":\"$B\",\"name\":\"Royal Oak\",\"sku\":\"RO-1\"}"
check_status "same product for another brand -> 200" 200
PB=$(jb .productId)
req GET "/api/brands?id=$A"
check_json "brand A productCount = 2" '.productCount == 2'

# auth
NOAUTH=1 req POST /api/products/register "{\"brandId\":\"$A\",\"name\":\"X\"}"
check_status "register without key -> 401" 401
AUTH="Bearer $KB" req POST /api/products/register "{\"brandId\":\"$A\",\"name\":\"X\"}"
check_status "register for another brand -> 403" 403
req POST /api/products/register '{"brandId":"nonexistent-brand-id","name":"X"}'
check_status "register for unknown brand (admin) -> 404" 404
check_json "unknown brand message" '.error == "Brand not found"'

# bad inputs: 400s, nothing written
before=$(count_products "$A")
for body in '{"brandId":' 'null' '[]' '"str"' '{"brandId":"'$A'","name":"x"} trailing'; do
    AUTH="Bearer $KA" req POST /api/products/register "$body"
    check_status "register malformed body ${body:0:20} -> 400" 400
    check_json "malformed body message" '.error == "Invalid JSON body"'
done
AUTH="Bearer $KA" req POST /api/products/register "{\"brandId\":\"$A\"}"
check_json "register missing name -> message" '.error == "brandId and name are required"'
AUTH="Bearer $KA" req POST /api/products/register "{\"brandId\":\"$A\",\"name\":0}"
check_status "register falsy name -> 400" 400
AUTH="Bearer $KA" req POST /api/products/register "{\"brandId\":\"$A\",\"name\":{\"x\":1}}"
check_json "register name of wrong type" '.error == "name must be a string"'
AUTH="Bearer $KA" req POST /api/products/register "{\"brandId\":\"$A\",\"name\":\"x\",\"metadata\":[1]}"
check_json "register metadata array" '.error == "metadata must be an object"'
AUTH="Bearer $KA" req POST /api/products/register "{\"brandId\":\"$A\",\"name\":\"x\",\"sku\":1e999}"
check_status "register huge number as sku -> 400" 400
AUTH="Bearer $KA" req POST /api/products/register "{\"brandId\":\"$A\",\"name\":\"x\",\"metadata\":{\"n\":1e999}}"
check_json "register metadata with a huge number -> 400" '.error == "metadata holds a number out of range"'
AUTH="Bearer $KA" req POST /api/products/register "{\"brandId\":\"$A\",\"name\":\"x\\u0000y\"}"
check_status "register NUL escape -> 400" 400
printf '{"brandId":"%s","name":"\xff\xfe"}' "$A" >"$GP_DIR/badutf8"
STATUS=$(curl -s -o "$GP_DIR/b" -w '%{http_code}' -H "Authorization: Bearer $KA" --data-binary @"$GP_DIR/badutf8" "$GP_URL/api/products/register")
check "register invalid UTF-8 -> 400" '[ "$STATUS" = 400 ]'
LONGID=$(head -c 300 /dev/zero | tr '\0' 'a')
req POST /api/products/register "{\"brandId\":\"$LONGID\",\"name\":\"x\"}"
check_status "register 300-char brandId (admin) -> 404" 404
req POST /api/products/register '{"brandId":"../../etc/passwd","name":"x"}'
check_status "register traversal brandId -> 404" 404
req POST /api/products/register '{"brandId":"a#b","name":"x"}'
check_status "register brandId with # -> 404" 404
BIGMETA=$(head -c 20000 /dev/zero | tr '\0' 'm')
AUTH="Bearer $KA" req POST /api/products/register "{\"brandId\":\"$A\",\"name\":\"big\",\"metadata\":{\"k\":\"$BIGMETA\"}}"
check_status "register oversized metadata -> 400" 400
check "nothing written by bad registrations" '[ "$(count_products "$A")" = "$before" ]'

# ---- POST /api/products/batch ----
AUTH="Bearer $KA" req POST /api/products/batch "{\"brandId\":\"$A\",\"products\":[{\"name\":\"B1\",\"sku\":\"b1\",\"category\":\"Handbags\"},{\"sku\":\"nameless\"},{\"name\":\"B1\",\"sku\":\"b1\"},{\"name\":\"Royal Oak\",\"sku\":\"RO-1\"},{\"name\":\"B2\",\"metadata\":{\"k\":1},\"manufacturingLocation\":\"Florence\"}]}"
check_status "batch -> 200" 200
check_json "batch: 2 registered, duplicates and nameless skipped" '.registered == 2 and (.products | length == 2) and .products[0].name == "B1" and .products[1].name == "B2"'
check_json "batch: product keys" '.products[0] | keys_unsorted == ["productId","name","verificationCode","hash"]'
BP=$(jb .products[1].productId); BCODE=$(jb .products[1].verificationCode)
req GET "/api/brands?id=$A"
check_json "brand A productCount = 4" '.productCount == 4'
NOAUTH=1 req GET "/api/products/verify?code=$BCODE&metadata=true"
check_json "batch product verifies" '.authentic == true and .product.name == "B2" and .events[0].data == {"registeredBy":"'$A'","batch":true} and .events[0].location == "Florence"'
check_json "batch product has no imageUrl (null)" '.product.imageUrl == null'
AUTH="Bearer $KA" req POST /api/products/batch "{\"brandId\":\"$A\",\"products\":[]}"
check_json "batch empty -> message" '.error == "brandId and products array are required"'
MANY=$(printf '{"name":"m%d"},' $(seq 1 51)); MANY="[${MANY%,}]"
AUTH="Bearer $KA" req POST /api/products/batch "{\"brandId\":\"$A\",\"products\":$MANY}"
check_status "batch of 51 -> 400" 400
check_json "batch of 51 message" '.error == "Maximum 50 products per batch"'
AUTH="Bearer $KB" req POST /api/products/batch "{\"brandId\":\"$A\",\"products\":[{\"name\":\"x\"}]}"
check_status "batch for another brand -> 403" 403
req POST /api/products/batch '{"brandId":"nonexistent-brand-id","products":[{"name":"x"}]}'
check_status "batch unknown brand -> 404" 404
AUTH="Bearer $KA" req POST /api/products/batch "{\"brandId\":\"$A\",\"products\":[{\"name\":[1]}]}"
check_status "batch item wrong type -> 400" 400
check "batch errors wrote nothing" '[ "$(count_products "$A")" = 4 ]'

# ---- GET /api/products/list ----
AUTH="Bearer $KA" req GET "/api/products/list?brandId=$A"
check_status "list -> 200" 200
check_json "list: 4 products" '.count == 4 and (.products | length == 4)'
check_json "list: item keys" '.products[0] | keys_unsorted == ["productId","name","sku","category","verificationCode","hash","status","scanCount","createdAt"]'
check_json "list: newest first" '[.products[].createdAt] == ([.products[].createdAt] | sort | reverse)'
AUTH="Bearer $KA" req GET "/api/products/list?brandId=$A&limit=1"
check_json "list limit=1" '.count == 1'
AUTH="Bearer $KA" req GET "/api/products/list?brandId=$A&limit=abc"
check_json "list limit=abc -> default" '.count == 4'
AUTH="Bearer $KA" req GET "/api/products/list"
check_status "list without brandId -> 400" 400
check_json "list message" '.error == "brandId is required"'
AUTH="Bearer $KB" req GET "/api/products/list?brandId=$A"
check_status "list another brand -> 403" 403
NOAUTH=1 req GET "/api/products/list?brandId=$A"
check_status "list without key -> 401" 401

# ---- GET /api/products/search ----
NOAUTH=1 req GET "/api/products/search?code=$CODE"
check_json "search by code (public)" '.found == true and .product.productId == "'$P'" and (.product | keys_unsorted == ["productId","name","brandName","sku","category","status","verificationCode","hash","createdAt","scanCount"])'
NOAUTH=1 req GET "/api/products/search?productId=$P2"
check_json "search by productId (public)" '.found == true and .product.sku == "RO-2"'
NOAUTH=1 req GET "/api/products/search?code=NOPE_NOPE_NO"
check_status "search unknown code -> 404" 404
check_json "search unknown code body" '. == {"found":false,"error":"Code not found"}'
NOAUTH=1 req GET "/api/products/search?productId=$LONGID"
check_json "search unknown product body" '. == {"found":false,"error":"Product not found"}'
NOAUTH=1 req GET "/api/products/search"
check_json "search without parameter" '.error == "Provide code, productId, or brandId"'
NOAUTH=1 req GET "/api/products/search?brandId=$A"
check_status "search by brand without key -> 401" 401
AUTH="Bearer $KB" req GET "/api/products/search?brandId=$A"
check_status "search another brand -> 403" 403
AUTH="Bearer $KA" req GET "/api/products/search?brandId=$A"
check_json "search by brand" '.found == true and .count == 4 and (.products[0] | keys_unsorted == ["productId","name","sku","category","status","verificationCode","createdAt","scanCount"])'

# ---- verify: counted scans and warnings ----
NOAUTH=1 req GET "/api/products/verify?code=$CODE"
check_json "verify counts the scan (post-increment, D27)" '.scanCount == 1 and .authentic == true'
NOAUTH=1 req GET "/api/products/verify?code=$CODE&metadata=true"
check_json "metadata fetch sees the count, adds none" '.scanCount == 1'
for i in $(seq 2 9); do NOAUTH=1 req GET "/api/products/verify?code=$CODE"; done
check_json "9 scans: no burst warning" '.scanCount == 9 and (.warnings | map(select(startswith("Unusual"))) | length == 0)'
NOAUTH=1 req GET "/api/products/verify?code=$CODE"
check_json "10th scan in an hour: burst warning" '.scanCount == 10 and (.warnings | index("Unusual scan volume: 10 scans in the last hour") != null)'
for i in $(seq 11 20); do NOAUTH=1 req GET "/api/products/verify?code=$CODE"; done
check_json "20 scans: no velocity warning" '.scanCount == 20 and (.warnings | map(select(startswith("Abnormal"))) | length == 0)'
NOAUTH=1 req GET "/api/products/verify?code=$CODE"
check_json "21st scan: velocity warning" '.scanCount == 21 and (.warnings | index("Abnormal scan velocity: 21 total scans (21.0/day avg). A single authentic product typically has fewer scans. This may indicate cloned tags.") != null)'
req GET "/api/brands?id=$A"
check_json "brand scanCount = 21" '.scanCount == 21'
AUTH="Bearer $KA" req GET "/api/products/list?brandId=$A"
check_json "list shows the product's scanCount" "(.products[] | select(.productId == \"$P\") | .scanCount) == 21"
# geographic: 3 known countries in 24 h (Unknown does not count)
for c in US DE; do NOAUTH=1 req GET "/api/products/verify?code=$CODE2" "" -H "CF-IPCountry: $c"; done
check_json "2 countries: no geo warning" '.warnings | map(select(startswith("Product scanned from"))) | length == 0'
NOAUTH=1 req GET "/api/products/verify?code=$CODE2" "" -H "CF-IPCountry: XX"
check_json "unknown country does not count" '.warnings | map(select(startswith("Product scanned from"))) | length == 0'
NOAUTH=1 req GET "/api/products/verify?code=$CODE2" "" -H "CF-IPCountry: FR"
check_json "3rd country: geo warning" '.warnings | index("Product scanned from 3 different countries in 24h") != null'
NOAUTH=1 req GET "/api/products/verify"
check_json "verify without parameters" '.error == "code or productId is required"'
NOAUTH=1 req GET "/api/products/verify?productId=../../etc/passwd"
check_status "verify traversal id -> 404" 404
NOAUTH=1 req GET "/api/products/verify?code=%00abc"
check "verify NUL in code -> 400/404" '[ "$STATUS" = 400 ] || [ "$STATUS" = 404 ]'

# ---- events ----
NOAUTH=1 req GET "/api/products/events?productId=$P"
check_json "events: genesis only, valid" '.count == 1 and .chainValid == true and (.events[0] | keys_unsorted == ["type","actor","location","timestamp","data","hash","previousHash"])'
G1=$(jb .events[0].hash)
AUTH="Bearer $KA" req POST /api/products/events "{\"productId\":\"$P\",\"type\":\"shipped\",\"actor\":\"DHL Express\",\"location\":\"Geneva\",\"coordinates\":{\"lat\":46.2,\"lng\":6.1},\"data\":{\"tracking\":\"X1\",\"n\":2}}"
check_status "append event -> 200" 200
check_json "append: keys" 'keys_unsorted == ["hash","previousHash","timestamp","type"]'
check_json "append: links to genesis" ".previousHash == \"$G1\" and .type == \"shipped\""
ET=$(jb .timestamp); EH=$(jb .hash)
ecanon="{\"productId\":\"$P\",\"type\":\"shipped\",\"actor\":\"DHL Express\",\"timestamp\":\"$ET\",\"data\":{\"tracking\":\"X1\",\"n\":2},\"previousHash\":\"$G1\"}"
check "append: event hash recomputed" '[ "$(sha256 "$ecanon")" = "$EH" ]'
NOAUTH=1 req GET "/api/products/events?productId=$P"
check_json "events: 2, valid, data stored" '.count == 2 and .chainValid == true and .events[1].data == {"tracking":"X1","n":2} and .events[1].location == "Geneva"'
check "events chain recomputed with openssl" '[ "$(recheck_events "$P")" = ok ]'
AUTH="Bearer $KA" req POST /api/products/events "{\"productId\":\"$P\",\"type\":\"teleported\",\"actor\":\"x\"}"
check_json "invalid event type" '.error == "Invalid event type"'
AUTH="Bearer $KA" req POST /api/products/events "{\"productId\":\"$P\",\"type\":\"custom\",\"actor\":\"x\",\"coordinates\":{\"lat\":\"1\",\"lng\":2}}"
check_status "bad coordinates -> 400" 400
AUTH="Bearer $KA" req POST /api/products/events "{\"productId\":\"$P\",\"type\":\"custom\",\"actor\":\"x\",\"data\":[1]}"
check_json "data array -> 400" '.error == "data must be an object"'
AUTH="Bearer $KA" req POST /api/products/events "{\"productId\":\"$P\",\"type\":\"custom\",\"actor\":\"x\",\"data\":{\"n\":-1e400}}"
check_status "data with a huge number -> 400" 400
AUTH="Bearer $KA" req POST /api/products/events "{\"productId\":\"$P\",\"type\":\"custom\"}"
check_json "missing actor" '.error == "productId, type, and actor are required"'
AUTH="Bearer $KA" req POST /api/products/events '{"productId":"nonexistent-product-id-xyz","type":"custom","actor":"x"}'
check_status "event on unknown product -> 404" 404
AUTH="Bearer $KB" req POST /api/products/events "{\"productId\":\"$P\",\"type\":\"custom\",\"actor\":\"x\"}"
check_status "event on another brand's product -> 403" 403
NOAUTH=1 req POST /api/products/events "{\"productId\":\"$P\",\"type\":\"custom\",\"actor\":\"x\"}"
check_status "event without key -> 401" 401
check "bad events wrote nothing" '[ "$(events_count "$P")" = 2 ]'
NOAUTH=1 req GET "/api/products/events?productId=nonexistent-product-id-xyz"
check_json "events of unknown product: empty, valid" '. == {"events":[],"count":0,"chainValid":true}'
NOAUTH=1 req GET "/api/products/events"
check_json "events without productId" '.error == "productId is required"'

# ---- history ----
AUTH="Bearer $KA" req POST /api/products/history "{\"productIds\":[\"$P\",\"$P2\"],\"type\":\"inspected\",\"actor\":\"QA Team\",\"location\":\"Newark\"}"
check_status "history -> 200" 200
check_json "history: processed 2" ".processed == 2 and .events[0].productId == \"$P\" and .events[1].productId == \"$P2\" and (.events[0].hash | test(\"$HEX_RE\"))"
NOAUTH=1 req GET "/api/products/events?productId=$P"
check_json "history event appended with bulk data" '.count == 3 and .events[2].data == {"bulk":true} and .events[2].type == "inspected" and .chainValid == true'
AUTH="Bearer $KA" req POST /api/products/history "{\"productIds\":[\"$P\",\"nonexistent-product-id-xyz\"],\"type\":\"inspected\",\"actor\":\"QA\"}"
check_status "history with an unknown id -> 404" 404
AUTH="Bearer $KA" req POST /api/products/history "{\"productIds\":[\"$P\",\"$PB\"],\"type\":\"inspected\",\"actor\":\"QA\"}"
check_status "history with another brand's product -> 403" 403
check "rejected history wrote nothing" '[ "$(events_count "$P")" = 3 ]'
AUTH="Bearer $KA" req POST /api/products/history "{\"productIds\":[\"$P\"],\"actor\":\"QA\"}"
check_json "history missing type" '.error == "type and actor required"'
AUTH="Bearer $KA" req POST /api/products/history '{"productIds":"abc","type":"sold","actor":"x"}'
check_json "history productIds not an array" '.error == "productIds array required"'

# ---- transfer ----
AUTH="Bearer $KA" req POST /api/products/transfer "{\"productId\":\"$P\",\"newOwner\":\"Alice\",\"location\":\"NYC\"}"
check_status "transfer -> 200" 200
check_json "transfer: keys" 'keys_unsorted == ["success","hash","previousHash","timestamp","newOwner"] and .success == true and .newOwner == "Alice"'
AUTH="Bearer $KA" req POST /api/products/transfer "{\"productId\":\"$P\",\"newOwner\":\"Bob\",\"reason\":\"resale\"}"
check_status "second transfer -> 200" 200
NOAUTH=1 req GET "/api/products/events?productId=$P"
check_json "first transfer: previousOwner = brand" '.events[3].data == {"reason":"ownership_transfer","previousOwner":"Luxe Test"} and .events[3].actor == "Alice"'
check_json "second transfer: previousOwner = Alice (D41)" '.events[4].data == {"reason":"resale","previousOwner":"Alice"}'
check_json "chain valid after transfers" '.chainValid == true and .count == 5'
NOAUTH=1 req GET "/api/products/search?productId=$P"
check_json "status transferred" '.product.status == "transferred"'
AUTH="Bearer $KB" req POST /api/products/transfer "{\"productId\":\"$P\",\"newOwner\":\"Eve\"}"
check_status "transfer another brand's product -> 403" 403
AUTH="Bearer $KA" req POST /api/products/transfer "{\"productId\":\"$P\"}"
check_json "transfer missing newOwner" '.error == "productId and newOwner are required"'

# ---- recall ----
AUTH="Bearer $KA" req POST /api/products/recall "{\"productId\":\"$P2\",\"reason\":\"defect\",\"issuedBy\":\"QA\"}"
check_status "recall -> 200" 200
check_json "recall: body" 'keys_unsorted == ["success","hash","timestamp","status"] and .success == true and .status == "recalled"'
NOAUTH=1 req GET "/api/products/events?productId=$P2"
check_json "recall event: actor QA, reason, no location" '.events[-1].type == "recalled" and .events[-1].actor == "QA" and .events[-1].data == {"reason":"defect"} and .events[-1].location == null and .chainValid == true'
NOAUTH=1 req GET "/api/products/verify?productId=$P2&metadata=true"
check_json "recalled status, still authentic" '.product.status == "recalled" and .authentic == true'
req GET "/api/brands?id=$A"
check_json "threatCount = 1 after recall" '.threatCount == 1'
AUTH="Bearer $KA" req GET "/api/threats?brandId=$A"
check_json "recall alert listed" '[.. | objects | select(.type? == "product_recall" and .severity? == "critical" and .details? == "Product \"Royal Oak\" recalled: defect")] | length == 1'
AUTH="Bearer $KA" req POST /api/products/recall "{\"productId\":\"$P2\",\"reason\":\"again\"}"
check_json "recall twice" '.error == "Product already recalled"'
AUTH="Bearer $KA" req POST /api/products/transfer "{\"productId\":\"$P2\",\"newOwner\":\"X\"}"
check_json "transfer recalled" '.error == "Cannot transfer a recalled product"'
AUTH="Bearer $KA" req POST /api/products/recall "{\"productId\":\"$P2\"}"
check_json "recall missing reason" '.error == "productId and reason are required"'
AUTH="Bearer $KB" req POST /api/products/recall "{\"productId\":\"$P\",\"reason\":\"x\"}"
check_status "recall another brand's product -> 403" 403
AUTH="Bearer $KA" req POST /api/products/events "{\"productId\":\"$P2\",\"type\":\"custom\",\"actor\":\"x\"}"
check_status "events still appendable to a recalled product" 200

# ---- claim ----
NOAUTH=1 req POST /api/products/claim "{\"productId\":\"$P\",\"consumerName\":\"Alice\",\"email\":\"alice@example.com\"}" -A UA-1
check_status "claim -> 200" 200
check_json "claim body" '.success == true and .message == "Product claimed. Future scans from other devices will show a warning." and (.claimedAt | test("'$ISO_RE'"))'
NOAUTH=1 req GET "/api/products/claim?productId=$P"
check_json "claim GET public: name hidden (D04)" '.claimed == true and .consumerName == null and (.claimedAt | test("'$ISO_RE'"))'
AUTH="Bearer $KA" req GET "/api/products/claim?productId=$P"
check_json "claim GET own brand: name shown" '.consumerName == "Alice"'
AUTH="Bearer $KB" req GET "/api/products/claim?productId=$P"
check_json "claim GET other brand: name hidden" '.consumerName == null'
NOAUTH=1 req GET "/api/products/claim?productId=$P2"
check_json "claim GET unclaimed" '. == {"claimed":false}'
NOAUTH=1 req GET "/api/products/verify?productId=$P" "" -A UA-1
check_json "verify by the claimant" '.claim.claimed == true and .claim.isClaimant == true and .claim.claimedBy == null and (.warnings | map(select(startswith("This product has been registered"))) | length == 0)'
NOAUTH=1 req GET "/api/products/verify?productId=$P" "" -A UA-2
check_json "verify by another device: warning" '.claim.isClaimant == false and (.warnings | index("This product has been registered to another consumer. If you purchased this product new, it may be a counterfeit with a cloned tag.") != null)'
AUTH="Bearer $KA" req GET "/api/products/verify?productId=$P&metadata=true" "" -A UA-2
check_json "verify by the brand: claimedBy shown" '.claim.claimedBy == "Alice"'
NOAUTH=1 req POST /api/products/claim "{\"productId\":\"$P\"}" -A UA-2
check_status "claim again -> 409" 409
check_json "claim again body" '.error == "Product already claimed" and .claimed == true and (.claimedAt | test("'$ISO_RE'"))'
NOAUTH=1 req POST /api/products/claim '{"productId":"nonexistent-product-id-xyz"}'
check_status "claim unknown product -> 404" 404
NOAUTH=1 req POST /api/products/claim '{}'
check_json "claim without productId" '.error == "productId required"'

# claim race (D48): exactly one winner
AUTH="Bearer $KA" req POST /api/products/register "{\"brandId\":\"$A\",\"name\":\"Race\"}"
PR=$(jb .productId)
racers=()
for i in 1 2 3 4; do
    curl -s -o /dev/null -w '%{http_code}\n' -A "racer-$i" -H 'Content-Type: application/json' \
        --max-time 20 --data-binary "{\"productId\":\"$PR\",\"consumerName\":\"R$i\"}" \
        "$GP_URL/api/products/claim" >"$GP_DIR/race$i" &
    racers+=($!)
done
wait "${racers[@]}"
codes=$(cat "$GP_DIR"/race* | sort | tr '\n' ' ')
check "claim race: one 200, three 409 ($codes)" '[ "$codes" = "200 409 409 409 " ]'

# ---- dispute ----
NOAUTH=1 req POST /api/products/dispute "{\"productId\":\"$P\",\"consumerName\":\"Alice\"}" -A UA-1
check_status "dispute by the claimant -> 400" 400
check_json "dispute by the claimant message (D49)" '.error == "You are the original claimant"'
NOAUTH=1 req POST /api/products/dispute "{\"productId\":\"$P\",\"consumerName\":\"Bob\",\"orderNumber\":\"A-1\",\"notes\":\"bought new\"}" -A UA-2
check_status "dispute -> 200" 200
check_json "dispute body" '.success == true and .status == "open" and .message == "Dispute submitted. The brand has been notified and will investigate. You may be contacted to verify your purchase." and (.disputeId | test("^[0-9T:.-]+Z#[0-9a-f]{8}$"))'
D1=$(jb .disputeId)
NOAUTH=1 req POST /api/products/dispute "{\"productId\":\"$P\"}" -A UA-3
check_json "second dispute: unique id (D15)" ".disputeId != \"$D1\""
AUTH="Bearer $KA" req GET "/api/products/dispute?productId=$P"
check_status "dispute GET -> 200" 200
check_json "dispute GET: 2 disputes, newest first" '.count == 2 and .disputes[0].consumerName == "Anonymous" and .disputes[1].consumerName == "Bob" and .disputes[1].orderNumber == "A-1" and .disputes[1].notes == "bought new" and .disputes[1].status == "open" and .disputes[1].originalClaim.claimedBy == "Alice"'
check_json "dispute GET: keys" '.disputes[0] | keys_unsorted == ["consumerName","orderNumber","status","createdAt","originalClaim","notes"]'
NOAUTH=1 req GET "/api/products/dispute?productId=$P"
check_status "dispute GET without key -> 401" 401
AUTH="Bearer $KB" req GET "/api/products/dispute?productId=$P"
check_status "dispute GET another brand -> 403" 403
req GET "/api/brands?id=$A"
check_json "threatCount = 3 after 2 disputes" '.threatCount == 3'
AUTH="Bearer $KA" req GET "/api/threats?brandId=$A"
check_json "dispute alert details" '[.. | objects | select(.type? == "ownership_dispute" and .severity? == "critical" and ((.details? // "") | test("^Ownership dispute on \"Royal Oak\". Original claim: Alice \\(.*\\). Disputant: Bob. Order: A-1. One of these is likely a counterfeit with a cloned tag.$")))] | length == 1'
NOAUTH=1 req POST /api/products/dispute "{\"productId\":\"$P2\"}" -A UA-2
check_json "dispute without a claim" '.error == "No existing claim to dispute"'
NOAUTH=1 req POST /api/products/dispute '{"productId":5}'
check_json "dispute wrong type" '.error == "productId must be a string"'

# ---- verify keeps what it derives from a product between requests (api/verify_memo.c) ----
# Every change to the product must show in the very next verify: an event
# written through the API, and a record changed behind the server's back by
# another process (the sqlite3 CLI on the live file).
MEMO_VERIFY() { NOAUTH=1 req GET "/api/products/verify?productId=$P&metadata=true"; }
MEMO_VERIFY
MEMO_N=$(jb '.events | length'); echo "  # memo: $MEMO_N events"
MEMO_VERIFY
check_json "memo: repeated verify is unchanged" "(.events | length) == $MEMO_N and .authentic == true"
AUTH="Bearer $KA" req POST /api/products/events "{\"productId\":\"$P\",\"type\":\"inspected\",\"actor\":\"Memo Check\"}"
check_status "memo: event added" 200
MEMO_VERIFY
check_json "memo: the new event shows in the next verify" "(.events | length) == $((MEMO_N + 1)) and .events[-1].actor == \"Memo Check\" and .certificate.chainIntegrity == true"
MEMO_SQL() { sqlite3 -cmd ".timeout 5000" "$GP_DB" "$@"; }
MEMO_SQL "CREATE TABLE memo_keep AS SELECT body FROM items WHERE pk = 'PRODUCT#$P' AND sk = 'META';
          UPDATE items SET body = json_set(body, '\$.name', 'Tampered Name') WHERE pk = 'PRODUCT#$P' AND sk = 'META'"
MEMO_VERIFY
check_json "memo: another process's change shows (tampered record not authentic)" '.authentic == false and .product.name == "Tampered Name" and (.warnings | index("Product record hash mismatch \u2014 possible tampering") != null)'
MEMO_SQL "UPDATE items SET body = (SELECT body FROM memo_keep) WHERE pk = 'PRODUCT#$P' AND sk = 'META'; DROP TABLE memo_keep"
MEMO_VERIFY
check_json "memo: and so does the repair" '.authentic == true and .product.name != "Tampered Name"'
# final integrity of everything touched
for id in "$P" "$P2" "$BP" "$PR"; do
    NOAUTH=1 req GET "/api/products/verify?productId=$id&metadata=true"
    check_json "final: $id authentic, chain valid" '.authentic == true and .certificate.chainIntegrity == true'
done

gp_stop
gp_finish
