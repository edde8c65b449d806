/** The exit code of a followed deploy: 0 only on success, 130 on a detach, else the code of its failure kind. */
import { EXIT_CODES, type PulseErrorKind } from '../runtime/errors.js';
import type { FollowOutcome } from './follow-outcome.js';

/** ApplicationFailure type (workflows/failures.ts) → the CLI's exit code kind. */
const KIND_OF_FAILURE: Record<string, PulseErrorKind> = {
  ConfigError: 'config',
  PreconditionFailed: 'precondition',
  Refused: 'refused',
  Unreachable: 'unreachable',
  NotReady: 'not-ready',
  Timeout: 'timeout',
  ScriptFailed: 'script',
  VerifyFailed: 'script',
  Unauthorized: 'unauthorized',
};

/** Exit code of a finished deploy: 0 only on success. */
export function exitCodeOf(o: FollowOutcome): number {
  if (o.kind === 'detached') return 130;
  if (o.result?.ok) return 0;
  const type = o.result?.errorType ?? o.errorType;
  const kind = type ? KIND_OF_FAILURE[type] : undefined;
  return kind ? EXIT_CODES[kind] : 1;
}
