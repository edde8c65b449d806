#!/usr/bin/env bash
# Issue 17's table in ONE run: every figure of it measured back to back on this machine, each result stamped with
# the same run id (PULSE_BENCH_RUN), then the table from those results (node dist/bench/summary.js speed).
#   bash bench/speed.sh            the dev server rows (~15 min on 2 cores)
#   PULSE_BENCH_CLUSTER=1 bash bench/speed.sh   also the production-shaped cluster rows (cluster.js, ~10 min more)
# Run it on a quiet machine: the figures are ratios, but a load of 10+ from other work still skews them.
set -euo pipefail
cd "$(dirname "$0")/.."
npx tsc
node dist/worker/build-bundle.js
export PULSE_BENCH_RUN="speed-$(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "bench run $PULSE_BENCH_RUN (load: $(cut -d' ' -f1-3 /proc/loadavg))"
node dist/bench/overhead.js 5
node dist/bench/sdk-step.js 10
node dist/bench/readiness-lag.js 10
node dist/bench/recovery.js 3
node dist/bench/recovery.js 2 SIGTERM
node dist/bench/fleet.js 1,8,32
node dist/bench/history.js
if [ "${PULSE_BENCH_CLUSTER:-0}" = 1 ]; then node dist/bench/cluster.js 3 20; fi
echo "bench run $PULSE_BENCH_RUN done (load: $(cut -d' ' -f1-3 /proc/loadavg))"
node dist/bench/summary.js speed
