#!/usr/bin/env bash
# The whole test suite: type check + build, lint, then every tier under node's test runner.
set -euo pipefail
cd "$(dirname "$0")/.."
npx tsc
node dist/worker/build-bundle.js
npx eslint --max-warnings 0 .
mkdir -p test-output
# Files run one at a time: the Temporal and sshd tiers start real servers and share the 2 cores.
exec node --test --test-concurrency=1 --test-timeout=600000 dist/test/ "$@"
