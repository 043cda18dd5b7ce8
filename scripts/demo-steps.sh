# The demo's steps, sourced by scripts/demo.sh once shardwire runs in front of the catalog and the
# two shards (it sets PGBIN, PG_PORT, PROXY_PORT, METRICS_PORT and DEMO). Each step prints lines
# starting with "demo: "; tests/demo/demo_test.sh checks them.

PROXY_DSN="host=127.0.0.1 port=$PROXY_PORT dbname=app user=app password=secret sslmode=disable"
CONSOLE_DSN="host=127.0.0.1 port=$PROXY_PORT dbname=shardwire user=admin password=adminpw"
shard_dsn() { echo "host=127.0.0.1 port=$PG_PORT dbname=shard$1 user=app password=secret"; }
proxy_sql() { "$PGBIN/psql" -X -q -At -F '|' -v ON_ERROR_STOP=1 "$PROXY_DSN" -c "$1"; }
shard_sql() { "$PGBIN/psql" -X -q -At -F '|' -v ON_ERROR_STOP=1 "$(shard_dsn "$1")" -c "$2"; }
# The console's answer with its header line, '|'-separated; columns are picked by name, so
# columns added later do not shift what is read.
console_table() { "$PGBIN/psql" -X -q -A -F '|' -P footer=off -v ON_ERROR_STOP=1 "$CONSOLE_DSN" -c "$1"; }
pick() {  # COLUMN... : those columns of every row of a console_table on stdin
  awk -F'|' -v names="$*" '
    NR == 1 { n = split(names, want, " "); for (i = 1; i <= NF; i++) at[$i] = i
              for (k = 1; k <= n; k++) if (!(want[k] in at)) { print "demo: no column " want[k] > "/dev/stderr"; exit 1 }
              next }
    { line = ""; for (k = 1; k <= n; k++) line = line (k > 1 ? "|" : "") $(at[want[k]]); print line }'
}
metric() {  # NAME{labels} as written in /metrics: its value, 0 when absent
  curl -s "http://127.0.0.1:$METRICS_PORT/metrics" | awk -v m="$1" '$1 == m { v = $2 } END { print v + 0 }'
}

# 1. Keyed routing: a sharded table created through shardwire (on every shard, with its fence
# trigger), one keyed insert per tenant, each landing only on the shard that owns its bucket.
show_keyed_routing() {
  echo "demo: [1/5] keyed routing"
  proxy_sql "CREATE TABLE IF NOT EXISTS orders (tenant_id bigint NOT NULL, id bigserial, note text,
                                                PRIMARY KEY (tenant_id, id))"
  local tenant route
  for tenant in 1 2 3 4; do
    proxy_sql "INSERT INTO orders (tenant_id, note) VALUES ($tenant, 'demo')"
    route=$(console_table "SHOW ROUTE SELECT * FROM orders WHERE tenant_id = $tenant" | pick summary)
    echo "demo:   SHOW ROUTE SELECT * FROM orders WHERE tenant_id = $tenant  ->  $route"
  done
  for shard in 0 1; do
    echo "demo:   shard$shard holds tenants $(shard_sql "$shard" \
      "SELECT coalesce(string_agg(DISTINCT tenant_id::text, ',' ORDER BY tenant_id::text), '-') FROM orders")"
  done
}

# 2. A read without the key: sent to both shards and merged by shardwire (GROUP BY, ORDER BY).
show_merged_read() {
  echo "demo: [2/5] a merged cross-shard read"
  local sql="SELECT tenant_id, count(*) AS orders FROM orders GROUP BY tenant_id ORDER BY tenant_id"
  echo "demo:   $sql  ->  $(console_table "SHOW ROUTE $sql" | pick summary)"
  echo "demo:   answer (tenant|orders): $(proxy_sql "$sql" | paste -sd' ' -)"
}

# 3. One transaction writing on both shards: COMMIT runs two-phase commit (PREPARE TRANSACTION on
# each shard, the decision in the catalog, COMMIT PREPARED).
show_cross_shard_transaction() {
  echo "demo: [3/5] a cross-shard transaction"
  local a b before after
  a=$(shard_sql 0 "SELECT min(tenant_id) FROM orders")
  b=$(shard_sql 1 "SELECT min(tenant_id) FROM orders")
  if [ -z "$a" ] || [ -z "$b" ]; then echo "demo:   warning: no tenant on each shard; skipped"; return 0; fi
  before=$(metric 'shardwire_cross_shard_transactions_total{outcome="two_phase_committed"}')
  "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$PROXY_DSN" <<SQL
BEGIN;
INSERT INTO orders (tenant_id, note) VALUES ($a, 'transfer out');
INSERT INTO orders (tenant_id, note) VALUES ($b, 'transfer in');
COMMIT;
SQL
  after=$(metric 'shardwire_cross_shard_transactions_total{outcome="two_phase_committed"}')
  echo "demo:   BEGIN; INSERT tenant $a (shard0); INSERT tenant $b (shard1); COMMIT"
  echo "demo:   committed by two-phase commit: $((after - before)) (metric" \
    "shardwire_cross_shard_transactions_total{outcome=\"two_phase_committed\"});" \
    "rows on shard0: $(shard_sql 0 "SELECT count(*) FROM orders WHERE note = 'transfer out'")," \
    "on shard1: $(shard_sql 1 "SELECT count(*) FROM orders WHERE note = 'transfer in'")"
}

# 4. A live move: 8 of s0's buckets go to s1 while pgbench writes through shardwire.
pick_buckets_to_move() {
  # Buckets on s0 that hold some of the load's tenants (1001..1200) but none of tenants 1..4,
  # 8 of them; any s0 buckets once those ran out.
  local on_s0
  on_s0=$(console_table "SHOW BUCKETS s0" | pick bucket | paste -sd, -)
  shard_sql 0 "
    WITH s0 AS (SELECT unnest('{$on_s0}'::int[]) AS b),
         load AS (SELECT DISTINCT shardwire.bucket_of(g::bigint, 4096) AS b FROM generate_series(1001, 1200) g),
         mine AS (SELECT shardwire.bucket_of(g::bigint, 4096) AS b FROM generate_series(1, 4) g)
    SELECT string_agg(b::text, ',' ORDER BY pref, b) FROM (
      SELECT b, CASE WHEN b IN (SELECT b FROM load) THEN 0 ELSE 1 END AS pref FROM s0
      WHERE b NOT IN (SELECT b FROM mine) ORDER BY pref, b LIMIT 8) picked"
}

follow_migration() {  # ID: SHOW MIGRATIONS until the migration ends (45 s at most)
  local id=$1 started=$SECONDS row state="" last="" step copied total lag pause expires error
  while [ $((SECONDS - started)) -lt 45 ]; do
    row=$(console_table "SHOW MIGRATIONS" |
      pick id state step rows_copied rows_total lag_bytes last_pause_ms rollback_expires_at error |
      awk -F'|' -v id="$id" '$1 == id')
    IFS='|' read -r _ state step copied total lag pause expires error <<<"$row"
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
    echo "demo:   warning: migration $id is ${state:-unknown} after 45 s (it goes on in the background)${error:+; last error: $error}"
  fi
}

live_move() {
  echo "demo: [4/5] a live bucket move under load"
  local run buckets
  run=$(date +%s)
  buckets=$(pick_buckets_to_move)
  if [ -z "$buckets" ]; then echo "demo:   no bucket left on s0 to move; skipping the live move"; return 0; fi
  cat >"$DEMO/load.sql" <<SQL
\set k random(1001, 1200)
INSERT INTO orders (tenant_id, note) VALUES (:k, 'load $run');
SQL
  echo "demo:   pgbench inserts for 12 s through shardwire (4 clients, tenants 1001..1200) while"
  echo "demo:   buckets $buckets move from s0 to s1 (MOVE BUCKETS on the admin console)"
  "$PGBIN/pgbench" -n -f "$DEMO/load.sql" -T 12 -c 4 -j 2 --failures-detailed "$PROXY_DSN" \
    >"$DEMO/load.out" 2>"$DEMO/load.err" &
  local load_pid=$!
  sleep 2
  local id
  id=$(console_table "MOVE BUCKETS $buckets TO s1" | pick migration_id | head -1)
  echo "demo:   MOVE BUCKETS $buckets TO s1  ->  migration ${id:-(none)}; SHOW MIGRATIONS:"
  [ -n "$id" ] && follow_migration "$id"
  wait "$load_pid" || true
  local out tx failed aborted
  out=$(cat "$DEMO/load.out")
  tx=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$out")
  failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' <<<"$out")
  aborted=$(grep -c 'aborted' "$DEMO/load.err" || true)
  local in_buckets="shardwire.bucket_of(tenant_id, 4096) = ANY('{$buckets}'::int[])" rows0 rows1
  rows0=$(shard_sql 0 "SELECT count(*) FROM orders WHERE note = 'load $run'")
  rows1=$(shard_sql 1 "SELECT count(*) FROM orders WHERE note = 'load $run'")
  echo "demo:   load: ${tx:-?} inserts acknowledged, ${failed:-?} failed, $aborted clients aborted" \
    "(errors: $((${failed:-0} + aborted)))"
  echo "demo:   rows of this load: $rows0 on shard0 + $rows1 on shard1 = $((rows0 + rows1));" \
    "$(shard_sql 1 "SELECT count(*) FROM orders WHERE note = 'load $run' AND $in_buckets") written to the" \
    "moved buckets are on shard1, $(shard_sql 0 "SELECT count(*) FROM orders WHERE $in_buckets") rows of them left on shard0"
}

# 5. The admin console and the metrics.
show_console_and_metrics() {
  echo "demo: [5/5] the admin console and the metrics"
  echo "demo:   SHOW SHARDS:"
  "$PGBIN/psql" -X "$CONSOLE_DSN" -c "SHOW SHARDS"
  echo "demo:   SHOW MIGRATIONS:"
  "$PGBIN/psql" -X "$CONSOLE_DSN" -c "SHOW MIGRATIONS"
  echo "demo:   curl -s http://127.0.0.1:$METRICS_PORT/metrics (a few of them):"
  curl -s "http://127.0.0.1:$METRICS_PORT/metrics" |
    grep -E '^shardwire_(buckets|queries_total|cross_shard_transactions_total|migrations)\{' | head -n 16 | sed 's/^/  /'
}
