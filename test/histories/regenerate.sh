#!/usr/bin/env bash
# Regenerates the replay fixtures in test/histories/ from real runs (dev server + simulator + real activities):
# up (full), up (same identity), down, up never ready and up cancelled (compensation), crash-resume during write-env, start and
# readiness (real-runs, crash-resume), and rollback, an autoRollback up that never becomes ready and its rollbackWorkflow
# child (rollback-runs). To add one kind without touching the others, run only its test file with
# PULSE_RECORD_HISTORIES=1 (each test writes only its own names). Run after an INTENDED, patched() change of workflow
# code, then commit the new JSON files next to the
# old ones you still need to replay (histories of deploys that may still be running must keep replaying): the *-ref.json
# files are the narrow step inputs' shape (patched pulse-plan-ref, pulse-raw-verbose), the *-start.json files the CLI's
# UpStart workflow input (issue 11: no .env text, planDigest; name-only stop and lock inputs), the *-small.json files the
# steps that read the plan from the workflow input (UpInputRef) under the one pulse-small-history marker, recorded this
# way and renamed.
set -euo pipefail
cd "$(dirname "$0")/../.."
npx tsc || echo "regenerate: tsc reported type errors; JS was emitted, continuing" >&2
node dist/worker/build-bundle.js
export PULSE_RECORD_HISTORIES=1
node --test dist/test/engine/real-runs.test.js
node --test dist/test/engine/crash-resume.test.js
node --test dist/test/engine/rollback-runs.test.js
ls -l test/histories/*.json
