#!/usr/bin/env bash
# Installs the Node.js drivers of the driver matrix suite (tests/drivers/node: pg, pg-cursor,
# postgres) from npm at the versions pinned in package-lock.json, into
# tests/drivers/node/node_modules (not committed). The Debian packages (Python drivers, pgjdbc,
# the JDK, Node.js) come from scripts/install-deps.sh. Does nothing when node_modules already
# matches the lock file.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NODE_DIR=$ROOT/tests/drivers/node
STAMP=$NODE_DIR/node_modules/.package-lock.json

if ! command -v npm >/dev/null 2>&1; then
  echo "install-driver-deps: npm is missing; installing the Debian package"
  SUDO=()
  [ "$(id -u)" -ne 0 ] && SUDO=(sudo)
  DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y --no-install-recommends npm
fi

# npm ci writes node_modules/.package-lock.json; same dependency tree -> nothing to do.
if [ -f "$STAMP" ] && node -e '
  const a = require(process.argv[1]).packages, b = require(process.argv[2]).packages;
  const strip = o => JSON.stringify(Object.fromEntries(Object.entries(o).filter(([k]) => k !== "")
    .map(([k, v]) => [k, v.version])));
  process.exit(strip(a) === strip(b) ? 0 : 1);' "$NODE_DIR/package-lock.json" "$STAMP"; then
  echo "install-driver-deps: node_modules matches package-lock.json"
  exit 0
fi

echo "install-driver-deps: npm ci in $NODE_DIR"
(cd "$NODE_DIR" && npm ci --no-audit --no-fund)
echo "install-driver-deps: done"
