#!/usr/bin/env bash
# tui_bench.sh - dashboard cost (issue 6 benchmark): CPU of an idle
# connected `genuproof tui` over 30 s, then 1,000 alerts/s for 10 s from
# tests/tools/fake_sse.py while keys are pressed: CPU, key-to-redraw p50/p95
# (the dashboard's own measurement, GENUPROOF_TUI_STATS), bytes written to
# the terminal per second (tmux pipe-pane) and RSS.  Runs the release
# binary (./genuproof, `make` first) unless GENUPROOF_BIN is set.
#   IDLE_S=30 FIRE_S=10 RATE=1000 bench/tui_bench.sh
# KEYS="g t" keeps the feed following the newest rows while keys are
# pressed (every frame scrolls); the default "j k" moves the selection,
# which stops follow mode (rows stay put, +N counts).
set -u
cd "$(dirname "$0")/.."
export GENUPROOF_BIN="${GENUPROOF_BIN:-$PWD/genuproof}"
export GENUPROOF_TIME_SCALE=1
IDLE_S=${IDLE_S:-30}
FIRE_S=${FIRE_S:-10}
RATE=${RATE:-1000}
read -r -a KEYSEQ <<<"${KEYS:-j k}"
source tests/e2e/lib.bash
source tests/e2e/tui_lib.bash
tui_need_tmux
[ -x "$GENUPROOF_BIN" ] || { echo "build first: make (no $GENUPROOF_BIN)"; exit 1; }
HZ=$(getconf CLK_TCK)

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }
hwm_kb() { awk '/^VmHWM/ { print $2 }' "/proc/$1/status"; }

fake_start --brands brand-a,brand-b --rate "$RATE" --initial 200 --heartbeat-ms 3000 || exit 1
fake_ctl /_ctl/pause >/dev/null
tui_env LANG=C.UTF-8 LC_ALL=C.UTF-8 "GENUPROOF_TUI_STATS=$GP_DIR/stats.json"
tui_start 80 24 --url "$FAKE_URL" --brand brand-a,brand-b
wait_for 'LIVE 2/2' 10 || { echo "dashboard did not go LIVE"; cap; exit 1; }
pid=$(tui_pid)
tui_keys 2
sleep 2

# --- idle: connected, heartbeats only ---
tm pipe-pane -o -t "$TUI_SESSION" "cat >> '$GP_DIR/idle.raw'"
c0=$(cpu_ticks "$pid")
sleep "$IDLE_S"
c1=$(cpu_ticks "$pid")
tm pipe-pane -t "$TUI_SESSION"
idle_cpu=$(awk -v a="$c0" -v b="$c1" -v hz="$HZ" -v s="$IDLE_S" 'BEGIN { printf "%.2f", (b - a) / hz / s * 100 }')
idle_bps=$(awk -v n="$(wc -c <"$GP_DIR/idle.raw")" -v s="$IDLE_S" 'BEGIN { printf "%.0f", n / s }')
idle_rss=$(rss_kb "$pid")

# --- firehose ---
tm pipe-pane -o -t "$TUI_SESSION" "cat >> '$GP_DIR/fire.raw'"
c0=$(cpu_ticks "$pid")
s0=$(fake_ctl /_ctl/status | jq -r .seq)
fake_ctl /_ctl/resume >/dev/null
t_end=$(($(now_ms) + FIRE_S * 1000))
keys=0
while [ "$(now_ms)" -lt "$t_end" ]; do
    tui_keys "${KEYSEQ[$((keys % ${#KEYSEQ[@]}))]}"
    keys=$((keys + 1))
    sleep 0.1
done
fake_ctl /_ctl/pause >/dev/null
c1=$(cpu_ticks "$pid")
s1=$(fake_ctl /_ctl/status | jq -r .seq)
tm pipe-pane -t "$TUI_SESSION"
fire_cpu=$(awk -v a="$c0" -v b="$c1" -v hz="$HZ" -v s="$FIRE_S" 'BEGIN { printf "%.1f", (b - a) / hz / s * 100 }')
fire_bps=$(awk -v n="$(wc -c <"$GP_DIR/fire.raw")" -v s="$FIRE_S" 'BEGIN { printf "%.0f", n / s }')
fire_rss=$(rss_kb "$pid")
hwm=$(hwm_kb "$pid")
tui_keys q y
wait_for '^EXITED' 10

echo "tui bench: $(uname -m), $(nproc) cores, binary $GENUPROOF_BIN"
printf '%-44s %s\n' "idle CPU (${IDLE_S} s, 2 streams)" "${idle_cpu} % of a core"
printf '%-44s %s\n' "idle bytes to the terminal" "${idle_bps} B/s"
printf '%-44s %s\n' "idle RSS" "$((idle_rss / 1024)) MB"
printf '%-44s %s\n' "firehose alerts delivered" "$((s1 - s0)) in ${FIRE_S} s ($(((s1 - s0) / FIRE_S))/s)"
printf '%-44s %s\n' "firehose CPU" "${fire_cpu} % of a core"
printf '%-44s %s\n' "firehose bytes to the terminal" "${fire_bps} B/s"
printf '%-44s %s\n' "firehose RSS / peak" "$((fire_rss / 1024)) MB / $((hwm / 1024)) MB"
printf '%-44s %s\n' "keys sent" "$keys"
if [ -s "$GP_DIR/stats.json" ]; then
    jq -r '"key-to-redraw p50 / p95 / max                \(.key_p50_ms) / \(.key_p95_ms) / \(.key_max_ms) ms (\(.key_samples) keys)",
           "redraws / cells written                      \(.redraws) / \(.cells)",
           "threats held in the ring                     \(.threats)"' "$GP_DIR/stats.json"
fi
