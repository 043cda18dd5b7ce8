#!/usr/bin/env bash
# Where a proxy's time goes per transaction (run by hand; not a pass/fail test). For pgbouncer
# (transaction pooling), the null relay (tests/bench/null_relay.cc: bytes relayed between each
# client and its own server connection, nothing parsed: the floor of any user-space proxy),
# shardwire passthrough (one shard, nothing sharded) and shardwire sharded (pgbench_accounts and
# pgbench_history sharded by aid, one shard owning every bucket, so every statement is parsed and
# routed), each in front of the same PostgreSQL 15 database:
#
#   1. pgbench runs TX transactions per client; `perf stat` attached to the proxy counts system
#      calls (raw_syscalls:sys_enter), context switches and user/system CPU; printed per
#      transaction, with CPU as a ratio of pgbouncer's. ROUNDS rounds run every proxy in turn and
#      are summed. perf counts in the kernel, so the run is not slowed down.
#   2. the same run again under `strace -c -f` for the split by system call (strace slows the
#      proxy down; only its counts are used, never its times).
#   3. with PROFILE=1, `perf record` of each of PROFILE_TARGETS (default sharded) over one more
#      run: CPU by object, the proxy's and the kernel's top functions (perf report
#      --no-children); with MALLOCS=1 too, one more run recording each malloc's
#      call chain, printed as mallocs per transaction by their first three callers.
#
#   tests/bench/syscalls.sh
#
# Environment: TX (10000 transactions per client), CLIENTS (8), WORKLOADS ("select tpcb"), SCALE
# (10), POOL_SIZE (40), PROFILE (0), PROFILE_TARGETS (sharded), MALLOCS (0; 1: heap allocations
# per transaction, counted by a uprobe on libc's malloc that the script adds and removes), STRACE
# (1; 0 skips step 2), ROUNDS (1), SHARDWIRE_BIN (default build/proxy/app/shardwire), NULL_RELAY_BIN (default
# build/tests/bench/bench_null_relay, built if missing), KEEP=1.
# Workloads: select = `pgbench -S -M simple`, tpcb = pgbench's default TPC-B-like script, simple
# protocol (BEGIN; 3 UPDATEs, SELECT, INSERT; END); extended and prepared = `-S -M extended` and
# `-S -M prepared`.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TX=${TX:-10000}
CLIENTS=${CLIENTS:-8}
WORKLOADS=${WORKLOADS:-"select tpcb"}
SCALE=${SCALE:-10}
POOL_SIZE=${POOL_SIZE:-40}
PROFILE=${PROFILE:-0}
PROFILE_TARGETS=${PROFILE_TARGETS:-sharded}
MALLOCS=${MALLOCS:-0}
STRACE=${STRACE:-1}
ROUNDS=${ROUNDS:-1}
MALLOC_TX=${MALLOC_TX:-200}  # per client, for the call-chain recording (each sample keeps 4 KiB of stack)
LIBC=${LIBC:-/lib/x86_64-linux-gnu/libc.so.6}
PGBIN=${PG_BINDIR:-/usr/lib/postgresql/15/bin}
PGBOUNCER=${PGBOUNCER:-/usr/sbin/pgbouncer}

source "$ROOT/tests/bench/common.sh"
require_binaries "$PGBOUNCER" "$PGBIN/pgbench" "$PGBIN/initdb" /usr/bin/perf /usr/bin/strace

BOUNCER_PID=""
RELAY_PID=""
PASS_PID=""
SHARDED_PID=""
BENCH_PID_VARS="BOUNCER_PID RELAY_PID PASS_PID SHARDED_PID"
start_bench_cluster syscalls-bench
# A uprobe on malloc, named per run so that concurrent runs do not remove each other's.
MALLOC_EVENT=""
if [ "$MALLOCS" = 1 ]; then
  MALLOC_EVENT="swmalloc$$"
  perf probe -q -x "$LIBC" -a "$MALLOC_EVENT=malloc" || { echo "bench: perf probe on malloc failed" >&2; exit 1; }
  trap 'perf probe -q -d "probe_libc:$MALLOC_EVENT" || true; bench_cleanup' EXIT
fi
bench_admin -d postgres -c "CREATE ROLE app LOGIN PASSWORD 'secret'"
for db in plain catalog s0; do bench_admin -d postgres -c "CREATE DATABASE $db OWNER app"; done

echo "bench: pgbench -i -s $SCALE (plain and s0)" >&2
"$PGBIN/pgbench" -i -q -s "$SCALE" "$(bench_dsn plain)" >/dev/null 2>&1
"$PGBIN/pgbench" -i -q -s "$SCALE" "$(bench_dsn s0)" >/dev/null 2>&1

# ---- proxies --------------------------------------------------------------------------------------
PASS_PORT=$(pick_port)
SHARDED_PORT=$(pick_port)
start_pgbouncer plain
start_null_relay

shardwire_yaml() {  # PORT SHARD_DB [EXTRA]
  cat <<YAML
listen: { host: 127.0.0.1, port: $1 }
workers: 1
log_level: info
database: app
auth:
  method: scram-sha-256
  users: [ { name: app, password: secret } ]
pool: { mode: transaction, size: $POOL_SIZE, idle_timeout: 600s, query_wait_timeout: 30s }
shards:
  - { name: s0, dsn: "$(bench_dsn "$2")" }
${3:-}
YAML
}
shardwire_yaml "$PASS_PORT" plain >"$WORK/passthrough.yaml"
shardwire_yaml "$SHARDED_PORT" s0 "catalog: { dsn: \"$(bench_dsn catalog)\" }
sharding:
  buckets: 4096
  default_shard: s0
  directory_lease: 30s
  tables:
    - { name: pgbench_accounts, key: aid, type: integer }
    - { name: pgbench_history, key: aid, type: integer }" >"$WORK/sharded.yaml"
shardwire_init sharded
start_shardwire passthrough "$PASS_PORT" PASS_PID
start_shardwire sharded "$SHARDED_PORT" SHARDED_PID

TARGETS="pgbouncer relay passthrough sharded"
port_of() { case $1 in pgbouncer) echo "$BOUNCER_PORT" ;; relay) echo "$RELAY_PORT" ;; passthrough) echo "$PASS_PORT" ;; sharded) echo "$SHARDED_PORT" ;; esac; }
pid_of() { case $1 in pgbouncer) echo "$BOUNCER_PID" ;; relay) echo "$RELAY_PID" ;; passthrough) echo "$PASS_PID" ;; sharded) echo "$SHARDED_PID" ;; esac; }
# The relay logs in to PostgreSQL itself, so it names the database the others map "app" to.
conninfo() {
  local db=app
  [ "$1" = relay ] && db=plain
  echo "host=127.0.0.1 port=$(port_of "$1") dbname=$db user=app password=secret sslmode=disable"
}
pgbench_args() {  # WORKLOAD
  case $1 in
    select) echo "-S -M simple" ;;
    tpcb) echo "-M simple" ;;
    extended) echo "-S -M extended" ;;
    prepared) echo "-S -M prepared" ;;  # pgbouncer 1.18 runs it with one client only
  esac
}

# cpu_ticks_split PID: "utime stime" in clock ticks (fields 14 and 15 of /proc/PID/stat).
cpu_ticks_split() {
  local stat
  stat=$(cat "/proc/$1/stat")
  awk '{ print $12, $13 }' <<<"${stat##*) }"
}

# run_pgbench TARGET WORKLOAD [N]: N (default TX) transactions per client; fails the script on any error.
run_pgbench() {
  local out
  # shellcheck disable=SC2046
  out=$("$PGBIN/pgbench" -n $(pgbench_args "$2") -t "${3:-$TX}" -c "$CLIENTS" -j "$((CLIENTS < 2 ? CLIENTS : 2))" "$(conninfo "$1")" 2>&1) || {
    echo "bench: pgbench $1/$2 failed:" >&2
    tail -n 5 <<<"$out" >&2
    exit 1
  }
  grep -q "^number of failed transactions: 0" <<<"$out" || ! grep -q "^number of failed" <<<"$out" || {
    echo "bench: $1/$2 had failed transactions" >&2
    exit 1
  }
}

# perf runs `sleep` as its workload and stops when it exits (a background job of a script ignores
# SIGINT, so perf cannot be interrupted the usual way).
stop_sleeper() {
  pkill -TERM -P "$1" -x sleep || true
  wait "$1" 2>/dev/null || true
}

# ---- 1. perf stat: system calls, context switches, CPU ---------------------------------------------
# ROUNDS rounds, each running every target in turn, so that drift hits all of them alike; the
# counts and CPU ticks are summed over the rounds and divided by every transaction run.
declare -A SYSCALLS CSWITCH UTIME STIME TOP MALLOC_PER_TX
declare -A N_SYSCALLS N_CSWITCH N_MALLOC N_UTICKS N_STICKS N_TASK_NS TASK_CLOCK
STAT_EVENTS=raw_syscalls:sys_enter,context-switches,task-clock
[ -n "$MALLOC_EVENT" ] && STAT_EVENTS="$STAT_EVENTS,probe_libc:$MALLOC_EVENT"
for round in $(seq 1 "$ROUNDS"); do
  for workload in $WORKLOADS; do
    for target in $TARGETS; do
      run_pgbench "$target" "$workload"  # warm up: server connections, caches
      stat_file="$WORK/perf-$target-$workload-$round.txt"
      perf stat -x, -e "$STAT_EVENTS" -p "$(pid_of "$target")" \
        -o "$stat_file" -- sleep 3600 2>/dev/null &
      perf_pid=$!
      sleep 0.5
      read -r u0 s0 <<<"$(cpu_ticks_split "$(pid_of "$target")")"
      run_pgbench "$target" "$workload"
      read -r u1 s1 <<<"$(cpu_ticks_split "$(pid_of "$target")")"
      stop_sleeper "$perf_pid"
      key="$target/$workload"
      N_SYSCALLS[$key]=$((${N_SYSCALLS[$key]:-0} + $(awk -F, '/raw_syscalls:sys_enter/ { print $1 }' "$stat_file")))
      N_CSWITCH[$key]=$((${N_CSWITCH[$key]:-0} + $(awk -F, '/context-switches/ { print $1 }' "$stat_file")))
      N_TASK_NS[$key]=$((${N_TASK_NS[$key]:-0} + $(awk -F, '/task-clock/ { printf "%.0f", $1 * 1e6 }' "$stat_file")))
      N_MALLOC[$key]=$((${N_MALLOC[$key]:-0} + $(awk -F, '/probe_libc:/ { n = $1 } END { print n + 0 }' "$stat_file")))
      N_UTICKS[$key]=$((${N_UTICKS[$key]:-0} + u1 - u0))
      N_STICKS[$key]=$((${N_STICKS[$key]:-0} + s1 - s0))
      echo "bench: perf stat $key (round $round) done" >&2
    done
  done
done
n=$((TX * CLIENTS * ROUNDS))
per_tx() { awk -v d="$1" -v n=$n -v scale="$2" -v format="$3" 'BEGIN { printf format, d * scale / n }'; }
for workload in $WORKLOADS; do
  for target in $TARGETS; do
    key="$target/$workload"
    SYSCALLS[$key]=$(per_tx "${N_SYSCALLS[$key]}" 1 %.2f)
    CSWITCH[$key]=$(per_tx "${N_CSWITCH[$key]}" 1 %.2f)
    [ -n "$MALLOC_EVENT" ] && MALLOC_PER_TX[$key]=$(per_tx "${N_MALLOC[$key]}" 1 %.2f)
    TASK_CLOCK[$key]=$(per_tx "${N_TASK_NS[$key]}" 0.001 %.1f)
    UTIME[$key]=$(per_tx "${N_UTICKS[$key]}" "$((1000000 / CLK_TCK))" %.1f)
    STIME[$key]=$(per_tx "${N_STICKS[$key]}" "$((1000000 / CLK_TCK))" %.1f)
  done
done
# CPU per transaction (perf's task-clock: exact, where /proc's ticks are 10 ms) as a ratio of
# pgbouncer's in the same rounds.
cpu_ratio() {
  awk -v a="${N_TASK_NS[$1/$2]}" -v b="${N_TASK_NS[pgbouncer/$2]}" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "-" }'
}

# ---- 2. strace -c: which system calls -------------------------------------------------------------
for workload in $WORKLOADS; do
  [ "$STRACE" = 1 ] || break
  for target in $TARGETS; do
    trace_file="$WORK/strace-$target-$workload.txt"
    strace -c -f -o "$trace_file" -p "$(pid_of "$target")" &
    strace_pid=$!
    sleep 0.5
    run_pgbench "$target" "$workload"
    kill -TERM "$strace_pid"
    wait "$strace_pid" 2>/dev/null || true
    n=$((TX * CLIENTS))
    # "% time seconds usecs/call calls errors syscall": calls per transaction, busiest first.
    TOP["$target/$workload"]=$(awk -v n=$n '$1 ~ /^[0-9.]+$/ && $4 ~ /^[0-9]+$/ && $NF != "total" {
        printf "%s %.2f\n", $NF, $4 / n }' \
      "$trace_file" | sort -k2 -gr | head -6 | awk '{ printf "%s%s %s", sep, $1, $2; sep = ", " }')
    echo "bench: strace $target/$workload done" >&2
  done
done

echo
echo "pgbench -t $TX -c $CLIENTS -j 2, $ROUNDS round(s), scale $SCALE, pool size $POOL_SIZE, shardwire workers 1, $(nproc) CPUs"
echo
echo "| workload | proxy | syscalls/tx | context switches/tx | CPU µs/tx | user µs/tx | system µs/tx | CPU / pgbouncer | mallocs/tx | busiest system calls (calls/tx, strace -c) |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"
for workload in $WORKLOADS; do
  for target in $TARGETS; do
    k="$target/$workload"
    echo "| $workload | $target | ${SYSCALLS[$k]} | ${CSWITCH[$k]} | ${TASK_CLOCK[$k]} | ${UTIME[$k]} | ${STIME[$k]} | $(cpu_ratio "$target" "$workload") | ${MALLOC_PER_TX[$k]:--} | ${TOP[$k]:--} |"
  done
done

# ---- 3. perf record: where a proxy spends its CPU --------------------------------------------------
# report DATA PERF_REPORT_ARGS...: perf report's lines, without the call-graph columns.
report() {
  perf report -i "$1" --stdio --no-children -g none "${@:2}" 2>/dev/null |
    grep -E '^ +[0-9.]+%' | sed 's/ *- *- *$//; s/ *$//'
}
if [ "$PROFILE" = 1 ]; then
  for workload in $WORKLOADS; do
    for target in $PROFILE_TARGETS; do
      data="$WORK/perf-$target-$workload.data"
      perf record -F 2000 -g -p "$(pid_of "$target")" -o "$data" -- sleep 3600 2>/dev/null &
      rec_pid=$!
      sleep 0.5
      run_pgbench "$target" "$workload"
      stop_sleeper "$rec_pid"
      echo
      echo "perf record, $target, $workload: CPU by object, the proxy's own top functions, the kernel's"
      # `|| true`: head closing the pipe early fails the pipeline under pipefail.
      report "$data" --sort dso --percent-limit 1 | head -8 || true
      echo
      exe=$(basename "$(readlink -f "/proc/$(pid_of "$target")/exe")")
      report "$data" --sort symbol --dsos "$exe" --percent-limit 0.3 | head -25 || true
      echo
      report "$data" --sort symbol --dsos '[kernel.kallsyms]' --percent-limit 1 | head -12 || true
    done
    [ -n "$MALLOC_EVENT" ] || continue
    # Who allocates: each malloc's first three callers outside the allocator and the standard
    # library, busiest first.
    perf record -e "probe_libc:$MALLOC_EVENT" --call-graph dwarf,4096 -p "$SHARDED_PID" \
      -o "$WORK/malloc-$workload.data" -- sleep 3600 2>/dev/null &
    rec_pid=$!
    sleep 0.5
    run_pgbench sharded "$workload" "$MALLOC_TX"
    stop_sleeper "$rec_pid"
    echo
    echo "perf record -e malloc, shardwire sharded, $workload: mallocs per transaction by caller"
    perf script -i "$WORK/malloc-$workload.data" -F ip,sym 2>/dev/null | awk -v n=$((MALLOC_TX * CLIENTS)) '
      function flush() { if (chain != "") count[chain]++; chain = ""; depth = 0 }
      NF == 0 { flush(); next }
      {
        sym = $0; sub(/^[ \t]*[0-9a-f]+[ \t]+/, "", sym); sub(/ \(inlined\)$/, "", sym)
        if (depth >= 3 || sym ~ /^(__GI___libc_malloc|malloc|operator new|std::|__gnu_cxx::|_int_malloc|\[unknown\])/) next
        chain = chain (depth ? " < " : "") sym; depth++
      }
      END { flush(); for (c in count) printf "%8.2f  %s\n", count[c] / n, c }' | sort -gr | head -15 || true
  done
fi
