#!/usr/bin/env bash
# The whole test suite: type check + build, lint, then every tier under node's test runner.
set -euo pipefail
cd "$(dirname "$0")/.."
npx tsc
node dist/worker/build-bundle.js
npx eslint --max-warnings 0 .
scripts/shellcheck.sh
mkdir -p test-output
# Only *.test.js files: helpers under dist/test (the simulator, fixtures) are not tests themselves.
# Files named on the command line run one at a time, as in the full run's server tiers.
if [ "$#" -gt 0 ]; then exec node --test --test-concurrency=1 --test-timeout=600000 "$@"; fi
# Two files at a time in every tier. The unit tier's files start no server, bind no port and share no state (each CLI
# run gets a sandbox of its own). The server tiers' files each start their own servers on ports picked below the
# kernel's ephemeral range and reserved across files (test/sim/ports.ts), their own sim dirs, cgroups and state dirs;
# they mostly wait (heartbeat timeouts, readiness, kills: one run used 22 CPU-minutes of the 75 its 37 minutes on 2
# cores offered), so two at a time overlap the waits. Files named on the command line still run one at a time.
mapfile -t unit < <(find dist/test/unit -name '*.test.js' | sort)
mapfile -t rest < <(find dist/test -name '*.test.js' -not -path 'dist/test/unit/*' | sort)
rc=0
node --test --test-concurrency=2 --test-timeout=600000 "${unit[@]}" || rc=$?
node --test --test-concurrency=2 --test-timeout=600000 "${rest[@]}" || rc=$?
exit "$rc"
