#!/usr/bin/env bash
# shellcheck on every node script as it is really sent: runtime/node/script.ts scriptText (prelude, the step's
# libraries, its exported inputs, the step body, in one `{ ... }` group), one temp file per step, with no warning
# left. Needs the build (dist/). The PULSE_* inputs a step reads are exported by the controller (script.ts
# exportsBlock) from values known only at run time: each is given as an empty input here, as the controller would
# export it, so SC2154 (referenced but not assigned) still catches any other name, a misspelt one among them.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v shellcheck >/dev/null || { echo 'shellcheck is missing: scripts/setup.sh installs it (Debian package shellcheck)' >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
node --input-type=module -e '
  import { writeFileSync, readdirSync } from "node:fs";
  import { scriptText, scriptsDir } from "./dist/runtime/node/script.js";
  const libs = new Set(["prelude", "port"]);
  for (const f of readdirSync(scriptsDir()).filter((f) => f.endsWith(".sh")).sort()) {
    const step = f.slice(0, -3);
    if (libs.has(step)) continue;
    const names = new Set(scriptText(step).match(/\bPULSE_[A-Z0-9_]+\b/g) ?? []);
    const inputs = Object.fromEntries([...names].map((n) => [n, ""]));
    writeFileSync(`${process.argv[1]}/${step}.sh`, `#!/usr/bin/env bash\n${scriptText(step, inputs)}`);
  }' "$out"
rc=0
for f in "$out"/*.sh; do
  shellcheck --shell=bash --severity=style --format=gcc "$f" | sed "s|^$out/|sent:|" || rc=1
done
exit "$rc"
