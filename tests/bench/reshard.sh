#!/usr/bin/env bash
# The reshard scenario at a larger scale (run by hand; not a pass/fail benchmark): the integration
# suites `reshard` (no faults) and `reshard_faults` (the mover killed three times, an instance
# restarted, a shard's backends terminated, the catalog cut off) with more rows per bucket, more
# clients and no pause between a client's transactions. Each prints its figures: buckets and rows
# moved, cutover pause per migration, write latency of moved and other buckets during the
# rebalance, errors by SQLSTATE, total time, peak lag and the history checker's counts (which
# must all be 0; the suites fail otherwise).
#
#   tests/bench/reshard.sh
#   ROWS_PER_BUCKET=100 CLIENTS=32 tests/bench/reshard.sh
#
# Environment: ROWS_PER_BUCKET (50), CLIENTS (16), THINK_MS (0), SUITES ("reshard reshard_faults"),
# RESHARD_SEED (the faults' order and moments; default random, printed), BUILD_DIR (build).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
SUITES=${SUITES:-reshard reshard_faults}
export RESHARD_ROWS_PER_BUCKET=${ROWS_PER_BUCKET:-50}
export RESHARD_CLIENTS=${CLIENTS:-16}
export RESHARD_THINK_MS=${THINK_MS:-0}

if [ ! -x "$BUILD_DIR/tests/integration/integration_tests" ]; then
  echo "bench: building (Release) in $BUILD_DIR" >&2
  cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$BUILD_DIR" --target integration_tests shardwire >/dev/null
fi

for suite in $SUITES; do
  echo "== $suite: $RESHARD_ROWS_PER_BUCKET rows per bucket, $RESHARD_CLIENTS clients, think $RESHARD_THINK_MS ms"
  start=$(date +%s)
  "$BUILD_DIR/tests/integration/integration_tests" -ts="$suite" 2>&1 |
    grep -v '^20[0-9][0-9]-' | grep -E 'MESSAGE|^[a-z]|^  |Status' | grep -v '^  logged'
  echo "== $suite: $(( $(date +%s) - start )) s in all"
done
