#!/usr/bin/env bash
# tui_freeze.sh - TUI.md §10 check 5: Space freezes the feed (FROZEN
# shown, rows unchanged while +N grows as data keeps arriving); Space
# again shows the new rows.  Also filter and severity floor in the
# status bar, and an export to $XDG_STATE_HOME.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_lib.bash"
tui_need_tmux

fake_start --brands brand-a --initial 25 --rate 8 || gp_finish
tui_env LANG=C.UTF-8 LC_ALL=C.UTF-8
tui_start 80 24 --url "$FAKE_URL" --brand brand-a
check "LIVE" "wait_for 'LIVE 1/1' 10"
tui_keys 2
wait_for 'Time +Sev' 3
sleep 0.5
tui_keys Space
check "FROZEN shown" "wait_for 'FROZEN [+][0-9]+' 2"
rows1=$(cap | sed -n 2,21p | LC_ALL=C.UTF-8 sed "s/^..//") # without the marker column (flash -> unseen)
n1=$(cap | tail -n 1 | grep -oE 'FROZEN \+[0-9]+' | grep -oE '[0-9]+$')
sleep 1.5
rows2=$(cap | sed -n 2,21p | LC_ALL=C.UTF-8 sed "s/^..//")
n2=$(cap | tail -n 1 | grep -oE 'FROZEN \+[0-9]+' | grep -oE '[0-9]+$')
check "frozen rows unchanged" '[ "$rows1" = "$rows2" ]'
[ "$rows1" = "$rows2" ] || diff <(echo "$rows1") <(echo "$rows2") | sed 's/^/# /'
check "+N grows while frozen ($n1 -> $n2)" '[ -n "$n1" ] && [ -n "$n2" ] && [ "$n2" -gt "$n1" ]'
tui_keys Space
check "FROZEN gone after Space" "wait_gone 'FROZEN' 2"
sleep 0.3
rows3=$(cap | sed -n 2,21p | LC_ALL=C.UTF-8 sed "s/^..//")
check "rows updated after unfreezing" '[ "$rows3" != "$rows1" ]'

# filter and floor show in the status bar
tui_keys / c r i t Enter
check "filter in the status bar" "wait_for '/crit' 2"
tui_keys Escape
check "Esc clears the filter" "wait_gone '/crit' 2"
tui_keys s s
check "severity floor in the status bar" "wait_for '≥HIGH' 2"
check "floor hides MED and LOW rows" '! cap | sed -n 2,21p | grep -qE "Z +(MED|LOW) "'
tui_keys e
check "export notice" "wait_for 'exported [0-9]+ to' 3"
f=$(ls "$XDG_STATE_HOME"/genuproof/exports/*.jsonl 2>/dev/null | head -n 1)
check "JSONL export written under XDG_STATE_HOME" '[ -n "$f" ] && [ -s "$f" ]'
check "export lines are JSON alerts" '[ -n "$f" ] && jq -e -s "all(.[]; .alertId != null)" "$f" >/dev/null'
tui_keys E
sleep 0.5
c=$(ls "$XDG_STATE_HOME"/genuproof/exports/*.csv 2>/dev/null | head -n 1)
check "CSV export has a header" '[ -n "$c" ] && head -n 1 "$c" | grep -q "^time,severity,brand"'
check "still running" tui_alive
check "no sanitizer report" no_sanitizer
gp_finish
