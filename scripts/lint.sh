#!/usr/bin/env bash
# Static checks (the `lint` stage of scripts/test.sh):
#   * clang-format: every C++ file is formatted with the repo's .clang-format;
#   * module boundaries: tests/lint/check_includes.py (also a ctest, lint.includes);
#   * clang-tidy: .clang-tidy's checks (bugprone, performance, function size) over every source
#     file of the modules, with warnings as errors.
# Usage: scripts/lint.sh [BUILD_DIR]   BUILD_DIR holds a clang build's compile_commands.json
#                                       (default build-asan, which scripts/test.sh builds with clang).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${1:-$ROOT/build-asan}
cd "$ROOT"

echo "lint: clang-format"
git ls-files '*.cc' '*.h' ':!tests/lint/fixture' | xargs clang-format --dry-run --Werror

echo "lint: module boundaries"
python3 tests/lint/check_includes.py

echo "lint: clang-tidy ($BUILD/compile_commands.json)"
[ -f "$BUILD/compile_commands.json" ] || { echo "lint: no $BUILD/compile_commands.json" >&2; exit 1; }
mapfile -t sources < <(git ls-files 'proxy/*.cc' 'parser/*.cc' 'config/*.cc')
log=$(mktemp)
if ! run-clang-tidy -quiet -j "$(nproc)" -p "$BUILD" "${sources[@]}" >"$log" 2>&1; then
  grep -E 'warning:|error:' "$log" | sort -u
  echo "lint: clang-tidy found problems (full output: $log)" >&2
  exit 1
fi
rm -f "$log"
echo "lint: clean"
