/**
 * createActivities(deps): every activity the pulse workflows call, built from injected dependencies (node pool,
 * state dir, clock, logger). The workflows see them through the PulseActivities type (contract.ts) only.
 */
import type { PulseActivities } from './contract.js';
import type { ActivityDeps } from './deps.js';
import { lockActivities } from './lock.js';
import { drainActivities } from './drain.js';
import { nodeStepActivities } from './node-steps.js';
import { publishActivities } from './publish.js';
import { rollbackActivities } from './rollback.js';
import { rolloutActivities, type RolloutActivities } from './rollout.js';
import { waitActivities } from './waits.js';
import { watchdogActivities } from './watchdog.js';

export type { PulseActivities } from './contract.js';
export type { ActivityDeps, NodeAccess, StateStore, StepFunctions, ActivityLogger } from './deps.js';

/** The activities object a Worker registers. */
export function createActivities(deps: ActivityDeps): PulseActivities & RolloutActivities {
  return { ...lockActivities(deps), ...nodeStepActivities(deps), ...drainActivities(deps), ...waitActivities(deps), ...publishActivities(deps), ...rollbackActivities(deps), ...rolloutActivities(deps), ...watchdogActivities(deps) };
}
