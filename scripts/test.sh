#!/usr/bin/env bash
# Installs what is missing, builds (Release, in build/) and runs the whole test suite:
# unit, routing and integration tests (real PostgreSQL 15 clusters, psql, pgbench).
# Extra arguments go to ctest, e.g. `scripts/test.sh -L integration` or `-R integration.pool`.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}

"$ROOT/scripts/install-deps.sh"

cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD_DIR"

cd "$BUILD_DIR"
ctest --output-on-failure -j2 "$@"
