#!/usr/bin/env bash
# tui_serve.sh - the dashboard against a real `genuproof serve --demo-data`
# on a temp database: LIVE stream, the brand's name and figures on the
# Overview, every view renders, record/replay of the session.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_lib.bash"
tui_need_tmux

LUXE=$DEMO_BRAND
gp_start --demo-data || gp_finish
tui_env LANG=C.UTF-8 LC_ALL=C.UTF-8
tui_start 100 30 --url "$GP_URL" --api-key "$GP_ADMIN_KEY" --brand "$LUXE" \
    --record "$GP_DIR/session.jsonl"
check "real server: LIVE" "wait_for 'LIVE 1/1' 15"
check "real server: brand name in the tab bar" "wait_for 'Luxe Watches 1/1' 10"
check "real server: Overview figures" "wait_for 'Products' 5"
sig=("Scans" "Time +Sev" "Unplaced" "Ops log" "open a product|HMAC" "Partition heat|not available" "Stream +State")
for v in 1 2 3 4 5 6 7; do
    tui_keys "$v"
    check "real server: view $v renders" "wait_for $(printf %q "${sig[$((v - 1))]}") 5"
done
check "real server: health polled" "wait_for 'ok|OK|healthy' 5"

# provenance chain and a confirmed recall (not read-only)
req GET "/api/products/list?brandId=$LUXE&limit=1"
pid=$(jb '.products[0].productId')
code=$(jb '.products[0].verificationCode')
tui_keys : p r o d u c t Space
tm send-keys -t "$TUI_SESSION" -l "$pid"
tui_keys Enter
check "chain view: header with HMAC and CHAIN" "wait_for 'HMAC.*CHAIN' 5"
check "chain view: hops listed" "wait_for 'manufactured' 5"
tui_keys G Enter
check "chain view: Enter expands the hashes" "wait_for 'previous ' 3"
tui_keys X
check "recall: reason prompt" "wait_for 'Recall reason' 3"
tm send-keys -t "$TUI_SESSION" -l "tui test"
tui_keys Enter
check "recall: code prompt" "wait_for 'Type the product code' 3"
tm send-keys -t "$TUI_SESSION" -l "$code"
tui_keys Enter
check "recall: done" "wait_for 'recall: done' 5"
req GET "/api/products/verify?productId=$pid&metadata=true"
check_json "recall: the product is recalled on the server" '.product.status == "recalled"'
check "chain view: status recalled" "wait_for 'recalled' 5"
tui_keys 2
check "the recall's critical alert arrives on the live stream" "wait_for 'CRIT +.*[Rr]ecall' 10"
tui_keys q y
check "real server: quit" "wait_for '^EXITED 0' 5"
check "record file written" '[ -s "$GP_DIR/session.jsonl" ] && jq -e -s "length > 0 and all(.[]; .t != null and .kind != null)" "$GP_DIR/session.jsonl" >/dev/null'
check "record has the stream's connected event" 'grep -q "\"type\":\"connected\"" "$GP_DIR/session.jsonl"'
tm kill-server
sleep 0.2

# replay: no network at all (the server is stopped)
gp_stop
tui_start 100 30 --replay "$GP_DIR/session.jsonl" --speed 50
check "replay: shows the recorded brand" "wait_for 'Luxe|$LUXE' 5"
check "replay: LIVE without a server" "wait_for 'LIVE 1/1' 5"
check "replay: still running" tui_alive
check "no sanitizer report" no_sanitizer
gp_finish
