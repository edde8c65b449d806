/**
 * The one place that turns what a step threw (a PulseError, an ssh/socket error, anything else) into one of
 * pulse's stable ApplicationFailure types with its retry decision. Workflows and the CLI read only these types.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { isPulseError } from '../runtime/errors.js';
import { FAILURES, retryable } from '../runtime/failures.js';
import { redactSecrets } from '../runtime/secrets.js';

/** Socket and ssh2 failures: the node or the link is down, which a retry may fix. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);
const SSH2_LEVELS = new Set(['client-socket', 'client-timeout', 'client-ssh', 'protocol', 'handshake']);

/** Messages go into workflow history forever: never let a secret value through, whatever a script printed. */
export { redactSecrets };

function networkError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const e = err as Error & { code?: unknown; level?: unknown };
  return (typeof e.code === 'string' && NETWORK_CODES.has(e.code)) || (typeof e.level === 'string' && SSH2_LEVELS.has(e.level));
}

/** The stable failure type and retry decision of an error thrown by a step, at this attempt (1-based). */
export function classify(err: unknown, attempt: number): { type: string; retry: boolean; message: string; hint?: string } {
  const message = redactSecrets(err instanceof Error ? err.message : String(err));
  if (isPulseError(err)) {
    return { type: FAILURES[err.kind].type, retry: !err.final && retryable(err.kind, attempt), message, ...(err.hint ? { hint: err.hint } : {}) };
  }
  if (networkError(err)) return { type: FAILURES.unreachable.type, retry: true, message };
  return { type: FAILURES.internal.type, retry: true, message };
}

/**
 * What an activity throws for `err`. ApplicationFailures and cancellations pass through unchanged (the SDK reports a
 * cancelled activity as cancelled only when it sees the cancellation); everything else is classified.
 */
export function toFailure(err: unknown, attempt: number, cancelled: boolean): unknown {
  if (err instanceof ApplicationFailure || err instanceof CancelledFailure) return err;
  if (cancelled) return err;
  const c = classify(err, attempt);
  return ApplicationFailure.create({
    type: c.type,
    message: c.message,
    nonRetryable: !c.retry,
    details: c.hint ? [{ hint: redactSecrets(c.hint) }] : undefined,
  });
}

/** Runs a synchronous check inside an activity; what it throws leaves as a classified failure (Refused, ConfigError: not retried). */
export function classified<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw toFailure(err, Context.current().info.attempt, false);
  }
}
