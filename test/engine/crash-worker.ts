/**
 * A pulse worker in a child process, for the crash-resume test: the REAL activities over the simulator, plus
 * - PULSE_CRASH_HOLDS {"spark3":"stopServer",...}: on that node, that step does its real work and then hangs
 *   (for the two waits: hangs inside a probe), after writing <PULSE_CRASH_DIR>/held-<node>; the test then SIGKILLs
 *   this process while the step is still running as far as Temporal knows;
 * - every write-env and start the node reports is appended to <PULSE_CRASH_DIR>/calls.jsonl (both workers).
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import type { StepFunctions } from '../../activities/deps.js';
import { createActivities } from '../../activities/index.js';
import type { PulseActivities } from '../../activities/index.js';
import * as realSteps from '../../runtime/steps/index.js';
import { buildDeps } from '../../worker/deps.js';
import { createPulseWorker } from '../../worker/main.js';

const dir = process.env['PULSE_CRASH_DIR'] as string;
const holds = JSON.parse(process.env['PULSE_CRASH_HOLDS'] ?? '{}') as Record<string, string>;
const hang = (): Promise<never> => new Promise<never>(() => undefined);

function held(node: string, step: string): Promise<never> {
  writeFileSync(path.join(dir, `held-${node}`), step);
  return hang();
}

function record(entry: Record<string, unknown>): void {
  appendFileSync(path.join(dir, 'calls.jsonl'), `${JSON.stringify({ pid: process.pid, ...entry })}\n`);
}

const steps: StepFunctions = {
  ...realSteps,
  writeEnv: async (s, plan, o) => {
    const r = await realSteps.writeEnv(s, plan, o);
    record({ node: plan.node, step: 'write-env', written: r.written, backup: r.backupPath });
    return r;
  },
  startServer: async (s, plan, id, o) => {
    const r = await realSteps.startServer(s, plan, id, o);
    record({ node: plan.node, step: 'start', started: r.started });
    return r;
  },
  sampleMemory: async (s, gate, o) => (holds[s.target.name] === 'waitForMemory' ? held(s.target.name, 'memory') : realSteps.sampleMemory(s, gate, o)),
  probeReadiness: async (s, plan, o, seen) => (holds[plan.node] === 'pollReadiness' ? held(plan.node, 'readiness') : realSteps.probeReadiness(s, plan, o, seen)),
};

function nodeOf(input: unknown): string {
  const i = input as { node?: string; plan?: { node: string } };
  return i.node ?? i.plan?.node ?? '';
}

/** Activities that hang after their real work on the held node (the publish hold is the final 'up' publish). */
function holding(real: PulseActivities): PulseActivities {
  const out = {} as Record<string, (input: never) => Promise<unknown>>;
  for (const [name, fn] of Object.entries(real) as [string, (input: unknown) => Promise<unknown>][]) {
    out[name] = async (input: never) => {
      const r = await fn(input);
      const key = name === 'publishState' ? `publishState:${(input as { state: string }).state}` : name;
      if (holds[nodeOf(input)] === key) await held(nodeOf(input), key);
      return r;
    };
  }
  return out as unknown as PulseActivities;
}

async function main(): Promise<void> {
  const connection = await NativeConnection.connect({ address: process.env['TEMPORAL_ADDRESS'] as string });
  const logger = { info: () => undefined, warn: (m: string) => process.stderr.write(`${m}\n`) };
  const stateDir = process.env['PULSE_STATE_DIR'] as string;
  const real = buildDeps(stateDir, logger, { steps });
  const w = await createPulseWorker({ connection, stateDir, logger, activities: holding(createActivities(real.deps)) });
  writeFileSync(path.join(dir, `ready-${process.pid}`), '');
  await w.run();
  await real.close();
  await connection.close();
}

main().catch((err: unknown) => {
  process.stderr.write(`crash-worker: ${String(err)}\n`);
  process.exit(1);
});
