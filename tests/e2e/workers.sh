#!/usr/bin/env bash
# tests/e2e/workers.sh - `serve --workers 3` on one SQLite file: every
# worker listens on the shared port, writes made through any worker are
# seen by all, alerts raised by worker 0's detector from scans taken by
# any worker reach SSE clients of every worker, a killed worker is
# restarted, and SIGTERM stops them all cleanly.
set -u
. "$(dirname "$0")/lib.bash"

gp_start --demo-data --workers 3 || gp_finish
SUP=$GP_PID

kids() { pgrep -P "$SUP" | sort; }
N=$(kids | wc -l)
check "three worker processes" '[ "$N" -eq 3 ]'
for w in 0 1 2; do
    grep -q "\"worker\":$w,\"workers\":3" "$GP_LOG"
    RC=$?
    check "worker $w listening" '[ $RC -eq 0 ]'
done

# Writes through whichever worker accepts, reads through the others.
req GET /api/brands/list
BR=$(jb '.brands[0].id')
check "demo brand listed" '[ -n "$BR" ] && [ "$BR" != null ]'
for i in $(seq 1 12); do
    req POST /api/products/register "{\"brandId\":\"$BR\",\"name\":\"Worker item $i\"}"
    [ "$STATUS" = 200 ] || break
done
check_status "12 registrations through the workers" 200
ALLSEEN=1
for i in $(seq 1 9); do
    req GET "/api/products/list?brandId=$BR&limit=100"
    C=$(jb '[.products[] | select(.name | startswith("Worker item"))] | length')
    [ "$C" = 12 ] || ALLSEEN=0
done
check "every read (any worker) sees all 12 products" '[ $ALLSEEN -eq 1 ]'

# SSE clients spread over the workers; a cloned-tag attack through all of them.
for s in 1 2 3 4 5 6; do
    timeout 8 curl -sN -H "Authorization: Bearer $GP_ADMIN_KEY" \
        "$GP_URL/api/stream?brandId=$BR" >"$GP_DIR/sse$s" 2>/dev/null &
done
sleep 0.5
for c in US FR JP DE; do
    for i in 1 2 3; do
        NOAUTH=1 req GET "/api/products/verify?code=wfPHybaFV3_a" "" -H "X-Country: $c" -H "X-Forwarded-For: 198.51.100.7"
    done
done
OK=0
for i in $(seq 1 60); do
    OK=1
    for s in 1 2 3 4 5 6; do grep -q "event: threat" "$GP_DIR/sse$s" || OK=0; done
    [ $OK -eq 1 ] && break
    sleep 0.1
done
check "every SSE client (all workers) got the alert" '[ $OK -eq 1 ]'
ID1=$(grep -m1 '^id: ' "$GP_DIR/sse1" | cut -c5-)
SAME=1
for s in 2 3 4 5 6; do [ "$(grep -m1 '^id: ' "$GP_DIR/sse$s" | cut -c5-)" = "$ID1" ] || SAME=0; done
check "the same first event id on every worker" '[ $SAME -eq 1 ] && [ -n "$ID1" ]'

# A worker killed with SIGKILL comes back; the port keeps answering.
VICTIM=$(kids | head -1)
kill -9 "$VICTIM"
BACK=0
for i in $(seq 1 100); do
    if [ "$(kids | wc -l)" -eq 3 ] && ! kids | grep -qx "$VICTIM"; then BACK=1; break; fi
    sleep 0.05
done
check "killed worker restarted" '[ $BACK -eq 1 ]'
GOOD=0
for i in $(seq 1 20); do NOAUTH=1 req GET /api/health; [ "$STATUS" = 200 ] && GOOD=$((GOOD + 1)); done
check "health answered 20/20 after the restart" '[ $GOOD -eq 20 ]'

KIDS=$(kids)
gp_stop
check "supervisor exits 0 on SIGTERM" '[ "$GP_STOP_RC" -eq 0 ]'
LEFT=0
for k in $KIDS; do kill -0 "$k" 2>/dev/null && LEFT=1; done
check "no worker left behind" '[ $LEFT -eq 0 ]'

gp_finish
