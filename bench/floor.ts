/** The floor of the benchmarks: pulse's node scripts back to back over one connection, no Temporal, no sleeps. */
import type { NodeSession } from '../runtime/node/types.js';
import { sampleDrain } from '../runtime/steps/drain.js';
import { makeDirs, probeReadiness, runPreflight, sampleMemory, startServer, stopServer, verifyServer, writeEnv } from '../runtime/steps/index.js';
import { publishFragment } from '../runtime/gateway/gateway.js';
import { writeNodeState } from '../runtime/state/state.js';
import type { UpPlan } from '../runtime/model/index.js';
import type { Stack } from '../test/helpers/stack.js';

async function publishLocal(stack: Stack, plan: UpPlan): Promise<void> {
  await writeNodeState(stack.stateDir, {
    node: plan.node, state: 'up', action: 'up', profile: plan.profile, identity: plan.env.identity, workflowId: null, runId: null,
    at: new Date().toISOString(), backupPath: null, logPath: null, kvCacheLine: null, maxModelLen: null, servedModelName: null,
    overlayManifest: null, error: null, previousProfile: null,
  });
  await publishFragment(stack.stateDir, plan.fleet);
}

async function untilReady(s: NodeSession, plan: UpPlan, pollMs: number): Promise<void> {
  for (let i = 0; i < 100_000; i++) {
    if ((await probeReadiness(s, plan)).ready) return;
    if (pollMs > 0) await new Promise((r) => setTimeout(r, pollMs));
  }
  throw new Error('never ready');
}

/**
 * The floor: the same scripts back to back over one connection; readiness polls every `pollMs` (0: no sleep).
 * `lap(step)`, when given, is called as each step ends (the fleet bench's per-step times).
 */
export async function floorUp(s: NodeSession, stack: Stack, plan: UpPlan, full: boolean, rep: number, pollMs = 0, lap: (step: string) => void = () => undefined): Promise<void> {
  const pre = await runPreflight(s, plan);
  if (!pre.ok) throw new Error(`preflight failed: ${JSON.stringify(pre.checks.filter((c) => !c.ok))}`);
  lap('preflight');
  let logPath: string | null = null;
  if (full) {
    await makeDirs(s, plan);
    lap('mkdir');
    // pulse drains before every stop (issue 29): one sample of an idle server, as its drain step takes.
    await sampleDrain(s, { recipe: plan.recipe, port: plan.expect.port, bind: plan.expect.bind, http: true });
    lap('drain');
    await stopServer(s, plan.recipe);
    lap('stop');
    for (let i = 0; (await sampleMemory(s, plan.memory.gateGiB)).memAvailableGiB < plan.memory.gateGiB; i++) if (i > 10_000) throw new Error('memory');
    lap('memory');
    await writeEnv(s, plan);
    lap('writeEnv');
    logPath = (await startServer(s, plan, `bench-floor-${rep}-${Date.now()}`)).logPath;
    lap('start');
  }
  await untilReady(s, plan, pollMs);
  lap('readiness');
  const v = await verifyServer(s, plan, logPath);
  if (!v.ok) throw new Error(`verify failed: ${v.problems.join('; ')}`);
  lap('verify');
  await publishLocal(stack, plan);
  lap('publish');
}

