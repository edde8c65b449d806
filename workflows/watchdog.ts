/**
 * watchdogWorkflow (issue 16): one scheduled health check of one node (`pulse model watchdog on`, a Temporal Schedule
 * per node, overlap SKIP). Read-only on the node: watchdogProbe runs the status script there (the node queue), then
 * watchdogRecord judges it and writes the record, and the gateway file, where node states live (the state queue).
 * A run whose verdict changed upserts PulseOutcome `watchdog-ok`/`watchdog-down`: its own row in `history`. With
 * --heal, when the record says so, the node's last known good comes back up through rollbackWorkflow as a child,
 * always with a restart (a dead engine behind a live .env needs one: HEAL_RESTART_PATCH),
 * holding the node's deploy ID (`pulse-model-<node>`), so no deploy and no heal ever run at once on a node; a deploy
 * that holds it makes the heal wait for a later check.
 */
import { executeChild, ParentClosePolicy, patched, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { RollbackRequest, WatchdogOutcome, WatchdogRequest } from '../runtime/model/index.js';
import { WATCHDOG_STEPS } from '../runtime/steps/catalog.js';
import { HEAL_RESTART_PATCH, ROLLBACK_WORKFLOW, SA_ACTION, SA_NODE, SA_OUTCOME, workflowIdFor } from './definitions.js';
import { stepActivity } from './options.js';
import { describeError } from './result.js';
import type { rollbackWorkflow } from './rollback.js';

/** PulseOutcome of a watchdog run that changed the node's verdict (history lists these runs). */
export const WATCHDOG_OUTCOMES = ['watchdog-ok', 'watchdog-down'] as const;

/** The two steps of a run (WATCHDOG_STEPS), with their catalog options. */
function activities(node: string) {
  return { watchdogProbe: stepActivity(WATCHDOG_STEPS.check, node), watchdogRecord: stepActivity(WATCHDOG_STEPS.record, node) };
}

/** One check (or, with request.clear, the record's removal for `off`); returns what it found and did. */
export async function watchdogWorkflow(request: WatchdogRequest): Promise<WatchdogOutcome> {
  const acts = activities(request.node);
  if (request.clear) return acts.watchdogRecord({ request, check: null });
  const check = await acts.watchdogProbe(request);
  const out = await acts.watchdogRecord({ request, check });
  const pulseAttrs = workflowInfo().typedSearchAttributes.get(SA_NODE) !== undefined;
  if (out.changed && pulseAttrs) upsertSearchAttributes([{ key: SA_OUTCOME, value: `watchdog-${out.changed.to}` }]);
  if (!out.heal) return out;
  const heal: RollbackRequest = {
    action: 'rollback', version: 1, node: request.node, backup: out.heal.backup, confirmed: request.confirmed, force: false,
    renderedAt: out.heal.renderedAt, undid: null, timeoutS: null,
  };
  // A heal restarts the server always (one stop, one start.sh), also when last known good is what runs.
  if (patched(HEAL_RESTART_PATCH)) heal.restart = true;
  try {
    const r = await executeChild<typeof rollbackWorkflow>(ROLLBACK_WORKFLOW, {
      workflowId: workflowIdFor(request.node),
      args: [heal],
      staticSummary: `watchdog heal on ${request.node}: last known good from ${out.heal.backup}`,
      // A heal that started goes on to its end (its compensation included) even if this run is terminated.
      parentClosePolicy: ParentClosePolicy.ABANDON,
      ...(pulseAttrs ? { typedSearchAttributes: [{ key: SA_NODE, value: request.node }, { key: SA_ACTION, value: 'rollback' }] } : {}),
    });
    out.healed = { ok: true, detail: `healed: ${r.profile ?? '?'} serves again` };
  } catch (e) {
    const msg = describeError(e).message;
    out.healed = { ok: false, detail: /already started|AlreadyStarted/i.test(msg) ? 'heal not started: a deploy holds the node' : `heal failed: ${msg}` };
  }
  out.summary = `${out.summary}; ${out.healed.detail}`;
  return out;
}

