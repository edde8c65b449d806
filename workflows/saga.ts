/**
 * The saga part shared by upWorkflow and downWorkflow: once the stop step has begun, any failure or cancellation
 * runs the compensation (node state failed + gateway endpoint disabled). It runs in a non-cancellable scope, so a
 * cancel request cannot interrupt it, and its own failure never hides the deploy's first error.
 */
import { ApplicationFailure, CancellationScope, isCancellation } from '@temporalio/workflow';
import { FAILURE } from './failures.js';
import { deployFailure, describeError } from './result.js';
import type { StepTracker } from './tracker.js';
import type { DeployResult } from './types.js';

/** Thrown by the workflow itself (never by an activity) for a protected node without --yes: nothing touched. */
export function refuseUnconfirmed(node: string, isProtected: boolean, confirmed: boolean, action: 'up' | 'down'): void {
  if (isProtected && !confirmed) {
    throw ApplicationFailure.create({
      type: FAILURE.refused,
      message: `${node} is protected: ${action} needs --yes`,
      nonRetryable: true,
    });
  }
}

export interface SagaState {
  /** Set just before the stop step is scheduled: from then on a failure compensates. */
  armed: boolean;
}

/**
 * Turns a deploy error into the workflow's failure: fills result.error/errorType (the FIRST error, prefixed with the
 * failed step), compensates when armed, and returns the ApplicationFailure to throw.
 */
export async function failDeploy(
  err: unknown,
  t: StepTracker,
  saga: SagaState,
  result: DeployResult,
  markFailed: (error: string) => Promise<unknown>,
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
        await t.run('compensate', 'compensation: mark node failed, disable its endpoint', () => markFailed(error));
        result.compensated = true;
        result.state = 'failed';
      } catch (e) {
        result.warnings.push(`compensation failed: ${describeError(e).message}`);
      }
    });
  }
  result.steps = t.resultSteps();
  t.finish(`**failed**: ${result.error}`);
  return deployFailure(result, cancelled, err);
}
