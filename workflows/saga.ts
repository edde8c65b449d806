/**
 * The saga part shared by upWorkflow and downWorkflow: once the stop step has begun, any failure or cancellation
 * runs the compensation (node state failed + gateway endpoint disabled). It runs in a non-cancellable scope, so a
 * cancel request cannot interrupt it, and its own failure never hides the deploy's first error.
 */
import { ApplicationFailure, CancellationScope, isCancellation, patched, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { FAILURES } from '../runtime/failures.js';
import { FRAME_STEPS } from '../runtime/steps/catalog.js';
import { OUTCOME_PATCH, SA_NODE, SA_OUTCOME, type Outcome } from './definitions.js';
import { deployFailure, describeError } from './result.js';
import type { LockInput, LockUse, StopInput } from '../activities/contract.js';
import type { StepTracker } from './tracker.js';
import type { DeployOptions, DeployResult, LockResult } from '../runtime/model/index.js';

/** Thrown by the workflow itself (never by an activity) for a protected node without --yes: nothing touched. */
export function refuseUnconfirmed(node: string, isProtected: boolean, confirmed: boolean, action: 'up' | 'down' | 'rollback'): void {
  if (isProtected && !confirmed) {
    throw ApplicationFailure.create({
      type: FAILURES.refused.type,
      message: `${node} is protected: ${action} needs --yes`,
      nonRetryable: true,
    });
  }
}

/**
 * patched() id of the node lock (issue 10): taken before preflight (down: before the stop), passed to every node step, released at the end.
 * Shared by up.ts and down.ts. Before preflight, not after: what preflight finds (same identity, the container, the current
 * .env) decides what the deploy does, and only holds while no other deploy can change the node in between.
 */
export const NODE_LOCK_PATCH = 'pulse-node-lock';

/** The input of the lock activities for a plan: the node and the recipe's name (`keepRaw` false: no raw records, see rawUse). */
export function lockInput(plan: { node: string; recipe: LockInput['recipe'] }, action: 'up' | 'down', keepRaw = true): LockInput {
  return { node: plan.node, recipe: { name: plan.recipe.name }, action, ...(keepRaw ? {} : { raw: false as const }) };
}

/** The stop step's input: the node, the recipe's name and the user's --yes (the worker has the rest, issue 11). */
export function stopInput(plan: { node: string; recipe: StopInput['recipe']; confirmed: boolean }): StopInput {
  return { node: plan.node, recipe: { name: plan.recipe.name }, confirmed: plan.confirmed };
}

/**
 * patched() id of keeping raw records only under --verbose (DeployOptions): a deploy started before it keeps them
 * for every step, as it did.
 */
export const RAW_VERBOSE_PATCH = 'pulse-raw-verbose';

/**
 * Whether the node steps of this deploy keep their raw records: --verbose, or a deploy from before RAW_VERBOSE_PATCH
 * (`small`: the deploy took HISTORY_PATCH, which stands for RAW_VERBOSE_PATCH).
 */
export function keepsRaw(opts: DeployOptions | undefined, small = false): boolean {
  return opts?.verbose === true || !(small || patched(RAW_VERBOSE_PATCH));
}

/** The second argument of every node step of a deploy holding the node lock. */
export function lockUse(keepRaw: boolean): LockUse {
  return keepRaw ? { nodeLock: true } : { nodeLock: true, raw: false };
}

export interface SagaState {
  /** Set just before the stop step is scheduled: from then on a failure compensates. */
  armed: boolean;
  /** The deploy took HISTORY_PATCH (definitions.ts), which stands for the patches before it (OUTCOME_PATCH too). */
  small?: boolean;
}

/**
 * Turns a deploy error into the workflow's failure: fills result.error/errorType (the FIRST error, prefixed with the
 * failed step), compensates when armed, then releases the node lock (`release`, when the deploy tried to take it),
 * and returns the ApplicationFailure to throw.
 */
export async function failDeploy(
  err: unknown,
  t: StepTracker,
  saga: SagaState,
  result: DeployResult,
  markFailed: (error: string) => Promise<unknown>,
  release?: () => Promise<unknown>,
  afterwards?: () => Promise<void>,
): Promise<ApplicationFailure> {
  const cancelled = isCancellation(err);
  const first = describeError(err);
  const failedStep = t.failedStep();
  result.ok = false;
  result.error = failedStep ? `${failedStep}: ${first.message}` : first.message;
  result.errorType = first.type;
  if (saga.armed) {
    const error = result.error;
    await CancellationScope.nonCancellable(async () => {
      try {
        await t.run(FRAME_STEPS.compensate, () => markFailed(error));
        result.compensated = true;
        result.state = 'failed';
      } catch (e) {
        result.warnings.push(`compensation failed: ${describeError(e).message}`);
      }
    });
  }
  if (release) await CancellationScope.nonCancellable(() => releaseLock(t, result, release));
  // An up's automatic rollback: after the compensation and the lock, and like them never cut short by a cancel.
  if (afterwards) await CancellationScope.nonCancellable(afterwards);
  markOutcome(result.rollback?.ok ? 'rolled-back' : cancelled ? 'cancelled' : 'failed', saga.small);
  result.steps = t.resultSteps();
  t.finish(`**failed**: ${result.error}`);
  return deployFailure(result, cancelled, err);
}

/**
 * The lock step. Refused (another deploy's lock is live): `notHeld` runs, so nothing releases a lock this deploy
 * never had; any other failure leaves the release armed (the node may have taken it before the link dropped).
 */
export async function takeLock(t: StepTracker, acquire: () => Promise<LockResult>, notHeld: () => void): Promise<void> {
  try {
    await t.run(FRAME_STEPS.lock, acquire);
  } catch (e) {
    if (describeError(e).type === FAILURES.refused.type) notHeld();
    throw e;
  }
}

/** Let the node lock go at the end of a deploy; a failure is a warning (the lease runs out by itself). */
export async function releaseLock(t: StepTracker, result: DeployResult, release: () => Promise<unknown>): Promise<void> {
  try {
    await t.run(FRAME_STEPS.unlock, release);
  } catch (e) {
    result.warnings.push(`node lock not released (${describeError(e).message}): it goes stale when its lease runs out`);
  }
}

/**
 * Whether the deploy was started with pulse's search attributes (the CLI registers all of them, PulseOutcome too, before
 * it starts one): only then may the workflow upsert them, since a server fails the workflow task on an attribute its
 * namespace does not know (a deploy started by hand or by a test harness without them upserts nothing).
 */
export function hasPulseAttributes(): boolean {
  return workflowInfo().typedSearchAttributes.get(SA_NODE) !== undefined;
}

/**
 * Upserts PulseOutcome (the UI and `temporal workflow list --query` filter on it); histories from before it skip it
 * (`small`: the deploy took HISTORY_PATCH, which stands for OUTCOME_PATCH).
 */
export function markOutcome(outcome: Outcome, small = false): void {
  if (hasPulseAttributes() && (small || patched(OUTCOME_PATCH))) upsertSearchAttributes([{ key: SA_OUTCOME, value: outcome }]);
}
