#!/usr/bin/env bash
# Where a proxy's time goes per transaction (run by hand; not a pass/fail test). For pgbouncer
# (transaction pooling), shardwire passthrough (one shard, nothing sharded) and shardwire sharded
# (pgbench_accounts and pgbench_history sharded by aid, one shard owning every bucket, so every
# statement is parsed and routed), each in front of the same PostgreSQL 15 database:
#
#   1. pgbench runs TX transactions per client; `perf stat` attached to the proxy counts system
#      calls (raw_syscalls:sys_enter), context switches and user/system CPU; printed per
#      transaction. perf counts in the kernel, so the run is not slowed down.
#   2. the same run again under `strace -c -f` for the split by system call (strace slows the
#      proxy down; only its counts are used, never its times).
#   3. with PROFILE=1, `perf record` of shardwire sharded over one more run, top functions printed
#      (perf report --no-children); with MALLOCS=1 too, one more run recording each malloc's
#      call chain, printed as mallocs per transaction by their first three callers.
#
#   tests/bench/syscalls.sh
#
# Environment: TX (10000 transactions per client), CLIENTS (8), WORKLOADS ("select tpcb"), SCALE
# (10), POOL_SIZE (40), PROFILE (0), MALLOCS (0; 1: heap allocations per transaction, counted by
# a uprobe on libc's malloc that the script adds and removes), STRACE (1; 0 skips step 2),
# SHARDWIRE_BIN (default
# build/proxy/app/shardwire), KEEP=1.
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
MALLOCS=${MALLOCS:-0}
STRACE=${STRACE:-1}
MALLOC_TX=${MALLOC_TX:-200}  # per client, for the call-chain recording (each sample keeps 4 KiB of stack)
LIBC=${LIBC:-/lib/x86_64-linux-gnu/libc.so.6}
PGBIN=${PG_BINDIR:-/usr/lib/postgresql/15/bin}
PGBOUNCER=${PGBOUNCER:-/usr/sbin/pgbouncer}

source "$ROOT/tests/bench/common.sh"
require_binaries "$PGBOUNCER" "$PGBIN/pgbench" "$PGBIN/initdb" /usr/bin/perf /usr/bin/strace

BOUNCER_PID=""
PASS_PID=""
SHARDED_PID=""
BENCH_PID_VARS="BOUNCER_PID PASS_PID SHARDED_PID"
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

TARGETS="pgbouncer passthrough sharded"
port_of() { case $1 in pgbouncer) echo "$BOUNCER_PORT" ;; passthrough) echo "$PASS_PORT" ;; sharded) echo "$SHARDED_PORT" ;; esac; }
pid_of() { case $1 in pgbouncer) echo "$BOUNCER_PID" ;; passthrough) echo "$PASS_PID" ;; sharded) echo "$SHARDED_PID" ;; esac; }
conninfo() { echo "host=127.0.0.1 port=$(port_of "$1") dbname=app user=app password=secret sslmode=disable"; }
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
declare -A SYSCALLS CSWITCH UTIME STIME TOP MALLOC_PER_TX
STAT_EVENTS=raw_syscalls:sys_enter,context-switches,task-clock
[ -n "$MALLOC_EVENT" ] && STAT_EVENTS="$STAT_EVENTS,probe_libc:$MALLOC_EVENT"
for workload in $WORKLOADS; do
  for target in $TARGETS; do
    run_pgbench "$target" "$workload"  # warm up: server connections, caches
    stat_file="$WORK/perf-$target-$workload.txt"
    perf stat -x, -e "$STAT_EVENTS" -p "$(pid_of "$target")" \
      -o "$stat_file" -- sleep 3600 2>/dev/null &
    perf_pid=$!
    sleep 0.5
    ticks_before=$(cpu_ticks_split "$(pid_of "$target")")
    run_pgbench "$target" "$workload"
    ticks_after=$(cpu_ticks_split "$(pid_of "$target")")
    stop_sleeper "$perf_pid"
    n=$((TX * CLIENTS))
    key="$target/$workload"
    SYSCALLS[$key]=$(awk -F, -v n=$n '/raw_syscalls:sys_enter/ { printf "%.2f", $1 / n }' "$stat_file")
    CSWITCH[$key]=$(awk -F, -v n=$n '/context-switches/ { printf "%.2f", $1 / n }' "$stat_file")
    MALLOC_PER_TX[$key]=$(awk -F, -v n=$n '/probe_libc:/ { printf "%.2f", $1 / n }' "$stat_file")
    read -r u0 s0 <<<"$ticks_before"
    read -r u1 s1 <<<"$ticks_after"
    hz=$(getconf CLK_TCK)
    UTIME[$key]=$(awk -v d=$((u1 - u0)) -v n=$n -v hz="$hz" 'BEGIN { printf "%.1f", d * 1e6 / hz / n }')
    STIME[$key]=$(awk -v d=$((s1 - s0)) -v n=$n -v hz="$hz" 'BEGIN { printf "%.1f", d * 1e6 / hz / n }')
    echo "bench: perf stat $key done" >&2
  done
done

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
echo "pgbench -t $TX -c $CLIENTS -j 2, scale $SCALE, pool size $POOL_SIZE, shardwire workers 1, $(nproc) CPUs"
echo
echo "| workload | proxy | syscalls/tx | context switches/tx | user µs/tx | system µs/tx | mallocs/tx | busiest system calls (calls/tx, strace -c) |"
echo "|---|---|---:|---:|---:|---:|---:|---|"
for workload in $WORKLOADS; do
  for target in $TARGETS; do
    k="$target/$workload"
    echo "| $workload | $target | ${SYSCALLS[$k]} | ${CSWITCH[$k]} | ${UTIME[$k]} | ${STIME[$k]} | ${MALLOC_PER_TX[$k]:--} | ${TOP[$k]:--} |"
  done
done

# ---- 3. perf record: where shardwire sharded spends its CPU ---------------------------------------
if [ "$PROFILE" = 1 ]; then
  for workload in $WORKLOADS; do
    perf record -F 2000 -g -p "$SHARDED_PID" -o "$WORK/perf-$workload.data" -- sleep 3600 2>/dev/null &
    rec_pid=$!
    sleep 0.5
    run_pgbench sharded "$workload"
    stop_sleeper "$rec_pid"
    echo
    echo "perf record, shardwire sharded, $workload: CPU by object, then shardwire's own top functions"
    report() { perf report -i "$WORK/perf-$workload.data" --stdio --no-children -g none "$@" 2>/dev/null |
      grep -E '^ +[0-9.]+%' | sed 's/ *- *- *$//; s/ *$//'; }
    # `|| true`: head closing the pipe early fails the pipeline under pipefail.
    report --sort dso --percent-limit 1 | head -8 || true
    echo
    report --sort symbol --dsos "$(basename "$BIN")" --percent-limit 0.3 | head -25 || true
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
