#!/usr/bin/env bash
# The main job on the embedded default: the built-in node simulator (real sshd nodes on loopback addresses, each with
# its own real Docker engine; a simulated vLLM, GPU and GPU memory) and pulse's own Temporal dev server. Everything it
# starts, it stops.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f dist/cli/main.js ] || { echo "demo: run 'bash scripts/setup.sh' first" >&2; exit 1; }

DIR=${PULSE_DEMO_DIR:-$(mktemp -d /tmp/pulse-demo.XXXXXX)}
mkdir -p "$DIR"
pulse() { echo; echo "\$ pulse $*"; node bin/pulse-cli "$@"; }

node dist/test/sim/cli.js start --nodes 2 --dir "$DIR/sim" --ready-delay-ms 3000 >"$DIR/sim.log" 2>&1 &
SIM_PID=$!
cleanup() {
  local rc=$?
  # The background worker beside the embedded server first (it would also go by itself once the server is gone).
  for f in worker.json server.json; do
    if [ -f "$DIR/sim/state/temporal/$f" ]; then
      kill "$(node -e 'console.log(require(process.argv[1]).pid)' "$DIR/sim/state/temporal/$f")" 2>/dev/null || true
    fi
  done
  kill -INT "$SIM_PID" 2>/dev/null || true
  wait "$SIM_PID" 2>/dev/null || true
  echo; echo "demo: stopped the simulator, the embedded Temporal server and its worker (files kept in $DIR)"
  exit "$rc"
}
trap cleanup EXIT INT TERM
for _ in $(seq 1 100); do [ -f "$DIR/sim/env.sh" ] && break; sleep 0.2; done
[ -f "$DIR/sim/env.sh" ] || { cat "$DIR/sim.log" >&2; echo "demo: the simulator did not start" >&2; exit 1; }
# shellcheck disable=SC1091
source "$DIR/sim/env.sh"
# A port of its own, so the demo never touches a dev server the user runs on 7233.
export PULSE_TEMPORAL_PORT=${PULSE_TEMPORAL_PORT:-17233}
cat "$DIR/sim.log"

pulse model profiles
node bin/pulse-cli model up best --node spark2 --dry-run >"$DIR/dry-run.txt"
echo; echo "\$ pulse model up best --node spark2 --dry-run   (first lines; all in $DIR/dry-run.txt)"
sed -n 1,16p "$DIR/dry-run.txt"
# spark1 is protected (it serves live traffic): without --yes pulse refuses, and says so in one line.
pulse model up best --node spark1 || echo "(refused as expected: exit $?)"
pulse model up best --node spark2
pulse model status
pulse model up best --node spark2      # same identity: steps 1, 7, 8, 9 only
pulse model smoke --node spark2
pulse model down --node spark2
pulse model fragment
pulse model history --node spark2
echo; echo "demo: done. The Temporal Web UI was at http://127.0.0.1:$((PULSE_TEMPORAL_PORT + 1000))"
