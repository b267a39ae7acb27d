#!/usr/bin/env bash
# tests/e2e/ddb_counters.sh - the hot scan counters on DynamoDB Local
# (tests/tools/ddb_local.sh; needs java and `cd tests && npm ci`): in
# DynamoDB mode verify writes the scan item only and the Streams detector
# folds the product's and the brand's scanCount.  Phase 1: serve --dynamodb
# with its in-process detector, M verifies of one product, then both
# counters reach exactly M (and the demo data's three scans count 3).
# Phase 2: serve --no-detector: with no detector running, verifies move no
# counter (the request path writes none); then a `genuproof detect` worker
# is killed -9 part-way through N more verifies and another one started:
# the final counts are exact, neither short nor doubled.
set -u
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/ddb_lib.bash"
DET_PID=""
TABLE=gp_counters_$$
M=8
N=14

ddb_cleanup() {
    [ -n "$DET_PID" ] && kill -9 "$DET_PID" 2>/dev/null
    ddb_stop
    gp_cleanup
}
trap ddb_cleanup EXIT

ddb_start "$TABLE"

# The stored scanCount of product $1 (a verify that records no scan).
product_scans() {
    NOAUTH=1 req GET "/api/products/verify?productId=$1&metadata=true"
    jb '.scanCount // empty'
}
# The brand's STATS scanCount.
brand_scans() {
    req GET "/api/brands?id=$1"
    jb '.scanCount // empty'
}
# Polls until product $1 shows $2 scans and brand $3 shows $4 (at most
# $5 s).  Sets GOT_P and GOT_B.
wait_counts() {
    local t0=$SECONDS
    while :; do
        GOT_P=$(product_scans "$1")
        GOT_B=$(brand_scans "$3")
        [ "$GOT_P" = "$2" ] && [ "$GOT_B" = "$4" ] && return 0
        [ $((SECONDS - t0)) -ge "$5" ] && return 1
        sleep 0.2
    done
}
# $2 scans of product $1, $3 seconds apart (default 0); prints the number
# answered 200.  Its own curl (no shared body file), so it can run in the
# background.
verifies() {
    local ok=0 i code
    for i in $(seq 1 "$2"); do
        code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 20 \
            "$GP_URL/api/products/verify?productId=$1")
        [ "$code" = 200 ] && ok=$((ok + 1))
        sleep "${3:-0}"
    done
    echo "$ok"
}

# ---- phase 1: serve with the in-process Streams detector ----
gp_start --dynamodb "$EP" --table "$TABLE" --rate-limit 0 --demo-data || gp_finish
req POST /api/brands '{"name":"Counter Brand","domain":"counters.test","industry":"fashion"}'
BR=$(jb .id)
KB=$(jb .apiKey)
AUTH="Bearer $KB" req POST /api/products/register "{\"brandId\":\"$BR\",\"name\":\"Counted\"}"
P=$(jb .productId)
check "brand and product registered" '[ -n "$BR" ] && [ -n "$P" ] && [ "$P" != null ]'
check "a new product starts at scanCount 0" '[ "$(product_scans "$P")" = 0 ]'
NOAUTH=1 req GET "/api/products/verify?productId=$P"
check_json "verify reports the stored count + 1" '.scanCount == 1'
OK=$(verifies "$P" $((M - 1)))
check "$M verifies answered 200" '[ "$OK" -eq $((M - 1)) ]'
if wait_counts "$P" "$M" "$BR" "$M" 30; then
    pass "detector folded product and brand scanCount to $M"
else
    fail "counts after $M verifies: product $GOT_P brand $GOT_B (want $M)"
fi
sleep 1 # idle detector rounds add nothing
check "counts stay at $M" '[ "$(product_scans "$P")" = "$M" ] && [ "$(brand_scans "$BR")" = "$M" ]'
if wait_counts "$DEMO_PRODUCT" 3 "$DEMO_BRAND" 3 10; then
    pass "demo data's 3 scans counted once by the detector"
else
    fail "demo counts: product $GOT_P brand $GOT_B (want 3)"
fi
gp_stop
check "serve on DynamoDB: clean exit, no sanitizer report" '[ "$GP_STOP_RC" = 0 ] && ! grep -q Sanitizer "$GP_LOG"'

# ---- phase 2: API without detector, a `genuproof detect` worker killed -9 ----
start_detector() {
    "$GENUPROOF_BIN" detect --dynamodb "$EP" --table "$TABLE" --worker-id "$1" \
        --lease-s 10 --poll-ms 100 >>"$GP_DIR/$1.log" 2>&1 &
    DET_PID=$!
}
gp_start --dynamodb "$EP" --table "$TABLE" --rate-limit 0 --no-detector || gp_finish
AUTH="Bearer $KB" req POST /api/products/register "{\"brandId\":\"$BR\",\"name\":\"Counted 2\"}"
Q=$(jb .productId)
check "second product registered" '[ -n "$Q" ] && [ "$Q" != null ]'
# No detector at all: the request path itself writes no counter.
OK=$(verifies "$Q" 2)
sleep 0.5
check "without a detector the counts do not move" '[ "$OK" = 2 ] && [ "$(product_scans "$Q")" = 0 ] && [ "$(brand_scans "$BR")" = "$M" ]'
start_detector w1
# Scans keep coming while the worker counts them; it is killed without
# warning once it has counted some, and another worker takes over.
verifies "$Q" "$N" 0.1 >"$GP_DIR/ok2" &
VPID=$!
for _ in $(seq 1 300); do
    c=$(product_scans "$Q")
    [ -n "$c" ] && [ "$c" -gt 0 ] && break
    sleep 0.1
done
kill -9 "$DET_PID"
wait "$DET_PID" 2>/dev/null
DET_PID=""
MID=$(product_scans "$Q")
wait "$VPID"
OK=$(cat "$GP_DIR/ok2")
check "the worker was killed part-way ($MID of $((N + 2)) counted)" '[ -n "$MID" ] && [ "$MID" -gt 0 ] && [ "$MID" -lt $((N + 2)) ]'
check "$N more verifies answered 200" '[ "$OK" -eq "$N" ]'
start_detector w2
wait_counts "$Q" $((N + 2)) "$BR" $((M + N + 2)) 30
check "after kill -9 and restart: product scanCount exactly $((N + 2)) ($GOT_P)" '[ "$GOT_P" = $((N + 2)) ]'
check "brand scanCount exactly $((M + N + 2)) ($GOT_B)" '[ "$GOT_B" = $((M + N + 2)) ]'
sleep 1
check "counts stay exact" '[ "$(product_scans "$Q")" = $((N + 2)) ] && [ "$(brand_scans "$BR")" = $((M + N + 2)) ] && [ "$(product_scans "$P")" = "$M" ]'
kill -TERM "$DET_PID" 2>/dev/null
wait "$DET_PID" 2>/dev/null
DET_PID=""
gp_stop
check "no sanitizer report" '! grep -q Sanitizer "$GP_LOG" $GP_DIR/w*.log'
gp_finish
