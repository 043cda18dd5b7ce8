# shellcheck shell=bash
# Sourced (not run) by the scripts that run an outside test suite through shardwire
# (pg_regress_through_shardwire.sh, driver_suites_through_shardwire.sh): a scratch PostgreSQL 15
# cluster under WORK, and shardwire proxies in front of it with that cluster as the one shard.
#
#   start_scratch_cluster WORK [MAX_CONNECTIONS]   sets DATA and PGPORT; stopped at exit
#   start_scratch_proxy MODE DATABASE CONFIG LOG [POOL_EXTRA]
#                                                  sets PROXY_PID and PROXY_PORT once it answers
#   stop_scratch_proxy
#
# Needs SHARDWIRE (the binary). As root, the cluster runs as the postgres user (RUN_AS).

SCRATCH_BINDIR=/usr/lib/postgresql/15/bin
RUN_AS=()
[ "$(id -u)" -eq 0 ] && RUN_AS=(runuser -u postgres --)
PROXY_PID=
PROXY_PORT=

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

stop_scratch_proxy() {
  if [ -n "$PROXY_PID" ]; then
    kill "$PROXY_PID" 2>/dev/null || true
    wait "$PROXY_PID" 2>/dev/null || true
  fi
  PROXY_PID=
}

stop_scratch_cluster() {
  stop_scratch_proxy
  [ -n "${DATA:-}" ] && "${RUN_AS[@]}" "$SCRATCH_BINDIR/pg_ctl" -D "$DATA" -m immediate stop >/dev/null 2>&1 || true
}

start_scratch_cluster() {  # WORK [MAX_CONNECTIONS]
  DATA=$1/data
  PGPORT=$(free_port)
  rm -rf "$DATA"
  "${RUN_AS[@]}" "$SCRATCH_BINDIR/initdb" -D "$DATA" -U postgres --auth=trust --no-sync >/dev/null
  cat >>"$DATA/postgresql.conf" <<EOF
port = $PGPORT
listen_addresses = '127.0.0.1'
unix_socket_directories = '$1'
max_connections = ${2:-200}
fsync = off
max_prepared_transactions = 10
EOF
  "${RUN_AS[@]}" "$SCRATCH_BINDIR/pg_ctl" -D "$DATA" -l "$1/postgres.log" -w start >/dev/null
  trap stop_scratch_cluster EXIT
}

start_scratch_proxy() {  # MODE DATABASE CONFIG LOG [POOL_EXTRA: more pool settings, ", k: v"]
  local mode=$1 db=$2 config=$3 log=$4 pool_extra=${5:-}
  stop_scratch_proxy
  PROXY_PORT=$(free_port)
  cat >"$config" <<EOF
listen: { host: 127.0.0.1, port: $PROXY_PORT }
workers: 2
database: $db
auth: { method: trust, users: [ { name: postgres } ] }
pool: { mode: $mode, size: 100$pool_extra }
shards:
  - { name: s0, dsn: "host=127.0.0.1 port=$PGPORT dbname=$db user=postgres" }
EOF
  "$SHARDWIRE" --config "$config" >"$log" 2>&1 &
  PROXY_PID=$!
  for _ in $(seq 50); do
    psql -X -q -h 127.0.0.1 -p "$PROXY_PORT" -U postgres -d "$db" -c 'SELECT 1' >/dev/null 2>&1 && return 0
    sleep 0.2
  done
}
