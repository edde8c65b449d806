#!/usr/bin/env bash
# The whole test suite: type check + build, lint, then every tier under node's test runner.
set -euo pipefail
cd "$(dirname "$0")/.."
npx tsc
node dist/worker/build-bundle.js
npx eslint --max-warnings 0 .
mkdir -p test-output
# Only *.test.js files: helpers under dist/test (the simulator, fixtures) are not tests themselves.
# Files named on the command line run one at a time, as in the full run's server tiers.
if [ "$#" -gt 0 ]; then exec node --test --test-concurrency=1 --test-timeout=600000 "$@"; fi
# The unit tier runs two files at a time: its files start no server, bind no port and share no state (each CLI run
# gets a sandbox of its own), so the 2 cores both work. Every other file runs alone: the Temporal and sshd tiers
# start real servers, pick free ports and 127.0.0.x addresses, and share the 2 cores.
mapfile -t unit < <(find dist/test/unit -name '*.test.js' | sort)
mapfile -t rest < <(find dist/test -name '*.test.js' -not -path 'dist/test/unit/*' | sort)
rc=0
node --test --test-concurrency=2 --test-timeout=600000 "${unit[@]}" || rc=$?
node --test --test-concurrency=1 --test-timeout=600000 "${rest[@]}" || rc=$?
exit "$rc"
