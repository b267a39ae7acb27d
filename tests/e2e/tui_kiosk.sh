#!/usr/bin/env bash
# tui_kiosk.sh - TUI.md §10 check 6 with GENUPROOF_TIME_SCALE=0.05: 90 s
# idle (4.5 s here) shows >= 4 views; a CRIT switches to the Feed with a
# banner within 2 s; the server down for minutes (6 s) -> STALE, then LIVE
# after it is back; server down at start -> Health view, no exit; keys
# other than Ctrl-C are ignored.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_lib.bash"
tui_need_tmux
export GENUPROOF_TIME_SCALE=0.05

view_of() { # the view a screen shows, by its content
    local s=$1
    if [[ $s =~ Time\ +Sev ]]; then echo feed
    elif [[ $s =~ Ops\ log ]]; then echo ops
    elif [[ $s =~ Unplaced ]]; then echo map
    elif [[ $s =~ Scans ]]; then echo overview
    elif [[ $s =~ Stream\ +State ]]; then echo health
    else echo other; fi
}

# --- server down at start: Health, retrying, never exits ---
tui_env LANG=C.UTF-8 LC_ALL=C.UTF-8
tui_start 80 24 --url "http://127.0.0.1:9" --brand brand-a --kiosk
check "down at start: Health view" "wait_for 'Stream +State' 5"
check "down at start: retrying" "wait_for 'RETRY' 5"
tui_keys q y q
sleep 1
check "down at start: still running, keys ignored" tui_alive
check "kiosk: no hint row" '! cap | grep -q "[?] help"'
tm kill-server
sleep 0.2

# --- rotation ---
fake_start --brands brand-a --initial 10 --rate 0 --heartbeat-ms 200 || gp_finish
tui_start 80 24 --url "$FAKE_URL" --brand brand-a --kiosk
check "kiosk: LIVE" "wait_for 'LIVE 1/1' 10"
check "kiosk: countdown in the tab bar" "wait_for 'next [0-9]+s' 3"
declare -A seen=()
end=$(($(now_ms) + 4500))
while [ "$(now_ms)" -lt "$end" ]; do
    seen[$(view_of "$(cap)")]=1
    sleep 0.1
done
unset 'seen[other]'
check "90 s idle (scaled): >= 4 views shown (${!seen[*]})" '[ "${#seen[@]}" -ge 4 ]'

# --- critical takeover ---
# wait until another view than the feed is up, then raise a CRIT
for i in $(seq 1 60); do [ "$(view_of "$(cap)")" != feed ] && break; sleep 0.05; done
fake_ctl "/_ctl/emit?sev=critical&brand=brand-a&type=hash_tampering&n=1" >/dev/null
t0=$(now_ms)
check "CRIT: Feed + banner within 2 s" "wait_for 'Time +Sev' 2 && wait_for 'CRIT  Tampering  ' 2"
echo "# takeover after $(($(now_ms) - t0)) ms"
sleep 1.6 # the rotation (1 s) would have moved on: it is paused
check "rotation paused during the takeover" '[ "$(view_of "$(cap)")" = feed ]'

# --- STALE when the data is old, LIVE after the server is back ---
# 6 s down = 2 min at this scale: well past the 30 s (1.5 s) STALE limit
fake_ctl "/_ctl/down?sec=6" >/dev/null
check "server down: STALE banner" "wait_for 'STALE — data from [0-9:]+Z \\([0-9ms]+ ago\\), reconnecting \\(attempt [0-9]+, next' 10"
check "server back: LIVE again" "wait_for 'LIVE 1/1' 25"
check "server back: STALE gone" "wait_gone 'STALE' 5"
check "kiosk never exited" tui_alive
tui_keys C-c
check "Ctrl-C quits the kiosk" "wait_for '^EXITED' 5"
check "no sanitizer report" no_sanitizer
gp_finish
