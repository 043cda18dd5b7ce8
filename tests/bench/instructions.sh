#!/usr/bin/env bash
# User-space instructions per transaction of shardwire sharded, counted by valgrind's callgrind
# (run by hand; not a pass/fail test). Unlike CPU time on a shared machine, the count barely
# moves between runs, so two binaries can be compared one after the other: BASE_BIN (e.g. main's
# build) and SHARDWIRE_BIN. Setup as syscalls.sh's "sharded": pgbench_accounts and
# pgbench_history sharded by aid, one shard owning every bucket, so every statement is parsed
# and routed. Per binary and workload: shardwire starts under callgrind, instrumentation off, a
# warm-up run (server connections, statement caches), then instrumented runs of TX and 2 x TX
# transactions per client, each dumped: instructions (Ir) per transaction are the difference
# over TX transactions, so pgbench's logins drop out. Prints them and the top functions of the
# second window.
#
#   BASE_BIN=/path/to/main/shardwire tests/bench/instructions.sh
#
# Environment: TX (500 per client), CLIENTS (8), WORKLOADS ("select tpcb"), SCALE (10), POOL_SIZE
# (40), BASE_BIN (optional), SHARDWIRE_BIN (default build/proxy/app/shardwire), KEEP=1.
# Workloads: select = `pgbench -S -M simple`, extended = `-S -M extended`, prepared = `-S -M
# prepared`, tpcb = pgbench's default TPC-B-like script, simple protocol.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TX=${TX:-500}
CLIENTS=${CLIENTS:-8}
WORKLOADS=${WORKLOADS:-"select tpcb"}
SCALE=${SCALE:-10}
POOL_SIZE=${POOL_SIZE:-40}
BASE_BIN=${BASE_BIN:-}
PGBIN=${PG_BINDIR:-/usr/lib/postgresql/15/bin}

source "$ROOT/tests/bench/common.sh"
require_binaries "$PGBIN/pgbench" "$PGBIN/initdb" /usr/bin/valgrind /usr/bin/callgrind_control

SW_PID=""
BENCH_PID_VARS="SW_PID"
start_bench_cluster instructions-bench
bench_admin -d postgres -c "CREATE ROLE app LOGIN PASSWORD 'secret'"
for db in catalog s0; do bench_admin -d postgres -c "CREATE DATABASE $db OWNER app"; done
echo "bench: pgbench -i -s $SCALE (s0)" >&2
"$PGBIN/pgbench" -i -q -s "$SCALE" "$(bench_dsn s0)" >/dev/null 2>&1

PORT=$(pick_port)
{
  shardwire_yaml_head "$PORT" 1 "$POOL_SIZE"
  cat <<YAML
shards:
  - { name: s0, dsn: "$(bench_dsn s0)" }
catalog: { dsn: "$(bench_dsn catalog)" }
sharding:
  buckets: 4096
  default_shard: s0
  directory_lease: 30s
  tables:
    - { name: pgbench_accounts, key: aid, type: integer }
    - { name: pgbench_history, key: aid, type: integer }
YAML
} >"$WORK/sharded.yaml"
shardwire_init sharded

conninfo="host=127.0.0.1 port=$PORT dbname=app user=app password=secret sslmode=disable"
pgbench_args() {  # WORKLOAD
  case $1 in
    select) echo "-S -M simple" ;;
    extended) echo "-S -M extended" ;;
    prepared) echo "-S -M prepared" ;;
    tpcb) echo "-M simple" ;;
    *) echo "bench: unknown workload $1" >&2; exit 1 ;;
  esac
}
run_pgbench() {  # WORKLOAD TX
  # shellcheck disable=SC2046
  "$PGBIN/pgbench" -n $(pgbench_args "$1") -t "$2" -c "$CLIENTS" -j "$((CLIENTS < 2 ? CLIENTS : 2))" \
    "$conninfo" >"$WORK/pgbench.out" 2>&1 || { tail -n 5 "$WORK/pgbench.out" >&2; exit 1; }
}

# measure NAME BINARY WORKLOAD: sets IR[NAME/WORKLOAD] to the instructions per transaction and
# keeps the callgrind output.
declare -A IR
measure() {
  local out="$WORK/callgrind-$1-$3.out"
  # Collected only inside the loop's I/O callbacks (reads and what they trigger, the flush in the
  # check phase): the mover's and the directory watcher's threads, timers and the catalog logins
  # they make depend on wall-clock time, which valgrind stretches.
  valgrind --tool=callgrind --instr-atstart=no --toggle-collect='sw::net::Connection::on_read*' \
    --toggle-collect='sw::net::Connection::on_alloc*' --toggle-collect='sw::net::Loop::on_check*' \
    --callgrind-out-file="$out" \
    "$2" --config "$WORK/sharded.yaml" >>"$WORK/$1.log" 2>&1 &
  SW_PID=$!
  wait_port "$PORT" "shardwire ($1) under callgrind" || { tail -n 20 "$WORK/$1.log" >&2; exit 1; }
  run_pgbench "$3" 100
  # Two windows, TX and 2 x TX transactions per client, each with pgbench's logins (a SCRAM
  # login is millions of instructions): their difference is TX transactions without logins.
  callgrind_control -i on "$SW_PID" >/dev/null
  run_pgbench "$3" "$TX"
  callgrind_control -d "$SW_PID" >/dev/null
  run_pgbench "$3" $((2 * TX))
  callgrind_control -d "$SW_PID" >/dev/null
  callgrind_control -i off "$SW_PID" >/dev/null
  kill -TERM "$SW_PID"
  wait "$SW_PID" 2>/dev/null || true
  SW_PID=""
  local one two
  one=$(sed -n 's/^totals: \([0-9]*\).*/\1/p' "$out.1")
  two=$(sed -n 's/^totals: \([0-9]*\).*/\1/p' "$out.2")
  IR["$1/$3"]=$(awk -v a="$one" -v b="$two" -v n=$((TX * CLIENTS)) 'BEGIN { printf "%.0f", (b - a) / n }')
  echo "bench: $1/$3 done: ${IR["$1/$3"]} Ir/tx" >&2
}

for workload in $WORKLOADS; do
  for name in ${BASE_BIN:+base} shardwire; do
    bin=$BIN
    [ "$name" = base ] && bin=$BASE_BIN
    measure "$name" "$bin" "$workload"
  done
done

echo
echo "callgrind, pgbench -t $TX -c $CLIENTS, shardwire sharded (workers 1); shardwire: $BIN${BASE_BIN:+; base: $BASE_BIN}"
echo
echo "| workload | base Ir/tx | shardwire Ir/tx | shardwire/base |"
echo "|---|---:|---:|---:|"
for workload in $WORKLOADS; do
  b=${IR["base/$workload"]:--}
  s=${IR["shardwire/$workload"]}
  echo "| $workload | $b | $s | $(ratio "$s" "$b") |"
done
for workload in $WORKLOADS; do
  echo
  echo "shardwire, $workload: top functions by instructions (self cost)"
  callgrind_annotate "$WORK/callgrind-shardwire-$workload.out.2" 2>/dev/null | grep -E '^ *[0-9,]+ \(' |
    head -16 || true
done
