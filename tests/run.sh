#!/usr/bin/env bash
# Runs every test and ends with "N passed, N failed".
#   unit:  $B/san/tests/test_*  (cmocka, TAP output: one line per test)
#   fuzz:  $B/san/fuzz/fuzz_*   (replays tests/fuzz/corpus/<name>/ under ASan/UBSan)
#   e2e:   tests/e2e/*.sh          (print "PASS: name" / "FAIL: name"; may print "SKIP: name")
# TESTS=pattern limits the run to matching names.
set -u
cd "$(dirname "$0")/.."
B="${B:-build}"
export GENUPROOF_BIN="${GENUPROOF_BIN:-$PWD/$B/san/genuproof}"
export GENUPROOF_TIME_SCALE="${GENUPROOF_TIME_SCALE:-0.05}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:halt_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export CMOCKA_MESSAGE_OUTPUT=TAP
pass=0 fail=0 skip=0
failed_names=()
logdir=$(mktemp -d /tmp/gp-tests.XXXXXX)
pat="${TESTS:-}"

count_output() { # $1 = name, $2 = log file, $3 = exit code
    local name=$1 log=$2 rc=$3 p f s
    p=$(grep -cE '^(ok [0-9]+|PASS: )' "$log" || true)
    f=$(grep -cE '^(not ok [0-9]+|FAIL: )' "$log" || true)
    s=$(grep -cE '^SKIP: ' "$log" || true)
    pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
    if [ "$f" -gt 0 ]; then failed_names+=("$name"); fi
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        # crashed or exited non-zero without reporting a failure: count it
        fail=$((fail + 1)); failed_names+=("$name (exit $rc)")
        echo "FAIL: $name exited with $rc"; tail -n 30 "$log"
    fi
}

run_one() { # $1 = name, rest = command
    local name=$1; shift
    [ -n "$pat" ] && [[ "$name" != *$pat* ]] && return
    local log="$logdir/$name.log"
    echo "== $name"
    local t0=$SECONDS
    timeout --kill-after=10 "${TEST_TIMEOUT:-300}" "$@" >"$log" 2>&1
    local rc=$?
    grep -E '^(ok |not ok |PASS: |FAIL: |SKIP: |#)' "$log" | grep -vE '^# *$' | sed 's/^/   /' | head -n 400
    if grep -qE '^(not ok|FAIL: )' "$log"; then sed -n '1,200p' "$log" | grep -vE '^(ok |PASS: )' | head -n 80; fi
    count_output "$name" "$log" "$rc"
    echo "   ($((SECONDS - t0))s)"
}

for t in $B/san/tests/test_*; do
    [ -x "$t" ] || continue
    run_one "$(basename "$t")" "$t"
done
for t in $B/san/fuzz/fuzz_*; do
    [ -x "$t" ] || continue
    n=$(basename "$t")
    run_one "$n" "$t" "tests/fuzz/corpus/${n#fuzz_}"
done
for t in tests/e2e/*.sh; do
    [ -f "$t" ] || continue
    run_one "$(basename "$t" .sh)" bash "$t"
done

echo
if [ ${#failed_names[@]} -gt 0 ]; then
    echo "failed: ${failed_names[*]}"
fi
echo "logs: $logdir"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
