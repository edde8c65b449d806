/**
 * Running one node step inside an activity: heartbeats every few seconds while the script runs (and on every
 * `@pulse` record), so Temporal notices a dead worker within the heartbeat timeout and delivers cancellation; the
 * activity's AbortSignal goes to the node layer, which kills the remote process group; errors are classified once.
 */
import { Context } from '@temporalio/activity';
import type { StepOptions } from '../runtime/steps/index.js';
import { toFailure } from './errors.js';

/** What nodeStep needs of the node lock (lock.ts LockKeeper): run `fn` under it, aborted when the lock is lost. */
export interface LockGuard {
  around<T>(signal: AbortSignal, fn: (signal: AbortSignal) => Promise<T>): Promise<T>;
}

/**
 * Run `fn` with step options wired to the current activity; rethrow failures classified. With a LockGuard (a LockKeeper) the step
 * runs under the node lock: confirmed before `fn` touches the node, renewed while it runs, `fn` aborted when lost.
 */
export async function nodeStep<T>(everyMs: number, fn: (opts: StepOptions) => Promise<T>, details?: () => unknown, keeper?: LockGuard): Promise<T> {
  const ctx = Context.current();
  const beat = (): void => ctx.heartbeat(details?.());
  const timer = setInterval(beat, everyMs);
  try {
    beat();
    if (keeper) return await keeper.around(ctx.cancellationSignal, (signal) => fn({ signal, onRecord: beat }));
    return await fn({ signal: ctx.cancellationSignal, onRecord: beat });
  } catch (err) {
    throw toFailure(err, ctx.info.attempt, ctx.cancellationSignal.aborted);
  } finally {
    clearInterval(timer);
  }
}
