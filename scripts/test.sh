#!/usr/bin/env bash
# The whole test suite: type check + build, lint, then every tier under node's test runner.
set -euo pipefail
cd "$(dirname "$0")/.."
npx tsc
node dist/worker/build-bundle.js
npx eslint --max-warnings 0 .
mkdir -p test-output
# Files run one at a time: the Temporal and sshd tiers start real servers and share the 2 cores.
# Only *.test.js files: helpers under dist/test (the simulator, fixtures) are not tests themselves.
if [ "$#" -gt 0 ]; then files=("$@"); else mapfile -t files < <(find dist/test -name '*.test.js' | sort); fi
exec node --test --test-concurrency=1 --test-timeout=600000 "${files[@]}"
