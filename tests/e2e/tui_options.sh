#!/usr/bin/env bash
# tui_options.sh - `genuproof tui` options: --help from the table, bad
# values refused, config file errors as file:line, and precedence
# flags > environment > ~/.config/genuproof/tui.ini (checked in plain
# mode: threat lines appear only when the winning URL is the live one).
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/tui_lib.bash"
tui_need_tmux

"$GENUPROOF_BIN" tui --help >"$GP_DIR/help" 2>&1
check "--help lists the options" 'grep -q -- "--kiosk" "$GP_DIR/help" && grep -q -- "--replay FILE" "$GP_DIR/help"'
"$GENUPROOF_BIN" tui --config none --color bogus --brand a >/dev/null 2>"$GP_DIR/e1"
rc=$?
check "bad --color refused with status 2" '[ $rc -eq 2 ] && grep -q "auto|always|never" "$GP_DIR/e1"'
"$GENUPROOF_BIN" tui --config none >/dev/null 2>"$GP_DIR/e2" </dev/null
rc=$?
check "no brand: status 2 with a hint" '[ $rc -eq 2 ] && grep -q -- "--brand" "$GP_DIR/e2"'

conf="$XDG_CONFIG_HOME/genuproof/tui.ini"
mkdir -p "$(dirname "$conf")"
printf '# comment\nbogus = 1\n' >"$conf"
"$GENUPROOF_BIN" tui --brand a </dev/null >/dev/null 2>"$GP_DIR/e3"
rc=$?
check "config error reported as file:line" '[ $rc -eq 2 ] && grep -q "tui.ini:2: unknown option" "$GP_DIR/e3"'

fake_start --brands brand-a --rate 20 || gp_finish
dead=http://127.0.0.1:9
plain_lines() { # runs 4 s in plain mode; prints the number of threat lines
    timeout 4 "$@" </dev/null 2>/dev/null | grep -c "	" || true
}
printf 'url = %s\nbrand = brand-a\n' "$FAKE_URL" >"$conf"
n=$(plain_lines "$GENUPROOF_BIN" tui --plain)
check "config file used ($n lines)" '[ "$n" -ge 3 ]'
printf 'url = %s\nbrand = brand-a\n' "$dead" >"$conf"
n=$(GENUPROOF_URL="$FAKE_URL" plain_lines "$GENUPROOF_BIN" tui --plain)
check "environment beats the config file ($n lines)" '[ "$n" -ge 3 ]'
n=$(GENUPROOF_URL="$FAKE_URL" plain_lines "$GENUPROOF_BIN" tui --plain --url "$dead")
check "flag beats the environment ($n lines)" '[ "$n" -eq 0 ]'
n=$(plain_lines "$GENUPROOF_BIN" tui --plain --config none --url "$FAKE_URL" --brand brand-a)
check "--config none ignores the file ($n lines)" '[ "$n" -ge 3 ]'

# --all-brands: the brand list comes from the server (admin key)
tui_env LANG=C.UTF-8 LC_ALL=C.UTF-8
fake_stop
fake_start --brands brand-a,brand-b --no-admin || gp_finish
tui_start 80 24 --url "$FAKE_URL" --all-brands
check "--all-brands without admin: says so" "wait_for 'needs an admin key' 10"
check "--all-brands without admin: still running" tui_alive
tm kill-server
fake_stop
fake_start --brands brand-a,brand-b || gp_finish
tui_start 80 24 --url "$FAKE_URL" --all-brands
check "--all-brands: both listed brands stream" "wait_for 'LIVE 2/2' 10"
check "no sanitizer report" no_sanitizer
gp_finish
