#!/usr/bin/env bash
# The drivers' own test suites (psycopg 3, node-postgres, asyncpg, pgjdbc) run against a fresh PostgreSQL
# 15 cluster three ways: straight, and through shardwire in session and in transaction pooling
# with that cluster as its only shard. Prints per suite the passed / failed / skipped counts of
# each target and every test that passes straight and fails (or does not run) through shardwire.
# Exits 1 when a suite could not be set up or a target ran no test (a comparison of nothing).
# By hand (not in .ci/run): it takes tens of minutes. See tests/README.md.
#
#   scripts/driver_suites_through_shardwire.sh [WORKDIR]
#
#   SUITES="psycopg node-postgres asyncpg pgjdbc"   which suites (default all four)
#   TARGETS="direct session transaction"
#   RUN_TIMEOUT=2400                 seconds one suite may run against one target
#   PYTEST_ARGS="tests/test_copy.py" extra pytest arguments (psycopg, asyncpg), e.g. to run a part
#   PYTEST_MARKERS="not slow"        pytest -m expression (psycopg)
#   COMPARE_ONLY=1                   print the comparison of the results already in WORKDIR
#
# The test files are those of the installed driver version, fetched into WORKDIR (nothing is
# copied into this repository): Debian's source package by `apt-get source` (a deb-src entry for
# Debian's archive in a private apt directory under WORKDIR, as pg_regress_through_shardwire.sh
# does); where the archive does not serve it, a git repository of the driver named by
# PSYCOPG_GIT, NODE_POSTGRES_GIT, ASYNCPG_GIT or PGJDBC_GIT (a clone, bare or not) at the installed version's
# tag.
#   psycopg 3: Debian's python3-psycopg (source psycopg3, tag X.Y.Z), run by Debian's pytest
#     (python3-pytest, python3-pytest-asyncio, python3-psycopg-pool: installed when missing).
#   node-postgres: the pg version of tests/drivers/node/package-lock.json (tag pg@X.Y.Z): pg's
#     integration tests (its own runner), pg-cursor's and pg-query-stream's (mocha); their npm
#     dependencies are installed from the npm registry into WORKDIR.
#   asyncpg: Debian's python3-asyncpg (source asyncpg, tag vX.Y.Z), its test base pointed at the
#     running server by PGHOST; run in the database "postgres", which its pool tests name.
#   pgjdbc: Debian's libpostgresql-jdbc-java (source libpgjava, tag RELX.Y.Z), its JUnit tests
#     compiled here (junit5, junit4, libhamcrest-java: installed when missing).
# Needs: postgresql-15, psql, node/npm, a built build/proxy/app/shardwire.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=${1:-/tmp/shardwire-driver-suites}
SUITES=${SUITES:-psycopg node-postgres asyncpg pgjdbc}
TARGETS=${TARGETS:-direct session transaction}
RUN_TIMEOUT=${RUN_TIMEOUT:-2400}
SHARDWIRE=${SHARDWIRE_BIN:-$ROOT/build/proxy/app/shardwire}
PYTHON=/usr/bin/python3  # Debian's, which has python3-psycopg
# shellcheck source=scripts/scratch_cluster.sh
. "$ROOT/scripts/scratch_cluster.sh"

[ -x "$SHARDWIRE" ] || { echo "no shardwire binary at $SHARDWIRE (build it first)" >&2; exit 2; }
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
chmod a+rwx "$WORK"
log() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }

# ---- sources -----------------------------------------------------------------------------------

apt_opts=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$WORK/apt/parts"
          -o "Dir::State::Lists=$WORK/apt/lists")
apt_source() {  # PACKAGE VERSION -> unpacked into $WORK/src/PACKAGE-*; false when not served
  if [ ! -d "$WORK/apt/lists" ]; then
    mkdir -p "$WORK/apt/parts" "$WORK/apt/lists/partial"
    cat >"$WORK/apt/parts/debian-src.sources" <<EOF
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    apt-get "${apt_opts[@]}" update >/dev/null 2>&1 || true
  fi
  mkdir -p "$WORK/src"
  (cd "$WORK/src" && apt-get "${apt_opts[@]}" source "$1=$2" >"$WORK/src/$1.log" 2>&1)
}

# DEST PACKAGE DEBIAN_VERSION GIT_DIR TAG PATHS...: the driver's files at DEST, from Debian's source
# package or else from the git repository at TAG.
fetch_source() {
  local dest=$1 package=$2 version=$3 git_dir=$4 tag=$5
  shift 5
  [ -d "$dest" ] && return 0
  if [ -n "$version" ] && apt_source "$package" "$version"; then
    local unpacked
    unpacked=$(find "$WORK/src" -maxdepth 1 -type d -name "$package-*" | head -1)
    mv "$unpacked" "$dest"
    log "$package: Debian source package $version"
    return 0
  fi
  if [ -z "$git_dir" ]; then
    echo "$package $version: Debian's archive did not serve the source package ($WORK/src/$package.log)" \
         "and no git repository was given; set the variable named at the top of this script" >&2
    return 1
  fi
  mkdir -p "$dest"
  git -C "$git_dir" archive --format=tar "$tag" "$@" | tar x -C "$dest"
  log "$package: $tag from $git_dir"
}

# ---- the cluster and the proxies ---------------------------------------------------------------

fresh_database() {  # NAME
  PGOPTIONS="-c client_min_messages=warning" psql -X -q -h 127.0.0.1 -p "$PGPORT" -U postgres -d template1 \
    -c "DROP DATABASE IF EXISTS \"$1\" WITH (FORCE)" -c "CREATE DATABASE \"$1\"" >/dev/null
}

# TARGET DATABASE OUT: sets TARGET_PORT, the port the suite connects to (direct: the cluster's).
# A proxy is started for session and transaction pooling, its log in OUT/shardwire.log.
start_target() {
  local target=$1 db=$2 out=$3
  stop_scratch_proxy
  TARGET_PORT=$PGPORT
  [ "$target" = direct ] && return
  start_scratch_proxy "$target" "$db" "$out/shardwire.yaml" "$out/shardwire.log"
  TARGET_PORT=$PROXY_PORT
}

# ---- results -----------------------------------------------------------------------------------

# JUnit XML files -> "outcome<TAB>test" lines (passed, failed, skipped) on stdout.
junit_results() {
  "$PYTHON" - "$@" <<'EOF'
import sys, xml.etree.ElementTree as ET
for path in sys.argv[1:]:
    try:
        root = ET.parse(path).getroot()
    except Exception as e:
        print(f"failed\t{path} (unreadable: {e})")
        continue
    for case in root.iter("testcase"):
        name = (case.get("classname", "") + "::" + case.get("name", "")).replace("\t", " ")
        name = " ".join(name.split())
        kinds = {child.tag for child in case}
        outcome = "failed" if kinds & {"failure", "error"} else "skipped" if "skipped" in kinds else "passed"
        print(f"{outcome}\t{name}")
EOF
}

# SUITE: the counts of each target and the tests that pass straight but not through shardwire.
compare() {
  local suite=$1
  echo "== $suite"
  for target in $TARGETS; do
    local r=$WORK/$suite/$target/results.txt
    [ -f "$r" ] || { echo "  $target: no results"; continue; }
    printf '  %-12s %5d passed %5d failed %5d skipped  (%s s)\n' "$target" \
      "$(grep -c '^passed' "$r" || true)" "$(grep -c '^failed' "$r" || true)" \
      "$(grep -c '^skipped' "$r" || true)" "$(cat "$WORK/$suite/$target/seconds" 2>/dev/null || echo ?)"
  done
  [ -f "$WORK/$suite/direct/results.txt" ] || return 0
  for target in $TARGETS; do
    [ "$target" = direct ] && continue
    local r=$WORK/$suite/$target/results.txt
    [ -f "$r" ] || continue
    echo "  passed straight, not through shardwire in $target pooling:"
    "$PYTHON" - "$WORK/$suite/direct/results.txt" "$r" <<'EOF'
import sys
def load(path):
    out = {}
    for line in open(path, encoding="utf-8", errors="replace"):
        outcome, _, name = line.rstrip("\n").partition("\t")
        out[name] = outcome
    return out
direct, proxied = load(sys.argv[1]), load(sys.argv[2])
lost = sorted(n for n, o in direct.items() if o == "passed" and proxied.get(n) != "passed")
for n in lost:
    print(f"    {proxied.get(n, 'not run')}: {n}")
print(f"    ({len(lost)} tests)")
EOF
  done
}

# The Debian packages (python3-<module>, "_" as "-") of the Python modules a suite's runner needs,
# installed when missing.
install_python_modules() {  # MODULE...
  local missing=() module
  for module in "$@"; do
    "$PYTHON" -c "import $module" 2>/dev/null || missing+=("python3-${module//_/-}")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

# ---- psycopg 3 ---------------------------------------------------------------------------------

# pytest -v prints "tests/FILE::TEST OUTCOME [ N%]" as each test ends: read from its log, the
# results of a run cut short by RUN_TIMEOUT are kept too.
pytest_results() {  # LOG: "outcome<TAB>test", one line per test (its first outcome: a test that
  # passed and then failed in teardown is "passed")
  sed -nE 's/^(tests\/.+) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)( .*)?$/\2\t\1/p' "$1" |
    sed -E 's/^(PASSED|XPASS|XFAIL)\t/passed\t/; s/^(FAILED|ERROR)\t/failed\t/; s/^SKIPPED\t/skipped\t/' |
    awk -F '\t' '!seen[$2]++'
}

run_psycopg() {  # TARGET PORT DB OUT
  local dsn="host=127.0.0.1 port=$2 dbname=$3 user=postgres"
  local -a markers=()
  [ -n "${PYTEST_MARKERS:-}" ] && markers=(-m "$PYTEST_MARKERS")
  # shellcheck disable=SC2086
  (cd "$WORK/psycopg" && timeout -s INT -k 60 "$RUN_TIMEOUT" nice -n 10 "$PYTHON" -m pytest tests \
    -p no:randomly -o cache_dir="$4/.pytest_cache" --test-dsn "$dsn" -v "${markers[@]}" ${PYTEST_ARGS:-} \
    >"$4/pytest.log" 2>&1) || true
  pytest_results "$4/pytest.log" >"$4/results.txt"
}

prepare_psycopg() {
  local version upstream
  version=$(dpkg-query -W -f='${Version}' python3-psycopg)
  upstream=${version%%-*}
  fetch_source "$WORK/psycopg" psycopg3 "$version" "${PSYCOPG_GIT:-}" "$upstream" tests pyproject.toml || return 1
  install_python_modules pytest pytest_asyncio psycopg_pool
}

# ---- asyncpg -----------------------------------------------------------------------------------

# asyncpg's test base uses the running server PGHOST names (RunningCluster) instead of starting its
# own; tests that must change that server's pg_hba.conf or restart it fail alike on every target.
run_asyncpg() {  # TARGET PORT DB OUT
  (cd "$WORK/asyncpg" && PGHOST=127.0.0.1 PGPORT=$2 PGUSER=postgres PGDATABASE=$3 \
    timeout -s INT -k 60 "$RUN_TIMEOUT" nice -n 10 "$PYTHON" -m pytest tests -p no:randomly \
    -o cache_dir="$4/.pytest_cache" -v ${PYTEST_ARGS:-} >"$4/pytest.log" 2>&1) || true
  pytest_results "$4/pytest.log" >"$4/results.txt"
}

prepare_asyncpg() {
  local version
  version=$(dpkg-query -W -f='${Version}' python3-asyncpg)
  fetch_source "$WORK/asyncpg" asyncpg "${version%+*}" "${ASYNCPG_GIT:-}" "v${version%%-*}" tests pytest.ini || return 1
  install_python_modules pytest
}

# ---- node-postgres -----------------------------------------------------------------------------

prepare_node_postgres() {
  local version dir=$WORK/node-postgres
  version=$(node -e 'console.log(require(process.argv[1]).packages["node_modules/pg"].version)' \
    "$ROOT/tests/drivers/node/package-lock.json")
  fetch_source "$dir" node-postgres "" "${NODE_POSTGRES_GIT:-}" "pg@$version" \
    packages/pg packages/pg-cursor packages/pg-query-stream || return 1
  [ -d "$dir/node_modules/mocha" ] && return 0
  # One node_modules for the three packages: their dependencies and test dependencies from npm,
  # the packages themselves linked in (as the repository's workspaces do).
  (cd "$dir" && node -e '
    const fs = require("fs"), deps = {};
    const local = ["pg", "pg-cursor", "pg-query-stream"];
    const tooling = /^(@cloudflare|workerd|wrangler|eslint)/;
    for (const p of local) {
      const j = require(`./packages/${p}/package.json`);
      for (const [n, v] of Object.entries({...j.dependencies, ...j.devDependencies}))
        if (!local.includes(n) && !tooling.test(n)) deps[n] = v;
    }
    fs.writeFileSync("package.json", JSON.stringify({name: "suites", private: true, dependencies: deps}, null, 1));
  ' && npm install --no-audit --no-fund >"$dir/npm.log" 2>&1)
  for p in pg pg-cursor pg-query-stream; do ln -sfn "../packages/$p" "$dir/node_modules/$p"; done
}

# pg's integration tests print "  name " as a test starts, then "✔", "FAILED!" (which ends the
# file) or "? - SKIPPED" when it ends; what a test prints comes in between.
pg_results() {  # LOG_DIR
  for f in "$1"/*.log; do
    awk -v file="$(basename "$f" .log)" '
      function done(outcome) { if (name != "") print outcome "\t" file ": " name; name = "" }
      /^  / { line = substr($0, 3); name = line; sub(/ (✔|FAILED!|\? - SKIPPED)$/, "", name) }
      /✔$/ { done("passed") }
      /FAILED!$/ { done("failed") }
      /\? - SKIPPED$/ { done("skipped") }
      /^exit / { if ($2 != 0 && !failed_seen) print "failed\t" file ": (the file " $0 ")" }
      /FAILED!$/ { failed_seen = 1 }' "$f"
  done
}

run_node_postgres() {  # TARGET PORT DB OUT
  local dir=$WORK/node-postgres url="postgres://postgres@127.0.0.1:$2/$3" out=$4
  local -a env=(PGHOST=127.0.0.1 "PGPORT=$2" PGUSER=postgres "PGDATABASE=$3")
  local deadline=$((SECONDS + RUN_TIMEOUT))
  mkdir -p "$out/pg"
  (cd "$dir/packages/pg" && env "${env[@]}" node script/create-test-tables.js "$url" >"$out/create-tables.log" 2>&1) || true
  while read -r test; do
    local name=${test#test/integration/}
    name=${name//\//_}
    (cd "$dir/packages/pg" && env "${env[@]}" timeout 120 nice -n 10 node "$test" "$url" >"$out/pg/${name%.js}.log" 2>&1
     echo "exit $?" >>"$out/pg/${name%.js}.log") || true
    [ $SECONDS -lt $deadline ] || break
  done < <(cd "$dir/packages/pg" && find test/integration -name '*-tests.js' | sort)
  pg_results "$out/pg" >"$out/results.txt"
  for p in pg-cursor pg-query-stream; do
    local spec=()
    [ "$p" = pg-query-stream ] && spec=(-r ts-node/register 'test/**/*.ts')
    (cd "$dir/packages/$p" && env "${env[@]}" TS_NODE_TRANSPILE_ONLY=1 timeout 600 nice -n 10 \
      "$dir/node_modules/.bin/mocha" "${spec[@]}" --exit --no-bail --timeout 60000 --reporter xunit \
      --reporter-options "output=$out/$p.xml" >"$out/$p.log" 2>&1) || true
    junit_results "$out/$p.xml" | sed "s/\t/\t$p: /" >>"$out/results.txt"
  done
}

# ---- pgjdbc ------------------------------------------------------------------------------------

# Debian's libpostgresql-jdbc-java runs the tests of its version (tag RELX.Y.Z), compiled here
# against Debian's jar, JUnit 4 and 5 and hamcrest, and run by JUnit's console launcher. Left out:
# the tests that need libraries Debian does not package (classloader-leak-test-framework,
# system-stubs, OSGi) and the suite classes naming them (the launcher finds every test class
# itself); checkerframework's nullness annotations are removed, as pgjdbc's own release build does.
PGJDBC_JARS=/usr/share/java/postgresql.jar:/usr/share/java/junit4.jar:/usr/share/java/hamcrest.jar
PGJDBC_JARS+=:/usr/share/java/junit-jupiter-api.jar:/usr/share/java/junit-jupiter-params.jar
PGJDBC_JARS+=:/usr/share/java/junit-platform-commons.jar:/usr/share/java/junit-platform-suite-api.jar
PGJDBC_JARS+=:/usr/share/java/junit-jupiter-migrationsupport.jar:/usr/share/java/apiguardian-api.jar
PGJDBC_JARS+=:/usr/share/java/opentest4j.jar

prepare_pgjdbc() {
  local version dir=$WORK/pgjdbc
  [ -d "$dir/classes" ] && return 0
  if ! dpkg -s junit5 junit4 libhamcrest-java >/dev/null 2>&1; then
    log "installing junit5 junit4 libhamcrest-java"
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends junit5 junit4 libhamcrest-java >/dev/null
  fi
  version=$(dpkg-query -W -f='${Version}' libpostgresql-jdbc-java)
  fetch_source "$dir" libpgjava "$version" "${PGJDBC_GIT:-}" "REL${version%%-*}" \
    pgjdbc/src/test build.properties ssltest.properties || return 1
  # Debian's source package holds the driver's tree at its top, the git tag under pgjdbc/.
  local tests
  tests=$(find "$dir" -type d -path '*/src/test/java' | head -1)
  grep -rlE 'se\.jiderhamn|uk\.org\.webcompere|org\.osgi' "$tests" | xargs -r rm -f
  find "$tests" -name '*TestSuite.java' -delete
  grep -rl org.checkerframework "$tests" | xargs -r sed -i -E \
    '/^import org\.checkerframework/d; s/@(Nullable|NonNull|PolyNull)\b ?//g'
  mkdir -p "$dir/classes"
  find "$tests" -name '*.java' >"$dir/sources"
  javac -nowarn -encoding UTF-8 -cp "$PGJDBC_JARS" -d "$dir/classes" @"$dir/sources" >"$dir/javac.log" 2>&1 ||
    { echo "pgjdbc: the tests did not compile ($dir/javac.log)" >&2; rm -rf "$dir/classes"; return 1; }
  cp -r "$tests/../resources/." "$dir/classes/"
  # The test classes, named as JUnit's launcher finds them when it scans (abstract ones and
  # helpers that match run no test).
  (cd "$dir/classes" && find . -name '*.class' ! -name '*$*' | sed -E 's|^\./||; s|\.class$||; s|/|.|g' |
    grep -E '(^|\.)Test[^.]*$|Tests?$' | sort) >"$dir/test-classes"
}

# The test classes run PGJDBC_BATCH at a time in one launcher, bounded by PGJDBC_BATCH_TIMEOUT
# seconds. Some tests end only when the backend whose pid the driver was told dies: through a
# pooler that pid is the pooler's, so pg_terminate_backend misses it and they loop. A batch that
# times out runs again one class per launcher, each bounded by PGJDBC_CLASS_TIMEOUT; a class that
# times out alone runs one test method per launcher (the methods the direct run passed), so only
# the test that hangs is reported failed and the others' results are kept.
# One of them (CopyTest's testLockReleaseOnCancelFailure) writes a COPY FROM STDIN until its
# server dies: over 100 MB a second into the cluster. The launcher is killed, as by its timeout,
# once the cluster's data directory grows past PGJDBC_DATA_LIMIT_MB (default 4096); the COPY's
# transaction then aborts and its space is freed.
pgjdbc_launch() {  # TARGET PORT DB REPORTS TIMEOUT SELECTOR...: the launcher's exit status
  local port=$2 db=$3 reports=$4 limit=$5 properties launcher
  shift 5
  properties=$(dirname "$(find "$WORK/pgjdbc" -maxdepth 2 -name build.properties | head -1)")
  (cd "$WORK/pgjdbc" && exec timeout -s KILL "$limit" nice -n 10 java \
    -Dbuild.properties.relative.path="$properties/" -Dserver=127.0.0.1 "-Dport=$port" "-Ddatabase=$db" \
    -Dusername=postgres -Dpassword= -DprivilegedUser=postgres -DprivilegedPassword= \
    -jar /usr/share/java/junit-platform-console-standalone.jar --disable-banner --details=none \
    --class-path "$WORK/pgjdbc/classes:$PGJDBC_JARS" "$@" \
    --reports-dir "$reports" </dev/null >>"$(dirname "$reports")/../junit.log" 2>&1) &
  launcher=$!
  while kill -0 "$launcher" 2>/dev/null; do
    if [ "$(du -sm "$DATA" 2>/dev/null | cut -f1)" -gt "${PGJDBC_DATA_LIMIT_MB:-4096}" ]; then
      log "pgjdbc: the cluster grew past ${PGJDBC_DATA_LIMIT_MB:-4096} MB: the launcher is stopped"
      pkill -KILL -P "$launcher" 2>/dev/null
      kill -KILL "$launcher" 2>/dev/null
    fi
    sleep 2
  done
  wait "$launcher"
}

# TARGET PORT DB OUT NAME LIMIT SELECTOR...: one launcher; its results go to OUT/results.txt.
# False when it timed out (nothing recorded).
pgjdbc_run() {
  local reports=$4/reports/$5
  pgjdbc_launch "$1" "$2" "$3" "$reports" "$6" "${@:7}" || [ $? -ne 137 ] || return 1
  junit_results "$reports"/*.xml >>"$4/results.txt"
}

run_pgjdbc() {  # TARGET PORT DB OUT
  local out=$4 deadline=$((SECONDS + RUN_TIMEOUT)) batch=0 class
  local class_limit=${PGJDBC_CLASS_TIMEOUT:-180}
  mkdir -p "$out/reports"
  : >"$out/results.txt"
  while mapfile -t -n "${PGJDBC_BATCH:-25}" classes && [ ${#classes[@]} -gt 0 ]; do
    [ $SECONDS -lt $deadline ] || break
    batch=$((batch + 1))
    pgjdbc_run "$@" "batch$batch" "${PGJDBC_BATCH_TIMEOUT:-900}" "${classes[@]/#/--select-class=}" && continue
    log "pgjdbc batch $batch timed out: its classes one at a time"
    for class in "${classes[@]}"; do
      pgjdbc_run "$@" "$class" "$class_limit" "--select-class=$class" ||
        run_pgjdbc_methods "$@" "$class" "$class_limit"
    done
  done <"$WORK/pgjdbc/test-classes"
}

# TARGET PORT DB OUT CLASS LIMIT: the class's test methods one per launcher, each bounded by
# LIMIT: those the direct run passed, named plainly (a parameterized one cannot be selected
# alone). Without such a list the class is reported timed out.
run_pgjdbc_methods() {
  local out=$4 class=$5 limit=$6 method
  local -a methods=()
  [ "$1" = direct ] ||
    mapfile -t methods < <(sed -nE "s/^passed\t${class//./\\.}::([A-Za-z_][A-Za-z0-9_]*)\$/\1/p" \
      "$WORK/pgjdbc/direct/results.txt" 2>/dev/null | sort -u)
  if [ ${#methods[@]} -eq 0 ]; then
    echo -e "failed\t$class::(timed out after $limit s)" >>"$out/results.txt"
    return
  fi
  log "pgjdbc $class timed out: its ${#methods[@]} methods one at a time"
  for method in "${methods[@]}"; do
    pgjdbc_run "${@:1:4}" "$class#$method" "$limit" "--select-method=$class#$method" ||
      echo -e "failed\t$class::$method" >>"$out/results.txt"
  done
}

# ---- main --------------------------------------------------------------------------------------

if [ -n "${COMPARE_ONLY:-}" ]; then
  for suite in $SUITES; do compare "$suite"; done
  exit 0
fi
start_scratch_cluster "$WORK" 300
broken=()  # suites that could not be prepared, targets where no test ran: the run fails
for suite in $SUITES; do
  case $suite in
    psycopg | node-postgres | asyncpg | pgjdbc) ;;
    *) echo "unknown suite $suite (psycopg, node-postgres, asyncpg, pgjdbc)" >&2; exit 2 ;;
  esac
  if ! "prepare_${suite//-/_}"; then
    broken+=("$suite: its tests could not be fetched or set up")
    continue
  fi
  db=suite_${suite//-/_}
  # asyncpg's pool tests name the database "postgres": the only one shardwire serves must be it.
  [ "$suite" = asyncpg ] && db=postgres
  for target in $TARGETS; do
    out=$WORK/$suite/$target
    rm -rf "$out" && mkdir -p "$out"
    fresh_database "$db"
    # pgjdbc's hstore tests expect the extension, as its CI's server has it.
    [ "$suite" = pgjdbc ] && psql -X -q -h 127.0.0.1 -p "$PGPORT" -U postgres -d "$db" -c 'CREATE EXTENSION hstore' >/dev/null
    start_target "$target" "$db" "$out"
    log "$suite through $target (port $TARGET_PORT)"
    start=$SECONDS
    "run_${suite//-/_}" "$target" "$TARGET_PORT" "$db" "$out"
    echo $((SECONDS - start)) >"$out/seconds"
    stop_scratch_proxy
    [ -s "$out/results.txt" ] || broken+=("$suite through $target: no test ran (see $out)")
  done
done
for suite in $SUITES; do compare "$suite"; done
if [ ${#broken[@]} -gt 0 ]; then
  printf 'FAILED: %s\n' "${broken[@]}" >&2
  exit 1
fi
