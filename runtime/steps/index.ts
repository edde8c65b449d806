/**
 * The typed step functions the activities call, and `stepScripts(plan)`: the exact text each step sends to
 * `bash -s`, which `up --dry-run` prints.
 */
import type { DownPlan, UpPlan } from '../model/index.js';
import { scriptOwnText, scriptText } from '../node/script.js';
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
  /** The exact text sent to `bash -s`. */
  script: string;
  /** The same with one marker line for the shared prelude (node/script.ts scriptOwnText): the dry-run's text. */
  own: string;
}

/** Placeholder deployId in the dry-run: the real one is the workflow's ID + run, known only at start. */
export const DRY_RUN_DEPLOY_ID = 'dry-run';

/** The script of each step in order, exactly as the workflow sends it (start shows a placeholder deployId). */
export function stepScripts(plan: UpPlan | DownPlan): StepScript[] {
  const one = (step: StepName, title: string, env: Record<string, string>): StepScript => ({ step, title, script: scriptText(step, env), own: scriptOwnText(step, env) });
  if (plan.action === 'down') return [one('stop', DOWN_STEPS.stop.plan, stopInputs(plan))];
  const s = UP_STEPS;
  return [
    one(s.preflight.script, s.preflight.plan, preflightInputs(plan)),
    one(s.mkdir.script, s.mkdir.plan, mkdirInputs(plan)),
    // The drain runs only when a container serves (preflight says so) and the budget is not 0.
    one(s.drain.script, s.drain.plan, drainInputs({ recipe: plan.recipe, port: plan.expect.port, bind: plan.expect.bind, http: !plan.protected || plan.confirmed })),
    one(s.stop.script, s.stop.plan, stopInputs(plan)),
    one(s.memory.script, s.memory.plan.replace('{gate}', String(plan.memory.gateGiB)), memoryInputs(plan.memory.gateGiB)),
    one(s.writeEnv.script, s.writeEnv.plan, writeEnvInputs(plan)),
    one(s.start.script, s.start.plan, startInputs(plan, DRY_RUN_DEPLOY_ID)),
    one(s.readiness.script, s.readiness.plan, readinessInputs(plan)),
    one(s.verify.script, s.verify.plan, verifyInputs(plan, null)),
  ];
}
