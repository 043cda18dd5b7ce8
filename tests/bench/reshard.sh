#!/usr/bin/env bash
# The reshard scenario at a larger scale (run by hand; not a pass/fail benchmark): the integration
# suites `reshard` (4 -> 5 shards, no faults), `reshard_faults` (the mover killed three times, an
# instance restarted, a shard's backends terminated, the catalog cut off) and `reshard_scale` (the
# seeds' scale: 16 shards -> 20, 4096 buckets, 500 rows per bucket on average, about 2 million
# rows; not a ctest suite) with more rows per bucket, more clients and no pause between a
# client's transactions. Each prints its figures: the plan's rows against the minimum any plan
# moves, buckets and rows moved, cutover pause per migration, write pause per moved bucket,
# write latency of moved and other buckets during the rebalance, errors by SQLSTATE, total time,
# peak lag, catch-up apply lag per stream, and the history checker's counts (which must all be 0;
# the suites fail otherwise). reshard_scale adds the copy rate against plain
# `COPY TO | COPY FROM` pipes of the same cluster (a whole table, and 51 buckets by the mover's
# filter), cleanup time, each instance's memory and the
# directory version before and after.
#
#   tests/bench/reshard.sh
#   ROWS_PER_BUCKET=100 CLIENTS=32 tests/bench/reshard.sh
#   SUITES=reshard_scale tests/bench/reshard.sh                  # 16 -> 20, ~2M rows
#   SUITES=reshard_scale ROWS_PER_BUCKET=100 tests/bench/reshard.sh   # the same, ~400k rows
#
# Environment: ROWS_PER_BUCKET (50; reshard_scale 500), CLIENTS (16), THINK_MS (0), SUITES
# ("reshard reshard_faults"), OLD_SHARDS (16) and ADDED_SHARDS (4) for reshard_scale,
# COPY_ROWS_PER_SEC (the mover's throttle in reshard_scale, 1000000), COPY_STREAMS
# (mover.copy_streams in reshard_scale; default shardwire's), RESHARD_SEED (the faults' order and
# moments; default random, printed), BUILD_DIR (build), NICE (10: the machine is shared), OUT (a
# file that gets a copy of the output).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
SUITES=${SUITES:-reshard reshard_faults}
export RESHARD_CLIENTS=${CLIENTS:-16}
export RESHARD_THINK_MS=${THINK_MS:-0}
export RESHARD_OLD_SHARDS=${OLD_SHARDS:-16}
export RESHARD_ADDED_SHARDS=${ADDED_SHARDS:-4}
export RESHARD_COPY_ROWS_PER_SEC=${COPY_ROWS_PER_SEC:-1000000}
export RESHARD_COPY_STREAMS=${COPY_STREAMS:-0}
NICE=${NICE:-10}
OUT=${OUT:-/dev/null}

if [ ! -x "$BUILD_DIR/tests/integration/integration_tests" ]; then
  echo "bench: building (Release) in $BUILD_DIR" >&2
  cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$BUILD_DIR" --target integration_tests shardwire >/dev/null
fi

for suite in $SUITES; do
  default_rows=50
  [ "$suite" = reshard_scale ] && default_rows=500
  export RESHARD_ROWS_PER_BUCKET=${ROWS_PER_BUCKET:-$default_rows}
  echo "== $suite: $RESHARD_ROWS_PER_BUCKET rows per bucket, $RESHARD_CLIENTS clients, think $RESHARD_THINK_MS ms" | tee -a "$OUT"
  start=$(date +%s)
  nice -n "$NICE" "$BUILD_DIR/tests/integration/integration_tests" -ts="$suite" 2>&1 |
    grep -v '^20[0-9][0-9]-' | grep -E 'MESSAGE|^[a-z]|^  |Status|SUCCESS|ERROR|FAILED' | grep -v '^  logged' |
    tee -a "$OUT"
  echo "== $suite: $(( $(date +%s) - start )) s in all" | tee -a "$OUT"
done
