# Shared by the benchmarks (sourced): the shardwire binary (built if missing), running as the
# postgres user, loopback ports, and a process's CPU time. Expects ROOT and PGBIN to be set.
# ---- binaries ---------------------------------------------------------------------------------
BIN=${SHARDWIRE_BIN:-}
if [ -z "$BIN" ]; then
  BIN=$ROOT/build/proxy/app/shardwire
  if [ ! -x "$BIN" ]; then
    echo "bench: building shardwire (Release) in $ROOT/build" >&2
    cmake -S "$ROOT" -B "$ROOT/build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$ROOT/build" --target shardwire >/dev/null
  fi
fi
# require_binaries PATH...: every program the benchmark runs must be there.
require_binaries() {
  local b
  for b in "$BIN" "$@"; do
    [ -x "$b" ] || { echo "bench: $b not found (run scripts/install-deps.sh and build)" >&2; exit 1; }
  done
}

# ---- helpers ----------------------------------------------------------------------------------
IS_ROOT=0
[ "$(id -u)" -eq 0 ] && IS_ROOT=1

# Runs a command as postgres.
as_postgres() {
  if [ $IS_ROOT -eq 1 ]; then
    setpriv --reuid=postgres --regid=postgres --init-groups -- "$@"
  else
    "$@"
  fi
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

pick_port() {
  local p
  while :; do
    p=$((20000 + RANDOM % 40000))
    port_open "$p" || { echo "$p"; return; }
  done
}

wait_port() {
  local port=$1 what=$2
  for _ in $(seq 1 200); do
    port_open "$port" && return 0
    sleep 0.05
  done
  echo "bench: $what did not open port $port" >&2
  return 1
}

CLK_TCK=$(getconf CLK_TCK)
# utime + stime of a process, in clock ticks.
cpu_ticks() {
  local stat
  stat=$(cat "/proc/$1/stat")
  stat=${stat##*) }  # fields after "(comm) "; utime and stime are fields 14 and 15 overall
  awk '{ print $12 + $13 }' <<<"$stat"
}

# start_bench_cluster NAME [EXTRA_CONF]: a temp work dir ($WORK) and a PostgreSQL 15 cluster in
# $WORK/pg on a free loopback port ($PG_PORT); start_bench_server adds more. On exit the processes
# whose pids are in the variables named by BENCH_PID_VARS are killed, every cluster under $WORK
# stopped and $WORK removed (kept with KEEP=1).
bench_cleanup() {
  local var
  for var in ${BENCH_PID_VARS:-}; do
    [ -n "${!var:-}" ] && kill -KILL "${!var}" 2>/dev/null || true
  done
  local data
  for data in "$WORK"/*/; do
    [ -f "$data/PG_VERSION" ] || continue
    (cd / && as_postgres "$PGBIN/pg_ctl" stop -D "$data" -m immediate >/dev/null 2>&1) || true
  done
  if [ "${KEEP:-0}" = 1 ]; then echo "bench: kept $WORK" >&2; else rm -rf "$WORK"; fi
}

start_bench_cluster() {
  WORK=$(mktemp -d "/tmp/shardwire-$1-XXXXXX")
  chmod 755 "$WORK"
  [ $IS_ROOT -eq 1 ] && chown postgres:postgres "$WORK"
  trap bench_cleanup EXIT
  cd "$WORK"
  start_bench_server pg "${2:-}"
  PG_PORT=$SERVER_PORT
}

# start_bench_server DIR [EXTRA_CONF]: one more PostgreSQL 15 cluster, in $WORK/DIR, on a free
# loopback port ($SERVER_PORT); EXTRA_CONF lines are appended to its postgresql.conf. Stopped by
# bench_cleanup with the others.
start_bench_server() {
  local data=$WORK/$1
  as_postgres "$PGBIN/initdb" -D "$data" -U postgres -E UTF8 --locale=C --auth-local=trust \
    --auth-host=scram-sha-256 --no-instructions >/dev/null
  cat >>"$data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
unix_socket_directories = '$WORK'
max_connections = 300
shared_buffers = 256MB
fsync = off
synchronous_commit = off
CONF
  [ -n "${2:-}" ] && printf '%s\n' "$2" >>"$data/postgresql.conf"
  # A port picked free can be taken before PostgreSQL binds it (other jobs share the machine): retry.
  local attempt
  for attempt in 1 2 3 4 5; do
    SERVER_PORT=$(pick_port)
    echo "port = $SERVER_PORT" >>"$data/postgresql.conf"
    as_postgres "$PGBIN/pg_ctl" start -w -D "$data" -l "$data/postgres.log" >/dev/null 2>&1 && return 0
    sed -i '/^port = /d' "$data/postgresql.conf"
  done
  tail -n 5 "$data/postgres.log" >&2
  exit 1
}

# bench_admin ARGS...: psql as postgres over the cluster's socket. bench_dsn DB: app's DSN of DB.
bench_admin() { as_postgres "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$WORK" -p "$PG_PORT" -U postgres "$@"; }
bench_dsn() { echo "host=127.0.0.1 port=$PG_PORT dbname=$1 user=app password=secret"; }

# start_pgbouncer DB: Debian's pgbouncer (transaction pooling, scram-sha-256, pool size
# $POOL_SIZE) on a free port ($BOUNCER_PORT), database `app` = DB on the bench cluster, run as
# postgres; its pid in $BOUNCER_PID (list BOUNCER_PID in BENCH_PID_VARS to have it killed on exit).
start_pgbouncer() {
  BOUNCER_PORT=$(pick_port)
  cat >"$WORK/userlist.txt" <<'LIST'
"app" "secret"
LIST
  cat >"$WORK/pgbouncer.ini" <<INI
[databases]
app = $(bench_dsn "$1")

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
  # Started directly (not through as_postgres) so that $! is pgbouncer's own pid.
  if [ $IS_ROOT -eq 1 ]; then
    setpriv --reuid=postgres --regid=postgres --init-groups -- "$PGBOUNCER" "$WORK/pgbouncer.ini" >>"$WORK/pgbouncer.out" 2>&1 &
  else
    "$PGBOUNCER" "$WORK/pgbouncer.ini" >>"$WORK/pgbouncer.out" 2>&1 &
  fi
  BOUNCER_PID=$!
  disown
  wait_port "$BOUNCER_PORT" pgbouncer
}

# bench_program TARGET [PATH]: prints PATH (default build/tests/bench/TARGET), after building
# TARGET in $ROOT/build when it is not there (one of tests/bench/CMakeLists.txt's programs).
bench_program() {
  local path=${2:-$ROOT/build/tests/bench/$1}
  if [ ! -x "$path" ]; then
    echo "bench: building $1 in $ROOT/build" >&2
    cmake --build "$ROOT/build" --target "$1" >/dev/null
  fi
  echo "$path"
}

# start_null_relay: tests/bench/null_relay.cc (NULL_RELAY_BIN, or built if missing) on a free
# port ($RELAY_PORT), relaying to the bench cluster; its pid in $RELAY_PID (list RELAY_PID in
# BENCH_PID_VARS). It logs nobody in: its clients name the cluster's database and log in to
# PostgreSQL themselves.
start_null_relay() {
  local relay
  relay=$(bench_program bench_null_relay "${NULL_RELAY_BIN:-}")
  RELAY_PORT=$(pick_port)
  "$relay" "$RELAY_PORT" "$PG_PORT" >>"$WORK/null_relay.log" 2>&1 &
  RELAY_PID=$!
  disown
  wait_port "$RELAY_PORT" bench_null_relay
}

# shardwire_init NAME: `shardwire init` with $WORK/NAME.yaml; its output in $WORK/NAME-init.log.
# The head of every benchmark's shardwire config: listen on PORT, WORKERS workers, user app
# (SCRAM), transaction pooling with POOL servers per shard. The caller appends the rest.
shardwire_yaml_head() {  # PORT WORKERS POOL
  cat <<YAML
listen: { host: 127.0.0.1, port: $1 }
workers: $2
log_level: info
database: app
auth:
  method: scram-sha-256
  users: [ { name: app, password: secret } ]
pool: { mode: transaction, size: $3, idle_timeout: 600s, query_wait_timeout: 30s }
YAML
}

shardwire_init() {
  echo "bench: shardwire init ($1)" >&2
  "$BIN" init --config "$WORK/$1.yaml" >"$WORK/$1-init.log" 2>&1 || { cat "$WORK/$1-init.log" >&2; exit 1; }
}

# start_shardwire NAME PORT PID_VAR: shardwire with $WORK/NAME.yaml (log $WORK/NAME.log), its pid
# stored in the variable named PID_VAR at once (so bench_cleanup kills it even if it never
# listens); returns when PORT is open.
start_shardwire() {
  "$BIN" --config "$WORK/$1.yaml" >>"$WORK/$1.log" 2>&1 &
  printf -v "$3" '%s' "$!"
  disown
  wait_port "$2" "shardwire ($1)" || { tail -n 20 "$WORK/$1.log" >&2; exit 1; }
}

# ---- pgbench cells ----------------------------------------------------------------------------
# The figures of every cell, summed over rounds and keyed by the caller's cell name; a failed
# cell has its reason in FAILED and no figures. cell_ok KEY: the cell ran and never failed.
declare -A TPS_SUM LAT_SUM TX_SUM TICKS_SUM RUNS FAILED
cell_ok() { [ -z "${FAILED[$1]:-}" ] && [ -n "${RUNS[$1]:-}" ]; }

# pgbench_cell KEY PID PGBENCH_ARGS...: one pgbench run (-n is added), charging the CPU time of
# process PID (empty: none measured) to KEY. Sets CELL_TPS and CELL_LAT (ms) and adds to the sums;
# returns 1, with FAILED[KEY] set, if the process died, pgbench failed or a transaction failed.
pgbench_cell() {
  local key=$1 pid=$2 before=0 after=0 out rc=0 tx failed_tx
  shift 2
  if [ -n "$pid" ] && [ ! -d "/proc/$pid" ]; then
    FAILED[$key]="process $pid died"
    return 1
  fi
  [ -n "$pid" ] && before=$(cpu_ticks "$pid")
  out=$("$PGBIN/pgbench" -n "$@" 2>&1) || rc=$?
  [ -n "$pid" ] && [ -d "/proc/$pid" ] && after=$(cpu_ticks "$pid")
  CELL_TPS=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p' <<<"$out")
  CELL_LAT=$(sed -n 's/^latency average = \([0-9.]*\) ms/\1/p' <<<"$out")
  tx=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$out")
  failed_tx=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' <<<"$out")
  if [ $rc -ne 0 ] || [ -z "$CELL_TPS" ] || [ -z "$CELL_LAT" ] || [ -z "$tx" ] || [ "$tx" = 0 ] ||
    [ "${failed_tx:-0}" != 0 ]; then
    FAILED[$key]=$(grep -m1 -iE 'error|abort|fatal' <<<"$out" || echo "pgbench exit $rc")
    echo "bench: $key failed: ${FAILED[$key]}" >&2
    return 1
  fi
  TPS_SUM[$key]=$(awk -v a="${TPS_SUM[$key]:-0}" -v b="$CELL_TPS" 'BEGIN { print a + b }')
  LAT_SUM[$key]=$(awk -v a="${LAT_SUM[$key]:-0}" -v b="$CELL_LAT" 'BEGIN { print a + b }')
  TX_SUM[$key]=$((${TX_SUM[$key]:-0} + tx))
  TICKS_SUM[$key]=$((${TICKS_SUM[$key]:-0} + after - before))
  RUNS[$key]=$((${RUNS[$key]:-0} + 1))
}

# Per-cell averages over rounds, or "failed": tps_of KEY, lat_of KEY (ms), cpu_of KEY (µs of the
# measured process per transaction). ratio A B: A / B, or "-" when either failed.
# A cell that never ran (not in TARGETS) is "-".
not_ok() { if [ -n "${FAILED[$1]:-}" ]; then echo failed; else echo -; fi; }
tps_of() { cell_ok "$1" || { not_ok "$1"; return; }; awk -v s="${TPS_SUM[$1]}" -v n="${RUNS[$1]}" 'BEGIN { printf "%.0f", s / n }'; }
lat_of() { cell_ok "$1" || { not_ok "$1"; return; }; awk -v s="${LAT_SUM[$1]}" -v n="${RUNS[$1]}" 'BEGIN { printf "%.2f", s / n }'; }
cpu_of() {
  cell_ok "$1" || { not_ok "$1"; return; }
  awk -v t="${TICKS_SUM[$1]}" -v hz="$CLK_TCK" -v n="${TX_SUM[$1]}" 'BEGIN { printf "%.1f", t * 1e6 / hz / n }'
}
ratio() { case "$1/$2" in failed/* | */failed | -/* | */-) echo "-"; return ;; esac; awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
