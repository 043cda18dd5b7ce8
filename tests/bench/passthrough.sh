#!/usr/bin/env bash
# Pass-through benchmark (run by hand; not a pass/fail test): direct PostgreSQL 15, Debian's
# pgbouncer (transaction mode), shardwire (transaction mode, one shard, nothing sharded) and
# shardwire sharded (pgbench_accounts and pgbench_history sharded by aid, one shard owning every
# bucket, so every statement is parsed and routed) side by side on loopback.
# `pgbench -i -s $SCALE` once per database, then `pgbench -S -T $SECS -M {simple,extended,prepared}`
# and pgbench's TPC-B-like script (mode `tpcb`, simple protocol) with -c {1,8,32}, interleaved
# across the targets. A fifth target, the null relay (tests/bench/null_relay.cc: bytes relayed
# between each client and its own server connection, nothing parsed), measures the floor of any
# user-space proxy. Prints tps, tps ratio to direct, each proxy's CPU microseconds per transaction
# (utime+stime from /proc/<pid>/stat), shardwire's and the relay's CPU per transaction as a ratio
# of pgbouncer's, and sharded shardwire's as a ratio of the relay's.
#
#   tests/bench/passthrough.sh [seconds-per-run]
#
# Environment: SECS (10), SCALE (10), ROUNDS (1; results are averaged), POOL_SIZE (40, both
# proxies), SW_WORKERS (1 — pgbouncer is single-threaded), MODES ("simple extended prepared tpcb"),
# CLIENTS ("1 8 32"), SHARDWIRE_BIN (default: build/proxy/app/shardwire, built if missing),
# BASE_BIN (another shardwire binary, e.g. main's build: adds target `base`, a second sharded
# proxy running it, and a before/after table; rounds alternate which of the two runs first),
# TARGETS (default "direct pgbouncer relay shardwire sharded", plus base), NULL_RELAY_BIN
# (default build/tests/bench/bench_null_relay, built if missing), KEEP=1 keeps the work directory.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SECS=${1:-${SECS:-10}}
SCALE=${SCALE:-10}
ROUNDS=${ROUNDS:-1}
POOL_SIZE=${POOL_SIZE:-40}
SW_WORKERS=${SW_WORKERS:-1}
MODES=${MODES:-"simple extended prepared tpcb"}
CLIENTS=${CLIENTS:-"1 8 32"}
PGBIN=${PG_BINDIR:-/usr/lib/postgresql/15/bin}
PGBOUNCER=${PGBOUNCER:-/usr/sbin/pgbouncer}

source "$ROOT/tests/bench/common.sh"
require_binaries "$PGBOUNCER" "$PGBIN/pgbench" "$PGBIN/initdb"

# ---- start everything -------------------------------------------------------------------------
BOUNCER_PID=""
SW_PID=""
SHARDED_PID=""
BASE_PID=""
RELAY_PID=""
BENCH_PID_VARS="SW_PID SHARDED_PID BOUNCER_PID BASE_PID RELAY_PID"
start_bench_cluster bench
SW_PORT=$(pick_port)
SHARDED_PORT=$(pick_port)
as_postgres "$PGBIN/psql" -X -q -h "$WORK" -p "$PG_PORT" -U postgres -d postgres \
  -c "CREATE ROLE app LOGIN PASSWORD 'secret'" -c "CREATE DATABASE app OWNER app" \
  -c "CREATE DATABASE s0 OWNER app" -c "CREATE DATABASE catalog OWNER app"

DIRECT="$(bench_dsn app) sslmode=disable"
echo "bench: pgbench -i -s $SCALE (app and s0)" >&2
"$PGBIN/pgbench" -i -q -s "$SCALE" "$DIRECT" >/dev/null 2>&1
"$PGBIN/pgbench" -i -q -s "$SCALE" "$(bench_dsn s0)" >/dev/null 2>&1

start_pgbouncer app
start_null_relay

cat >"$WORK/shardwire.yaml" <<YAML
listen: { host: 127.0.0.1, port: $SW_PORT }
workers: $SW_WORKERS
log_level: info
auth:
  method: scram-sha-256
  users: [ { name: app, password: secret } ]
pool: { mode: transaction, size: $POOL_SIZE, idle_timeout: 600s, query_wait_timeout: 30s }
shards:
  - { name: s0, dsn: "host=127.0.0.1 port=$PG_PORT dbname=app user=app password=secret" }
YAML
sed -e "s/port: $SW_PORT }/port: $SHARDED_PORT }/" -e "s/dbname=app /dbname=s0 /" "$WORK/shardwire.yaml" >"$WORK/sharded.yaml"
cat >>"$WORK/sharded.yaml" <<YAML
database: app
catalog: { dsn: "$(bench_dsn catalog)" }
sharding:
  buckets: 4096
  default_shard: s0
  directory_lease: 30s
  tables:
    - { name: pgbench_accounts, key: aid, type: integer }
    - { name: pgbench_history, key: aid, type: integer }
YAML
shardwire_init sharded
start_shardwire shardwire "$SW_PORT" SW_PID
start_shardwire sharded "$SHARDED_PORT" SHARDED_PID
BASE_BIN=${BASE_BIN:-}
if [ -n "$BASE_BIN" ]; then
  BASE_PORT=$(pick_port)
  sed -e "s/port: $SHARDED_PORT }/port: $BASE_PORT }/" "$WORK/sharded.yaml" >"$WORK/base.yaml"
  SHARDED_BIN=$BIN
  BIN=$BASE_BIN
  start_shardwire base "$BASE_PORT" BASE_PID
  BIN=$SHARDED_BIN
fi

conninfo() {
  case $1 in
    direct) echo "$DIRECT" ;;
    pgbouncer) echo "host=127.0.0.1 port=$BOUNCER_PORT dbname=app user=app password=secret sslmode=disable" ;;
    relay) echo "host=127.0.0.1 port=$RELAY_PORT dbname=app user=app password=secret sslmode=disable" ;;
    shardwire) echo "host=127.0.0.1 port=$SW_PORT dbname=app user=app password=secret sslmode=disable" ;;
    sharded) echo "host=127.0.0.1 port=$SHARDED_PORT dbname=app user=app password=secret sslmode=disable" ;;
    base) echo "host=127.0.0.1 port=$BASE_PORT dbname=app user=app password=secret sslmode=disable" ;;
  esac
}
pid_of() {
  case $1 in
    pgbouncer) echo "$BOUNCER_PID" ;;
    relay) echo "$RELAY_PID" ;;
    shardwire) echo "$SW_PID" ;;
    sharded) echo "$SHARDED_PID" ;;
    base) echo "$BASE_PID" ;;
    *) echo "" ;;
  esac
}

# ---- runs -------------------------------------------------------------------------------------
TARGETS=${TARGETS:-"direct pgbouncer relay shardwire sharded"}
[ -n "$BASE_BIN" ] && TARGETS="$TARGETS base"
# Odd rounds run `base` right after `sharded`, even rounds right before it.
round_targets() {
  [ $(($1 % 2)) = 1 ] || [ -z "$BASE_BIN" ] && { echo "$TARGETS"; return; }
  local out="" t
  for t in $TARGETS; do
    case $t in sharded) out="$out base sharded" ;; base) ;; *) out="$out $t" ;; esac
  done
  echo "$out"
}

run_one() {
  local target=$1 mode=$2 clients=$3 key="$1/$2/$3"
  local script="-S -M $mode"
  [ "$mode" = tpcb ] && script="-M simple"
  # shellcheck disable=SC2086
  pgbench_cell "$key" "$(pid_of "$target")" $script -T "$SECS" -c "$clients" -j $((clients < 2 ? clients : 2)) \
    "$(conninfo "$target")" || return 0
  printf 'bench: %-28s tps %10.1f\n' "$key" "$CELL_TPS" >&2
}

for round in $(seq 1 "$ROUNDS"); do
  for mode in $MODES; do
    for clients in $CLIENTS; do
      for target in $(round_targets "$round"); do
        run_one "$target" "$mode" "$clients"
      done
    done
  done
done

# ---- report -----------------------------------------------------------------------------------

echo
echo "pgbench -T $SECS (-S -M <mode>, or the TPC-B-like script for tpcb), scale $SCALE, $ROUNDS round(s), pool size $POOL_SIZE, shardwire workers $SW_WORKERS, $(nproc) CPUs"
echo
echo "| mode | clients | tps direct | tps pgbouncer | tps shardwire | tps sharded | shardwire/direct | sharded/direct | pgbouncer CPU µs/tx | relay CPU µs/tx | shardwire CPU µs/tx | sharded CPU µs/tx | relay/pgbouncer CPU | shardwire/pgbouncer CPU | sharded/pgbouncer CPU | sharded/relay CPU |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for mode in $MODES; do
  for clients in $CLIENTS; do
    d=$(tps_of "direct/$mode/$clients")
    b=$(tps_of "pgbouncer/$mode/$clients")
    s=$(tps_of "shardwire/$mode/$clients")
    h=$(tps_of "sharded/$mode/$clients")
    cb=$(cpu_of "pgbouncer/$mode/$clients")
    cr=$(cpu_of "relay/$mode/$clients")
    cs=$(cpu_of "shardwire/$mode/$clients")
    ch=$(cpu_of "sharded/$mode/$clients")
    echo "| $mode | $clients | $d | $b | $s | $h | $(ratio "$s" "$d") | $(ratio "$h" "$d") | $cb | $cr | $cs | $ch | $(ratio "$cr" "$cb") | $(ratio "$cs" "$cb") | $(ratio "$ch" "$cb") | $(ratio "$ch" "$cr") |"
  done
done

if [ -n "$BASE_BIN" ]; then
  echo
  echo "sharded: $BIN; base: $BASE_BIN"
  echo
  echo "| mode | clients | tps pgbouncer | tps sharded | tps base | pgbouncer CPU µs/tx | sharded CPU µs/tx | base CPU µs/tx | sharded/pgbouncer CPU | base/pgbouncer CPU | sharded/base CPU |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  for mode in $MODES; do
    for clients in $CLIENTS; do
      cb=$(cpu_of "pgbouncer/$mode/$clients")
      ch=$(cpu_of "sharded/$mode/$clients")
      ca=$(cpu_of "base/$mode/$clients")
      echo "| $mode | $clients | $(tps_of "pgbouncer/$mode/$clients") | $(tps_of "sharded/$mode/$clients") | $(tps_of "base/$mode/$clients") | $cb | $ch | $ca | $(ratio "$ch" "$cb") | $(ratio "$ca" "$cb") | $(ratio "$ch" "$ca") |"
    done
  done
fi
