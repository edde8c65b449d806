/**
 * The typed step functions the activities call, and `stepScripts(plan)`: the exact text each step sends to
 * `bash -s`, which `up --dry-run` prints.
 */
import type { DownPlan, UpPlan } from '../model/index.js';
import { scriptText } from '../node/script.js';
import type { StepName } from '../node/types.js';
import {
  memoryInputs, mkdirInputs, preflightInputs, readinessInputs, startInputs, stopInputs, verifyInputs, writeEnvInputs,
} from './inputs.js';

export { runPreflight, preflightReport, diffEnv, decideSkip } from './preflight.js';
export { makeDirs, stopServer, sampleMemory, writeEnv, startServer } from './actions.js';
export { probeReadiness, verifyServer, parseModels } from './checks.js';
export { deployKey, probeHost } from './inputs.js';
export { nodeLock, lockOf, LOCK_LEASE_S } from './lock.js';
export type { LockOwner, LockOp } from './lock.js';
export type { StepOptions } from './run.js';

export interface StepScript {
  step: StepName;
  title: string;
  script: string;
}

/** Placeholder deployId in the dry-run: the real one is the workflow's ID + run, known only at start. */
export const DRY_RUN_DEPLOY_ID = 'dry-run';

/** The script of each step in order, exactly as the workflow sends it (start shows a placeholder deployId). */
export function stepScripts(plan: UpPlan | DownPlan): StepScript[] {
  if (plan.action === 'down') return [{ step: 'stop', title: 'stop: stop.sh, then make sure the container is gone', script: scriptText('stop', stopInputs(plan)) }];
  return [
    { step: 'preflight', title: '1. preflight (read-only)', script: scriptText('preflight', preflightInputs(plan)) },
    { step: 'mkdir', title: '2. create the pulse-mkdir directories', script: scriptText('mkdir', mkdirInputs(plan)) },
    { step: 'stop', title: '3. stop.sh, then make sure the container is gone', script: scriptText('stop', stopInputs(plan)) },
    { step: 'memory', title: `4. wait until MemAvailable >= ${plan.memory.gateGiB} GiB (one sample per poll)`, script: scriptText('memory', memoryInputs(plan.memory.gateGiB)) },
    { step: 'write-env', title: '5. back up and write the .env (skipped when the identity is the same)', script: scriptText('write-env', writeEnvInputs(plan)) },
    { step: 'start', title: '6. start.sh in a new session (setsid, env -i)', script: scriptText('start', startInputs(plan, DRY_RUN_DEPLOY_ID)) },
    { step: 'readiness', title: '7. probe /v1/models until 200 (one probe per poll)', script: scriptText('readiness', readinessInputs(plan)) },
    { step: 'verify', title: '8. verify model name, max_model_len, KV cache line, pulse-proof', script: scriptText('verify', verifyInputs(plan, null)) },
  ];
}
