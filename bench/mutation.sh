#!/usr/bin/env bash
# Mutation testing of the pure safety modules against the unit tier (bench/mutation.md): StrykerJS with
# bench/stryker.conf.json, one batch of modules per run, niced and on one core (a report, never part of npm test).
#   bash bench/mutation.sh NAME FILE[,FILE...]    e.g. bash bench/mutation.sh safety runtime/secrets.ts,runtime/node/quote.ts
# writes bench/results/mutation-NAME.json (mutation-testing-report-schema) and its wall time, then
# `node dist/bench/mutation-summary.js` prints the table of bench/mutation.md from every bench/results/mutation-*.json.
set -euo pipefail
cd "$(dirname "$0")/.."
name=${1:?batch name}
files=${2:?comma-separated files to mutate}
start=$(date +%s)
nice -n 10 npx stryker run bench/stryker.conf.json --concurrency 1 --mutate "$files" --incrementalFile "reports/stryker-incremental-$name.json"
end=$(date +%s)
node -e '
  const fs = require("node:fs");
  const [from, to, wall, load] = process.argv.slice(1);
  const r = JSON.parse(fs.readFileSync(from, "utf8"));
  r.pulse = { wallS: Number(wall), load, cpus: require("node:os").cpus().length, node: process.version, at: new Date().toISOString() };
  fs.writeFileSync(to, JSON.stringify(r));
  fs.rmSync(from);
' bench/results/mutation.json "bench/results/mutation-$name.json" "$((end - start))" "$(cut -d' ' -f1-3 /proc/loadavg)"
echo "mutation-$name: $((end - start)) s"
