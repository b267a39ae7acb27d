#!/usr/bin/env bash
# tui_reconnect.sh - TUI.md §10 check 4: the server is killed -> RETRY
# within 16 s; restarted -> LIVE within the pending backoff + 2 s; the
# threats the new server has but the stream never sent appear once,
# marked with the backfill glyph; the reconnect carries the latest
# Last-Event-ID.  The second server starts at other sequence numbers, so
# it cannot resume the old ids and the reconcile must find its threats.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_lib.bash"
tui_need_tmux

fake_start --brands brand-a --start-seq 500 --rate 0 || gp_finish
port=$FAKE_PORT
tui_env LANG=C.UTF-8 LC_ALL=C.UTF-8
tui_start 200 30 --url "$FAKE_URL" --brand brand-a
check "LIVE before the outage" "wait_for 'LIVE 1/1' 10"
tui_keys 2
fake_ctl "/_ctl/emit?sev=high&brand=brand-a&n=3" >/dev/null
check "three live threats shown" "wait_for '#503 on' 5"
check "latest id 503 delivered" '[ "$(fake_ctl /_ctl/status | jq -r .seq)" = 503 ]'
# the Health view shows the stream's resume point and the event it came with
tui_keys 7
check "Health: Last-Event-ID 503 shown" "wait_for ' 503' 3"
check "Health: last event time shown" '! cap | grep -q "LIVE .* never .* never"'
tui_keys 2
# The first reconcile loads history (nothing is marked); only a later one
# backfills.  On a loaded machine it may still be in flight here: wait for
# it, or the reconcile after the restart would count as the first.
for _ in $(seq 100); do
    grep -q "GET /api/threats " "$FAKE_LOG" && break
    sleep 0.1
done
check "the first reconcile ran before the outage" 'grep -q "GET /api/threats " "$FAKE_LOG"'
if ! grep -q "GET /api/threats " "$FAKE_LOG"; then
    echo "# fake log:"; sed 's/^/#   /' "$FAKE_LOG" | tail -n 30
    echo "# tui stderr:"; sed 's/^/#   /' "$GP_DIR/tui.err" | tail -n 30
    echo "# screen:"; cap | sed 's/^/#   /' | head -n 30
fi
sleep 0.5

fake_stop
t0=$(now_ms)
check "server killed: RETRY within 16 s" "wait_for 'RETRY 1/1' 16"
echo "# RETRY after $(($(now_ms) - t0)) ms"
sleep 0.5

# restart on the same port with other history (seq 1..3)
: >"$FAKE_LOG"
fake_start --port "$port" --brands brand-a --start-seq 0 --initial 3 --rate 0 || gp_finish
t1=$(now_ms)
# the longest backoff step is 30 s, scaled
limit=$(awk -v s="${GENUPROOF_TIME_SCALE:-1}" 'BEGIN { printf "%d", 30 * s + 2 + 0.999 }')
check "restarted: LIVE within the backoff + 2 s (${limit} s)" "wait_for 'LIVE 1/1' $limit"
echo "# LIVE after $(($(now_ms) - t1)) ms"
check "missed threats appear" "wait_for '#3 on' 5"
sleep 0.5
screen=$(cap)
for n in 1 2 3; do
    c=$(grep -c "Fake [a-z_]* #$n on" <<<"$screen")
    check "missed threat #$n shown once ($c)" '[ "$c" -eq 1 ]'
    check "missed threat #$n marked as backfilled" 'grep "Fake [a-z_]* #$n on" <<<"$screen" | grep -q "↺"'
done
check "live threats not marked as backfilled" '! grep "#50[123] on" <<<"$screen" | grep -q "↺"'
check "the reconnect sent Last-Event-ID 503" 'grep -q "GET /api/stream .* lei=503 " "$FAKE_LOG"'
check "the reconcile ran after the reconnect" 'grep -q "GET /api/threats " "$FAKE_LOG"'
tui_keys 7
check "Health counts the backfilled rows" "wait_for 'brand-a .* 3 +503' 3"
check "still running" tui_alive
# plain mode prints the backfilled threats too
tm kill-server
fake_stop
fake_start --brands brand-a --start-seq 700 --rate 0 || gp_finish
port=$FAKE_PORT
GENUPROOF_TIME_SCALE=0.05 "$GENUPROOF_BIN" tui --config none --plain --url "$FAKE_URL" \
    --brand brand-a >"$GP_DIR/plain.out" 2>"$GP_DIR/plain.err" </dev/null &
plain_pid=$!
for i in $(seq 1 100); do grep -q LIVE "$GP_DIR/plain.err" 2>/dev/null && break; sleep 0.05; done
fake_ctl "/_ctl/emit?sev=high&brand=brand-a&n=2" >/dev/null
for i in $(seq 1 100); do grep -q "#702 on" "$GP_DIR/plain.out" && break; sleep 0.05; done
fake_stop
sleep 0.3
fake_start --port "$port" --brands brand-a --start-seq 0 --initial 2 --rate 0 || gp_finish
# Both backfilled threats (bounded: a loaded machine reconnects slowly),
# then a moment for a duplicate to show if there were one.
for i in $(seq 1 200); do
    [ "$(grep -c "Fake [a-z_]* #[12] on" "$GP_DIR/plain.out")" -ge 2 ] && break
    sleep 0.05
done
sleep 0.3
kill "$plain_pid" 2>/dev/null
wait "$plain_pid" 2>/dev/null
check "plain: live threats printed once" '[ "$(grep -c "#70[12] on" "$GP_DIR/plain.out")" -eq 2 ]'
check "plain: backfilled threats printed once" '[ "$(grep -c "Fake [a-z_]* #[12] on" "$GP_DIR/plain.out")" -eq 2 ]'
check "plain: state changes on stderr" 'grep -q RETRY "$GP_DIR/plain.err" && grep -q LIVE "$GP_DIR/plain.err"'
check "no sanitizer report" no_sanitizer
gp_finish
