#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (clang, ASan+UBSan, in build-fuzz/) and runs each:
# first its seed corpus (tests/fuzz/corpus/<target>, every input once), then FUZZ_SECONDS of
# fuzzing. New corpus entries, logs and crashing inputs go to a work directory, never into the
# repository. Exits non-zero when any target crashes, leaks, times out or breaks an invariant,
# and prints where the input that did it was saved.
#
#   scripts/fuzz.sh                      CI mode: every target, 20 s each (~3 min on 2 cores)
#   scripts/fuzz.sh --long               3600 s per target (or FUZZ_SECONDS=...), same targets
#   scripts/fuzz.sh parser_facts ...     only the named targets
#
# Environment: FUZZ_SECONDS (default 20, --long: 3600), FUZZ_WORK (default build-fuzz/fuzz-work),
# BUILD_DIR (default build-fuzz), JOBS (build parallelism, default 2), FUZZ_JOBS (targets fuzzed
# at once, default one per core).
# A crashing input replays with: build-fuzz/tests/fuzz/<target>_fuzz <file>
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build-fuzz}
FUZZ_WORK=${FUZZ_WORK:-$BUILD_DIR/fuzz-work}
JOBS=${JOBS:-2}
FUZZ_JOBS=${FUZZ_JOBS:-$(nproc)}

# -max_len per target: a few times the largest input the code under test accepts as a whole
# (startup packets go up to 10 000 bytes; admin commands are one line), so mutations stay useful.
declare -A MAX_LEN=(
  [frame_reader]=4096 [startup_auth]=12288 [pgoutput]=4096
  [parser_facts]=4096 [admin_command]=512 [config_loader]=8192 [copy_rows]=4096
)
ALL_TARGETS=(frame_reader startup_auth pgoutput parser_facts admin_command config_loader copy_rows)

seconds=${FUZZ_SECONDS:-20}
targets=()
for arg in "$@"; do
  case "$arg" in
    --long) seconds=${FUZZ_SECONDS:-3600} ;;
    -h|--help) sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $arg" >&2; exit 2 ;;
    *)
      if [ -z "${MAX_LEN[$arg]:-}" ]; then
        echo "fuzz.sh: unknown target $arg (${ALL_TARGETS[*]})" >&2
        exit 2
      fi
      targets+=("$arg") ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=("${ALL_TARGETS[@]}")

"$ROOT/scripts/install-deps.sh"

started=$SECONDS
CC=clang CXX=clang++ cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSHARDWIRE_FUZZ=ON -DSHARDWIRE_TESTS=OFF >/dev/null
cmake --build "$BUILD_DIR" --target fuzz_targets -j "$JOBS"
echo "fuzz.sh: built in $((SECONDS - started)) s"

# UBSan findings are fatal (-fno-sanitize-recover); show where they happened. LeakSanitizer is
# on by default (libFuzzer's -detect_leaks=1).
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
# ASan keeps freed blocks in a 256 MB quarantine by default, which (with its per-size caches) took
# config_loader past 1 GB of RSS in minutes; 64 MB still catches use-after-free of recent blocks.
export ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=64}

# A statistic -print_final_stats=1 wrote at the end of a log: final_stat <name> <log>.
final_stat() { grep -o "stat::$1: *[0-9]*" "$2" | tail -1 | grep -o '[0-9]*$' || true; }

# Runs one target: its seeds once, then fuzzing. Writes its summary line to $work/summary and
# "ok" or "failed" to $work/status (targets run side by side: the statuses come back in files).
fuzz_target() {  # TARGET
  local target=$1 binary seeds work log options dict status runs rate
  binary=$BUILD_DIR/tests/fuzz/${target}_fuzz
  seeds=$ROOT/tests/fuzz/corpus/$target
  work=$FUZZ_WORK/$target
  mkdir -p "$work/corpus" "$work/artifacts"
  rm -f "$work/status" "$work/summary"
  log=$work/fuzz.log
  # libFuzzer options: every input at most 10 s (the default is 20 minutes); no single allocation
  # over 1 GB (nothing the proxy accepts needs one: messages are capped at 256 MiB); 4 GB of RSS
  # (ASan's allocator caches grow for an hour under config_loader); new inputs go to the first
  # corpus directory (the work one), the seeds are only read.
  options=(-max_len="${MAX_LEN[$target]}" -timeout=10 -malloc_limit_mb=1024 -rss_limit_mb=4096
           -print_final_stats=1 -print_funcs=0 -artifact_prefix="$work/artifacts/")
  # Keywords and token forms of text inputs (SQL, YAML), where random bytes rarely reach them.
  dict=$ROOT/tests/fuzz/$target.dict
  [ ! -f "$dict" ] || options+=(-dict="$dict")

  echo "fuzz.sh: $target: replaying $(ls "$seeds" | wc -l) seeds, then fuzzing ${seconds} s"
  status=ok
  if ! "$binary" "${options[@]}" -runs=0 "$seeds" >"$log" 2>&1; then
    status=failed
  elif ! "$binary" "${options[@]}" -max_total_time="$seconds" "$work/corpus" "$seeds" \
         >>"$log" 2>&1; then
    status=failed
  fi

  runs=$(final_stat number_of_executed_units "$log")
  rate=$(final_stat average_exec_per_sec "$log")
  printf '%-14s %10s runs %8s exec/s  %s\n' "$target" "${runs:-?}" "${rate:-?}" \
    "$([ $status = ok ] && echo ok || echo FAILED)" >"$work/summary"
  echo "$status" >"$work/status"
}

# One target per core at a time: each fuzzer is single-threaded.
for target in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$FUZZ_JOBS" ]; do wait -n || true; done
  fuzz_target "$target" &
done
wait

failed=()
summary=()
for target in "${targets[@]}"; do
  work=$FUZZ_WORK/$target
  summary+=("$(cat "$work/summary" 2>/dev/null || echo "$target: no summary (the run was cut short)")")
  [ "$(cat "$work/status" 2>/dev/null)" = ok ] && continue
  failed+=("$target")
  log=$work/fuzz.log
  echo "fuzz.sh: $target FAILED; from $log:" >&2
  grep -E 'ERROR|SUMMARY|invariant|runtime error' "$log" | head -5 >&2 || true
  # libFuzzer prints "Test unit written to <path>" for each crash, leak, timeout or OOM.
  grep -o 'Test unit written to .*' "$log" | sed 's/^/  /' >&2 || true
  echo "  replay: $BUILD_DIR/tests/fuzz/${target}_fuzz <that file>" >&2
done

echo "fuzz.sh: done in $((SECONDS - started)) s"
printf '  %s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: failing targets: ${failed[*]} (logs and inputs in $FUZZ_WORK)" >&2
  exit 1
fi
