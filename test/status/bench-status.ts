/**
 * Benchmark (not part of the test suite): wall time of `pulse model status --yes --json` for 8 simulated nodes
 * against 1, every node with a healthy server. Run: node dist/test/status/bench-status.js [runs]
 */
import { runSimCli, startServer, startStatusSim, writePulseEnv } from './sim-helpers.js';

const runs = Number(process.argv[2] ?? 5);
const s = await startStatusSim(8);
try {
  for (const n of s.sim.nodes) {
    writePulseEnv(n);
    startServer(n);
  }
  const time = async (args: string[]): Promise<number> => {
    const t = process.hrtime.bigint();
    const r = await runSimCli(s, ['model', 'status', '--yes', '--json', ...args]);
    if (r.code !== 0) throw new Error(`status failed: ${r.stderr}`);
    return Number(process.hrtime.bigint() - t) / 1e6;
  };
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
  await time([]); // warm-up: compiled code and ssh keys in the page cache
  const one: number[] = [];
  const eight: number[] = [];
  for (let i = 0; i < runs; i++) {
    one.push(await time(['--node', 'spark2']));
    eight.push(await time([]));
  }
  console.log(`status, 1 node : median ${median(one).toFixed(0)} ms over ${runs} runs (${one.map((x) => x.toFixed(0)).join(', ')})`);
  console.log(`status, 8 nodes: median ${median(eight).toFixed(0)} ms over ${runs} runs (${eight.map((x) => x.toFixed(0)).join(', ')})`);
} finally {
  await s.stop();
}
