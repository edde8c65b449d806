/**
 * The drain before a stop (issue 29), in figures:
 *
 * 1. A rollout of 2 nodes (`up best --restart` on both, one after the other) under a steady load of streaming
 *    clients, once with `--no-drain` (drainS 0) and once with the drain (a 60 s budget), in one run on one stack. Each
 *    node has CLIENTS clients that stream one completion (GEN_MS long) and then think 0..THINK_MS before the next, as
 *    users do. A request is CUT when its stream began and ended before `data: [DONE]` (the stop took the server from
 *    under it); one the stopped server refused is counted apart (refused: it never started, a client retries it).
 * 2. The time the drain adds to an up on an idle server: the drain step's own duration (one sample: nothing in
 *    flight), over IDLE_REPS ups `best --restart`. Goal: under 0.5 s.
 *
 * Run: npx tsc && node dist/worker/build-bundle.js && node dist/bench/drain.js [idleReps]
 */
import type { DeployResult, RolloutProgress, RolloutRequest } from '../runtime/model/index.js';
import { ROLLOUT_WORKFLOW, TASK_QUEUE } from '../workflows/definitions.js';
import { rolloutIdFor } from '../runtime/fleet/rollout.js';
import { startStack } from '../test/helpers/stack.js';
import { streamChat } from '../test/helpers/stream-client.js';
import { median, printTable, round, runMain, writeResult } from './lib.js';

const IDLE_REPS = Number(process.argv[2] ?? 5);
const CLIENTS = 3;
const GEN_MS = 1500;
const THINK_MS = 2000;
const NODES = ['simD1', 'simD2'];

interface Tally {
  complete: number;
  cut: number;
  refused: number;
}

/** One client: stream, think, again, until `stop`; each outcome goes to the tally the round in progress names. */
async function client(port: number, round: () => Tally | null, stop: () => boolean): Promise<void> {
  while (!stop()) {
    const t = round();
    const o = await streamChat(port);
    const tally = t ?? round();
    if (tally) {
      if (o.complete) tally.complete += 1;
      else if (o.status === 200) tally.cut += 1;
      else tally.refused += 1;
    }
    await new Promise((r) => setTimeout(r, o.status === 200 ? Math.random() * THINK_MS : 200));
  }
}

async function main(): Promise<void> {
  const stack = await startStack({ nodes: NODES, readyDelayMs: 1000, memory: { recoverMs: 0 } });
  try {
    for (const n of NODES) {
      const o = await stack.outcome(await stack.start(stack.planUp(n, 'best'), { as: 'cli' }));
      if (o.status !== 'succeeded') throw new Error(`first up on ${n}: ${o.error ?? o.status}`);
      stack.sim.node(n).setControl({ generationMs: GEN_MS });
    }
    let current: Tally | null = null;
    let stopped = false;
    const load = NODES.flatMap((n) => Array.from({ length: CLIENTS }, () => client(stack.sim.node(n).vllmPort, () => current, () => stopped)));
    const rollout = async (drainS: number): Promise<{ tally: Tally; seconds: number; drains: number[] }> => {
      const tally: Tally = { complete: 0, cut: 0, refused: 0 };
      await new Promise((r) => setTimeout(r, 3000)); // the load settles on the servers
      current = tally;
      const req: RolloutRequest = {
        action: 'up', version: 1, profile: 'best', nodes: NODES, confirmed: false, experimental: false, restart: true, autoRollback: false,
        allowOutage: true, maxParallel: 1, timeoutS: null, minMemGib: null, verbose: false, drainS,
      };
      const t0 = performance.now();
      const h = await stack.client.workflow.start(ROLLOUT_WORKFLOW, { taskQueue: TASK_QUEUE, workflowId: rolloutIdFor(NODES), args: [req] });
      const p = (await h.result()) as RolloutProgress;
      const seconds = (performance.now() - t0) / 1000;
      await new Promise((r) => setTimeout(r, GEN_MS + 500)); // requests begun on the new servers end in this round
      current = null;
      if (p.outcome !== 'succeeded') throw new Error(`rollout: ${p.outcome} ${p.error ?? ''}`);
      const drains: number[] = [];
      for (const n of p.nodes) {
        if (!n.workflowId || !n.runId) continue;
        const r = (await stack.client.workflow.getHandle(n.workflowId, n.runId).result()) as DeployResult;
        drains.push(r.drain?.waitedS ?? 0);
      }
      return { tally, seconds, drains };
    };
    const without = await rollout(0);
    process.stdout.write(`without the drain: ${JSON.stringify(without)}\n`);
    const withDrain = await rollout(60);
    process.stdout.write(`with the drain: ${JSON.stringify(withDrain)}\n`);
    stopped = true;
    await Promise.all(load);
    const rows = [
      { rollout: 'no drain (--no-drain)', cut: without.tally.cut, completed: without.tally.complete, refused: without.tally.refused, seconds: round(without.seconds, 1), drainS: without.drains.join(' + ') || '-' },
      { rollout: 'drain (budget 60 s)', cut: withDrain.tally.cut, completed: withDrain.tally.complete, refused: withDrain.tally.refused, seconds: round(withDrain.seconds, 1), drainS: withDrain.drains.join(' + ') },
    ];
    printTable(`rollout of ${NODES.length} nodes (up best --restart) under ${CLIENTS} streaming clients per node (${GEN_MS} ms generations, 0-${THINK_MS} ms think time)`, rows);

    // The idle server: what the drain step adds to an up (one sample, nothing in flight).
    for (const n of NODES) stack.sim.node(n).setControl({ generationMs: 0 });
    const idle: number[] = [];
    for (let i = 0; i < IDLE_REPS; i++) {
      const o = await stack.outcome(await stack.start(stack.planUp(NODES[0]!, 'best', { restart: true }), { as: 'cli' }));
      if (o.status !== 'succeeded' || !o.result) throw new Error(`idle up: ${o.error ?? o.status}`);
      const ms = o.result.steps.find((s) => s.step === 'drain')?.ms;
      if (ms === undefined) throw new Error('the idle up had no drain step');
      idle.push(ms);
    }
    const idleRows = idle.map((ms, i) => ({ rep: i + 1, drainStepMs: ms }));
    printTable(`the drain step of an up on an idle server (${IDLE_REPS} ups best --restart)`, idleRows);
    writeResult('drain', {
      clientsPerNode: CLIENTS, generationMs: GEN_MS, thinkMs: THINK_MS, nodes: NODES.length, rows,
      idleDrainMs: idle, medianIdleDrainMs: median(idle), maxIdleDrainMs: Math.max(...idle),
    });
  } finally {
    await stack.stop();
  }
}

runMain(main);
