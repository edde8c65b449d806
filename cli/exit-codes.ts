/** The exit code of a followed deploy: 0 only on success, 130 on a detach, else its failure kind's row in runtime/failures.ts. */
import { EXIT_DETACHED, EXIT_OK, FAILURES, kindOfType, type FailureKind } from '../runtime/failures.js';
import type { FollowOutcome } from './follow-outcome.js';

/** The failure kind of a finished deploy (null on success or a detach). */
export function failureKindOf(o: FollowOutcome): FailureKind | null {
  if (o.kind === 'detached' || o.result?.ok) return null;
  if (o.status === 'cancelled' || o.status === 'terminated') return 'cancelled';
  if (o.status === 'timed-out') return 'timeout';
  if (o.status === 'completed' && !o.result) return 'internal';
  return kindOfType(o.result?.errorType ?? o.errorType);
}

/** Exit code of a finished deploy: 0 only on success. */
export function exitCodeOf(o: FollowOutcome): number {
  if (o.kind === 'detached') return EXIT_DETACHED;
  const kind = failureKindOf(o);
  return kind ? FAILURES[kind].exit : EXIT_OK;
}
