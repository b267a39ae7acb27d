#!/usr/bin/env bash
# tests/e2e/ddb_store.sh - the DynamoDB driver end to end against AWS's
# DynamoDB Local (tests/tools/ddb_local.sh; needs java and `cd tests && npm ci`):
# `genuproof table create|describe|delete`, the store conformance suite
# (test_store_dynamodb) on it, `serve --dynamodb` answering brand, register
# and verify, interop with the AWS SDK for JavaScript v3 (tests/e2e/
# ddb_interop.js: it reads our item with the original's attribute names and
# types, and a product it writes in the original's layout verifies as
# authentic), and a throttling proxy (ddb_throttle_proxy.js, ~30% of calls
# answered ThrottlingException) through which every write still lands.
set -u
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/ddb_lib.bash"
PROXY_PID=""
SECRET=e2e-test-secret
TABLE=gp_e2e_$$

ddb_cleanup() {
    [ -n "$PROXY_PID" ] && kill "$PROXY_PID" 2>/dev/null
    ddb_stop
    gp_cleanup
}
trap ddb_cleanup EXIT

ddb_start
pass "DynamoDB Local answers on port $PORT"

# ---- genuproof table ----
out=$("$GENUPROOF_BIN" table create --dynamodb "$EP" --table "$TABLE" 2>"$GP_DIR/table.err")
rc=$?
check "table create exits 0" '[ $rc -eq 0 ]'
BODY=$out
check_json "table create: ACTIVE, PK/SK keys" '.TableStatus == "ACTIVE" and ([.KeySchema[] | .AttributeName + ":" + .KeyType] == ["PK:HASH","SK:RANGE"])'
check_json "table create: GSI1 on GSI1PK/GSI1SK projecting ALL" '.GlobalSecondaryIndexes[0] | .IndexName == "GSI1" and .Projection.ProjectionType == "ALL" and ([.KeySchema[] | .AttributeName] == ["GSI1PK","GSI1SK"])'
check_json "table create: on demand, NEW_IMAGE stream" '.BillingModeSummary.BillingMode == "PAY_PER_REQUEST" and .StreamSpecification.StreamViewType == "NEW_IMAGE" and .StreamSpecification.StreamEnabled == true'
"$GENUPROOF_BIN" table create --dynamodb "$EP" --table "$TABLE" >/dev/null 2>&1
rc=$?
check "table create again fails (exists)" '[ $rc -eq 1 ]'
BODY=$("$GENUPROOF_BIN" table describe --dynamodb "$EP" --table "$TABLE")
check_json "table describe" ".TableName == \"$TABLE\" and .TableStatus == \"ACTIVE\""
"$GENUPROOF_BIN" table describe --dynamodb "$EP" --table nope_missing >/dev/null 2>&1
rc=$?
check "table describe of a missing table exits 1" '[ $rc -eq 1 ]'
"$GENUPROOF_BIN" table frobnicate >/dev/null 2>&1
rc=$?
check "table with a bad action exits 2" '[ $rc -eq 2 ]'

# ---- conformance suite on DynamoDB Local ----
CONF_BIN="$(dirname "$GENUPROOF_BIN")/tests/test_store_dynamodb"
if [ -x "$CONF_BIN" ]; then
    GENUPROOF_DDB_ENDPOINT="$EP" timeout 180 "$CONF_BIN" >"$GP_DIR/conf.log" 2>&1
    rc=$?
    check "store conformance suite on DynamoDB Local" '[ $rc -eq 0 ]'
    [ $rc -eq 0 ] || grep -E "FAILED|ERROR|LINE" "$GP_DIR/conf.log" | head -20
else
    fail "conformance binary $CONF_BIN missing (make test-build)"
fi

# ---- serve on DynamoDB ----
SIGNING_SECRET=$SECRET gp_start --dynamodb "$EP" --table "$TABLE" --rate-limit 0 || gp_finish
req GET /api/health
check_status "health on DynamoDB" 200
req POST /api/brands '{"name":"Dyn Brand","domain":"dyn.test","industry":"fashion"}'
check_status "create brand" 200
BR=$(jb .id); KB=$(jb .apiKey)
AUTH="Bearer $KB" req POST /api/products/register "{\"brandId\":\"$BR\",\"name\":\"Dyn Watch\",\"sku\":\"DW-1\",\"metadata\":{\"z\":1,\"origin\":\"c\",\"size\":42,\"nested\":{\"b\":true,\"a\":null}}}"
check_status "register product" 200
P=$(jb .productId); PH=$(jb .hash)
NOAUTH=1 req GET "/api/products/verify?productId=$P&metadata=true"
check_status "verify -> 200" 200
check_json "verify: authentic, signature and chain valid" '.authentic == true and .certificate.signatureValid == true and .certificate.chainIntegrity == true'
NOAUTH=1 req GET "/api/products/verify?productId=$P"
check_json "verify (scan) authentic" '.authentic == true'
req GET "/api/products/list?brandId=$BR&limit=50"
check_json "list sees the product (GSI1)" ".count == 1 and .products[0].productId == \"$P\""

# ---- interop with the AWS SDK for JavaScript v3 ----
NEWP=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
CODE=SdkCode$(head -c 4 /dev/urandom | od -An -tx1 | tr -d ' \n' | head -c 5)
node "$HERE/ddb_interop.js" "$EP" "$TABLE" "$P" "$BR" "Dyn Brand" "$SECRET" "$NEWP" "$CODE" >"$GP_DIR/interop.out" 2>&1
irc=$?
grep -E '^(PASS|FAIL):' "$GP_DIR/interop.out"
GP_PASSES=$((GP_PASSES + $(grep -c '^PASS:' "$GP_DIR/interop.out")))
GP_FAILS=$((GP_FAILS + $(grep -c '^FAIL:' "$GP_DIR/interop.out")))
check "interop script exits 0" '[ $irc -eq 0 ]'
NOAUTH=1 req GET "/api/products/verify?productId=$NEWP&metadata=true"
check_status "verify the SDK-written product -> 200" 200
check_json "SDK-written product (no events) verifies as authentic" '.authentic == true and .certificate.signatureValid == true and .product.name == "SDK Written"'
gp_stop
check "server on DynamoDB: clean exit, no sanitizer report" '[ "$GP_STOP_RC" = 0 ] && ! grep -q Sanitizer "$GP_LOG"'

# ---- throttling: ~30% of calls answered ThrottlingException, no write lost ----
node "$HERE/ddb_throttle_proxy.js" "$EP" 0.3 >"$GP_DIR/proxy.port" 2>"$GP_DIR/proxy.err" &
PROXY_PID=$!
for _ in $(seq 1 100); do [ -s "$GP_DIR/proxy.port" ] && break; sleep 0.05; done
PP=$(cat "$GP_DIR/proxy.port")
SIGNING_SECRET=$SECRET gp_start --dynamodb "http://127.0.0.1:$PP" --table "$TABLE" --rate-limit 0 || gp_finish
N=20
okc=0
for i in $(seq 1 $N); do
    AUTH="Bearer $KB" req POST /api/products/register "{\"brandId\":\"$BR\",\"name\":\"Throttled $i\",\"sku\":\"T-$i\"}"
    if [ "$STATUS" = 200 ]; then okc=$((okc + 1)); else echo "  register $i: $STATUS ${BODY:0:200}"; tail -n 20 "$GP_LOG"; break; fi
done
check "all $N registrations through the throttling proxy answered 200" '[ $okc -eq $N ]'
req GET "/api/products/list?brandId=$BR&limit=500"
check_json "every throttled write landed ($N + 2 products listed)" ".count == $((N + 2))"
STATS=$(curl -s "http://127.0.0.1:$PP/__stats")
check "the proxy did throttle calls ($STATS)" '[ "$(printf "%s" "$STATS" | jq .throttled)" -gt 5 ]'
gp_stop
check "server behind the proxy: clean exit, no sanitizer report" '[ "$GP_STOP_RC" = 0 ] && ! grep -q Sanitizer "$GP_LOG"'

# ---- table delete ----
"$GENUPROOF_BIN" table delete --dynamodb "$EP" --table "$TABLE" >/dev/null 2>"$GP_DIR/table.err"
rc=$?
check "table delete exits 0" '[ $rc -eq 0 ]'
"$GENUPROOF_BIN" table describe --dynamodb "$EP" --table "$TABLE" >/dev/null 2>&1
rc=$?
check "table is gone" '[ $rc -eq 1 ]'
gp_finish
