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

# utime + stime of a process, in clock ticks.
cpu_ticks() {
  local stat
  stat=$(cat "/proc/$1/stat")
  stat=${stat##*) }  # fields after "(comm) "; utime and stime are fields 14 and 15 overall
  awk '{ print $12 + $13 }' <<<"$stat"
}
