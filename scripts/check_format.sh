#!/usr/bin/env bash
# Fails when a C or C++ source tracked by git is not formatted with
# clang-format-22 (LLVM style, .clang-format). Fix with:
#   scripts/check_format.sh --fix
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
fmt=$(command -v clang-format-22 || true)
[ -n "$fmt" ] || { echo "check_format: clang-format-22 is missing (scripts/setup.sh installs it)" >&2; exit 1; }
mapfile -t files < <(git ls-files -co --exclude-standard -- '*.c' '*.h' '*.cpp' | grep -v '^build')
if [ "${1:-}" = "--fix" ]; then
  "$fmt" -i "${files[@]}"
  exit 0
fi
"$fmt" --dry-run -Werror "${files[@]}"
echo "check_format: ${#files[@]} files formatted"
