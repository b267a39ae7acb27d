#!/usr/bin/env bash
# tui_monkey.sh - robustness: a few hundred random keys (every view,
# prompts, overlays, brand switches) mixed with random resizes while
# threats stream in; the dashboard must stay up with a sane frame and no
# sanitizer report.  Keys that quit (q, :, Ctrl-C) are left out.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_lib.bash"
tui_need_tmux

fake_start --brands brand-a,brand-b --initial 30 --rate 20 || gp_finish
tui_env LANG=C.UTF-8 LC_ALL=C.UTF-8
tui_start 80 24 --url "$FAKE_URL" --brand brand-a,brand-b
check "LIVE" "wait_for 'LIVE 2/2' 10"
keys=(1 2 3 4 5 6 7 Tab BTab '[' ']' b '?' F1 / n N s Space j k Up Down PPage NPage g G Home End
    Enter Escape a A r c l v X p + - t T B R F5 C-l x 0 Z Left Right BSpace e E)
RANDOM=${MONKEY_SEED:-7}
for i in $(seq 1 40); do
    batch=()
    for j in 1 2 3 4 5 6 7 8; do batch+=("${keys[$((RANDOM % ${#keys[@]}))]}"); done
    tui_keys "${batch[@]}"
    if [ $((i % 5)) -eq 0 ]; then tui_resize $((RANDOM % 140 + 1)) $((RANDOM % 45 + 1)); fi
    sleep 0.05
done
tui_resize 80 24
tui_keys Escape Escape Escape 2
check "alive after 320 random keys and resizes" tui_alive
check "full frame again at 80x24" "wait_for 'LIVE [12]/[12]' 5"
check "no sanitizer report" no_sanitizer
if [ "$GP_FAILS" -gt 0 ]; then
    cap | sed "s/^/# /"
    tail -n 30 "$GP_DIR/tui.err" "$XDG_STATE_HOME/genuproof/tui.log" 2>/dev/null | sed "s/^/# /"
fi
gp_finish
