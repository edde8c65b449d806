/**
 * Start, describe and cancel a deploy: the workflow ID `pulse-model-<node>` is the per-node lock, so a start on a
 * held node is refused with the holder named, and "the deploy of a node" is the latest run under that ID.
 */
import { PulseError } from '../../runtime/errors.js';
import { utc } from '../../runtime/format.js';
import type { DeployOptions, DownPlan, RollbackRequest, UpPlan } from '../../runtime/model/index.js';
import { serverCause, stateDir, type PulseTemporal } from './temporal.js';

/** One run of a node's deploy workflow, as the commands name it. */
export interface DeployRef {
  workflowId: string;
  runId: string;
  /** e.g. "up best on spark2" */
  what: string;
}

/** The refusal for a node that a deploy already holds: names the holder and how to follow or cancel it. */
async function busy(t: PulseTemporal, node: string, workflowId: string, cause: unknown): Promise<PulseError> {
  let detail = '';
  try {
    const d = await t.client.workflow.getHandle(workflowId).describe();
    const summary = await d.staticSummary();
    detail = ` (run ${d.runId}${summary ? `: ${summary}` : ''}, started ${utc(d.startTime)})`;
  } catch {
    // the holder may have just finished; the message stays useful without the details
  }
  return new PulseError('refused', `${node} is busy: workflow ${workflowId}${detail} holds it`, {
    hint: `follow it with: pulse model watch --node ${node}   (or stop it: pulse model cancel --node ${node})`,
    cause,
  });
}

/**
 * A full state disk, said plainly (which dir, no space left) instead of what it breaks further on (the embedded
 * server's `Failed to start Workflow`, a state write that cannot finish). Checked before connecting, and again
 * when a start fails.
 */
export async function stateDiskFull(summary: string, cause?: unknown): Promise<PulseError | null> {
  const { stateDiskProblem } = await import('../../runtime/state/state-disk.js');
  const p = stateDiskProblem(stateDir());
  return p ? new PulseError('precondition', `cannot start ${summary}: ${p}`, { hint: 'free space there, or point PULSE_STATE_DIR at another disk (the embedded Temporal server keeps its database there too)', cause }) : null;
}

/**
 * Starts the workflow of a plan; a node held by another deploy is refused with the holder's workflow ID. `verbose`
 * (--verbose) asks its steps to keep their raw records in history, `drainS` (--drain-s) bounds the drain (DeployOptions).
 */
export async function startDeploy(t: PulseTemporal, plan: UpPlan | DownPlan | RollbackRequest, summary: string, deploy: DeployOptions = {}): Promise<DeployRef> {
  const defs = await import('../../workflows/definitions.js');
  const { WorkflowExecutionAlreadyStartedError } = await import('@temporalio/client');
  const workflowId = defs.workflowIdFor(plan.node);
  const attrs = [
    { key: defs.SA_NODE, value: plan.node },
    { key: defs.SA_ACTION, value: plan.action },
    ...(plan.action === 'up' ? [{ key: defs.SA_PROFILE, value: plan.profile }] : []),
  ];
  try {
    const type = plan.action === 'up' ? defs.UP_WORKFLOW : plan.action === 'down' ? defs.DOWN_WORKFLOW : defs.ROLLBACK_WORKFLOW;
    // An up starts with its UpStart: the plan without the rendered .env (the worker renders its own), and its digest.
    const input = plan.action === 'up' ? (await import('../../runtime/plan/plan-check.js')).upStart(plan) : plan;
    const handle = await t.client.workflow.start(type, {
      taskQueue: defs.TASK_QUEUE,
      workflowId,
      // The second argument only when it says something (a deploy without one runs as it always did).
      args: deployArgs(input, plan.action === 'rollback' ? {} : deploy),
      workflowIdConflictPolicy: 'FAIL', // a running deploy holds the node
      workflowIdReusePolicy: 'ALLOW_DUPLICATE', // a closed one does not
      typedSearchAttributes: attrs,
      staticSummary: summary,
    });
    return { workflowId, runId: handle.firstExecutionRunId, what: summary };
  } catch (e) {
    if (e instanceof WorkflowExecutionAlreadyStartedError) throw await busy(t, plan.node, workflowId, e);
    throw (await stateDiskFull(summary, e)) ?? new PulseError('temporal', `cannot start ${summary}: ${serverCause(e)}`, { cause: e });
  }
}

/** The workflow's arguments: the input, and DeployOptions when there is one to give (--verbose, --drain-s). */
function deployArgs(input: unknown, d: DeployOptions): unknown[] {
  const opts: DeployOptions = { ...(d.verbose ? { verbose: true } : {}), ...(d.drainS !== undefined ? { drainS: d.drainS } : {}) };
  return Object.keys(opts).length > 0 ? [input, opts] : [input];
}

/** The latest deploy of the node (running or not), or null when the node never had one. */
export async function latestDeploy(t: PulseTemporal, node: string): Promise<(DeployRef & { running: boolean }) | null> {
  const { workflowIdFor, SA_PROFILE } = await import('../../workflows/definitions.js');
  const workflowId = workflowIdFor(node);
  try {
    const d = await t.client.workflow.getHandle(workflowId).describe();
    const profile = d.typedSearchAttributes.get(SA_PROFILE);
    const action = d.type.replace(/Workflow$/, '');
    return { workflowId, runId: d.runId, what: `${action}${profile ? ` ${profile}` : ''} on ${node}`, running: d.status.name === 'RUNNING' };
  } catch (e) {
    if (e instanceof Error && e.name === 'WorkflowNotFoundError') return null;
    throw e;
  }
}

/** The run that holds the node now (the per-node lock), or null. */
export async function runningDeploy(t: PulseTemporal, node: string): Promise<DeployRef | null> {
  const d = await latestDeploy(t, node);
  return d?.running ? d : null;
}

/** Requests cancellation of that run; the workflow compensates in a non-cancellable scope. */
export async function cancelDeploy(t: PulseTemporal, ref: DeployRef): Promise<void> {
  await t.client.workflow.getHandle(ref.workflowId, ref.runId).cancel();
}
