#!/usr/bin/env bash
# Keyed benchmark (run by hand; not a pass/fail test): a pgbench custom script that works on
# `orders` by its shard key tenant_id, against
#   direct       PostgreSQL 15, one database with an ordinary `orders` table
#   passthrough  shardwire in front of that same database (one shard, no catalog, no sharded table)
#   sharded      shardwire with a catalog and 2 shard databases, `orders` sharded by tenant_id
# interleaved in -M simple / extended / prepared. Prints tps, each shardwire's CPU microseconds per
# transaction (utime+stime from /proc/<pid>/stat) and the sharded/passthrough CPU ratio (the
# goal: within 1.2x). All databases live in one PostgreSQL cluster (initdb in a temp dir).
#
#   tests/bench/keyed.sh [seconds-per-run]
#
# Environment: SECS (10), ROWS (100000 seeded orders, one per tenant), ROUNDS (1; averaged),
# POOL_SIZE (40), SW_WORKERS (1), MODES ("simple extended prepared"), CLIENTS ("1 8"),
# SCRIPTS ("select tx"), SHARDWIRE_BIN (default: build/proxy/app/shardwire, built if missing),
# KEEP=1 keeps the work directory.
#
# Scripts (k = random(1, ROWS)):
#   select  SELECT by key (one statement, autocommit)
#   tx      BEGIN; SELECT by key; UPDATE by key; INSERT a row for the key; END
#   auto    the same three statements without BEGIN/END (three transactions per script run)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SECS=${1:-${SECS:-10}}
ROWS=${ROWS:-100000}
ROUNDS=${ROUNDS:-1}
POOL_SIZE=${POOL_SIZE:-40}
SW_WORKERS=${SW_WORKERS:-1}
MODES=${MODES:-"simple extended prepared"}
CLIENTS=${CLIENTS:-"1 8"}
SCRIPTS=${SCRIPTS:-"select tx"}
PGBIN=${PG_BINDIR:-/usr/lib/postgresql/15/bin}

source "$ROOT/tests/bench/common.sh"
require_binaries "$PGBIN/pgbench" "$PGBIN/initdb" "$PGBIN/psql"

# ---- PostgreSQL: catalog, s0, s1 (sharded) and plain (direct + passthrough) -------------------
SHARDED_PID=""
PASS_PID=""
BENCH_PID_VARS="SHARDED_PID PASS_PID"
start_bench_cluster keyed-bench
SHARDED_PORT=$(pick_port)
PASS_PORT=$(pick_port)
admin() { as_postgres "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$WORK" -p "$PG_PORT" -U postgres "$@"; }
admin -d postgres -c "CREATE ROLE app LOGIN PASSWORD 'secret'"
for db in catalog s0 s1 plain; do admin -d postgres -c "CREATE DATABASE $db OWNER app"; done

dsn() { echo "host=127.0.0.1 port=$PG_PORT dbname=$1 user=app password=secret"; }
ORDERS_DDL="CREATE TABLE orders (id bigserial PRIMARY KEY, tenant_id bigint NOT NULL, note text, qty integer NOT NULL DEFAULT 0)"
INDEX_DDL="CREATE INDEX orders_tenant ON orders (tenant_id)"

# Unsharded copy: direct and passthrough.
"$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$(dsn plain)" -c "$ORDERS_DDL" -c "$INDEX_DDL" \
  -c "INSERT INTO orders (tenant_id, note) SELECT g, 'seed' FROM generate_series(1, $ROWS) g" -c "VACUUM ANALYZE orders"

# ---- shardwire: sharded (catalog + 2 shards) and passthrough (one shard) ------------------------
{
  shardwire_yaml_head "$SHARDED_PORT" "$SW_WORKERS" "$POOL_SIZE"
  cat <<YAML
catalog: { dsn: "$(dsn catalog)" }
shards:
  - { name: s0, dsn: "$(dsn s0)" }
  - { name: s1, dsn: "$(dsn s1)" }
sharding:
  buckets: 4096
  default_shard: s0
  directory_lease: 30s
  tables: [ { name: orders, key: tenant_id, type: bigint } ]
YAML
} >"$WORK/sharded.yaml"
{
  shardwire_yaml_head "$PASS_PORT" "$SW_WORKERS" "$POOL_SIZE"
  cat <<YAML
shards:
  - { name: s0, dsn: "$(dsn plain)" }
YAML
} >"$WORK/passthrough.yaml"

shardwire_init sharded
start_shardwire sharded "$SHARDED_PORT" SHARDED_PID
start_shardwire passthrough "$PASS_PORT" PASS_PID

conninfo() {
  case $1 in
    direct) echo "$(dsn plain) sslmode=disable" ;;
    passthrough) echo "host=127.0.0.1 port=$PASS_PORT dbname=app user=app password=secret sslmode=disable" ;;
    sharded) echo "host=127.0.0.1 port=$SHARDED_PORT dbname=app user=app password=secret sslmode=disable" ;;
  esac
}
pid_of() {
  case $1 in
    passthrough) echo "$PASS_PID" ;;
    sharded) echo "$SHARDED_PID" ;;
    *) echo "" ;;
  esac
}

# The sharded table through shardwire (DDL on every shard + fence trigger), then each shard is
# seeded directly with the rows of the buckets it owns (bucket i on shard i mod 2).
"$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$(conninfo sharded)" -c "$ORDERS_DDL" -c "$INDEX_DDL"
for i in 0 1; do
  "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$(dsn s$i)" \
    -c "INSERT INTO orders (tenant_id, note) SELECT g, 'seed' FROM generate_series(1, $ROWS) g
        WHERE shardwire.bucket_of(g::bigint, 4096) % 2 = $i" -c "VACUUM ANALYZE orders"
done

cat >"$WORK/select.sql" <<SQL
\set k random(1, $ROWS)
SELECT id, note, qty FROM orders WHERE tenant_id = :k;
SQL
cat >"$WORK/tx.sql" <<SQL
\set k random(1, $ROWS)
BEGIN;
SELECT id, note, qty FROM orders WHERE tenant_id = :k;
UPDATE orders SET qty = qty + 1 WHERE tenant_id = :k;
INSERT INTO orders (tenant_id, note) VALUES (:k, 'bench');
END;
SQL
cat >"$WORK/auto.sql" <<SQL
\set k random(1, $ROWS)
SELECT id, note, qty FROM orders WHERE tenant_id = :k;
UPDATE orders SET qty = qty + 1 WHERE tenant_id = :k;
INSERT INTO orders (tenant_id, note) VALUES (:k, 'bench');
SQL

# ---- runs -------------------------------------------------------------------------------------
TARGETS="direct passthrough sharded"

run_one() {
  local target=$1 script=$2 mode=$3 clients=$4 key="$1/$2/$3/$4"
  pgbench_cell "$key" "$(pid_of "$target")" -f "$WORK/$script.sql" -T "$SECS" -M "$mode" -c "$clients" \
    -j $((clients < 2 ? clients : 2)) "$(conninfo "$target")" || return 0
  printf 'bench: %-34s tps %10.1f\n' "$key" "$CELL_TPS" >&2
}

for _ in $(seq 1 "$ROUNDS"); do
  for script in $SCRIPTS; do
    for mode in $MODES; do
      for clients in $CLIENTS; do
        for target in $TARGETS; do
          run_one "$target" "$script" "$mode" "$clients"
        done
      done
    done
  done
done

# ---- checks and report ------------------------------------------------------------------------
# Every row on a shard must belong to a bucket that shard owns (bucket i on shard i mod 2).
MISPLACED=0
for i in 0 1; do
  n=$("$PGBIN/psql" -X -A -t "$(dsn s$i)" -c "SELECT count(*) FROM orders WHERE shardwire.bucket_of(tenant_id, 4096) % 2 <> $i")
  MISPLACED=$((MISPLACED + n))
done


echo
echo "keyed pgbench scripts, -T $SECS, $ROWS seeded rows, $ROUNDS round(s), pool size $POOL_SIZE, shardwire workers $SW_WORKERS, $(nproc) CPUs"
echo "sharded: 2 shards + catalog; passthrough: shardwire, 1 shard, no sharded table; direct: PostgreSQL"
echo
echo "| script | mode | clients | tps direct | tps passthrough | tps sharded | sharded/direct | passthrough CPU µs/tx | sharded CPU µs/tx | sharded/passthrough CPU |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for script in $SCRIPTS; do
  for mode in $MODES; do
    for clients in $CLIENTS; do
      d=$(tps_of "direct/$script/$mode/$clients")
      p=$(tps_of "passthrough/$script/$mode/$clients")
      s=$(tps_of "sharded/$script/$mode/$clients")
      pc=$(cpu_of "passthrough/$script/$mode/$clients")
      sc=$(cpu_of "sharded/$script/$mode/$clients")
      echo "| $script | $mode | $clients | $d | $p | $s | $(ratio "$s" "$d") | $pc | $sc | $(ratio "$sc" "$pc") |"
    done
  done
done
echo
echo "rows on a shard that does not own their bucket: $MISPLACED"
# Each worker logs its parse-cache counters when it stops (SIGTERM).
kill -TERM "$SHARDED_PID" 2>/dev/null || true
for _ in $(seq 1 100); do kill -0 "$SHARDED_PID" 2>/dev/null || break; sleep 0.1; done
SHARDED_PID=
echo "parse cache of the sharded shardwire (all modes together):"
grep -o 'worker=[0-9]* parse cache: .*' "$WORK/sharded.log" | sed 's/^/  /' || echo "  (no counters logged)"
[ "$MISPLACED" = 0 ]
