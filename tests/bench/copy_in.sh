#!/usr/bin/env bash
# COPY FROM STDIN benchmark (run by hand; not a pass/fail test, but it fails when a COPY does not
# end as expected or a row is misplaced): psql's \copy of ROWS rows (tenant_id, note, qty; text
# format) into `orders`
#   direct      PostgreSQL 15, one database with an ordinary `orders` table
#   one-shard   shardwire with a catalog and 3 shards, `orders` sharded by tenant_id, every key
#               on shard s0 (rows split and hashed, one shard's COPY gets them all; committed)
#   3-shards    the same shardwire, keys on every shard: rows split over three COPYs,
#               committed by two-phase commit
#   fenced      PostgreSQL 15, straight into shard s0's `orders`, which has shardwire's fence
#               trigger (every sharded table has one): what a shard itself costs per row
# Prints wall seconds, rows/s and shardwire's CPU seconds per case. All databases live in one
# PostgreSQL cluster (initdb in a temp dir, fsync off).
#
#   tests/bench/copy_in.sh [rows]
#
# Environment: ROWS (1000000), SW_WORKERS (1), SHARDWIRE_BIN (default build/proxy/app/shardwire,
# built if missing), KEEP=1 keeps the work directory.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ROWS=${1:-${ROWS:-1000000}}
SW_WORKERS=${SW_WORKERS:-1}
PGBIN=${PG_BINDIR:-/usr/lib/postgresql/15/bin}

source "$ROOT/tests/bench/common.sh"
require_binaries "$PGBIN/initdb" "$PGBIN/psql"

SHARDED_PID=""
BENCH_PID_VARS="SHARDED_PID"
start_bench_cluster copy-in-bench "max_prepared_transactions = 20"  # two-phase commit of the 3-shard COPY
SHARDED_PORT=$(pick_port)
bench_admin -d postgres -c "CREATE ROLE app LOGIN PASSWORD 'secret'"
for db in catalog s0 s1 s2 plain; do bench_admin -d postgres -c "CREATE DATABASE $db OWNER app"; done
ORDERS_DDL="CREATE TABLE orders (id bigserial, tenant_id bigint NOT NULL, note text, qty integer NOT NULL DEFAULT 0, PRIMARY KEY (tenant_id, id))"
"$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$(bench_dsn plain)" -c "$ORDERS_DDL"

{
  shardwire_yaml_head "$SHARDED_PORT" "$SW_WORKERS" 10
  cat <<YAML
catalog: { dsn: "$(bench_dsn catalog)" }
shards:
  - { name: s0, dsn: "$(bench_dsn s0)" }
  - { name: s1, dsn: "$(bench_dsn s1)" }
  - { name: s2, dsn: "$(bench_dsn s2)" }
sharding:
  buckets: 4096
  default_shard: s0
  tables: [ { name: orders, key: tenant_id, type: bigint } ]
YAML
} >"$WORK/sharded.yaml"
shardwire_init sharded
# The listen port is picked again just before the start (init takes a while; others pick ports too).
SHARDED_PORT=$(pick_port)
sed -i "s/^listen: .*/listen: { host: 127.0.0.1, port: $SHARDED_PORT }/" "$WORK/sharded.yaml"
start_shardwire sharded "$SHARDED_PORT" SHARDED_PID
SHARDED="host=127.0.0.1 port=$SHARDED_PORT dbname=app user=app password=secret sslmode=disable"
"$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$SHARDED" -c "$ORDERS_DDL"

# The data: every key on s0 (bucket % 3 = 0, computed by shardwire.bucket_of on s0), and keys
# 1..ROWS (on every shard).
echo "bench: writing $ROWS rows twice" >&2
"$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$(bench_dsn s0)" -c "\\copy (SELECT g, 'note ' || g, g % 1000 FROM generate_series(1, $ROWS * 4) g WHERE shardwire.bucket_of(g::bigint, 4096) % 3 = 0 LIMIT $ROWS) TO '$WORK/one-shard.tsv'"
"$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$(bench_dsn s0)" -c "\\copy (SELECT g, 'note ' || g, g % 1000 FROM generate_series(1, $ROWS) g) TO '$WORK/all-shards.tsv'"

# run_copy NAME CONNINFO FILE: \copy FILE; prints "seconds cpu_seconds", psql's output in $WORK/NAME.out.
run_copy() {
  local before=0 after=0 start end
  [ -d "/proc/$SHARDED_PID" ] && before=$(cpu_ticks "$SHARDED_PID")
  start=$(date +%s.%N)
  "$PGBIN/psql" -X -v ON_ERROR_STOP=1 "$2" -c "\\copy orders (tenant_id, note, qty) FROM '$3'" >"$WORK/$1.out" 2>&1 || true
  end=$(date +%s.%N)
  [ -d "/proc/$SHARDED_PID" ] && after=$(cpu_ticks "$SHARDED_PID")
  echo "$(echo "$end - $start" | bc) $(echo "scale=2; ($after - $before) / $CLK_TCK" | bc)"
}

read -r direct_s _ < <(run_copy direct "$(bench_dsn plain) sslmode=disable" "$WORK/one-shard.tsv")
read -r fenced_s _ < <(run_copy fenced "$(bench_dsn s0) sslmode=disable" "$WORK/one-shard.tsv")
read -r one_s one_cpu < <(run_copy one-shard "$SHARDED" "$WORK/one-shard.tsv")
read -r all_s all_cpu < <(run_copy all-shards "$SHARDED" "$WORK/all-shards.tsv")

grep -q "^COPY $ROWS" "$WORK/direct.out" || { cat "$WORK/direct.out" >&2; exit 1; }
grep -q "^COPY $ROWS" "$WORK/fenced.out" || { cat "$WORK/fenced.out" >&2; exit 1; }
grep -q "^COPY $ROWS" "$WORK/one-shard.out" || { cat "$WORK/one-shard.out" >&2; exit 1; }
if grep -q "^COPY $ROWS" "$WORK/all-shards.out"; then
  all_note="committed"
else
  cat "$WORK/all-shards.out" >&2
  exit 1
fi
count() { "$PGBIN/psql" -X -A -t "$(bench_dsn "$1")" -c "$2"; }
MISPLACED=0
for i in 0 1 2; do
  MISPLACED=$((MISPLACED + $(count "s$i" "SELECT count(*) FROM orders WHERE shardwire.bucket_of(tenant_id, 4096) % 3 <> $i")))
done
ON_S0=$(count s0 "SELECT count(*) FROM orders")

rate() { echo "scale=0; $ROWS / $1" | bc; }
echo
echo "psql \\copy of $ROWS rows (bigint key, text, int; text format), shardwire workers $SW_WORKERS, $(nproc) CPUs"
echo
echo "| case | seconds | rows/s | shardwire CPU s | outcome |"
echo "|---|---:|---:|---:|---|"
echo "| direct (PostgreSQL, plain table) | $direct_s | $(rate "$direct_s") | - | committed |"
echo "| direct into shard s0 (its fence trigger) | $fenced_s | $(rate "$fenced_s") | - | committed |"
echo "| shardwire, keys on one shard | $one_s | $(rate "$one_s") | $one_cpu | committed |"
echo "| shardwire, keys on 3 shards | $all_s | $(rate "$all_s") | $all_cpu | $all_note |"
echo
echo "rows on s0 after the runs: $ON_S0 (fenced + one-shard + its third of the 3-shard run); rows on a shard that does not own their bucket: $MISPLACED"
[ "$MISPLACED" = 0 ]
