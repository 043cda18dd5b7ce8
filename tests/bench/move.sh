#!/usr/bin/env bash
# Online bucket move under a keyed write load (run by hand; not a pass/fail test).
#
# Three PostgreSQL 15 servers on 127.0.0.1 (catalog; shards s0 and s1, wal_level=logical) and
# shardwire in front of them (admin console, metrics, mover with a short rollback window). A
# sharded `orders` table gets ROWS rows (one per tenant_id 1..ROWS, so every bucket has some).
# pgbench runs a keyed write transaction (UPDATE + INSERT of one tenant) through shardwire for
# SECS seconds with per-transaction logging. Under that load it
#   1. times a plain `psql \copy ... TO STDOUT | psql \copy ... FROM STDIN` pipe of the rows of the
#      buckets about to move, s0 -> a scratch table on s1 (text and binary format, PIPE_ROUNDS times);
#   2. at MOVE_AT seconds issues `MOVE BUCKETS <the s0 buckets in MOVE_RANGE> TO s1` on the console
#      and polls SHOW MIGRATIONS (and /metrics) until the migration is done;
# then prints: write latency before / during / after the move and of the moving buckets' writes
# that started inside the cutover window (the per-bucket write pause), client-visible errors,
# mover copy rate vs the pipe, peak apply lag, the catch-up's apply lag (as the mover logs it:
# from the source's commit timestamp; and as a client sees it: from pgbench's acknowledged COMMIT
# to the target's commit timestamp of the row, track_commit_timestamp on the shards) and the
# cutover pause.
#
#   tests/bench/move.sh
#   ROWS=1000000 CLIENTS=16 SECS=60 MOVE_AT=20 tests/bench/move.sh
#
# Environment: ROWS (200000), CLIENTS (8), SECS (40, the whole load), MOVE_AT (10 s after the load
# starts, or later so that BEFORE_SECS (4) of load follow the pipe), MOVE_RANGE ("0-1023": 1/8 of
# the 4096 buckets; the s0 half of them moves), MODE (simple; pgbench -M), COPY_ROWS_PER_SEC (100000000: unthrottled), ROLLBACK_WINDOW (2s), POOL_SIZE (40),
# SW_WORKERS (1), MOVE_TIMEOUT (120 s), PIPE_ROUNDS (3), SYNC_COMMIT (on) and WAL_WRITER_DELAY (10ms) on the shards,
# RATE (pgbench -R transactions per second in all; empty: as fast as it goes), LOG_LEVEL (debug: shardwire then logs the
# cutover's steps and each queued write; its other debug lines are per connection, so cheap),
# SHARDWIRE_BIN (default build/proxy/app/shardwire, built if missing), KEEP=1 keeps the work
# directory (logs, pgbench per-transaction logs, poll samples).
#
# Which bucket did a transaction write? pgbench's per-transaction log has no variables, so the key
# is a pure function of what the log does tell: the client id and the transaction's ordinal n for
# that client (a counter the script keeps: `-D n=0`, `\set n :n + 1`; the n-th log line of a client
# is its n-th transaction, failed or not). key = 1 + ((x*x) mod p) mod ROWS with
# x = ((client_id*100003 + n) * 2654435761) mod p, p = 1000000007 -- a pseudo-random spread over
# 1..ROWS that SQL recomputes exactly; the bucket is shardwire.bucket_of(key, 4096) evaluated on a
# shard. Each INSERT stores 'client/n' in its note, and the report checks every committed
# transaction's row is at the key computed for it (this also checks no acknowledged write was
# lost or duplicated by the move).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ROWS=${ROWS:-200000}
CLIENTS=${CLIENTS:-8}
SECS=${SECS:-40}
MOVE_AT=${MOVE_AT:-10}
MOVE_RANGE=${MOVE_RANGE:-0-1023}
MODE=${MODE:-simple}
COPY_ROWS_PER_SEC=${COPY_ROWS_PER_SEC:-100000000}
ROLLBACK_WINDOW=${ROLLBACK_WINDOW:-2s}
POOL_SIZE=${POOL_SIZE:-40}
SW_WORKERS=${SW_WORKERS:-1}
MOVE_TIMEOUT=${MOVE_TIMEOUT:-120}
PIPE_ROUNDS=${PIPE_ROUNDS:-3}
BEFORE_SECS=${BEFORE_SECS:-4}
LOG_LEVEL=${LOG_LEVEL:-debug}
BUCKETS=4096
PGBIN=${PG_BINDIR:-/usr/lib/postgresql/15/bin}

source "$ROOT/tests/bench/common.sh"
require_binaries "$PGBIN/pgbench" "$PGBIN/initdb" "$PGBIN/psql"
command -v curl >/dev/null || { echo "bench: curl not found" >&2; exit 1; }
[[ $MOVE_RANGE =~ ^([0-9]+)-([0-9]+)$ ]] || { echo "bench: MOVE_RANGE must look like 0-1023" >&2; exit 2; }
RANGE_LO=${BASH_REMATCH[1]}
RANGE_HI=${BASH_REMATCH[2]}

now_us() { date +%s%6N; }
say() { echo "bench: $*" >&2; }

# ---- PostgreSQL: catalog server, shard servers s0 and s1 ---------------------------------------
SW_PID=""
LOAD_PID=""
BENCH_PID_VARS="LOAD_PID SW_PID"
start_bench_cluster move-bench
# The mover's statements are logged with their durations (ALTER ROLE mover below): the target's
# COPY ... FROM STDIN time is compared with the pipe's, measured the same way.
# A walsender sends only flushed WAL. With synchronous_commit = on (SYNC_COMMIT, the default, as
# on a production server; fsync stays off) each commit flushes its WAL and wakes the walsender;
# with off (common.sh's) the WAL writer's delay adds up to that much to the catch-up's apply
# lag: 10 ms as in the integration harness, not the default 200 ms.
# track_commit_timestamp: the report reads when the target committed each applied row (below).
SHARD_CONF="synchronous_commit = ${SYNC_COMMIT:-on}
track_commit_timestamp = on
wal_writer_delay = ${WAL_WRITER_DELAY:-10ms}
wal_level = logical
max_wal_senders = 10
max_replication_slots = 10
log_timezone = 'UTC'
log_line_prefix = '%m [%p] %a '"
start_bench_server s0 "$SHARD_CONF"
S0_PORT=$SERVER_PORT
start_bench_server s1 "$SHARD_CONF"
S1_PORT=$SERVER_PORT
SW_PORT=$(pick_port)
METRICS_PORT=$(pick_port)

as_pg() { local port=$1; shift; as_postgres "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$WORK" -p "$port" -U postgres "$@"; }
as_pg "$PG_PORT" -d postgres -c "CREATE ROLE app LOGIN PASSWORD 'secret'" -c "CREATE DATABASE catalog OWNER app"
for port in "$S0_PORT" "$S1_PORT"; do
  as_pg "$port" -d postgres -c "CREATE ROLE app LOGIN PASSWORD 'secret'" -c "CREATE DATABASE app OWNER app" \
    -c "CREATE ROLE mover LOGIN SUPERUSER REPLICATION PASSWORD 'moverpw'" \
    -c "ALTER ROLE mover SET log_min_duration_statement = 0"
done

dsn() {  # dsn catalog|s0|s1 [user password]
  local port=$S0_PORT db=app
  case $1 in catalog) port=$PG_PORT db=catalog ;; s1) port=$S1_PORT ;; esac
  echo "host=127.0.0.1 port=$port dbname=$db user=${2:-app} password=${3:-secret} sslmode=disable"
}
PROXY_DSN="host=127.0.0.1 port=$SW_PORT dbname=app user=app password=secret sslmode=disable"
CONSOLE_DSN="host=127.0.0.1 port=$SW_PORT dbname=shardwire user=admin password=adminpw sslmode=disable"
sql() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }
console() { "$PGBIN/psql" -X -q -A -t -F '|' -v ON_ERROR_STOP=1 "$CONSOLE_DSN" -c "$1"; }

# ---- shardwire ---------------------------------------------------------------------------------
cat >"$WORK/shardwire.yaml" <<YAML
listen: { host: 127.0.0.1, port: $SW_PORT }
workers: $SW_WORKERS
log_level: $LOG_LEVEL
database: app
admin: { database: shardwire, users: [admin] }
metrics: { listen: "127.0.0.1:$METRICS_PORT" }
auth:
  method: scram-sha-256
  users: [ { name: app, password: secret }, { name: admin, password: adminpw } ]
pool: { mode: transaction, size: $POOL_SIZE, idle_timeout: 600s, query_wait_timeout: 30s }
catalog: { dsn: "$(dsn catalog)" }
shards:
  - { name: s0, dsn: "$(dsn s0)" }
  - { name: s1, dsn: "$(dsn s1)" }
sharding:
  buckets: $BUCKETS
  default_shard: s0
  directory_lease: 30s
  tables: [ { name: orders, key: tenant_id, type: bigint } ]
mover: { copy_rows_per_sec: $COPY_ROWS_PER_SEC, rollback_window: $ROLLBACK_WINDOW, user: mover, password: moverpw }
cutover: { queue_timeout: 2s, queue_max: 10000, drain_timeout: 5s }
YAML
"$BIN" check --config "$WORK/shardwire.yaml" >/dev/null
shardwire_init shardwire
start_shardwire shardwire "$SW_PORT" SW_PID

# The table through shardwire (every shard, fence trigger); ids come from per-shard sequences, so
# rows are keyed by (tenant_id, id). Each shard is seeded directly with its own buckets' tenants.
sql "$PROXY_DSN" -c "CREATE TABLE orders (tenant_id bigint NOT NULL, id bigserial, note text,
                     qty integer NOT NULL DEFAULT 0, PRIMARY KEY (tenant_id, id))"
say "seeding $ROWS rows"
for i in 0 1; do
  sql "$(dsn s$i)" -c "INSERT INTO orders (tenant_id, note) SELECT g, 'seed' FROM generate_series(1, $ROWS) g
                       WHERE shardwire.bucket_of(g::bigint, $BUCKETS) % 2 = $i" -c "VACUUM ANALYZE orders"
done
# Scratch targets for the pipe, on s1 directly (not sharded, no trigger): clones of s1's orders with
# its rows and indexes (primary key and bucket index), so the pipe inserts into tables and indexes
# of the size the mover's target has (an empty table, or one index fewer, takes rows faster).
for format in text binary; do
  sql "$(dsn s1)" -c "CREATE TABLE pipe_$format (LIKE orders INCLUDING DEFAULTS INCLUDING INDEXES)" \
    -c "INSERT INTO pipe_$format SELECT * FROM orders" -c "VACUUM ANALYZE pipe_$format"
done

# The buckets that move: those of MOVE_RANGE that s0 owns.
MOVING=$(console "SHOW BUCKETS s0" | awk -F'|' -v lo="$RANGE_LO" -v hi="$RANGE_HI" \
  '$1 >= lo && $1 <= hi { printf "%s%s", sep, $1; sep = "," }')
[ -n "$MOVING" ] || { say "no bucket of $MOVE_RANGE is on s0"; exit 1; }
MOVING_COUNT=$(tr ',' '\n' <<<"$MOVING" | wc -l)
MOVING_ROWS=$(sql -A -t "$(dsn s0)" -c "SELECT count(*) FROM orders WHERE shardwire.bucket_of(tenant_id, $BUCKETS) = ANY('{$MOVING}'::int[])")
say "$MOVING_COUNT buckets of $MOVE_RANGE are on s0 ($MOVING_ROWS seeded rows)"

# ---- the load ----------------------------------------------------------------------------------
cat >"$WORK/write.sql" <<SQL
\set n :n + 1
\set x ((:client_id * 100003 + :n) * 2654435761) % 1000000007
\set k 1 + ((:x * :x) % 1000000007) % $ROWS
BEGIN;
UPDATE orders SET qty = qty + 1 WHERE tenant_id = :k;
INSERT INTO orders (tenant_id, note) VALUES (:k, :client_id::text || '/' || :n::text);
END;
SQL
THREADS=$((CLIENTS < 2 ? CLIENTS : 2))
LOAD_START=$(now_us)
"$PGBIN/pgbench" -n -f "$WORK/write.sql" -D n=0 -T "$SECS" -M "$MODE" -c "$CLIENTS" -j "$THREADS" \
  ${RATE:+-R "$RATE"} --failures-detailed -l --log-prefix="$WORK/txlog" "$PROXY_DSN" >"$WORK/pgbench.out" 2>"$WORK/pgbench.err" &
LOAD_PID=$!
say "load: $CLIENTS clients for $SECS s (pgbench -M $MODE${RATE:+, -R $RATE})"

# ---- 1. the pipe, under the same load ---------------------------------------------------------
sleep 2
FILTER="shardwire.bucket_of(tenant_id, $BUCKETS) = ANY('{$MOVING}'::int[])"
declare -A PIPE_ROWS PIPE_WALLS
for _ in $(seq 1 "$PIPE_ROUNDS"); do
  for format in text binary; do
    opt=""
    [ $format = binary ] && opt=" (FORMAT binary)"
    # the previous round's rows out again (they are exactly the moving buckets' rows)
    sql "$(dsn s1)" -c "DELETE FROM pipe_$format WHERE $FILTER" -c "VACUUM pipe_$format"
    t0=$(now_us)
    out=$(sql "$(dsn s0 mover moverpw)" -c "\\copy (SELECT * FROM orders WHERE $FILTER) TO PSTDOUT$opt" |
      "$PGBIN/psql" -X -v ON_ERROR_STOP=1 "$(dsn s1 mover moverpw)" -c "\\copy pipe_$format FROM PSTDIN$opt")
    t1=$(now_us)
    PIPE_WALLS[$format]+="$((t1 - t0)) "
    PIPE_ROWS[$format]=$(sed -nE 's/^COPY ([0-9]+)$/\1/p' <<<"$out")
    say "pipe ($format): ${PIPE_ROWS[$format]} rows in $(awk -v u=$((t1 - t0)) 'BEGIN { printf "%.3f", u / 1e6 }') s"
  done
done
PIPE_END=$(now_us)

# ---- 2. the move -------------------------------------------------------------------------------
wait_for=$((LOAD_START + MOVE_AT * 1000000 - $(now_us)))
# The "before" window starts 1 s after the pipe and lasts at least BEFORE_SECS.
[ $wait_for -lt $(((1 + BEFORE_SECS) * 1000000)) ] && wait_for=$(((1 + BEFORE_SECS) * 1000000))
sleep "$(awk -v u=$wait_for 'BEGIN { printf "%.3f", u / 1e6 }')"
MOVE_US=$(now_us)
MOVE_OUT=$(console "MOVE BUCKETS $RANGE_LO-$RANGE_HI TO s1")
# MOVE BUCKETS answers source|target|bucket_count|buckets|migration_id|rows|bytes|plan_rows|...
ID=$(awk -F'|' 'NR == 1 { print $5 }' <<<"$MOVE_OUT")
[[ $ID =~ ^[0-9]+$ ]] || { say "MOVE BUCKETS answered: $MOVE_OUT"; exit 1; }
say "migration $ID: $MOVING_COUNT buckets s0 -> s1"

metric() { awk -v m="$1" '$1 == m { print $2; exit }' <<<"$2"; }
POLL=$WORK/poll.tsv
state="" last=""
while :; do
  t=$(now_us)
  row=$({ console "SHOW MIGRATIONS" || true; } | awk -F'|' -v id="$ID" '$1 == id')
  metrics=$(curl -s --max-time 2 "http://127.0.0.1:$METRICS_PORT/metrics" || true)
  IFS='|' read -r _ _ _ _ state step copied total _ lag_b lag_s pause _ _ error <<<"$row"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$state" "$step" "$copied" "$total" "$lag_b" \
    "$lag_s" "$pause" "$(metric shardwire_mover_lag_bytes "$metrics")" "$(metric shardwire_mover_lag_seconds "$metrics")" \
    "$(metric shardwire_cutover_queued_writes "$metrics")" "$error" >>"$POLL"
  if [ "$state/$step" != "$last" ]; then
    say "$(awk -v u=$((t - MOVE_US)) 'BEGIN { printf "+%6.2f s", u / 1e6 }') $state ${step:+($step)} copied $copied/$total lag ${lag_b:-0} B${error:+ error: $error}"
    last="$state/$step"
  fi
  case $state in done | failed | cancelled | rolled_back) break ;; esac
  if [ $((t - MOVE_US)) -gt $((MOVE_TIMEOUT * 1000000)) ]; then say "migration not finished after $MOVE_TIMEOUT s"; break; fi
  sleep 0.1
done
DONE_POLL_US=$(now_us)
if kill -0 "$LOAD_PID" 2>/dev/null && [ $((LOAD_START + SECS * 1000000 - DONE_POLL_US)) -lt 2000000 ]; then
  say "warning: less than 2 s of load left after the move; raise SECS for an 'after' window"
fi
if [ $((LOAD_START + SECS * 1000000)) -lt "$DONE_POLL_US" ]; then
  say "warning: the load ended before the migration did; raise SECS"
fi
LOAD_RC=0
wait "$LOAD_PID" || LOAD_RC=$?
LOAD_PID=""
LOAD_END=$(now_us)

# ---- timeline from shardwire's log (ms timestamps) ---------------------------------------------
log_us() {  # epoch µs of the first log line matching ERE $1, empty if none
  local line
  line=$(grep -m1 -E "$1" "$WORK/shardwire.log") || return 0
  date -u -d "${line%% *}" +%s%6N
}
log_line() { grep -m1 -E "$1" "$WORK/shardwire.log" || true; }
COPIED_LINE=$(log_line "mover: copied [0-9]+ rows .* from s0 to s1")
COPY_END=$(log_us "mover: copied [0-9]+ rows .* from s0 to s1")
COPY_ROWS=$(sed -nE 's/.*mover: copied ([0-9]+) rows \(([0-9]+) bytes\).* in ([0-9.]+) s.*/\1/p' <<<"$COPIED_LINE")
COPY_BYTES=$(sed -nE 's/.*mover: copied ([0-9]+) rows \(([0-9]+) bytes\).* in ([0-9.]+) s.*/\2/p' <<<"$COPIED_LINE")
COPY_SECS=$(sed -nE 's/.*mover: copied ([0-9]+) rows \(([0-9]+) bytes\).* in ([0-9.]+) s.*/\3/p' <<<"$COPIED_LINE")
STREAM_US=$(log_us "mover: migration $ID catch-up streaming")
STEADY_US=$(log_us "mover: migration $ID: the stream is close behind the source")
FLIP_LINE=$(log_line "mover: migration $ID: [0-9]+ bucket\(s\) now on s1; writes paused")
FLIP_US=$(log_us "mover: migration $ID: [0-9]+ bucket\(s\) now on s1; writes paused")
PAUSE_MS=$(sed -nE 's/.*writes paused ([0-9.]+) ms.*/\1/p' <<<"$FLIP_LINE")
CLOSED_US=$(log_us "mover: migration $ID: rollback window closed")
DONE_US=$(log_us "mover: migration $ID done")
ABORTS=$(grep -c -E "mover: migration $ID cutover aborted" "$WORK/shardwire.log" || true)
# The cutover's steps (ms after its start), from the flip's log line; with log_level debug also
# the writes it queued.
STEPS=$(sed -nE 's/.*\(steps, ms after the cutover began: (.*); flip \+[0-9.]+\).*/\1/p' <<<"$FLIP_LINE")
QUEUED_LINES=$(grep -c "waits for its cutover" "$WORK/shardwire.log" || true)
[ "$LOG_LEVEL" = debug ] || QUEUED_LINES="- (LOG_LEVEL=debug)"
CUT_LO=""
[ -n "$FLIP_US" ] && [ -n "$PAUSE_MS" ] && CUT_LO=$(awk -v f="$FLIP_US" -v p="$PAUSE_MS" 'BEGIN { printf "%.0f", f - p * 1000 }')
rel() { [ -n "$1" ] && awk -v u=$(($1 - MOVE_US)) 'BEGIN { printf "%+.2f s", u / 1e6 }' || echo "-"; }

# ---- PostgreSQL's statement durations of the copies (target side: COPY ... FROM STDIN) --------
copy_ms() {  # copy_ms LOGFILE ERE: duration of the first matching statement, in ms
  { grep -m1 -E "duration: [0-9.]+ ms  statement: $2" "$1" || true; } | sed -nE 's/.*duration: ([0-9.]+) ms.*/\1/p'
}
MOVER_COPY_MS=$(copy_ms "$WORK/s1/postgres.log" 'COPY ("?public"?\.)?"?orders"? \(.*\) FROM STDIN')
MOVER_SRC_MS=$(copy_ms "$WORK/s0/postgres.log" 'COPY \(SELECT .* FROM ("?public"?\.)?"?orders"? WHERE')
MOVER_DELETE_MS=$(copy_ms "$WORK/s1/postgres.log" 'BEGIN; SET LOCAL session_replication_role = replica; DELETE FROM')
MOVER_COUNT_MS=$(copy_ms "$WORK/s0/postgres.log" 'SELECT count\(\*\) FROM ("?public"?\.)?"?orders"? WHERE shardwire.bucket_of')
median() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{ a[NR] = $1 } END { if (NR) print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }
span() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk -v d="$1" 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR) printf "%.3f-%.3f", lo / d, hi / d }'; }
declare -A PIPE_COPY_MS PIPE_COPY_ALL PIPE_WALL
for format in text binary; do
  PIPE_COPY_ALL[$format]=$({ grep -E "duration: [0-9.]+ ms  statement: COPY +pipe_$format +FROM +STDIN" "$WORK/s1/postgres.log" || true; } |
    sed -nE 's/.*duration: ([0-9.]+) ms.*/\1/p' | tr '\n' ' ')
  PIPE_COPY_MS[$format]=$(median <<<"${PIPE_COPY_ALL[$format]}")
  PIPE_WALL[$format]=$(median <<<"${PIPE_WALLS[$format]}")
done

# ---- latencies by window, keys checked against the rows ----------------------------------------
cat "$WORK"/txlog.* | awk '{ n[$1]++; printf "%s %d %s %s%06d\n", $1, n[$1], $3, $5, $6 }' >"$WORK/tx.txt"
for i in 0 1; do
  sql "$(dsn s$i)" -c "\\copy (SELECT tenant_id, note FROM orders WHERE note <> 'seed') TO STDOUT"
done >"$WORK/notes.tsv"
# When the target committed each row version it has (the stream's apply, for rows written on the
# source during catch-up): the lag as a client sees it is from its acknowledged COMMIT to this.
COMMIT_US="(extract(epoch FROM pg_xact_commit_timestamp(xmin)) * 1e6)::bigint"
sql "$(dsn s1)" -c "\\copy (SELECT note, $COMMIT_US FROM orders WHERE note <> 'seed') TO STDOUT" >"$WORK/target_commits.tsv"
OWN0=$(console "SHOW BUCKETS s0" | awk -F'|' '{ printf "%s%s", sep, $1; sep = "," }')
OWN1=$(console "SHOW BUCKETS s1" | awk -F'|' '{ printf "%s%s", sep, $1; sep = "," }')
MISPLACED=0
for i in 0 1; do
  own=$OWN0
  [ $i = 1 ] && own=$OWN1
  n=$(sql -A -t "$(dsn s$i)" -c "SELECT count(*) FROM orders WHERE shardwire.bucket_of(tenant_id, $BUCKETS) <> ALL('{$own}'::int[])")
  MISPLACED=$((MISPLACED + n))
done

WIN_BEFORE=$((PIPE_END + 1000000))
WIN_DONE=${DONE_US:-$LOAD_END}
# \copy takes its file name literally (no psql variables): the paths are pasted into the SQL.
cat >"$WORK/report.sql" <<'SQL'
CREATE TEMP TABLE raw (client int, n bigint, outcome text, end_us bigint);
\copy raw FROM '@WORK@/tx.txt' (FORMAT text, DELIMITER ' ')
CREATE TEMP TABLE notes (tenant_id bigint, note text);
\copy notes FROM '@WORK@/notes.tsv'
CREATE INDEX ON notes (note);
CREATE TEMP TABLE target_commits (note text, commit_us bigint);
-- failed transactions have no latency in the log: their start is taken as their end
CREATE TEMP TABLE tx AS
SELECT client, n, lat_us, lat_us IS NULL AS failed, outcome, end_us, end_us - coalesce(lat_us, 0) AS start_us, key,
       shardwire.bucket_of(key, 4096) = ANY(:'moving'::int[]) AS moving
FROM (SELECT r.*, CASE WHEN outcome ~ '^[0-9]+$' THEN outcome::bigint END AS lat_us,
             1 + ((x * x) % 1000000007) % :rows AS key
      FROM raw r, LATERAL (SELECT ((r.client::bigint * 100003 + r.n) * 2654435761) % 1000000007 AS x) k) s;
ANALYZE tx;
ANALYZE notes;
WITH w AS (
  SELECT 1 AS ord, * FROM tx WHERE start_us >= :before AND start_us < :move
  UNION ALL SELECT 2, * FROM tx WHERE start_us >= :move AND start_us < :done
  UNION ALL SELECT 3, * FROM tx WHERE start_us >= :move AND start_us < :done AND moving
  UNION ALL SELECT 4, * FROM tx WHERE start_us >= :cut_lo AND start_us <= :flip AND moving
  UNION ALL SELECT 5, * FROM tx WHERE start_us <= :flip AND end_us >= :cut_lo AND moving
  UNION ALL SELECT 6, * FROM tx WHERE start_us >= :cut_lo AND start_us <= :flip AND NOT moving
  UNION ALL SELECT 7, * FROM tx WHERE start_us >= :done)
SELECT 'lat', l.label, count(w.ord), count(w.ord) FILTER (WHERE w.failed),
       coalesce(round(percentile_disc(0.5) WITHIN GROUP (ORDER BY w.lat_us) / 1000.0, 1)::text, '-'),
       coalesce(round(percentile_disc(0.99) WITHIN GROUP (ORDER BY w.lat_us) / 1000.0, 1)::text, '-'),
       coalesce(round(max(w.lat_us) / 1000.0, 1)::text, '-')
FROM (VALUES (1, 'before the move'), (2, 'during the move (MOVE .. done), all'),
             (3, 'during the move, moving buckets'), (4, 'cutover window, moving buckets (started in it)'),
             (5, 'cutover window, moving buckets (in flight at any point of it)'),
             (6, 'cutover window, other buckets (started in it)'), (7, 'after the move')) l (ord, label)
LEFT JOIN w ON w.ord = l.ord
GROUP BY l.ord, l.label ORDER BY l.ord;
SELECT 'fail', outcome, count(*) FROM tx WHERE failed GROUP BY outcome ORDER BY outcome;
SELECT 'slow', start_us, round(lat_us / 1000.0, 1), CASE WHEN moving THEN 'moving' ELSE 'other' END
FROM tx WHERE start_us >= :move AND start_us < :done AND NOT failed ORDER BY lat_us DESC LIMIT 5;
-- Steady catch-up as a client sees it: from the acknowledged COMMIT (pgbench's end time) of a
-- moving bucket's transaction to the target's commit of the row it inserted. Only keys written
-- by one transaction in the whole run: a later UPDATE of the key would give the row a newer xmin.
\copy target_commits FROM '@WORK@/target_commits.tsv'
WITH once AS (SELECT key FROM tx WHERE NOT failed GROUP BY key HAVING count(*) = 1),
     lag AS (SELECT c.commit_us - tx.end_us AS us
             FROM tx JOIN once USING (key) JOIN target_commits c ON c.note = tx.client || '/' || tx.n
             WHERE tx.moving AND NOT tx.failed AND tx.end_us >= :steady AND tx.end_us < :flip)
SELECT 'acklag', count(*), coalesce(round(percentile_disc(0.5) WITHIN GROUP (ORDER BY us) / 1000.0, 1)::text, '-'),
       coalesce(round(percentile_disc(0.99) WITHIN GROUP (ORDER BY us) / 1000.0, 1)::text, '-'),
       coalesce(round(max(us) / 1000.0, 1)::text, '-')
FROM lag;
SELECT 'keys', (SELECT count(*) FROM tx WHERE NOT failed),
       (SELECT count(*) FROM tx JOIN notes ON notes.note = tx.client || '/' || tx.n AND notes.tenant_id = tx.key
        WHERE NOT failed),
       (SELECT count(*) FROM notes), (SELECT count(DISTINCT note) FROM notes),
       (SELECT count(*) FROM tx WHERE moving), (SELECT count(*) FROM tx);
SQL
sed -i "s|@WORK@|$WORK|g" "$WORK/report.sql"
ANALYSIS=$(sql -A -t -F '|' "$(dsn s0)" -v rows="$ROWS" -v moving="{$MOVING}" -v before="$WIN_BEFORE" \
  -v move="$MOVE_US" -v cut_lo="${CUT_LO:-0}" -v flip="${FLIP_US:-0}" -v steady="${STEADY_US:-0}" -v done="$WIN_DONE" -f "$WORK/report.sql")

# ---- report ------------------------------------------------------------------------------------
PGB=$(cat "$WORK/pgbench.out")
pgb() { sed -nE "s/^$1: ([0-9.]+).*/\1/p" <<<"$PGB" | head -1; }
ABORTED=$(grep -c -E '^client [0-9]+ .*aborted' "$WORK/pgbench.err" || true)
peak() {  # peak COLUMN over poll samples in copying/catching_up/cutting_over
  awk -F'\t' -v c="$1" '($2 == "copying" || $2 == "catching_up" || $2 == "cutting_over") && $c != "" && $c + 0 > m { m = $c + 0 }
    END { print m + 0 }' "$POLL"
}
rate() { awk -v r="$1" -v us="$2" 'BEGIN { if (us > 0 && r != "") printf "%.0f", r / (us / 1e6); else printf "-" }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else printf "-" }'; }
ms_to_us() { [ -n "$1" ] && awk -v m="$1" 'BEGIN { printf "%d", m * 1000 }' || echo 0; }

echo
echo "online move under load: $ROWS rows, $CLIENTS clients (pgbench -M $MODE, -T $SECS), MOVE BUCKETS $MOVE_RANGE TO s1"
echo "= $MOVING_COUNT buckets of s0 ($MOVING_ROWS seeded rows); mover.copy_rows_per_sec $COPY_ROWS_PER_SEC," \
  "rollback_window $ROLLBACK_WINDOW; shardwire workers $SW_WORKERS; $(nproc) CPUs; $(date -u +%Y-%m-%d)"
echo
echo "pgbench: $(pgb 'number of transactions actually processed') transactions, tps $(sed -nE 's/^tps = ([0-9]+).*/\1/p' <<<"$PGB" | head -1), exit status $LOAD_RC"
echo "timeline from MOVE: copy done $(rel "$COPY_END"), streaming $(rel "$STREAM_US"), cutover $(rel "$CUT_LO") .. $(rel "$FLIP_US")," \
  "window closed $(rel "$CLOSED_US"), done $(rel "$DONE_US"); load ran $(awk -v u=$((LOAD_START - MOVE_US)) 'BEGIN { printf "%+.2f", u / 1e6 }') .. $(rel "$LOAD_END")"
echo
echo "(a) write latency by window (transaction start = pgbench completion time - latency)"
echo
echo "| window | transactions | failed | p50 ms | p99 ms | max ms |"
echo "|---|---:|---:|---:|---:|---:|"
awk -F'|' '$1 == "lat" { printf "| %s | %s | %s | %s | %s | %s |\n", $2, $3, $4, $5, $6, $7 }' <<<"$ANALYSIS"
echo
echo "slowest transactions during the move (start from MOVE, latency, bucket, migration state polled just before):"
awk -F'|' '$1 == "slow" { print $2, $3, $4 }' <<<"$ANALYSIS" | while read -r start lat kind; do
  st=$(awk -F'\t' -v t="$start" '$1 <= t { s = $2 ($3 == "" ? "" : "/" $3) } END { print (s == "" ? "planned" : s) }' "$POLL")
  echo "  $(rel "$start")  $lat ms  $kind  $st"
done
echo
echo "(b) client-visible errors"
echo
FAILED_TX=$(pgb 'number of failed transactions')
echo "| what | count |"
echo "|---|---:|"
echo "| pgbench failed transactions | ${FAILED_TX:-0} |"
echo "| of which serialization (40001) | $(pgb 'number of serialization failures' || true) |"
echo "| of which deadlock (40P01) | $(pgb 'number of deadlock failures' || true) |"
echo "| pgbench clients aborted (other errors) | $ABORTED |"
awk -F'|' '$1 == "fail" { printf "| failed transactions in the log: %s | %s |\n", $2, $3 }' <<<"$ANALYSIS"
curl -s "http://127.0.0.1:$METRICS_PORT/metrics" | awk '/^shardwire_backend_errors_total/ { printf "| shardwire %s | %s |\n", $1, $2; n++ }
  END { if (!n) print "| shardwire_backend_errors_total (server errors relayed, any class) | 0 |" }'
if [ "$ABORTED" != 0 ]; then
  echo
  echo "pgbench aborts:"
  { grep -E 'aborted|ERROR' "$WORK/pgbench.err" || true; } | sed -E 's/^client [0-9]+ /client N /' | sort | uniq -c | sort -rn | sed -n 1,10p
fi
echo
echo "(c) copy of the moving buckets' rows, s0 -> s1, under the load. COPY s = the target's COPY ... FROM STDIN"
echo "    statement duration in PostgreSQL's log; wall s = the whole pipe, or the mover's own copy timer. The pipe"
echo "    writes into a clone of s1's orders (same rows and indexes), $PIPE_ROUNDS times per format: medians,"
echo "    with the COPY range; the mover copies once."
echo
echo "| copy | rows | wall s | rows/s (wall) | COPY s | COPY s range | rows/s (COPY) | mover/pipe rows/s (COPY) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
MOVER_RATE=$(rate "$COPY_ROWS" "$(ms_to_us "$MOVER_COPY_MS")")
printf '| mover (binary, snapshot) | %s | %s | %s | %s | - | %s | 1.00 |\n' "${COPY_ROWS:--}" "${COPY_SECS:--}" \
  "$(rate "$COPY_ROWS" "$(awk -v s="${COPY_SECS:-0}" 'BEGIN { printf "%d", s * 1e6 }')")" \
  "$(awk -v m="${MOVER_COPY_MS:-0}" 'BEGIN { printf "%.3f", m / 1000 }')" "$MOVER_RATE"
for format in text binary; do
  r=$(rate "${PIPE_ROWS[$format]}" "$(ms_to_us "${PIPE_COPY_MS[$format]}")")
  printf '| psql \\copy pipe (%s) | %s | %.3f | %s | %s | %s | %s | %s |\n' "$format" "${PIPE_ROWS[$format]}" \
    "$(awk -v u="${PIPE_WALL[$format]}" 'BEGIN { print u / 1e6 }')" "$(rate "${PIPE_ROWS[$format]}" "${PIPE_WALL[$format]}")" \
    "$(awk -v m="${PIPE_COPY_MS[$format]:-0}" 'BEGIN { printf "%.3f", m / 1000 }')" \
    "$(span 1000 <<<"${PIPE_COPY_ALL[$format]}")" "$r" "$(ratio "$MOVER_RATE" "$r")"
done
echo
echo "mover copy: $COPY_BYTES bytes; its wall time (0.1 s steps) also holds the DELETE of the set's rows on the target"
echo "(${MOVER_DELETE_MS:-?} ms); source COPY (SELECT ...) TO STDOUT ${MOVER_SRC_MS:-?} ms; before the copy, counting the"
echo "set's rows on the source took ${MOVER_COUNT_MS:-?} ms"
echo
echo "(d) apply lag and cutover"
echo
echo "| what | value |"
echo "|---|---:|"
echo "| peak lag_bytes, SHOW MIGRATIONS (catching up) | $(peak 6) |"
echo "| peak lag_seconds, SHOW MIGRATIONS | $(peak 7) |"
echo "| peak shardwire_mover_lag_bytes | $(peak 9) |"
echo "| peak shardwire_mover_lag_seconds | $(peak 10) |"
APPLY_LAG=$(grep -m1 -oE "mover: migration $ID apply lag .*" "$WORK/shardwire.log" | sed 's/^mover: migration [0-9]* //' || true)
echo "| catch-up apply lag, source commit to target commit (logged when the stream stops) | ${APPLY_LAG:--} |"
IFS='|' read -r _ ACK_N ACK_P50 ACK_P99 ACK_MAX <<<"$(awk -F'|' '$1 == "acklag"' <<<"$ANALYSIS")"
echo "| catch-up apply lag as a client sees it, acknowledged COMMIT to target commit, steady catch-up, keys written once: p50 / p99 / max ms (transactions) | $ACK_P50 / $ACK_P99 / $ACK_MAX ($ACK_N) |"
echo "| writes queued behind the cutover (debug log lines) | $QUEUED_LINES |"
echo "| peak shardwire_cutover_queued_writes (sampled) | $(awk -F'\t' '$11 + 0 > m { m = $11 + 0 } END { print m + 0 }' "$POLL") |"
echo "| last_pause_ms (SHOW MIGRATIONS) | $(awk -F'\t' '$8 != "" { p = $8 } END { print (p == "" ? "-" : p) }' "$POLL") |"
echo "| cutover attempts aborted | $ABORTS |"
echo "| cutover steps, ms after the cutover began | ${STEPS:--}; flip at $PAUSE_MS |"
echo "| poll samples (every ~0.1 s) | $(wc -l <"$POLL") |"
echo
KEYS=$(awk -F'|' '$1 == "keys"' <<<"$ANALYSIS")
IFS='|' read -r _ OK_TX FOUND NOTES DISTINCT MOVING_TX ALL_TX <<<"$KEYS"
echo "key check: $FOUND of $OK_TX committed transactions found at their computed key ($NOTES rows written, $DISTINCT distinct);" \
  "$MOVING_TX of $ALL_TX transactions hit the moving buckets"
echo "rows on a shard that does not own their bucket (after the move): $MISPLACED"
echo "migration $ID final state: $state"
# Not a pass/fail test on numbers, but a broken move is reported by the exit status.
[ "$state" = "done" ] && [ "$MISPLACED" = 0 ] && [ "$FOUND" = "$OK_TX" ] && [ "$NOTES" = "$DISTINCT" ]
