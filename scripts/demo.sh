#!/usr/bin/env bash
# Local demo: installs what is missing, builds shardwire, creates a PostgreSQL 15 cluster in
# ./demo/pg (as the postgres user) holding a catalog database and two shard databases (s0, s1),
# runs `shardwire init`, starts shardwire in front of them, creates the sharded table `orders`
# through it, shows a keyed insert landing on its shard, moves a few buckets from s0 to s1 online
# under a short pgbench write load (MOVE BUCKETS on the admin console, SHOW MIGRATIONS until done,
# the load's errors counted), and prints how to connect.
#
#   scripts/demo.sh          start (or restart) the demo
#   scripts/demo.sh stop     stop shardwire and PostgreSQL
#   scripts/demo.sh status
#
# Ports: DEMO_PG_PORT (default 5433) for PostgreSQL, DEMO_PROXY_PORT (default 6432) for shardwire,
# DEMO_METRICS_PORT (default 9930) for its Prometheus metrics. DEMO_DIR (default ./demo) holds the
# data, config and logs. DEMO_MOVE=0 skips the live move.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DEMO=$(realpath -m "${DEMO_DIR:-$ROOT/demo}")
PGDATA_DIR=$DEMO/pg
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
PG_PORT=${DEMO_PG_PORT:-5433}
PROXY_PORT=${DEMO_PROXY_PORT:-6432}
METRICS_PORT=${DEMO_METRICS_PORT:-9930}
DEMO_MOVE=${DEMO_MOVE:-1}
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
CONSOLE_DSN="host=127.0.0.1 port=$PROXY_PORT dbname=shardwire user=admin password=adminpw"
"$PGBIN/psql" -X "$CONSOLE_DSN" -c "SHOW SHARDS"
unset PGPASSWORD

# A live move: a few of s0's buckets go to s1 while pgbench writes through shardwire.
live_move() {
  local console=("$PGBIN/psql" -X -q -At -F '|' -v ON_ERROR_STOP=1 "$CONSOLE_DSN" -c)
  local run shard_psql=("$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1)
  local shard0_dsn="host=127.0.0.1 port=$PG_PORT dbname=shard0 user=app password=secret"
  local shard1_dsn="host=127.0.0.1 port=$PG_PORT dbname=shard1 user=app password=secret"
  run=$(date +%s)
  # Buckets on s0 that hold some of the load's tenants (1001..1200) but none of tenants 1..4 above
  # (`shardwire route` shows the initial layout), 8 of them; any s0 buckets once those ran out.
  local on_s0 buckets
  on_s0=$("${console[@]}" "SHOW BUCKETS s0" | cut -d'|' -f1 | paste -sd, -)
  buckets=$("${shard_psql[@]}" "$shard0_dsn" -c "
    WITH s0 AS (SELECT unnest('{$on_s0}'::int[]) AS b),
         load AS (SELECT DISTINCT shardwire.bucket_of(g::bigint, 4096) AS b FROM generate_series(1001, 1200) g),
         mine AS (SELECT shardwire.bucket_of(g::bigint, 4096) AS b FROM generate_series(1, 4) g)
    SELECT string_agg(b::text, ',' ORDER BY pref, b) FROM (
      SELECT b, CASE WHEN b IN (SELECT b FROM load) THEN 0 ELSE 1 END AS pref FROM s0
      WHERE b NOT IN (SELECT b FROM mine) ORDER BY pref, b LIMIT 8) picked")
  if [ -z "$buckets" ]; then echo "demo: no bucket left on s0 to move; skipping the live move"; return 0; fi

  cat >"$DEMO/load.sql" <<SQL
\set k random(1001, 1200)
INSERT INTO orders (tenant_id, note) VALUES (:k, 'load $run');
SQL
  echo "demo: live move: pgbench inserts for 12 s through shardwire (4 clients, tenants 1001..1200) while"
  echo "demo: buckets $buckets move from s0 to s1 (MOVE BUCKETS on the admin console)"
  "$PGBIN/pgbench" -n -f "$DEMO/load.sql" -T 12 -c 4 -j 2 --failures-detailed \
    "host=127.0.0.1 port=$PROXY_PORT dbname=app user=app password=secret sslmode=disable" \
    >"$DEMO/load.out" 2>"$DEMO/load.err" &
  local load_pid=$!
  sleep 2
  # MOVE BUCKETS answers at once: source|target|bucket_count|buckets|migration_id
  local id
  id=$("${console[@]}" "MOVE BUCKETS $buckets TO s1" | awk -F'|' 'NR == 1 { print $NF }')
  echo "demo: MOVE BUCKETS $buckets TO s1  -> migration $id; SHOW MIGRATIONS:"
  # SHOW MIGRATIONS: id|buckets|source|target|state|step|rows_copied|rows_total|percent|lag_bytes|
  # lag_seconds|last_pause_ms|rollback_expires_at|paused|error
  local started=$SECONDS row state="" last="" step copied total lag pause expires error
  while [ $((SECONDS - started)) -lt 45 ]; do
    row=$("${console[@]}" "SHOW MIGRATIONS" | awk -F'|' -v id="$id" '$1 == id')
    IFS='|' read -r _ _ _ _ state step copied total _ lag _ pause expires _ error <<<"$row"
    if [ "$state/$step" != "$last" ]; then
      printf 'demo:   +%2ds  migration %s  %-15s %-20s rows %s/%s  lag %s B%s%s\n' $((SECONDS - started)) "$id" \
        "$state" "${step:+($step)}" "$copied" "$total" "${lag:-0}" "${pause:+  writes paused ${pause} ms}" \
        "${expires:+  rollback until $expires}"
      last="$state/$step"
    fi
    case $state in done | failed | cancelled | rolled_back) break ;; esac
    sleep 0.25
  done
  if [ "$state" != "done" ]; then
    echo "demo: warning: migration $id is ${state:-unknown} after 45 s (it goes on in the background)${error:+; last error: $error}"
  fi
  wait "$load_pid" || true
  local out tx failed aborted
  out=$(cat "$DEMO/load.out")
  tx=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$out")
  failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' <<<"$out")
  aborted=$(grep -c 'aborted' "$DEMO/load.err" || true)
  local rows0 rows1 moved_on_s1 moved_on_s0
  rows0=$("${shard_psql[@]}" "$shard0_dsn" -c "SELECT count(*) FROM orders WHERE note = 'load $run'")
  rows1=$("${shard_psql[@]}" "$shard1_dsn" -c "SELECT count(*) FROM orders WHERE note = 'load $run'")
  moved_on_s1=$("${shard_psql[@]}" "$shard1_dsn" -c "SELECT count(*) FROM orders
    WHERE note = 'load $run' AND shardwire.bucket_of(tenant_id, 4096) = ANY('{$buckets}'::int[])")
  moved_on_s0=$("${shard_psql[@]}" "$shard0_dsn" -c "SELECT count(*) FROM orders
    WHERE shardwire.bucket_of(tenant_id, 4096) = ANY('{$buckets}'::int[])")
  echo "demo: load: ${tx:-?} inserts acknowledged, ${failed:-?} failed, $aborted clients aborted" \
    "(errors: $(( ${failed:-0} + aborted )))"
  echo "demo: rows of this load: $rows0 on shard0 + $rows1 on shard1 = $((rows0 + rows1)); $moved_on_s1 written to the" \
    "moved buckets are on shard1, $moved_on_s0 rows of them left on shard0"
  "$PGBIN/psql" -X "$CONSOLE_DSN" -c "SHOW SHARDS"
}
if [ "$DEMO_MOVE" = 1 ]; then
  live_move || echo "demo: the live move failed; see $DEMO/shardwire.log"
fi

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
        SHOW MIGRATIONS;  MOVE BUCKETS 10-20 TO s1;  SHOW BUCKETS s1;
Prometheus metrics:
  curl -s http://127.0.0.1:$METRICS_PORT/metrics | grep ^shardwire_

Stop everything:
  ${DEMO_DIR:+DEMO_DIR=$DEMO_DIR }$ROOT/scripts/demo.sh stop
MSG
