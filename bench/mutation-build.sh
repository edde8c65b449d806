#!/usr/bin/env bash
# Stryker's build step (bench/stryker.conf.json), run inside its sandbox (.stryker-tmp/sandbox-*, a copy of the repo
# with the mutated TypeScript): compile the unit tier as scripts/test.sh does, and give the sandbox the repo's .tools
# (the pinned temporal CLI, which `pulse --version` in the unit tier runs; too large to copy into every sandbox).
set -euo pipefail
npx tsc
node dist/worker/build-bundle.js
if [[ ! -e .tools && -e ../../.tools ]]; then ln -s "$(cd ../../.tools && pwd -P)" .tools; fi
