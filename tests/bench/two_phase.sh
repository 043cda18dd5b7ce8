#!/usr/bin/env bash
# Two-phase commit benchmark (run by hand; not a pass/fail test): a transfer transaction
#   BEGIN; UPDATE accounts (debit a); UPDATE accounts (credit b); COMMIT;
# against
#   direct     PostgreSQL 15, one database, ordinary `accounts` (reference)
#   pgbouncer  pgbouncer (transaction mode) in front of that database (reference)
#   single     shardwire, catalog + 2 shards, `accounts` sharded: a and b on the same shard
#              (one-phase COMMIT)
#   cross      the same shardwire: a on s0, b on s1 (two-phase commit: PREPARE on both, the
#              decision in the catalog, COMMIT PREPARED on both)
# interleaved, -M simple and extended, 1 and 8 clients. Prints tps and mean latency of each, the
# cross/single tps ratio and the latency two-phase commit adds over a one-shard transaction. The
# key pairs are fixed per pgbench script (PAIRS scripts per kind, picked at random), chosen with
# shardwire.bucket_of on the shards (bucket i on shard i mod 2). Afterwards it checks that the
# balances still sum to zero and that no shard holds a prepared transaction.
#
#   tests/bench/two_phase.sh [seconds-per-run]
#
# Environment: SECS (10), ROUNDS (1; averaged), PAIRS (64), POOL_SIZE (40), SW_WORKERS (1),
# MODES ("simple extended"), CLIENTS ("1 8"), SHARDWIRE_BIN, PGBOUNCER (/usr/sbin/pgbouncer),
# KEEP=1 keeps the work directory.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SECS=${1:-${SECS:-10}}
ROUNDS=${ROUNDS:-1}
PAIRS=${PAIRS:-64}
POOL_SIZE=${POOL_SIZE:-40}
SW_WORKERS=${SW_WORKERS:-1}
MODES=${MODES:-"simple extended"}
CLIENTS=${CLIENTS:-"1 8"}
PGBIN=${PG_BINDIR:-/usr/lib/postgresql/15/bin}
PGBOUNCER=${PGBOUNCER:-/usr/sbin/pgbouncer}

source "$ROOT/tests/bench/common.sh"
require_binaries "$PGBIN/pgbench" "$PGBIN/initdb" "$PGBIN/psql" "$PGBOUNCER"

# ---- PostgreSQL: catalog, s0, s1 (sharded) and plain (direct + pgbouncer) ---------------------
SW_PID=""
BOUNCER_PID=""
BENCH_PID_VARS="SW_PID BOUNCER_PID"
start_bench_cluster two-phase-bench "max_prepared_transactions = 200"
SW_PORT=$(pick_port)
bench_admin -d postgres -c "CREATE ROLE app LOGIN SUPERUSER PASSWORD 'secret'"
for db in catalog s0 s1 plain; do bench_admin -d postgres -c "CREATE DATABASE $db OWNER app"; done
psql_to() { "$PGBIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }
ACCOUNTS_DDL="CREATE TABLE accounts (tenant_id bigint PRIMARY KEY, balance bigint NOT NULL DEFAULT 0)"

{
  shardwire_yaml_head "$SW_PORT" "$SW_WORKERS" "$POOL_SIZE"
  cat <<YAML
catalog: { dsn: "$(bench_dsn catalog)" }
shards:
  - { name: s0, dsn: "$(bench_dsn s0)" }
  - { name: s1, dsn: "$(bench_dsn s1)" }
sharding:
  buckets: 4096
  default_shard: s0
  directory_lease: 30s
  tables: [ { name: accounts, key: tenant_id, type: bigint } ]
YAML
} >"$WORK/shardwire.yaml"
shardwire_init shardwire
start_shardwire shardwire "$SW_PORT" SW_PID
start_pgbouncer plain

SW_DSN="host=127.0.0.1 port=$SW_PORT dbname=app user=app password=secret sslmode=disable"
psql_to "$SW_DSN" -c "$ACCOUNTS_DDL"  # through shardwire: on both shards, with the fence
psql_to "$(bench_dsn plain)" -c "$ACCOUNTS_DDL"

# Keys by owning shard: 2*PAIRS on s0 (debits and same-shard credits), PAIRS on s1.
keys_on() {
  psql_to "$(bench_dsn "s$1")" -c "SELECT g FROM generate_series(1, 100000) g
    WHERE shardwire.bucket_of(g::bigint, 4096) % 2 = $1 ORDER BY g LIMIT $2"
}
mapfile -t S0_KEYS < <(keys_on 0 $((2 * PAIRS)))
mapfile -t S1_KEYS < <(keys_on 1 "$PAIRS")
for i in 0 1; do
  psql_to "$(bench_dsn "s$i")" -c "INSERT INTO accounts (tenant_id) SELECT g FROM generate_series(1, 100000) g
    WHERE shardwire.bucket_of(g::bigint, 4096) % 2 = $i" -c "VACUUM ANALYZE accounts"
done
psql_to "$(bench_dsn plain)" -c "INSERT INTO accounts (tenant_id) SELECT g FROM generate_series(1, 100000) g" \
  -c "VACUUM ANALYZE accounts"

# One script per pair; pgbench picks one at random per transaction.
transfer() {
  cat >"$1" <<SQL
BEGIN;
UPDATE accounts SET balance = balance - 1 WHERE tenant_id = $2;
UPDATE accounts SET balance = balance + 1 WHERE tenant_id = $3;
COMMIT;
SQL
}
mkdir -p "$WORK/cross" "$WORK/single"
CROSS_ARGS=()
SINGLE_ARGS=()
for i in $(seq 0 $((PAIRS - 1))); do
  transfer "$WORK/cross/$i.sql" "${S0_KEYS[$i]}" "${S1_KEYS[$i]}"
  transfer "$WORK/single/$i.sql" "${S0_KEYS[$i]}" "${S0_KEYS[$((PAIRS + i))]}"
  CROSS_ARGS+=(-f "$WORK/cross/$i.sql")
  SINGLE_ARGS+=(-f "$WORK/single/$i.sql")
done

conninfo() {
  case $1 in
    direct) echo "$(bench_dsn plain) sslmode=disable" ;;
    pgbouncer) echo "host=127.0.0.1 port=$BOUNCER_PORT dbname=app user=app password=secret sslmode=disable" ;;
    single | cross) echo "$SW_DSN" ;;
  esac
}
pid_of() {
  case $1 in
    pgbouncer) echo "$BOUNCER_PID" ;;
    single | cross) echo "$SW_PID" ;;
    *) echo "" ;;
  esac
}

# ---- runs -------------------------------------------------------------------------------------
TARGETS="direct pgbouncer single cross"
run_one() {
  local target=$1 mode=$2 clients=$3 key="$1/$2/$3"
  local -a scripts=("${SINGLE_ARGS[@]}")
  [ "$target" = cross ] && scripts=("${CROSS_ARGS[@]}")
  pgbench_cell "$key" "$(pid_of "$target")" "${scripts[@]}" -T "$SECS" -M "$mode" -c "$clients" \
    -j $((clients < 2 ? clients : 2)) "$(conninfo "$target")" || return 0
  printf 'bench: %-26s tps %10.1f  latency %7.3f ms\n' "$key" "$CELL_TPS" "$CELL_LAT" >&2
}
for _ in $(seq 1 "$ROUNDS"); do
  for mode in $MODES; do
    for clients in $CLIENTS; do
      for target in $TARGETS; do run_one "$target" "$mode" "$clients"; done
    done
  done
done

# ---- checks and report ------------------------------------------------------------------------
SUM=0
for i in 0 1; do
  n=$(psql_to "$(bench_dsn "s$i")" -c "SELECT coalesce(sum(balance), 0) FROM accounts")
  SUM=$((SUM + n))
done
PREPARED=$(psql_to "$(bench_dsn s0)" -c "SELECT count(*) FROM pg_prepared_xacts")
TWO_PHASE_LINES=$(grep -c 'two-phase commit shardwire_' "$WORK/shardwire.log" || true)

echo
echo "transfer transactions (two UPDATEs), -T $SECS, $ROUNDS round(s), $PAIRS key pairs per kind, pool size $POOL_SIZE, shardwire workers $SW_WORKERS, $(nproc) CPUs"
echo "single: both accounts on one shard (one-phase COMMIT); cross: one on each shard (two-phase commit)"
echo
echo "| mode | clients | tps direct | tps pgbouncer | tps single | tps cross | cross/single tps | latency single ms | latency cross ms | added by 2PC ms |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for mode in $MODES; do
  for clients in $CLIENTS; do
    s=$(tps_of "single/$mode/$clients")
    c=$(tps_of "cross/$mode/$clients")
    ls=$(lat_of "single/$mode/$clients")
    lc=$(lat_of "cross/$mode/$clients")
    added="-"
    [ "$ls" != failed ] && [ "$lc" != failed ] && added=$(awk -v a="$lc" -v b="$ls" 'BEGIN { printf "%.3f", a - b }')
    echo "| $mode | $clients | $(tps_of "direct/$mode/$clients") | $(tps_of "pgbouncer/$mode/$clients") | $s | $c | $(ratio "$c" "$s") | $ls | $lc | $added |"
  done
done
echo
echo "sum of the sharded balances (must be 0): $SUM; prepared transactions left on the cluster: $PREPARED"
echo "shardwire log lines naming a two-phase commit gid: $TWO_PHASE_LINES"
[ "$SUM" = 0 ] && [ "$PREPARED" = 0 ]
