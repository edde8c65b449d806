/**
 * The one failure table of pulse: failure kind → ApplicationFailure type → retry decision → exit code → message.
 * The node layer names kinds (PulseError), activities turn them into ApplicationFailures (activities/errors.ts), the
 * workflows build retry policies from them and the CLI turns a kind or a type back into its exit code and words.
 *
 * Pure data and pure functions, no imports: the workflow bundle imports it (eslint allows this one runtime file in
 * workflows/), so it must stay deterministic and free of Node modules.
 */

/**
 * How a kind is retried. `preset`: never, and listed in the released presets' nonRetryableErrorTypes (so a retry
 * policy recorded in an old history says the same); `activity`: never, marked non-retryable by the activity itself
 * (kinds added after a release, so the recorded policies stay as they were); `retry`: by the preset's backoff;
 * `few`: SCRIPT_FAILURE_ATTEMPTS attempts, then the activity marks it non-retryable; `none`: not a step failure
 * (usage, a cancel, a status verdict), never thrown by an activity.
 */
export type RetryDecision = 'preset' | 'activity' | 'retry' | 'few' | 'none';

export interface FailureRow {
  /** The ApplicationFailure type of this kind (a type may stand for more than one kind: ConfigError). */
  readonly type: string;
  readonly retry: RetryDecision;
  /** The exit code of a pulse command that ends with this kind. */
  readonly exit: number;
  /** What the kind means, in the words of `--help` and of the failure block. */
  readonly message: string;
}

export const FAILURES = {
  internal: { type: 'InternalError', retry: 'retry', exit: 1, message: 'internal error (a bug, or a fault pulse does not know)' },
  usage: { type: 'ConfigError', retry: 'preset', exit: 2, message: 'usage: a bad command, option or argument' },
  config: { type: 'ConfigError', retry: 'preset', exit: 3, message: 'config: nodes.json, a profile or an overlay is invalid, or names no such node or profile' },
  refused: { type: 'Refused', retry: 'preset', exit: 4, message: 'refused by a safety rule (protected node, render-only or experimental profile, busy node)' },
  precondition: { type: 'PreconditionFailed', retry: 'preset', exit: 5, message: 'precondition failed on the node (missing mount source, recipe file or image, another vLLM runs)' },
  unreachable: { type: 'Unreachable', retry: 'retry', exit: 6, message: 'node unreachable (ssh failed or the link dropped)' },
  'not-ready': { type: 'NotReady', retry: 'retry', exit: 7, message: 'not ready: the server or a node is not healthy yet' },
  timeout: { type: 'Timeout', retry: 'preset', exit: 8, message: 'timeout: a wait reached its deadline (memory gate, readiness)' },
  script: { type: 'ScriptFailed', retry: 'few', exit: 9, message: 'a node script failed' },
  verify: { type: 'VerifyFailed', retry: 'preset', exit: 9, message: 'verify failed: the server runs but is not what the profile asks for' },
  temporal: { type: 'InternalError', retry: 'retry', exit: 10, message: 'Temporal unreachable, or it refused a call' },
  unauthorized: { type: 'Unauthorized', retry: 'activity', exit: 11, message: 'unauthorized: the server wants an API key that the node .env does not give' },
  temporary: { type: 'TemporaryFailure', retry: 'retry', exit: 12, message: 'temporary failure on the node (docker busy, a lock file busy), still there after the retries' },
  cancelled: { type: 'Cancelled', retry: 'none', exit: 13, message: 'cancelled: the deploy was cancelled (pulse model cancel) or terminated' },
  // A daemon that restarts (systemd, an upgrade) answers again within seconds: a few attempts, then the operator's.
  'docker-down': { type: 'DockerDown', retry: 'few', exit: 14, message: 'the Docker daemon on the node does not answer (stopped, its socket missing, or permission denied)' },
} as const satisfies Record<string, FailureRow>;

export type FailureKind = keyof typeof FAILURES;

/** Exit codes that are no failure kind: success, `diff` found a difference, Ctrl-C detached from a running deploy. */
export const EXIT_OK = 0;
export const EXIT_DIFFERS = 1;
export const EXIT_DETACHED = 130;

/** A script failure nobody explained is retried this many attempts in all (a flaky docker CLI), then given up. */
export const SCRIPT_FAILURE_ATTEMPTS = 3;

/**
 * The nonRetryableErrorTypes of the released presets, in their recorded order. Frozen: a saved history replays with
 * the policy it recorded, so a new non-retryable kind is `activity`, never added here (test/unit/failures.test.ts
 * checks that the table's `preset` rows are exactly these).
 */
export const NON_RETRYABLE_FAILURES: string[] = ['ConfigError', 'PreconditionFailed', 'Refused', 'Timeout', 'VerifyFailed'];

/** The ApplicationFailure types a workflow ends with; the DeployResult is in details[0]. */
export const DEPLOY_FAILED = 'DeployFailed';
export const DEPLOY_CANCELLED = 'DeployCancelled';

/** The first error of a deploy that a cancel ended (workflows/result.ts), kept in its result and its node state. */
export const CANCEL_WORDS = 'deploy cancelled by request';

/**
 * Whether a deploy's recorded error (its result's, or the node state's a compensation wrote) says a cancel ended it:
 * the node is marked failed then as after a failure, but the operator's word for what happened is "cancelled".
 */
export function saysCancelled(error: string | null | undefined): boolean {
  return typeof error === 'string' && (error.includes(CANCEL_WORDS) || error.includes(FAILURES.cancelled.message));
}

/** The kind an ApplicationFailure type stands for (the first row with that type: ConfigError → config). */
const KIND_OF_TYPE: Record<string, FailureKind> = {
  ...Object.fromEntries(
    (Object.keys(FAILURES) as FailureKind[])
      .filter((k) => k !== 'usage' && k !== 'temporal')
      .map((k) => [FAILURES[k].type, k]),
  ),
  [DEPLOY_CANCELLED]: 'cancelled',
};

export function kindOfType(type: string | null | undefined): FailureKind {
  return (type && Object.hasOwn(KIND_OF_TYPE, type) ? KIND_OF_TYPE[type] : undefined) ?? 'internal';
}

/** Whether an activity may retry this kind at this attempt (1-based). */
export function retryable(kind: FailureKind, attempt: number): boolean {
  const r: RetryDecision = FAILURES[kind].retry;
  return r === 'retry' || (r === 'few' && attempt < SCRIPT_FAILURE_ATTEMPTS);
}

/** The exit-code lines of `--help` and the README, one per code, lowest first. */
export function exitCodeLines(): string[] {
  const byCode = new Map<number, string[]>([[EXIT_OK, ['success']]]);
  for (const k of Object.keys(FAILURES) as FailureKind[]) {
    const row = FAILURES[k];
    byCode.set(row.exit, [...(byCode.get(row.exit) ?? []), row.message]);
  }
  byCode.get(EXIT_DIFFERS)?.push('diff: the profile differs from the running .env');
  byCode.set(EXIT_DETACHED, ['Ctrl-C detached from a deploy that goes on']);
  return [...byCode.entries()].sort((a, b) => a[0] - b[0]).map(([code, words]) => `${String(code).padStart(3)}  ${words.join('; ')}`);
}
