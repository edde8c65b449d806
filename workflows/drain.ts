/**
 * The drain before a stop (issue 29), shared by up, rollback and down: when a container serves, wait until it has
 * nothing in flight or the drain budget runs out (activities/drain.ts), then the stop goes on. It runs before the
 * saga is armed: a failure or a cancel here stopped nothing, so nothing is compensated. Behind DRAIN_PATCH.
 * Workflow code: deterministic, types only.
 */
import { patched } from '@temporalio/workflow';
import type { DrainInput, LockUse, StopInput } from '../activities/contract.js';
import { DRAIN_BUDGET_MAX_S, type StepDef } from '../runtime/steps/catalog.js';
import type { DeployResult, DrainResult } from '../runtime/model/index.js';
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

/** The drain's part of the DeployResult (no raw records). */
export function drainOutcome(r: DrainResult): NonNullable<DeployResult['drain']> {
  return { source: r.source, budgetS: r.budgetS, waitedS: r.waitedS, idle: r.idle, atStart: r.atStart, drained: r.drained, cut: r.cut, detail: r.detail };
}

/**
 * What the operator must hear about a drain (the result's warnings, so the CLI, --json and history all say it): a
 * budget that ran out (how many requests the stop cut), and a server whose /metrics pulse could not read (what it
 * counted instead).
 */
export function drainWarnings(r: DrainResult): string[] {
  const out: string[] = [];
  if (r.source === 'connections') out.push(`drain: ${r.detail}`);
  if (!r.idle && !r.skipped) {
    const what = r.source === 'connections' ? `${r.cut} open client connection${r.cut === 1 ? '' : 's'}` : `${r.cut} request${r.cut === 1 ? '' : 's'} in flight (${r.running ?? 0} running, ${r.waiting ?? 0} waiting)`;
    out.push(`drain: the budget of ${r.budgetS}s ran out with ${what}: the stop cut ${r.cut === 1 ? 'it' : 'them'}`);
  }
  return out;
}

/** The stop's grace: vLLM's own --shutdown-timeout in the live .env, which the stop step's timeout leaves room for. */
export function stopGraceOf(r: DrainResult | null): number {
  return r?.shutdownTimeoutS ?? 0;
}
