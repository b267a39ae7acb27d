#!/usr/bin/env bash
# tests/e2e/format.sh - every C source and header of the repository is
# formatted with the repository's .clang-format (`make format` fixes it).
# SKIP when clang-format is missing (`make deps` installs it).
set -u
cd "$(dirname "$0")/../.." || exit 1
if ! command -v clang-format >/dev/null 2>&1; then
    echo "SKIP: format (no clang-format)"
    exit 0
fi
mapfile -t files < <(find src tests bench -name node_modules -prune -o \( -name '*.c' -o -name '*.h' \) -print | sort)
bad=()
for f in "${files[@]}"; do
    clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ "${#files[@]}" -gt 100 ] && [ "${#bad[@]}" -eq 0 ]; then
    echo "PASS: ${#files[@]} C files clang-formatted"
else
    echo "FAIL: ${#bad[@]} of ${#files[@]} C files not clang-formatted (make format): ${bad[*]:0:20}"
fi
