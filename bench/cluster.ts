/**
 * The production-shaped server against the dev server: the same benchmarks on `temporal server start-dev` (SQLite)
 * and on the built temporal-server with PostgreSQL (test/helpers/cluster.ts, the files of docs/PRODUCTION.md
 * "C. native"), one after the other on the same machine.
 *
 * - controller overhead: median of `reps` same-identity ups (steps 1, 7, 8, 9) and full ups (--restart) through a
 *   separate `pulse worker` on an instantly-ready node, next to the floor (the same node scripts over one ssh
 *   connection, no Temporal; overhead.ts's floor)
 * - 20 concurrent full ups (the simulated vLLM listens after 1 s), one fresh worker: wall time, all succeeded
 *
 * Run: npx tsc && node dist/worker/build-bundle.js && node dist/bench/cluster.js [reps] [concurrent]
 * (results: bench/results/cluster.json)
 */
import { openSession } from '../runtime/node/connect.js';
import type { UpPlan } from '../runtime/model/index.js';
import { startStack, type Stack } from '../test/helpers/stack.js';
import { floorUp } from './floor.js';
import { median, printTable, round, runMain, timeMs, writeResult } from './lib.js';

const REPS = Number(process.argv[2] ?? 5);
const CONCURRENT = Number(process.argv[3] ?? 20);
const BACKENDS = ['dev', 'cluster'] as const;
type Backend = (typeof BACKENDS)[number];

async function temporalUp(stack: Stack, plan: UpPlan): Promise<void> {
  const out = await stack.outcome(await stack.start(plan, { as: 'cli' }));
  if (out.status !== 'succeeded') throw new Error(`deploy ${out.status}: ${out.error}`);
}

interface Overhead {
  sameMs: number;
  fullMs: number;
  floorSameMs: number;
  floorFullMs: number;
  samples: Record<string, number[]>;
}

async function overhead(backend: Backend): Promise<Overhead> {
  const stack = await startStack({ nodes: ['simF', 'simT'], readyDelayMs: 0, memory: { recoverMs: 0 }, server: backend });
  Object.assign(process.env, stack.env);
  try {
    await temporalUp(stack, stack.planUp('simT')); // warm up: first container, first connection, JIT
    const session = await openSession(stack.planUp('simF').target);
    const t: Record<string, number[]> = { same: [], full: [], floorSame: [], floorFull: [] };
    try {
      await floorUp(session, stack, stack.planUp('simF'), true, -1);
      for (let rep = 0; rep < REPS; rep++) {
        t['floorFull']!.push((await timeMs(() => floorUp(session, stack, stack.planUp('simF', 'best', { restart: true }), true, rep))).ms);
        t['full']!.push((await timeMs(() => temporalUp(stack, stack.planUp('simT', 'best', { restart: true })))).ms);
        t['floorSame']!.push((await timeMs(() => floorUp(session, stack, stack.planUp('simF'), false, rep))).ms);
        t['same']!.push((await timeMs(() => temporalUp(stack, stack.planUp('simT')))).ms);
      }
    } finally {
      await session.close();
    }
    return { sameMs: median(t['same']!), fullMs: median(t['full']!), floorSameMs: median(t['floorSame']!), floorFullMs: median(t['floorFull']!), samples: t };
  } finally {
    await stack.stop();
  }
}

async function concurrent(backend: Backend): Promise<{ wallS: number; succeeded: number }> {
  const stack = await startStack({ nodes: CONCURRENT, readyDelayMs: 1000, memory: { recoverMs: 500 }, server: backend, worker: false });
  Object.assign(process.env, stack.env);
  try {
    const worker = await stack.startWorker();
    const names = stack.sim.nodes.map((n) => n.name);
    const { ms, value } = await timeMs(async () => {
      const handles = await Promise.all(names.map((node) => stack.start(stack.planUp(node, 'best', { restart: true }), { as: 'cli' })));
      return Promise.all(handles.map((h) => stack.outcome(h)));
    });
    await worker.kill('SIGTERM');
    return { wallS: ms / 1000, succeeded: value.filter((o) => o.status === 'succeeded').length };
  } finally {
    await stack.stop();
  }
}

async function main(): Promise<void> {
  const o: Partial<Record<Backend, Overhead>> = {};
  const c: Partial<Record<Backend, { wallS: number; succeeded: number }>> = {};
  for (const b of BACKENDS) {
    o[b] = await overhead(b);
    c[b] = await concurrent(b);
  }
  const dev = o.dev!;
  const cl = o.cluster!;
  const rows = [
    { what: 'same-identity up (steps 1,7,8,9)', devMs: dev.sameMs, clusterMs: cl.sameMs, clusterVsDev: cl.sameMs / dev.sameMs, devVsFloor: dev.sameMs / dev.floorSameMs, clusterVsFloor: cl.sameMs / cl.floorSameMs },
    { what: 'full up (9 steps, --restart)', devMs: dev.fullMs, clusterMs: cl.fullMs, clusterVsDev: cl.fullMs / dev.fullMs, devVsFloor: dev.fullMs / dev.floorFullMs, clusterVsFloor: cl.fullMs / cl.floorFullMs },
    { what: `${CONCURRENT} concurrent full ups (ready after 1 s)`, devMs: c.dev!.wallS * 1000, clusterMs: c.cluster!.wallS * 1000, clusterVsDev: c.cluster!.wallS / c.dev!.wallS, devVsFloor: null, clusterVsFloor: null },
  ];
  printTable(`PostgreSQL cluster vs dev server: medians of ${REPS} reps; ${CONCURRENT} concurrent deploys, one worker`, rows);
  writeResult('cluster', {
    reps: REPS,
    concurrent: CONCURRENT,
    rows: rows.map((r) => ({ ...r, devMs: round(r.devMs, 1), clusterMs: round(r.clusterMs, 1), clusterVsDev: round(r.clusterVsDev, 2), devVsFloor: r.devVsFloor === null ? null : round(r.devVsFloor, 2), clusterVsFloor: r.clusterVsFloor === null ? null : round(r.clusterVsFloor, 2) })),
    succeeded: { dev: `${c.dev!.succeeded}/${CONCURRENT}`, cluster: `${c.cluster!.succeeded}/${CONCURRENT}` },
    floorMs: { dev: { same: round(dev.floorSameMs, 1), full: round(dev.floorFullMs, 1) }, cluster: { same: round(cl.floorSameMs, 1), full: round(cl.floorFullMs, 1) } },
    samplesMs: Object.fromEntries(BACKENDS.map((b) => [b, Object.fromEntries(Object.entries(o[b]!.samples).map(([k, v]) => [k, v.map((x) => round(x, 1))]))])),
  });
}

runMain(main);
