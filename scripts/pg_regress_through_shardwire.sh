#!/usr/bin/env bash
# PostgreSQL 15's own regression suite (src/test/regress, `pg_regress --use-existing`) run three
# times against one fresh cluster: straight, and through shardwire in session and in transaction
# pooling with that cluster as its only shard. Prints each run's pass/fail counts and the tests
# whose result differs between the runs. By hand (not in .ci/run): it takes minutes. See
# tests/README.md.
#
#   scripts/pg_regress_through_shardwire.sh [WORKDIR]
#   MODES="transaction" scripts/pg_regress_through_shardwire.sh   # only some pool modes
#
# Needs: postgresql-15 (initdb, pg_ctl, pg_regress from its pgxs directory), psql, a built
# build/proxy/app/shardwire, and the regression files of the installed PostgreSQL, which Debian
# ships only in the source package: they are fetched once with `apt-get source` (a deb-src entry
# for Debian's archive is written to a private apt directory under WORKDIR; the system's apt
# configuration is left alone). With postgresql-server-dev-15 installed, regress.so is built so
# the tests that load it can pass; without it they fail in both runs alike.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=${1:-/tmp/shardwire-pg-regress}
PG_REGRESS=/usr/lib/postgresql/15/lib/pgxs/src/test/regress/pg_regress
SHARDWIRE=${SHARDWIRE_BIN:-$ROOT/build/proxy/app/shardwire}
# shellcheck source=scripts/scratch_cluster.sh
. "$ROOT/scripts/scratch_cluster.sh"

[ -x "$SHARDWIRE" ] || { echo "no shardwire binary at $SHARDWIRE (build it first)" >&2; exit 2; }
[ -x "$PG_REGRESS" ] || { echo "no pg_regress at $PG_REGRESS (postgresql-15)" >&2; exit 2; }
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)

# 1. The regression files of the installed version, from Debian's source package.
version=$(dpkg-query -W -f='${Version}' postgresql-15)
upstream=${version%%-*}
REGRESS=$WORK/postgresql-$upstream/src/test/regress
if [ ! -d "$REGRESS/sql" ]; then
  apt_dir=$WORK/apt
  mkdir -p "$apt_dir/parts" "$apt_dir/lists/partial" "$WORK/src"
  cat >"$apt_dir/parts/debian-src.sources" <<EOF
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  apt_opts=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$apt_dir/parts"
            -o "Dir::State::Lists=$apt_dir/lists")
  apt-get "${apt_opts[@]}" update >/dev/null
  (cd "$WORK/src" && apt-get "${apt_opts[@]}" source --download-only "postgresql-15=$version" >/dev/null)
  tar xjf "$WORK/src/postgresql-15_$upstream.orig.tar.bz2" -C "$WORK" "postgresql-$upstream/src/test/regress"
fi
DLPATH=$REGRESS
if [ -f "$(pg_config --includedir-server 2>/dev/null)/postgres.h" ] && [ ! -f "$REGRESS/regress.so" ]; then
  cc -O2 -fPIC -shared -I"$(pg_config --includedir-server)" -o "$REGRESS/regress.so" "$REGRESS/regress.c" ||
    echo "regress.so did not build; tests that load it fail in both runs" >&2
fi
chmod -R a+rwX "$WORK"

# 2. A fresh cluster.
start_scratch_cluster "$WORK" 200

# FORCE: the servers of the proxy stopped just before may not have hung up yet.
fresh_database() {
  psql -X -q -h 127.0.0.1 -p "$PGPORT" -U postgres -d postgres \
    -c "DROP DATABASE IF EXISTS regression WITH (FORCE)" -c "CREATE DATABASE regression" \
    >/dev/null 2>"$WORK/fresh_database.log" || { cat "$WORK/fresh_database.log" >&2; exit 1; }
}

run_suite() {  # NAME PORT
  local out=$WORK/$1
  rm -rf "$out" && mkdir -p "$out" && chmod a+rwx "$out"
  local start=$SECONDS
  (cd "$REGRESS" && "${RUN_AS[@]}" "$PG_REGRESS" --use-existing --host=127.0.0.1 --port="$2" --user=postgres \
    --bindir=/usr/lib/postgresql/15/bin --inputdir="$REGRESS" --outputdir="$out" --dlpath="$DLPATH" \
    --schedule="$REGRESS/parallel_schedule" --max-concurrent-tests=20 >"$out/pg_regress.log" 2>&1) || true
  echo "$1: $((SECONDS - start)) s"
  # "test name ... ok", "     name ... FAILED", "ok 12 + name" (newer formats) -> "name ok|failed"
  sed -nE 's/^(test| ) +([a-z0-9_]+) +\.\.\. +(ok|FAILED|failed)( \(test process exited with exit code [0-9]+\))?.*/\2 \3/p' \
    "$out/pg_regress.log" | tr 'A-Z' 'a-z' | sort >"$out/results.txt"
}

# 3. Straight.
fresh_database
run_suite direct "$PGPORT"

# 4. Through shardwire in each pool mode, the cluster as its only shard.
run_through_shardwire() {  # MODE
  fresh_database
  start_scratch_proxy "$1" regression "$WORK/shardwire-$1.yaml" "$WORK/shardwire-$1.log" ", max_pinned_clients: 100"
  run_suite "$1" "$PROXY_PORT"
  stop_scratch_proxy
}
MODES=${MODES:-session transaction}
for mode in $MODES; do run_through_shardwire "$mode"; done

# 5. Compare: one line per test, its result in each run.
cp "$WORK/direct/results.txt" "$WORK/compare.txt"
header="test direct"
for mode in $MODES; do
  join -a1 -a2 -e missing -o auto "$WORK/compare.txt" "$WORK/$mode/results.txt" >"$WORK/compare.next"
  mv "$WORK/compare.next" "$WORK/compare.txt"
  header="$header $mode"
done
for run in direct $MODES; do
  echo "$run: $(grep -c ' ok$' "$WORK/$run/results.txt") ok, $(grep -vc ' ok$' "$WORK/$run/results.txt") failed"
done
echo "tests whose result differs ($header), diffs in $WORK/<mode>/regression.diffs:"
awk '{ for (i = 3; i <= NF; i++) if ($i != $2) { print; next } }' "$WORK/compare.txt"
