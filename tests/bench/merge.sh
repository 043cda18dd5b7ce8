#!/usr/bin/env bash
# Merged-read benchmark (run by hand; not a pass/fail test): keyless reads that shardwire sends to
# every shard and merges, against
#   direct   PostgreSQL 15, one database with an ordinary `events` table
#   2shards  shardwire with a catalog and 2 shard databases, `events` sharded by tenant_id
#   4shards  a second shardwire with its own catalog and 4 shard databases
# with pgbench custom scripts (-M simple: extended-protocol merged reads are refused), 1 and 4
# clients, interleaved across the targets ROUNDS times. Prints latency per target, its ratio to
# direct, each shardwire's CPU microseconds per query (utime+stime from /proc/<pid>/stat) and CPU
# nanoseconds per row merged (shardwire_merged_rows_total{direction="in"} read from /metrics
# before and after each run). All databases live in one PostgreSQL cluster (initdb in a temp dir),
# so the shards share its CPUs with each other and with shardwire.
#
#   tests/bench/merge.sh [seconds-per-run]
#
# Environment: SECS (10), ROWS (400000), GROUP_COUNT (300 distinct k), ROUNDS (1; averaged),
# CLIENTS ("1 4"), SCRIPTS ("topn groupby"), POOL_SIZE (20), SW_WORKERS (1),
# SHARDWIRE_BIN (default: build/proxy/app/shardwire, built if missing), KEEP=1 keeps the work dir.
#
# Scripts:
#   topn     SELECT id, tenant_id, v, created_at FROM events ORDER BY created_at DESC LIMIT 100
#            (index on created_at: each shard returns its newest 100, the proxy k-way merges)
#   groupby  SELECT k, count(*), sum(v) FROM events GROUP BY k   (GROUP_COUNT groups; a full scan on
#            each shard, the proxy combines the partial count/sum of each group)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SECS=${1:-${SECS:-10}}
ROWS=${ROWS:-400000}
GROUP_COUNT=${GROUP_COUNT:-300}
ROUNDS=${ROUNDS:-1}
CLIENTS=${CLIENTS:-"1 4"}
SCRIPTS=${SCRIPTS:-"topn groupby"}
POOL_SIZE=${POOL_SIZE:-20}
SW_WORKERS=${SW_WORKERS:-1}
PGBIN=${PG_BINDIR:-/usr/lib/postgresql/15/bin}
BUCKETS=4096

source "$ROOT/tests/bench/common.sh"
require_binaries "$PGBIN/pgbench" "$PGBIN/initdb" "$PGBIN/psql"
command -v curl >/dev/null || { echo "bench: curl not found (reads /metrics)" >&2; exit 1; }

# ---- PostgreSQL: plain (direct), cat2 + a0..a1 (2 shards), cat4 + b0..b3 (4 shards) ----------
SW2_PID=""
SW4_PID=""
BENCH_PID_VARS="SW2_PID SW4_PID"
start_bench_cluster merge-bench
admin() { as_postgres "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$WORK" -p "$PG_PORT" -U postgres "$@"; }
admin -d postgres -c "CREATE ROLE app LOGIN PASSWORD 'secret'"
for db in plain cat2 a0 a1 cat4 b0 b1 b2 b3; do admin -d postgres -c "CREATE DATABASE $db OWNER app"; done

dsn() { echo "host=127.0.0.1 port=$PG_PORT dbname=$1 user=app password=secret"; }
psql_at() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }
EVENTS_DDL="CREATE TABLE events (id bigint NOT NULL, tenant_id bigint NOT NULL, k integer NOT NULL,
  v bigint NOT NULL, created_at timestamptz NOT NULL, note text)"
INDEX_DDL="CREATE INDEX events_created_at ON events (created_at)"
# Row g: its own tenant, group g mod GROUP_COUNT, a scattered value, one second apart.
ROWS_SQL="SELECT g, g, g % $GROUP_COUNT, (g::bigint * 7919) % 100003, timestamptz '2026-01-01 00:00:00+00' + g * interval '1 second',
  'event ' || g FROM generate_series(1, $ROWS) g"

echo "bench: loading $ROWS rows into direct" >&2
psql_at "$(dsn plain)" -c "$EVENTS_DDL" -c "$INDEX_DDL" -c "INSERT INTO events $ROWS_SQL" -c "VACUUM ANALYZE events"

# ---- shardwire: one instance per shard count, each with its catalog and metrics endpoint -------
SW2_PORT=$(pick_port)
SW4_PORT=$(pick_port)
SW2_METRICS=$(pick_port)
SW4_METRICS=$(pick_port)
write_config() {  # NAME PORT METRICS_PORT CATALOG SHARD_DB...
  local name=$1 port=$2 metrics=$3 catalog=$4
  shift 4
  {
    cat <<YAML
listen: { host: 127.0.0.1, port: $port }
workers: $SW_WORKERS
log_level: info
database: app
auth:
  method: scram-sha-256
  users: [ { name: app, password: secret } ]
pool: { mode: transaction, size: $POOL_SIZE, idle_timeout: 600s, query_wait_timeout: 30s }
metrics: { listen: "127.0.0.1:$metrics" }
catalog: { dsn: "$(dsn "$catalog")" }
shards:
YAML
    local db
    for db in "$@"; do echo "  - { name: $db, dsn: \"$(dsn "$db")\" }"; done
    cat <<YAML
sharding:
  buckets: $BUCKETS
  default_shard: $1
  directory_lease: 30s
  tables: [ { name: events, key: tenant_id, type: bigint } ]
YAML
  } >"$WORK/$name.yaml"
}
write_config sw2 "$SW2_PORT" "$SW2_METRICS" cat2 a0 a1
write_config sw4 "$SW4_PORT" "$SW4_METRICS" cat4 b0 b1 b2 b3

shardwire_init sw2
shardwire_init sw4
start_shardwire sw2 "$SW2_PORT" SW2_PID
start_shardwire sw4 "$SW4_PORT" SW4_PID
wait_port "$SW2_METRICS" "shardwire (2 shards) metrics" || exit 1
wait_port "$SW4_METRICS" "shardwire (4 shards) metrics" || exit 1

TARGETS="direct 2shards 4shards"
conninfo() {
  case $1 in
    direct) echo "$(dsn plain) sslmode=disable" ;;
    2shards) echo "host=127.0.0.1 port=$SW2_PORT dbname=app user=app password=secret sslmode=disable" ;;
    4shards) echo "host=127.0.0.1 port=$SW4_PORT dbname=app user=app password=secret sslmode=disable" ;;
  esac
}
pid_of() {
  case $1 in
    2shards) echo "$SW2_PID" ;;
    4shards) echo "$SW4_PID" ;;
    *) echo "" ;;
  esac
}
metrics_port_of() {
  case $1 in
    2shards) echo "$SW2_METRICS" ;;
    4shards) echo "$SW4_METRICS" ;;
    *) echo "" ;;
  esac
}
# shardwire_merged_rows_total{direction="in"} of a target's shardwire (0 for direct).
merged_rows_in() {
  local port
  port=$(metrics_port_of "$1")
  [ -z "$port" ] && { echo 0; return; }
  curl -sf --max-time 5 "http://127.0.0.1:$port/metrics" |
    awk '/^shardwire_merged_rows_total\{direction="in"\}/ { printf "%.0f", $2; found = 1 } END { if (!found) print 0 }'
}

# The sharded table through shardwire (DDL on every shard + fence trigger), then each shard is
# loaded directly with the rows of the buckets it owns (bucket i on shard i mod N after init).
load_shards() {  # TARGET SHARD_DB...
  local target=$1 i=0 n=$(($# - 1)) db
  shift
  psql_at "$(conninfo "$target")" -c "$EVENTS_DDL" -c "$INDEX_DDL"
  for db in "$@"; do
    echo "bench: loading shard $db ($i of $n)" >&2
    psql_at "$(dsn "$db")" -c "INSERT INTO events $ROWS_SQL WHERE shardwire.bucket_of(g::bigint, $BUCKETS) % $n = $i" \
      -c "VACUUM ANALYZE events"
    i=$((i + 1))
  done
}
load_shards 2shards a0 a1
load_shards 4shards b0 b1 b2 b3

cat >"$WORK/topn.sql" <<SQL
SELECT id, tenant_id, v, created_at FROM events ORDER BY created_at DESC LIMIT 100;
SQL
cat >"$WORK/groupby.sql" <<SQL
SELECT k, count(*), sum(v) FROM events GROUP BY k;
SQL

# ---- correctness first: every target answers each script exactly as direct does ---------------
# (GROUP BY output order is unspecified, so all answers are compared sorted.)
MISMATCHES=0
for script in $SCRIPTS; do
  expected=$("$PGBIN/psql" -X -A -t "$(conninfo direct)" -f "$WORK/$script.sql" | sort)
  for target in 2shards 4shards; do
    got=$("$PGBIN/psql" -X -A -t "$(conninfo "$target")" -f "$WORK/$script.sql" 2>&1 | sort)
    if [ "$got" != "$expected" ]; then
      echo "bench: $target answers $script differently from direct:" >&2
      diff <(echo "$expected") <(echo "$got") | head -n 10 >&2 || true
      MISMATCHES=$((MISMATCHES + 1))
    fi
  done
done

# ---- runs -------------------------------------------------------------------------------------
declare -A MERGED_SUM

run_one() {
  local target=$1 script=$2 clients=$3 key="$1/$2/$3" rows_before merged
  rows_before=$(merged_rows_in "$target")
  pgbench_cell "$key" "$(pid_of "$target")" -f "$WORK/$script.sql" -T "$SECS" -M simple -c "$clients" \
    -j $((clients < 2 ? clients : 2)) "$(conninfo "$target")" || return 0
  merged=$(($(merged_rows_in "$target") - rows_before))
  MERGED_SUM[$key]=$((${MERGED_SUM[$key]:-0} + merged))
  printf 'bench: %-22s latency %8.2f ms  %9d rows merged in\n' "$key" "$CELL_LAT" "$merged" >&2
}

for _ in $(seq 1 "$ROUNDS"); do
  for script in $SCRIPTS; do
    for clients in $CLIENTS; do
      for target in $TARGETS; do
        run_one "$target" "$script" "$clients"
      done
    done
  done
done

# ---- report -----------------------------------------------------------------------------------
rows_per_query() { cell_ok "$1" || { echo failed; return; }; awk -v r="${MERGED_SUM[$1]}" -v n="${TX_SUM[$1]}" 'BEGIN { printf "%.0f", r / n }'; }
cpu_per_row() {
  cell_ok "$1" || { echo failed; return; }
  [ "${MERGED_SUM[$1]}" -gt 0 ] || { echo "-"; return; }
  awk -v t="${TICKS_SUM[$1]}" -v hz="$CLK_TCK" -v r="${MERGED_SUM[$1]}" 'BEGIN { printf "%.0f", t * 1e9 / hz / r }'
}

echo
echo "merged reads, pgbench -M simple -T $SECS, $ROWS rows, $GROUP_COUNT groups, $ROUNDS round(s), pool size $POOL_SIZE, shardwire workers $SW_WORKERS, $(nproc) CPUs"
echo "direct: PostgreSQL; 2shards / 4shards: shardwire + catalog + 2 / 4 shard databases, one PostgreSQL cluster"
echo
echo "| script | clients | direct ms | 2 shards ms | 4 shards ms | 2 shards/direct | 4 shards/direct | rows in/query 2 / 4 | CPU µs/query 2 / 4 | CPU ns/row merged 2 / 4 |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for script in $SCRIPTS; do
  for clients in $CLIENTS; do
    d=$(lat_of "direct/$script/$clients")
    s2=$(lat_of "2shards/$script/$clients")
    s4=$(lat_of "4shards/$script/$clients")
    echo "| $script | $clients | $d | $s2 | $s4 | $(ratio "$s2" "$d") | $(ratio "$s4" "$d") |" \
      "$(rows_per_query "2shards/$script/$clients") / $(rows_per_query "4shards/$script/$clients") |" \
      "$(cpu_of "2shards/$script/$clients") / $(cpu_of "4shards/$script/$clients") |" \
      "$(cpu_per_row "2shards/$script/$clients") / $(cpu_per_row "4shards/$script/$clients") |"
  done
done
echo
echo "answers that differ from direct: $MISMATCHES"
[ "$MISMATCHES" = 0 ]
