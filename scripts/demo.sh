#!/usr/bin/env bash
# Local demo: installs what is missing, builds shardwire quietly, creates a PostgreSQL 15 cluster
# (as the postgres user) holding a catalog database and two shard databases (shard0, shard1), runs
# `shardwire init`, starts shardwire in front of them, then shows in order: keyed routing (SHOW
# ROUTE), a merged cross-shard read, a cross-shard transaction committed atomically (two-phase
# commit), a live bucket move under a pgbench write load with its progress, the admin console and
# the metrics; then prints how to connect.
#
#   scripts/demo.sh          start (or restart) the demo
#   scripts/demo.sh stop     stop shardwire and PostgreSQL
#   scripts/demo.sh status
#
# Ports: DEMO_PG_PORT (default 5433) for PostgreSQL, DEMO_PROXY_PORT (default 6432) for shardwire,
# DEMO_METRICS_PORT (default 9930) for its Prometheus metrics. DEMO_DIR (default ./demo) holds the
# config, the logs and the build log. PostgreSQL's data and socket live where the postgres user can
# reach them: DEMO_DIR/pg when it can reach DEMO_DIR, else DEMO_PG_DIR (default
# /var/tmp/shardwire-demo-<hash of DEMO_DIR>); no path through a directory it cannot reach (a
# checkout under /root, a mode-700 directory) is ever passed to it. DEMO_MOVE=0 skips the live
# move. DEMO_SKIP_BUILD=1 installs and builds nothing and runs SHARDWIRE_BIN (default
# BUILD_DIR/proxy/app/shardwire; tests/demo/demo_test.sh runs the demo this way).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DEMO=$(realpath -m "${DEMO_DIR:-$ROOT/demo}")
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
PG_PORT=${DEMO_PG_PORT:-5433}
PROXY_PORT=${DEMO_PROXY_PORT:-6432}
METRICS_PORT=${DEMO_METRICS_PORT:-9930}
DEMO_MOVE=${DEMO_MOVE:-1}
PGBIN=${PG_BINDIR:-/usr/lib/postgresql/15/bin}
PIDFILE=$DEMO/shardwire.pid

# Where PostgreSQL's files go: inside DEMO when the postgres user can reach it, else outside.
postgres_reaches() { [ "$(id -u)" -ne 0 ] || runuser -u postgres -- test -x "$1" 2>/dev/null; }
existing_ancestor() {
  local dir=$1
  while [ ! -d "$dir" ]; do dir=$(dirname "$dir"); done
  echo "$dir"
}
pg_home() {
  if [ -n "${DEMO_PG_DIR:-}" ]; then
    realpath -m "$DEMO_PG_DIR"
  elif postgres_reaches "$(existing_ancestor "$DEMO")"; then
    echo "$DEMO"
  else
    echo "/var/tmp/shardwire-demo-$(printf '%s' "$DEMO" | md5sum | cut -c1-8)"
  fi
}
PG_HOME=$(pg_home)
PGDATA_DIR=$PG_HOME/pg
SOCKET_DIR=$PG_HOME/socket

as_postgres() {
  if [ "$(id -u)" -eq 0 ]; then
    (cd / && runuser -u postgres -- "$@")
  else
    "$@"
  fi
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

proxy_running() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

pg_running() { [ -f "$PGDATA_DIR/postmaster.pid" ] && as_postgres "$PGBIN/pg_ctl" status -D "$PGDATA_DIR" >/dev/null 2>&1; }

stop_demo() {
  if proxy_running; then
    local pid
    pid=$(cat "$PIDFILE")
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    echo "demo: shardwire stopped"
  fi
  rm -f "$PIDFILE"
  if pg_running; then
    as_postgres "$PGBIN/pg_ctl" stop -D "$PGDATA_DIR" -m fast -w >/dev/null
    echo "demo: PostgreSQL stopped"
  fi
}

status_demo() {
  if pg_running; then echo "PostgreSQL: running on 127.0.0.1:$PG_PORT ($PGDATA_DIR)"; else echo "PostgreSQL: stopped"; fi
  if proxy_running; then echo "shardwire:  running, pid $(cat "$PIDFILE"), port $PROXY_PORT"; else echo "shardwire:  stopped"; fi
}

case "${1:-start}" in
  stop) stop_demo; exit 0 ;;
  status) status_demo; exit 0 ;;
  start) ;;
  *) echo "usage: $0 [start|stop|status]" >&2; exit 2 ;;
esac

# The compiler's output goes to a log file; the terminal gets one progress line.
build_quietly() {
  local log=$DEMO/build.log started=$SECONDS status
  mkdir -p "$DEMO"
  : >"$log"
  "$ROOT/scripts/install-deps.sh" >>"$log" 2>&1 || { echo "demo: installing packages failed; see $log" >&2; exit 1; }
  echo "demo: building shardwire (compiler output in $log)"
  set +e
  {
    cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release &&
      cmake --build "$BUILD_DIR" --target shardwire
  } 2>&1 | tee -a "$log" | while IFS= read -r line; do
    if [[ $line =~ ^\[([0-9]+/[0-9]+)\] ]] && [ -t 1 ]; then printf '\rdemo: building %s ' "${BASH_REMATCH[1]}"; fi
  done
  status=${PIPESTATUS[0]}
  set -e
  [ -t 1 ] && printf '\r'
  if [ "$status" -ne 0 ]; then
    echo "demo: the build failed; last lines of $log:" >&2
    tail -n 30 "$log" >&2
    exit 1
  fi
  echo "demo: built in $((SECONDS - started)) s"
}

if [ "${DEMO_SKIP_BUILD:-0}" = 1 ]; then
  BIN=${SHARDWIRE_BIN:-$BUILD_DIR/proxy/app/shardwire}
else
  build_quietly
  BIN=$BUILD_DIR/proxy/app/shardwire
fi
[ -x "$BIN" ] || { echo "demo: $BIN was not built" >&2; exit 1; }

stop_demo
for p in "$PG_PORT" "$PROXY_PORT" "$METRICS_PORT"; do
  if port_open "$p"; then
    echo "demo: port $p is already in use; pick others with DEMO_PG_PORT / DEMO_PROXY_PORT / DEMO_METRICS_PORT" >&2
    exit 1
  fi
done

mkdir -p "$DEMO"
chmod 755 "$DEMO"
# PostgreSQL's home: reachable by the postgres user, and initdb, pg_ctl and the server see only
# paths inside it (the server's working directory is its data directory).
mkdir -p "$PG_HOME"
chmod 755 "$PG_HOME"
[ "$PG_HOME" = "$DEMO" ] || echo "demo: the postgres user cannot reach $DEMO; PostgreSQL's data and socket live in $PG_HOME"
if [ ! -f "$PGDATA_DIR/PG_VERSION" ]; then
  mkdir -p "$PGDATA_DIR"
  chmod 700 "$PGDATA_DIR"
  [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$PGDATA_DIR"
  as_postgres "$PGBIN/initdb" -D "$PGDATA_DIR" -U postgres -E UTF8 --locale=C \
    --auth-local=trust --auth-host=scram-sha-256 --no-instructions >/dev/null
fi
mkdir -p "$SOCKET_DIR"
[ "$(id -u)" -eq 0 ] && chown postgres:postgres "$SOCKET_DIR"
# Settings written on every start (an older demo's cluster gets them too). Cross-shard
# transactions commit by two-phase commit: max_prepared_transactions above 0 on every shard.
sed -i '/^# shardwire demo$/,$d' "$PGDATA_DIR/postgresql.conf"
cat >>"$PGDATA_DIR/postgresql.conf" <<CONF
# shardwire demo
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = '$SOCKET_DIR'
wal_level = logical
max_connections = 200
max_prepared_transactions = 100
CONF
as_postgres "$PGBIN/pg_ctl" start -w -D "$PGDATA_DIR" -l "$PGDATA_DIR/postgres.log" >/dev/null
echo "demo: PostgreSQL 15 running on 127.0.0.1:$PG_PORT (data in $PGDATA_DIR)"

PSQL_ADMIN=("$PGBIN/psql" -X -q -h "$SOCKET_DIR" -p "$PG_PORT" -U postgres -d postgres -v ON_ERROR_STOP=1)
if [ "$(as_postgres "${PSQL_ADMIN[@]}" -Atc "SELECT count(*) FROM pg_roles WHERE rolname = 'app'")" = 0 ]; then
  as_postgres "${PSQL_ADMIN[@]}" -c "CREATE ROLE app LOGIN PASSWORD 'secret'"
fi
# The bucket mover's login (mover.user): logical replication and session_replication_role need
# REPLICATION and superuser on PostgreSQL 15; the application's role stays unprivileged.
if [ "$(as_postgres "${PSQL_ADMIN[@]}" -Atc "SELECT count(*) FROM pg_roles WHERE rolname = 'mover'")" = 0 ]; then
  as_postgres "${PSQL_ADMIN[@]}" -c "CREATE ROLE mover LOGIN SUPERUSER REPLICATION PASSWORD 'moverpw'"
fi
for db in catalog shard0 shard1; do
  if [ "$(as_postgres "${PSQL_ADMIN[@]}" -Atc "SELECT count(*) FROM pg_database WHERE datname = '$db'")" = 0 ]; then
    as_postgres "${PSQL_ADMIN[@]}" -c "CREATE DATABASE $db OWNER app"
  fi
done

cat >"$DEMO/shardwire.yaml" <<YAML
# shardwire demo config (see docker/shardwire.example.yaml for every key)
listen:
  host: 127.0.0.1
  port: $PROXY_PORT
workers: 2
log_level: info
admin: { database: shardwire, users: [admin] }
metrics: { listen: "127.0.0.1:$METRICS_PORT" }
auth:
  method: scram-sha-256
  users:
    - { name: app, password: secret }
    - { name: admin, password: adminpw }
pool:
  mode: transaction
  size: 20
  idle_timeout: 60s
  query_wait_timeout: 5s
database: app                     # the database name clients connect to
catalog:
  dsn: "host=127.0.0.1 port=$PG_PORT dbname=catalog user=app password=secret"
shards:
  - name: s0
    dsn: "host=127.0.0.1 port=$PG_PORT dbname=shard0 user=app password=secret"
  - name: s1
    dsn: "host=127.0.0.1 port=$PG_PORT dbname=shard1 user=app password=secret"
sharding:
  buckets: 4096
  default_shard: s0
  tables:
    - { name: orders, key: tenant_id, type: bigint }
mover:                            # MOVE BUCKETS / REBALANCE on the admin console
  user: mover                     # replaces the shard DSNs' user for the mover's connections
  password: moverpw
  rollback_window: 5s             # default 24h; short so the demo's move reaches done
cutover: { queue_timeout: 2s, drain_timeout: 5s }   # the defaults: how long writes may queue
YAML

"$BIN" check --config "$DEMO/shardwire.yaml" >/dev/null
if ! "$BIN" init --config "$DEMO/shardwire.yaml" >"$DEMO/init.log" 2>&1; then
  echo "demo: shardwire init failed:" >&2
  cat "$DEMO/init.log" >&2
  exit 1
fi
echo "demo: shardwire init: catalog, directory and both shards' schemas ready (report in $DEMO/init.log)"

nohup "$BIN" --config "$DEMO/shardwire.yaml" >>"$DEMO/shardwire.log" 2>&1 </dev/null &
echo $! >"$PIDFILE"
for _ in $(seq 1 150); do
  port_open "$PROXY_PORT" && break
  if ! proxy_running; then break; fi
  sleep 0.1
done
if ! port_open "$PROXY_PORT"; then
  echo "demo: shardwire did not start; last log lines:" >&2
  tail -n 20 "$DEMO/shardwire.log" >&2 || true
  exit 1
fi

# shellcheck source=scripts/demo-steps.sh
. "$ROOT/scripts/demo-steps.sh"
show_keyed_routing
show_merged_read
show_cross_shard_transaction
if [ "$DEMO_MOVE" = 1 ]; then
  live_move || echo "demo: the live move failed; see $DEMO/shardwire.log"
fi
show_console_and_metrics

cat <<MSG
demo: shardwire running (pid $(cat "$PIDFILE")), logs in $DEMO/shardwire.log

Connect through shardwire:
  psql "host=127.0.0.1 port=$PROXY_PORT dbname=app user=app password=secret"
  e.g.  INSERT INTO orders (tenant_id, note) VALUES (42, 'hello');
        SELECT * FROM orders WHERE tenant_id = 42;
Where would a statement go (on the initial layout)?
  $BIN route --config $DEMO/shardwire.yaml "SELECT * FROM orders WHERE tenant_id = 42"
The admin console (SHOW HELP lists its commands):
  psql "host=127.0.0.1 port=$PROXY_PORT dbname=shardwire user=admin password=adminpw"
  e.g.  SHOW POOLS;  SHOW STATS;  SHOW SHARDS;  SHOW ROUTE SELECT * FROM orders WHERE tenant_id = 42;
        SHOW MIGRATIONS;  MOVE BUCKETS 10-20 TO s1;  SHOW BUCKETS s1;
Prometheus metrics:
  curl -s http://127.0.0.1:$METRICS_PORT/metrics | grep ^shardwire_

Stop everything:
  ${DEMO_DIR:+DEMO_DIR=$DEMO_DIR }${DEMO_PG_DIR:+DEMO_PG_DIR=$DEMO_PG_DIR }$ROOT/scripts/demo.sh stop
MSG
