#!/usr/bin/env bash
# Static checks:
#   * no merge conflict markers left in any tracked file;
#   * clang-format: every C++ file is formatted with the repo's .clang-format;
#   * module boundaries: tests/lint/check_includes.py (also a ctest, lint.includes);
#   * no raw byte reads or writes outside wire/ and the binary formats' owners:
#     tests/lint/check_byte_reads.py (also a ctest, lint.byte_reads);
#   * with --tidy, clang-tidy: .clang-tidy's checks (bugprone, performance, function size) over
#     every source file of the modules, warnings as errors, one file per core (run-clang-tidy).
#     Any finding fails. The `lint` stage of scripts/test.sh runs them all.
# Usage: scripts/lint.sh [--tidy] [BUILD_DIR]   BUILD_DIR holds a clang build's
#        compile_commands.json (default build-asan, which scripts/test.sh configures with clang;
#        only configured, nothing needs to be built).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TIDY=0
if [ "${1:-}" = "--tidy" ]; then
  TIDY=1
  shift
fi
BUILD=${1:-$ROOT/build-asan}
cd "$ROOT"

echo "lint: merge conflict markers"
if git grep -n -E '^(<<<<<<<|>>>>>>>) ' -- . ':!scripts/lint.sh'; then
  echo "lint: the lines above are merge conflict markers; resolve them" >&2
  exit 1
fi

echo "lint: clang-format"
git ls-files '*.cc' '*.h' ':!tests/lint/fixture' | xargs clang-format --dry-run --Werror

echo "lint: module boundaries"
python3 tests/lint/check_includes.py

echo "lint: raw byte reads outside wire/ and the binary formats' owners"
python3 tests/lint/check_byte_reads.py

if [ "$TIDY" -eq 0 ]; then
  echo "lint: clean (clang-tidy not asked for: --tidy)"
  exit 0
fi

echo "lint: clang-tidy ($BUILD/compile_commands.json)"
[ -f "$BUILD/compile_commands.json" ] || { echo "lint: no $BUILD/compile_commands.json" >&2; exit 1; }
# Generated headers the sources include (a build makes them; a configured tree may not have).
cmake --build "$BUILD" --target sw_generated_headers >/dev/null
mapfile -t sources < <(git ls-files 'proxy/*.cc' 'parser/*.cc' 'config/*.cc')
log=$(mktemp)
SECONDS=0
if ! run-clang-tidy -quiet -j "$(nproc)" -p "$BUILD" "${sources[@]}" >"$log" 2>&1; then
  sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E 'warning:|error:' | sort -u
  echo "lint: clang-tidy found problems in ${SECONDS} s (full output: $log)" >&2
  exit 1
fi
rm -f "$log"
echo "lint: clean (clang-tidy: ${#sources[@]} files in ${SECONDS} s on $(nproc) cores)"
