#!/usr/bin/env bash
# Hand-made mutants of the durable paths (test/mutants/*.patch): each is applied to a scratch copy of this checkout,
# built, and run against the test files that must catch it; the suite must FAIL on each, and pass unmutated.
# A mutation tool is too slow here (a fault-suite run takes minutes), so each mutant runs only the files that should
# catch it. Each run's TAP output (which tests failed, and the rows' own lines) goes to test-output/mutants/<mutant>.txt,
# one summary line per mutant to stdout. bench/mutants.md holds the last recorded run.
#   bench/mutants.sh                 every mutant
#   bench/mutants.sh a-retried-node-step-refused none   some (none: the unmutated copy, same files as its argument list)
# PULSE_TEST_SEED is passed through (default: the commit count, as the fault suite's own default).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=$root/test-output/mutants
mkdir -p "$out"
# The scratch copy has no git: the fault suite's default seed (the commit count) is passed in.
export PULSE_TEST_SEED=${PULSE_TEST_SEED:-$(git rev-list --count HEAD)}

# What must catch each mutant, one node --test argument a line: test files under dist/ (and a --test-name-pattern
# for a part of one file).
files_for() {
  case $1 in
    # The two the fault suite exists for: a pulse that gives up on a retried node step, or on a resumed wait.
    a-retried-node-step-refused | b-resumed-wait-refused) echo dist/test/faults/faults.test.js ;;
    # Unmutated: every file a mutant runs, whole.
    none) printf '%s\n' dist/test/faults/faults.test.js dist/test/security/redact.test.js ;;
    # The faults that must end compensated.
    c-compensation-skipped) printf '%s\n' '--test-name-pattern=container dies|memory never frees' dist/test/faults/faults.test.js ;;
    # The only thing that turns away a second controller is the node lock.
    d-node-lock-never-taken) printf '%s\n' '--test-name-pattern=two controllers' dist/test/faults/faults.test.js ;;
    # A recipe's set -x output with both secret values, through a real up and down.
    e-redaction-off) echo "dist/test/security/redact.test.js" ;;
    *) echo "unknown mutant $1" >&2; return 1 ;;
  esac
}

run_one() {
  local name=$1 scratch log t0 rc args
  mapfile -t args < <(files_for "$name")
  scratch=$(mktemp -d /tmp/pulse-mutant-XXXXXX)
  # The checkout as it is (tracked and new files, not dist/ or ignored ones), plus the shared node_modules and tools.
  git ls-files -z --cached --others --exclude-standard | tar -C "$root" --null -T - -cf - | tar -C "$scratch" -xf -
  ln -s "$(readlink -f "$root/node_modules")" "$scratch/node_modules"
  ln -s "$(readlink -f "$root/.tools")" "$scratch/.tools"
  if [[ $name != none ]]; then (cd "$scratch" && patch -p1 -s <"$root/test/mutants/$name.patch"); fi
  (cd "$scratch" && npx tsc && node dist/worker/build-bundle.js >/dev/null)
  log=$out/$name.txt
  t0=$(date +%s)
  rc=0
  (cd "$scratch" && nice -n 5 node --test --test-reporter=tap --test-concurrency=1 --test-timeout=1800000 "${args[@]}") >"$log" 2>&1 || rc=$?
  local failed
  # The failed tests by title (a file's own line, named by its path, says only that the file failed or timed out).
  failed=$(grep -E '^not ok [0-9]+ - ' "$log" | sed 's/^not ok [0-9]* - //' | grep -v '^/' | paste -sd '|' - || true)
  printf '%s\texit %s\t%ss\tseed %s\tfailed: %s\n' "$name" "$rc" "$(($(date +%s) - t0))" \
    "$(grep -oE 'seed [0-9]+' "$log" | head -1 | cut -d' ' -f2)" "${failed:-none}"
  rm -rf "$scratch"
}

mutants=("$@")
if ((${#mutants[@]} == 0)); then
  mutants=(none)
  for p in test/mutants/*.patch; do mutants+=("$(basename "$p" .patch)"); done
fi
for m in "${mutants[@]}"; do run_one "$m"; done
