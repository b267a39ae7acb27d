# tests/e2e/tui_lib.bash - helpers for the dashboard's tmux tests (sourced
# by tests/e2e/tui_*.sh after lib.bash; not a test itself).
#
#   tui_need_tmux              prints SKIP and exits 0 when tmux is missing
#   fake_start [args...]       starts tests/tools/fake_sse.py on 127.0.0.1
#                              (FAKE_PORT, FAKE_PID, FAKE_URL, FAKE_LOG)
#   fake_stop                  stops it
#   fake_ctl PATH              GET a /_ctl/ URL of the fake server
#   tui_start W H [args...]    runs "$GENUPROOF_BIN tui" in a detached tmux
#                              session of W x H on a private socket
#   tui_env VAR=VAL...         extra environment for the next tui_start
#   cap [-e]                   the pane as text (-e: with SGR sequences)
#   wait_for REGEX SECS        polls the pane until REGEX matches (0/1)
#   wait_gone REGEX SECS       polls until REGEX no longer matches
#   tui_alive                  the dashboard process still runs
#   tui_keys KEYS...           tmux send-keys
#   tui_resize W H             resize-window
TUI_SOCK="gp-tui-$$-$RANDOM"
TUI_SESSION=gp
TUI_ENV=()
TUI_PIDFILE="$GP_DIR/tui.pid"
FAKE_PID=""
FAKE_PORT=0
FAKE_LOG="$GP_DIR/fake.log"
export HOME="$GP_DIR/home"
export XDG_STATE_HOME="$GP_DIR/state"
export XDG_CONFIG_HOME="$GP_DIR/config"
mkdir -p "$HOME" "$XDG_STATE_HOME" "$XDG_CONFIG_HOME"
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

printf 'set -g status off\nset -g default-terminal screen\nset -g escape-time 0\n' >"$GP_DIR/tmux.conf"
tm() { tmux -L "$TUI_SOCK" -f "$GP_DIR/tmux.conf" "$@"; }

tui_cleanup() {
    tm kill-server 2>/dev/null
    if [ -n "$FAKE_PID" ]; then kill "$FAKE_PID" 2>/dev/null; wait "$FAKE_PID" 2>/dev/null; fi
    gp_cleanup
}
trap tui_cleanup EXIT

tui_need_tmux() {
    if ! command -v tmux >/dev/null 2>&1; then
        echo "SKIP: $(basename "$0"): tmux is not installed (make deps installs it)"
        exit 0
    fi
    if ! command -v python3 >/dev/null 2>&1; then
        echo "SKIP: $(basename "$0"): python3 is not installed"
        exit 0
    fi
}

fake_start() {
    local out="$GP_DIR/fake.out.$RANDOM"
    # heartbeats faster than the scaled stall limit (15 s x 0.05), unless
    # the caller says otherwise (the last --heartbeat-ms wins)
    python3 "$REPO/tests/tools/fake_sse.py" --log "$FAKE_LOG" --heartbeat-ms 200 "$@" \
        >"$out" 2>&1 &
    FAKE_PID=$!
    local i
    for i in $(seq 1 100); do
        if grep -q '^PORT ' "$out" 2>/dev/null; then
            FAKE_PORT=$(awk '/^PORT /{print $2; exit}' "$out")
            FAKE_URL="http://127.0.0.1:$FAKE_PORT"
            return 0
        fi
        sleep 0.05
    done
    echo "FAIL: fake SSE server did not start"; cat "$out"; GP_FAILS=$((GP_FAILS + 1))
    return 1
}

fake_stop() {
    [ -n "$FAKE_PID" ] || return 0
    kill "$FAKE_PID" 2>/dev/null
    wait "$FAKE_PID" 2>/dev/null
    FAKE_PID=""
}

fake_ctl() { curl -s --max-time 5 "$FAKE_URL$1"; }

tui_env() { TUI_ENV+=("$@"); }

tui_start() {
    local w=$1 h=$2; shift 2
    {
        echo '#!/usr/bin/env bash'
        printf 'echo $$ > %q\n' "$TUI_PIDFILE"
        printf 'exec env'
        printf ' %q' "${TUI_ENV[@]}" "$GENUPROOF_BIN" tui --config none "$@"
        printf ' 2>>%q\n' "$GP_DIR/tui.err"
    } >"$GP_DIR/run_tui.sh"
    rm -f "$TUI_PIDFILE"
    tm new-session -d -s "$TUI_SESSION" -x "$w" -y "$h" \
        "bash '$GP_DIR/run_tui.sh'; echo EXITED \$?; sleep 600"
    local i
    for i in $(seq 1 100); do [ -s "$TUI_PIDFILE" ] && break; sleep 0.05; done
}

cap() { tm capture-pane -p "$@" -t "$TUI_SESSION"; }

now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }

# Polls with one tmux call per round and bash regexes (no grep fork): the
# machine may be slow to spawn processes.
wait_for() {
    local re=$1 secs=$2 end screen
    end=$(($(now_ms) + ${secs%.*} * 1000))
    while :; do
        screen=$(cap)
        if [[ $screen =~ $re ]]; then return 0; fi
        [ "$(now_ms)" -lt "$end" ] || return 1
        sleep 0.02
    done
}

wait_gone() {
    local re=$1 secs=$2 end screen
    end=$(($(now_ms) + ${secs%.*} * 1000))
    while :; do
        screen=$(cap)
        if ! [[ $screen =~ $re ]]; then return 0; fi
        [ "$(now_ms)" -lt "$end" ] || return 1
        sleep 0.02
    done
}

tui_pid() { cat "$TUI_PIDFILE" 2>/dev/null; }
tui_alive() { local p; p=$(tui_pid); [ -n "$p" ] && kill -0 "$p" 2>/dev/null && ! cap | grep -q '^EXITED'; }
tui_keys() { tm send-keys -t "$TUI_SESSION" "$@"; }
tui_resize() { tm resize-window -t "$TUI_SESSION" -x "$1" -y "$2"; }

# No sanitizer report on stderr (tui.err) or in the log stderr goes to
# while curses owns the terminal.
no_sanitizer() { ! grep -qs "Sanitizer" "$GP_DIR/tui.err" "$XDG_STATE_HOME/genuproof/tui.log"; }

# Threat rows on screen: lines holding a HH:MM:SSZ time and a severity.
feed_rows() { cap | grep -cE '[0-9]{2}:[0-9]{2}:[0-9]{2}Z +(CRIT|HIGH|MED|LOW)'; }
