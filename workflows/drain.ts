/**
 * The drain before a stop (issue 29), shared by up, rollback and down: when a container serves, wait until it has
 * nothing in flight or the drain budget runs out (activities/drain.ts), then the stop goes on. It runs before the
 * saga is armed: a failure or a cancel here stopped nothing, so nothing is compensated. Behind DRAIN_PATCH.
 * Workflow code: deterministic, types only.
 */
import { patched } from '@temporalio/workflow';
import type { DrainInput, LockUse, StopInput } from '../activities/contract.js';
import { DRAIN_BUDGET_MAX_S, type StepDef } from '../runtime/steps/catalog.js';
import type { DeployResult, DrainResult, StopResult } from '../runtime/model/index.js';
import { DRAIN_PATCH } from './definitions.js';
import { stepActivity } from './options.js';
import type { StepTracker } from './tracker.js';

/**
 * Runs the drain step unless nothing serves (`serving` false: preflight saw no running container) or the user said
 * --no-drain (`budgetS` 0). `budgetS` is --drain-s; without it the worker applies the node's nodes.json drainBudgetS,
 * and the activity's own timeouts are sized for the ceiling. Returns the result (null: no drain ran).
 */
export async function drainBeforeStop(
  t: StepTracker, def: StepDef & { activity: 'drainServer' }, stop: StopInput, budgetS: number | undefined, lock: [] | [LockUse], serving: boolean,
): Promise<DrainResult | null> {
  if (!serving || budgetS === 0 || !patched(DRAIN_PATCH)) return null;
  const input: DrainInput = { ...stop, ...(budgetS !== undefined ? { budgetS } : {}) };
  const act = stepActivity(def, stop.node, budgetS ?? DRAIN_BUDGET_MAX_S);
  return t.run(def, () => act(input, ...lock));
}

/** The drain's part of the DeployResult (no raw records); `cut` is its own count until the stop says (drainAfterStop). */
export function drainOutcome(r: DrainResult): NonNullable<DeployResult['drain']> {
  return { source: r.source, budgetS: r.budgetS, waitedS: r.waitedS, idle: r.idle, atStart: r.atStart, drained: r.drained, cut: r.cut, detail: r.detail };
}

/**
 * What the operator must hear about a drain before the stop (the result's warnings, so the CLI, --json and history
 * all say it): a server whose /metrics pulse could not read or trust (what it counted instead).
 */
export function drainWarnings(r: DrainResult): string[] {
  return r.source === 'connections' ? [`drain: ${r.detail}`] : [];
}

const requests = (n: number, what = 'request'): string => `${n} ${what}${n === 1 ? '' : 's'}`;

/**
 * The drain's count once the stop ran. What the stop cut is what was in flight right before its signal
 * (StopResult.atSignal, read by stop.sh just before the recipe's stop.sh): the drain's last sample can be a second
 * old, and a request that began after it is cut all the same (vLLM's default --shutdown-timeout 0 aborts every
 * request in flight at once). A stop that read nothing (an older worker) leaves the drain's own count. The result's
 * `drain.cut` and `drain.atSignal` say it, and a warning when anything was cut.
 */
export function drainAfterStop(result: DeployResult, drained: DrainResult | null, stopped: StopResult): void {
  if (!drained || !result.drain) return;
  const at = typeof stopped.atSignal === 'number' ? stopped.atSignal : null;
  const cut = at ?? drained.cut;
  result.drain = { ...result.drain, cut, atSignal: at };
  if (cut === 0) return;
  const conns = (at !== null ? stopped.atSignalSource === 'connections' : drained.source === 'connections');
  const what = conns ? requests(cut, 'open client connection') : `${requests(cut)} in flight`;
  const how = at !== null ? (stopped.atSignalDetail ?? '') : drained.source === 'metrics' ? `${drained.running ?? 0} running, ${drained.waiting ?? 0} waiting` : drained.detail;
  const why = drained.skipped ? 'no drain (budget 0)' : !drained.idle ? `the budget of ${drained.budgetS}s ran out` : 'the drain saw the server idle, then requests came';
  const grace = (drained.shutdownTimeoutS ?? 0) > 0 ? `; vLLM's --shutdown-timeout ${drained.shutdownTimeoutS}s let some finish, at most` : '';
  result.warnings.push(`drain: ${why}; at the stop signal ${what} (${how}): the stop cut ${cut === 1 ? 'it' : 'them'}${grace}`);
}

/** The stop's grace: vLLM's own --shutdown-timeout in the live .env, which the stop step's timeout leaves room for. */
export function stopGraceOf(r: DrainResult | null): number {
  return r?.shutdownTimeoutS ?? 0;
}
