#!/usr/bin/env bash
# The proxy alone, with 1 and with 2 workers (run by hand; not a pass/fail test). Behind it is
# bench_fast_backend (tests/bench/fast_backend.cc), a stand-in that answers every statement at
# once, so the server's CPU does not cap what a second worker can add on a small machine. Both
# shardwire processes run "sharded" (pgbench_accounts and pgbench_history sharded by aid, no
# catalog: the static layout, one shard), so every statement is parsed and routed; they differ
# only in `workers`. pgbench runs a keyed select (`SELECT abalance FROM pgbench_accounts WHERE
# aid = :aid`) in each MODE with each CLIENTS count against: the stand-in directly (what the
# stand-in and pgbench can do without a proxy), shardwire with 1 worker, shardwire with 2, one
# after the other in each round (interleaved, so drift hits all alike). It prints tps, proxy CPU
# per transaction (utime + stime from /proc over the run / transactions) and the ratios 2 workers
# / 1 worker of both: throughput should rise with the second worker, CPU per transaction should
# not. pgbench, the stand-in and the proxy share the machine's cores: with 2 cores the ceiling
# is what is left to the proxy, printed as the direct column.
#
#   tests/bench/workers.sh
#   SECS=10 ROUNDS=3 CLIENTS="8 32 64" tests/bench/workers.sh
#
# Environment: SECS (5), ROUNDS (2), MODES ("simple prepared"), CLIENTS ("8 32"), PGBENCH_THREADS
# (2), POOL_SIZE (40), SHARDWIRE_BIN (default build/proxy/app/shardwire, built if missing),
# FAST_BACKEND_BIN (default build/tests/bench/bench_fast_backend, built if missing), KEEP=1.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SECS=${SECS:-5}
ROUNDS=${ROUNDS:-2}
MODES=${MODES:-"simple prepared"}
CLIENTS=${CLIENTS:-"8 32"}
PGBENCH_THREADS=${PGBENCH_THREADS:-2}
POOL_SIZE=${POOL_SIZE:-40}
PGBIN=${PG_BINDIR:-/usr/lib/postgresql/15/bin}

source "$ROOT/tests/bench/common.sh"
FAST=$(bench_program bench_fast_backend "${FAST_BACKEND_BIN:-}")
require_binaries "$PGBIN/pgbench" "$FAST"

FAST_PID=""
W1_PID=""
W2_PID=""
BENCH_PID_VARS="FAST_PID W1_PID W2_PID"
WORK=$(mktemp -d /tmp/shardwire-workers-XXXXXX)
trap bench_cleanup EXIT
cd "$WORK"

FAST_PORT=$(pick_port)
"$FAST" "$FAST_PORT" >"$WORK/fast_backend.log" 2>&1 &
FAST_PID=$!
disown
wait_port "$FAST_PORT" bench_fast_backend

for workers in 1 2; do
  port=$(pick_port)
  {
    shardwire_yaml_head "$port" "$workers" "$POOL_SIZE"
    cat <<YAML
shards:
  - { name: s0, dsn: "host=127.0.0.1 port=$FAST_PORT dbname=app user=app password=secret" }
sharding:
  buckets: 4096
  default_shard: s0
  tables:
    - { name: pgbench_accounts, key: aid, type: integer }
    - { name: pgbench_history, key: aid, type: integer }
YAML
  } >"$WORK/w$workers.yaml"
  start_shardwire "w$workers" "$port" "W${workers}_PID"
  printf -v "W${workers}_PORT" '%s' "$port"
done

cat >"$WORK/select.sql" <<'SQL'
\set aid random(1, 1000000)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
SQL

conninfo() {
  case $1 in
    direct) echo "host=127.0.0.1 port=$FAST_PORT dbname=app user=app sslmode=disable" ;;
    w1) echo "host=127.0.0.1 port=$W1_PORT dbname=app user=app password=secret sslmode=disable" ;;
    w2) echo "host=127.0.0.1 port=$W2_PORT dbname=app user=app password=secret sslmode=disable" ;;
  esac
}
pid_of() {
  case $1 in
    w1) echo "$W1_PID" ;;
    w2) echo "$W2_PID" ;;
    *) echo "" ;;
  esac
}

for round in $(seq 1 "$ROUNDS"); do
  for mode in $MODES; do
    for clients in $CLIENTS; do
      # Odd rounds run 1 worker first, even rounds 2 workers first.
      order="direct w1 w2"
      [ $((round % 2)) = 0 ] && order="direct w2 w1"
      for target in $order; do
        key="$target/$mode/$clients"
        pgbench_cell "$key" "$(pid_of "$target")" -f "$WORK/select.sql" -M "$mode" -T "$SECS" -c "$clients" \
          -j "$PGBENCH_THREADS" "$(conninfo "$target")" || continue
        printf 'bench: %-20s tps %10.1f\n' "$key" "$CELL_TPS" >&2
      done
    done
  done
done

echo
echo "pgbench -T $SECS -f keyed select -M <mode> -j $PGBENCH_THREADS, $ROUNDS round(s), pool size $POOL_SIZE, bench_fast_backend behind shardwire (sharded, static layout), $(nproc) CPUs"
echo
echo "| mode | clients | tps direct (stand-in) | tps 1 worker | tps 2 workers | tps 2/1 | CPU µs/tx 1 worker | CPU µs/tx 2 workers | CPU 2/1 |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for mode in $MODES; do
  for clients in $CLIENTS; do
    t1=$(tps_of "w1/$mode/$clients")
    t2=$(tps_of "w2/$mode/$clients")
    c1=$(cpu_of "w1/$mode/$clients")
    c2=$(cpu_of "w2/$mode/$clients")
    echo "| $mode | $clients | $(tps_of "direct/$mode/$clients") | $t1 | $t2 | $(ratio "$t2" "$t1") | $c1 | $c2 | $(ratio "$c2" "$c1") |"
  done
done
