#!/usr/bin/env bash
# tui_readonly.sh - TUI.md §10 check 8: the fake server sees no verify
# without metadata=true and no POST from a --readonly or --kiosk
# dashboard; a normal dashboard's resolve (r) does POST (control).
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_lib.bash"
tui_need_tmux

fake_start --brands brand-a --initial 20 --rate 1 || gp_finish
tui_env LANG=C.UTF-8 LC_ALL=C.UTF-8
tui_start 80 24 --url "$FAKE_URL" --brand brand-a --readonly
check "read-only: LIVE with RO" "wait_for 'LIVE 1/1.*RO' 10"
tui_keys 2
wait_for 'Time +Sev' 3
sleep 0.3
tui_keys j r
check "read-only: r is refused" "wait_for 'read-only' 2"
tui_keys c
check "c opens the chain view" "wait_for 'HMAC|CHAIN|not found|Product' 5"
tui_keys v
sleep 0.3
tui_keys X
check "read-only: recall refused" "wait_for 'read-only: recall' 2"
tui_keys : p r o d u c t Space C O D E 1 2 3 Enter
sleep 0.5
tui_keys R
sleep 0.5
tui_keys q y
wait_for '^EXITED' 5
tm kill-server
sleep 0.2

tui_start 80 24 --url "$FAKE_URL" --brand brand-a --kiosk --rotate 1
check "kiosk: running" "wait_for 'LIVE 1/1' 10"
tui_keys 2 j r X c
sleep 1
tm kill-server
sleep 0.2

check "no POST from read-only or kiosk" '! grep -q " POST " "$FAKE_LOG"'
check "verify requests were made" 'grep -q "/api/products/verify" "$FAKE_LOG"'
check "every verify has metadata=true" \
    '! grep "/api/products/verify" "$FAKE_LOG" | grep -v "metadata=true" | grep -q .'

# control: a normal dashboard does POST a resolve
tui_start 80 24 --url "$FAKE_URL" --brand brand-a
check "normal: LIVE" "wait_for 'LIVE 1/1' 10"
tui_keys 2
wait_for 'Time +Sev' 3
# rows first: on a loaded machine the reconcile may not have drawn any yet
for i in $(seq 1 100); do [ "$(feed_rows)" -ge 2 ] && break; sleep 0.05; done
tui_keys j r
check "normal: resolve answered" "wait_for 'resolve: done|resolve failed' 5"
check "normal: resolve POSTed" 'grep -q "POST /api/threats/resolve" "$FAKE_LOG"'
check "no sanitizer report" no_sanitizer
gp_finish
