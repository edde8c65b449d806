/**
 * `pulse model status --json --node N` (HTTP included) on a node whose server has a small container log, then the same
 * after the log grew to ~100 MB (json-file without max-size: docker's default, which never rotates). status reads only
 * the log's last lines (`docker logs --tail`, read by docker from the end of the file), so it should cost the same;
 * it read the whole log before issue 28 (7-8 s per status at 120 MB on the real engine). The log grows in docker's
 * own json-file format, appended to the file the node's real dockerd writes (its LogPath). Each run is a fresh CLI
 * process; median of N.
 *
 * Run: npx tsc && node dist/worker/build-bundle.js && node dist/bench/status-log.js [runs] [MB]
 */
import { appendFileSync, statSync } from 'node:fs';
import { runCli } from '../test/helpers/cli.js';
import { startStack } from '../test/helpers/stack.js';
import { median, printTable, round, runMain, timeMs, writeResult } from './lib.js';

const RUNS = Number(process.argv[2] ?? 5);
const MB = Number(process.argv[3] ?? 100);
/** The goal of issue 28: status on the large log within this factor of its time on a small one. */
const GOAL = 1.5;

async function main(): Promise<void> {
  const stack = await startStack({ nodes: 1, readyDelayMs: 200, memory: { recoverMs: 0 } });
  try {
    const node = stack.sim.nodes[0];
    if (!node) throw new Error('no node');
    const out = await stack.outcome(await stack.start(stack.planUp(node.name), { as: 'cli' }));
    if (out.status !== 'succeeded') throw new Error('the node did not come up');
    const measure = async (): Promise<number[]> => {
      const ms: number[] = [];
      for (let i = 0; i <= RUNS; i++) {
        const { ms: t, value } = await timeMs(() => runCli(['model', 'status', '--json', '--yes', '--node', node.name], stack.env));
        if (value.code !== 0) throw new Error(`status exited ${value.code}: ${value.stderr}`);
        if (i > 0) ms.push(t); // the first run warms the file cache
      }
      return ms;
    };
    const logPath = node.docker('container', 'inspect', '--format', '{{.LogPath}}', node.containerName).trim();
    const smallBytes = statSync(logPath).size;
    const small = await measure();
    // Request lines as a serving vLLM logs them, in docker's json-file format, 10 MB per write.
    const line = (i: number): string =>
      `${JSON.stringify({ log: `INFO 12-04 22:00:00 [loggers.py:123] Engine 000: Avg prompt throughput: 812.4 tokens/s, Avg generation throughput: 41.0 tokens/s, Running: 1 reqs, request ${i}\n`, stream: 'stdout', time: new Date().toISOString() })}\n`;
    const chunk = Array.from({ length: 50_000 }, (_, i) => line(i)).join('');
    while (statSync(logPath).size < MB * 1024 * 1024) appendFileSync(logPath, chunk);
    const bigBytes = statSync(logPath).size;
    const big = await measure();
    const ratio = median(big) / median(small);
    const rows = [
      { log: `${round(smallBytes / 1024, 1)} KiB`, medianS: round(median(small) / 1000), worstS: round(Math.max(...small) / 1000) },
      { log: `${round(bigBytes / 1024 / 1024, 1)} MiB`, medianS: round(median(big) / 1000), worstS: round(Math.max(...big) / 1000) },
    ];
    printTable(`status --json --yes on one node, fresh CLI each, ${RUNS} runs (large / small = ${round(ratio, 2)}, goal ≤ ${GOAL})`, rows);
    writeResult('status-log', { runs: RUNS, rows, largeVsSmall: round(ratio, 2), goal: GOAL, met: ratio <= GOAL });
  } finally {
    await stack.stop();
  }
}

runMain(main);
