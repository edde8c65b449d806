/**
 * rolloutWorkflow (issue 15): one profile up (or down) on several nodes. Each node goes by its own deploy workflow
 * (upWorkflow/downWorkflow) as a child under the node's own workflow ID, so each still holds its node's lock and
 * shows as that node's deploy everywhere. Per step (one node, or up to --max-parallel): the availability guard
 * (refuses a step that leaves the model no enabled endpoint, unless --allow-outage), the worker's plan for the node
 * (made from its files, exactly as the CLI makes a single up's: the child's plan check holds as always), the child,
 * then the gate: the child's verify passed and, after an up, one smoke request answers. A failed gate stops the
 * rollout and leaves the later nodes untouched (--auto-rollback: the node goes back to its previous .env). The stop
 * signal (`pulse model cancel`) ends the rollout after the current step; a cancel (`--now`) cancels the current
 * child too, which compensates. New workflow type: no history older than this file exists.
 */
import {
  ApplicationFailure, CancellationScope, ChildWorkflowFailure, defineQuery, defineSignal, executeChild, isCancellation,
  setCurrentDetails, setHandler, startChild, workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { DeployResult, DownPlan, RollbackRequest, RolloutNode, RolloutProgress, RolloutRequest, UpPlan } from '../runtime/model/index.js';
import { DOWN_WORKFLOW, ROLLBACK_WORKFLOW, SA_ACTION, SA_NODE, SA_PROFILE, UP_WORKFLOW, workflowIdFor } from './definitions.js';
import { stepActivity } from './options.js';
import { describeError } from './result.js';
import { noteOf, ROLLOUT_STEPS, verdictOf } from '../runtime/steps/catalog.js';
import { utc } from '../runtime/format.js';

/** The rollout's state: the CLI's follow and `pulse model watch` read it. */
export const rolloutQuery = defineQuery<RolloutProgress>('rollout');
/** Stop after the current step (`pulse model cancel` on a rollout, without --now). */
export const stopRolloutSignal = defineSignal('stopRollout');
export const ROLLOUT_FAILED = 'RolloutFailed';

/** The child's DeployResult from its failure (details[0]), if it carried one. */
function failedResult(e: unknown): DeployResult | null {
  const cause = e instanceof ChildWorkflowFailure ? e.cause : null;
  const d = cause instanceof ApplicationFailure ? cause.details?.[0] : undefined;
  return d && typeof d === 'object' ? (d as DeployResult) : null;
}

/** The UI's current details: one line per node with its outcome. */
function details(p: RolloutProgress): string {
  const rows = p.nodes.map((n) => `| ${n.node}${n.protected ? ' (protected)' : ''} | ${n.status} | ${n.gate ?? n.error ?? ''} | ${n.workflowId ?? ''} |`);
  return [`**rollout ${p.action}${p.profile ? ` ${p.profile}` : ''}**: ${p.outcome}${p.error ? ` — ${p.error}` : ''}`, '', '| node | status | gate | workflow |', '|---|---|---|---|', ...rows].join('\n');
}

export async function rolloutWorkflow(req: RolloutRequest): Promise<RolloutProgress> {
  const p: RolloutProgress = {
    action: req.action, profile: req.profile, outcome: 'running', stopRequested: false, error: null,
    nodes: req.nodes.map((n) => ({ node: n, protected: false, status: 'pending', workflowId: null, runId: null, gate: null, error: null, serving: null })),
  };
  setHandler(rolloutQuery, () => p);
  setHandler(stopRolloutSignal, () => void (p.stopRequested = true));
  const show = (): void => setCurrentDetails(details(p));
  const attrs = workflowInfo().typedSearchAttributes.get(SA_ACTION) !== undefined;
  const end = (outcome: RolloutProgress['outcome'], error: string | null): void => {
    p.outcome = outcome;
    p.error = error;
    for (const n of p.nodes) if (n.status === 'pending') n.status = 'skipped';
    show();
  };
  show();
  const step = Math.max(1, req.maxParallel);
  try {
    for (let i = 0; i < p.nodes.length; i += step) {
      const batch = p.nodes.slice(i, i + step);
      if (p.stopRequested) {
        end('stopped', `stopped by request before ${batch.map((n) => n.node).join(', ')}`);
        return p;
      }
      const nodes = batch.map((n) => n.node);
      const guard = await stepActivity(ROLLOUT_STEPS.guard, nodes.join(', '))({ request: req, nodes });
      for (const n of batch) n.serving = guard.serving;
      if (guard.refused !== null) {
        for (const n of batch) n.status = 'refused';
        end('refused', guard.refused);
        throw ApplicationFailure.create({ type: 'Refused', message: guard.refused, nonRetryable: true, details: [p] });
      }
      await Promise.all(batch.map((n) => runNode(req, n, attrs, show)));
      // A cancel (--now) reaches the running child first: it compensates and fails as cancelled, so runNode returns
      // instead of throwing. The rollout itself was cancelled, not failed.
      if (CancellationScope.current().consideredCancelled || batch.some((n) => n.status === 'cancelled')) throw cancelled(p, end);
      const bad = batch.find((n) => n.status !== 'succeeded');
      if (bad) {
        end('failed', `${bad.node}: ${bad.error ?? bad.status}`);
        throw ApplicationFailure.create({ type: ROLLOUT_FAILED, message: `rollout stopped at ${bad.node}: ${bad.error ?? bad.status}`, nonRetryable: true, details: [p] });
      }
    }
  } catch (e) {
    if (!isCancellation(e)) throw e;
    throw cancelled(p, end);
  }
  end('succeeded', null);
  return p;
}

/** The rollout's end on a cancel: the node that ran is cancelled, the later ones skipped (exit 13, as a stop). */
function cancelled(p: RolloutProgress, end: (outcome: RolloutProgress['outcome'], error: string | null) => void): ApplicationFailure {
  for (const n of p.nodes) if (n.status === 'running') n.status = 'cancelled';
  end('cancelled', 'rollout cancelled by request');
  return ApplicationFailure.create({ type: 'DeployCancelled', message: 'rollout cancelled by request', nonRetryable: true, details: [p] });
}

/** A child deploy's arguments: the plan, and its DeployOptions when the rollout has any (--verbose, --drain-s). */
function childArgs(req: RolloutRequest, plan: UpPlan | DownPlan): [UpPlan | DownPlan] | [UpPlan | DownPlan, { verbose?: boolean; drainS?: number }] {
  const drain = typeof req.drainS === 'number' ? { drainS: req.drainS } : {};
  const opts = { ...(req.verbose ? { verbose: true } : {}), ...drain };
  return Object.keys(opts).length > 0 ? [plan, opts] : [plan];
}

/** One node: its plan, its child, its gate (and, with --auto-rollback, the rollback of a failed gate); never throws but a cancel. */
async function runNode(req: RolloutRequest, n: RolloutNode, attrs: boolean, show: () => void): Promise<void> {
  n.status = 'running';
  show();
  let plan: UpPlan | DownPlan;
  try {
    plan = await stepActivity(ROLLOUT_STEPS.plan, n.node)({ request: req, node: n.node });
  } catch (e) {
    n.status = 'refused';
    n.error = `plan: ${describeError(e).message}`;
    return;
  }
  n.protected = plan.protected;
  n.workflowId = workflowIdFor(n.node);
  const what = plan.action === 'up' ? `up ${plan.profile} on ${n.node}` : `down on ${n.node}`;
  let result: DeployResult;
  try {
    const child = await startChild<(plan: UpPlan | DownPlan, opts?: { verbose?: boolean; drainS?: number }) => Promise<DeployResult>>(plan.action === 'up' ? UP_WORKFLOW : DOWN_WORKFLOW, {
      workflowId: n.workflowId,
      args: childArgs(req, plan),
      staticSummary: `${what} (rollout ${workflowInfo().workflowId})`,
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      // A rollout that is terminated still lets the running child compensate (it is cancelled, not killed).
      parentClosePolicy: 'REQUEST_CANCEL',
      ...(attrs ? { typedSearchAttributes: [{ key: SA_NODE, value: n.node }, { key: SA_ACTION, value: plan.action }, ...(plan.action === 'up' ? [{ key: SA_PROFILE, value: plan.profile }] : [])] } : {}),
    });
    n.runId = child.firstExecutionRunId;
    show();
    result = await child.result();
  } catch (e) {
    if (isCancellation(e)) throw e;
    if (e instanceof WorkflowExecutionAlreadyStartedError) {
      n.status = 'refused';
      n.error = `${n.node} is busy: another deploy holds ${n.workflowId}`;
      return;
    }
    const r = failedResult(e);
    n.status = r?.rollback?.ok ? 'rolled-back' : r?.errorType === 'Cancelled' ? 'cancelled' : 'failed';
    n.error = r?.error ?? describeError(e).message;
    n.gate = 'deploy failed';
    return;
  } finally {
    show();
  }
  if (plan.action === 'down') {
    n.status = 'succeeded';
    n.gate = 'container gone';
    return;
  }
  const smoke = await stepActivity(ROLLOUT_STEPS.smoke, n.node)({ request: req, node: n.node }).catch((e: unknown) => {
    if (isCancellation(e)) throw e;
    return { ok: false, error: describeError(e).message, latencyS: null };
  });
  const failed = verdictOf(ROLLOUT_STEPS.smoke, smoke);
  if (failed === null) {
    n.status = 'succeeded';
    n.gate = `verify passed, ${noteOf(ROLLOUT_STEPS.smoke, smoke) ?? 'smoke answered'}`;
    return;
  }
  n.status = 'failed';
  n.gate = `verify passed, ${failed}`;
  n.error = n.gate;
  if (plan.autoRollback === true && result.backupPath) await CancellationScope.nonCancellable(() => rollbackGate(req, n, result, attrs));
}

/** The smoke failed after a good up: bring back the .env the up replaced (its backup), as `pulse model rollback --to` would. */
async function rollbackGate(req: RolloutRequest, n: RolloutNode, up: DeployResult, attrs: boolean): Promise<void> {
  const request: RollbackRequest = {
    action: 'rollback', version: 1, node: n.node, backup: up.backupPath ?? '', confirmed: req.confirmed, force: false,
    renderedAt: utc(Date.now()), undid: `${workflowIdFor(n.node)}/${n.runId ?? ''}`, timeoutS: null,
  };
  try {
    await executeChild(ROLLBACK_WORKFLOW, {
      workflowId: workflowIdFor(n.node), args: [request], workflowIdReusePolicy: 'ALLOW_DUPLICATE', parentClosePolicy: 'REQUEST_CANCEL',
      staticSummary: `rollback on ${n.node} (smoke gate of rollout ${workflowInfo().workflowId} failed)`,
      ...(attrs ? { typedSearchAttributes: [{ key: SA_NODE, value: n.node }, { key: SA_ACTION, value: 'rollback' }] } : {}),
    });
    n.status = 'rolled-back';
    n.error = `${n.error ?? ''}; rolled back to ${up.backupPath ?? '?'}`;
  } catch (e) {
    n.error = `${n.error ?? ''}; rollback failed too: ${describeError(e).message}`;
  }
}
