/**
 * A rollout's overhead per node (issue 15): `up best --restart` on 8 simulated nodes, once as one rollout
 * (rolloutWorkflow: per node the guard, the worker's plan, the child up, the smoke gate) and once as 8 single ups
 * started back to back (each the moment the previous one ended, as a script or a quick operator would). Both
 * alternate for `reps` rounds on one stack (one dev server, one `pulse worker`). The overhead per node is
 * (rollout − singles) / 8: what the guard, the plan activity, the child start and the smoke gate add.
 *
 * Run: npx tsc && node dist/worker/build-bundle.js && node dist/bench/rollout.js [reps] [nodes]
 */
import type { RolloutProgress, RolloutRequest } from '../runtime/model/index.js';
import { ROLLOUT_WORKFLOW, TASK_QUEUE } from '../workflows/definitions.js';
import { rolloutIdFor } from '../runtime/fleet/rollout.js';
import { startStack } from '../test/helpers/stack.js';
import { median, printTable, round, runMain, writeResult } from './lib.js';

const REPS = Number(process.argv[2] ?? 3);
const N = Number(process.argv[3] ?? 8);
const READY_MS = 1000;

async function main(): Promise<void> {
  const nodes = Array.from({ length: N }, (_, i) => `simR${i + 1}`);
  const stack = await startStack({ nodes, readyDelayMs: READY_MS, memory: { recoverMs: 0 } });
  try {
    // A first up everywhere, so every timed round is the same full restart.
    for (const n of nodes) {
      const o = await stack.outcome(await stack.start(stack.planUp(n, 'datagen'), { as: 'cli' }));
      if (o.status !== 'succeeded') throw new Error(`first up on ${n}: ${o.error ?? o.status}`);
    }
    const rows = [];
    for (let rep = 0; rep < REPS; rep++) {
      const t0 = performance.now();
      for (const n of nodes) {
        const o = await stack.outcome(await stack.start(stack.planUp(n, 'best', { restart: true }), { as: 'cli' }));
        if (o.status !== 'succeeded') throw new Error(`single up on ${n}: ${o.error ?? o.status}`);
      }
      const singlesS = (performance.now() - t0) / 1000;
      const req: RolloutRequest = {
        action: 'up', version: 1, profile: 'best', nodes, confirmed: false, experimental: false, restart: true, autoRollback: false,
        // Only the first sim node is reachable from the gateway: the guard would (rightly) refuse its step.
        allowOutage: true, maxParallel: 1, timeoutS: null, minMemGib: null, verbose: false,
      };
      const t1 = performance.now();
      const h = await stack.client.workflow.start(ROLLOUT_WORKFLOW, { taskQueue: TASK_QUEUE, workflowId: rolloutIdFor(nodes), args: [req] });
      const p = (await h.result()) as RolloutProgress;
      const rolloutS = (performance.now() - t1) / 1000;
      if (p.outcome !== 'succeeded') throw new Error(`rollout: ${p.outcome} ${p.error ?? ''}`);
      rows.push({ rep: rep + 1, nodes: N, singlesS: round(singlesS, 1), rolloutS: round(rolloutS, 1), perNodeOverheadS: round((rolloutS - singlesS) / N, 2) });
      process.stdout.write(`rep ${rep + 1}: ${N} single ups ${round(singlesS, 1)} s, one rollout ${round(rolloutS, 1)} s\n`);
    }
    printTable(`${N} nodes: one rollout vs ${N} single ups back to back (up best --restart, server ready after ${READY_MS} ms)`, rows);
    const singles = median(rows.map((r) => r.singlesS));
    const rollout = median(rows.map((r) => r.rolloutS));
    writeResult('rollout', { readyDelayMs: READY_MS, nodes: N, rows, medianSinglesS: round(singles, 1), medianRolloutS: round(rollout, 1), medianPerNodeOverheadS: round((rollout - singles) / N, 2) });
  } finally {
    await stack.stop();
  }
}

runMain(main);
