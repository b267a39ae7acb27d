#!/usr/bin/env bash
# tui_layout.sh - TUI.md §10 checks 1 and 2 in tmux against the fake SSE
# server: 80x24 full layout (20 feed rows, nothing past column 80, all 7
# views), 60x16 compact (>= 12 feed rows), 39x9 "Terminal too small",
# back to 80x24 quickly, 100 random resizes without dying.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_lib.bash"
tui_need_tmux
export LC_ALL=C.UTF-8 LANG=C.UTF-8

fake_start --brands brand-a,brand-b --initial 40 --rate 2 || gp_finish
tui_env LANG=C.UTF-8 LC_ALL=C.UTF-8
tui_start 80 24 --url "$FAKE_URL" --brand brand-a,brand-b

check "dashboard goes LIVE" "wait_for 'LIVE 2/2' 10"
tui_keys 2
wait_for 'Time +Sev' 3
# the reconcile fills the feed; let it settle
# (up to 10 s: on a loaded 2-core CI machine the sanitizer build is slow)
for i in $(seq 1 200); do [ "$(feed_rows)" -ge 20 ] && break; sleep 0.05; done
n=$(feed_rows)
check "80x24 feed shows exactly 20 threat rows ($n)" '[ "$n" -eq 20 ]'
widest=$(cap | { m=0; while IFS= read -r l; do [ ${#l} -gt $m ] && m=${#l}; done; echo $m; })
check "80x24: nothing past column 80 (widest $widest)" '[ "$widest" -le 80 ]'
check "80x24: 24 rows, status bar last" '[ "$(cap | wc -l)" -eq 24 ] && cap | tail -n 1 | grep -q "Z *$"'
check "80x24: key hints row" 'cap | sed -n 23p | grep -q "? help"'

sig=("Scans" "Time +Sev" "Unplaced" "Ops log" "open a product|HMAC" "Partition heat|not available" "Stream +State")
for v in 1 2 3 4 5 6 7; do
    tui_keys "$v"
    check "view $v renders" "wait_for $(printf %q "${sig[$((v - 1))]}") 3"
done
tui_keys 2
wait_for 'Time +Sev' 3

tui_resize 60 16
check "60x16: compact layout (digit tabs)" "wait_for '^1 2 Feed 3 4' 2"
n=$(feed_rows)
check "60x16: feed shows >= 12 rows ($n)" '[ "$n" -ge 12 ]'
check "60x16: no hint row" '! cap | grep -q "? help"'

tui_resize 39 9
check "39x9: too-small notice" "wait_for 'Terminal too small: 39x9 .need 40x10.' 2"
tui_resize 1 1
sleep 0.2
check "1x1: still running" tui_alive
tui_resize 80 24
t0=$(now_ms)
wait_for '[?] help' 2
ms=$(($(now_ms) - t0))
# TUI.md: 200 ms.  The sanitizer build redraws several times slower than
# the product build (about 230-260 ms against 35-80 ms here), so it gets a wider
# the budget; the release binary is held to the spec's figure.
limit=200
case "$GENUPROOF_BIN" in */san/*) limit=500 ;; esac
check "back at 80x24 in <= $limit ms (${ms} ms)" '[ "$ms" -le "$limit" ]'

for i in $(seq 1 100); do
    tui_resize $((RANDOM % 150 + 1)) $((RANDOM % 50 + 1))
    sleep 0.05
done
tui_resize 80 24
check "100 random resizes: process alive" tui_alive
check "after the resizes: full layout again" "wait_for '[?] help' 2"
for i in $(seq 1 100); do [ "$(feed_rows)" -eq 20 ] && break; sleep 0.05; done
n=$(feed_rows)
check "after the resizes: 20 feed rows ($n)" '[ "$n" -eq 20 ]'

tui_keys q
wait_for 'Quit\? \(y/N\)' 2
tui_keys y
check "q y quits" "wait_for '^EXITED 0' 5"
check "no sanitizer report" no_sanitizer
gp_finish
