/**
 * Fleet scale: `up` on 1, 8 and 32 simulated nodes at once, served by one `pulse worker` process (a fresh one per
 * round, so its peak RSS, VmHWM, belongs to that round). Wall time runs from the first start to the last result;
 * every deploy is a full up (--restart). Goal: 32 nodes <= 3x one node.
 *
 * The simulated vLLM needs READY_MS to listen (default 1000; pass 10000 for a wait closer to a real server, whose
 * start takes minutes): with a short wait the 2-core test machine running 32 simulated servers is the limit, so
 * the same ups are also run as the floor (node scripts over one connection per node, no Temporal) for comparison.
 *
 * Run: npx tsc && node dist/worker/build-bundle.js && node dist/bench/fleet.js [sizes, e.g. 1,8,32] [READY_MS]
 * (results: bench/results/fleet.json, or fleet-ready<N>s.json for another READY_MS)
 */
import { readFileSync } from 'node:fs';
import { openSession } from '../runtime/node/connect.js';
import { startStack } from '../test/helpers/stack.js';
import { floorUp } from './floor.js';
import { printTable, round, runMain, timeMs, writeResult } from './lib.js';

const SIZES = (process.argv[2] ?? '1,8,32').split(',').map(Number);
const READY_MS = Number(process.argv[3] ?? 1000);

function peakRssMiB(pid: number): number {
  const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** User + system CPU seconds the process has used so far. */
function cpuSeconds(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(f[11]) + Number(f[12])) / 100;
}

async function main(): Promise<void> {
  const max = Math.max(...SIZES);
  const stack = await startStack({ nodes: max, readyDelayMs: READY_MS, memory: { recoverMs: 500 }, worker: false });
  Object.assign(process.env, stack.env); // the floor's ssh resolves the sim aliases like the worker does
  try {
    const rows = [];
    for (const n of SIZES) {
      const names = stack.sim.nodes.slice(0, n).map((x) => x.name);
      // The floor: the same full ups at once, one connection per node, readiness polled every 100 ms, no Temporal.
      const sessions = await Promise.all(names.map((node) => openSession(stack.planUp(node).target)));
      const floor = await timeMs(() => Promise.all(names.map((node, i) => floorUp(sessions[i]!, stack, stack.planUp(node, 'best', { restart: true }), true, n, 100))));
      await Promise.all(sessions.map((s) => s.close()));
      const worker = await stack.startWorker();
      const nodes = names;
      const { ms, value } = await timeMs(async () => {
        const handles = await Promise.all(nodes.map((node) => stack.start(stack.planUp(node, 'best', { restart: true }))));
        return Promise.all(handles.map((h) => stack.outcome(h)));
      });
      const ok = value.filter((o) => o.status === 'succeeded').length;
      rows.push({ nodes: n, wallS: ms / 1000, floorWallS: floor.ms / 1000, vsFloor: ms / floor.ms, succeeded: `${ok}/${n}`, workerPeakRssMiB: peakRssMiB(worker.pid), workerCpuS: cpuSeconds(worker.pid) });
      await worker.kill('SIGTERM');
    }
    const one = rows.find((r) => r.nodes === 1)?.wallS ?? NaN;
    const withRatio = rows.map((r) => ({ ...r, vsOneNode: r.wallS / one }));
    printTable(`fleet scale: concurrent full ups, one worker, server ready after ${READY_MS} ms`, withRatio);
    const biggest = withRatio[withRatio.length - 1];
    writeResult(READY_MS === 1000 ? 'fleet' : `fleet-ready${READY_MS / 1000}s`, {
      readyMs: READY_MS,
      rows: withRatio.map((r) => ({ ...r, wallS: round(r.wallS, 2), floorWallS: round(r.floorWallS, 2), vsFloor: round(r.vsFloor, 2), workerPeakRssMiB: round(r.workerPeakRssMiB, 1), workerCpuS: round(r.workerCpuS, 2), vsOneNode: round(r.vsOneNode, 2) })),
      floorVsOneNode: withRatio.map((r) => ({ nodes: r.nodes, ratio: round(r.floorWallS / (withRatio[0]?.floorWallS ?? NaN), 2) })),
      goal: '32 nodes <= 3x one node',
      met: biggest ? biggest.vsOneNode <= 3 && withRatio.every((r) => r.succeeded === `${r.nodes}/${r.nodes}`) : false,
    });
  } finally {
    await stack.stop();
  }
}

runMain(main);
