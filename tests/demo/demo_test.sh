#!/usr/bin/env bash
# ctest `demo`: scripts/demo.sh run from a copy of the checkout inside a mode-700 directory (as a
# clone under /root is), reusing the build (DEMO_SKIP_BUILD=1), on free ports. Passes when the
# demo exits 0 and prints each step's result: a keyed route, a merged read, one transaction
# committed by two-phase commit, a migration id from MOVE BUCKETS, that migration reaching
# `done`, and zero failed writes under the load; and no warning.
#
#   tests/demo/demo_test.sh SOURCE_DIR SHARDWIRE_BINARY
set -euo pipefail
SOURCE=$(realpath "$1")
BIN=$(realpath "$2")

PRIVATE=$(mktemp -d)  # mode 700: the postgres user cannot enter it
chmod 700 "$PRIVATE"
CHECKOUT=$PRIVATE/shardwire
PG_DIR=/var/tmp/shardwire-demo-test-$$
OUT=$PRIVATE/demo.out
free_ports() {
  python3 -c 'import socket
s = [socket.socket() for _ in range(3)]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))'
}
read -r PG_PORT PROXY_PORT METRICS_PORT <<<"$(free_ports)"
export DEMO_PG_PORT=$PG_PORT DEMO_PROXY_PORT=$PROXY_PORT DEMO_METRICS_PORT=$METRICS_PORT
export DEMO_SKIP_BUILD=1 SHARDWIRE_BIN=$BIN DEMO_PG_DIR=$PG_DIR
cleanup() {
  "$CHECKOUT/scripts/demo.sh" stop >/dev/null 2>&1 || true
  rm -rf "$PRIVATE" "$PG_DIR"
}
trap cleanup EXIT

# The checkout as it is in the work tree: tracked and new files, not what .gitignore ignores.
mkdir -p "$CHECKOUT"
if git -C "$SOURCE" rev-parse --git-dir >/dev/null 2>&1; then
  (cd "$SOURCE" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -) |
    tar -C "$CHECKOUT" -xf -
else
  tar -C "$SOURCE" --exclude='./build*' --exclude=./demo -cf - . | tar -C "$CHECKOUT" -xf -
fi

status=0
"$CHECKOUT/scripts/demo.sh" >"$OUT" 2>&1 || status=$?
cat "$OUT"
echo "---- demo exit status $status"

fail=0
expect() {  # DESCRIPTION EXTENDED-REGEX
  if grep -Eq -- "$2" "$OUT"; then echo "ok: $1"; else echo "FAILED: $1 (no line matching /$2/)"; fail=1; fi
}
[ "$status" -eq 0 ] || { echo "FAILED: the demo exited with $status"; fail=1; }
expect "a keyed statement routed to one shard" 'SHOW ROUTE SELECT \* FROM orders WHERE tenant_id = 1 +-> +.*s[01]'
expect "each shard holds tenants" '^demo:   shard1 holds tenants [0-9]'
expect "a merged read answered" '^demo:   answer \(tenant\|orders\): 1\|[0-9]+ 2\|'
expect "one transaction committed by two-phase commit" 'committed by two-phase commit: 1 .*rows on shard0: [1-9][0-9]*, on shard1: [1-9]'
expect "MOVE BUCKETS answered a migration id" 'MOVE BUCKETS [0-9,]+ TO s1 +-> +migration [0-9]+;'
expect "the migration reached done" '^demo: +\+ ?[0-9]+s +migration [0-9]+ +done'
expect "zero failed writes under the load" 'load: [1-9][0-9]* inserts acknowledged, 0 failed, 0 clients aborted \(errors: 0\)'
expect "the console and the metrics shown" 'shardwire_buckets\{'
if grep -Eiq 'warning|error:|permission denied' "$OUT"; then
  echo "FAILED: the demo printed a warning or an error:"
  grep -Ei 'warning|error:|permission denied' "$OUT"
  fail=1
fi
exit "$fail"
