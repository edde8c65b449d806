/**
 * Outage of a failed deploy with --auto-rollback (issue 14): `datagen` serves; `up best --auto-rollback` stops it and
 * never gets ready (the simulated vLLM never listens) within a readiness budget of TIMEOUT_S; the compensation
 * disables the endpoint and the rollback child brings datagen back. The outage is the up's own figure, from its
 * stop step to the rollback's verified publish (DeployResult.rollback.servingAfterS, workflow clock). The floor is
 * one stop + one start of the old .env until /v1/models answers, the node scripts back to back over one connection
 * (no Temporal). What the automatic path adds over floor + readiness budget is pulse's cost of the failed attempt
 * and the rollback. Without --auto-rollback the outage lasts until a person acts.
 *
 * Run: npx tsc && node dist/worker/build-bundle.js && node dist/bench/rollback-outage.js [reps] [timeoutS]
 */
import { openSession } from '../runtime/node/connect.js';
import { probeReadiness, startServer, stopServer } from '../runtime/steps/index.js';
import type { NodeSession } from '../runtime/node/types.js';
import type { UpPlan } from '../runtime/model/index.js';
import type { SimNode } from '../test/sim/index.js';
import { startStack } from '../test/helpers/stack.js';
import { until } from '../test/helpers/until.js';
import { median, printTable, round, runMain, writeResult } from './lib.js';

const REPS = Number(process.argv[2] ?? 3);
const TIMEOUT_S = Number(process.argv[3] ?? 5);
const READY_MS = 1000;

/** The next server never listens; the one after it (the rollback's) is healthy. */
async function nextStartNeverReady(node: SimNode): Promise<void> {
  const starts = node.startShCalls().length;
  node.setFailure('never-ready');
  const logs = (): string => {
    try {
      return node.docker('logs', node.containerName);
    } catch {
      return '';
    }
  };
  try {
    await until('the never-ready server started', () => node.startShCalls().length > starts && logs().includes('non-default args'), 120_000);
  } catch (e) {
    process.stderr.write(`start.sh runs ${node.startShCalls().length} (before ${starts}); log tail: ${logs().slice(-600)}\n`);
    throw e;
  }
  node.setFailure('none');
}

/** One stop + one start of `plan`'s .env (the live one) until it answers: seconds. */
async function floor(s: NodeSession, plan: UpPlan, rep: number): Promise<number> {
  const t0 = performance.now();
  await stopServer(s, plan.recipe);
  await startServer(s, plan, `bench-rollback-floor-${rep}-${Date.now()}`);
  for (let i = 0; i < 10_000 && !(await probeReadiness(s, plan)).ready; i++) await new Promise((r) => setTimeout(r, 100));
  return (performance.now() - t0) / 1000;
}

async function main(): Promise<void> {
  const stack = await startStack({ nodes: ['simR'], readyDelayMs: READY_MS, memory: { recoverMs: 0 } });
  const node = stack.sim.node('simR');
  Object.assign(process.env, stack.env); // the floor's ssh resolves the sim alias like the worker does
  try {
    const first = await stack.outcome(await stack.start(stack.planUp('simR', 'datagen'), { as: 'cli' }));
    if (first.status !== 'succeeded') throw new Error(`first up: ${first.status} ${first.error ?? ''}`);
    const session = await openSession(stack.planUp('simR', 'datagen').target);
    const rows = [];
    try {
      for (let rep = 0; rep < REPS; rep++) {
        const plan: UpPlan = { ...stack.planUp('simR', 'best', { timeoutS: TIMEOUT_S }), autoRollback: true };
        const handle = await stack.start(plan, { as: 'cli' });
        await nextStartNeverReady(node).catch(async (e: unknown) => {
          process.stderr.write(`the up: ${JSON.stringify(await Promise.race([stack.outcome(handle), new Promise((r) => setTimeout(() => r('still running'), 5000))])).slice(0, 1500)}\n`);
          throw e;
        });
        const out = await stack.outcome(handle);
        const rb = out.result?.rollback;
        if (!rb?.ok || rb.servingAfterS === null) throw new Error(`rep ${rep + 1}: no rollback: ${out.error ?? ''}`);
        const floorS = await floor(session, stack.planUp('simR', 'datagen'), rep);
        rows.push({ rep: rep + 1, autoRollbackS: rb.servingAfterS, floorS: round(floorS, 1), readinessBudgetS: TIMEOUT_S, addedS: round(rb.servingAfterS - floorS - TIMEOUT_S, 1), servesAgain: rb.profile });
        process.stdout.write(`rep ${rep + 1}: outage ${rb.servingAfterS} s with auto-rollback, floor ${round(floorS, 1)} s\n`);
      }
    } finally {
      await session.close();
    }
    printTable(`outage of a failed up (never ready, budget ${TIMEOUT_S} s) from its stop to serving again`, rows);
    const auto = median(rows.map((r) => r.autoRollbackS));
    const fl = median(rows.map((r) => r.floorS));
    writeResult('rollback-outage', {
      readyDelayMs: READY_MS,
      readinessBudgetS: TIMEOUT_S,
      rows,
      medianAutoRollbackS: round(auto, 1),
      medianFloorS: round(fl, 1),
      medianAddedS: round(auto - fl - TIMEOUT_S, 1),
      withoutAutoRollback: 'until a person runs pulse model rollback (or up of the old profile)',
    });
  } finally {
    await stack.stop();
  }
}

runMain(main);
