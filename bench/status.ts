/**
 * `pulse model status --json --yes` (HTTP included, Temporal configured) on one node (--node) against all eight
 * nodes of a fleet where every node runs a server. Nodes are asked in parallel, so 8 nodes should cost little more
 * than one. Each run is a fresh CLI process; median of N.
 *
 * Run: npx tsc && node dist/worker/build-bundle.js && node dist/bench/status.js [runs]
 */
import { runCli } from '../test/helpers/cli.js';
import { startStack } from '../test/helpers/stack.js';
import { median, printTable, round, runMain, timeMs, writeResult } from './lib.js';

const RUNS = Number(process.argv[2] ?? 5);

async function main(): Promise<void> {
  const stack = await startStack({ nodes: 8, readyDelayMs: 200, memory: { recoverMs: 0 } });
  try {
    const names = stack.sim.nodes.map((n) => n.name);
    const outs = await Promise.all((await Promise.all(names.map((n) => stack.start(stack.planUp(n), { as: 'cli' })))).map((h) => stack.outcome(h)));
    if (outs.some((o) => o.status !== 'succeeded')) throw new Error('a node did not come up');
    const measure = async (args: string[]): Promise<number[]> => {
      const ms: number[] = [];
      for (let i = 0; i <= RUNS; i++) {
        const { ms: t, value } = await timeMs(() => runCli(args, stack.env));
        if (value.code !== 0) throw new Error(`status exited ${value.code}: ${value.stderr}`);
        if (i > 0) ms.push(t); // the first run warms the file cache
      }
      return ms;
    };
    const one = await measure(['model', 'status', '--json', '--yes', '--node', names[0] ?? '']);
    const eight = await measure(['model', 'status', '--json', '--yes']);
    const rows = [
      { nodes: 1, medianS: median(one) / 1000, worstS: Math.max(...one) / 1000 },
      { nodes: 8, medianS: median(eight) / 1000, worstS: Math.max(...eight) / 1000 },
    ];
    const ratio = median(eight) / median(one);
    printTable(`status --json --yes, fresh CLI each, ${RUNS} runs (8 nodes / 1 node = ${round(ratio, 2)})`, rows);
    writeResult('status', { runs: RUNS, rows: rows.map((r) => ({ ...r, medianS: round(r.medianS), worstS: round(r.worstS) })), eightVsOne: round(ratio, 2) });
  } finally {
    await stack.stop();
  }
}

runMain(main);
