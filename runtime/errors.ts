/**
 * The one error type that crosses module boundaries in pulse. Each kind has a stable meaning, a CLI exit code
 * and a retry decision at the activity edge: its row in runtime/failures.ts.
 */
import type { FailureKind } from './failures.js';

/** The kinds and their exit codes, types and retry decisions: runtime/failures.ts (the one failure table). */
export type PulseErrorKind = FailureKind;

export class PulseError extends Error {
  readonly kind: PulseErrorKind;
  /** One line that tells the operator what to do next. Printed under the message. */
  readonly hint: string | undefined;
  /** No retry can change it, whatever its kind's row says (a server that died is `not-ready` for good). */
  readonly final: boolean;

  constructor(kind: PulseErrorKind, message: string, opts: { hint?: string; cause?: unknown; final?: boolean } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'PulseError';
    this.kind = kind;
    this.hint = opts.hint;
    this.final = opts.final === true;
  }
}

export function isPulseError(e: unknown): e is PulseError {
  return e instanceof PulseError;
}
