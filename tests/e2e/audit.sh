#!/usr/bin/env bash
# tests/e2e/audit.sh - `genuproof audit` on a live server's database: the
# product under a cloned-tag burst is the hottest key, single-key
# families are flagged, JSON and text agree, the report starts no thread,
# and bad input is refused.
set -u
. "$(dirname "$0")/lib.bash"

gp_start --demo-data || gp_finish

CODE=wfPHybaFV3_a
for i in $(seq 1 40); do
    NOAUTH=1 req GET "/api/products/verify?code=$CODE" "" -H "X-Forwarded-For: 203.0.113.$((i % 3 + 1))"
done
check_status "verify under burst" 200
req GET "/api/products/verify?code=$CODE&metadata=true"
PID_OF=$(jb .product.productId)

OUT=$("$GENUPROOF_BIN" audit --db "$GP_DB" --json)
RC=$?
check "audit --json exits 0" '[ $RC -eq 0 ]'
BODY=$OUT
check_json "hottest key is the scanned product" ".hottest[0].key == \"PRODUCT#$PID_OF\""
check_json "product family has >= 40 writes" '[.families[] | select(.pattern == "PRODUCT#<id>")][0].writes >= 40'
check_json "product index flagged (single key)" '[.families[] | select(.pattern == "PRODUCT_INDEX")][0].risk == "watch"'
check_json "every family has a verdict" '[.families[] | select(.risk == null or .why == "")] | length == 0'
check_json "unused families left out" '[.families[] | select(.pattern == "DLQ#<YYYY-MM-DD>")] | length == 0'

TEXT=$("$GENUPROOF_BIN" audit --db "$GP_DB" --window 5)
check "text report lists the hottest key" 'printf "%s" "$TEXT" | grep -q "PRODUCT#$PID_OF"'
check "text report has verdicts" 'printf "%s" "$TEXT" | grep -q "^Verdicts:"'

# a one-shot report: a plain connection, no checkpoint or WAL-sync thread
if command -v strace >/dev/null 2>&1; then
    strace -f -qq -e trace=clone,clone3 -o "$GP_DIR/audit.strace" \
        "$GENUPROOF_BIN" audit --db "$GP_DB" >/dev/null 2>&1
    # (threads are CLONE_THREAD clones; the sanitizers' exit-time leak
    # check clones a tracer of its own, which is not one)
    check "audit starts no thread" '[ -f "$GP_DIR/audit.strace" ] && ! grep -q "CLONE_THREAD" "$GP_DIR/audit.strace"'
else
    echo "SKIP: audit starts no thread (no strace)"
fi

"$GENUPROOF_BIN" audit --db "$GP_DIR/missing.db" >/dev/null 2>&1
RC=$?
check "missing database -> exit 1" '[ $RC -eq 1 ] && [ ! -e "$GP_DIR/missing.db" ]'
"$GENUPROOF_BIN" audit --window 0 --db "$GP_DB" >/dev/null 2>&1
RC=$?
check "window 0 refused -> exit 2" '[ $RC -eq 2 ]'
"$GENUPROOF_BIN" audit --help | grep -q -- "--window"
RC=$?
check "help lists --window" '[ $RC -eq 0 ]'

gp_finish
