#!/usr/bin/env bash
# Where the mover's copy spends its time (run by hand; not a pass/fail benchmark). One PostgreSQL
# 15 cluster holds s0 and s1 prepared by `shardwire init` (4096 buckets, `orders` sharded by
# tenant_id with its fence trigger and bucket index, as a CREATE TABLE through shardwire makes it).
# s0 holds the buckets that one of 16 shards owns (bucket % 16 = 0), ROWS_PER_BUCKET rows each,
# keys in ascending order (so a bucket's rows lie all over the table, as after months of inserts);
# MOVE_BUCKETS of them (every fifth) are copied to s1, as a 16 -> 20 rebalance moves them. Each
# round, in this order, timed:
#   pipe_all       psql COPY (SELECT * FROM orders) TO STDOUT | psql COPY scratch FROM STDIN
#                  (the reference of tests/bench/reshard.sh: the whole table, no filter)
#   pipe_filtered  the same with the mover's query (its columns and bucket filter)
#   source_only    the mover's query, COPY TO STDOUT into /dev/null
#   mover xN       bench_mover_copy (mover::copy_buckets) into s1's orders, N = each of STREAMS
# and prints the medians, rows/s and MB/s, and the source's plan (EXPLAIN ANALYZE).
#
#   tests/bench/copy_rate.sh
#   ROWS_PER_BUCKET=1000 ROUNDS=5 STREAMS="1 2 4" tests/bench/copy_rate.sh
#
# Environment: ROWS_PER_BUCKET (500), MOVE_BUCKETS (51), ROUNDS (3), STREAMS ("1 2"),
# NICE (10: the machine is shared), KEEP=1 keeps the work dir.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ROWS_PER_BUCKET=${ROWS_PER_BUCKET:-500}
MOVE_BUCKETS=${MOVE_BUCKETS:-51}
ROUNDS=${ROUNDS:-3}
STREAMS=${STREAMS:-1 2}
NICE=${NICE:-10}
BUCKETS=4096
PGBIN=${PG_BINDIR:-/usr/lib/postgresql/15/bin}

source "$ROOT/tests/bench/common.sh"
require_binaries "$PGBIN/initdb" "$PGBIN/psql"
COPIER=$(bench_program bench_mover_copy "${MOVER_COPY_BIN:-}")
say() { echo "bench: $*" >&2; }
now_us() { date +%s%6N; }

start_bench_cluster copy-rate
bench_admin -d postgres -c "CREATE ROLE app LOGIN SUPERUSER REPLICATION PASSWORD 'secret'" \
  -c "CREATE DATABASE catalog OWNER app" -c "CREATE DATABASE s0 OWNER app" -c "CREATE DATABASE s1 OWNER app"
sql() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }
CREATE="CREATE TABLE orders (id bigserial, tenant_id bigint NOT NULL, note text,
  qty integer NOT NULL DEFAULT 0, row_version bigint NOT NULL DEFAULT 1, PRIMARY KEY (tenant_id, id))"
for db in s0 s1; do sql "$(bench_dsn $db)" -c "$CREATE"; done
cat >"$WORK/shardwire.yaml" <<YAML
$(shardwire_yaml_head "$(pick_port)" 1 2)
catalog: { dsn: "$(bench_dsn catalog)" }
shards:
  - { name: s0, dsn: "$(bench_dsn s0)" }
  - { name: s1, dsn: "$(bench_dsn s1)" }
sharding:
  buckets: $BUCKETS
  default_shard: s0
  tables: [ { name: orders, key: tenant_id, type: bigint } ]
YAML
shardwire_init shardwire
BUCKET_OF="shardwire.bucket_of(tenant_id::bigint, $BUCKETS)"
for db in s0 s1; do
  sql "$(bench_dsn $db)" -c "CREATE INDEX IF NOT EXISTS shardwire_buckets_orders ON orders (($BUCKET_OF))"
done

KEYS=$((16 * 256 * ROWS_PER_BUCKET))
say "seeding s0: the keys 1..$KEYS of buckets b % 16 = 0"
sql "$(bench_dsn s0)" -c "INSERT INTO orders (tenant_id, note) SELECT g, 'seed' FROM generate_series(1, $KEYS) g
  WHERE shardwire.bucket_of(g::bigint, $BUCKETS) % 16 = 0" -c "VACUUM ANALYZE orders"
MOVING=$(sql -A -t "$(bench_dsn s0)" -c "SELECT string_agg(b::text, ',') FROM (SELECT b FROM
  generate_series(0, $BUCKETS - 1, 16 * 5) b LIMIT $MOVE_BUCKETS) x")
FILTER="$BUCKET_OF = ANY('{$MOVING}'::int[])"
COLUMNS="id, tenant_id, note, qty, row_version"
TABLE_ROWS=$(sql -A -t "$(bench_dsn s0)" -c "SELECT count(*) FROM orders")
MOVING_ROWS=$(sql -A -t "$(bench_dsn s0)" -c "SELECT count(*) FROM orders WHERE $FILTER")
say "s0: $TABLE_ROWS rows; $MOVE_BUCKETS buckets to copy hold $MOVING_ROWS"
sql "$(bench_dsn s1)" -c "CREATE TABLE scratch (LIKE orders INCLUDING ALL)"

# timed NAME COMMAND: runs COMMAND niced, appends its wall time in ms to TIMES[NAME].
declare -A TIMES
timed() {
  local name=$1 t0 t1
  shift
  t0=$(now_us)
  nice -n "$NICE" bash -c "$1" >/dev/null
  t1=$(now_us)
  TIMES[$name]+="$(((t1 - t0) / 1000)) "
}
# out NAME SELECT: a script file that COPYs the SELECT TO STDOUT in binary; prints its path.
out() {
  echo "COPY ($2) TO STDOUT (FORMAT binary)" >"$WORK/$1.sql"
  echo "$WORK/$1.sql"
}
OUT_ALL=$(out all "SELECT * FROM orders")
OUT_FILTERED=$(out filtered "SELECT $COLUMNS FROM orders WHERE $FILTER")
pipe() {  # SCRIPT
  echo "$PGBIN/psql -X -q -v ON_ERROR_STOP=1 '$(bench_dsn s0)' -f $1 |
    $PGBIN/psql -X -q -v ON_ERROR_STOP=1 '$(bench_dsn s1)' -c 'COPY scratch FROM STDIN (FORMAT binary)'"
}
for round in $(seq 1 "$ROUNDS"); do
  say "round $round of $ROUNDS"
  sql "$(bench_dsn s1)" -c "TRUNCATE scratch"
  timed pipe_all "$(pipe "$OUT_ALL")"
  sql "$(bench_dsn s1)" -c "TRUNCATE scratch"
  timed pipe_filtered "$(pipe "$OUT_FILTERED")"
  timed source_only "$PGBIN/psql -X -q -v ON_ERROR_STOP=1 '$(bench_dsn s0)' -f $OUT_FILTERED"
  for n in $STREAMS; do
    sql "$(bench_dsn s1)" -c "TRUNCATE orders"
    timed "mover_x$n" "$COPIER '$(bench_dsn s0)' '$(bench_dsn s1)' $BUCKETS $MOVING $n 2>/dev/null >>$WORK/mover_x$n.out"
  done
done
COPIED=$(sql -A -t "$(bench_dsn s1)" -c "SELECT count(*) FROM orders WHERE $FILTER")
[ "$COPIED" = "$MOVING_ROWS" ] || { say "s1 has $COPIED of the $MOVING_ROWS rows"; exit 1; }
BYTES=$("$PGBIN/psql" -X -q "$(bench_dsn s0)" -f "$OUT_FILTERED" | wc -c)

median() { tr ' ' '\n' <<<"$1" | grep . | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
echo "| run | rows | median ms (all rounds) | rows/s | MB/s |"
echo "|---|---:|---:|---:|---:|"
for name in pipe_all pipe_filtered source_only $(for n in $STREAMS; do echo "mover_x$n"; done); do
  rows=$MOVING_ROWS
  [ "$name" = pipe_all ] && rows=$TABLE_ROWS
  ms=$(median "${TIMES[$name]}")
  awk -v n="$name" -v r="$rows" -v ms="$ms" -v all="${TIMES[$name]}" -v b="$BYTES" -v t="$TABLE_ROWS" \
    -v m="$MOVING_ROWS" 'BEGIN { bytes = (n == "pipe_all") ? b * t / m : b;
             printf "| %s | %d | %d (%s) | %.0f | %.1f |\n", n, r, ms, all, r * 1000 / ms, bytes / ms / 1000 }'
done
for n in $STREAMS; do
  echo "mover_x$n: the copier's own process, CPU ms per run: $(sed -n 's/.*relay_cpu_ms=\([0-9]*\).*/\1/p' "$WORK/mover_x$n.out" | tr '\n' ' ')"
done
echo
echo "source plan:"
sql "$(bench_dsn s0)" -c "EXPLAIN (ANALYZE, BUFFERS) SELECT $COLUMNS FROM orders WHERE $FILTER"
