#!/usr/bin/env bash
# Installs the Debian 12 packages shardwire needs to build, test and demo. Idempotent: does nothing
# (and needs no root) when everything is already installed.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config ccache
  libuv1-dev libpq-dev libpg-query-dev libprotobuf-c-dev libyaml-cpp-dev prometheus-cpp-dev
  doctest-dev libssl-dev
  clang libclang-rt-14-dev  # the ASan stage and scripts/fuzz.sh: clang, libFuzzer, sanitizer runtimes
  clang-format clang-tidy   # scripts/lint.sh
  postgresql-15 postgresql-client-15 postgresql-contrib-15
  pgbouncer openssl curl docker-compose prometheus
  linux-perf strace         # tests/bench/syscalls.sh (by hand)
  python3 unicode-data      # the build: auth/nfkc_tables.h (scripts/gen_nfkc_tables.py); unit_auth's NormalizationTest.txt
  # tests/drivers: the client drivers of the driver matrix suite (Node.js packages come from npm,
  # scripts/install-driver-deps.sh)
  python3-psycopg python3-psycopg2 python3-asyncpg libpostgresql-jdbc-java default-jdk-headless nodejs
  python3-yaml              # deploy/validate.py (the Kubernetes manifests' offline check)
)
# kubectl renders deploy/kubernetes with `kubectl kustomize` (integration.kubernetes): Debian's
# kubernetes-client, unless a kubectl is on PATH already (another package, e.g. a cloud SDK's,
# may own /usr/bin/kubectl, and kubernetes-client would then fail to install).
command -v kubectl >/dev/null 2>&1 || PACKAGES+=(kubernetes-client)

installed() {
  local pkg=$1
  if [ "$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null)" = "install ok installed" ]; then
    return 0
  fi
  # Virtual packages (postgresql-contrib-15 is provided by postgresql-15 on Debian 12). Not
  # `grep -q`: it exits at the first match, dpkg-query then dies of SIGPIPE and pipefail turns
  # the match into a failure (the package was "missing" and apt-get ran on every call).
  dpkg-query -W -f='${Status} ${Provides}\n' 2>/dev/null |
    grep '^install ok installed' | grep -E "(^|[ ,])${pkg}([ ,(]|$)" >/dev/null
}

missing=()
for pkg in "${PACKAGES[@]}"; do
  installed "$pkg" || missing+=("$pkg")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
  else
    echo "install-deps: missing packages and not root (no sudo): ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update
"${SUDO[@]}" apt-get install -y --no-install-recommends "${missing[@]}"

echo "install-deps: done"
