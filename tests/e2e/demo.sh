#!/usr/bin/env bash
# tests/e2e/demo.sh - the demo data set (API.md §13): with the dev secret
# every product verifies as authentic with the §13.4 hash, signature and
# chain head; chains are linked from GENESIS; hashes recomputed here with
# openssl; unknown codes stay unknown; seeding twice changes nothing; with
# another secret the set is still authentic (signatures differ).
set -u
. "$(dirname "$0")/lib.bash"

GENESIS=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
BRAND=5019622c-9860-4b83-a5c6-adb82ebd0412
WATCH=e084595c97320cfcc85309943f345760
HEX_RE='^[0-9a-f]{64}$'

# code | name part | events | hash | signature | chain head
TABLE="wfPHybaFV3_a|Royal Oak|7|ec4c737a67181b2cb7056ea7fac0bdd162e21c0aec5f18acc27ad729d80408f0|9f51d44b3f0947dff47d34eeaa86d7c3111faf5a96ada91fc9d781687759f1cb|4a43a2439923b9638f4d0de7e787c52280b0f980e74c7ec266ea39843c4f378d
pOszdB-1n6IC|Classique|6|bfe9d70eb191762bf2a5cd549ef6f839863831ee175f7757993654f17bf38a41|00b83a4daa8a6213f561f2366ef1a9667f55bce54aacf0adb28c0000233c6dc8|37e40ccf8a308c0ef55dc50cbffba1b277553b6592ee676cc47ad059f997ab09
27dEHQymVRMl|Oud Royale|4|808c5e2813dff6f2d9a3e3d46287ee8a2dd793ff60aed1b8ad42d0a7c80b0ab3|2409c2e9371bf432dc3c08a897d5f7b7f608482b1f4c3735ed8f0bc7cfadfdd4|db17fd2e80588f3bde6a115cfe9376df6bfaa0798bf2be80cffab8e743fa5c7a
FshGQLRNsr4p|Nautilus|6|4cbf769ac69ae33cacc9c453bee033eb2e4ff39471e4d124e2a0f8638cb52197|f8d0dfb5f122a5c75a2e20ffeac342222de42c3ae97b91a17d812547c82cb070|f0cbb35955a878574e8e691138c06ffea37c32ca19262a382449902be296bc7b
IebJZgMHdD-h|Aviator|4|13fbd7c94c1edb78129a908e1e0de3464e3fac5ed78bfb6bf28f82e845283354|609e7cfe49a706b973800c6f38044e844f5d5834fe4b3ce60c5ca339ac6b7f45|92a1bf64f3bdfda74ddf78e310018f0adecdf5f97dd760bb21160368a315bb38"

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

# Recomputes every event hash of $BODY (verify response) with openssl and
# checks the linkage; prints "ok" or the first problem.
recheck_chain() {
    local prev="$GENESIS" stored_prev stored canon
    while IFS=$'\t' read -r stored_prev stored canon; do
        [ "$stored_prev" = "$prev" ] || { echo "link"; return; }
        [ "$(sha256 "$canon")" = "$stored" ] || { echo "hash"; return; }
        prev=$stored
    done < <(printf '%s' "$BODY" | jq -r '.events[] | [.previousHash, .hash, ({productId,type,actor,timestamp,data,previousHash} | tojson)] | @tsv')
    echo ok
}

SIGNING_SECRET=genuproof-dev-secret gp_start --demo-data || gp_finish

while IFS='|' read -r code part nev hash sig head; do
    NOAUTH=1 req GET "/api/products/verify?code=$code&metadata=true"
    check_status "verify $code -> 200" 200
    check_all \
        "$code authentic, signature and chain valid" \
        '.authentic == true and .certificate.signatureValid == true and .certificate.chainIntegrity == true' \
        "$code name and brand" ".product.name | contains(\"$part\")" \
        "$code brandName" '.product.brandName == "Luxe Watches" and .product.brandId == "'$BRAND'"' \
        "$code hash = §13.4" ".product.hash == \"$hash\" and .certificate.hash == \"$hash\"" \
        "$code signature = §13.4" ".product.signature == \"$sig\"" \
        "$code $nev events, head = §13.4" ".events | length == $nev and .[-1].hash == \"$head\"" \
        "$code first event manufactured from GENESIS" \
        ".events[0].type == \"manufactured\" and .events[0].previousHash == \"$GENESIS\" and .events[0].actor == \"Luxe Watches\" and .events[0].data == {\"registeredBy\":\"$BRAND\"}" \
        "$code every hash is 64 hex" "[.events[] | .hash, .previousHash] | all(test(\"$HEX_RE\"))"
    check "$code chain recomputed with sha256sum" '[ "$(recheck_chain)" = ok ]'
    # product hash (§3.3) and signature (§3.4) recomputed here
    canon=$(printf '%s' "$BODY" | jq -cj '.product | {productId,brandId,name,sku:(.sku // ""),metadata:{},createdAt}')
    check "$code product hash recomputed" '[ "$(sha256 "$canon")" = "$hash" ]'
    check "$code signature recomputed" '[ "$(hmac genuproof-dev-secret "$hash")" = "$sig" ]'
done <<<"$TABLE"

NOAUTH=1 req GET "/api/products/verify?code=wfPHybaFV3_a"
check_json "watch product id pinned" ".product.productId == \"$WATCH\" and .product.sku == \"LW-RO-42\" and .product.category == \"Watches\""
check_json "watch createdAt" '.product.createdAt == "2026-06-20T15:00:00.000Z" and .product.status == "active"'
check_json "seeded scans counted (3 + this one)" '.scanCount == 4'

for bad in COUNTERFEIT_CLONED_TAG FAKE_PRODUCT_123 FAKE_CODE_XYZ INVALID_XYZ x; do
    NOAUTH=1 req GET "/api/products/verify?code=$bad"
    check "unknown code $bad -> 404 {authentic:false}" \
        '[ "$STATUS" = 404 ] && [ "$BODY" = "{\"authentic\":false,\"error\":\"Invalid verification code\"}" ]'
    NOAUTH=1 req GET "/api/products/search?code=$bad"
    check "search $bad not found" '[ "$BODY" = "{\"found\":false,\"error\":\"Code not found\"}" ]'
done
NOAUTH=1 req GET "/api/products/verify?productId=nonexistent-product-id-xyz"
check_status "unknown product id -> 404" 404
check_json "unknown product id body" '.authentic == false and .error == "Product not found"'
NOAUTH=1 req GET "/api/products/search?code=wfPHybaFV3_a"
check_json "search by code finds the watch" '.found == true and .product.productId == "'$WATCH'"'

NOAUTH=1 req GET "/api/products/events?productId=$WATCH"
check_json "events of the watch: 7, chainValid" '.count == 7 and .chainValid == true and .events[0].type == "manufactured"'

req GET "/api/products/list?brandId=$BRAND"
check_status "list demo products -> 200" 200
check_json "list: 5 products with ids and codes" '.count == 5 and ([.products[] | select(.productId and .verificationCode)] | length == 5)'
req GET "/api/brands?id=$BRAND"
check_json "brand profile present, productCount 5" '.name == "Luxe Watches" and .domain == "luxewatches.com" and .productCount == 5'

# Seeding again on the same database changes nothing.
SIGNING_SECRET=genuproof-dev-secret gp_restart --demo-data || gp_finish
req GET "/api/products/list?brandId=$BRAND"
check_json "after re-seed: still 5 products" '.count == 5'
NOAUTH=1 req GET "/api/products/events?productId=$WATCH"
check_json "after re-seed: still 7 events, valid" '.count == 7 and .chainValid == true'
req GET "/api/brands?id=$BRAND"
check_json "after re-seed: productCount still 5" '.productCount == 5'
NOAUTH=1 req GET "/api/products/verify?code=wfPHybaFV3_a&metadata=true"
check_json "after re-seed: scanCount unchanged (4)" '.scanCount == 4 and .authentic == true'

# A fresh database with another secret: authentic, other signature.
gp_stop
rm -f "$GP_DB" "$GP_DB"-*
SIGNING_SECRET=another-demo-secret gp_start --demo-data || gp_finish
NOAUTH=1 req GET "/api/products/verify?code=wfPHybaFV3_a"
check_json "other secret: still authentic" '.authentic == true and .certificate.signatureValid == true'
check_json "other secret: same hash, other signature" \
    '.product.hash == "ec4c737a67181b2cb7056ea7fac0bdd162e21c0aec5f18acc27ad729d80408f0" and .product.signature != "9f51d44b3f0947dff47d34eeaa86d7c3111faf5a96ada91fc9d781687759f1cb"'
check "other secret: signature recomputed" '[ "$(hmac another-demo-secret "$(jb .product.hash)")" = "$(jb .product.signature)" ]'

gp_stop
gp_finish
