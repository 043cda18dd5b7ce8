#!/usr/bin/env bash
# Installs what is missing, then builds and runs every test (what .ci/run runs):
#
#   release  Release build with gcc in build/ (warnings are errors): unit, routing and lint tests
#            and ctest `demo` (scripts/demo.sh from a mode-700 copy of the checkout). Without
#            the asan stage it runs the integration suites too, against this shardwire; with it,
#            only the memory-bound cases (ctest `integration.memory_bounds`: RSS holds for
#            this allocator, not ASan's).
#   asan     ASan+UBSan build with clang in build-asan/ of shardwire and the unit tests
#            (warnings are errors): the unit tests, then every integration suite (real
#            PostgreSQL 15 clusters, psql, pgbench, drivers, a real Prometheus; the release
#            build's test binary) driving the sanitized shardwire (SHARDWIRE_BIN). The suites
#            run once, here: each assertion is checked, and every path they drive is checked
#            for memory errors and undefined behaviour too. Any sanitizer report fails the run.
#            With the tsan stage, the mover's suites (mover*, reshard*) run there instead.
#   lint     scripts/lint.sh --tidy: clang-format, module boundaries and clang-tidy (over the
#            asan stage's clang compile_commands.json in build-asan/; only configured, nothing
#            built, when that stage did not run).
#   tsan     TSan build (gcc) of shardwire and the mover's unit tests in build-tsan/: unit_mover,
#            then the integration suites that run the mover's threads (mover*, reshard*): each
#            suite runs under one sanitizer, these under the one that checks their threads.
#   fuzz     scripts/fuzz.sh: every libFuzzer target over its seed corpus, then a short run.
#
# IT_JOBS (default 4) integration suites run at once. STAGES picks stages (default: all, in
# that order). Extra arguments go to the release stage's ctest and skip the others, e.g.
# `scripts/test.sh -L integration` or `-R integration.pool` (a Release shardwire).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
STAGES=${STAGES:-release asan lint tsan fuzz}
[ $# -gt 0 ] && STAGES=release

"$ROOT/scripts/install-deps.sh"
"$ROOT/scripts/install-driver-deps.sh"

# Each stage line says when it began; the run ends with every stage's duration (tests/README.md
# keeps a table of them).
STAGE_NAMES=()
STAGE_STARTS=()
stage() {
  echo "== $(date +%T) $*"
  STAGE_NAMES+=("$*")
  STAGE_STARTS+=("$SECONDS")
}
stage_times() {
  local i end
  for i in "${!STAGE_NAMES[@]}"; do
    end=${STAGE_STARTS[$((i + 1))]:-$SECONDS}
    printf '== %5d s  %s\n' $((end - STAGE_STARTS[i])) "${STAGE_NAMES[i]}"
  done
}
# Integration suites each start their own PostgreSQL clusters and proxies on free ports and
# spend most of their time waiting on them, so they run IT_JOBS at a time (ctest starts the
# longest first: COST in tests/integration/CMakeLists.txt). Unit tests are CPU-bound: 2.
IT_JOBS=${IT_JOBS:-4}
# A suite that fails while others run beside it runs once more alone: a real failure fails
# again (and the first failure stays in the log above); one that only the parallel run's load
# caused does not fail the run.
integration_tests() {  # CTEST-ARGUMENTS...
  ctest --output-on-failure -j"$IT_JOBS" "$@" && return 0
  echo "== $(date +%T) the suites that failed run again, one at a time"
  ctest --output-on-failure --rerun-failed -j1
}
has_stage() { [[ " $STAGES " == *" $1 "* ]]; }
# The suites that run the mover's threads: the tsan stage's, or the asan stage's without it.
MOVER_SUITES='^integration\.(mover|reshard)'

# Sanitized builds: -O1 with line tables (readable reports, a fraction of -O2 -g's build time).
sanitized_configure() {  # DIR OPTION COMPILER
  local dir=$1 option=$2 cc=$3 cxx
  cxx=$([ "$cc" = clang ] && echo clang++ || echo g++)
  CC=$cc CXX=$cxx cmake -S "$ROOT" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
    -DCMAKE_C_FLAGS_DEBUG="-O1 -g1" -DSHARDWIRE_WERROR=ON "-D$option=ON" >/dev/null
}
sanitized_build() {  # DIR OPTION COMPILER TARGET...
  sanitized_configure "$1" "$2" "$3"
  local dir=$1
  shift 3
  cmake --build "$dir" --target "$@"
}

# The asan and tsan stages run the release build's integration binary against a sanitized
# shardwire.
# The sanitizer runtimes write their reports into the proxy's log and exit non-zero; the
# harness fails a test whose proxy log holds one (SHARDWIRE_IT_SANITIZED=1).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:exitcode=86}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:exitcode=86}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:exitcode=86:second_deadlock_stack=1}

# Release first: it builds the integration binary every stage uses.
stage "release build"
cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSHARDWIRE_WERROR=ON >/dev/null
cmake --build "$BUILD_DIR"
if has_stage release; then
  stage "release tests"
  if [ $# -gt 0 ]; then
    (cd "$BUILD_DIR" && ctest --output-on-failure -j2 "$@")
  else
    (cd "$BUILD_DIR" && ctest --output-on-failure -j2 -LE 'integration|memory_bounds')
    if has_stage asan; then  # the suites run sanitized below; the RSS bounds need this allocator
      (cd "$BUILD_DIR" && ctest --output-on-failure -L memory_bounds)
    else
      (cd "$BUILD_DIR" && integration_tests -L integration)
    fi
  fi
fi

if has_stage asan; then
  stage "asan build"
  # Only what runs sanitized: the proxy and the unit tests (the integration binary and the bench
  # programs are the release build's; gcc builds them with warnings as errors).
  sanitized_build "$ROOT/build-asan" SHARDWIRE_SANITIZE clang shardwire all_unit_tests
  stage "asan unit tests"
  (cd "$ROOT/build-asan" && ctest --output-on-failure -j2 -L unit)
  stage "asan integration tests (sanitized shardwire)"
  asan_suites=(-L integration)
  has_stage tsan && asan_suites+=(-E "$MOVER_SUITES")
  (cd "$BUILD_DIR" && SHARDWIRE_BIN="$ROOT/build-asan/proxy/app/shardwire" SHARDWIRE_IT_SANITIZED=1 \
    integration_tests "${asan_suites[@]}")
fi

if has_stage lint; then
  stage "lint"
  # clang-tidy needs only the compile commands of a clang build: the asan stage's configuration
  # (re-running it is a no-op after that stage, and writes them when that stage did not run).
  sanitized_configure "$ROOT/build-asan" SHARDWIRE_SANITIZE clang
  "$ROOT/scripts/lint.sh" --tidy "$ROOT/build-asan"
fi

if has_stage tsan; then
  stage "tsan build"
  sanitized_build "$ROOT/build-tsan" SHARDWIRE_TSAN gcc shardwire unit_mover
  stage "tsan tests"
  (cd "$ROOT/build-tsan" && ctest --output-on-failure -R '^unit_mover$')
  (cd "$BUILD_DIR" && SHARDWIRE_BIN="$ROOT/build-tsan/proxy/app/shardwire" SHARDWIRE_IT_SANITIZED=1 \
    integration_tests -R "$MOVER_SUITES")
fi

if has_stage fuzz; then
  stage "fuzz"
  "$ROOT/scripts/fuzz.sh"
fi
stage "done"
stage_times
