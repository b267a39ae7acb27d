#!/usr/bin/env bash
# tests/e2e/workers_crash.sh - `serve --workers 2` on one SQLite file,
# killed with SIGKILL (supervisor and both workers at once) in the middle
# of a write load that goes through both workers: product registrations
# (each its own transaction with its stream record) and consumer scans
# (group commits of several requests).  After a restart:
#   - every registration answered 200 is there, with its INSERT record in
#     the change stream;
#   - every scan answered 200 is there (a 2xx means durable, whichever
#     worker committed it);
#   - the database passes PRAGMA integrity_check, stream seqs are unique
#     and no record is older than the one before it;
#   - the restarted detector catches up (lag 0) and new writes go on.
set -u
. "$(dirname "$0")/lib.bash"

LOOPS=6       # concurrent registration loops
REGS=40       # registrations per loop at most
BATCH=200     # scans per curl batch; batches follow each other until the kill
KILL_REGS=30  # registrations answered before the kill
KILL_SCANS=300 # and scans

metric() { # metric NAME -> value from /metrics
    curl -s --max-time 5 -H "Authorization: Bearer $GP_ADMIN_KEY" "$GP_URL/metrics" |
        awk -v m="$1" '$1 == m {print $2}'
}

gp_start --demo-data --workers 2 --rate-limit 0 || gp_finish
SUP=$GP_PID
req GET /api/brands/list
BR=$(jb '.brands[0].id')
req POST /api/products/register "{\"brandId\":\"$BR\",\"name\":\"Scanned item\"}"
SCANNED=$(jb .productId)
check "demo brand and a product to scan" '[ -n "$BR" ] && [ "$BR" != null ] && [ -n "$SCANNED" ] && [ "$SCANNED" != null ]'

# Registration loops: one line "<productId>" per 200 answer.
reg_loop() {
    local n=$1 i code
    for i in $(seq 1 $REGS); do
        code=$(curl -s -o "$GP_DIR/reg-$n.body" -w '%{http_code}' --max-time 10 \
            -H "Authorization: Bearer $GP_ADMIN_KEY" -H 'Content-Type: application/json' \
            --data-binary "{\"brandId\":\"$BR\",\"name\":\"Crash item $n-$i\"}" \
            "$GP_URL/api/products/register" 2>/dev/null) || return 0
        [ "$code" = 200 ] || return 0
        jq -r .productId "$GP_DIR/reg-$n.body" >>"$GP_DIR/acked-$n"
    done
}
for n in $(seq 1 $LOOPS); do
    : >"$GP_DIR/acked-$n"
    reg_loop "$n" &
done
for i in $(seq 1 $BATCH); do
    printf 'url = "%s/api/products/verify?productId=%s"\noutput = "/dev/null"\n' "$GP_URL" "$SCANNED"
done >"$GP_DIR/scans.cfg"
: >"$GP_DIR/scan-results"
scan_loop() { # until a batch gets no answer at all
    local b
    for b in $(seq 1 100); do
        curl -s --parallel --parallel-max 8 --max-time 10 -w '%{http_code}\n' -K "$GP_DIR/scans.cfg" \
            >"$GP_DIR/scan-batch" 2>/dev/null
        cat "$GP_DIR/scan-batch" >>"$GP_DIR/scan-results"
        grep -q '^200$' "$GP_DIR/scan-batch" || return 0
    done
}
scan_loop &

regs() { cat "$GP_DIR"/acked-* 2>/dev/null | wc -l; }
scans() { grep -c '^200$' "$GP_DIR/scan-results"; }
for i in $(seq 1 2000); do
    [ "$(regs)" -ge $KILL_REGS ] && [ "$(scans)" -ge $KILL_SCANS ] && break
    sleep 0.01
done
KIDS=$(pgrep -P "$SUP")
{
    kill -9 "$SUP" $KIDS
    wait
} 2>/dev/null
GP_PID=""
NREG=$(cat "$GP_DIR"/acked-* | grep -c .)
NSCAN=$(grep -c '^200$' "$GP_DIR/scan-results")
NLOST=$(grep -vc '^200$' "$GP_DIR/scan-results")
echo "# killed: $NREG registrations and $NSCAN scans had been answered 200"
check "the kill landed in the middle of the load ($NLOST scans cut off)" \
    '[ "$NREG" -gt 0 ] && [ "$NREG" -lt $((LOOPS * REGS)) ] && [ "$NSCAN" -gt 0 ] && [ "$NLOST" -gt 0 ]'
LEFT=1
for i in $(seq 1 100); do # reaped by init once their parent is gone
    LEFT=0
    for k in $KIDS; do [ -d "/proc/$k" ] && [ "$(awk '{print $3}' "/proc/$k/stat" 2>/dev/null)" != Z ] && LEFT=1; done
    [ $LEFT -eq 0 ] && break
    sleep 0.02
done
check "no worker survived the kill" '[ $LEFT -eq 0 ]'

# ---- the file itself, before any process opens it again ----
IC=$(sqlite3 -cmd ".timeout 5000" "$GP_DB" "PRAGMA integrity_check")
check "integrity_check ok" '[ "$IC" = ok ]'
cat "$GP_DIR"/acked-* | grep . | sort -u >"$GP_DIR/acked"
sqlite3 -cmd ".timeout 5000" "$GP_DB" >"$GP_DIR/found" <<EOF
CREATE TEMP TABLE acked(id TEXT);
.mode csv
.import $GP_DIR/acked acked
SELECT count(*) FROM acked a JOIN items i ON i.pk = 'PRODUCT#' || a.id AND i.sk = 'META';
SELECT count(*) FROM acked a WHERE EXISTS (SELECT 1 FROM stream s
    WHERE s.pk = 'PRODUCT#' || a.id AND s.sk = 'META' AND s.kind = 0);
EOF
FOUND_ITEMS=$(sed -n 1p "$GP_DIR/found")
FOUND_RECS=$(sed -n 2p "$GP_DIR/found")
check "all $NREG acknowledged registrations stored ($FOUND_ITEMS)" '[ "$FOUND_ITEMS" = "$NREG" ]'
check "each with its INSERT record in the stream ($FOUND_RECS)" '[ "$FOUND_RECS" = "$NREG" ]'
ORDERED=$(sqlite3 -cmd ".timeout 5000" "$GP_DB" "SELECT count(*) FROM stream a JOIN stream b
    ON b.seq = (SELECT min(seq) FROM stream WHERE seq > a.seq) WHERE b.ts < a.ts - 1000")
check "stream seqs follow commit order (no record 1 s older than the one before it)" '[ "$ORDERED" = 0 ]'

STORED=$(sqlite3 -cmd ".timeout 5000" "$GP_DB" \
    "SELECT count(*) FROM items WHERE pk = 'PRODUCT#$SCANNED' AND sk LIKE 'SCAN#%'")
check "all $NSCAN acknowledged scans stored ($STORED)" '[ "$STORED" -ge "$NSCAN" ]'

# ---- restart: detector, new writes ----
gp_start --workers 2 --rate-limit 0 || gp_finish
CAUGHT=0
for i in $(seq 1 300); do
    [ "$(metric genuproof_detector_lag)" = 0 ] && { CAUGHT=1; break; }
    sleep 0.05
done
check "the restarted detector caught up (lag 0)" '[ $CAUGHT -eq 1 ]'
HEAD0=$(sqlite3 -cmd ".timeout 5000" "$GP_DB" "SELECT max(seq) FROM stream")
req POST /api/products/register "{\"brandId\":\"$BR\",\"name\":\"After the crash\"}"
check_status "a registration after the restart" 200
NEWID=$(jb .productId)
NEWSEQ=$(sqlite3 -cmd ".timeout 5000" "$GP_DB" \
    "SELECT seq FROM stream WHERE pk = 'PRODUCT#$NEWID' AND sk = 'META'")
check "its stream record comes after every earlier one ($NEWSEQ > $HEAD0)" \
    '[ -n "$NEWSEQ" ] && [ "$NEWSEQ" -gt "$HEAD0" ]'
gp_stop
check "supervisor exits 0 on SIGTERM" '[ "$GP_STOP_RC" -eq 0 ]'
gp_finish
