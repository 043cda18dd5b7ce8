#!/usr/bin/env bash
# Pass-through benchmark (run by hand; not a pass/fail test): direct PostgreSQL 15, Debian's
# pgbouncer (transaction mode) and shardwire (transaction mode) side by side on loopback.
# `pgbench -i -s $SCALE` once, then `pgbench -S -T $SECS -M {simple,extended,prepared} -c {1,8,32}`
# interleaved across the three targets. Prints tps, tps ratio to direct, and each proxy's CPU
# microseconds per transaction (utime+stime from /proc/<pid>/stat).
#
#   tests/bench/passthrough.sh [seconds-per-run]
#
# Environment: SECS (10), SCALE (10), ROUNDS (1; results are averaged), POOL_SIZE (40, both
# proxies), SW_WORKERS (1 — pgbouncer is single-threaded), MODES ("simple extended prepared"),
# CLIENTS ("1 8 32"), SHARDWIRE_BIN (default: build/proxy/app/shardwire, built if missing),
# KEEP=1 keeps the work directory.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SECS=${1:-${SECS:-10}}
SCALE=${SCALE:-10}
ROUNDS=${ROUNDS:-1}
POOL_SIZE=${POOL_SIZE:-40}
SW_WORKERS=${SW_WORKERS:-1}
MODES=${MODES:-"simple extended prepared"}
CLIENTS=${CLIENTS:-"1 8 32"}
PGBIN=${PG_BINDIR:-/usr/lib/postgresql/15/bin}
PGBOUNCER=${PGBOUNCER:-/usr/sbin/pgbouncer}
CLK_TCK=$(getconf CLK_TCK)

source "$ROOT/tests/bench/common.sh"
require_binaries "$PGBOUNCER" "$PGBIN/pgbench" "$PGBIN/initdb"

# ---- start everything -------------------------------------------------------------------------
BOUNCER_PID=""
SW_PID=""
BENCH_PID_VARS="SW_PID BOUNCER_PID"
start_bench_cluster bench
BOUNCER_PORT=$(pick_port)
SW_PORT=$(pick_port)
as_postgres "$PGBIN/psql" -X -q -h "$WORK" -p "$PG_PORT" -U postgres -d postgres \
  -c "CREATE ROLE app LOGIN PASSWORD 'secret'" -c "CREATE DATABASE app OWNER app"

DIRECT="host=127.0.0.1 port=$PG_PORT dbname=app user=app password=secret sslmode=disable"
echo "bench: pgbench -i -s $SCALE" >&2
"$PGBIN/pgbench" -i -q -s "$SCALE" "$DIRECT" >/dev/null 2>&1

cat >"$WORK/userlist.txt" <<'LIST'
"app" "secret"
LIST
cat >"$WORK/pgbouncer.ini" <<INI
[databases]
app = host=127.0.0.1 port=$PG_PORT dbname=app user=app password=secret

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $BOUNCER_PORT
unix_socket_dir =
auth_type = scram-sha-256
auth_file = $WORK/userlist.txt
pool_mode = transaction
default_pool_size = $POOL_SIZE
max_client_conn = 500
server_tls_sslmode = disable
logfile = $WORK/pgbouncer.log
pidfile = $WORK/pgbouncer.pid
INI
# Started directly (not through the shell function) so that $! is pgbouncer's own pid.
if [ $IS_ROOT -eq 1 ]; then
  setpriv --reuid=postgres --regid=postgres --init-groups -- "$PGBOUNCER" "$WORK/pgbouncer.ini" >>"$WORK/pgbouncer.out" 2>&1 &
else
  "$PGBOUNCER" "$WORK/pgbouncer.ini" >>"$WORK/pgbouncer.out" 2>&1 &
fi
BOUNCER_PID=$!
disown
wait_port "$BOUNCER_PORT" pgbouncer

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
"$BIN" --config "$WORK/shardwire.yaml" >>"$WORK/shardwire.log" 2>&1 &
SW_PID=$!
disown
wait_port "$SW_PORT" shardwire || { tail -n 20 "$WORK/shardwire.log" >&2; exit 1; }

conninfo() {
  case $1 in
    direct) echo "$DIRECT" ;;
    pgbouncer) echo "host=127.0.0.1 port=$BOUNCER_PORT dbname=app user=app password=secret sslmode=disable" ;;
    shardwire) echo "host=127.0.0.1 port=$SW_PORT dbname=app user=app password=secret sslmode=disable" ;;
  esac
}
pid_of() {
  case $1 in
    pgbouncer) echo "$BOUNCER_PID" ;;
    shardwire) echo "$SW_PID" ;;
    *) echo "" ;;
  esac
}

# ---- runs -------------------------------------------------------------------------------------
declare -A TPS_SUM TX_SUM TICKS_SUM RUNS FAILED
TARGETS="direct pgbouncer shardwire"

run_one() {
  local target=$1 mode=$2 clients=$3 key="$1/$2/$3"
  local threads=$((clients < 2 ? clients : 2))
  local pid before=0 after=0 out rc=0 tps tx
  pid=$(pid_of "$target")
  if [ -n "$pid" ] && [ ! -d "/proc/$pid" ]; then
    FAILED[$key]="$target died"
    return
  fi
  [ -n "$pid" ] && before=$(cpu_ticks "$pid")
  out=$("$PGBIN/pgbench" -n -S -T "$SECS" -M "$mode" -c "$clients" -j "$threads" "$(conninfo "$target")" 2>&1) || rc=$?
  [ -n "$pid" ] && [ -d "/proc/$pid" ] && after=$(cpu_ticks "$pid")
  tps=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p' <<<"$out")
  tx=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$out")
  local failed_tx
  failed_tx=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' <<<"$out")
  if [ $rc -ne 0 ] || [ -z "$tps" ] || [ -z "$tx" ] || [ "$tx" = 0 ] || [ "${failed_tx:-0}" != 0 ]; then
    FAILED[$key]=$(grep -m1 -iE 'error|abort|fatal' <<<"$out" || echo "pgbench exit $rc")
    echo "bench: $key failed: ${FAILED[$key]}" >&2
    return
  fi
  TPS_SUM[$key]=$(awk -v a="${TPS_SUM[$key]:-0}" -v b="$tps" 'BEGIN { print a + b }')
  TX_SUM[$key]=$(( ${TX_SUM[$key]:-0} + tx ))
  TICKS_SUM[$key]=$(( ${TICKS_SUM[$key]:-0} + after - before ))
  RUNS[$key]=$(( ${RUNS[$key]:-0} + 1 ))
  printf 'bench: %-28s tps %10.1f\n' "$key" "$tps" >&2
}

for round in $(seq 1 "$ROUNDS"); do
  for mode in $MODES; do
    for clients in $CLIENTS; do
      for target in $TARGETS; do
        run_one "$target" "$mode" "$clients"
      done
    done
  done
done

# ---- report -----------------------------------------------------------------------------------
tps_of() { local k=$1; [ -n "${FAILED[$k]:-}" ] || [ -z "${RUNS[$k]:-}" ] && { echo failed; return; }; awk -v s="${TPS_SUM[$k]}" -v n="${RUNS[$k]}" 'BEGIN { printf "%.0f", s / n }'; }
ratio() { [ "$1" = failed ] || [ "$2" = failed ] && { echo "-"; return; }; awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
cpu_of() {
  local k=$1
  [ -n "${FAILED[$k]:-}" ] || [ -z "${RUNS[$k]:-}" ] && { echo failed; return; }
  awk -v t="${TICKS_SUM[$k]}" -v hz="$CLK_TCK" -v n="${TX_SUM[$k]}" 'BEGIN { printf "%.1f", t * 1e6 / hz / n }'
}

echo
echo "pgbench -S -T $SECS, scale $SCALE, $ROUNDS round(s), pool size $POOL_SIZE, shardwire workers $SW_WORKERS, $(nproc) CPUs"
echo
echo "| mode | clients | tps direct | tps pgbouncer | tps shardwire | pgbouncer/direct | shardwire/direct | pgbouncer CPU µs/tx | shardwire CPU µs/tx |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for mode in $MODES; do
  for clients in $CLIENTS; do
    d=$(tps_of "direct/$mode/$clients")
    b=$(tps_of "pgbouncer/$mode/$clients")
    s=$(tps_of "shardwire/$mode/$clients")
    echo "| $mode | $clients | $d | $b | $s | $(ratio "$b" "$d") | $(ratio "$s" "$d") | $(cpu_of "pgbouncer/$mode/$clients") | $(cpu_of "shardwire/$mode/$clients") |"
  done
done
