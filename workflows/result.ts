/**
 * How a deploy ends, in workflow code: the first error of the deploy becomes the failure message, and the
 * DeployResult travels in the failure's details so the CLI and the UI show the backup path and rollback command.
 */
import { ApplicationFailure, TemporalFailure, TimeoutFailure, isCancellation } from '@temporalio/workflow';
import { CANCEL_WORDS, DEPLOY_CANCELLED, DEPLOY_FAILED, FAILURES } from '../runtime/failures.js';
import type { DeployResult } from '../runtime/model/index.js';

export interface FirstError {
  message: string;
  /** The classified ApplicationFailure type (runtime/failures.ts), Timeout for a Temporal timeout, or Cancelled. */
  type: string;
}

/** The innermost meaningful failure of an activity/workflow error chain. */
export function describeError(err: unknown): FirstError {
  if (isCancellation(err)) return { message: CANCEL_WORDS, type: FAILURES.cancelled.type };
  let e: unknown = err;
  while (e instanceof TemporalFailure) {
    if (e instanceof ApplicationFailure) return { message: e.message, type: e.type ?? 'Error' };
    if (e instanceof TimeoutFailure) return { message: `step timed out (${String(e.timeoutType)})`, type: FAILURES.timeout.type };
    if (!e.cause) break;
    e = e.cause;
  }
  return { message: e instanceof Error ? e.message : String(e), type: FAILURES.internal.type };
}

/** The failure the workflow ends with: red in the UI, message = first error, details[0] = DeployResult. */
export function deployFailure(result: DeployResult, cancelled: boolean, cause: unknown): ApplicationFailure {
  return ApplicationFailure.create({
    type: cancelled ? DEPLOY_CANCELLED : DEPLOY_FAILED,
    message: result.error ?? 'deploy failed',
    nonRetryable: true,
    details: [result],
    cause: cause instanceof Error ? cause : undefined,
  });
}

/** `pulse model up <previous> --node <node>`: the previous profile from the node's current .env, else the plan's hint. */
export function rollbackCommand(node: string, previousProfile: string | null, hint: string | null, protectedNode: boolean): string | null {
  if (!previousProfile) return hint;
  return `pulse model up ${previousProfile} --node ${node}${protectedNode ? ' --yes' : ''}`;
}
