#!/usr/bin/env bash
# tui_hangup.sh - the dashboard exits when its terminal goes away even if
# no SIGHUP reaches it (a program between it and the shell, such as
# make in `make demo`, took the signal, or it runs in a session of its
# own): input then reads as end of file for ever, and before this was
# handled the dashboard spun on it at 100 % CPU until killed.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_lib.bash"
tui_need_tmux
if ! command -v setsid >/dev/null 2>&1; then
    echo "SKIP: tui_hangup.sh (no setsid)"
    exit 0
fi

fake_start --brands brand-a --initial 3 --rate 2 || gp_finish
{
    echo '#!/usr/bin/env bash'
    printf 'echo $$ > %q\n' "$TUI_PIDFILE"
    printf 'exec env LANG=C.UTF-8 LC_ALL=C.UTF-8 %q tui --config none --url %q --brand brand-a 2>>%q\n' \
        "$GENUPROOF_BIN" "$FAKE_URL" "$GP_DIR/tui.err"
} >"$GP_DIR/run_tui.sh"
# setsid: a session of its own, so closing the pane sends it no SIGHUP
tm new-session -d -s "$TUI_SESSION" -x 80 -y 24 "setsid -w bash '$GP_DIR/run_tui.sh'"
for _ in $(seq 1 100); do [ -s "$TUI_PIDFILE" ] && break; sleep 0.05; done
PID=$(tui_pid)
check "dashboard LIVE" "wait_for 'LIVE 1/1' 10"
check "running" 'kill -0 "$PID" 2>/dev/null'
tm kill-server
gone=0
for _ in $(seq 1 100); do
    if ! kill -0 "$PID" 2>/dev/null; then gone=1; break; fi
    sleep 0.05
done
if [ "$gone" = 0 ]; then
    CPU=$(ps -o %cpu= -p "$PID" 2>/dev/null)
    kill -9 "$PID" 2>/dev/null
fi
check "exits within 5 s of the terminal closing (cpu ${CPU:-0}% if not)" '[ "$gone" = 1 ]'
check "no sanitizer report" no_sanitizer
gp_finish
