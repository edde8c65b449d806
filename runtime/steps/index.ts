/**
 * The typed step functions the activities call, and `stepScripts(plan)`: the exact text each step sends to
 * `bash -s`, which `up --dry-run` prints.
 */
import type { DownPlan, UpPlan } from '../model/index.js';
import { scriptText } from '../node/script.js';
import { DOWN_STEPS, UP_STEPS } from './catalog.js';
import { drainInputs } from './drain.js';
import type { StepName } from '../node/types.js';
import {
  memoryInputs, mkdirInputs, preflightInputs, readinessInputs, startInputs, stopInputs, verifyInputs, writeEnvInputs,
} from './inputs.js';

export { runPreflight, previewPreflight, preflightReport, diffEnv, decideSkip } from './preflight.js';
export { makeDirs, stopServer, sampleMemory, writeEnv, startServer } from './actions.js';
export { probeReadiness, verifyServer, parseModels } from './checks.js';
export { followServerLog } from './follow.js';
export { sampleDrain, drainInputs, inFlight, drainWords, type DrainTarget } from './drain.js';
export { deployKey, probeHost } from './inputs.js';
export { nodeLock, lockOf, LOCK_LEASE_S } from './lock.js';
export { readBackup, type BackupRead } from './restore.js';
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
  if (plan.action === 'down') return [{ step: 'stop', title: DOWN_STEPS.stop.plan, script: scriptText('stop', stopInputs(plan)) }];
  const s = UP_STEPS;
  return [
    { step: s.preflight.script, title: s.preflight.plan, script: scriptText(s.preflight.script, preflightInputs(plan)) },
    { step: s.mkdir.script, title: s.mkdir.plan, script: scriptText(s.mkdir.script, mkdirInputs(plan)) },
    // The drain runs only when a container serves (preflight says so) and the budget is not 0.
    { step: s.drain.script, title: s.drain.plan, script: scriptText(s.drain.script, drainInputs({ recipe: plan.recipe, port: plan.expect.port, bind: plan.expect.bind, http: !plan.protected || plan.confirmed })) },
    { step: s.stop.script, title: s.stop.plan, script: scriptText(s.stop.script, stopInputs(plan)) },
    { step: s.memory.script, title: s.memory.plan.replace('{gate}', String(plan.memory.gateGiB)), script: scriptText(s.memory.script, memoryInputs(plan.memory.gateGiB)) },
    { step: s.writeEnv.script, title: s.writeEnv.plan, script: scriptText(s.writeEnv.script, writeEnvInputs(plan)) },
    { step: s.start.script, title: s.start.plan, script: scriptText(s.start.script, startInputs(plan, DRY_RUN_DEPLOY_ID)) },
    { step: s.readiness.script, title: s.readiness.plan, script: scriptText(s.readiness.script, readinessInputs(plan)) },
    { step: s.verify.script, title: s.verify.plan, script: scriptText(s.verify.script, verifyInputs(plan, null)) },
  ];
}
