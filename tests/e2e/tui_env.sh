#!/usr/bin/env bash
# tui_env.sh - TUI.md §10 check 3: LANG=C writes no byte >= 0x80 (ASCII
# twins of every glyph), NO_COLOR=1 writes no colour SGR and leaves the
# config file alone, TERM=dumb / non-tty stdout print plain tab-separated
# lines.  Raw terminal output is taken with tmux pipe-pane.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_lib.bash"
tui_need_tmux

fake_start --brands brand-a --initial 10 --rate 4 || gp_finish

# --- LANG=C: ASCII only ---
tui_env LANG=C LC_ALL=C
tui_start 80 24 --url "$FAKE_URL" --brand brand-a
tm pipe-pane -o -t "$TUI_SESSION" "cat >> '$GP_DIR/raw_c'"
check "LANG=C: LIVE (ASCII dot)" "wait_for '[*] LIVE 1/1' 10"
for v in 2 3 4 5 6 7 1; do tui_keys "$v"; sleep 0.3; done
tui_keys '?'
sleep 0.3
tui_keys Escape
sleep 0.3
tm pipe-pane -t "$TUI_SESSION"
high=$(LC_ALL=C tr -d '\000-\177' <"$GP_DIR/raw_c" | wc -c)
size=$(wc -c <"$GP_DIR/raw_c")
check "LANG=C: output captured ($size bytes)" '[ "$size" -gt 1000 ]'
check "LANG=C: no byte >= 0x80 in the terminal output ($high found)" '[ "$high" -eq 0 ]'
tm kill-server
sleep 0.2

# --- NO_COLOR=1: no colour SGR; the config file is not rewritten ---
mkdir -p "$XDG_CONFIG_HOME/genuproof"
printf 'theme = light\nbell = off\n' >"$XDG_CONFIG_HOME/genuproof/tui.ini"
sum_before=$(cksum <"$XDG_CONFIG_HOME/genuproof/tui.ini")
TUI_ENV=(LANG=C.UTF-8 LC_ALL=C.UTF-8 NO_COLOR=1)
# the config file is read (no --config none): give the path explicitly
tui_start 80 24 --url "$FAKE_URL" --brand brand-a --config "$XDG_CONFIG_HOME/genuproof/tui.ini"
tm pipe-pane -o -t "$TUI_SESSION" "cat >> '$GP_DIR/raw_nc'"
check "NO_COLOR: LIVE" "wait_for 'LIVE 1/1' 10"
for v in 2 1 7; do tui_keys "$v"; sleep 0.3; done
tui_keys T
sleep 0.3
tm pipe-pane -t "$TUI_SESSION"
colour=$(grep -aoE $'\e\\[[0-9;]*m' "$GP_DIR/raw_nc" | grep -cE $'\e\\[([0-9;]*;)?(3[0-7]|4[0-7]|38|48)(;[0-9;]*)?m' || true)
sgr=$(grep -aoE $'\e\\[[0-9;]*m' "$GP_DIR/raw_nc" | wc -l)
check "NO_COLOR: attributes still used ($sgr SGR)" '[ "$sgr" -gt 0 ]'
check "NO_COLOR: no colour SGR ($colour found)" '[ "$colour" -eq 0 ]'
check "NO_COLOR: capture-pane -e shows no colour" \
    '! cap -e | grep -qE $'"'"'\e\[([0-9;]*;)?(3[0-7]|4[0-7]|38|48)[;m]'"'"
tui_keys q y
wait_for '^EXITED' 5
check "NO_COLOR: config unchanged" '[ "$(cksum <"$XDG_CONFIG_HOME/genuproof/tui.ini")" = "$sum_before" ]'
tm kill-server
sleep 0.2

# --- colours are there without NO_COLOR (the check above can fail) ---
TUI_ENV=(LANG=C.UTF-8 LC_ALL=C.UTF-8)
tui_start 80 24 --url "$FAKE_URL" --brand brand-a
check "colour: LIVE" "wait_for 'LIVE 1/1' 10"
check "colour: SGR colours without NO_COLOR" \
    'cap -e | grep -qE $'"'"'\e\[([0-9;]*;)?(3[0-7]|4[0-7]|38|48)[;m]'"'"
tm kill-server

# --- TERM=dumb and non-tty stdout: plain lines ---
TERM=dumb timeout 3 "$GENUPROOF_BIN" tui --config none --url "$FAKE_URL" --brand brand-a \
    >"$GP_DIR/plain.out" 2>"$GP_DIR/plain.err" </dev/null
lines=$(grep -c . "$GP_DIR/plain.out" || true)
check "TERM=dumb: threat lines printed ($lines)" '[ "$lines" -ge 3 ]'
check "TERM=dumb: 7 tab-separated fields per line" \
    '[ "$(awk -F"\t" "NF != 7" "$GP_DIR/plain.out" | wc -l)" -eq 0 ]'
check "TERM=dumb: no escape sequences" '! grep -q $'"'"'\e'"'"' "$GP_DIR/plain.out"'
check "TERM=dumb: severity column" \
    '[ "$(cut -f2 "$GP_DIR/plain.out" | grep -cvE "^(CRIT|HIGH|MED|LOW)$")" -eq 0 ]'
check "plain: state changes on stderr" 'grep -q "LIVE" "$GP_DIR/plain.err"'
TERM=xterm timeout 2 "$GENUPROOF_BIN" tui --config none --url "$FAKE_URL" --brand brand-a \
    </dev/null 2>/dev/null | cat >"$GP_DIR/pipe.out"
check "non-tty stdout: plain lines" '[ "$(grep -c "	" "$GP_DIR/pipe.out")" -ge 2 ]'
check "no sanitizer report" no_sanitizer
gp_finish
