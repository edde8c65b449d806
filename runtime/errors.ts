/**
 * The one error type that crosses module boundaries in pulse. Each kind has a stable meaning, a CLI exit code
 * and a retry decision at the activity edge (activities/errors.ts maps it to an ApplicationFailure type).
 */
export type PulseErrorKind =
  | 'usage' // bad flags or arguments
  | 'config' // nodes.json, a profile or an overlay is invalid
  | 'refused' // a safety rule refuses the action (protected node, render-only, experimental, busy node)
  | 'precondition' // the node is not in a state that allows the step (missing mount source, other vLLM running)
  | 'unreachable' // ssh/connect failed or the link dropped: retryable
  | 'not-ready' // a poll has not reached its goal yet: benign, retryable
  | 'unauthorized' // the server answered 401: it wants an API key that the node .env does not give
  | 'timeout' // a wait reached its spec deadline (memory gate, readiness)
  | 'script' // a node script failed in a way none of the above explains
  | 'temporal' // the Temporal server cannot be reached or refused a call
  | 'internal';

export const EXIT_CODES: Record<PulseErrorKind, number> = {
  usage: 2,
  config: 3,
  refused: 4,
  precondition: 5,
  unreachable: 6,
  'not-ready': 7,
  timeout: 8,
  script: 9,
  temporal: 10,
  internal: 1,
  unauthorized: 11,
};

export class PulseError extends Error {
  readonly kind: PulseErrorKind;
  /** One line that tells the operator what to do next. Printed under the message. */
  readonly hint: string | undefined;

  constructor(kind: PulseErrorKind, message: string, opts: { hint?: string; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'PulseError';
    this.kind = kind;
    this.hint = opts.hint;
  }
}

export function isPulseError(e: unknown): e is PulseError {
  return e instanceof PulseError;
}
