#!/usr/bin/env bash
# tests/e2e/exports.sh - certificate, QR, DPP export and OG card over HTTP
# (API.md §9.20-§9.22, §9.45) against the demo data.
#
# The server runs with a non-default --base-url (with a trailing slash)
# so every URL in the answers and in the QR codes must use it ([D43]).
# QR PNGs are decoded with zbarimg (zbar-tools); the SVG's path is turned
# back into a bitmap (PBM) and decoded with zbarimg too.  Tampering is
# done with the sqlite3 CLI in the live database (WAL): the certificate
# and the passport must then report false instead of copying stored
# values.
set -u
. "$(dirname "$0")/lib.bash"

BASE="https://verify.example.test/gp"
WATCH_CODE="wfPHybaFV3_a"
WATCH_ID="e084595c97320cfcc85309943f345760"
TOTE_CODE="pOszdB-1n6IC"
OUD_CODE="27dEHQymVRMl"
AVIATOR_CODE="IebJZgMHdD-h"
SQL() { sqlite3 -cmd ".timeout 5000" "$GP_DB" "$@"; }
hdr() { grep -i "^$1:" "$GP_DIR/h" | head -n 1 | cut -d: -f2- | sed 's/^ *//' | tr -d '\r'; }
# zbar FILE: the decoded text of a QR code image ("" when none)
zbar() { zbarimg --quiet --raw "$1" 2>/dev/null | head -n 1; }
# svg2pbm SVG PBM: the black path of our SVG rendered at 8 px per module
svg2pbm() {
    awk -v out="$2" '
        {
            if (!match($0, /viewBox="0 0 [0-9]+ [0-9]+"/)) { exit 1 }
            split(substr($0, RSTART, RLENGTH), vb, /[ "]/); n = vb[5] + 0
            p = $0; sub(/.*<path fill="#000000" d="/, "", p); sub(/".*/, "", p)
            cnt = split(p, segs, "z")
            for (i = 1; i <= cnt; i++) {
                if (segs[i] == "") continue
                if (!match(segs[i], /^M[0-9]+ [0-9]+h[0-9]+v1h-[0-9]+$/)) { bad = 1; continue }
                s = segs[i]; gsub(/[Mhv-]/, " ", s); split(s, f, " ")
                for (k = 0; k < f[3]; k++) dark[f[2] "," f[1] + k] = 1
                runs++
            }
        }
        END {
            if (bad || !runs || !n) exit 1
            sc = 8; print "P1" > out; print n * sc, n * sc > out
            for (y = 0; y < n * sc; y++) {
                line = ""
                for (x = 0; x < n * sc; x++) line = line (((int(y / sc) "," int(x / sc)) in dark) ? "1 " : "0 ")
                print line > out
            }
        }' "$1"
}
# png_size FILE: "WIDTHxHEIGHT" from the IHDR chunk
png_size() {
    local w h
    w=$(od -An -tu1 -j16 -N4 "$1" | awk '{print ($1*16777216)+($2*65536)+($3*256)+$4}')
    h=$(od -An -tu1 -j20 -N4 "$1" | awk '{print ($1*16777216)+($2*65536)+($3*256)+$4}')
    echo "${w}x${h}"
}
is_png() { [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ]; }

gp_start --demo-data --no-detector --base-url "$BASE/" || gp_finish
export NOAUTH=1

# ------------------------------------------------------------ certificate
req GET "/api/products/verify?code=$WATCH_CODE&metadata=true"
SCANS_BEFORE=$(jb .scanCount)
WATCH_HASH=$(jb .product.hash)

req GET "/api/products/certificate?code=$WATCH_CODE"
check_status "certificate by code: 200" 200
check_json "certificate: constants" '.version == "1.0" and .issuer == "GenuProof Platform"
    and .cryptography.algorithm == "SHA-256" and .cryptography.signatureAlgorithm == "HMAC-SHA256"
    and .provenance.chainAlgorithm == "SHA-256-linked"'
check_json "certificate: exact keys" '(keys == ["cryptography","issuedAt","issuer","product","provenance","verification","version"])
    and (.product | keys == ["brand","category","id","name","registeredAt","sku","status"])
    and (.cryptography | keys == ["algorithm","hashValid","productHash","signature","signatureAlgorithm","signatureValid"])
    and (.provenance | keys == ["chainAlgorithm","chainValid","eventCount","events"])
    and (.verification | keys == ["authentic","totalScans","verificationCode","verifyUrl"])
    and all(.provenance.events[]; keys == ["actor","hash","location","previousHash","timestamp","type"])'
check_json "certificate: product fields" ".product.id == \"$WATCH_ID\" and .product.name == \"Royal Oak Chronograph 42mm\"
    and .product.brand == \"Luxe Watches\" and .product.status == \"active\"
    and (.product.registeredAt | test(\"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]{12}Z$\"))"
check_json "certificate: all checks true" '.cryptography.hashValid and .cryptography.signatureValid
    and .provenance.chainValid and .verification.authentic'
check_json "certificate: hash and signature" ".cryptography.productHash == \"$WATCH_HASH\"
    and (.cryptography.signature | test(\"^[0-9a-f]{64}$\"))"
check_json "certificate: 7 events, linked" '.provenance.eventCount == 7 and (.provenance.events | length) == 7
    and .provenance.events[0].type == "manufactured"
    and .provenance.events[0].previousHash == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    and ([range(1; 7) as $i | .provenance.events[$i].previousHash == .provenance.events[$i - 1].hash] | all)'
check_json "certificate: verifyUrl uses the base URL" ".verification.verifyUrl == \"$BASE/verify/$WATCH_CODE\"
    and .verification.verificationCode == \"$WATCH_CODE\" and (.verification.totalScans | type) == \"number\""
check "certificate: Content-Disposition" \
    '[ "$(hdr Content-Disposition)" = "attachment; filename=\"genuproof-certificate-$WATCH_CODE.json\"" ]'
check "certificate: JSON content type" '[[ "$(hdr Content-Type)" == application/json* ]]'
CERT_BY_CODE=$(printf '%s' "$BODY" | jq -c 'del(.issuedAt)')

req GET "/api/products/certificate?productId=$WATCH_ID"
check_status "certificate by productId: 200" 200
check "certificate by productId: same document" \
    '[ "$(printf "%s" "$BODY" | jq -c "del(.issuedAt)")" = "$CERT_BY_CODE" ]'
req GET "/api/products/certificate?code=$WATCH_CODE&productId=nonexistent-product-id-xyz"
check_json "certificate: code wins over productId" ".product.id == \"$WATCH_ID\""
req GET "/api/products/certificate?code=INVALID_XYZ"
check_status "certificate unknown code: 404" 404
check_json "certificate unknown code: message" '. == {"error":"Code not found"}'
req GET "/api/products/certificate"
check_status "certificate without parameters: 400" 400
check_json "certificate without parameters: message" '. == {"error":"code or productId required"}'
req GET "/api/products/certificate?productId=nonexistent-product-id-xyz"
check_status "certificate unknown productId: 404" 404
check_json "certificate unknown productId: message" '. == {"error":"Product not found"}'
req GET "/api/products/verify?code=$WATCH_CODE&metadata=true"
check "certificate records no scan" '[ "$(jb .scanCount)" = "$SCANS_BEFORE" ]'

# ------------------------------------------------------------ DPP export
req GET "/api/products/dpp-export?code=$WATCH_CODE"
check_status "dpp by code: 200" 200
check_json "dpp: key order" '[keys_unsorted[]] == ["@context","@type","dppVersion","dppStandard","identification",
    "product","manufacturer","supplyChain","verification","sustainability","metadata"]'
check_json "dpp: constants" '."@context" == "https://schema.org/" and ."@type" == "Product"
    and .dppVersion == "1.0" and .dppStandard == "ESPR-2024/1781"
    and .metadata == {"issuer":"GenuProof Platform","issuedAt":.metadata.issuedAt,"expiresAt":null,
                      "dataCarrier":"QR Code (ISO/IEC 18004)","accessLevel":"public"}
    and .sustainability == {"carbonFootprint":null,"recyclability":null,"materials":null,
                            "certifications":[],"repairInstructions":null}'
check_json "dpp: identification" ".identification == {\"gtin\":.identification.gtin,\"serialNumber\":\"$WATCH_ID\",
    \"verificationCode\":\"$WATCH_CODE\",\"batchId\":null}"
check_json "dpp: product and manufacturer" '.product.name == "Royal Oak Chronograph 42mm" and .product.brand == "Luxe Watches"
    and (.product | keys_unsorted == ["name","brand","category","description","manufacturingDate","status"])
    and .manufacturer.name == "Luxe Watches" and .manufacturer.brandId == "5019622c-9860-4b83-a5c6-adb82ebd0412"
    and .manufacturer.registeredAt == .product.manufacturingDate'
check_json "dpp: supply chain" '.supplyChain.eventCount == 7 and .supplyChain.chainIntegrity == true
    and ([.supplyChain.events[].sequence] == [1,2,3,4,5,6,7])
    and all(.supplyChain.events[]; keys_unsorted == ["sequence","type","actor","location","timestamp","hash","previousHash","source"])
    and all(.supplyChain.events[]; .source == "manual")'
check_json "dpp: verification URLs use the base URL" ".verification.verifyUrl == \"$BASE/verify/$WATCH_CODE\"
    and .verification.qrUrl == \"$BASE/api/products/qr?code=$WATCH_CODE\"
    and .verification.productHash == \"$WATCH_HASH\" and .verification.algorithm == \"SHA-256\"
    and .verification.signatureAlgorithm == \"HMAC-SHA256\""
check "dpp: Content-Disposition" '[ "$(hdr Content-Disposition)" = "attachment; filename=\"dpp-$WATCH_CODE.json\"" ]'
req GET "/api/products/dpp-export?productId=$WATCH_ID"
check_json "dpp by productId" ".identification.verificationCode == \"$WATCH_CODE\""
req GET "/api/products/dpp-export?code=INVALID_XYZ"
check_status "dpp unknown code: 404" 404
check_json "dpp unknown code: message" '. == {"error":"Code not found"}'
req GET "/api/products/dpp-export"
check_status "dpp without parameters: 400" 400
check_json "dpp without parameters: message" '. == {"error":"productId or code required"}'
req GET "/api/products/dpp-export?productId=nonexistent-product-id-xyz"
check_status "dpp unknown productId: 404" 404

# an ingest-style source shows through: append an event with data.source
req GET "/api/products/search?code=$OUD_CODE"
OUD_ID=$(jb .product.productId)
NOAUTH=0 req POST /api/products/events "{\"productId\":\"$OUD_ID\",\"type\":\"inspected\",\"actor\":\"Dubai Customs\",\"data\":{\"source\":\"warehouse_webhook\"}}"
check_status "append an event with a source" 200
req GET "/api/products/dpp-export?code=$OUD_CODE"
check_json "dpp: event source from data.source" '.supplyChain.eventCount == 5 and .supplyChain.events[4].source == "warehouse_webhook"
    and .supplyChain.events[4].sequence == 5 and .supplyChain.events[0].source == "manual" and .supplyChain.chainIntegrity'

# ------------------------------------------------------------ tampering
TOTE_ID=$(SQL "SELECT json_extract(body,'\$.productId') FROM items WHERE pk='VERIFY#$TOTE_CODE' AND sk='META'")
AVI_ID=$(SQL "SELECT json_extract(body,'\$.productId') FROM items WHERE pk='VERIFY#$AVIATOR_CODE' AND sk='META'")
SQL "UPDATE items SET body=json_set(body,'\$.name','Le Classique Tote - Fake') WHERE pk='PRODUCT#$TOTE_ID' AND sk='META'"
req GET "/api/products/certificate?code=$TOTE_CODE"
check_json "tampered product name: hashValid false, authentic false" '.cryptography.hashValid == false
    and .cryptography.signatureValid == true and .provenance.chainValid == true and .verification.authentic == false'
SQL "UPDATE items SET body=json_set(body,'\$.signature','$(printf '0%.0s' {1..64})') WHERE pk='PRODUCT#$WATCH_ID' AND sk='META'"
req GET "/api/products/certificate?code=$WATCH_CODE"
check_json "tampered signature: signatureValid false" '.cryptography.hashValid == true
    and .cryptography.signatureValid == false and .verification.authentic == false'
EV_SK=$(SQL "SELECT sk FROM items WHERE pk='PRODUCT#$AVI_ID' AND sk LIKE 'EVENT#%' ORDER BY sk LIMIT 1 OFFSET 2")
SQL "UPDATE items SET body=json_set(body,'\$.actor','Somebody Else') WHERE pk='PRODUCT#$AVI_ID' AND sk='$EV_SK'"
req GET "/api/products/certificate?code=$AVIATOR_CODE"
check_json "tampered event actor: chainValid false" '.cryptography.hashValid == true
    and .cryptography.signatureValid == true and .provenance.chainValid == false and .verification.authentic == false
    and .provenance.events[2].actor == "Somebody Else"'
req GET "/api/products/dpp-export?code=$AVIATOR_CODE"
check_json "tampered event actor: dpp chainIntegrity false" '.supplyChain.chainIntegrity == false'

# ------------------------------------------------------------ QR
curl -s -D "$GP_DIR/h" -o "$GP_DIR/qr.png" -w '%{http_code}' "$GP_URL/api/products/qr?code=$TOTE_CODE" >"$GP_DIR/st"
check "qr png: 200" '[ "$(cat "$GP_DIR/st")" = 200 ]'
check "qr png: image/png" '[ "$(hdr Content-Type)" = image/png ]'
check "qr png: cached for a year" '[ "$(hdr Cache-Control)" = "public, max-age=31536000, immutable" ]'
check "qr png: is a 400x400 PNG" 'is_png "$GP_DIR/qr.png" && [ "$(png_size "$GP_DIR/qr.png")" = 400x400 ]'
check "qr png: decodes to the verify URL" '[ "$(zbar "$GP_DIR/qr.png")" = "$BASE/verify/$TOTE_CODE" ]'

curl -s -o "$GP_DIR/qr2.png" "$GP_URL/api/products/qr?productId=$WATCH_ID"
check "qr by productId: decodes to /verify/<code>" '[ "$(zbar "$GP_DIR/qr2.png")" = "$BASE/verify/$WATCH_CODE" ]'
curl -s -o "$GP_DIR/qr3.png" "$GP_URL/api/products/qr?code=$WATCH_CODE&format=png"
check "qr format=png is a PNG" 'is_png "$GP_DIR/qr3.png" && cmp -s "$GP_DIR/qr2.png" "$GP_DIR/qr3.png"'

curl -s -D "$GP_DIR/h" -o "$GP_DIR/qr.svg" -w '%{http_code}' "$GP_URL/api/products/qr?code=$TOTE_CODE&format=svg" >"$GP_DIR/st"
check "qr svg: 200" '[ "$(cat "$GP_DIR/st")" = 200 ]'
check "qr svg: image/svg+xml" '[ "$(hdr Content-Type)" = image/svg+xml ]'
check "qr svg: no cache header" '[ -z "$(hdr Cache-Control)" ]'
check "qr svg: one svg element with viewBox" \
    '[ "$(grep -o "<svg " "$GP_DIR/qr.svg" | wc -l)" = 1 ] && grep -q "viewBox=\"0 0 [0-9]* [0-9]*\"" "$GP_DIR/qr.svg"'
# "$BASE/verify/$TOTE_CODE" has 49 bytes -> version 4 at level M (33
# modules) + a 2-module quiet zone on each side = 37
check "qr svg: viewBox = modules + margin" 'grep -q "viewBox=\"0 0 37 37\"" "$GP_DIR/qr.svg"'
check "qr svg: renders and decodes to the verify URL" \
    'svg2pbm "$GP_DIR/qr.svg" "$GP_DIR/qr.pbm" && [ "$(zbar "$GP_DIR/qr.pbm")" = "$BASE/verify/$TOTE_CODE" ]'

req GET "/api/products/qr?code=test&format=svg"
check_status "qr unknown code: 404" 404
check_json "qr unknown code: message" '. == {"error":"Product not found"}'
check "qr 404: not cacheable" '[ "$(hdr Cache-Control)" = no-store ]'
req GET "/api/products/qr?productId=nonexistent-product-id-xyz"
check_status "qr unknown productId: 404" 404
req GET "/api/products/qr"
check_status "qr without parameters: 400" 400
check_json "qr without parameters: message" '. == {"error":"code or productId is required"}'
req GET "/api/products/qr?code=a%2Fb%3Fc"
check_status "qr unknown odd code: 404" 404

# a pinned code with characters that need percent-encoding
NOAUTH=0 req POST /api/products/register '{"brandId":"5019622c-9860-4b83-a5c6-adb82ebd0412","name":"Odd Code Watch"}'
ODD_ID=$(jb .productId); ODD_CODE_OLD=$(jb .verificationCode)
check_status "register a product for the odd code" 200
SQL "BEGIN; UPDATE items SET pk='VERIFY#a b/c+d' WHERE pk='VERIFY#$ODD_CODE_OLD';
     UPDATE items SET body=json_set(body,'\$.verificationCode','a b/c+d') WHERE pk='PRODUCT#$ODD_ID' AND sk='META'; COMMIT;"
curl -s -o "$GP_DIR/odd.png" "$GP_URL/api/products/qr?code=a%20b%2Fc%2Bd"
check "qr: the code is percent-encoded" '[ "$(zbar "$GP_DIR/odd.png")" = "$BASE/verify/a%20b%2Fc%2Bd" ]'
curl -s -o "$GP_DIR/odd2.png" "$GP_URL/api/products/qr?productId=$ODD_ID"
check "qr by productId: percent-encoded too" '[ "$(zbar "$GP_DIR/odd2.png")" = "$BASE/verify/a%20b%2Fc%2Bd" ]'
req GET "/api/products/certificate?productId=$ODD_ID"
check_json "certificate: percent-encoded verifyUrl" ".verification.verifyUrl == \"$BASE/verify/a%20b%2Fc%2Bd\""
check "certificate: file name made safe" \
    '[ "$(hdr Content-Disposition)" = "attachment; filename=\"genuproof-certificate-a_b_c_d.json\"" ]'

# ------------------------------------------------------------ OG card
og() { curl -s -D "$GP_DIR/h" -o "$GP_DIR/og.png" -w '%{http_code}' "$GP_URL/api/og$1"; }
check "og default: 200" '[ "$(og "")" = 200 ]'
check "og: image/png" '[ "$(hdr Content-Type)" = image/png ]'
check "og: cache header" '[ "$(hdr Cache-Control)" = "public, immutable, no-transform, max-age=31536000" ]'
check "og default: 1200x630 PNG" 'is_png "$GP_DIR/og.png" && [ "$(png_size "$GP_DIR/og.png")" = 1200x630 ]'
cp "$GP_DIR/og.png" "$GP_DIR/og-default.png"
check "og authentic: 200" '[ "$(og "?brand=Luxe%20Watches&product=Royal%20Oak&status=authentic&hash=$WATCH_HASH")" = 200 ]'
check "og authentic: 1200x630 PNG" 'is_png "$GP_DIR/og.png" && [ "$(png_size "$GP_DIR/og.png")" = 1200x630 ]'
cp "$GP_DIR/og.png" "$GP_DIR/og-auth.png"
check "og failed: 200" '[ "$(og "?brand=Luxe%20Watches&product=Royal%20Oak&status=failed&hash=$WATCH_HASH")" = 200 ]'
check "og failed: 1200x630 PNG" 'is_png "$GP_DIR/og.png" && [ "$(png_size "$GP_DIR/og.png")" = 1200x630 ]'
check "og: status changes the image" '! cmp -s "$GP_DIR/og.png" "$GP_DIR/og-auth.png"'
check "og: texts change the image" '! cmp -s "$GP_DIR/og-default.png" "$GP_DIR/og-auth.png"'
LONG=$(head -c 3000 /dev/zero | tr '\0' 'W')
check "og: very long texts still render" '[ "$(og "?product=$LONG&brand=$LONG&hash=$LONG&status=x")" = 200 ] &&
    [ "$(png_size "$GP_DIR/og.png")" = 1200x630 ]'
check "og: invalid percent-encoding is a 400" '[ "$(og "?product=%ff%fe")" = 400 ]'
check "og: HEAD answers like GET" \
    '[ "$(curl -s -I -o /dev/null -w "%{http_code} %{content_type}" "$GP_URL/api/og")" = "200 image/png" ]'

gp_stop
check "server exited cleanly" '[ "${GP_STOP_RC:-1}" = 0 ]'
gp_finish
