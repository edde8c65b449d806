/**
 * The stable ApplicationFailure types of pulse, shared by activities/errors.ts (which throws them), the workflows
 * (which read them and build retry policies) and the CLI (which prints them). No imports: safe in the bundle.
 */
export const FAILURE = {
  config: 'ConfigError',
  precondition: 'PreconditionFailed',
  refused: 'Refused',
  unreachable: 'Unreachable',
  notReady: 'NotReady',
  timeout: 'Timeout',
  script: 'ScriptFailed',
  verify: 'VerifyFailed',
  /**
   * The server answered 401 (readiness, verify): its key is not the node .env's API_KEY. No retry fixes that; the
   * activity marks it non-retryable itself, so the released retry policies (NON_RETRYABLE_FAILURES) stay as recorded.
   */
  unauthorized: 'Unauthorized',
  internal: 'InternalError',
} as const;

export type FailureType = (typeof FAILURE)[keyof typeof FAILURE];

/**
 * Failures that no retry can fix: the input, the node's safety rules or a spec deadline says no. Unreachable,
 * NotReady and InternalError are retried by the presets; ScriptFailed is retried a few times by the activity
 * itself (activities/errors.ts turns it non-retryable from the third attempt).
 */
export const NON_RETRYABLE_FAILURES: string[] = [
  FAILURE.config,
  FAILURE.precondition,
  FAILURE.refused,
  FAILURE.timeout,
  FAILURE.verify,
];

/**
 * How a failed up/down ends: the workflow FAILS (red in the UI) with an ApplicationFailure of one of these types,
 * whose `details[0]` is the DeployResult (backup path, rollback command, steps). A cancelled deploy ends the same
 * way with DEPLOY_CANCELLED, so the CLI always finds the result in one place; `message` is the first error.
 */
export const DEPLOY_FAILED = 'DeployFailed';
export const DEPLOY_CANCELLED = 'DeployCancelled';
