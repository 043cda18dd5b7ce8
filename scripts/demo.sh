#!/usr/bin/env bash
# Local demo: installs what is missing, builds shardwire, creates a PostgreSQL 15 cluster in
# ./demo/pg (as the postgres user) holding a catalog database and two shard databases (s0, s1),
# runs `shardwire init`, starts shardwire in front of them, creates the sharded table `orders`
# through it, shows a keyed insert landing on its shard, and prints how to connect.
#
#   scripts/demo.sh          start (or restart) the demo
#   scripts/demo.sh stop     stop shardwire and PostgreSQL
#   scripts/demo.sh status
#
# Ports: DEMO_PG_PORT (default 5433) for PostgreSQL, DEMO_PROXY_PORT (default 6432) for shardwire,
# DEMO_METRICS_PORT (default 9930) for its Prometheus metrics.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DEMO=$ROOT/demo
PGDATA_DIR=$DEMO/pg
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
PG_PORT=${DEMO_PG_PORT:-5433}
PROXY_PORT=${DEMO_PROXY_PORT:-6432}
METRICS_PORT=${DEMO_METRICS_PORT:-9930}
PGBIN=${PG_BINDIR:-/usr/lib/postgresql/15/bin}
SOCKET_DIR=/tmp
PIDFILE=$DEMO/shardwire.pid

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

"$ROOT/scripts/install-deps.sh"
cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD_DIR" --target shardwire
BIN=$BUILD_DIR/proxy/app/shardwire
[ -x "$BIN" ] || { echo "demo: $BIN was not built" >&2; exit 1; }

stop_demo
for p in "$PG_PORT" "$PROXY_PORT" "$METRICS_PORT"; do
  if port_open "$p"; then
    echo "demo: port $p is already in use; pick others with DEMO_PG_PORT / DEMO_PROXY_PORT" >&2
    exit 1
  fi
done

mkdir -p "$DEMO"
chmod 755 "$DEMO"
if [ "$(id -u)" -eq 0 ] && [ ! -e "$PGDATA_DIR" ] && ! runuser -u postgres -- test -x "$DEMO"; then
  # The postgres user cannot reach this checkout (e.g. under /root): keep the data elsewhere.
  target=/var/tmp/shardwire-demo-pg
  mkdir -p "$target"
  ln -s "$target" "$PGDATA_DIR"
  echo "demo: $DEMO is not accessible to the postgres user; data lives in $target"
fi
if [ ! -f "$PGDATA_DIR/PG_VERSION" ]; then
  mkdir -p "$PGDATA_DIR"
  [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$PGDATA_DIR"
  chmod 700 "$PGDATA_DIR"
  as_postgres "$PGBIN/initdb" -D "$PGDATA_DIR" -U postgres -E UTF8 --locale=C \
    --auth-local=trust --auth-host=scram-sha-256 --no-instructions >/dev/null
  cat >>"$PGDATA_DIR/postgresql.conf" <<CONF
# shardwire demo
listen_addresses = '127.0.0.1'
unix_socket_directories = '$SOCKET_DIR'
wal_level = logical
max_connections = 200
CONF
fi
# The port can change between runs.
sed -i '/^port = /d' "$PGDATA_DIR/postgresql.conf"
echo "port = $PG_PORT" >>"$PGDATA_DIR/postgresql.conf"
as_postgres "$PGBIN/pg_ctl" start -w -D "$PGDATA_DIR" -l "$PGDATA_DIR/postgres.log" >/dev/null
echo "demo: PostgreSQL 15 running on 127.0.0.1:$PG_PORT (data in $PGDATA_DIR)"

PSQL_ADMIN=("$PGBIN/psql" -X -q -h "$SOCKET_DIR" -p "$PG_PORT" -U postgres -d postgres -v ON_ERROR_STOP=1)
if [ "$(as_postgres "${PSQL_ADMIN[@]}" -Atc "SELECT count(*) FROM pg_roles WHERE rolname = 'app'")" = 0 ]; then
  as_postgres "${PSQL_ADMIN[@]}" -c "CREATE ROLE app LOGIN PASSWORD 'secret'"
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
YAML

"$BIN" init --config "$DEMO/shardwire.yaml"

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

# A sharded table created through shardwire (on every shard, with its fence trigger), and one
# keyed insert per tenant: each row lands only on the shard that owns its bucket.
export PGPASSWORD=secret
PSQL_PROXY=("$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "host=127.0.0.1 port=$PROXY_PORT dbname=app user=app")
"${PSQL_PROXY[@]}" -c "CREATE TABLE IF NOT EXISTS orders (tenant_id bigint NOT NULL, id bigserial, note text,
                                                         PRIMARY KEY (tenant_id, id))"
for tenant in 1 2 3 4; do
  "${PSQL_PROXY[@]}" -c "INSERT INTO orders (tenant_id, note) VALUES ($tenant, 'demo')"
  echo "demo: $("$BIN" route --config "$DEMO/shardwire.yaml" "INSERT INTO orders (tenant_id) VALUES ($tenant)" | head -1)"
done
for db in shard0 shard1; do
  echo "demo: $db holds tenants: $("$PGBIN/psql" -X -At -h 127.0.0.1 -p "$PG_PORT" -U app -d "$db" \
    -c "SELECT coalesce(string_agg(DISTINCT tenant_id::text, ','), '-') FROM orders")"
done
echo "demo: the admin console's view of the shards:"
PGPASSWORD=adminpw "$PGBIN/psql" -X "host=127.0.0.1 port=$PROXY_PORT dbname=shardwire user=admin" -c "SHOW SHARDS"
unset PGPASSWORD

cat <<MSG
demo: shardwire running (pid $(cat "$PIDFILE")), logs in $DEMO/shardwire.log

Connect through shardwire:
  psql "host=127.0.0.1 port=$PROXY_PORT dbname=app user=app password=secret"
  e.g.  INSERT INTO orders (tenant_id, note) VALUES (42, 'hello');
        SELECT * FROM orders WHERE tenant_id = 42;
Where would a statement go?
  $BIN route --config $DEMO/shardwire.yaml "SELECT * FROM orders WHERE tenant_id = 42"
The admin console (SHOW HELP lists its commands):
  psql "host=127.0.0.1 port=$PROXY_PORT dbname=shardwire user=admin password=adminpw"
  e.g.  SHOW POOLS;  SHOW STATS;  SHOW SHARDS;  SHOW ROUTE SELECT * FROM orders WHERE tenant_id = 42;
Prometheus metrics:
  curl -s http://127.0.0.1:$METRICS_PORT/metrics | grep ^shardwire_

Stop everything:
  $ROOT/scripts/demo.sh stop
MSG
